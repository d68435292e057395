"""Actions of `tactical/1` (DESIGN §7.1): the registry of `do` kinds, their legality and their resolution.

Each entry's `do` holds exactly one action kind: `{move: F|TL|TR|SL|SR}`, `{het: FACING}`, `{speed: N}`,
`{pass: true}` (this slice), and `{fire: …}`, `{launch: …}`, `{use|cease|announce: SYSTEM, target?}`,
`{clarify: OPTION}` (later issues: refused here with "not supported yet", never silently ignored).

Where each may be given: moves at `move` steps, and only by a unit that moves in that impulse; `speed` at
`T.0.alloc` (the speed for the turn) or at `activity` (a mid-turn change, effective from the next impulse: this
impulse's move is already done); `het` at `activity`; `pass` anywhere, with or without a unit.

Choices where the design is silent:
* Mid-turn speed changes may be made any number of times per turn, each up to setup.max_speed, and each is
  recorded in the unit's `speeds` (the energy audit of a later issue checks them).
* A unit that must move this impulse always moves: with no move action (or a `pass`) it moves forward (F).
* At one step a unit does at most one action of each kind; when several arrive, entries and plans win over
  defaults, then the first given wins.
* `speed` equal to the current speed is legal and changes nothing (no event); an HET to the current facing is
  illegal (it would be a turn that changes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from pbem.rulesets.base import Action, Event, Point
from pbem.rulesets.tactical import hexmap, movement
from pbem.rulesets.tactical.gametime import ACTIVITY, ALLOC, MOVE, STEPS, format_time
from pbem.rulesets.tactical.state import TacticalState, Unit

NOT_YET = "not supported yet by tactical/1 movement rules"
SYSTEM_ACTIONS = ("use", "cease", "announce")
LATER = ("fire", "launch", *SYSTEM_ACTIONS, "clarify")

# (state, the unit or None for a unit-less pass, the value of the `do` key, the step) -> why not, or None
Check = Callable[[TacticalState, Any, Any, Point], "str | None"]


@dataclass(frozen=True)
class ActionKind:
    """One `do` kind: the steps where it may be given, its wording in reasons, and its own legality test."""

    name: str
    steps: tuple[int, ...]
    verb: Callable[[Any], str]
    check: Check
    needs_unit: bool = True


def _check_move(state: TacticalState, unit: Unit, value: Any, at: Point) -> str | None:
    if not isinstance(value, str) or value not in movement.MOVES:
        return f"move must be one of {', '.join(movement.MOVES)}, got {value!r}"
    return movement.why_not_move(unit, value, at[1])


def _check_het(state: TacticalState, unit: Unit, value: Any, at: Point) -> str | None:
    try:
        facing = hexmap.parse_facing(value)
    except ValueError as err:
        return str(err)
    return movement.why_not_het(unit, facing, at[0])


def _check_speed(state: TacticalState, unit: Unit, value: Any, at: Point) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= state.max_speed:
        return f"speed must be a whole number 0..{state.max_speed}, got {value!r}"
    return None


def _check_pass(state: TacticalState, unit: Unit | None, value: Any, at: Point) -> str | None:
    return None if value is True else f"pass must be 'true', got {value!r}"


def _move_verb(value: Any) -> str:
    return movement.MOVES.get(value, f"move {value!r}") if isinstance(value, str) else f"move {value!r}"


KINDS: dict[str, ActionKind] = {
    "move": ActionKind("move", (MOVE,), _move_verb, _check_move),
    "het": ActionKind("het", (ACTIVITY,), lambda v: f"make a high energy turn to {v}", _check_het),
    "speed": ActionKind("speed", (ALLOC, ACTIVITY), lambda v: f"change speed to {v}", _check_speed),
    "pass": ActionKind("pass", tuple(range(len(STEPS))), lambda v: "pass", _check_pass, needs_unit=False),
}


def quote(value: Any) -> str:
    """An action as written in a report line, e.g. "{move: TL}"."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {quote(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(quote(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def kind_of(do: Any) -> tuple[str | None, str | None]:
    """(the action kind of a `do` mapping, None) or (None, why it has no single kind)."""
    if not isinstance(do, Mapping) or not do:
        return None, "an action must be a mapping with one key such as {move: F}"
    known = [k for k in do if k in KINDS or k in LATER]
    if len(known) != 1:
        what = "no" if not known else "more than one"
        return None, f"{quote(do)} has {what} action among {', '.join((*KINDS, *LATER))}"
    kind = known[0]
    extra = [k for k in do if k != kind and not (kind in SYSTEM_ACTIONS and k == "target")]
    if extra:
        return None, f"{quote(do)}: {', '.join(map(str, extra))} is not part of a {kind} action"
    return kind, None


def legal(state: TacticalState, action: Action) -> str | None:
    """None if `action` may be taken in `state` at its step, else the reason, quoting the action."""
    when = format_time(action.at)
    subject = action.unit or action.by
    kind_name, problem = kind_of(action.do)
    if kind_name is None:
        return f"{subject} at {when}: {problem}"
    if kind_name in LATER:
        return f"{subject} cannot {kind_name} at {when}: {quote(action.do)} is {NOT_YET}"
    kind = KINDS[kind_name]
    value = action.do[kind_name]
    verb = kind.verb(value)

    def refuse(why: str) -> str:
        return f"{subject} cannot {verb} at {when}: {why}"

    unit = state.unit(action.unit)
    if action.unit is None and kind.needs_unit:
        return refuse("the action names no unit")
    if action.unit is not None and unit is None:
        return refuse(f"there is no unit {action.unit} in this game")
    if unit is not None and unit.owner != action.by:
        return refuse(f"{unit.id} belongs to {unit.owner}, not to {action.by}")
    if action.at[2] not in kind.steps:
        allowed = " or ".join(STEPS[s] for s in kind.steps)
        return refuse(f"{quote(action.do)} is only given at {allowed} steps")
    if kind.needs_unit and unit is not None and not unit.active:
        return refuse("it has left the map")
    why = kind.check(state, unit, value, action.at)
    return refuse(why) if why else None


def default_actions(state: TacticalState, point: Point, player: str) -> list[Action]:
    """At a move step, `{move: F}` for each of `player`'s units that moves in this impulse; else nothing."""
    if point[2] != MOVE:
        return []
    return [
        Action(point, player, u.id, {"move": "F"}, "default")
        for u in state.units
        if u.owner == player and u.active and movement.moves_in(u.speed, point[1])
    ]


def _chosen(state: TacticalState, point: Point, actions: Sequence[Action]) -> dict[tuple[str, str], Any]:
    """(unit, kind) -> value of the one action that counts, legal actions only (see module docstring)."""
    ranked = sorted(actions, key=lambda a: a.source == "default")  # stable: entries and plans first
    chosen: dict[tuple[str, str], Any] = {}
    for action in ranked:
        if action.at != point:
            raise ValueError(f"action at {format_time(action.at)} given to step {format_time(point)}")
        kind, _ = kind_of(action.do)
        if kind is None or action.unit is None or legal(state, action) is not None:
            continue
        chosen.setdefault((action.unit, kind), action.do[kind])
    return chosen


def resolve(state: TacticalState, point: Point, actions: Sequence[Action]) -> tuple[TacticalState, list[Event]]:
    """Apply one step's actions together: all units move at once from where they stood before the step."""
    chosen = _chosen(state, point, actions)
    changed: dict[str, Unit] = {}
    events: list[Event] = []
    for unit in state.units:
        if not unit.active:
            continue
        if point[2] == MOVE and movement.moves_in(unit.speed, point[1]):
            how = chosen.get((unit.id, "move"), "F")
            unit = _move(state, unit, how, events)
        if (unit.id, "speed") in chosen:
            unit = _speed(unit, chosen[(unit.id, "speed")], point, events)
        if (unit.id, "het") in chosen:
            facing = hexmap.parse_facing(chosen[(unit.id, "het")])
            events.append(_turned(unit, unit.facing, facing, "HET"))
            unit = movement.het(unit, facing, point[0])
        changed[unit.id] = unit
    return state.with_units(changed, point), events


def _move(state: TacticalState, unit: Unit, how: str, events: list[Event]) -> Unit:
    step = movement.move(state, unit, how)
    if step.turned:
        events.append(_turned(unit, step.facing_before, step.unit.facing, how))
    facings = {
        "facing_before": hexmap.format_facing(step.facing_before),
        "facing": hexmap.format_facing(step.unit.facing),
        "how": how,
    }
    if step.to is None:
        events.append(Event("disengaged", unit.owner, unit.id, {"from": hexmap.format_hex(step.start), **facings}))
    else:
        where = {"from": hexmap.format_hex(step.start), "to": hexmap.format_hex(step.to)}
        events.append(Event("moved", unit.owner, unit.id, {**where, **facings}))
    return step.unit


def _turned(unit: Unit, before: int, after: int, how: str) -> Event:
    data = {"from_facing": hexmap.format_facing(before), "to_facing": hexmap.format_facing(after), "how": how}
    return Event("turned", unit.owner, unit.id, data)


def _speed(unit: Unit, new: int, point: Point, events: list[Event]) -> Unit:
    if new == unit.speed:
        return unit
    events.append(Event("speed", unit.owner, unit.id, {"old": unit.speed, "new": new}))
    return replace(unit, speed=new, speeds=(*unit.speeds, (point, new)))
