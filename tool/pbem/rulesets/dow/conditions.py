"""Break conditions of `dow/1` (DESIGN §4.3; schema pbem/dow/condition/1): a small catalog.

* `{at: PHASE}` — an explicit break point (evaluated by the protocol; checked here);
* `{phase: {}}` — any phase adjudicated (every order phase, including retreats and adjustments);
* `{attacked: {}}` — a unit of mine dislodged;
* `{state: {}}` — a relationship change realised (at the start of Spring or Fall retreats, or for the second
  half of Spring 1901).

Any of them may add `by: any`. Anything else is refused with a reason (never a silent never).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable

from pbem.rulesets.base import Event
from pbem.rulesets.dow import phases

Met = Callable[[str, Sequence[Event]], "str | None"]


def _phase_met(player: str, events: Sequence[Event]) -> str | None:
    done = [str(e.data.get("phase")) for e in events if e.kind == "adjudicated"]
    return f"{', '.join(done)} adjudicated" if done else None


def _attacked_met(player: str, events: Sequence[Event]) -> str | None:
    hits = [f"{e.data.get('unit')} dislodged by {e.by or 'a unit'} in {e.data.get('phase')}"
            for e in events if e.kind == "dislodged" and e.data.get("owner") == player]
    return f"attacked: {', '.join(hits)}" if hits else None


def _state_met(player: str, events: Sequence[Event]) -> str | None:
    changes = [f"{a}-{b} {before} -> {after}"
               for e in events if e.kind == "realised" for a, b, before, after in e.data.get("changes", ())]
    return f"relationships realised: {', '.join(changes)}" if changes else None


CATALOG: dict[str, Met] = {"phase": _phase_met, "attacked": _attacked_met, "state": _state_met}


def condition_error(condition: Mapping[str, Any]) -> str | None:
    """None if the condition is in the catalog and well formed, else why not."""
    if not isinstance(condition, Mapping) or not condition:
        return "a break condition must be a mapping such as {phase: {}}"
    if "by" in condition and condition["by"] != "any":
        return f"by must be 'any', got {condition['by']!r}"
    named = [k for k in condition if k in CATALOG or k == "at"]
    if len(named) != 1:
        known = ", ".join(("at", *CATALOG))
        return f"{dict(condition)!r} has {'no' if not named else 'more than one'} break condition among {known}"
    name = named[0]
    extra = [str(k) for k in condition if k not in (name, "by")]
    if extra:
        return f"{', '.join(extra)} is not part of a {name} condition"
    if name == "at":
        if "by" in condition:
            return "an at condition takes no `by`"
        try:
            phases.parse_time(condition["at"])
        except ValueError as err:
            return str(err)
        return None
    value = condition[name]
    if not isinstance(value, Mapping) or value:
        return f"{name} takes an empty mapping: {{{name}: {{}}}}"
    return None


def condition_met(condition: Mapping[str, Any], player: str, events: Sequence[Event]) -> str | None:
    """The reason text if `player`'s condition is met by these events, else None."""
    if condition_error(condition) is not None or "at" in condition:
        return None
    name = next(k for k in condition if k in CATALOG)
    return CATALOG[name](player, events)
