"""The energy allocation audit of `tactical/1` (DESIGN §6, §7.1; seed 000 §2.C): a player's sealed allocation
for a turn (secret kind `allocation`, schema pbem/secret/allocation/1), checked once revealed against what his
units did in that turn.

The allocation: {turn: T, units: {UNIT: {speed, het, weapons, systems, reserve, …}}}; the lines for arming,
batteries, life support, fire control, shields, general reinforcement and repair are docs/tactical.md "Energy
allocation in full" (`_more_needs`, arming.py, reinforce.py); a unit's power for a turn is its setup power less
the power boxes damage took before that turn (damage.py, `UnitTurn.power`).
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
* With `speeds: sealed` the allocation is also the turn's speed plot: its speeds alone (`speeds_part`) are
  opened at its step and used at once, the rest stays sealed until the end of the battle. What is wrong before
  the turn is played (a total above power, every line counted; a speed above max_speed) `plot_errors` names,
  and `pbem seal` refuses before sealing (`seal_errors`); a speed sealed by hand that its power cannot pay is
  void when opened (actions.sealed_speeds: the unit does not move), never a finding, and the whole line is
  audited when the box is opened at the end.
* `batteries` puts energy into the unit's batteries (paid from power; it pays the turn's shortfall as the reserve
  does), `from_batteries` draws on the charge they carried in (energy beyond power: `over_power`). Each line within
  the capacity is this module's; the charge carried from turn to turn is audit_battle.py's, with arming across
  turns.
* A unit without an allocation is audited as if it allocated nothing (so only a unit that did something costly
  fails); a unit in the allocation that is not the player's is an error; seeking weapons in flight need none.

`turn_record(state, player, turn)` takes what the audit needs from any state at or after the end of that turn
(units keep their history: speeds, HETs, shots, system uses); `audit_allocation(setup, record, allocation)`
returns the reasons, empty when the allocation pays for everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Point
from pbem.rulesets.tactical import arming, damage
from pbem.rulesets.tactical.gametime import ACTIVITY, ALLOC, format_time
from pbem.rulesets.tactical.state import MAX_SPEED, TacticalState, Unit

LINES = ("speed", "het", "weapons", "systems", "reserve")  # the lines this module audits
# every line that is energy: all count to power (`arming` too, by its modes: arming.line_cost)
ENERGY = ("het", "weapons", "systems", "reinforce", "reserve", "life_support", "fire_control", "shields",
          "general_reinforcement", "repair", "batteries")
NEEDS = ("life_support", "fire_control", "shields", "general_reinforcement", "repair", "batteries")
DRAW = "from_batteries"  # energy drawn from the charge the batteries carried in: more than power, not part of it
KIND = "allocation"  # the secret kind (schemas/secret-allocation.json)


@dataclass(frozen=True)
class UnitTurn:
    """What one unit did in one turn that costs energy."""

    unit: str
    speeds: tuple[int, ...]       # the speed after the allocation step, then every mid-turn change, in order
    hets: int
    fired: tuple[str, ...]        # weapon ids fired or launched, in order
    systems: tuple[str, ...]      # systems used ({use: X}), in order
    power: float | None = None    # its power in the turn when damage lowered it (damage.py), else None
    arming: tuple[tuple[str, str], ...] = ()  # (weapon, what it did) for arming weapons (arming.py)
    repairs: int = 0              # boxes repaired (damage.py)
    destroyed: tuple[str, ...] = ()  # weapons whose last box was lost in the turn (their arming with them)


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


def _unit_turn(state: TacticalState, unit: Unit, turn: int) -> UnitTurn:
    changes = tuple(v for p, v in unit.speeds if p[0] == turn and p[2] == ACTIVITY)
    power = damage.power_in_turn(unit, turn)
    return UnitTurn(
        unit=unit.id,
        speeds=(_speed_at_start(unit, turn), *changes),
        hets=sum(1 for p in unit.hets if p[0] == turn),
        fired=tuple(w for p, w in unit.fired if p[0] == turn),
        systems=tuple(name for p, verb, name in unit.used if p[0] == turn and verb == "use"),
        power=power if power != damage.power_of(evolve(unit, lost=())) else None,
        arming=arming.needs(state, unit, turn),
        repairs=damage.repaired_in(unit, turn),
        destroyed=_destroyed_in(unit, turn),
    )


def _destroyed_in(unit: Unit, turn: int) -> tuple[str, ...]:
    """The weapons of `unit` that lost their last box in `turn` (damage.py): SFB's destroyed weapon loses the
    energy it was armed with, so the whole battle's audit (audit_battle.py) counts it unarmed from then."""
    out: list[str] = []
    boxes = dict(unit.boxes)
    for mount in unit.weapons:
        left = boxes.get(mount.id, 0)
        for point, name, change in unit.lost if mount.id in boxes else ():
            left -= change if name == mount.id else 0
            if name == mount.id and left <= 0 and point[0] == turn:
                out.append(mount.id)
                break
    return tuple(out)


def turn_record(state: TacticalState, player: str, turn: int) -> TurnRecord:
    """The record of `player`'s units (seeking weapons excepted) in play during `turn`, from a state at or after
    its end."""
    units = [_unit_turn(state, unit, turn) for unit in state.units
             if unit.owner == player and unit.seeking is None and _in_play(unit, turn)]
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
    mount: Mapping[str, Any] = next((m for m in unit.get("weapons") or () if m.get("id") == weapon), {})
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
        line = allocated.get(unit_turn.unit) or {}
        unit = table.get(unit_turn.unit, {})
        power = unit_turn.power if unit_turn.power is not None else unit.get("power")
        excess = over_power(line, power, speed_point, arming.line_cost(setup, unit, line.get("arming")))
        if excess:
            lowered = " (less the power boxes it lost)" if unit_turn.power is not None else ""
            reasons.append(f"{where}, {unit_turn.unit}: {excess}{lowered}")
        lines = {k: _number(line.get(k, 0)) for k in (*LINES, *NEEDS, DRAW)}
        reasons.extend(_audit_unit(f"{where}, {unit_turn.unit}", unit_turn, lines, unit, setup, speed_point,
                                   het_cost))
        reasons.extend(arming.audit(setup, unit, f"{where}, {unit_turn.unit}", unit_turn.arming,
                                    line.get("arming")))
    return reasons


def plot_errors(setup: Mapping[str, Any], allocation: Mapping[str, Any]) -> list[str]:
    """What is wrong with an allocation before anything is done with it: a unit allocating more than its power
    (every line counted), or (with `speeds: sealed`) a speed above max_speed (seed §2.C): what `seal_errors`
    refuses before sealing."""
    reasons: list[str] = []
    turn = allocation.get("turn")
    costs = setup.get("costs") or {}
    speed_point = _number(costs.get("speed_point", 1))
    table = _setup_units(setup)
    top = setup.get("max_speed", MAX_SPEED)
    for unit_id, line in (allocation.get("units") or {}).items():
        if not isinstance(line, Mapping):
            continue
        lines = {k: _number(line.get(k, 0)) for k in LINES}
        total = total_energy(line, speed_point, arming.line_cost(setup, table.get(unit_id) or {}, line.get("arming")))
        if setup.get("speeds") == "sealed" and lines["speed"] > top:
            reasons.append(f"turn {turn}, {unit_id}: speed {_show(lines['speed'])} allocated, above max_speed {top} "
                           "(the unit does not move)")
        power = (table.get(unit_id) or {}).get("power")
        drawn = _number(line.get(DRAW, 0))
        if isinstance(power, (int, float)) and total > power + drawn:
            more = f" and {_show(drawn)} drawn from its batteries" if drawn else ""
            reasons.append(f"turn {turn}, {unit_id}: allocates {_show(total)} energy (speed {_show(lines['speed'])}"
                           f" × {_show(speed_point)} and {_show(total - lines['speed'] * speed_point)} more), its "
                           f"power is {_show(power)}{more}")
        reasons.extend(f"turn {turn}, {unit_id}: {reason}"
                       for reason in battery_errors(line, _number((table.get(unit_id) or {}).get("batteries", 0))))
    return reasons


def total_energy(line: Mapping[str, Any], speed_point: float, arming_energy: float = 0) -> float:
    """What one unit's allocation line spends of its power: its speed × costs.speed_point and every energy
    line, `reinforce` included (every line counted: one point over power anywhere is over power), and what its
    `arming` modes cost (`arming_energy`: arming.line_cost)."""
    return (_number(line.get("speed", 0)) * speed_point + sum(_number(line.get(k, 0)) for k in ENERGY)
            + arming_energy)


def over_power(line: Mapping[str, Any], power: Any, speed_point: float, arming_energy: float = 0) -> str | None:
    """Why one unit's revealed line spends more than its power and what it draws from its batteries (every line
    counted), or None."""
    total, drawn = total_energy(line, speed_point, arming_energy), _number(line.get(DRAW, 0))
    if isinstance(power, (int, float)) and not isinstance(power, bool) and total > power + drawn:
        more = f" and {_show(drawn)} drawn from its batteries" if drawn else ""
        return f"allocates {_show(total)} energy, its power is {_show(power)}{more}"
    return None


def battery_errors(line: Mapping[str, Any], capacity: float) -> list[str]:
    """What one unit's line puts into or draws from its batteries beyond their capacity (the charge carried
    between turns is audited over the whole battle: audit_battle.py)."""
    return [f"{name} {_show(_number(line.get(key, 0)))} allocated, its batteries hold {_show(capacity)}"
            for key, name in (("batteries", "batteries"), (DRAW, "from_batteries"))
            if _number(line.get(key, 0)) > capacity]


def seal_errors(setup: Mapping[str, Any], player: str, allocation: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(unit, reason) for everything wrong with `player`'s allocation that he can know when he seals it: a unit
    that is not his, a total over its power (every line counted), a speed above max_speed with sealed speeds.
    `pbem seal allocation` refuses it before anything is sealed (seed §2.C: the cheat is found only at the
    reveal otherwise, when it can no longer be taken back)."""
    table = _setup_units(setup)
    out = [(u, f"{u} is not a unit of {player}") for u in allocation.get("units") or {}
           if (table.get(u) or {}).get("owner") != player]
    for reason in plot_errors(setup, allocation):
        unit = reason.split(", ", 1)[1].split(":", 1)[0] if ", " in reason else ""
        out.append((unit, reason))
    return out


def _shortfalls(done: UnitTurn, lines: Mapping[str, float], unit: Mapping[str, Any], setup: Mapping[str, Any],
                speed_point: float, het_cost: float) -> list[tuple[float, str]]:
    """(amount, what) for each line that falls short of what the unit did in the turn."""
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
        *_more_needs(done, lines, unit, setup),
    ]
    return [(amount, text) for amount, text in needs if amount > 0]


def battery_spent(setup: Mapping[str, Any], done: UnitTurn, line: Mapping[str, Any]) -> float:
    """What of the charge a unit's line put into its batteries this turn paid for its lines' shortfall beyond
    the reserve (the rest stays in the batteries, carried into the next turn: audit_battle.py)."""
    unit = _setup_units(setup).get(done.unit, {})
    costs = setup.get("costs") or {}
    lines = {k: _number(line.get(k, 0)) for k in (*LINES, *NEEDS)}
    short = _shortfalls(done, lines, unit, setup, _number(costs.get("speed_point", 1)), _number(costs.get("het", 0)))
    charged = min(lines["batteries"], _number(unit.get("batteries", 0)))
    return min(charged, max(0.0, sum(a for a, _ in short) - lines["reserve"]))


def _audit_unit(where: str, done: UnitTurn, lines: Mapping[str, float], unit: Mapping[str, Any],
                setup: Mapping[str, Any], speed_point: float, het_cost: float) -> list[str]:
    capacity = _number(unit.get("batteries", 0))
    reasons = [f"{where}: {reason}" for reason in battery_errors(lines, capacity)]
    short = _shortfalls(done, lines, unit, setup, speed_point, het_cost)
    missing = sum(amount for amount, _ in short)
    # what is put into the batteries this turn pays a shortfall as the reserve does; what they carried in from
    # earlier turns pays only as the allocation draws it (`from_batteries`: more energy, counted in over_power)
    pool = lines["reserve"] + min(lines["batteries"], capacity)
    if missing > pool:
        reasons.extend(f"{where}: {text} ({_show(amount)} short)" for amount, text in short)
        if pool > 0:
            paid = f"reserve {_show(pool)} covers" if pool == lines["reserve"] else \
                f"reserve and batteries {_show(pool)} cover"
            reasons.append(f"{where}: {paid} only part of the {_show(missing)} short")
    return reasons


def _more_needs(done: UnitTurn, lines: Mapping[str, float], unit: Mapping[str, Any],
                setup: Mapping[str, Any]) -> list[tuple[float, str]]:
    """The lines every turn owes when setup.costs prices them (life support, shields up, fire control in a turn
    the unit fires or launches) and the repairs it made (damage_allocation.repair.energy each)."""
    costs = setup.get("costs") or {}
    table = damage.table_of(setup)
    owed = {
        "life_support": _number(costs.get("life_support", 0)),
        "shields": _number(costs.get("shields", 0)) if unit.get("shields") else 0,
        "fire_control": _number(costs.get("fire_control", 0)) if done.fired else 0,
        "repair": done.repairs * (table.repair_energy if table is not None else 0),
    }
    return [(amount - lines[name], f"{name.replace('_', ' ')} costs {_show(amount)}, {_show(lines[name])} "
             "allocated") for name, amount in owed.items() if amount]



def speeds_part(allocation: Any) -> dict[str, Any] | None:
    """The part of an allocation opened at its step when speeds are sealed (seed §2.C: the speed plot, announced
    by all at once): `{units: {UNIT: {speed: N}}}` for each line that gives a speed; None for anything that is
    not an allocation."""
    if not isinstance(allocation, Mapping) or not isinstance(allocation.get("units") or {}, Mapping):
        return None
    return {"units": {unit: {"speed": line["speed"]} for unit, line in (allocation.get("units") or {}).items()
                      if isinstance(line, Mapping) and "speed" in line}}
