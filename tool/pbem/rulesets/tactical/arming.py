"""What a weapon that arms over turns needed in each turn (docs/tactical.md "Energy allocation in full"), from its
public record of shots, for the allocation audit of that turn (seed 000 §2.C: the allocations are opened and
checked at the end of the battle, when every shot is known).

A weapon type with `arming: {turns: K, energy: E, hold: H, overload: O}` is named in the allocation's `arming`
line with a mode for each turn it is armed or kept: `arm` (E), `hold` (H) or `overload` (E + O). The audit of a
turn asks:
* in the turn it fires: a mode (`overload` for an overloaded shot);
* in the K − 1 turns before a shot (its arming can have ended no later than the shot): a mode;
* a weapon armed at the start (`armed: true`), in every turn before its first shot: a mode.
Each turn's audit takes a weapon held in the turns before a shot to have been armed before them; that it was, and
that a weapon only ever held was never armed, the audit of the whole battle judges (audit_battle.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.rulesets.tactical.state import TacticalState, Unit

FIRES, OVERLOAD, ARMING, HELD = "fires", "fires overloaded", "arming", "held armed since the start"
MODES = ("arm", "hold", "overload")


def needs(state: TacticalState, unit: Unit, turn: int) -> tuple[tuple[str, str], ...]:
    """(weapon id, what it did) for each arming weapon of `unit` that needed a mode in `turn`."""
    out: list[tuple[str, str]] = []
    for mount in unit.weapons:
        kind = state.weapon_type(mount)
        if not kind.arm_turns:
            continue
        shots = sorted(p for p, w in unit.fired if w == mount.id)
        overloaded = {p for p, w in unit.overloads if w == mount.id}
        firing = [p for p in shots if p[0] == turn]
        later = [p[0] for p in shots if p[0] > turn]
        if firing:
            out.append((mount.id, OVERLOAD if any(p in overloaded for p in firing) else FIRES))
        elif later and later[0] - kind.arm_turns < turn:
            out.append((mount.id, ARMING))
        elif mount.armed and (not shots or turn < shots[0][0]) and later:
            out.append((mount.id, HELD))
    return tuple(out)


def mode_cost(setup: Mapping[str, Any], unit: Mapping[str, Any], weapon: str, mode: Any) -> float | None:
    """The energy of `mode` for `weapon` of a setup unit, or None when the weapon does not arm or the mode is
    none of arm, hold, overload."""
    mount = next((m for m in unit.get("weapons") or () if isinstance(m, Mapping) and m.get("id") == weapon), None)
    table = ((setup.get("weapons") or {}).get(mount.get("type")) or {}) if mount is not None else {}
    arming = table.get("arming")
    if not isinstance(arming, Mapping) or mode not in MODES:
        return None
    energy, hold, extra = (float(arming.get(k, 0)) for k in ("energy", "hold", "overload"))
    return {"arm": energy, "hold": hold, "overload": energy + extra}[mode]


def line_cost(setup: Mapping[str, Any], unit: Mapping[str, Any], line: Any) -> float:
    """The energy of an allocation's `arming` line ({WEAPON: MODE}); what names no arming weapon costs 0 (the
    audit names it)."""
    if not isinstance(line, Mapping):
        return 0
    return sum(mode_cost(setup, unit, str(w), m) or 0 for w, m in line.items())


def audit(setup: Mapping[str, Any], unit: Mapping[str, Any], where: str, done: tuple[tuple[str, str], ...],
          line: Any) -> list[str]:
    """Every arming need of a turn its allocation's `arming` line does not meet, and every entry of it that
    names no arming weapon of the unit or no mode."""
    modes = line if isinstance(line, Mapping) else {}
    reasons = [f"{where}: arming {weapon}: {mode!r} is no mode of an arming weapon of the unit (arm, hold, "
               "overload)" for weapon, mode in modes.items() if mode_cost(setup, unit, str(weapon), mode) is None]
    for weapon, what in done:
        mode = modes.get(weapon)
        if mode is None:
            reasons.append(f"{where}: {weapon} {what} this turn, but the allocation does not arm or hold it")
        elif what == OVERLOAD and mode != "overload":
            reasons.append(f"{where}: {weapon} fires overloaded this turn, but the allocation gives it {mode}, "
                           "not overload")
    return reasons
