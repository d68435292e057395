"""Shuttles, fighters and PFs of `tactical/1`: units of their own, launched from and landed in a carrier's bay
(seed 000 §6.C.1 "damage to any shuttle or fighter", §6.C.5 "Shuttle/Fighter/PF launch/land"; docs/tactical.md
"Shuttles, fighters and PFs").

game.yaml: setup.craft holds the craft types, e.g. `shuttle: {kind: shuttle, speed: 6, turn_mode: 1, hull: 4,
weapons: [{id: ph1, type: phaser, arcs: [A, B, F]}]}` (kind shuttle, fighter or pf; shields, power optional); a
carrier lists what it carries, `craft: [{id: SH1, type: shuttle}]`, and needs a `bay` among its systems. Each craft
is a unit from the start, `aboard` (off the map), owned by the carrier's owner.

`{launch: {craft: SH1}}` at an `activity` step, by the carrier, one a step: the craft appears in the carrier's hex
with its facing, at its type's speed, and from then on moves, fires and takes damage as a unit of its own (entries
for SH1, its own weapons from setup.weapons). Refused: a bay that is empty (`rules.bay-empty`) or destroyed by a
raid (`rules.bay-destroyed`), a craft not aboard. `{land: {on: CA}}` at an `activity` step, by the craft, in its
carrier's hex (or any own unit with a working bay): it goes aboard again, off the map, and may be launched again.
Both give a `system` event {kind: launch|land, system: KIND, craft} for `{system: {kind: launch}}` conditions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point, Refusal
from pbem.rulesets.tactical import acting, energy, weapons
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.gear import Gear, whole
from pbem.rulesets.tactical.state import SHIELDS, TacticalState, Unit, freeze

ABOARD = "aboard"
BAY = "bay"
KINDS = ("shuttle", "fighter", "pf")
LAND = "land"
BAY_EMPTY = "rules.bay-empty"
BAY_DESTROYED = "rules.bay-destroyed"


def aboard(setup: Mapping[str, Any], state: TacticalState) -> TacticalState:
    """`state` with every carried craft added as a unit aboard its carrier; ValueError naming a bad craft."""
    types = setup.get("craft") or {}
    if not isinstance(types, Mapping):
        raise ValueError("setup.craft must map craft type names to {kind, speed, turn_mode, hull, weapons}")
    added: list[Unit] = []
    seen = {u.id for u in state.units}
    for index, raw in enumerate(setup.get("units") or ()):
        for carried in raw.get("craft") or ():
            where = f"setup.units[{index}].craft ({carried.get('id')})"
            kind = types.get(carried.get("type"))
            if not isinstance(kind, Mapping):
                raise ValueError(f"{where}: no craft type {carried.get('type')!r} in setup.craft")
            if carried["id"] in seen:
                raise ValueError(f"{where}: unit id {carried['id']!r} is used twice")
            seen.add(carried["id"])
            added.append(_craft(carried["id"], raw["owner"], kind, state, where))
    return evolve(state, units=(*state.units, *added)) if added else state


def _craft(unit_id: str, owner: str, kind: Mapping[str, Any], state: TacticalState, where: str) -> Unit:
    if kind.get("kind") not in KINDS:
        raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind.get('kind')!r}")
    shields = kind.get("shields")
    if shields is not None and (not isinstance(shields, list) or len(shields) != SHIELDS):
        raise ValueError(f"{where}: shields must list the {SHIELDS} shields #1..#{SHIELDS}")
    speed = whole(kind.get("speed", 0), f"{where}.speed", 0, state.max_speed)
    turn_mode = whole(kind.get("turn_mode", 1), f"{where}.turn_mode")
    extra = {k: v for k, v in kind.items() if k in ("power", "name")}
    return Unit(id=unit_id, owner=owner, hex=None, facing=0, speed=speed, turn_mode=turn_mode, since_turn=turn_mode,
                since_slip=1, status=ABOARD, extra=freeze(extra), kind=str(kind["kind"]),
                shields=tuple(whole(s, f"{where}.shields") for s in shields or ()),
                hull=whole(kind.get("hull", 0), f"{where}.hull"),
                weapons=weapons.mounts(kind.get("weapons"), dict(state.weapon_types), where),
                systems=tuple(kind.get("systems") or ()), setup_speed=speed, gear=Gear())


def is_launch(value: Any) -> bool:
    """Whether a `launch` value launches a craft ({craft: ID}) rather than a seeking weapon."""
    return isinstance(value, Mapping) and "craft" in value


def why_not_launch(state: TacticalState, unit: Unit, value: Mapping[str, Any], at: Point) -> str | None:
    """None if `unit` may launch `value['craft']` at activity step `at`, else why not."""
    if set(value) != {"craft"}:
        return "a craft launch takes {craft: CRAFT}"
    if BAY not in unit.systems:
        return f"{unit.id} has no bay"
    if BAY in unit.gear.lost:
        return Refusal(f"{unit.id}'s bay was destroyed: nothing can be launched from it", BAY_DESTROYED)
    if not unit.gear.bays:
        return Refusal(f"{unit.id}'s bay is empty", BAY_EMPTY)
    if value["craft"] not in unit.gear.bays:
        return f"{value['craft']!r} is not aboard {unit.id} (aboard: {', '.join(unit.gear.bays)})"
    return acting.why_not_act(state, unit, at)


def launch(state: TacticalState, carrier: Unit, craft_id: str, point: Point) -> tuple[Unit, Unit, Event, str]:
    """(the carrier, the launched craft, its `system` event, its log line)."""
    craft = state.unit(craft_id)
    assert craft is not None
    out = evolve(craft, status="active", hex=carrier.hex, facing=carrier.facing, left_at=None, came_from=None,
                  since_turn=craft.turn_mode, since_slip=1)
    carrier = evolve(carrier, gear=evolve(carrier.gear, bays=tuple(b for b in carrier.gear.bays if b != craft_id)))
    event = Event("system", carrier.owner, carrier.id, {"kind": "launch", "system": craft.kind, "craft": craft_id,
                                                        "at": format_time(point)})
    return carrier, out, event, f"{format_time(point)} {carrier.id} launches {craft.kind} {craft_id}"


def why_not_land(state: TacticalState, unit: Unit, value: Any, at: Point) -> str | None:
    """None if craft `unit` may land as `value` ({on: UNIT}) at activity step `at`, else why not."""
    if not isinstance(value, Mapping) or set(value) != {"on"}:
        return "land takes {on: UNIT}"
    if unit.kind not in KINDS:
        return f"{unit.id} is no shuttle, fighter or PF: it cannot land"
    carrier = state.unit(value["on"]) if isinstance(value["on"], str) else None
    if carrier is None or carrier.owner != unit.owner or not carrier.active:
        return f"{value['on']!r} is no unit of {unit.owner} on the map"
    if BAY not in carrier.systems or BAY in carrier.gear.lost:
        return f"{carrier.id} has no working bay"
    if carrier.hex != unit.hex:
        return f"{unit.id} must be in {carrier.id}'s hex to land"
    return None


def land(carrier: Unit, craft: Unit, point: Point) -> tuple[Unit, Unit, Event, str]:
    """(the carrier with the craft aboard, the craft off the map, its `system` event, its log line)."""
    carrier = evolve(carrier, gear=evolve(carrier.gear, bays=(*carrier.gear.bays, craft.id)))
    craft = evolve(craft, status=ABOARD, hex=None, left_at=point)
    event = Event("system", craft.owner, craft.id, {"kind": "land", "system": craft.kind, "craft": craft.id,
                                                    "on": carrier.id, "at": format_time(point)})
    return carrier, craft, event, f"{format_time(point)} {craft.id} lands on {carrier.id}"


def without_craft(state: TacticalState, record: energy.TurnRecord) -> energy.TurnRecord:
    """An energy record without the player's craft: a shuttle, fighter or PF flies at its type's speed and fires
    from its own power, outside its carrier's allocation (choice where the seed is silent)."""
    flying = {u.id for u in state.units if u.kind in KINDS}
    if not flying & {u.unit for u in record.units}:
        return record
    values = {f.name: getattr(record, f.name) for f in fields(record)}
    values["units"] = tuple(u for u in record.units if u.unit not in flying)
    return type(record)(**values)


def lost_with_carriers(state: TacticalState) -> TacticalState:
    """`state` with the craft aboard a carrier that was destroyed or captured lost with it (status destroyed; a
    carrier that left the map or resigned takes its craft along, still aboard)."""
    gone = {b: u for u in state.units if u.status in ("destroyed", "captured") for b in u.gear.bays}
    lost = {c.id: evolve(c, status="destroyed", left_at=gone[c.id].left_at)
            for c in state.units if c.id in gone and c.status == ABOARD}
    return state.with_units(lost, state.at) if lost else state
