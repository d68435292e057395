"""What every system that acts asks of its unit (docs/tactical.md "Systems that act"): that it has the system
and a raid has not destroyed it, that its cloak lets it act, that a target is an enemy on the map within reach
and not hidden by its cloak, and that the unit's power still pays (seed 000 §1: the systems do what their names
say; every number from game.yaml `setup`).

Energy ahead of the audit: what a unit has provably spent in a turn is public (its highest speed so far, its
HETs, its shots and launches, its system uses, its reinforcement); an act that costs more than its `power` has
left is refused as soon as it is written (`rules.no-energy`). The sealed allocation still pays for it all and
is audited at the end (energy.py); a unit without `power` is never refused for energy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Point, Refusal
from pbem.rulesets.tactical import damage, hexmap
from pbem.rulesets.tactical.gametime import ACTIVITY, ALLOC
from pbem.rulesets.tactical.gear import since, table
from pbem.rulesets.tactical.state import TacticalState, Unit

NO_ENERGY = "rules.no-energy"
OUT_OF_RANGE = "rules.system-range"


def number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def cost(state: TacticalState, name: str) -> float:
    """costs.<name> of game.yaml (0 when not given)."""
    return number((state.tables.get("costs") or {}).get(name, 0))


def why_not_working(unit: Unit, system: str) -> str | None:
    """Why `unit` cannot use `system` at all: it has none, a raid destroyed it, or internal damage took its last
    box (damage.py: the damage allocation table hits systems by name, the systems that act among them)."""
    if system not in unit.systems:
        return f"{unit.id} has no {system} (it has {', '.join(unit.systems) or 'no systems'})"
    if system in unit.gear.lost:
        return f"{unit.id}'s {system} was destroyed"
    if damage.out_of_action(unit, system):
        return Refusal(f"{unit.id}'s {system} is destroyed (no box of it left)", damage.OUT_OF_ACTION)
    return None


def cloak_state(state: TacticalState, unit: Unit, at: Point | None) -> str | None:
    """"cloaked" once a cloak has faded out fully, "fading" while it fades out or in, else None (seed §6.C.5;
    setup.cloak.fade impulses each way)."""
    fade = int(table(state.tables, "cloak")["fade"])
    gone = since(unit.gear.cloaked_at, at)
    if gone is not None:
        return "cloaked" if gone >= fade else "fading"
    back = since(unit.gear.uncloaked_at, at)
    return "fading" if back is not None and back < fade else None


def why_not_act(state: TacticalState, unit: Unit, at: Point) -> str | None:
    """Why a cloaked (or still fading) unit cannot fire, launch, tractor, transport or probe."""
    shown = cloak_state(state, unit, at)
    if shown == "cloaked":
        return f"{unit.id} is cloaked: it cannot act on others until it drops its cloak and fades in"
    if shown == "fading":
        return f"{unit.id} is fading {'out' if unit.gear.cloaked_at else 'in'} under its cloak: it cannot act yet"
    return None


def hidden(state: TacticalState, by: Unit, target: Unit, at: Point) -> str | None:
    """Why `target` cannot be targeted by `by`: fully cloaked, unless `by`'s owner's probe locked on it this
    turn (probes.py)."""
    if cloak_state(state, target, at) != "cloaked":
        return None
    if any(u.owner == by.owner and (at[0], target.id) in u.gear.locks for u in state.units):
        return None
    return f"{target.id} is cloaked: it cannot be targeted (a probe's lock-on would show it)"


def enemy_within(state: TacticalState, unit: Unit, target_id: Any, reach: int, what: str) -> tuple[Unit | None, str | None]:
    """(the target, None) when `target_id` is an enemy unit on the map within `reach` of `unit`, else (None, why);
    out of reach is a Refusal naming OUT_OF_RANGE."""
    target = state.unit(target_id) if isinstance(target_id, str) else None
    if target is None:
        return None, f"there is no unit {target_id!r}"
    if target.owner == unit.owner:
        return None, f"{target.id} is not an enemy unit (it belongs to {target.owner})"
    if not target.active or target.hex is None or unit.hex is None:
        return None, f"{target.id} is not on the map ({target.why_gone})"
    distance = hexmap.distance(unit.hex, target.hex)
    if distance > reach:
        return None, Refusal(f"{target.id} is at range {distance}, beyond the {what}'s range {reach}", OUT_OF_RANGE)
    return target, None


def spent(state: TacticalState, unit: Unit, turn: int) -> float:
    """The energy `unit` has provably spent in game turn `turn` (the public record: see the module docstring)."""
    costs = state.tables.get("costs") or {}
    start = unit.setup_speed  # the speed the turn began with, then every change in it (as energy.py counts)
    for point, value in unit.speeds:
        if point <= (turn, 0, ALLOC):
            start = value
    speeds = [start, *(v for p, v in unit.speeds if p[0] == turn and p[2] == ACTIVITY)]
    total = max(speeds) * number(costs.get("speed_point", 1))
    total += sum(1 for p in unit.hets if p[0] == turn) * number(costs.get("het", 0))
    for point, weapon in unit.fired:
        mount = unit.mount(weapon)
        if point[0] == turn and mount is not None:
            total += state.weapon_type(mount).energy
    total += sum(number(costs.get(name, 0)) for p, verb, name in unit.used if p[0] == turn and verb == "use")
    return total + sum(points for p, _, points in unit.reinforced if p[0] == turn)


def why_no_energy(state: TacticalState, unit: Unit, at: Point, amount: float, what: str) -> str | None:
    """A Refusal (NO_ENERGY) when `amount` more is beyond what `unit`'s power has left in the turn of `at`."""
    power = unit.extra.get("power")
    if not isinstance(power, (int, float)) or isinstance(power, bool) or amount <= 0:
        return None
    left = power - spent(state, unit, at[0])
    if amount > left:
        return Refusal(f"{what} costs {amount:g}, and {unit.id} has {max(left, 0):g} of its power {power:g} left in "
                       f"turn {at[0]}", NO_ENERGY)
    return None


def pay(unit: Unit, at: Point, system: str, times: int = 1) -> Unit:
    """`unit` with `times` uses of `system` on record at `at` (each costs costs.<system> in the audit)."""
    return evolve(unit, used=(*unit.used, *((at, "use", system),) * times)) if times > 0 else unit


def value_of(do: Mapping[str, Any], kind: str, keys: set[str], optional: set[str] = set()) -> Mapping[str, Any] | None:
    """The mapping of an action `{kind: {...}}` when its keys are `keys` plus some of `optional`, else None."""
    value = do.get(kind)
    if not isinstance(value, Mapping) or not keys <= set(value) <= keys | optional:
        return None
    return value
