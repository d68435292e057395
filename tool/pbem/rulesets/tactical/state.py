"""The state of a `tactical/1` game: immutable units on an immutable map (DESIGN §7, §7.1).

Everything here is frozen: `apply` builds a new `TacticalState` with `evolve` (`dataclasses.replace`, faster).
The setup is read into typed fields (shields, hull, weapons as Mounts, systems, the weapon tables as WeaponTypes); the raw setup
stays beside them, deeply frozen (`Unit.extra`: power and the rest; `TacticalState.tables`: weapons, costs).

Choices where the design is silent:
* A unit starts with its turn and slip counters satisfied (it may turn or slip on its first move).
* A unit that leaves the map is `disengaged`: its hex becomes None, it no longer moves and no range is measured
  to it. It stays in `units` so that its owner, speeds and counters remain on record.
* Likewise a `destroyed` unit (0 hull after a fire step or an impact) and an `expended` seeking weapon (after its
  impact) stay in `units`, off the map, with their history (speeds, HETs, shots, systems used: what the energy
  audit needs) and `left_at`, the step at which they left play.
* A resigned player's units (ships and his seeking weapons still in flight) leave the map at the firm point
  when his resign agreement lands: status `resigned`, hex None, `left_at` that step (`resigned`).
* A unit without `shields` in setup has none (all damage is internal); without `hull` it has 0 internals, so any
  internal damage destroys it. `kind` (ship, shuttle, fighter; default ship) is for `{damage: {kind: shuttle}}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Iterator

from pbem.formats.records import evolve
from pbem.rulesets.base import Point
from pbem.rulesets.tactical import gear as gear_of, hexmap, weapons
from pbem.rulesets.tactical.gametime import MAX_TURNS, turns_of
from pbem.rulesets.tactical.hexmap import Hex
from pbem.rulesets.tactical.weapons import Mount, Seeker, WeaponType
from pbem.rulesets.tactical.gear import Gear

ACTIVE = "active"
DISENGAGED = "disengaged"
DESTROYED = "destroyed"
EXPENDED = "expended"
RESIGNED = "resigned"  # its owner resigned (DESIGN §4.8): off the map, not destroyed, no longer a target
DUMMY = "dummy"  # a seeking weapon revealed as a dummy: it vanishes, having done nothing
SEALED = "sealed"  # setup.allocation / setup.speeds
EMERGENCY = "emergency"  # the verb of an emergency deceleration in Unit.used
MAX_SPEED = 31
UNIT_KEYS = ("id", "owner", "hex", "facing", "speed", "turn_mode")
UNIT_KINDS = ("ship", "shuttle", "fighter")
SHIELDS = 6
WHY_GONE = {DISENGAGED: "it has left the map", DESTROYED: "it has been destroyed", EXPENDED: "it has impacted",
            DUMMY: "it was a dummy and has vanished", RESIGNED: "its owner has resigned",
            "aboard": "it is aboard its carrier", "captured": "it has been captured"}  # craft.ABOARD, transporters.CAPTURED


class FrozenDict(Mapping[str, Any]):
    """A read-only, hashable mapping, for setup data kept in the state."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data = dict(data or {})

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data.items())))

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def freeze(value: Any) -> Any:
    """A deep, immutable copy of parsed YAML: mappings become FrozenDict, lists become tuples."""
    if isinstance(value, Mapping):
        return FrozenDict({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The plain dict/list form of a frozen value (for printing and JSON)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Unit:
    """One ship, shuttle, fighter or seeking weapon in flight, and what the rules track about it.

    `since_turn`: hexes moved since its last turn (TL, TR, HET); `since_slip`: hexes moved since its last
    sideslip; `het_turn`: the game turn of its last HET (0: none yet); `speeds`: every speed change as
    (point, new speed), for the end-of-game energy audit. Combat: `shields` (current strengths #1..#6, or none),
    `hull` (internals left), `weapons` and `systems` from setup, `came_from` (the hex it left on its last move, for
    attacks at range 0). History for the audit: `setup_speed`, `hets` (points), `fired` ((point, weapon id) of
    every shot and launch: a weapon has fired this turn if one has the turn's number), `used` ((point, verb,
    system) of every system action). `seeking` is set for a launched seeking weapon; `left_at` once it is gone.
    """

    id: str
    owner: str
    hex: Hex | None
    facing: int
    speed: int
    turn_mode: int
    since_turn: int
    since_slip: int
    het_turn: int = 0
    status: str = ACTIVE
    speeds: tuple[tuple[Point, int], ...] = ()
    extra: FrozenDict = field(default_factory=FrozenDict)
    kind: str = "ship"
    shields: tuple[int, ...] = ()
    hull: int = 0
    weapons: tuple[Mount, ...] = ()
    systems: tuple[str, ...] = ()
    came_from: Hex | None = None
    setup_speed: int = 0
    hets: tuple[Point, ...] = ()
    fired: tuple[tuple[Point, str], ...] = ()
    used: tuple[tuple[Point, str, str], ...] = ()
    seeking: Seeker | None = None
    left_at: Point | None = None
    reinforced: tuple[tuple[Point, int, int], ...] = ()  # (point, shield, points) of every shield reinforcement
    gear: Gear = field(default_factory=Gear)  # what the systems that act left on it (gear.py)
    # damage allocation (damage.py): the starting boxes (name or weapon id, count), the internal points waiting
    # for this impulse's damage step ((attacker's owner, points)), every box lost (+1) or repaired (-1)
    boxes: tuple[tuple[str, int], ...] = ()
    pending: tuple[tuple[str, int], ...] = ()
    lost: tuple[tuple[Point, str, int], ...] = ()
    overloads: tuple[tuple[Point, str], ...] = ()  # (point, weapon id) of every overloaded shot

    @property
    def active(self) -> bool:
        """On the map and able to move."""
        return self.status == ACTIVE and self.hex is not None

    @property
    def why_gone(self) -> str:
        """Why an inactive unit can do nothing: "it has left the map", "it has been destroyed", …"""
        return WHY_GONE.get(self.status, "it is not on the map")

    def mount(self, weapon_id: str) -> Mount | None:
        """The weapon with this id on the unit, or None."""
        return next((m for m in self.weapons if m.id == weapon_id), None)

    def fired_in(self, turn: int, weapon_id: str) -> Point | None:
        """When the weapon fired (or launched) in game turn `turn`, or None (each fires once a turn)."""
        return next((p for p, w in self.fired if w == weapon_id and p[0] == turn), None)


@dataclass(frozen=True)
class TacticalState:
    """The whole game between two steps. `at` is the last step applied (None before the first)."""

    columns: int
    rows: int
    turns: int
    max_speed: int
    players: tuple[str, ...]
    units: tuple[Unit, ...]
    at: Point | None = None
    tables: FrozenDict = field(default_factory=FrozenDict)
    weapon_types: FrozenDict = field(default_factory=FrozenDict)
    # every scored shot, in game order (fire.Hit), for the log and the outcome; a held step is scored again from
    # the state before it, so nothing is counted twice
    hits: tuple[Any, ...] = ()
    # what the systems that act did, in game order, as (point, text) for the log (tractors, raids, launches, …)
    doings: tuple[tuple[Point, str], ...] = ()

    def unit(self, unit_id: str | None) -> Unit | None:
        """The unit with this id, or None."""
        for unit in self.units:
            if unit.id == unit_id:
                return unit
        return None

    def with_units(self, changed: Mapping[str, Unit], at: Point | None, added: Sequence[Unit] = ()) -> TacticalState:
        """A new state with some units replaced (by id) and new ones appended, after step `at`."""
        if not changed and not added:
            return evolve(self, at=at)
        return evolve(self, units=(*(changed.get(u.id, u) for u in self.units), *added), at=at)

    def weapon_type(self, mount: Mount) -> WeaponType:
        """The type table of a mounted weapon (checked to exist by initial_state)."""
        found: WeaponType = self.weapon_types[mount.type]
        return found

    @property
    def speeds_sealed(self) -> bool:
        """Whether each turn's speeds are sealed in the energy allocation (setup `speeds: sealed`, seed §2.C)."""
        return self.tables.get("speeds") == SEALED

    def range_between(self, a: str, b: str) -> int | None:
        """Range between two units, or None when either is unknown or off the map."""
        first, second = self.unit(a), self.unit(b)
        if first is None or second is None or not first.active or not second.active:
            return None
        assert first.hex is not None and second.hex is not None
        return hexmap.distance(first.hex, second.hex)


def initial_state(setup: Mapping[str, Any], players: Sequence[str]) -> TacticalState:
    """The state before 1.0.alloc from game.yaml `setup`; ValueError naming the bad field otherwise."""
    if not isinstance(setup, Mapping):
        raise ValueError("setup must be a mapping")
    columns, rows = _map_size(setup.get("map"))
    turns = turns_of(setup)
    max_speed = _whole(setup.get("max_speed", MAX_SPEED), "setup.max_speed", 0, MAX_SPEED)
    types = weapons.weapon_types(setup.get("weapons"))
    raw_units = setup.get("units")
    if not isinstance(raw_units, list) or not raw_units:
        raise ValueError("setup.units must be a non-empty list of units")
    units: list[Unit] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_units):
        unit = _unit(raw, f"setup.units[{index}]", players, columns, rows, max_speed, types)
        if unit.id in seen:
            raise ValueError(f"setup.units[{index}]: unit id {unit.id!r} is used twice")
        seen.add(unit.id)
        units.append(unit)
    if setup.get("speeds") == SEALED and setup.get("allocation") != SEALED:
        raise ValueError("setup.speeds: sealed needs allocation: sealed (the speeds are sealed in the allocation)")
    gear_of.check_tables(setup)
    tables = freeze({k: v for k, v in setup.items() if k not in ("map", "turns", "max_speed", "units")})
    return TacticalState(columns, rows, turns, max_speed, tuple(players), tuple(units), None, tables,
                         FrozenDict(types))


def _map_size(raw: Any) -> tuple[int, int]:
    if not isinstance(raw, Mapping):
        raise ValueError("setup.map must be {columns: N, rows: N}")
    return (
        _whole(raw.get("columns"), "setup.map.columns", 1, hexmap.MAX_MAP),
        _whole(raw.get("rows"), "setup.map.rows", 1, hexmap.MAX_MAP),
    )


def _whole(value: Any, where: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{where} must be a whole number {low}..{high}, got {value!r}")
    return value


def _unit(raw: Any, where: str, players: Sequence[str], columns: int, rows: int, max_speed: int,
          types: Mapping[str, WeaponType]) -> Unit:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be a mapping")
    missing = [k for k in UNIT_KEYS if k not in raw]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(missing)}")
    unit_id, owner = raw["id"], raw["owner"]
    if not isinstance(unit_id, str) or not unit_id:
        raise ValueError(f"{where}.id must be a unit name")
    if owner not in players:
        raise ValueError(f"{where}: unit {unit_id} belongs to {owner!r}, who is not a player ({', '.join(players)})")
    try:
        hex_ = hexmap.parse_hex(raw["hex"])
        facing = hexmap.parse_facing(raw["facing"])
    except ValueError as err:
        raise ValueError(f"{where} ({unit_id}): {err}") from None
    if not hexmap.on_map(hex_, columns, rows):
        raise ValueError(f"{where} ({unit_id}): hex {raw['hex']} is off the {columns}x{rows} map")
    turn_mode = _whole(raw["turn_mode"], f"{where}.turn_mode", 0, MAX_TURNS)
    speed = _whole(raw["speed"], f"{where}.speed", 0, max_speed)
    return Unit(
        id=unit_id,
        owner=owner,
        hex=hex_,
        facing=facing,
        speed=speed,
        turn_mode=turn_mode,
        since_turn=turn_mode,
        since_slip=1,
        extra=freeze({k: v for k, v in raw.items() if k not in UNIT_KEYS}),
        kind=_kind(raw.get("kind", "ship"), where),
        shields=_shields(raw.get("shields"), where),
        hull=_whole(raw.get("hull", 0), f"{where}.hull", 0, 1000),
        weapons=weapons.mounts(raw.get("weapons"), types, f"{where} ({unit_id})"),
        systems=_systems(raw.get("systems"), where),
        setup_speed=speed,
        gear=gear_of.of_unit(raw, f"{where} ({unit_id})"),
    )


def _kind(value: Any, where: str) -> str:
    if value not in UNIT_KINDS:
        raise ValueError(f"{where}.kind must be one of {', '.join(UNIT_KINDS)}, got {value!r}")
    return str(value)


def _shields(value: Any, where: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or len(value) != SHIELDS:
        raise ValueError(f"{where}.shields must list the {SHIELDS} shields #1..#{SHIELDS}")
    return tuple(_whole(v, f"{where}.shields", 0, 1000) for v in value)


def _systems(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}.systems must be a list of system names")
    return tuple(value)


def state_summary(state: TacticalState) -> list[dict[str, Any]]:
    """One line per unit for the log and tests: id, owner, hex ("XXYY" or None), facing letter, speed, status,
    and the shields #1..#6 and hull left."""
    return [
        {
            "id": u.id,
            "owner": u.owner,
            "hex": hexmap.format_hex(u.hex) if u.hex is not None else None,
            "facing": hexmap.format_facing(u.facing),
            "speed": u.speed,
            "status": u.status,
            "shields": list(u.shields),
            "hull": u.hull,
            **gear_summary(u),
        }
        for u in state.units
    ]


def unit_positions(state: TacticalState) -> dict[str, tuple[str, str] | None]:
    """Unit id -> (hex, facing letter), or None for a unit off the map."""
    return {
        u.id: (hexmap.format_hex(u.hex), hexmap.format_facing(u.facing)) if u.active and u.hex else None
        for u in state.units
    }


def resigned(game: TacticalState, player: str) -> TacticalState:
    """`game` once `player` resigned (docs/tactical.md "Resigning"): his units still in play (ships, shuttles,
    fighters and his seeking weapons) leave the map as `resigned`, neither destroyed nor targetable; his side
    has left, as one that disengaged, for the outcome."""
    units = tuple(evolve(u, status=RESIGNED, hex=None, left_at=game.at) if u.owner == player and u.active else u
                  for u in game.units)
    return evolve(game, units=units)


def gear_summary(unit: Unit) -> dict[str, Any]:
    """What the systems that act left on a unit, for the summary: only what is there (a unit without any shows
    nothing more than before)."""
    gear = unit.gear
    shown: dict[str, Any] = {"holding": gear.holding, "held_by": gear.held_by,
                             "cloaked": "yes" if gear.cloaked_at is not None else None,
                             "lost": list(destroyed(unit)) or None, "aboard": list(gear.bays) or None}
    return {k: v for k, v in shown.items() if v is not None}


def destroyed(unit: Unit) -> tuple[str, ...]:
    """Every weapon and system `unit` has lost: to raids (gear.lost), then to internal damage (damage.py: its
    last box gone, net of repairs), each named once, in that order."""
    left = dict(unit.boxes)
    for _, name, change in unit.lost:
        left[name] = left.get(name, 0) - change
    shot_away = (name for name, _ in unit.boxes if left[name] <= 0 and name not in unit.gear.lost)
    return (*unit.gear.lost, *shot_away)
