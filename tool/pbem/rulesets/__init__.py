"""Registry of rulesets by name (DESIGN §7): `get("tactical/1")`."""

from __future__ import annotations

from typing import Callable

from pbem.errors import PbemError
from pbem.rulesets.base import Ruleset

_FACTORIES: dict[str, Callable[[], Ruleset]] = {}


def register(name: str, factory: Callable[[], Ruleset]) -> None:
    """Make a ruleset available under `name` (e.g. "tactical/1")."""
    _FACTORIES[name] = factory


# Built-in rulesets, imported when first asked for: a tactical game never loads the Diplomacy ruleset.
_BUILTIN = {"tactical/1": ("pbem.rulesets.tactical", "TacticalRuleset"), "dow/1": ("pbem.rulesets.dow", "DowRuleset")}


def names() -> list[str]:
    for name in _BUILTIN:
        _load_builtin(name)
    return sorted(_FACTORIES)


def get(name: str) -> Ruleset:
    """The ruleset registered as `name`; a clear error for an unknown one."""
    _load_builtin(name)
    try:
        return _FACTORIES[name]()
    except KeyError:
        raise PbemError(
            "game.unknown-ruleset",
            f"unknown ruleset {name!r}; known: {', '.join(names())}",
            exit_code=1,
        ) from None


def _load_builtin(name: str) -> None:
    if name in _BUILTIN and name not in _FACTORIES:
        import importlib

        module, factory = _BUILTIN[name]
        register(name, getattr(importlib.import_module(module), factory))
