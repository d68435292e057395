"""The state of a `tactical/1` game: immutable units on an immutable map (DESIGN §7, §7.1).

Everything here is frozen: `apply` builds a new `TacticalState` with `dataclasses.replace`. Setup fields that
later rules need (shields, hull, power, weapons, systems, the weapon tables, costs) are read and kept, deeply
frozen, but not used by the movement rules.

Choices where the design is silent:
* A unit starts with its turn and slip counters satisfied (it may turn or slip on its first move).
* A unit that leaves the map is `disengaged`: its hex becomes None, it no longer moves and no range is measured
  to it. It stays in `units` so that its owner, speeds and counters remain on record.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping, Sequence

from pbem.rulesets.base import Point
from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.gametime import MAX_TURNS, turns_of
from pbem.rulesets.tactical.hexmap import Hex

ACTIVE = "active"
DISENGAGED = "disengaged"
MAX_SPEED = 31
UNIT_KEYS = ("id", "owner", "hex", "facing", "speed", "turn_mode")


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
    """One ship (later also shuttles, seeking weapons) and what the movement rules track about it.

    `since_turn`: hexes moved since its last turn (TL, TR, HET); `since_slip`: hexes moved since its last
    sideslip; `het_turn`: the game turn of its last HET (0: none yet); `speeds`: every speed change as
    (point, new speed), for the end-of-game energy audit.
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

    @property
    def active(self) -> bool:
        """On the map and able to move."""
        return self.status == ACTIVE and self.hex is not None


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

    def unit(self, unit_id: str | None) -> Unit | None:
        """The unit with this id, or None."""
        for unit in self.units:
            if unit.id == unit_id:
                return unit
        return None

    def with_units(self, changed: Mapping[str, Unit], at: Point) -> TacticalState:
        """A new state with some units replaced (by id), after step `at`."""
        return replace(self, units=tuple(changed.get(u.id, u) for u in self.units), at=at)

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
    raw_units = setup.get("units")
    if not isinstance(raw_units, list) or not raw_units:
        raise ValueError("setup.units must be a non-empty list of units")
    units: list[Unit] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_units):
        unit = _unit(raw, f"setup.units[{index}]", players, columns, rows, max_speed)
        if unit.id in seen:
            raise ValueError(f"setup.units[{index}]: unit id {unit.id!r} is used twice")
        seen.add(unit.id)
        units.append(unit)
    tables = freeze({k: v for k, v in setup.items() if k not in ("map", "turns", "max_speed", "units")})
    return TacticalState(columns, rows, turns, max_speed, tuple(players), tuple(units), None, tables)


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


def _unit(raw: Any, where: str, players: Sequence[str], columns: int, rows: int, max_speed: int) -> Unit:
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
    return Unit(
        id=unit_id,
        owner=owner,
        hex=hex_,
        facing=facing,
        speed=_whole(raw["speed"], f"{where}.speed", 0, max_speed),
        turn_mode=turn_mode,
        since_turn=turn_mode,
        since_slip=1,
        extra=freeze({k: v for k, v in raw.items() if k not in UNIT_KEYS}),
    )


def state_summary(state: TacticalState) -> list[dict[str, Any]]:
    """One line per unit for the log and tests: id, owner, hex ("XXYY" or None), facing letter, speed, status."""
    return [
        {
            "id": u.id,
            "owner": u.owner,
            "hex": hexmap.format_hex(u.hex) if u.hex is not None else None,
            "facing": hexmap.format_facing(u.facing),
            "speed": u.speed,
            "status": u.status,
        }
        for u in state.units
    ]


def unit_positions(state: TacticalState) -> dict[str, tuple[str, str] | None]:
    """Unit id -> (hex, facing letter), or None for a unit off the map."""
    return {
        u.id: (hexmap.format_hex(u.hex), hexmap.format_facing(u.facing)) if u.active and u.hex else None
        for u in state.units
    }
