"""Direct fire and damage of `tactical/1` (DESIGN §7.1; seed 000 §7.A simultaneity).

`{fire: {weapon: ph1, target: D7, overload?: true}}` at a `fire` step, by the owner of the firing unit, is legal when
the unit carries that weapon, it is a direct-fire type, damage has left it and the unit's control working
(damage.py), it is ready (weapons.why_not_ready: once a game turn, or its frequency in impulses; armed over its
turns), the unit made no emergency deceleration earlier this turn, an overload is one its type has, and the target
is an enemy unit on the map, within the type's max_range, inside one of its range brackets, and in one of the
weapon's arcs (arcs.py: hexes on a sector edge are in arc; range 0 is in every arc).

Every legal shot of the step needs one die, ref "T.I.fire/UNIT/WEAPON"; refs are listed in the order of the
units in setup (launched units after them) and of the weapons on each unit. Resolution is simultaneous: all
shots are checked and aimed on the state before the step, so a unit destroyed in this fire step still fires in
it; then each shot's damage (the type's damage[bracket][die − 1]) is scored in dice order, and only after the
whole step are units with 0 hull left (that took internal damage) destroyed.

Damage (shield_hit): it hits the target's shield facing the attacker, seen from the target's hex and facing; what
exceeds that shield's remaining strength goes to internals (hull), never below 0. Choices where the design is
silent:
* An attacker on the edge between two shields hits the one that was stronger at the start of the step (the
  defender's better choice, decided without a further question); equal strengths: the lower-numbered shield.
* At range 0 the attacker is taken to be where it came from (the hex it left on its last move); if it has not
  moved since it appeared, the target came to it, so the attacker is taken to be as far beyond the target's hex
  as the target's previous hex is before it; if neither has moved, shield #1 is hit.
* A unit without shields takes everything on internals (the `damage` event still names the shield facing).
* Without a damage allocation table the `damage` step does nothing: damage is scored in the fire step that caused
  it. With one, what gets through the shields waits as pending internals for the damage step (damage.py).
* A shot whose die is lost (its roller's reveal withheld, settled by an nmr or his resign: `Withheld`) misses: it
  was fired (the weapon is spent this turn) and does no damage; the log says why (DESIGN §4.8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point, Refusal, Roll, Withheld
from pbem.rulesets.tactical import arcs, damage, hexmap, reinforce, weapons
from pbem.rulesets.tactical.damage import destroy
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.hexmap import Hex
from pbem.rulesets.tactical.state import EMERGENCY, TacticalState, Unit
from pbem.rulesets.tactical.weapons import DIE_SIDES, Mount, WeaponType


@dataclass(frozen=True)
class Hit:
    """One scored shot as the log shows it: who fired what at whom, the die, the damage and where it went."""

    at: Point
    attacker: str
    weapon: str
    target: str
    range: int
    roll: int
    amount: int
    reinforcement: int
    shield: int
    shield_damage: int
    internal: int
    lost: str = ""  # why the shot missed without a die: "kli's reveal withheld, nmr fed-0003" (Withheld.text)

    def text(self) -> str:
        """E.g. "1.4.fire CA ph1 at D7, range 3: die 6, 4 damage: shield #2 took 4, internals 0"."""
        if self.lost:
            return (f"{format_time(self.at)} {self.attacker} {self.weapon} at {self.target}, range {self.range}: "
                    f"missed: {self.lost}")
        where = f"shield #{self.shield} took {self.shield_damage}, internals {self.internal}"
        if self.reinforcement:
            where = f"reinforcement took {self.reinforcement}, " + where
        return (f"{format_time(self.at)} {self.attacker} {self.weapon} at {self.target}, range {self.range}: "
                f"die {self.roll}, {self.amount} damage: {where}")


@dataclass(frozen=True)
class Shot:
    """One legal shot of a fire step, aimed on the state before the step."""

    ref: str
    unit: Unit
    mount: Mount
    type: WeaponType
    target: Unit
    range: int
    overload: bool = False


def dice_ref(point: Point, unit: str, weapon: str) -> str:
    """The dice ref of one shot, e.g. "1.4.fire/CA/ph1" (DESIGN §5)."""
    return f"{format_time(point)}/{unit}/{weapon}"


def why_not_fire(state: TacticalState, unit: Unit, value: Any, at: Point, own: bool = False) -> str | None:
    """None if `unit` may fire as `value` ({weapon, target}) at fire step `at`, else why not.

    `own`: judge only what the firer's owner alone can know ahead (DESIGN §4.2): the weapon, whether it fired
    before the firm point, and that the target is not his own unit. Where the target is, or whether it is still
    there, depends on others' later moves and shots; replay voids such a shot when it cannot be made."""
    if not isinstance(value, Mapping) or not {"weapon", "target"} <= set(value) <= {"weapon", "target", "overload"}:
        return "fire takes {weapon: WEAPON, target: UNIT}"
    weapon, target_id = value["weapon"], value["target"]
    mount = unit.mount(weapon) if isinstance(weapon, str) else None
    if mount is None:
        carried = ", ".join(m.id for m in unit.weapons) or "none"
        return f"{unit.id} has no weapon {weapon!r} (it carries {carried})"
    kind = state.weapon_type(mount)
    if kind.seeking:
        return f"{weapon} is a seeking weapon ({kind.name}): launch it at an activity step"
    broken = damage.why_cannot_fire(unit, weapon)  # damage before the firm point is public
    if broken:
        return Refusal(broken, damage.OUT_OF_ACTION)
    not_ready = weapons.why_not_ready(unit, mount, kind, at)  # in an own view: the shots before the firm point
    if not_ready is not None:
        return Refusal(not_ready[1], not_ready[0]) if not_ready[0] else not_ready[1]
    overload = value.get("overload", False)
    if overload is not False and (overload is not True or not kind.overload_damage):
        return f"{weapon} ({kind.name}) cannot fire overloaded" if overload is True else "overload must be true"
    stopped = next((p for p, verb, _ in unit.used if verb == EMERGENCY and p[0] == at[0] and p < at), None)
    if stopped is not None:
        return f"{unit.id} made an emergency deceleration at {format_time(stopped)}: it fires nothing this turn"
    if own:
        if not isinstance(target_id, str):
            return f"the target must be a unit's name, got {target_id!r}"
        target = state.unit(target_id)
        if target is not None and target.owner == unit.owner:
            return f"{target.id} is not an enemy unit (it belongs to {target.owner})"
        return None
    target = state.unit(target_id) if isinstance(target_id, str) else None
    if target is None:
        return f"there is no unit {target_id!r} to fire at"
    if target.owner == unit.owner:
        return f"{target.id} is not an enemy unit (it belongs to {target.owner})"
    if not target.active or target.hex is None or unit.hex is None:
        return f"{target.id} is not on the map ({target.why_gone})"
    distance = hexmap.distance(unit.hex, target.hex)
    if distance > kind.max_range:
        return f"{target.id} is at range {distance}, beyond {weapon}'s range {kind.max_range} ({kind.name})"
    if overload and distance > kind.overload_range:
        return f"{target.id} is at range {distance}, beyond {weapon}'s overloaded range {kind.overload_range}"
    if kind.bracket_of(distance) is None:
        return f"{kind.name} has no damage bracket for range {distance}"
    if not arcs.in_arc(unit.hex, unit.facing, target.hex, mount.arcs):
        bearing = ", ".join(hexmap.format_facing(k) for k in sorted(arcs.relative_sectors(unit.hex, unit.facing,
                                                                                         target.hex)))
        return (f"{target.id} ({hexmap.format_hex(target.hex)}) is in {unit.id}'s {bearing} sector, outside "
                f"{weapon}'s arcs {mount.arc_letters}")
    return None


def shots(state: TacticalState, point: Point, chosen: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[Shot]:
    """The step's shots in dice order, from the chosen legal fire actions ((unit, weapon) -> {weapon, target})."""
    found: list[Shot] = []
    for unit in state.units:
        for mount in unit.weapons:
            value = chosen.get((unit.id, mount.id))
            if value is None:
                continue
            target = state.unit(value["target"])
            assert target is not None and target.hex is not None and unit.hex is not None
            found.append(Shot(dice_ref(point, unit.id, mount.id), unit, mount, state.weapon_type(mount), target,
                              hexmap.distance(unit.hex, target.hex), value.get("overload") is True))
    return found


def fire_event(shot: Shot, point: Point) -> Event:
    """The `fire` event of a shot: known as soon as it is declared (before any die is rolled)."""
    data = {"weapon": shot.mount.id, "target": shot.target.id, "heavy": shot.type.heavy, "type": shot.type.name,
            "range": shot.range, "at": format_time(point), **({"overload": True} if shot.overload else {})}
    return Event("fire", shot.unit.owner, shot.unit.id, data)


def attacker_hex(attacker: Unit, target: Unit) -> Hex | None:
    """Where an attack on `target` comes from, for choosing the shield (see the module docstring for range 0)."""
    if attacker.hex is not None and attacker.hex != target.hex:
        return attacker.hex
    if attacker.came_from is not None:
        return attacker.came_from
    if target.came_from is not None and target.hex is not None:
        return arcs.mirrored(target.hex, target.came_from)
    return None


def shield_hit(target: Unit, source: Hex | None, strengths: Sequence[int]) -> int:
    """Which shield (1..6) of `target` an attack from hex `source` hits; `strengths` decide a tie on an edge."""
    if source is None or target.hex is None:
        return 1
    facing = arcs.shields_facing(target.hex, target.facing, source)
    if len(facing) == 1 or not strengths:
        return facing[0]
    return min(facing, key=lambda n: (-strengths[n - 1], n))


def strike(target: Unit, shield: int, amount: int, deferred_by: str | None = None) -> tuple[Unit, int, int]:
    """`amount` damage on `target`'s shield `shield`: (the unit after, damage the shield took, internal damage).
    `deferred_by` (a game with a damage allocation table: the attacker's owner): the internal damage waits for
    the damage step (damage.py) instead of taking hull now."""
    if amount < 0:
        raise ValueError(f"damage cannot be negative, got {amount}")
    strengths = list(target.shields)
    on_shield = min(amount, strengths[shield - 1]) if strengths else 0
    if strengths:
        strengths[shield - 1] -= on_shield
    internal = amount - on_shield
    if deferred_by is not None:
        waiting = (*target.pending, (deferred_by, internal)) if internal else target.pending
        return evolve(target, shields=tuple(strengths), pending=waiting), on_shield, internal
    return evolve(target, shields=tuple(strengths), hull=max(0, target.hull - internal)), on_shield, internal


def damage_event(by: str, target: Unit, shield: int, on_shield: int, internal: int, **more: Any) -> Event:
    """The `damage` event of one hit on `target` (unit = the damaged unit, by = the attacker's owner)."""
    return Event("damage", by, target.id, {"shield": shield, "shield_damage": on_shield, "internal": internal,
                                           **more})


def resolve(state: TacticalState, point: Point, given: Sequence[Shot], rolls: Mapping[str, Roll] | None,
            reinforced: Mapping[tuple[str, int], int] | None = None, general: Mapping[str, int] | None = None
            ) -> tuple[TacticalState, list[Event]]:
    """Score all shots of a fire step together (see the module docstring); ValueError if a die is missing.
    `reinforced`: (unit, shield) -> points of this step's shield reinforcement (reinforce.py), taken first;
    `general`: unit -> points of general reinforcement, standing before each of its shields after those."""
    rolls = rolls or {}
    for shot in given:
        roll = rolls.get(shot.ref)
        if isinstance(roll, Withheld):
            continue
        if not isinstance(roll, int) or isinstance(roll, bool) or not 1 <= roll <= DIE_SIDES:
            raise ValueError(f"fire at {format_time(point)} needs a die 1..{DIE_SIDES} for {shot.ref}, got {roll!r}")
    units = {u.id: u for u in state.units}
    events: list[Event] = []
    finished: dict[str, str] = {}
    left = dict(reinforced or {})
    scored: list[Hit] = []
    deferred = damage.table_of(state.tables) is not None  # internals wait for the damage step
    for (unit_id, shield), points in sorted(left.items()):
        unit = units[unit_id]
        units[unit_id] = evolve(unit, reinforced=(*unit.reinforced, (point, shield, points)))
        events.append(Event("reinforced", unit.owner, unit_id, {"shield": shield, "points": points}))
    behind = {(unit_id, n): points for unit_id, points in (general or {}).items() for n in range(1, 7)}
    for unit_id, points in sorted((general or {}).items()):
        unit = units[unit_id]
        units[unit_id] = evolve(unit, reinforced=(*unit.reinforced, (point, 0, points)))
        events.append(Event("reinforced", unit.owner, unit_id, {"general": points}))
    for shot in given:
        firer = units[shot.unit.id]
        units[firer.id] = evolve(firer, fired=(*firer.fired, (point, shot.mount.id)),
                                  overloads=(*firer.overloads, (point, shot.mount.id)) if shot.overload
                                  else firer.overloads)
        events.append(fire_event(shot, point))
        roll = rolls[shot.ref]
        if isinstance(roll, Withheld):  # the die is lost: the shot misses, and the log says why
            scored.append(Hit(point, shot.unit.id, shot.mount.id, shot.target.id, shot.range, 0, 0, 0, 0, 0, 0,
                              roll.text()))
            events.append(Event("missed", shot.unit.owner, shot.target.id, {"weapon": shot.mount.id,
                                                                         "attacker": shot.unit.id,
                                                                         "why": roll.text()}))
            continue
        amount = shot.type.damage_at(shot.range, roll, shot.overload)
        before = shot.target  # aim and tie-break on the state before the step
        shield = shield_hit(before, attacker_hex(shot.unit, before), before.shields)
        taken, through = reinforce.absorb(left, before.id, shield, amount)
        taken_too, through = reinforce.absorb(behind, before.id, shield, through)
        taken += taken_too
        hit, on_shield, internal = strike(units[before.id], shield, through, shot.unit.owner if deferred else None)
        units[hit.id] = hit
        scored.append(Hit(point, shot.unit.id, shot.mount.id, hit.id, shot.range, roll, amount, taken, shield,
                          on_shield, internal))
        events.append(damage_event(shot.unit.owner, hit, shield, on_shield, internal, weapon=shot.mount.id,
                                   attacker=shot.unit.id, roll=roll, range=shot.range, amount=amount,
                                   **({"reinforcement": taken} if taken else {})))
        if internal > 0 and hit.hull == 0 and not deferred:
            finished.setdefault(hit.id, shot.unit.owner)
    for unit_id, by in finished.items():
        units[unit_id], event = destroy(units[unit_id], point, by)
        events.append(event)
    after = state.with_units(units, point)
    return (evolve(after, hits=(*state.hits, *scored)) if scored else after), events
