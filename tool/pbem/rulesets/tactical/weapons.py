"""Weapon tables of `tactical/1` (DESIGN §7.1): weapon types from game.yaml `setup.weapons`, the weapons mounted
on each unit, and the damage a shot does by range bracket and die.

A direct-fire type has `brackets` (ranges [from, to], in order, not overlapping) and one `damage` row per
bracket with six entries, the damage for die rolls 1..6; it reaches `max_range` (default: the end of its last
bracket). A seeking type (`seeking: true`, seed §2.C) is launched instead of fired: it becomes a unit moving at
`speed` (default 20) with turn mode `turn_mode` (default 1) and does `warhead` damage on impact. `heavy` marks
the types that meet `{fire: {heavy: true}}` break conditions; `energy` (default 0) is what one shot or launch
costs in the energy allocation audit.

Choices where the design is silent: a range inside no bracket (a gap in the table) cannot be fired at; a
seeking type needs no brackets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Point
from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.gametime import IMPULSES, format_time

DIE_SIDES = 6
SEEKING_SPEED = 20
SEEKING_TURN_MODE = 1
MAX_SEEKING_SPEED = 32
MAX_RANGE = 200
FREQUENCY, NOT_ARMED = "rules.fire-frequency", "rules.not-armed"


@dataclass(frozen=True)
class WeaponType:
    """One row of setup.weapons, checked."""

    name: str
    heavy: bool = False
    seeking: bool = False
    max_range: int = 0
    brackets: tuple[tuple[int, int], ...] = ()
    damage: tuple[tuple[int, ...], ...] = ()
    energy: float = 0
    speed: int = SEEKING_SPEED
    turn_mode: int = SEEKING_TURN_MODE
    warhead: int = 0
    # weapons as they are used (docs/tactical.md "Weapons as they are used"): impulses between two shots (0: once
    # a game turn), turns of arming before each shot (0: none), the energy of each arming turn, of each turn held,
    # the extra energy of an overloaded shot, and its damage rows (one per bracket) and range
    frequency: int = 0
    arm_turns: int = 0
    arm_energy: float = 0
    hold: float = 0
    overload: float = 0
    overload_damage: tuple[tuple[int, ...], ...] = ()
    overload_range: int = 0

    def bracket_of(self, distance: int) -> int | None:
        """The index of the bracket holding `distance`, or None."""
        for index, (low, high) in enumerate(self.brackets):
            if low <= distance <= high:
                return index
        return None

    def damage_at(self, distance: int, roll: int, overload: bool = False) -> int:
        """The damage of one shot at `distance` with die `roll` (1..6): damage[bracket][roll - 1] (the overload
        rows for an overloaded shot)."""
        bracket = self.bracket_of(distance)
        if bracket is None or not 1 <= roll <= DIE_SIDES:
            raise ValueError(f"{self.name}: no damage for range {distance} and roll {roll}")
        return (self.overload_damage if overload else self.damage)[bracket][roll - 1]


@dataclass(frozen=True)
class Mount:
    """One weapon on a unit: its id (ph1), its type's name and its arcs as relative directions (0 = front)."""

    id: str
    type: str
    arcs: frozenset[int]
    armed: bool = False  # a weapon that arms over turns starts the battle armed

    @property
    def arc_letters(self) -> str:
        """The arcs as facing letters in order, e.g. "A, B, F"."""
        return ", ".join(hexmap.format_facing(k) for k in sorted(self.arcs))


@dataclass(frozen=True)
class Seeker:
    """What makes a unit a seeking weapon in flight: its type, who launched it with which weapon, and when."""

    type: str
    launcher: str
    weapon: str
    warhead: int
    launched_at: Point


def _whole(value: Any, where: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{where} must be a whole number {low}..{high}, got {value!r}")
    return value


def _energy(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1000:
        raise ValueError(f"{where} must be a number 0..1000, got {value!r}")
    return value


def weapon_types(raw: Any) -> dict[str, WeaponType]:
    """setup.weapons checked into WeaponType by name; ValueError naming the bad field."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError("setup.weapons must map weapon type names to their tables")
    return {str(name): _weapon_type(str(name), table) for name, table in raw.items()}


def _weapon_type(name: str, raw: Any) -> WeaponType:
    where = f"setup.weapons.{name}"
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be a mapping")
    heavy, seeking = raw.get("heavy", False), raw.get("seeking", False)
    if not isinstance(heavy, bool) or not isinstance(seeking, bool):
        raise ValueError(f"{where}: heavy and seeking must be true or false")
    energy = _energy(raw.get("energy", 0), f"{where}.energy")
    if seeking:
        return _use(raw, where, WeaponType(
            name, heavy, True, energy=energy,
            speed=_whole(raw.get("speed", SEEKING_SPEED), f"{where}.speed", 1, MAX_SEEKING_SPEED),
            turn_mode=_whole(raw.get("turn_mode", SEEKING_TURN_MODE), f"{where}.turn_mode", 0, 999),
            warhead=_whole(raw.get("warhead"), f"{where}.warhead", 0, 1000),
        ))
    brackets, damage = raw.get("brackets"), raw.get("damage")
    if not isinstance(brackets, (list, tuple)) or not brackets:
        raise ValueError(f"{where}.brackets must be a list of ranges [from, to]")
    if not isinstance(damage, (list, tuple)) or len(damage) != len(brackets):
        raise ValueError(f"{where}.damage must have one row per bracket ({len(brackets)})")
    checked: list[tuple[int, int]] = []
    for index, bracket in enumerate(brackets):
        if not isinstance(bracket, (list, tuple)) or len(bracket) != 2:
            raise ValueError(f"{where}.brackets[{index}] must be [from, to]")
        low = _whole(bracket[0], f"{where}.brackets[{index}][0]", 0, MAX_RANGE)
        high = _whole(bracket[1], f"{where}.brackets[{index}][1]", low, MAX_RANGE)
        if checked and low <= checked[-1][1]:
            raise ValueError(f"{where}.brackets[{index}] starts at {low}, inside the bracket before it")
        checked.append((low, high))
    rows: list[tuple[int, ...]] = []
    for index, row in enumerate(damage):
        if not isinstance(row, (list, tuple)) or len(row) != DIE_SIDES:
            raise ValueError(f"{where}.damage[{index}] must list the damage for die rolls 1..{DIE_SIDES}")
        rows.append(tuple(_whole(v, f"{where}.damage[{index}]", 0, 1000) for v in row))
    max_range = _whole(raw.get("max_range", checked[-1][1]), f"{where}.max_range", 0, MAX_RANGE)
    return _use(raw, where, WeaponType(name, heavy, False, max_range, tuple(checked), tuple(rows), energy))


def _use(raw: Mapping[str, Any], where: str, kind: WeaponType) -> WeaponType:
    """`kind` with its frequency, arming and overload (all optional; absent: fires once a game turn)."""
    frequency = _whole(raw.get("frequency", 0), f"{where}.frequency", 0, 3200)
    arming = raw.get("arming") or {}
    if not isinstance(arming, Mapping):
        raise ValueError(f"{where}.arming must be {{turns, energy, hold, overload}}")
    turns = _whole(arming.get("turns", 0), f"{where}.arming.turns", 0, 100)
    extra = _energy(arming.get("overload", 0), f"{where}.arming.overload")
    rows: list[tuple[int, ...]] = []
    for index, row in enumerate(raw.get("overload_damage") or ()):
        if not isinstance(row, (list, tuple)) or len(row) != DIE_SIDES:
            raise ValueError(f"{where}.overload_damage[{index}] must list the damage for die rolls 1..{DIE_SIDES}")
        rows.append(tuple(_whole(v, f"{where}.overload_damage[{index}]", 0, 1000) for v in row))
    if rows and len(rows) != len(kind.brackets):
        raise ValueError(f"{where}.overload_damage must have one row per bracket ({len(kind.brackets)})")
    if bool(rows) != ("overload" in arming):
        raise ValueError(f"{where}: an overload needs both arming.overload (its energy) and overload_damage")
    reach = _whole(raw.get("overload_range", kind.max_range), f"{where}.overload_range", 0, kind.max_range)
    return evolve(kind, frequency=frequency, arm_turns=turns,
                   arm_energy=_energy(arming.get("energy", 0), f"{where}.arming.energy"),
                   hold=_energy(arming.get("hold", 0), f"{where}.arming.hold"), overload=extra,
                   overload_damage=tuple(rows), overload_range=reach)


def impulse_count(point: Point) -> int:
    """Impulses since the start of the battle: (turn − 1) × 32 + impulse, to measure frequency across turns."""
    return (point[0] - 1) * IMPULSES + point[1]


def why_not_ready(unit: Any, mount: Mount, kind: WeaponType, at: Point) -> tuple[str, str] | None:
    """(rule id, why) when `mount` of `unit` cannot fire or launch at `at` for how it is used (its frequency, or
    once a game turn; its arming over turns), else None. Judged on its public record of shots."""
    shots = [p for p, w in unit.fired if w == mount.id and p < at]
    last = max(shots) if shots else None
    if kind.frequency and last is not None and impulse_count(at) - impulse_count(last) < kind.frequency:
        again = impulse_count(last) + kind.frequency
        return FREQUENCY, (f"{mount.id} fired at {format_time(last)}; it fires once every {kind.frequency} "
                           f"impulses: again from impulse {(again - 1) % IMPULSES + 1} of turn "
                           f"{(again - 1) // IMPULSES + 1}")
    if not kind.frequency and last is not None and last[0] == at[0]:
        return "", f"{mount.id} already fired at {format_time(last)} this turn"
    if kind.arm_turns:
        ready = last[0] + kind.arm_turns if last is not None else (1 if mount.armed else kind.arm_turns)
        if at[0] < ready:
            since = f"fired in turn {last[0]}" if last is not None else "unarmed at the start"
            return NOT_ARMED, (f"{mount.id} arms over {kind.arm_turns} turns: {since}, it is armed from turn "
                               f"{ready}")
    return None


def mounts(raw: Any, types: Mapping[str, WeaponType], where: str) -> tuple[Mount, ...]:
    """A unit's `weapons` list checked into Mounts; ValueError naming the bad entry."""
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)):
        raise ValueError(f"{where}.weapons must be a list")
    found: list[Mount] = []
    for index, item in enumerate(raw):
        here = f"{where}.weapons[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str) or not item["id"]:
            raise ValueError(f"{here} must be {{id, type, arcs}}")
        if item.get("type") not in types:
            known = ", ".join(sorted(types)) or "none"
            raise ValueError(f"{here} ({item['id']}): weapon type {item.get('type')!r} is not in setup.weapons "
                             f"({known})")
        if any(m.id == item["id"] for m in found):
            raise ValueError(f"{here}: weapon id {item['id']!r} is used twice on this unit")
        arcs = item.get("arcs")
        if not isinstance(arcs, (list, tuple)) or not arcs:
            raise ValueError(f"{here} ({item['id']}): arcs must be a list of facings such as [F, A, B]")
        try:
            relative = frozenset(hexmap.parse_facing(a) for a in arcs)
        except ValueError as err:
            raise ValueError(f"{here} ({item['id']}): {err}") from None
        found.append(Mount(item["id"], item["type"], relative, item.get("armed") is True))
    return tuple(found)
