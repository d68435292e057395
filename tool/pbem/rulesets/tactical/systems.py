"""Systems of `tactical/1` (DESIGN §7.1; seed 000 §6.C.5): `{use: SYSTEM, target?: UNIT}`, `{cease: SYSTEM}` and
`{announce: SYSTEM}` at an `activity` step, by a unit that has that system in setup (tractor, transporter, ESG,
cloak, probe, shuttle bay, …).

In this version they only emit a `system` event {kind: use|cease|announce, system, target?} for break conditions
and record the action in the unit's history (the energy audit charges `costs.<system>` for each `use`). Choice
where the design is silent: a target, when given, must be a unit on the map (any unit, own units included).
"""

from __future__ import annotations

from typing import Any, Mapping

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point, Refusal
from pbem.rulesets.tactical import damage
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.state import TacticalState, Unit

VERBS = ("use", "cease", "announce")


def why_not_system(state: TacticalState, unit: Unit, do: Mapping[str, Any], verb: str) -> str | None:
    """None if `unit` may take system action `do` (its `verb` is use, cease or announce), else why not."""
    name = do[verb]
    if not isinstance(name, str) or name not in unit.systems:
        has = ", ".join(unit.systems) or "none"
        return f"{unit.id} has no system {name!r} (it has {has})"
    if verb == "use" and damage.out_of_action(unit, name):
        return Refusal(f"{name} is destroyed (no box of it left)", damage.OUT_OF_ACTION)
    if "target" in do:
        target = state.unit(do["target"]) if isinstance(do["target"], str) else None
        if target is None:
            return f"there is no unit {do['target']!r}"
        if not target.active:
            return f"{target.id} is not on the map ({target.why_gone})"
    return None


def act(unit: Unit, do: Mapping[str, Any], verb: str, point: Point) -> tuple[Unit, Event]:
    """The unit with the action on record, and its `system` event."""
    data: dict[str, Any] = {"kind": verb, "system": do[verb], "at": format_time(point)}
    if "target" in do:
        data["target"] = do["target"]
    return evolve(unit, used=(*unit.used, (point, verb, do[verb]))), Event("system", unit.owner, unit.id, data)
