"""A player's own view of a `tactical/1` game ahead of the firm point (DESIGN §4.2 "Entries and time").

An entry is judged, when its author writes it, against what he could know: the public state at the firm point,
carried forward by his own actions only (his entries, plans and defaults). Others' units stay where the firm point
left them, or move by default: nothing judged here depends on them (actions.own_legal leaves out a shot's target
position and a system's target). Fire steps change nothing in the view (a shot needs dice and others' positions).

Others' units are known exactly as long as nothing they might do can have moved them: until a move step at which
one of them moves by the impulse chart (or any seeking weapon flies), a move step after a step where speeds may
change (allocation, activity), or a fire step (a unit may be destroyed). Until then a shot is judged in full (its
target's range and arc are public); after it, only what the firer's owner controls.

With `speeds: sealed`, a player's own speed for a turn is in his sealed allocation, which the verifier reads only
when all are revealed at T.0.alloc: past that step (while it is not yet firm) his moves are judged only as moves,
not against the impulse chart or the turn and slip counters.

A unit whose course came from a plan (`pursue`, `keep_range` follow other units, so its course in the view is a
guess) has only its impulse chart judged from then on, not its turn and slip counters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Action, Point
from pbem.rulesets.tactical import actions, movement, seeking
from pbem.rulesets.tactical.gametime import ACTIVITY, ALLOC, FIRE, MOVE, format_time
from pbem.rulesets.tactical.state import DISENGAGED, TacticalState


@dataclass(frozen=True)
class OwnView:
    """The state as `player` foresees it, and his units whose course he cannot foresee exactly."""

    state: TacticalState
    player: str
    guessed: frozenset[str] = frozenset()
    others_known: bool = True  # others' units stand exactly where the view has them
    speeds_open: bool = False  # a step passed at which others may have changed speed
    speeds_sealed: bool = False  # an allocation step passed whose speeds are sealed: his own are unknown here


def own_view(state: TacticalState, player: str) -> OwnView:
    """The view at the firm point: the public state there."""
    return OwnView(state, player)


def own_step(view: OwnView, point: Point, given: Sequence[Action]) -> OwnView:
    """The view after `point`, from the player's own actions there (moves, speeds, HETs, launches, systems)."""
    known, speeds_open = view.others_known, view.speeds_open
    if point[2] == FIRE:
        return view if not known else evolve(view, others_known=False)
    if point[2] in (ALLOC, ACTIVITY):
        speeds_open = True
    if point[2] == ALLOC and view.state.speeds_sealed:
        view = evolve(view, speeds_sealed=True)
    elif point[2] == MOVE and known:
        known = not speeds_open and not any(
            u.active and (u.seeking is not None or (u.owner != view.player and movement.moves_in(u.speed, point[1])))
            for u in view.state.units)
    mine = [a for a in given if a.by == view.player]
    if not mine and (point[2] != MOVE or not any(
            u.owner == view.player and u.active and movement.moves_in(u.speed, point[1]) for u in view.state.units)):
        if known == view.others_known and speeds_open == view.speeds_open:
            return view  # nothing of his changes here, nor what he can know
        return evolve(view, others_known=known, speeds_open=speeds_open)  # nothing of his changes here
    after, _ = actions.resolve(view.state, point, mine)
    planned = {a.unit for a in given if a.source == "plan" and a.unit is not None}
    return OwnView(after, view.player, view.guessed | planned if planned else view.guessed, known, speeds_open,
                   view.speeds_sealed)


def own_legality(view: OwnView, action: Action) -> str | None:
    """None if `action` is legal as far as its author alone could know, else the reason quoting it."""
    if view.others_known and action.unit not in view.guessed and not view.speeds_sealed:
        return actions.legal(view.state, action)
    return actions.own_legal(view.state, action, course_known=action.unit not in view.guessed,
                             speed_known=not view.speeds_sealed)


def own_warnings(before: OwnView, after: OwnView, point: Point, given: Sequence[Action],
                 plans: Sequence[Mapping[str, Any]]) -> list[str]:
    """What a player's own orders lead to at `point`, as far as he alone can see (protocol.ahead): a unit of his
    that leaves the map (out of the battle for good), a shot of his that is void in his own view, a seeking weapon
    launched without a pursue plan (it flies straight on and, once its target is revealed, can never hit)."""
    when = format_time(point)
    out = []
    for unit in before.state.units:
        now = after.state.unit(unit.id)
        if unit.owner == before.player and unit.active and now is not None and now.status == DISENGAGED:
            out.append(f"warning: your orders take {unit.id} off the map at {when}: it leaves the battle for good "
                       "(disengaged); change its course or plan before then")
    for action in given:
        if action.source != "entry" or not isinstance(action.do, Mapping):
            continue
        if "fire" in action.do:
            why = own_legality(before, action)
            if why:
                out.append(f"warning: your shot at {when} by {action.unit} will be void as far as you can see: {why}")
        name = seeking.launched_name(action.do)
        if name is not None and not any(isinstance(p, Mapping) and p.get("unit") == name and isinstance(
                p.get("do"), Mapping) and ("pursue" in p["do"] or "pursue_sealed" in p["do"]) for p in plans):
            out.append(f"warning: {name}, launched at {when}, has no pursue plan: it flies straight on (F), and once "
                       "its target is revealed every move that did not pursue it is rules.pursuit, so it can never "
                       f"hit; add a plan {{unit: {name}, from: …, until: …, do: {{pursue_sealed: {{}}}}}} (its "
                       "target stays secret) or its moves")
    return out
