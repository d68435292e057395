"""Actions of `tactical/1` (DESIGN §7.1): the registry of `do` kinds, their legality and their resolution.

Each entry's `do` holds exactly one action kind: `{move: F|TL|TR|SL|SR}`, `{het: FACING}`, `{speed: N}`,
`{fire: {weapon, target, overload?}}` (fire.py), `{reinforce: {shield, points} | {general}}` (reinforce.py),
`{launch: {weapon, as}}` (seeking.py), `{use|cease|announce: SYSTEM, target?}` (systems.py), `{repair: BOX}`
(damage.py), `{emergency: true}` (movement.py), `{pass: true}`; `{clarify: OPTION}` is refused (a special break is answered with the
chosen option itself, e.g. `{move: SL}`).

Where each may be given: moves at `move` steps, and only by a unit that moves in that impulse; `speed` at
`T.0.alloc` (the speed for the turn) or at `activity` (a mid-turn change, effective from the next impulse: this
impulse's move is already done); `het`, `launch`, `repair`, `emergency` and the system actions at `activity`;
`fire` and `reinforce` at `fire`; at a `damage` step no action: it allocates the pending internals (damage.py);
`pass` anywhere, with or without a unit.

Choices where the design is silent:
* Mid-turn speed changes may be made any number of times per turn, each up to setup.max_speed, and each is
  recorded in the unit's `speeds` (the energy audit checks them).
* A unit that must move this impulse always moves: with no move action (or a `pass`) it moves forward (F).
* At one step a unit does at most one action per slot: one move, one speed, one HET, one shot or launch per
  weapon, one use/cease/announce per system. When several arrive for a slot, entries and plans win over
  defaults, then the first given wins; illegal actions are ignored.
* `speed` equal to the current speed is legal and changes nothing (no event); an HET to the current facing is
  illegal (it would be a turn that changes nothing).
* A seeking weapon in flight only moves: it cannot change speed, make an HET, fire, launch or use systems.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

from pbem.formats.records import evolve
from pbem.rulesets.base import Action, Event, Point, Refusal, Roll
from pbem.rulesets.tactical import damage, energy, fire, hexmap, movement, reinforce, seeking, systems
from pbem.rulesets.tactical import craft, probes, system_steps, tractors, transporters
from pbem.rulesets.tactical.gametime import ACTIVITY, ALLOC, DAMAGE, FIRE, MOVE, STEPS, format_time
from pbem.rulesets.tactical.state import DISENGAGED, EMERGENCY, TacticalState, Unit

NOT_AN_ACTION = "not an action of tactical/1: answer a special break with the chosen option itself, e.g. {move: SL}"
SYSTEM_ACTIONS = systems.VERBS
REFUSED = ("clarify",)

# (state, the unit or None for a unit-less pass, the whole `do`, the step) -> why not, or None
Check = Callable[[TacticalState, Any, Mapping[str, Any], Point], "str | None"]
Slot = tuple[str, ...]


@dataclass(frozen=True)
class ActionKind:
    """One `do` kind: the steps where it may be given, its wording in reasons, its own legality test, and the
    slot it takes (one action per unit and slot and step)."""

    name: str
    steps: tuple[int, ...]
    verb: Callable[[Mapping[str, Any]], str]
    check: Check
    needs_unit: bool = True
    slot: Callable[[Mapping[str, Any]], Slot] = lambda do: (next(iter(do)),)


def _check_move(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    value = do["move"]
    if not isinstance(value, str) or value not in movement.MOVES:
        return f"move must be one of {', '.join(movement.MOVES)}, got {value!r}"
    return movement.why_not_move(unit, value, at[1])


def _check_het(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    try:
        facing = hexmap.parse_facing(do["het"])
    except ValueError as err:
        return str(err)
    if unit.seeking is not None:
        return f"{unit.id} is a seeking weapon: it cannot make a high energy turn"
    return movement.why_not_het(unit, facing, at[0])



SEALED_SPEED = "rules.sealed-speed"
PART = "part"  # the source of a sealed input's part opened at its step (the protocol's replay._parts)


def _check_speed(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    if at[2] == ALLOC and state.speeds_sealed:
        # seed §2.C: the speed plot is part of the secret, simultaneous allocation; an entry would show it first
        return Refusal(f"speeds are sealed in this game: {unit.id}'s speed for turn {at[0]} goes in your sealed "
                       f"allocation (units: {{{unit.id}: {{speed: N}}}}), revealed with everyone's at "
                       f"{format_time(at)}", SEALED_SPEED)
    value = do["speed"]
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= state.max_speed:
        return f"speed must be a whole number 0..{state.max_speed}, got {value!r}"
    if unit.seeking is not None:
        return f"{unit.id} is a seeking weapon: its speed is fixed at {unit.speed}"
    too_fast = movement.why_not_accelerate(state.tables, unit, value)
    return Refusal(too_fast, movement.ACCELERATION) if too_fast else None


def _check_emergency(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    return movement.why_not_emergency(unit, do[EMERGENCY])


def _check_pass(state: TacticalState, unit: Unit | None, do: Mapping[str, Any], at: Point) -> str | None:
    return None if do["pass"] is True else f"pass must be 'true', got {do['pass']!r}"


def _check_fire(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    return (fire.why_not_fire(state, unit, do["fire"], at) or system_steps.why_not_weapon(state, unit, do["fire"], at)
            or system_steps.why_not_target(state, unit, do["fire"], at))


def _check_reinforce(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    return reinforce.why_not(state, unit, do["reinforce"], at)


def _check_launch(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    if craft.is_launch(do["launch"]):
        return craft.why_not_launch(state, unit, do["launch"], at)
    return (seeking.why_not_launch(state, unit, do["launch"], at)
            or system_steps.why_not_weapon(state, unit, do["launch"], at))


def _system_check(verb: str) -> Check:
    def check(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
        return systems.why_not_system(state, unit, do, verb) or system_steps.why_not_system(state, unit, do, verb, at)
    return check


def _check_repair(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    return damage.why_not_repair(state.tables, unit, do[damage.REPAIR], at[0])


def _move_verb(do: Mapping[str, Any]) -> str:
    value = do["move"]
    return movement.MOVES.get(value, f"move {value!r}") if isinstance(value, str) else f"move {value!r}"


def _field(do: Mapping[str, Any], kind: str, key: str) -> str:
    value = do[kind]
    return str(value.get(key, "?")) if isinstance(value, Mapping) else "?"


def _fire_verb(do: Mapping[str, Any]) -> str:
    return f"fire {_field(do, 'fire', 'weapon')} at {_field(do, 'fire', 'target')}"


def _launch_verb(do: Mapping[str, Any]) -> str:
    if craft.is_launch(do["launch"]):
        return f"launch {_field(do, 'launch', 'craft')}"
    return f"launch {_field(do, 'launch', 'weapon')} as {_field(do, 'launch', 'as')}"


def _system_verb(verb: str) -> Callable[[Mapping[str, Any]], str]:
    def text(do: Mapping[str, Any]) -> str:
        return f"{verb} {do[verb]}" + (f" on {do['target']}" if "target" in do else "")
    return text


def _general(do: Mapping[str, Any]) -> bool:
    return isinstance(do["reinforce"], Mapping) and reinforce.GENERAL in do["reinforce"]


def _reinforce_verb(do: Mapping[str, Any]) -> str:
    if _general(do):
        return f"reinforce every shield by {_field(do, 'reinforce', reinforce.GENERAL)}"
    return f"reinforce shield #{_field(do, 'reinforce', 'shield')} by {_field(do, 'reinforce', 'points')}"


def _reinforce_slot(do: Mapping[str, Any]) -> Slot:
    return ("reinforce", reinforce.GENERAL if _general(do) else _field(do, "reinforce", "shield"))


def _weapon_slot(kind: str) -> Callable[[Mapping[str, Any]], Slot]:
    return lambda do: (kind, _field(do, kind, "weapon"))


def _system_slot(verb: str) -> Callable[[Mapping[str, Any]], Slot]:
    return lambda do: (verb, str(do[verb]))


KINDS: dict[str, ActionKind] = {
    "move": ActionKind("move", (MOVE,), _move_verb, _check_move),
    "het": ActionKind("het", (ACTIVITY,), lambda do: f"make a high energy turn to {do['het']}", _check_het),
    "speed": ActionKind("speed", (ALLOC, ACTIVITY), lambda do: f"change speed to {do['speed']}", _check_speed),
    "fire": ActionKind("fire", (FIRE,), _fire_verb, _check_fire, slot=_weapon_slot("fire")),
    "launch": ActionKind("launch", (ACTIVITY,), _launch_verb, _check_launch,
                         slot=lambda do: ("launch", "craft") if craft.is_launch(do["launch"])
                         else _weapon_slot("launch")(do)),
    "reinforce": ActionKind("reinforce", (FIRE,), _reinforce_verb,
                            _check_reinforce, slot=_reinforce_slot),
    **{verb: ActionKind(verb, (ACTIVITY,), _system_verb(verb), _system_check(verb), slot=_system_slot(verb))
       for verb in SYSTEM_ACTIONS},
    "pass": ActionKind("pass", tuple(range(len(STEPS))), lambda do: "pass", _check_pass, needs_unit=False),
    EMERGENCY: ActionKind(EMERGENCY, (ACTIVITY,), lambda do: "make an emergency deceleration", _check_emergency,
                          slot=lambda do: ("speed",)),
    damage.REPAIR: ActionKind(damage.REPAIR, (ACTIVITY,), lambda do: f"repair {do[damage.REPAIR]}", _check_repair,
                              slot=lambda do: (damage.REPAIR, str(do[damage.REPAIR]))),
}
# the systems that act (system_steps.py): tractor bids, transporters and probes at fire steps, landings at activity
KINDS.update({
    tractors.VERB: ActionKind(tractors.VERB, (FIRE,), lambda do: f"tractor {_field(do, 'tractor', 'target')}",
                              lambda s, u, do, at: tractors.why_not(s, u, do["tractor"], at), slot=tractors.slot),
    transporters.VERB: ActionKind(transporters.VERB, (FIRE,),
                                  lambda do: f"transport to {_field(do, 'transport', 'target')}",
                                  lambda s, u, do, at: transporters.why_not(s, u, do["transport"], at)),
    probes.VERB: ActionKind(probes.VERB, (FIRE,), lambda do: f"probe {_field(do, 'probe', 'target')}",
                            lambda s, u, do, at: probes.why_not(s, u, do["probe"], at)),
    craft.LAND: ActionKind(craft.LAND, (ACTIVITY,), lambda do: f"land on {_field(do, 'land', 'on')}",
                           lambda s, u, do, at: craft.why_not_land(s, u, do["land"], at)),
})


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
    if type(do) is dict and len(do) == 1:  # nearly every action: {move: F}, {pass: true}
        for key in do:
            if key in KINDS or key in REFUSED:
                return key, None
    if not (type(do) is dict or isinstance(do, Mapping)) or not do:
        return None, "an action must be a mapping with one key such as {move: F}"
    known = [k for k in do if k in KINDS or k in REFUSED]
    if len(known) != 1:
        what = "no" if not known else "more than one"
        return None, f"{quote(do)} has {what} action among {', '.join((*KINDS, *REFUSED))}"
    kind = known[0]
    extra = [k for k in do if k != kind and not (kind in SYSTEM_ACTIONS and k == "target")]
    if extra:
        return None, f"{quote(do)}: {', '.join(map(str, extra))} is not part of a {kind} action"
    return kind, None


def slot_of(do: Mapping[str, Any]) -> Slot | None:
    """The slot an action takes at its step (one action per unit and slot): ("move",), ("fire", "ph1"),
    ("use", "tractor"), …; None for a `do` with no single kind."""
    kind, _ = kind_of(do)
    return KINDS[kind].slot(do) if kind in KINDS else None


# `legal` is asked about the same action in the same state several times a step (gathering the step's actions,
# choosing those that count, declaring them, the auction): the last answers are kept by the identity of the state
# and of the action's `do`, both immutable; only at, by, unit and do are judged. Each kept state is held, so its
# id is not reused while it is kept.
_LEGAL: dict[tuple[int, int, Point, str, str | None], tuple[TacticalState, Any, str | None]] = {}
_LEGAL_KEPT = 256


def legal(state: TacticalState, action: Action) -> str | None:
    """None if `action` may be taken in `state` at its step, else the reason, quoting the action."""
    do = action.do
    key = (id(state), id(do), action.at, action.by, action.unit)
    try:
        kept = _LEGAL.get(key)
    except TypeError:  # an unhashable game time or unit: judged, not kept
        return _judge(state, action, {})
    if kept is not None and kept[0] is state and kept[1] is do:
        return kept[2]
    reason = _judge(state, action, {})
    if len(_LEGAL) >= _LEGAL_KEPT:
        _LEGAL.clear()
    _LEGAL[key] = (state, do, reason)
    return reason


def _own_fire(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    return (fire.why_not_fire(state, unit, do["fire"], at, own=True)
            or system_steps.why_not_weapon(state, unit, do["fire"], at))


def _own_system(verb: str) -> Check:
    def check(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
        return systems.why_not_system(state, unit, {verb: do[verb]}, verb)  # the target: see own_legal
    return check


def _chart_only(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    value = do["move"]
    if not isinstance(value, str) or value not in movement.MOVES:
        return f"move must be one of {', '.join(movement.MOVES)}, got {value!r}"
    if not movement.moves_in(unit.speed, at[1]):
        return f"at speed {unit.speed} it does not move in impulse {at[1]}"
    return None


# What the author alone can know of each kind (DESIGN §4.2 "Entries and time"): a shot's target may move out of
# arc or range, or be destroyed, and a system's target may leave, through others' later actions only.
OWN_CHECKS: dict[str, Check] = {"fire": _own_fire, **{verb: _own_system(verb) for verb in SYSTEM_ACTIONS}}
OWN_CHECKS.update({  # a target's place may change through others' later moves: judged at replay
    tractors.VERB: lambda s, u, do, at: tractors.why_not(s, u, do["tractor"], at, own=True),
    transporters.VERB: lambda s, u, do, at: transporters.why_not(s, u, do["transport"], at, own=True),
    probes.VERB: lambda s, u, do, at: probes.why_not(s, u, do["probe"], at, own=True),
})


def _move_only(state: TacticalState, unit: Unit, do: Mapping[str, Any], at: Point) -> str | None:
    value = do["move"]
    if not isinstance(value, str) or value not in movement.MOVES:
        return f"move must be one of {', '.join(movement.MOVES)}, got {value!r}"
    return None


def own_legal(view: TacticalState, action: Action, course_known: bool = True, speed_known: bool = True
              ) -> str | None:
    """None if `action` is legal as far as its author alone can know, in `view`: the firm point's state carried
    forward by his own actions only (foresight.py). `course_known`: False when the unit's course came from a plan
    that follows other units (pursue, keep_range): then only the impulse chart is judged for its moves, not the
    turn and slip counters. `speed_known`: False past a sealed-speed allocation step not yet revealed: then a
    move is judged only as a move."""
    checks = OWN_CHECKS if course_known else {**OWN_CHECKS, "move": _chart_only}
    if not speed_known:
        checks = {**checks, "move": _move_only}
    return _judge(view, action, checks)


def _judge(state: TacticalState, action: Action, checks: Mapping[str, Check]) -> str | None:
    subject = action.unit or action.by
    kind_name, problem = kind_of(action.do)
    if kind_name is None:
        return f"{subject} at {format_time(action.at)}: {problem}"
    if kind_name in REFUSED:
        return f"{subject} cannot {kind_name} at {format_time(action.at)}: {quote(action.do)} is {NOT_AN_ACTION}"
    kind = KINDS[kind_name]

    def refuse(why: str) -> str:  # the words only for a refusal: most actions judged are legal
        text = f"{subject} cannot {kind.verb(action.do)} at {format_time(action.at)}: {why}"
        return Refusal(text, why.rule) if isinstance(why, Refusal) else text

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
        return refuse(unit.why_gone)
    why = checks.get(kind_name, kind.check)(state, unit, action.do, action.at)
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


Chosen = dict[tuple[str, Slot], Mapping[str, Any]]


def chosen(state: TacticalState, point: Point, actions: Sequence[Action]) -> Chosen:
    """(unit, slot) -> the `do` of the one action that counts, legal actions only (see module docstring)."""
    ranked = sorted(actions, key=lambda a: a.source == "default")  # stable: entries and plans first
    found: Chosen = {}
    judged = state  # what each action is judged against: the step's state less what those chosen already spent
    for action in ranked:
        if action.at != point:
            raise ValueError(f"action at {format_time(action.at)} given to step {format_time(point)}")
        slot = slot_of(action.do)
        if slot is None or action.unit is None or (action.unit, slot) in found or legal(judged, action) is not None:
            continue
        found[(action.unit, slot)] = action.do
        judged = spend(judged, action)
    return found


def spend(state: TacticalState, action: Action) -> TacticalState:
    """`state` with what `action`, accepted at its step, draws on its unit's turn recorded (a shot or launch, a
    system use, a reinforcement), so that the next action of the same step is judged with it: two reinforcements
    that each fit the unit's power but together do not are not both legal (seed §2.C, §6.C.2; the sealed
    allocation pays for the whole turn and is audited when it is opened). Only for judging the rest of the step: the step itself
    is resolved from the state before it. Other actions, and actions that spend nothing, leave it as it is."""
    unit = state.unit(action.unit)
    do = action.do
    if unit is None or not isinstance(do, Mapping) or len(do) != 1:
        return state
    kind, value = next(iter(do.items()))
    at = action.at
    if kind in ("fire", "launch") and isinstance(value, Mapping) and isinstance(value.get("weapon"), str):
        unit = evolve(unit, fired=(*unit.fired, (at, value["weapon"])))
    elif kind == "use" and isinstance(value, str):
        unit = evolve(unit, used=(*unit.used, (at, "use", value)))
    elif kind == damage.REPAIR and isinstance(value, str):
        unit = evolve(unit, lost=(*unit.lost, (at, value, -1)))
    elif kind == reinforce.VERB and isinstance(value, Mapping) and type(value.get(reinforce.GENERAL)) is int:
        unit = evolve(unit, reinforced=(*unit.reinforced, (at, 0, value[reinforce.GENERAL])))
    elif (kind == reinforce.VERB and isinstance(value, Mapping) and type(value.get("points")) is int
          and type(value.get("shield")) is int):  # both, as reinforce.legal accepted them
        unit = evolve(unit, reinforced=(*unit.reinforced, (at, value["shield"], value["points"])))
    elif (paid := system_steps.spend(unit, kind, value, at, state)) is not None:
        unit = paid
    else:
        return state
    return evolve(state, units=tuple(unit if u.id == unit.id else u for u in state.units))


def by_weapon(picked: Chosen, kind: str) -> dict[tuple[str, str], Mapping[str, Any]]:
    """The chosen `fire` or `launch` values by (unit, weapon id)."""
    return {(unit, slot[1]): do[kind] for (unit, slot), do in picked.items() if slot[0] == kind}


def declared(state: TacticalState, point: Point, actions: Sequence[Action]) -> list[Event]:
    """The `fire` (at fire steps) and `launch` (at activity: a seeking weapon's `launch`, a craft's `system`)
    events of the legal actions, before resolution."""
    picked = chosen(state, point, actions)
    if point[2] == FIRE:
        return ([fire.fire_event(s, point) for s in fire.shots(state, point, by_weapon(picked, "fire"))]
                + system_steps.declared(state, point, picked))
    if point[2] == ACTIVITY:
        return ([seeking.launch_event(x, point) for x in seeking.launches(state, by_weapon(picked, "launch"))]
                + system_steps.declared_launches(state, point, picked))
    return []


def dice_needed(state: TacticalState, point: Point, actions: Sequence[Action]) -> list[str]:
    """One dice ref per legal shot of a fire step, in dice order (fire.py); at a damage step one per pending
    internal point (damage.py); nothing at other steps."""
    if point[2] == DAMAGE:
        return damage.dice_refs(state, point)
    if point[2] != FIRE:
        return []
    picked = chosen(state, point, actions)
    return ([s.ref for s in fire.shots(state, point, by_weapon(picked, "fire"))]
            + system_steps.dice_needed(state, point, picked))


def resolve(state: TacticalState, point: Point, actions: Sequence[Action],
            rolls: Mapping[str, Roll] | None = None) -> tuple[TacticalState, list[Event]]:
    """Apply one step's actions together: all units move at once from where they stood before the step; all
    shots of a fire step are scored together (fire.py); launches at activity add units (seeking.py)."""
    if point[2] == DAMAGE and any(u.pending for u in state.units):
        return damage.allocate(state, point, rolls)
    picked = chosen(state, point, actions)
    if point[2] == FIRE:
        fired, scored = fire.resolve(state, point, fire.shots(state, point, by_weapon(picked, "fire")), rolls,
                                     _reinforcements(picked), _general_reinforcements(picked))
        done, more = system_steps.resolve_fire(state, fired, point, picked, rolls or {})
        return done, scored + more
    if point[2] == ALLOC:
        state = system_steps.alloc_step(state, point)
    changed: dict[str, Unit] = {}
    events: list[Event] = []
    acting = {unit_id for unit_id, _slot in picked}
    plotted = sealed_speeds(state, point, actions)
    if plotted:
        events.extend(Event("allocation_void", u.owner, u.id, {"why": why})
                      for u, why in _over_power(state, _lines(state, actions)))
    for unit in state.units:
        if not unit.active:
            continue
        if unit.id in plotted:
            unit = _speed(unit, plotted[unit.id], point, events)
        moving = point[2] == MOVE and movement.moves_in(unit.speed, point[1])
        if not moving and unit.id not in acting and unit.id not in plotted:
            continue  # nothing happens to it at this step: a step costs what its units do (DESIGN §9)
        if moving and tractors.held_moves(unit):  # a held unit moves with its holder (tractors.drag)
            how = picked.get((unit.id, ("move",)), {}).get("move", "F")
            unit = _move(state, unit, how, point, events)
        if (unit.id, ("speed",)) in picked and EMERGENCY in picked[(unit.id, ("speed",))]:
            unit = evolve(_speed(unit, 0, point, events), used=(*unit.used, (point, EMERGENCY, "speed")))
            events.append(Event(EMERGENCY, unit.owner, unit.id, {"at": format_time(point)}))
        elif (unit.id, ("speed",)) in picked:
            unit = _speed(unit, picked[(unit.id, ("speed",))]["speed"], point, events)
        if (unit.id, ("het",)) in picked:
            facing = hexmap.parse_facing(picked[(unit.id, ("het",))]["het"])
            events.append(_turned(unit, unit.facing, facing, "HET"))
            unit = movement.het(unit, facing, point)
        for (unit_id, slot), do in picked.items():
            if unit_id == unit.id and slot[0] in SYSTEM_ACTIONS:
                unit, event = systems.act(unit, do, slot[0], point)
                unit = system_steps.after_system(state, unit, changed, do, slot[0], point)
                events.append(event)
            elif unit_id == unit.id and slot[0] == damage.REPAIR:
                unit, event = damage.repair(unit, do[damage.REPAIR], point)
                events.append(event)
        changed[unit.id] = unit
    added: list[Unit] = []
    if point[2] == ACTIVITY:
        for launch in seeking.launches(state, by_weapon(picked, "launch")):
            changed[launch.unit.id], flying = seeking.launch(launch, changed[launch.unit.id], point)
            added.append(flying)
            events.append(seeking.launch_event(launch, point))
    after = state.with_units(changed, point, added)
    if point[2] == ACTIVITY:
        after, more = system_steps.activity(after, {}, point, picked)
        events.extend(more)
    if point[2] == MOVE:
        after, more = system_steps.move_step(state, after, point)
        events.extend(more)
        events.extend(seeking.contacts(state, after))
    return after, events


def sealed_speeds(state: TacticalState, point: Point, actions: Sequence[Action]) -> dict[str, int]:
    """With `speeds: sealed`, each ship's speed for the turn from its owner's sealed allocation, whose speeds
    part alone is opened at T.0.alloc (the protocol gives it as a unit-less action of source "part"; seed §2.C):
    the unit's `speed` line when it is a legal speed, else 0 (a ship its owner did not plot, or plotted above
    max_speed, does not move). Seeking weapons keep theirs."""
    if point[2] != ALLOC or not state.speeds_sealed:
        return {}
    lines = _lines(state, actions)
    out: dict[str, int] = {}
    plotted = {a.by for a in actions if a.source == PART}
    for unit in state.units:
        if unit.owner not in plotted or not unit.active or unit.seeking is not None:
            continue
        speed = lines.get(unit.id, {}).get("speed")
        legal_speed = isinstance(speed, int) and not isinstance(speed, bool) and 0 <= speed <= state.max_speed
        out[unit.id] = speed if legal_speed and isinstance(speed, int) else 0
    for unit, _why in _over_power(state, lines):
        out[unit.id] = 0  # a speed its power cannot pay is void: the ship does not move
    return out


def _lines(state: TacticalState, actions: Sequence[Action]) -> dict[str, Mapping[str, Any]]:
    """Each ship's line of its owner's opened speeds part (a line for another's unit counts for nothing)."""
    out: dict[str, Mapping[str, Any]] = {}
    for action in actions:
        if action.source == PART and isinstance(action.do, Mapping):
            given = action.do.get("units")
            for unit_id, line in (given if isinstance(given, Mapping) else {}).items():
                unit = state.unit(unit_id) if isinstance(unit_id, str) else None
                if isinstance(line, Mapping) and unit is not None and unit.owner == action.by:
                    out[unit_id] = line
    return out


def _over_power(state: TacticalState, lines: Mapping[str, Mapping[str, Any]]) -> list[tuple[Unit, str]]:
    """The ships whose opened speed alone costs more than their power: void, the ship stops (docs/tactical.md
    "A bad allocation found when opened"); the rest of the allocation is judged when the box is opened."""
    speed_point = energy._number((state.tables.get("costs") or {}).get("speed_point", 1))
    out = []
    for unit in state.units:
        line = lines.get(unit.id)
        why = (energy.over_power({"speed": line.get("speed")}, damage.power_of(unit), speed_point)
               if line is not None else None)
        if why and unit.active and unit.seeking is None:
            out.append((unit, why))
    return out


def _reinforcements(picked: Chosen) -> dict[tuple[str, int], int]:
    """(unit, shield) -> points of the chosen legal `reinforce` actions of a fire step."""
    return {(unit, int(do["reinforce"]["shield"])): int(do["reinforce"]["points"])
            for (unit, slot), do in picked.items() if slot[0] == "reinforce" and slot[1] != reinforce.GENERAL}


def _general_reinforcements(picked: Chosen) -> dict[str, int]:
    """unit -> points of the chosen legal `{reinforce: {general: N}}` of a fire step."""
    return {unit: int(do["reinforce"][reinforce.GENERAL]) for (unit, slot), do in picked.items()
            if slot == ("reinforce", reinforce.GENERAL)}


def _move(state: TacticalState, unit: Unit, how: str, point: Point, events: list[Event]) -> Unit:
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
        return evolve(step.unit, status=DISENGAGED, left_at=point)
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
    return evolve(unit, speed=new, speeds=(*unit.speeds, (point, new)))
