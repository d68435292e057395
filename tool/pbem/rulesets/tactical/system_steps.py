"""Where the systems that act meet the steps of an impulse (docs/tactical.md "Systems that act"): the checks
actions.py adds to its kinds, what they declare, the dice they need and how each step resolves them.

* `fire` steps (simultaneous, seed §7): tractor bids, transporters and probes are declared with the shots (their
  events run the action auction), need their dice after the shots' (in setup order: transporters, then weapon
  probes) and resolve together with them, on the state before the step; a unit they bring to 0 hull with
  internal damage is destroyed after the step, as for fire.
* `activity` steps: craft launches and landings; `{use|cease: cloak|esg|tractor}` do what they say.
* `move` steps: held units follow their holders; ESG fields strike what they caught.
* `alloc` steps: a hold or a cloak carried into the turn costs its upkeep.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point
from pbem.rulesets.tactical import acting, cloak, craft, esg, fire, probes, tractors, transporters
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.gear import table
from pbem.rulesets.tactical.state import TacticalState, Unit

Picked = Mapping[tuple[str, tuple[str, ...]], Mapping[str, Any]]
FIRE_KINDS = (tractors.VERB, transporters.VERB, probes.VERB)
SWITCHED = {cloak.SYSTEM: cloak, esg.SYSTEM: esg}


def why_not_weapon(state: TacticalState, unit: Unit, value: Any, at: Point) -> str | None:
    """What the systems add to a shot or a seeking launch: a weapon destroyed by a raid, a firer under its cloak."""
    weapon = value.get("weapon") if isinstance(value, Mapping) else None
    if isinstance(weapon, str) and weapon in unit.gear.lost:
        return f"{unit.id}'s {weapon} was destroyed"
    return acting.why_not_act(state, unit, at)


def why_not_target(state: TacticalState, unit: Unit, value: Any, at: Point) -> str | None:
    """A shot at a cloaked unit cannot be made (no targeting while cloaked)."""
    target = state.unit(value.get("target")) if isinstance(value, Mapping) and isinstance(value.get("target"),
                                                                                            str) else None
    return acting.hidden(state, unit, target, at) if target is not None and target.owner != unit.owner else None


def why_not_system(state: TacticalState, unit: Unit, do: Mapping[str, Any], verb: str, at: Point) -> str | None:
    """What the systems add to `{use|cease: SYSTEM}`: a destroyed system, the cloak and ESG switches, a release."""
    name = do[verb]
    if not isinstance(name, str):
        return None
    if verb in ("use", "cease") and name in SWITCHED:
        return SWITCHED[name].why_not(state, unit, verb, at)  # type: ignore[attr-defined]
    return f"{unit.id}'s {name} was destroyed" if name in unit.gear.lost else None


def after_system(state: TacticalState, unit: Unit, changed: dict[str, Unit], do: Mapping[str, Any],
                 verb: str, point: Point) -> Unit:
    """The unit once its `{use|cease: SYSTEM}` is done (a cloak or field switched, a tractor hold released)."""
    name = do[verb]
    if name in SWITCHED:
        return SWITCHED[name].switch(unit, verb, point)  # type: ignore[attr-defined, no-any-return]
    if verb == "cease" and name == tractors.SYSTEM and unit.gear.holding:
        held = changed.get(unit.gear.holding, state.unit(unit.gear.holding))
        if held is not None:
            unit, changed[held.id] = tractors.release(unit, held)
    return unit


def declared(state: TacticalState, point: Point, picked: Picked) -> list[Event]:
    """The declared events of the fire step's tractor bids, transporters and probes."""
    return (tractors.declared(state, point, tractors.bids(picked))
            + transporters.declared(state, point, transporters.uses(picked))
            + probes.declared(state, point, probes.uses(picked)))


def declared_launches(state: TacticalState, point: Point, picked: Picked) -> list[Event]:
    """The `system` events of the activity step's craft launches (shuttles, fighters, PFs), known when declared:
    launches are simultaneous within their step, a craft's as a seeking weapon's (docs/tactical.md)."""
    out = []
    for (unit_id, slot), do in picked.items():
        carrier = state.unit(unit_id)
        if slot == ("launch", "craft") and carrier is not None:
            out.append(craft.launch(state, carrier, do["launch"]["craft"], point)[2])
    return out


def dice_needed(state: TacticalState, point: Point, picked: Picked) -> list[str]:
    """The dice refs of the fire step's transporters, then its weapon probes."""
    return ([transporters.ref(point, u.id) for u, _ in transporters.ordered(state, transporters.uses(picked))]
            + probes.refs(state, point, probes.uses(picked)))


def resolve_fire(before: TacticalState, after: TacticalState, point: Point, picked: Picked,
                 rolls: Mapping[str, Any]) -> tuple[TacticalState, list[Event]]:
    """The fire step's systems on `after` (the step's shots already scored)."""
    if not any(slot[0] in FIRE_KINDS for _, slot in picked):
        return craft.lost_with_carriers(after), []
    units = {u.id: u for u in after.units}
    events, lines = tractors.resolve(before, units, point, tractors.bids(picked))
    more, said = transporters.resolve(before, units, point, transporters.uses(picked), rolls)
    events, lines = events + more, lines + said
    more, said = probes.resolve(before, units, point, probes.uses(picked), rolls)
    events, lines = events + more, lines + said
    for event in list(events):
        hit = units.get(event.unit or "")
        if event.kind == "damage" and event.data.get("internal", 0) > 0 and hit is not None and hit.active \
                and hit.hull == 0 and event.data.get("system") is None:
            units[hit.id], destroyed = fire.destroy(hit, point, event.by)
            events.append(destroyed)
    return craft.lost_with_carriers(_logged(after.with_units(units, point), point, lines)), events


def _logged(state: TacticalState, point: Point, lines: list[str]) -> TacticalState:
    return evolve(state, doings=(*state.doings, *((point, line) for line in lines))) if lines else state


def activity(state: TacticalState, changed: dict[str, Unit], point: Point, picked: Picked
             ) -> tuple[TacticalState, list[Event]]:
    """Craft launched and landed at an activity step: `state` (the step's other changes made) with them, and
    their events. `changed` holds the step's units changed so far."""
    events: list[Event] = []
    lines: list[str] = []
    for (unit_id, slot), do in picked.items():
        if slot == ("launch", "craft"):
            carrier = changed.get(unit_id, state.unit(unit_id))
            assert carrier is not None
            changed[unit_id], out, event, line = craft.launch(state, carrier, do["launch"]["craft"], point)
            changed[out.id] = out
        elif slot == (craft.LAND,):
            flying = changed.get(unit_id, state.unit(unit_id))
            carrier_id = do[craft.LAND]["on"]
            carrier = changed.get(carrier_id, state.unit(carrier_id))
            assert flying is not None and carrier is not None
            changed[carrier_id], changed[unit_id], event, line = craft.land(carrier, flying, point)
        else:
            said = _switched(state, unit_id, slot, point)
            lines.extend([said] if said else [])
            continue
        events.append(event)
        lines.append(line)
    return _logged(state.with_units(changed, point), point, lines), events


def _switched(state: TacticalState, unit_id: str, slot: tuple[str, ...], point: Point) -> str | None:
    """The log line of a cloak or field switched, or a tractor let go, at an activity step."""
    verb, name = slot[0], slot[1] if len(slot) > 1 else ""
    when = format_time(point)
    if name == cloak.SYSTEM and verb in ("use", "cease"):
        fade = table(state.tables, cloak.SYSTEM)["fade"]
        return (f"{when} {unit_id} raises its cloak: fading out for {fade} impulses" if verb == "use" else
                f"{when} {unit_id} drops its cloak: fading in for {fade} impulses")
    if name == esg.SYSTEM and verb == "use":
        return f"{when} {unit_id} raises its ESG field"
    if name == tractors.SYSTEM and verb == "cease":
        return f"{when} {unit_id} lets go of its tractor beam"
    return None


def move_step(before: TacticalState, after: TacticalState, point: Point) -> tuple[TacticalState, list[Event]]:
    """After a move step: held units dragged with their holders, then the ESG fields strike."""
    changed: dict[str, Unit] = {}
    events, lines = tractors.drag(after, before, changed, point)
    state = after.with_units(changed, point) if changed else after
    state, more, said = esg.strikes(state, point)
    return craft.lost_with_carriers(_logged(state, point, lines + said)), events + more


def alloc_step(state: TacticalState, point: Point) -> TacticalState:
    """At T.0.alloc: the upkeep of holds and cloaks carried into the turn."""
    changed = tractors.upkeep(state, point)
    for unit_id, unit in cloak.upkeep(state, point).items():
        base = changed.get(unit_id)
        changed[unit_id] = unit if base is None else acting.pay(base, point, cloak.SYSTEM)
    return state.with_units(changed, state.at) if changed else state


def spend(unit: Unit, kind: str, value: Any, at: Point, state: TacticalState) -> Unit | None:
    """The unit with what an accepted tractor bid, transporter use or probe draws on record, for judging the rest
    of the step; None for other kinds."""
    if kind == tractors.VERB and isinstance(value, Mapping) and type(value.get("energy")) is int:
        return tractors.spend(unit, value, at)
    if kind == transporters.VERB:
        return acting.pay(unit, at, transporters.SYSTEM)
    if kind == probes.VERB:
        return acting.pay(unit, at, probes.SYSTEM)
    return None
