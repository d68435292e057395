"""The energy audit of a whole battle (seed 000 §2.C: "each turn's Energy Allocation … retrieved and verified at
the conclusion of the battle"; docs/tactical.md "The whole battle"): one player's allocations, opened at the end,
read together turn after turn, for what no single turn's audit (energy.py) can see.

* Arming (arming.py). A weapon type with `arming: {turns: K}` is armed once its allocations gave it `arm` (or
  `overload`) in K turns in a row, or from the start with `armed: true`. A turn without a mode for it interrupts
  its arming (it starts over) or discharges it when armed; a shot discharges it, and so does losing its last box
  (damage.py; repaired, it arms again from nothing). So `hold` in a turn the weapon is
  not armed at its start is `rules.held-unarmed`, and a shot in a turn it is not armed by (after that turn's mode)
  is `rules.not-armed`. A shot in a turn whose allocation gives no mode is the turn's own audit's finding.
* Batteries. A unit's charge starts at its setup `battery_charge` (default 0, at most `batteries`). Each turn it
  draws `from_batteries` (energy beyond power: energy.over_power) and puts in `batteries` (paid from power); what
  the charge put in this turn pays of the lines' shortfall beyond the reserve is spent (energy.battery_spent); the
  rest is carried into the next turn. Drawing more than was carried in is `rules.battery-overdrawn`, putting in
  more than the batteries have room for `rules.battery-overcharged`.

A turn whose allocation is not known (not opened yet, withheld, never sealed) leaves what follows unknown: nothing
is judged that depends on it, so the audit can run on any subset of a player's allocations and only ever find
more as more are opened (the verifier reports what a reveal adds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.rulesets.base import SetupError
from pbem.rulesets.tactical import energy

HELD_UNARMED, NOT_ARMED = "rules.held-unarmed", "rules.not-armed"
OVERDRAWN, OVERCHARGED = "rules.battery-overdrawn", "rules.battery-overcharged"
START_CHARGE, BAD_CHARGE = "battery_charge", "schema.battery-charge"


@dataclass(frozen=True)
class Fault:
    """One allocation at fault: the turn whose allocation it is, the rule id, the reason."""

    turn: int
    rule: str
    reason: str


def check_setup(setup: Mapping[str, Any]) -> None:
    """SetupError (schema.battery-charge) for a unit starting with more charge than its batteries hold."""
    for index, unit in enumerate(setup.get("units") or ()):
        if not isinstance(unit, Mapping) or START_CHARGE not in unit:
            continue
        charge, capacity = _number(unit[START_CHARGE]), _number(unit.get("batteries", 0))
        if charge > capacity:
            raise SetupError(f"units[{index}] ({unit.get('id')}): battery_charge {_show(charge)} is more than its "
                             f"batteries hold ({_show(capacity)})", BAD_CHARGE, ("units", index, START_CHARGE))


def audit_battle(setup: Mapping[str, Any], records: Sequence[energy.TurnRecord],
                 allocations: Mapping[int, Mapping[str, Any]]) -> list[Fault]:
    """Every fault of one player's allocations read across the battle: `records` his turn records in turn order
    (energy.turn_record), `allocations` the opened ones by turn (a turn missing is unknown)."""
    faults: list[Fault] = []
    units = {str(u["id"]): u for u in setup.get("units") or () if isinstance(u, Mapping) and "id" in u}
    for unit_id in sorted({u.unit for record in records for u in record.units}):
        unit = units.get(unit_id, {})
        faults += _arming(setup, unit_id, unit, records, allocations)
        faults += _batteries(setup, unit_id, unit, records, allocations)
    return sorted(faults, key=lambda f: f.turn)


def _line(allocations: Mapping[int, Mapping[str, Any]], turn: int, unit: str) -> Mapping[str, Any] | None:
    """The unit's line in the turn's allocation ({} when it allocates the unit nothing); None when unknown."""
    allocation = allocations.get(turn)
    if allocation is None:
        return None
    line = (allocation.get("units") or {}).get(unit)
    return line if isinstance(line, Mapping) else {}


def _arming_turns(setup: Mapping[str, Any], mount: Mapping[str, Any]) -> int:
    arming = ((setup.get("weapons") or {}).get(mount.get("type")) or {}).get("arming")
    turns = arming.get("turns") if isinstance(arming, Mapping) else None
    return turns if type(turns) is int and turns > 0 else 0


def _arming(setup: Mapping[str, Any], unit_id: str, unit: Mapping[str, Any], records: Sequence[energy.TurnRecord],
            allocations: Mapping[int, Mapping[str, Any]]) -> list[Fault]:
    faults: list[Fault] = []
    for mount in unit.get("weapons") or ():
        need = _arming_turns(setup, mount) if isinstance(mount, Mapping) else 0
        if not need:
            continue
        weapon = str(mount.get("id"))
        done: int | None = need if mount.get("armed") else 0  # arming turns in a row; None: unknown
        for record in records:
            turn = next((u for u in record.units if u.unit == unit_id), None)
            if turn is None:
                continue  # not in play this turn
            line = _line(allocations, record.turn, unit_id)
            fires = weapon in turn.fired
            mode = (line.get("arming") or {}).get(weapon) if line is not None else None
            where = f"turn {record.turn}, {unit_id}: {weapon}"
            if line is None:
                done = 0 if fires or weapon in turn.destroyed else None
                continue
            if mode == "hold":
                if done is not None and done < need:
                    faults.append(Fault(record.turn, HELD_UNARMED, f"{where} held, but it is not armed at the "
                                        f"start of the turn ({_armed_for(done, need)})"))
            elif mode in ("arm", "overload"):
                done = None if done is None else min(need, done + 1)
            else:
                done = 0  # no mode: its arming starts over, or an armed weapon is discharged
                continue  # a shot without a mode is the turn's own finding (energy.py, arming.audit)
            if fires:
                if done is not None and done < need:
                    faults.append(Fault(record.turn, NOT_ARMED, f"{where} fires, but its allocations armed it in "
                                        f"only {done} of the {need} turns in a row it needs"))
                done = 0
            if weapon in turn.destroyed:
                done = 0  # destroyed: what it was armed with is lost, repaired or not
    return faults


def _armed_for(done: int, need: int) -> str:
    if done == 0:
        return f"never armed since the start or its last shot; it arms over {need} turns"
    return f"armed in {done} of the {need} turns it needs"


def _batteries(setup: Mapping[str, Any], unit_id: str, unit: Mapping[str, Any], records: Sequence[energy.TurnRecord],
               allocations: Mapping[int, Mapping[str, Any]]) -> list[Fault]:
    faults: list[Fault] = []
    capacity = _number(unit.get("batteries", 0))
    stored: float | None = min(_number(unit.get(START_CHARGE, 0)), capacity)
    for record in records:
        turn = next((u for u in record.units if u.unit == unit_id), None)
        if turn is None:
            continue
        line = _line(allocations, record.turn, unit_id)
        if line is None or stored is None:
            stored = None
            continue
        drawn, charged = _number(line.get(energy.DRAW, 0)), _number(line.get("batteries", 0))
        where = f"turn {record.turn}, {unit_id}"
        if capacity >= drawn > stored:  # above capacity: the turn's own finding (energy.battery_errors)
            faults.append(Fault(record.turn, OVERDRAWN, f"{where}: draws {_show(drawn)} from its batteries, which "
                                f"carried {_show(stored)} into the turn"))
        left = max(0.0, stored - drawn)
        if capacity >= charged and left + charged > capacity:
            faults.append(Fault(record.turn, OVERCHARGED, f"{where}: puts {_show(charged)} into its batteries, "
                                f"which hold {_show(left)} of {_show(capacity)} (room for {_show(capacity - left)})"))
        stored = min(capacity, left + min(charged, capacity) - energy.battery_spent(setup, turn, line))
    return faults


def _number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
