"""Registry of rulesets by name (DESIGN §7): `get("tactical/1")`."""

from __future__ import annotations

from typing import Callable

from pbem.errors import PbemError
from pbem.rulesets.base import Ruleset

_FACTORIES: dict[str, Callable[[], Ruleset]] = {}


def register(name: str, factory: Callable[[], Ruleset]) -> None:
    """Make a ruleset available under `name` (e.g. "tactical/1")."""
    _FACTORIES[name] = factory


def names() -> list[str]:
    _load_builtin()
    return sorted(_FACTORIES)


def get(name: str) -> Ruleset:
    """The ruleset registered as `name`; a clear error for an unknown one."""
    _load_builtin()
    try:
        return _FACTORIES[name]()
    except KeyError:
        raise PbemError(
            "game.unknown-ruleset",
            f"unknown ruleset {name!r}; known: {', '.join(sorted(_FACTORIES))}",
            exit_code=1,
        ) from None


def _load_builtin() -> None:
    if not _FACTORIES:
        from pbem.rulesets import dow, tactical

        register("tactical/1", tactical.TacticalRuleset)
        register("dow/1", dow.DowRuleset)
