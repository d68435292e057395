"""Transporters of `tactical/1`: hit-and-run raids and boarding parties (seed 000 §6.C.4 "performing H&R raid",
§6.C.5; docs/tactical.md "Transporters").

`{transport: {target: D7, raid: SYSTEM}}` or `{transport: {target: D7, board: N}}` at a `fire` step, by a unit
with a working `transporter` and boarding parties aboard (setup `boarding_parties`), at an enemy unit on the map
within setup.transporter.range whose shield facing the transporting unit is down (strength 0; a unit without
shields has none to stop it). Each use costs costs.transporter and must fit the power left (`rules.no-energy`).
Declared like fire (a `system` event {kind: use, system: transporter}), resolved with the step, each with one
bound die rolled by the transporting unit's owner, ref "T.I.fire/UNIT/transporter":

* a raid sends one party at one of the target's weapons (by id) or systems (by name): on a die of at most
  setup.transporter.raid it is destroyed (it can no longer fire or be used; a `damage` event with 1 internal,
  so `{damage: {kind: internal}}` conditions see it, seed §6.C.1); the party does not come back either way;
* boarding sends N parties: on a die of at most setup.transporter.board they kill as many of the defenders
  (the target's own parties) as they are, losing as many, else all N are lost; boarders left on a ship with no
  defenders capture it (status `captured`: out of play, like a ship that disengaged, for the outcome).
"""

from __future__ import annotations

from typing import Any, Mapping

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point, Withheld
from pbem.rulesets.tactical import acting, fire
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.gear import table
from pbem.rulesets.tactical.state import TacticalState, Unit
from pbem.rulesets.tactical.weapons import DIE_SIDES

VERB = "transport"
SYSTEM = "transporter"
CAPTURED = "captured"


def ref(point: Point, unit: str) -> str:
    """The dice ref of one transporter use, e.g. "1.12.fire/CA/transporter"."""
    return f"{format_time(point)}/{unit}/{SYSTEM}"


def why_not(state: TacticalState, unit: Unit, value: Any, at: Point, own: bool = False) -> str | None:
    """None if `unit` may transport as `value` at fire step `at`, else why not (`own`: only what its owner alone
    can know)."""
    given = acting.value_of({VERB: value}, VERB, {"target"}, {"raid", "board"})
    if given is None or len(given) != 2:
        return "transport takes {target: UNIT, raid: SYSTEM} or {target: UNIT, board: N}"
    why = acting.why_not_working(unit, SYSTEM) or acting.why_not_act(state, unit, at)
    if why:
        return why
    parties = given.get("board", 1)
    if type(parties) is not int or parties < 1:
        return f"board must be a whole number of at least 1, got {parties!r}"
    if parties > unit.gear.parties:
        return f"{unit.id} has {unit.gear.parties} boarding parties aboard, not {parties}"
    why = acting.why_no_energy(state, unit, at, acting.cost(state, SYSTEM), "a transporter use")
    if why or own:
        return why
    target, why = acting.enemy_within(state, unit, given["target"], int(table(state.tables, "transporter")["range"]),
                                      "transporter")
    if target is None:
        return why
    why = acting.hidden(state, unit, target, at)
    if why:
        return why
    if "raid" in given and given["raid"] not in _aims(target):
        return f"{target.id} has no working weapon or system {given['raid']!r} (it has {', '.join(_aims(target))})"
    shield = fire.shield_hit(target, fire.attacker_hex(unit, target), target.shields)
    if target.shields and target.shields[shield - 1] > 0:
        return f"{target.id}'s shield #{shield} facing {unit.id} is up ({target.shields[shield - 1]}): it must be down"
    return None


def _aims(target: Unit) -> list[str]:
    return [x for x in (*(m.id for m in target.weapons), *target.systems) if x not in target.gear.lost]


def uses(picked: Mapping[tuple[str, tuple[str, ...]], Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """unit -> its chosen legal `transport` value."""
    return {unit: do[VERB] for (unit, slot), do in picked.items() if slot[0] == VERB}


def ordered(state: TacticalState, found: Mapping[str, Mapping[str, Any]]) -> list[tuple[Unit, Mapping[str, Any]]]:
    """The step's uses in dice order (setup order of the units)."""
    return [(u, found[u.id]) for u in state.units if u.id in found]


def declared(state: TacticalState, point: Point, found: Mapping[str, Mapping[str, Any]]) -> list[Event]:
    """The `system` events of the step's transporter uses, known when declared."""
    return [Event("system", unit.owner, unit.id, {"kind": "use", "system": SYSTEM, "target": value["target"],
                                                  **({"raid": value["raid"]} if "raid" in value else
                                                     {"board": value["board"]}), "at": format_time(point)})
            for unit, value in ordered(state, found)]


def resolve(before: TacticalState, units: dict[str, Unit], point: Point, found: Mapping[str, Mapping[str, Any]],
            rolls: Mapping[str, Any]) -> tuple[list[Event], list[str]]:
    """Beam every party of the step (`units` changed in place); the events and the log lines."""
    events: list[Event] = []
    lines: list[str] = []
    for unit, value in ordered(before, found):
        roll = rolls.get(ref(point, unit.id))
        if not isinstance(roll, Withheld) and (type(roll) is not int or not 1 <= roll <= DIE_SIDES):
            raise ValueError(f"transport at {format_time(point)} needs a die 1..{DIE_SIDES} for "
                             f"{ref(point, unit.id)}, got {roll!r}")
        parties = int(value.get("board", 1))
        me = acting.pay(units[unit.id], point, SYSTEM)
        units[unit.id] = evolve(me, gear=evolve(me.gear, parties=me.gear.parties - parties))
        target = units[value["target"]]
        when = f"{format_time(point)} {unit.id} transporter at {target.id}"
        if isinstance(roll, Withheld):
            lines.append(f"{when}: lost: {roll.text()}")
            continue
        numbers = table(before.tables, SYSTEM)
        if "raid" in value:
            aim = str(value["raid"])
            if roll <= int(numbers["raid"]):
                units[target.id] = evolve(target, gear=evolve(target.gear, lost=(*target.gear.lost, aim)))
                shield = fire.shield_hit(target, fire.attacker_hex(unit, target), target.shields)
                events.append(fire.damage_event(unit.owner, target, shield, 0, 1, attacker=unit.id, weapon=SYSTEM,
                                                roll=roll, system=aim))
                lines.append(f"{when}: raid on {aim}, die {roll}: {aim} destroyed")
            else:
                lines.append(f"{when}: raid on {aim}, die {roll}: repelled")
            events.append(Event("raid", unit.owner, unit.id, {"target": target.id, "system": aim, "roll": roll,
                                                              "done": roll <= int(numbers["raid"])}))
            continue
        defenders = target.gear.parties
        if roll <= int(numbers["board"]):
            killed = min(parties, defenders)
            left = parties - killed
            target = evolve(target, gear=evolve(target.gear, parties=defenders - killed))
            text = f"{killed} defenders killed, {left} boarders left"
            if left > 0 and target.gear.parties == 0 and target.active:  # not one destroyed in this same step
                target = evolve(target, status=CAPTURED, hex=None, left_at=point)
                text += f": {target.id} captured"
            units[target.id] = target
        else:
            left, text = 0, "repelled, every boarder lost"
        events.append(Event("boarding", unit.owner, unit.id, {"target": target.id, "parties": parties, "roll": roll,
                                                              "left": left, "captured": target.status == CAPTURED}))
        lines.append(f"{when}: {parties} boarding parties, die {roll}: {text}")
    return events, lines
