"""The energy allocation audit of `tactical/1` (DESIGN §6, §7.1; seed 000 §2.C): a player's sealed allocation
for a turn (secret kind `allocation`, schema pbem/secret/allocation/1), checked once revealed against what his
units did in that turn.

The allocation: {turn: T, units: {UNIT: {speed, het, weapons, systems, reserve}}}.
* `speed` is a speed, not energy: the highest speed the unit may use in the turn; it costs
  speed × costs.speed_point (default 1).
* `het`, `weapons`, `systems` and `reserve` are energy (default 0): for high energy turns (costs.het each), for
  shots and launches (the weapon type's `energy` each), for system uses (costs.<system> each `use`; cease and
  announce are free), and energy kept back.
* The whole allocation of a unit may not exceed its `power`.
* Every line must pay for what the unit did: the highest speed it used in the turn (its speed after the
  turn's allocation step and every mid-turn change), its HETs, its shots and launches, its system uses. What a
  line lacks may be paid from the reserve (SFB reserve power): the allocation fails only when the lines' total
  shortfall exceeds the reserve, and then each short line is named.
* A unit without an allocation is audited as if it allocated nothing (so only a unit that did something costly
  fails); a unit in the allocation that is not the player's is an error; seeking weapons in flight need none.

`turn_record(state, player, turn)` takes what the audit needs from any state at or after the end of that turn
(units keep their history: speeds, HETs, shots, system uses); `audit_allocation(setup, record, allocation)`
returns the reasons, empty when the allocation pays for everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pbem.rulesets.base import Point
from pbem.rulesets.tactical.gametime import ACTIVITY, ALLOC, format_time
from pbem.rulesets.tactical.state import TacticalState, Unit

LINES = ("speed", "het", "weapons", "systems", "reserve")
KIND = "allocation"  # the secret kind (schemas/secret-allocation.json)


@dataclass(frozen=True)
class UnitTurn:
    """What one unit did in one turn that costs energy."""

    unit: str
    speeds: tuple[int, ...]       # the speed after the allocation step, then every mid-turn change, in order
    hets: int
    fired: tuple[str, ...]        # weapon ids fired or launched, in order
    systems: tuple[str, ...]      # systems used ({use: X}), in order


@dataclass(frozen=True)
class TurnRecord:
    """The public record of one player's units in one turn, for the audit of his allocation."""

    turn: int
    player: str
    units: tuple[UnitTurn, ...]


def _speed_at_start(unit: Unit, turn: int) -> int:
    speed = unit.setup_speed
    for point, value in unit.speeds:
        if point <= (turn, 0, ALLOC):
            speed = value
    return speed


def _in_play(unit: Unit, turn: int) -> bool:
    return unit.left_at is None or unit.left_at[0] >= turn


def turn_record(state: TacticalState, player: str, turn: int) -> TurnRecord:
    """The record of `player`'s units (seeking weapons excepted) in play during `turn`, from a state at or after
    its end."""
    units = []
    for unit in state.units:
        if unit.owner != player or unit.seeking is not None or not _in_play(unit, turn):
            continue
        changes = tuple(v for p, v in unit.speeds if p[0] == turn and p[2] == ACTIVITY)
        units.append(UnitTurn(
            unit=unit.id,
            speeds=(_speed_at_start(unit, turn), *changes),
            hets=sum(1 for p in unit.hets if p[0] == turn),
            fired=tuple(w for p, w in unit.fired if p[0] == turn),
            systems=tuple(name for p, verb, name in unit.used if p[0] == turn and verb == "use"),
        ))
    return TurnRecord(turn, player, tuple(units))


def step_error(step: Point, allocation: Any) -> str | None:
    """Why a revealed allocation sealed for allocation step `step` is not that turn's, or None. The audit is bound
    to the step the secret answers, never to the `turn` written inside: one that says `turn: 999` would
    otherwise be audited against a turn where nothing happened, and the real turn never."""
    turn = allocation.get("turn") if isinstance(allocation, Mapping) else None
    if turn != step[0]:
        return (f"the allocation says turn {turn}, but it was sealed for {format_time(step)}, the allocation step "
                f"of turn {step[0]}")
    return None


def _number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _setup_units(setup: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {u["id"]: u for u in setup.get("units") or () if isinstance(u, Mapping) and "id" in u}


def _weapon_energy(setup: Mapping[str, Any], unit: Mapping[str, Any], weapon: str) -> float:
    mount = next((m for m in unit.get("weapons") or () if m.get("id") == weapon), {})
    return _number(((setup.get("weapons") or {}).get(mount.get("type")) or {}).get("energy", 0))


def audit_allocation(setup: Mapping[str, Any], record: TurnRecord, allocation: Mapping[str, Any]) -> list[str]:
    """Every way `allocation` (a revealed pbem/secret/allocation/1) fails to pay for `record`; [] when it pays."""
    reasons: list[str] = []
    if allocation.get("turn") != record.turn:
        reasons.append(f"the allocation is for turn {allocation.get('turn')}, not turn {record.turn}")
    where = f"turn {record.turn}"
    allocated: Mapping[str, Mapping[str, Any]] = allocation.get("units") or {}
    done = {u.unit: u for u in record.units}
    for unit_id in allocated:
        if unit_id not in done:
            reasons.append(f"{where}, {unit_id}: not a unit of {record.player} in play in this turn")
    costs = setup.get("costs") or {}
    speed_point, het_cost = _number(costs.get("speed_point", 1)), _number(costs.get("het", 0))
    table = _setup_units(setup)
    for unit_turn in record.units:
        lines = {k: _number((allocated.get(unit_turn.unit) or {}).get(k, 0)) for k in LINES}
        reasons.extend(_audit_unit(f"{where}, {unit_turn.unit}", unit_turn, lines, table.get(unit_turn.unit, {}),
                                   setup, speed_point, het_cost))
    return reasons


def _audit_unit(where: str, done: UnitTurn, lines: Mapping[str, float], unit: Mapping[str, Any],
                setup: Mapping[str, Any], speed_point: float, het_cost: float) -> list[str]:
    reasons: list[str] = []
    total = lines["speed"] * speed_point + sum(lines[k] for k in LINES if k != "speed")
    power = unit.get("power")
    if isinstance(power, (int, float)) and total > power:
        reasons.append(f"{where}: allocates {_show(total)} energy, its power is {_show(power)}")
    top = max(done.speeds)
    weapons = sum(_weapon_energy(setup, unit, w) for w in done.fired)
    systems = sum(_number(setup.get("costs", {}).get(name, 0)) for name in done.systems)
    needs: list[tuple[float, str]] = [
        ((top - lines["speed"]) * speed_point,
         f"speed {top} used ({', '.join(map(str, done.speeds))}), speed {_show(lines['speed'])} allocated"),
        (done.hets * het_cost - lines["het"],
         f"{done.hets} HET cost {_show(done.hets * het_cost)}, {_show(lines['het'])} allocated"),
        (weapons - lines["weapons"],
         f"weapons used ({', '.join(done.fired)}) cost {_show(weapons)}, {_show(lines['weapons'])} allocated"),
        (systems - lines["systems"],
         f"systems used ({', '.join(done.systems)}) cost {_show(systems)}, {_show(lines['systems'])} allocated"),
    ]
    short = [(amount, text) for amount, text in needs if amount > 0]
    missing = sum(amount for amount, _ in short)
    if missing > lines["reserve"]:
        reasons.extend(f"{where}: {text} ({_show(amount)} short)" for amount, text in short)
        if lines["reserve"] > 0:
            reasons.append(f"{where}: reserve {_show(lines['reserve'])} covers only part of the {_show(missing)} "
                           "short")
    return reasons

