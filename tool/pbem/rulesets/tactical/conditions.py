"""Break conditions of `tactical/1` (DESIGN §4.3, §7.1; seed 000 §6.B–§6.D): the catalog, checked and evaluated.

The protocol handles the generic keys: `{at: TIME}` (never evaluated here) and `by: any` (it passes the
player's own events only then). The catalog of this slice, read liberally as seed §6.D asks:

* `{range: N, unit?: ENEMY, mine?: MINE}` — some pair (a unit of the player, an enemy unit) comes to range N
  or less in this step: over N before, at most N after, and one of the two appears in the step's events (so it
  fires once when the range is crossed, not at every impulse spent inside it). Without `unit`/`mine`, any enemy
  and any of the player's units.
* `{turn: {within?: N, unit?: ENEMY}}` — a unit changed facing (TL, TR or HET); with `within`, only if after
  the step it is at most N hexes from one of the player's other units.
* `{speed: {unit?: ENEMY}}` — a unit changed speed (at allocation or by a mid-turn change).

"Enemy" is any unit the player does not own; which units' events count is the protocol's filter (`by`). The
later catalog (`fire`, `launch`, `damage`, `shield_down`, `system`) is refused with "not supported yet", so a
player never relies on a condition that could not fire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pbem.rulesets.base import Event
from pbem.rulesets.tactical.actions import quote
from pbem.rulesets.tactical.gametime import format_time, parse_time
from pbem.rulesets.tactical.state import TacticalState, Unit

MAX_RANGE = 200
LATER = ("fire", "launch", "damage", "shield_down", "system")
NOT_YET = "not supported yet by tactical/1 movement rules"
_TURNS = {"TL": "turned left", "TR": "turned right", "HET": "made a high energy turn"}

Met = Callable[[Mapping[str, Any], str, TacticalState, TacticalState, Sequence[Event]], "str | None"]


@dataclass(frozen=True)
class ConditionKind:
    """One catalog entry: its allowed top-level keys and sub-keys, and how it is evaluated."""

    name: str
    top_keys: frozenset[str]
    sub_keys: frozenset[str] | None  # None: the value is a number, not a mapping
    met: Met


def _whole(value: Any, what: str, low: int, high: int) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        return f"{what} must be a whole number {low}..{high}, got {value!r}"
    return None


def _unit_name(value: Any, what: str) -> str | None:
    return None if isinstance(value, str) and value else f"{what} must be a unit name, got {value!r}"


def condition_error(condition: Mapping[str, Any]) -> str | None:
    """None if this break condition can be evaluated, else why not (a schema-level error for the player)."""
    if not isinstance(condition, Mapping) or not condition:
        return "a break condition must be a mapping such as {range: 8}"
    if "by" in condition and condition["by"] != "any":
        return f"{quote(condition)}: by must be 'any', got {condition['by']!r}"
    named = [k for k in condition if k in CONDITIONS or k in LATER or k == "at"]
    if len(named) != 1:
        what = "no" if not named else "more than one"
        known = ", ".join(("at", *CONDITIONS, *LATER))
        return f"{quote(condition)} has {what} break condition among {known}"
    name = named[0]
    if name in LATER:
        return f"{quote(condition)}: {name} conditions are {NOT_YET}"
    if name == "at":
        return _at_error(condition)
    kind = CONDITIONS[name]
    extra = [k for k in condition if k not in kind.top_keys and k not in (name, "by")]
    if extra:
        return f"{quote(condition)}: {', '.join(map(str, extra))} is not part of a {name} condition"
    value = condition[name]
    if kind.sub_keys is None:
        problem = _whole(value, name, 0, MAX_RANGE)
        options: Mapping[str, Any] = condition
    elif not isinstance(value, Mapping):
        return f"{quote(condition)}: {name} takes a mapping such as {{{name}: {{}}}}, got {value!r}"
    else:
        unknown = [k for k in value if k not in kind.sub_keys]
        if unknown:
            return f"{quote(condition)}: {', '.join(map(str, unknown))} is not part of a {name} condition"
        problem, options = None, value
    for key in ("unit", "mine"):
        if problem is None and key in options:
            problem = _unit_name(options[key], key)
    if problem is None and "within" in options:
        problem = _whole(options["within"], "within", 0, MAX_RANGE)
    return f"{quote(condition)}: {problem}" if problem else None


def _at_error(condition: Mapping[str, Any]) -> str | None:
    extra = [k for k in condition if k != "at"]
    if extra:  # an explicit break point needs no `by`: it is met whoever acts
        return f"{quote(condition)}: {', '.join(map(str, extra))} is not part of an at condition"
    try:
        parse_time(condition["at"])
    except ValueError as err:
        return str(err)
    return None


def condition_met(
    condition: Mapping[str, Any],
    player: str,
    before: TacticalState,
    after: TacticalState,
    events: Sequence[Event],
) -> str | None:
    """The report text if `player`'s condition is met by the step from `before` to `after`, else None."""
    if condition_error(condition) is not None or "at" in condition:
        return None
    name = next(k for k in condition if k in CONDITIONS)
    return CONDITIONS[name].met(condition, player, before, after, events)


def _when(state: TacticalState) -> str:
    return f" ({format_time(state.at)})" if state.at is not None else ""


def _range_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    limit = condition["range"]
    involved = {e.unit for e in events if e.unit is not None}
    mine = [u for u in after.units if u.owner == player and condition.get("mine", u.id) == u.id]
    enemies = [u for u in after.units if u.owner != player and condition.get("unit", u.id) == u.id]
    hits: list[tuple[int, int, int, str]] = []
    for order, enemy in enumerate(enemies):
        for own_order, own in enumerate(mine):
            if enemy.id not in involved and own.id not in involved:
                continue
            now = after.range_between(own.id, enemy.id)
            then = before.range_between(own.id, enemy.id)
            if now is not None and now <= limit and (then is None or then > limit):
                hits.append((now, order, own_order, f"{enemy.id} at range {now} from {own.id}"))
    if not hits:
        return None
    return f"range {limit}: {', '.join(text for *_, text in sorted(hits))}{_when(after)}"


def _nearest_of(state: TacticalState, unit: Unit, player: str) -> tuple[int, str] | None:
    """(range, id) of `player`'s nearest other unit on the map to `unit`, or None."""
    ranges = [
        (r, u.id)
        for u in state.units
        if u.owner == player and u.id != unit.id and (r := state.range_between(unit.id, u.id)) is not None
    ]
    return min(ranges) if ranges else None


def _turn_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    options = condition["turn"]
    within = options.get("within")
    hits: list[str] = []
    for event in events:
        if event.kind != "turned" or options.get("unit", event.unit) != event.unit:
            continue
        unit = after.unit(event.unit)
        if unit is None:
            continue
        how = _TURNS.get(str(event.data.get("how")), "turned")
        text = f"{unit.id} {how} {event.data.get('from_facing')} to {event.data.get('to_facing')}"
        if within is not None:
            nearest = _nearest_of(after, unit, player)
            if nearest is None or nearest[0] > within:
                continue
            text += f" at range {nearest[0]} from {nearest[1]}"
        hits.append(text)
    if not hits:
        return None
    label = "turn" if within is None else f"turn within {within}"
    return f"{label}: {', '.join(hits)}{_when(after)}"


def _speed_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    options = condition["speed"]
    hits = [
        f"{e.unit} changed speed from {e.data.get('old')} to {e.data.get('new')}"
        for e in events
        if e.kind == "speed" and options.get("unit", e.unit) == e.unit
    ]
    return f"speed: {', '.join(hits)}{_when(after)}" if hits else None


CONDITIONS: dict[str, ConditionKind] = {
    "range": ConditionKind("range", frozenset({"unit", "mine"}), None, _range_met),
    "turn": ConditionKind("turn", frozenset(), frozenset({"within", "unit"}), _turn_met),
    "speed": ConditionKind("speed", frozenset(), frozenset({"unit"}), _speed_met),
}
