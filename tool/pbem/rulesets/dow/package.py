"""The `diplomacy` package imported once per process, lean (DESIGN §7.2; the adapter is engine.py): without
its __init__ (a network client and server, a logger wired to stderr), with the convoy paths of the standard map
from convoys.py instead of its 1.4 MB pickle of every map, and with its map's adjacency worked out on demand.
The package's own warnings and logger are silenced. Nothing here but loading: engine.py builds, checks and
adjudicates."""

from __future__ import annotations

import gc
import importlib.util
import sys
import warnings
from functools import lru_cache
from types import ModuleType
from typing import Any

from pbem.rulesets.dow import convoys, corrections

PINNED = "1.1.2"
MAP_NAME = "standard"


class EngineError(Exception):
    """The engine refused an order we had accepted, or failed; a bug or a tampered input, never a rule."""


def quiet(call: Any, *args: Any) -> Any:
    """`call(*args)` with the package's warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args)


@lru_cache(maxsize=1)
def load() -> Any:
    """(the engine's version, its Game class with DATC corrections, its Map class), imported once."""
    collecting = gc.isenabled()
    gc.disable()  # some ten thousand new objects, none of them garbage: a tenth faster
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _bare_package()
            from diplomacy import version
            from diplomacy.engine.game import Game
            from diplomacy.engine.map import Map
            from diplomacy.utils import order_results
            quiet(_lazy_map_class(Map), MAP_NAME)  # the engine's map cache now holds it: every game uses it
    finally:
        if collecting:
            gc.enable()
    _silence_logger()
    codes = {str(c): c for c in vars(order_results).values() if isinstance(c, order_results.OrderResult)}
    # the engine's Game with its movement steps corrected to DATC v3.0 where they are wrong (corrections.py)
    corrected = type("CorrectedGame", (corrections.Corrected, Game), {"codes": codes})
    return version.PACKAGE_VERSION, corrected, Map


def _silence_logger() -> None:
    import logging  # here, not at the top: a commit that adjudicates nothing never needs it

    logger = logging.getLogger("diplomacy")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.addHandler(logging.NullHandler())
    logger.setLevel(logging.CRITICAL + 1)
    logger.propagate = False


def _bare_package() -> None:
    """The `diplomacy` package registered without running its __init__, which imports its network client and
    server (tornado: more than half the import time) and wires its logger to stderr, none of which the adapter
    uses; its engine modules then import as usual, but for its convoy-path module (`_convoy_paths_module`)."""
    if "diplomacy" in sys.modules:
        return
    spec = importlib.util.find_spec("diplomacy")
    if spec is None or not spec.submodule_search_locations:
        raise EngineError(f"dow/1 needs the diplomacy package (pip install diplomacy=={PINNED})")
    sys.modules["diplomacy"] = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(CONVOY_MODULE, _convoy_paths_module())


CONVOY_MODULE = "diplomacy.utils.convoy_paths"


def _convoy_paths_module() -> ModuleType:
    """A stand-in for the engine's convoy-path module, which its map module imports and calls at once: the real
    one loads the paths of every map the package ships (a 1.4 MB pickle), hashes every map file and imports a
    progress-bar library, some 0.06 s of CPU per process; this one gives the standard map's paths, recorded
    from the engine's own in convoys.py (tests/test_dow_speed.py compares them), and nothing for another map."""
    module = ModuleType(CONVOY_MODULE)

    def get_convoy_paths_cache() -> dict[str, Any]:
        return {MAP_NAME: convoys.paths()}

    def add_to_cache(map_name: str, max_convoy_length: int = 0) -> None:
        raise EngineError(f"no convoy paths for map {map_name!r}: dow/1 plays the standard map")

    module.get_convoy_paths_cache = get_convoy_paths_cache  # type: ignore[attr-defined]
    module.add_to_cache = add_to_cache  # type: ignore[attr-defined]
    return module


class _LazyAbuts(dict):  # type: ignore[type-arg]
    """The engine map's adjacency cache, each answer worked out at its first question by the map's own `_abuts`:
    the engine fills in all 40,344 (unit type, location, order type, location) answers when it builds the map
    (0.07 s of CPU, more than everything else a phase costs it), and a phase asks a few hundred. A question
    outside the eager cache's keys gets the default, as it would there; tests/test_dow_speed.py checks every
    answer against the engine's eager cache."""

    def __init__(self, board_map: Any) -> None:
        super().__init__()
        self._abuts = board_map._abuts
        self._locs = frozenset(loc.upper() for loc in board_map.locs)

    def get(self, key: Any, default: Any = None) -> Any:
        found = dict.get(self, key, _UNKNOWN)
        if found is not _UNKNOWN:
            return found
        unit_type, here, order_type, there = key
        if unit_type not in ("A", "F") or order_type not in ("-", "S", "C") or not {here, there} <= self._locs:
            return default
        found = self[key] = self._abuts(*key)
        return found

    def __deepcopy__(self, memo: dict[int, Any]) -> "_LazyAbuts":
        """A copy answering as this one (the engine deep-copies a map slot by slot)."""
        copied = _LazyAbuts.__new__(_LazyAbuts)
        dict.update(copied, self)
        copied._abuts, copied._locs = self._abuts, self._locs
        return copied


_UNKNOWN = object()


def _lazy_map_class(map_class: Any) -> Any:
    """The engine's Map with its adjacency cache filled in on demand (`_LazyAbuts`); the rest of its cache
    (coasts of each location, destinations with coasts) is built as the engine builds it."""

    class LazyMap(map_class):  # type: ignore[misc, valid-type]
        # no __slots__ of its own: the engine's deep copy copies the slots `self.__slots__` names, the Map's

        def build_cache(self) -> None:
            for loc in self.locs:
                self.loc_coasts[loc.upper()] = [other.upper() for other in self.locs
                                                if loc.upper()[:3] == other.upper()[:3]]
            self.abuts_cache = _LazyAbuts(self)
            for loc in self.locs:
                loc = loc.upper()
                hops = [near.upper() for near in self.abut_list(loc, incl_no_coast=True)]
                self.dest_with_coasts[loc] = list({coast for near in hops for coast in self.find_coasts(near)})

    return LazyMap
