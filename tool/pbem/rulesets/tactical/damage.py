"""Internal damage of `tactical/1` allocated to a ship's systems (seed 000 §1 "official rules apply", §6.C.1:
"the number of internals is known at that break point, but the actual resolution of internals is delayed").

Only in a game whose setup has a `damage_allocation` table; without it every internal point goes to the hull at
the fire step, as before. With it:

* `damage_allocation.rolls` has one row per die roll 1..6; each row lists, in order, what an internal hit on that
  roll takes: `hull`, `weapon` (any weapon, the first in the unit's list with a box left), a weapon type (the
  first weapon of that type with a box left) or a box name of the unit's `boxes` (power, control, shuttle,
  tractor, …). The first entry with a box left takes the hit; when none has, the hull does (hull last).
* Each unit under the table lists its `boxes` ({power: 8, control: 2, tractor: 1}); each weapon has `boxes`
  (default 1); every system the unit has needs boxes; every box and weapon type needs a row that hits it.
* The fire step (and a seeking weapon's impact) scores the shields as before and keeps what went through as the
  unit's pending internals; the `damage` step of the same impulse allocates them: one d6 per internal point,
  ref "T.I.damage/UNIT/N" (N = 1.. in order), rolled by the damaged unit's owner (DESIGN §5 "Who rolls": the
  ref names his unit), and the unit is destroyed when a hull hit finds no hull left.
* What is lost stops working when none of its boxes is left: a weapon cannot fire or launch, a system cannot be
  used, a unit whose `control` boxes are all gone cannot fire or launch at all, and each lost `power` box lowers
  the unit's power (what its next allocations may spend, and reinforcement) by one.
* `damage_allocation.repair: {per_turn: N, energy: E}`: `{repair: BOX}` at an activity step gives back one lost
  box (a box name or a weapon id; never hull), at most N a turn per unit, each paid with E energy from the
  allocation's `repair` line.

Choice where the design is silent: a die lost because its roller withheld its reveal (`Withheld`) is scored on
the hull, never as no damage (a damaged player must not gain by leaving his own die unrevealed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point, SetupError, Withheld
from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.gametime import ALLOC, format_time
from pbem.rulesets.tactical.state import ACTIVE, DESTROYED, TacticalState, Unit
from pbem.rulesets.tactical.weapons import DIE_SIDES, WeaponType

TABLE = "damage_allocation"
HULL, ANY_WEAPON, POWER, CONTROL = "hull", "weapon", "power", "control"
REPAIR = "repair"
BAD_TABLE, NO_BOXES, NO_ROW = "schema.damage-table", "schema.no-boxes", "schema.no-damage-row"
OUT_OF_ACTION = "rules.out-of-action"  # a destroyed weapon or system used
MAX_BOXES = 1000


@dataclass(frozen=True)
class Allocated:
    """One internal hit as the log shows it beside the shots (TacticalState.hits, `shots_report`)."""

    at: Point
    unit: str
    roll: Any  # the die, or the text of why it was lost
    hit: str
    left: int

    def text(self) -> str:
        """E.g. "1.4.damage D7 internal: die 2, ph1 hit (0 left)"."""
        die = f"die {self.roll}" if isinstance(self.roll, int) else f"die lost ({self.roll})"
        return f"{format_time(self.at)} {self.unit} internal: {die}, {self.hit} hit ({self.left} left)"


@dataclass(frozen=True)
class Table:
    """setup.damage_allocation, checked: the rows by die roll and the repair rule."""

    rows: tuple[tuple[str, ...], ...]
    repair_per_turn: int = 0
    repair_energy: float = 0

    def hits(self, name: str) -> bool:
        """Whether some row names `name`."""
        return any(name in row for row in self.rows)


def table_of(tables: Mapping[str, Any]) -> Table | None:
    """The checked table of a state's `tables` (setup less map, turns, units), or None."""
    raw = tables.get(TABLE)
    return None if raw is None else _rows(raw, None)


def _rows(raw: Any, known: set[str] | None) -> Table:
    """`raw` checked; with `known` (hull, weapon, every weapon type and box name of the game) also that each
    entry names one of them."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("rolls"), (list, tuple)):
        raise SetupError("damage_allocation must be {rolls: [one row per die roll 1..6], repair?}", BAD_TABLE,
                         (TABLE,))
    rolls = raw["rolls"]
    if len(rolls) != DIE_SIDES:
        raise SetupError(f"damage_allocation.rolls must have {DIE_SIDES} rows (die rolls 1..{DIE_SIDES}), has "
                         f"{len(rolls)}", BAD_TABLE, (TABLE, "rolls"))
    rows: list[tuple[str, ...]] = []
    for index, row in enumerate(rolls):
        where = (TABLE, "rolls", index)
        if not isinstance(row, (list, tuple)) or not row or not all(isinstance(e, str) and e for e in row):
            raise SetupError(f"damage_allocation.rolls[{index}] must list what the hit takes, e.g. [power, hull]",
                             BAD_TABLE, where)
        unknown = [e for e in row if known is not None and e not in known]
        if unknown:
            raise SetupError(f"damage_allocation.rolls[{index}] (die {index + 1}): {unknown[0]!r} is no weapon "
                             "type, box name of a unit, `weapon` or `hull`", BAD_TABLE, where)
        rows.append(tuple(row))
    repair = raw.get(REPAIR) or {}
    if not isinstance(repair, Mapping):
        raise SetupError("damage_allocation.repair must be {per_turn: N, energy: E}", BAD_TABLE, (TABLE, REPAIR))
    per_turn, energy = repair.get("per_turn", 0), repair.get("energy", 0)
    if type(per_turn) is not int or not 0 <= per_turn <= MAX_BOXES or isinstance(energy, bool) \
            or not isinstance(energy, (int, float)) or not 0 <= energy <= 1000:
        raise SetupError("damage_allocation.repair: per_turn must be a whole number and energy a number ≥ 0",
                         BAD_TABLE, (TABLE, REPAIR))
    return Table(tuple(rows), per_turn, energy)


def check_setup(setup: Mapping[str, Any], types: Mapping[str, WeaponType]) -> dict[str, tuple[tuple[str, int], ...]]:
    """Each unit's starting boxes (unit id -> ((name, boxes), …), weapons by id) under the table; {} without one.
    SetupError (rule, setup field) for an inconsistent table: a system or weapon with no boxes, a box or weapon
    type no row hits, a row naming nothing; boxes given without a table."""
    units = [u for u in setup.get("units") or () if isinstance(u, Mapping)]
    if TABLE not in setup:
        for index, raw in enumerate(units):
            if "boxes" in raw or any(isinstance(m, Mapping) and "boxes" in m for m in raw.get("weapons") or ()):
                raise SetupError(f"units[{index}] ({raw.get('id')}): boxes need a setup.damage_allocation table",
                                 BAD_TABLE, ("units", index, "boxes"))
        return {}
    names: set[str] = set()
    for raw in units:
        boxes = raw.get("boxes")
        names.update(str(n) for n in (*(raw.get("systems") or ()), *(boxes if isinstance(boxes, Mapping) else ())))
    table = _rows(setup[TABLE], {HULL, ANY_WEAPON, *types, *names})
    return {str(raw.get("id")): _unit_boxes(raw, index, table) for index, raw in enumerate(units)}


def _unit_boxes(raw: Mapping[str, Any], index: int, table: Table) -> tuple[tuple[str, int], ...]:
    unit_id = raw.get("id")
    boxes = raw.get("boxes") or {}
    if not isinstance(boxes, Mapping):
        raise SetupError(f"units[{index}] ({unit_id}).boxes must map box names to counts", BAD_TABLE,
                         ("units", index, "boxes"))
    found: list[tuple[str, int]] = []
    for name, count in boxes.items():
        where = ("units", index, "boxes", str(name))
        if type(count) is not int or not 1 <= count <= MAX_BOXES:
            raise SetupError(f"units[{index}] ({unit_id}): {name} has {count!r} boxes; a system needs at least "
                             "one (leave it out if the unit has none)", NO_BOXES, where)
        if not table.hits(str(name)):
            raise SetupError(f"units[{index}] ({unit_id}): no row of damage_allocation.rolls hits {name}", NO_ROW,
                             where)
        found.append((str(name), count))
    for system in raw.get("systems") or ():
        if system not in boxes:
            raise SetupError(f"units[{index}] ({unit_id}): system {system} has no boxes (give it boxes: "
                             f"{{{system}: N}})", NO_BOXES, ("units", index, "systems"))
    for slot, mount in enumerate(raw.get("weapons") or ()):
        at: tuple[str | int, ...] = ("units", index, "weapons", slot)
        count = mount.get("boxes", 1)
        if type(count) is not int or not 1 <= count <= MAX_BOXES:
            raise SetupError(f"units[{index}] ({unit_id}): weapon {mount.get('id')} has {count!r} boxes; a weapon "
                             "needs at least one", NO_BOXES, (*at, "boxes"))
        if not (table.hits(ANY_WEAPON) or table.hits(str(mount.get("type")))):
            raise SetupError(f"units[{index}] ({unit_id}): weapon {mount.get('id')} ({mount.get('type')}) has no "
                             "damage row: no row of damage_allocation.rolls names its type or `weapon`", NO_ROW,
                             at)
        if mount.get("id") in boxes:
            raise SetupError(f"units[{index}] ({unit_id}): {mount.get('id')} names both a weapon and a box",
                             BAD_TABLE, at)
        found.append((str(mount.get("id")), count))
    return tuple(found)


# --- what a unit has left (Unit.boxes: the start; Unit.lost: (point, name, +1 lost or -1 repaired)) -------------

def boxes_left(unit: Unit, name: str) -> int | None:
    """The boxes of `name` (a box name or weapon id) `unit` has left; None when it has none tracked."""
    start = dict(unit.boxes).get(name)
    if start is None:
        return None
    return start - sum(change for _, lost, change in unit.lost if lost == name)


def out_of_action(unit: Unit, name: str) -> bool:
    """Whether `name` had boxes and has none left (a destroyed weapon or system)."""
    left = boxes_left(unit, name)
    return left is not None and left <= 0


def why_cannot_fire(unit: Unit, weapon: str) -> str | None:
    """Why `unit` cannot fire or launch `weapon` for damage, or None."""
    if out_of_action(unit, weapon):
        return f"{weapon} is destroyed (no box of it left)"
    if out_of_action(unit, CONTROL):
        return f"{unit.id} has no control left (every control box is destroyed)"
    return None


def power_of(unit: Unit, before: Point | None = None) -> float | None:
    """The unit's power less its power boxes lost (net of repairs) before `before` (None: all so far); None
    when its setup gives no power."""
    power = unit.extra.get("power")
    if isinstance(power, bool) or not isinstance(power, (int, float)):
        return None
    lost = sum(change for point, name, change in unit.lost if name == POWER and (before is None or point < before))
    return max(0, power - lost)


def power_in_turn(unit: Unit, turn: int) -> float | None:
    """The power `unit` has for turn `turn`'s allocation: what it lost before that turn's allocation step."""
    return power_of(unit, (turn, 0, ALLOC + 1))


# --- the damage step --------------------------------------------------------------------------------------------

def pending(unit: Unit) -> int:
    """The internal points `unit` took in this impulse and that wait for the damage step."""
    return sum(points for _, points in unit.pending)


def dice_refs(state: TacticalState, point: Point) -> list[str]:
    """One ref "T.I.damage/UNIT/N" per pending internal point, units in setup order."""
    return [f"{format_time(point)}/{u.id}/{n}" for u in state.units for n in range(1, pending(u) + 1)]


def _target(unit: Unit, row: Sequence[str], types: Mapping[str, WeaponType]) -> str:
    """What one hit on `row` takes: its first entry with a box left. A weapon or system a raid destroyed
    (transporters.py, gear.lost) has nothing left to hit, whatever its boxes say."""
    def left(name: str) -> int:
        return 0 if name in unit.gear.lost else boxes_left(unit, name) or 0

    for entry in row:
        if entry == HULL:
            return HULL
        if entry == ANY_WEAPON or entry in types:
            mount = next((m for m in unit.weapons if (entry == ANY_WEAPON or m.type == entry) and left(m.id) > 0),
                         None)
            if mount is not None:
                return str(mount.id)
        elif left(entry) > 0:
            return entry
    return HULL


def allocate(state: TacticalState, point: Point, rolls: Mapping[str, Any] | None) -> tuple[TacticalState, list[Event]]:
    """Allocate every pending internal point at damage step `point`; ValueError if a die is missing."""
    table = table_of(state.tables)
    rolls = rolls or {}
    changed: dict[str, Unit] = {}
    events: list[Event] = []
    scored: list[Allocated] = []
    for unit in state.units:
        if not unit.pending:
            continue
        n = 0
        for by, points in unit.pending:
            for _ in range(points):
                n += 1
                ref = f"{format_time(point)}/{unit.id}/{n}"
                roll = rolls.get(ref)
                shown: Any
                if isinstance(roll, Withheld):
                    hit, shown = HULL, roll.text()
                elif type(roll) is int and 1 <= roll <= DIE_SIDES and table is not None:
                    hit, shown = _target(unit, table.rows[roll - 1], state.weapon_types), roll
                else:
                    raise ValueError(f"damage at {format_time(point)} needs a die 1..{DIE_SIDES} for {ref}, "
                                     f"got {roll!r}")
                unit, hit_events = _hit(unit, hit, point, by, shown)
                events.extend(hit_events)
                scored.append(Allocated(point, unit.id, shown, hit, hit_events[0].data["left"]))
                if unit.status != ACTIVE:
                    break
            if unit.status != ACTIVE:
                break
        changed[unit.id] = evolve(unit, pending=())
    after = state.with_units(changed, point)
    return evolve(after, hits=(*state.hits, *scored)), events


def destroy(unit: Unit, point: Point | None, by: str) -> tuple[Unit, Event]:
    """The unit taken out of play as destroyed, and its `destroyed` event (by: whose attack finished it)."""
    where = hexmap.format_hex(unit.hex) if unit.hex is not None else None
    return evolve(unit, status=DESTROYED, hex=None, left_at=point), Event("destroyed", by, unit.id, {"hex": where})


def equip(game: TacticalState, setup: Mapping[str, Any]) -> TacticalState:
    """`game` with each unit's starting boxes under the table (check_setup); unchanged without one."""
    boxes = check_setup(setup, game.weapon_types)
    if not boxes:
        return game
    return evolve(game, units=tuple(evolve(u, boxes=boxes.get(u.id, ())) for u in game.units))


def _hit(unit: Unit, hit: str, point: Point, by: str, roll: Any) -> tuple[Unit, list[Event]]:
    data: dict[str, Any] = {"roll": roll, "hit": hit, "at": format_time(point)}
    if hit == HULL:
        if unit.hull == 0:
            gone, event = destroy(unit, point, by)
            return gone, [Event("internal", by, unit.id, {**data, "left": 0}), event]
        unit = evolve(unit, hull=unit.hull - 1)
        return unit, [Event("internal", by, unit.id, {**data, "left": unit.hull})]
    unit = evolve(unit, lost=(*unit.lost, (point, hit, 1)))
    return unit, [Event("internal", by, unit.id, {**data, "left": boxes_left(unit, hit)})]


# --- damage control -----------------------------------------------------------------------------------------------

def repaired_in(unit: Unit, turn: int) -> int:
    """How many boxes `unit` repaired in game turn `turn`."""
    return sum(1 for point, _, change in unit.lost if change < 0 and point[0] == turn)


def why_not_repair(tables: Mapping[str, Any], unit: Any, name: Any, turn: int) -> str | None:
    """None if `unit` may repair one box of `name` in `turn`, else why not."""
    table = table_of(tables)
    if table is None or table.repair_per_turn == 0:
        return "this game allows no repair (setup damage_allocation.repair)"
    if not isinstance(name, str) or name == HULL:
        return f"repair names a box or a weapon of the unit, not {name!r}"
    left = boxes_left(unit, name)
    if left is None:
        return f"{unit.id} has no box {name!r}"
    if left >= dict(unit.boxes)[name]:
        return f"{name} has lost no box"
    if repaired_in(unit, turn) >= table.repair_per_turn:
        return f"{unit.id} already repaired {table.repair_per_turn} box(es) in turn {turn}"
    return None


def repair(unit: Unit, name: str, point: Point) -> tuple[Unit, Event]:
    """The unit with one box of `name` back, and its `repaired` event."""
    unit = evolve(unit, lost=(*unit.lost, (point, name, -1)))
    return unit, Event("repaired", unit.owner, unit.id, {"box": name, "left": boxes_left(unit, name),
                                                         "at": format_time(point)})
