"""Shield reinforcement of `tactical/1` (seed 000 §6.C.2: shield damage "is normally the point at which shield
reinforcement is performed"; docs/tactical.md "Damage known, then scored").

`{reinforce: {shield: N, points: K}}` at a `fire` step, by the owner of a unit with shields: K points (a whole
number ≥ 1) stand in front of shield #N for that step. Each hit on that shield in the step is first taken by what
is left of the reinforcement, then by the shield, then by internals. Reinforcement is spent whether or not a hit
comes (energy allocated is energy used), and it lasts the one step.

Energy: with sealed allocations, the reinforcement a unit used in a turn is paid from its allocation's
`reinforce` line (energy, default 0), and the whole allocation with it stays within the unit's power; the audit at
the reveal names every excess (`rules.allocation`). In every game a unit may not reinforce more in one turn than
its `power` (a limit its owner can judge when he writes the entry: refused then as `rules.illegal-action`).

The usual moment is the damaged player's reply at a held fire step (docs/protocol.md: a `damage` condition met at
a simultaneous step gives a `reply` break at that same step, before the damage is scored).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pbem.rulesets.base import Point
from pbem.rulesets.tactical import damage, energy
from pbem.rulesets.tactical.state import SHIELDS, TacticalState, Unit

VERB = "reinforce"


GENERAL = "general"  # {reinforce: {general: N}}: N points before every shield, recorded as shield 0


def used_in(unit: Unit, turn: int) -> int:
    """The specific reinforcement points `unit` has spent in game turn `turn`."""
    return sum(points for point, shield, points in unit.reinforced if point[0] == turn and shield)


def general_in(unit: Unit, turn: int) -> int:
    """The general reinforcement points `unit` has spent in game turn `turn`."""
    return sum(points for point, shield, points in unit.reinforced if point[0] == turn and not shield)


def general_rate(tables: Mapping[str, Any]) -> float:
    """The energy of one point of general reinforcement: costs.general_reinforcement (default 2)."""
    return _number((tables.get("costs") or {}).get("general_reinforcement", 2)) or 0


def _why_not_general(state: TacticalState, unit: Unit, points: Any, at: Point) -> str | None:
    if type(points) is not int or points < 1:
        return f"general must be a whole number of at least 1, got {points!r}"
    if unit.seeking is not None or not unit.shields:
        return f"{unit.id} has no shields to reinforce"
    power = damage.power_in_turn(unit, at[0])
    rate = general_rate(state.tables)
    energy_used = used_in(unit, at[0]) + (general_in(unit, at[0]) + points) * rate
    if power is not None and energy_used > power:
        return (f"{unit.id} would spend {_show(energy_used)} energy on reinforcement in turn {at[0]} (general "
                f"points × {_show(rate)}), more than its power {power}")
    return None


def why_not(state: TacticalState, unit: Unit, value: Any, at: Point) -> str | None:
    """None if `unit` may reinforce as `value` ({shield, points}) at fire step `at`, else why not. Judged on what
    its owner alone knows (his unit, its shields, its power, what it spent before), so the same ahead and at
    replay."""
    if isinstance(value, Mapping) and set(value) == {GENERAL}:
        return _why_not_general(state, unit, value[GENERAL], at)
    if not isinstance(value, Mapping) or set(value) != {"shield", "points"}:
        return "reinforce takes {shield: 1..6, points: N}"
    shield, points = value["shield"], value["points"]
    if type(shield) is not int or not 1 <= shield <= SHIELDS:
        return f"shield must be a whole number 1..{SHIELDS}, got {shield!r}"
    if type(points) is not int or points < 1:
        return f"points must be a whole number of at least 1, got {points!r}"
    if unit.seeking is not None or not unit.shields:
        return f"{unit.id} has no shields to reinforce"
    power = damage.power_in_turn(unit, at[0])  # less its power boxes lost (damage.py)
    spent = used_in(unit, at[0]) + general_in(unit, at[0]) * general_rate(state.tables)
    if power is not None and spent + points > power:
        return (f"{unit.id} would reinforce {spent + points} points in turn {at[0]}, more than its power "
                f"{power}")
    return None


def absorb(left: dict[tuple[str, int], int], unit: str, shield: int, amount: int) -> tuple[int, int]:
    """(what the reinforcement of `unit`'s `shield` takes of `amount`, what gets through); spends `left`."""
    taken = min(left.get((unit, shield), 0), amount)
    if taken:
        left[(unit, shield)] -= taken
    return taken, amount - taken


@dataclass(frozen=True)
class TurnRecord(energy.TurnRecord):
    """The energy record of a turn with the reinforcement each unit spent in it (unit -> points)."""

    reinforced: tuple[tuple[str, int], ...] = ()
    general: tuple[tuple[str, int], ...] = ()  # unit -> general reinforcement points


def turn_record(state: TacticalState, player: str, turn: int) -> energy.TurnRecord:
    """energy.turn_record, with the reinforcement of `player`'s units in `turn` when they used any."""
    base = energy.turn_record(state, player, turn)
    mine = [u for u in state.units if u.owner == player and any(u.id == x.unit for x in base.units)]
    spent = tuple((u.id, used_in(u, turn)) for u in mine if used_in(u, turn))
    general = tuple((u.id, general_in(u, turn)) for u in mine if general_in(u, turn))
    return TurnRecord(base.turn, base.player, base.units, spent, general) if spent or general else base


def audit(setup: Mapping[str, Any], record: energy.TurnRecord, allocation: Mapping[str, Any]) -> list[str]:
    """The reinforcement of a turn against its allocation's `reinforce` lines (seed §6.C.2); the whole allocation,
    `reinforce` line included, against power is energy.audit_allocation's."""
    reasons: list[str] = []
    allocated: Mapping[str, Mapping[str, Any]] = allocation.get("units") or {}
    spent = dict(getattr(record, "reinforced", ()))
    for unit_id, points in sorted(spent.items()):
        line = _number((allocated.get(unit_id) or {}).get(VERB, 0))
        if points > line:
            reasons.append(f"turn {record.turn}, {unit_id}: shield reinforcement used {points}, {_show(line)} "
                           f"allocated ({_show(points - line)} short)")
    rate = general_rate(setup)
    for unit_id, points in sorted(dict(getattr(record, GENERAL, ())).items()):
        line = _number((allocated.get(unit_id) or {}).get("general_reinforcement", 0))
        if points * rate > line:
            reasons.append(f"turn {record.turn}, {unit_id}: general reinforcement used {points} points × "
                           f"{_show(rate)} = {_show(points * rate)}, {_show(line)} allocated "
                           f"({_show(points * rate - line)} short)")
    return reasons


def _number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
