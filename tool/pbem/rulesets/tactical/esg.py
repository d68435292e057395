"""The ESG of `tactical/1`: a field around its ship that damages what enters it (seed 000 §6.C.5; docs/tactical.md
"ESG").

`{use: esg}` at an `activity` step, by a unit with a working `esg` (costs.esg): a field of setup.esg.radius hexes
around it for setup.esg.impulses impulses. After every move step while it is up, each unit of another side on the
map within the radius that it has not struck yet takes setup.esg.damage (no die: the field's strength is known)
on its shield facing the ESG ship; what the shield cannot stop is internal, as for fire (a seeking weapon, without
shields or hull, is destroyed). Each unit is struck once per field. `{cease: esg}` drops it; so does time.
"""

from __future__ import annotations

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point
from pbem.rulesets.tactical import acting, fire, hexmap
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.gear import since, table
from pbem.rulesets.tactical.state import TacticalState, Unit

SYSTEM = "esg"


def why_not(state: TacticalState, unit: Unit, verb: str, at: Point) -> str | None:
    """Why `{use|cease: esg}` cannot be given now (None: it can)."""
    why = acting.why_not_working(unit, SYSTEM)
    if why:
        return why
    if verb == "use":
        if up(state, unit, at):
            return f"{unit.id}'s ESG field is already up"
        return acting.why_not_act(state, unit, at) or acting.why_no_energy(state, unit, at, acting.cost(state, SYSTEM),
                                                                         "the ESG")
    return None  # a cease with nothing up drops nothing (an announcement, as before)


def up(state: TacticalState, unit: Unit, at: Point | None) -> bool:
    """Whether the unit's field stands at `at`."""
    gone = since(unit.gear.esg_at, at)
    return gone is not None and gone < int(table(state.tables, SYSTEM)["impulses"])


def switch(unit: Unit, verb: str, point: Point) -> Unit:
    """The unit with its field raised (`use`) or dropped (`cease`)."""
    if verb == "use":
        return evolve(unit, gear=evolve(unit.gear, esg_at=point, hit_by_esg=()))
    return evolve(unit, gear=evolve(unit.gear, esg_at=None, hit_by_esg=()))


def _damage(state: TacticalState) -> int:
    return int(table(state.tables, SYSTEM)["damage"])


def strikes(after: TacticalState, point: Point) -> tuple[TacticalState, list[Event], list[str]]:
    """After a move step: every field strikes what it has newly caught (see the module docstring)."""
    units = {u.id: u for u in after.units}
    events: list[Event] = []
    lines: list[str] = []
    radius = int(table(after.tables, SYSTEM)["radius"])
    for field in after.units:
        if not field.active or not up(after, field, point) or field.hex is None:
            continue
        caught = [u for u in after.units if u.active and u.owner != field.owner and u.hex is not None
                  and u.id not in units[field.id].gear.hit_by_esg and hexmap.distance(field.hex, u.hex) <= radius]
        for victim in caught:
            target = units[victim.id]
            shield = fire.shield_hit(target, fire.attacker_hex(field, target), target.shields)
            hit, on_shield, internal = fire.strike(target, shield, _damage(after))
            units[hit.id] = hit
            events.append(fire.damage_event(field.owner, hit, shield, on_shield, internal, attacker=field.id,
                                            weapon=SYSTEM))
            lines.append(f"{format_time(point)} {field.id} ESG strikes {hit.id}: {_damage(after)} damage: shield "
                         f"#{shield} took {on_shield}, internals {internal}")
            holder = units[field.id]
            units[field.id] = evolve(holder, gear=evolve(holder.gear, hit_by_esg=(*holder.gear.hit_by_esg, hit.id)))
            if internal > 0 and hit.hull == 0:
                units[hit.id], destroyed = fire.destroy(hit, point, field.owner)
                events.append(destroyed)
    return (after.with_units(units, point) if events else after), events, lines
