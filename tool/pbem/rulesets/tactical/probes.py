"""Probes of `tactical/1`: information or a weapon use (seed 000 §6.C.5; docs/tactical.md "Probes").

`{probe: {target: D7, as: info}}` or `{probe: {target: D7, as: weapon}}` at a `fire` step, by a unit with a
working `probe` and probes left (setup `probes`), at an enemy unit on the map within setup.probe.range; each costs
costs.probe and one probe. Declared like fire (a `system` event {kind: use, system: probe}); `as: weapon` also
meets `{fire: {}}` conditions (seed §6.D.4: any utilization of a weapon that can cause damage).

* `info`: a `probed` event shows what the target carries and has lost (weapons, systems, boarding parties, craft
  aboard, its cloak), and the prober's side is locked on it for the rest of the turn: its cloak no longer hides it
  from that side's fire, tractors, transporters and probes (acting.hidden). A cloaked target can be probed.
* `weapon`: one bound die by the prober's owner, ref "T.I.fire/UNIT/probe": setup.probe.damage (one number, or
  six by die) on the shield facing the prober, the rest internal, as for fire.
"""

from __future__ import annotations

from typing import Any, Mapping

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point, Withheld
from pbem.rulesets.tactical import acting, fire, hexmap
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.gear import table
from pbem.rulesets.tactical.state import TacticalState, Unit, destroyed
from pbem.rulesets.tactical.weapons import DIE_SIDES

VERB = "probe"
SYSTEM = "probe"
MODES = ("info", "weapon")


def ref(point: Point, unit: str) -> str:
    """The dice ref of a probe used as a weapon, e.g. "1.12.fire/CA/probe"."""
    return f"{format_time(point)}/{unit}/{SYSTEM}"


def why_not(state: TacticalState, unit: Unit, value: Any, at: Point, own: bool = False) -> str | None:
    """None if `unit` may probe as `value` ({target, as}) at fire step `at`, else why not."""
    given = acting.value_of({VERB: value}, VERB, {"target", "as"})
    if given is None or given["as"] not in MODES:
        return "probe takes {target: UNIT, as: info|weapon}"
    why = acting.why_not_working(unit, SYSTEM) or acting.why_not_act(state, unit, at)
    if why:
        return why
    if unit.gear.probes < 1:
        return f"{unit.id} has no probes left"
    why = acting.why_no_energy(state, unit, at, acting.cost(state, SYSTEM), "a probe")
    if why or own:
        return why
    target, why = acting.enemy_within(state, unit, given["target"], int(table(state.tables, SYSTEM)["range"]), "probe")
    if target is None:
        return why
    return acting.hidden(state, unit, target, at) if given["as"] == "weapon" else None


def uses(picked: Mapping[tuple[str, tuple[str, ...]], Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """unit -> its chosen legal `probe` value."""
    return {unit: do[VERB] for (unit, slot), do in picked.items() if slot[0] == VERB}


def declared(state: TacticalState, point: Point, found: Mapping[str, Mapping[str, Any]]) -> list[Event]:
    """The events of the step's probes, known when declared: a `system` use, and `fire` for a weapon use."""
    out: list[Event] = []
    for unit in state.units:
        value = found.get(unit.id)
        if value is None:
            continue
        out.append(Event("system", unit.owner, unit.id, {"kind": "use", "system": SYSTEM, "target": value["target"],
                                                         "as": value["as"], "at": format_time(point)}))
        if value["as"] == "weapon":
            target = state.unit(value["target"])
            distance = hexmap.distance(unit.hex, target.hex) if unit.hex and target and target.hex else None
            out.append(Event("fire", unit.owner, unit.id, {"weapon": SYSTEM, "target": value["target"], "heavy": False,
                                                           "type": SYSTEM, "range": distance,
                                                           "at": format_time(point)}))
    return out


def refs(state: TacticalState, point: Point, found: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The dice refs of the step's weapon probes, in setup order."""
    return [ref(point, u.id) for u in state.units if u.id in found and found[u.id]["as"] == "weapon"]


def _damage(state: TacticalState, roll: int) -> int:
    given = table(state.tables, SYSTEM).get("damage", 0)
    return int(given[roll - 1]) if isinstance(given, (list, tuple)) else int(given)


def resolve(before: TacticalState, units: dict[str, Unit], point: Point, found: Mapping[str, Mapping[str, Any]],
            rolls: Mapping[str, Any]) -> tuple[list[Event], list[str]]:
    """Every probe of the step (`units` changed in place); the events and the log lines."""
    events: list[Event] = []
    lines: list[str] = []
    for unit in before.units:
        value = found.get(unit.id)
        if value is None:
            continue
        me = acting.pay(units[unit.id], point, SYSTEM)
        target = units[value["target"]]
        when = f"{format_time(point)} {unit.id} probe at {target.id}"
        if value["as"] == "info":
            units[unit.id] = evolve(me, gear=evolve(me.gear, probes=me.gear.probes - 1,
                                                      locks=(*me.gear.locks, (point[0], target.id))))
            lost = destroyed(target)  # to raids and to internal damage
            working = [m.id for m in target.weapons if m.id not in lost]
            shown = {"weapons": working, "lost": list(lost), "parties": target.gear.parties,
                     "craft": list(target.gear.bays), "cloaked": target.gear.cloaked_at is not None}
            events.append(Event("probed", unit.owner, unit.id, {"target": target.id, **shown}))
            lines.append(f"{when}: information: weapons {', '.join(working) or 'none'}, lost "
                         f"{', '.join(lost) or 'nothing'}, {target.gear.parties} boarding parties; "
                         f"locked on for turn {point[0]}")
            continue
        units[unit.id] = evolve(me, gear=evolve(me.gear, probes=me.gear.probes - 1))
        roll = rolls.get(ref(point, unit.id))
        if isinstance(roll, Withheld):
            lines.append(f"{when}: missed: {roll.text()}")
            continue
        if type(roll) is not int or not 1 <= roll <= DIE_SIDES:
            raise ValueError(f"probe at {format_time(point)} needs a die 1..{DIE_SIDES} for {ref(point, unit.id)}, "
                             f"got {roll!r}")
        amount = _damage(before, roll)
        shield = fire.shield_hit(before.unit(target.id), fire.attacker_hex(unit, target), target.shields)  # type: ignore[arg-type]
        hit, on_shield, internal = fire.strike(target, shield, amount)
        units[hit.id] = hit
        events.append(fire.damage_event(unit.owner, hit, shield, on_shield, internal, attacker=unit.id, weapon=SYSTEM,
                                        roll=roll, amount=amount))
        lines.append(f"{when}: weapon, die {roll}, {amount} damage: shield #{shield} took {on_shield}, internals "
                     f"{internal}")
    return events, lines
