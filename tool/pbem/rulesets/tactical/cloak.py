"""The cloak of `tactical/1` (seed 000 §6.C.5; docs/tactical.md "Cloak").

`{use: cloak}` at an `activity` step, by a unit with a working `cloak`: it fades out over setup.cloak.fade
impulses (it may still be targeted, but can no longer act on others), then it is cloaked: nothing can fire at,
tractor, transport to or probe it as a weapon, unless an information probe of the attacker's side locked on it
this turn (probes.py). `{cease: cloak}` drops it: it fades in over the same number of impulses, targetable at once
but unable to act until it has faded in. The cloak costs costs.cloak when it goes up and again at every turn's
T.0.alloc it is carried into. Both give the usual `system` event.
"""

from __future__ import annotations

from pbem.formats.records import evolve
from pbem.rulesets.base import Point
from pbem.rulesets.tactical import acting
from pbem.rulesets.tactical.state import TacticalState, Unit

SYSTEM = "cloak"


def why_not(state: TacticalState, unit: Unit, verb: str, at: Point) -> str | None:
    """Why `{use|cease: cloak}` cannot be given now (None: it can)."""
    why = acting.why_not_working(unit, SYSTEM)
    if why:
        return why
    if verb == "use":
        if unit.gear.cloaked_at is not None:
            return f"{unit.id}'s cloak is already up"
        return acting.why_no_energy(state, unit, at, acting.cost(state, SYSTEM), "the cloak")
    return None  # a cease with nothing up drops nothing (an announcement, as before)


def switch(unit: Unit, verb: str, point: Point) -> Unit:
    """The unit with its cloak raised (`use`) or dropped (`cease`) at `point`."""
    if verb == "use":
        return evolve(unit, gear=evolve(unit.gear, cloaked_at=point, uncloaked_at=None))
    if verb == "cease":
        return evolve(unit, gear=evolve(unit.gear, cloaked_at=None, uncloaked_at=point))
    return unit


def upkeep(state: TacticalState, point: Point) -> dict[str, Unit]:
    """At a turn's allocation step, each cloak carried into the turn costs one more use."""
    return {u.id: acting.pay(u, point, SYSTEM) for u in state.units if u.gear.cloaked_at is not None and u.active}
