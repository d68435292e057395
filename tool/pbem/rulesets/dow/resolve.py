"""Resolving one phase of `dow/1` (DESIGN §7.2): orders judged, the engine adjudicates,
relationships realised, events for break conditions.

An action is one power's orders for one phase: `{orders: ["A PAR - BUR", "F BRE - MAO", ...]}` (schema
pbem/dow/action/1), the plaintext of its sealed orders (DESIGN §4.7). Each order is first checked by the
engine (an order it refuses is void: the unit holds, event `void`, no offence), then by the relationship table
(legality.py) against the states in force and the board at the start of the phase: an order the table forbids
is void too, with a public `warning`; the first phase in which a power gives such orders is its warning, the
second puts it into civil disorder (event `civil_disorder` at the end of the phase; from the next phase it gives
no orders and its units hold). A second offence from a director's warning recognised during the phase takes
effect at the same point. Every voided order is recorded (`DowState.voids`) so the director can cite it. A power that gives no orders where it owes some gets the engine's defaults (units hold, dislodged units
disband, missing builds are waived, missing disbands are chosen by the standard civil disorder rule): event
`missed`.

Events (Event.by is the power that caused it; "" when no power did):

| kind             | by             | data                                                         |
|------------------|----------------|--------------------------------------------------------------|
| `adjudicated`    | ""             | phase, engine, results {unit: [codes]} (informative only)    |
| `dislodged`      | the attacker   | phase, owner, unit, retreats                                 |
| `centres`        | the new owner  | phase, centre, from, to (one per change of owner)            |
| `realised`       | ""             | phase, changes [[a, b, before, after]] (relations realised)  |
| `gift`/`gift_void` | the giver    | phase, to, province (, reason)                               |
| `void`           | the power      | phase, order, reason (refused by the engine, or in disorder) |
| `warning`        | the power      | phase, order, reason, offences                              |
| `civil_disorder` | the power      | phase, offences                                              |
| `missed`         | the power      | phase                                                        |
| `victory`        | the winner     | phase, centres                                               |
| `draw`           | ""             | phase, powers (the engine's draw when the year-2000 centres are counted) |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pbem.rulesets.base import Action, Event, Point
from pbem.rulesets.dow import engine, legality, phases, relations
from pbem.rulesets.dow.press import gift_problem
from pbem.rulesets.dow.state import DRAW, VICTORY, DowState


def orders_of(action: Action) -> tuple[str, ...] | None:
    """The orders of an action, or None when its `do` is not {orders: [TEXT, ...]}."""
    do = action.do
    if not isinstance(do, Mapping) or set(do) != {"orders"}:
        return None
    given = do["orders"]
    if not isinstance(given, (list, tuple)) or not all(isinstance(o, str) for o in given):
        return None
    return tuple(given)


def action_problem(state: DowState, action: Action) -> str | None:
    """Why an action cannot be an orders submission at all (shape, power, phase), or None."""
    if orders_of(action) is None:
        return f"{action.by}: an action is {{orders: [ORDER, ...]}}, got {dict(action.do)!r}"
    if action.by not in state.powers:
        return f"{action.by!r} plays no power and gives no orders"
    if state.phase is None or action.at != state.phase:
        return f"{action.by}: orders for {_when(action.at)} but the game is at {_when(state.phase)}"
    if action.at[2] == phases.PRESS:
        return f"{action.by}: no orders are given in the first half of Spring 1901 (press only)"
    if state.outcome is not None:
        return f"{action.by}: the game is over ({state.outcome[0]})"
    if state.in_disorder(action.by):
        return f"{action.by} is in civil disorder (second offence) and gives no more orders"
    return None


def _when(point: Point | None) -> str:
    try:
        return phases.format_time(point) if point is not None else "the end"
    except ValueError:
        return repr(point)


def judge(state: DowState, power: str, given: Sequence[str]) -> list[tuple[str, str | None, str, str | None]]:
    """Each order as (order, normal form or None, verdict, reason): verdict "ok", "invalid" (the engine refuses
    it), "rewritten" (the engine would read it with another meaning, e.g. a support for another coast than the
    one given: void like an invalid order, and refused when sealed, rule `rules.order-rewritten`) or
    "forbidden" (the relationship table refuses it)."""
    assert state.phase is not None
    if not given:  # nothing to judge; also the press-only first half, which is no engine phase
        return []
    phase = phases.engine_phase(state.phase)
    info = engine.standard_map()
    out: list[tuple[str, str | None, str, str | None]] = []
    for checked in engine.check_orders(state.board, phase, power, given):
        if checked.normal is None:
            out.append((checked.order, None, "rewritten" if checked.rewritten else "invalid",
                        f"{power}: {checked.order!r} is not a valid order at {phase}: {checked.reason}"))
            continue
        reason = legality.forbidden(power, checked.normal, state.board, state.relations.in_force, info.name)
        out.append((checked.order, checked.normal, "forbidden" if reason else "ok", reason))
    return out


def owing(state: DowState, point: Point) -> list[str]:
    """Powers that must give orders at `point`: units to order, dislodged units to retreat, builds or
    disbands due; never a power in civil disorder, never after the game is over, nobody in the press-only half
    (it ends when every power is `ready`, see press.ready_owed)."""
    if state.outcome is not None:
        return []
    board = state.board
    kind = point[2]
    out = []
    for power in state.powers:
        if state.in_disorder(power):
            continue
        if kind == phases.MOVEMENT and board.units_of(power):
            out.append(power)
        elif kind == phases.RETREATS and board.dislodged_of(power):
            out.append(power)
        elif kind == phases.ADJUSTMENTS and engine.adjustment_due(board, power) != 0:
            out.append(power)
    return out


def resolve(state: DowState, point: Point, actions: Sequence[Action]) -> tuple[DowState, list[Event]]:
    """Apply one phase; the returned state is at the next phase."""
    if state.phase is None or point != state.phase:
        raise ValueError(f"phase {_when(point)} given to a game at {_when(state.phase)}")
    if state.engine != engine.engine_name():
        raise engine.EngineError(f"this game was adjudicated by {state.engine}, not {engine.engine_name()}")
    when = phases.format_time(point)
    if state.outcome is not None:
        return state, []
    events: list[Event] = []
    state = _forget_old_voids(state, point)
    if point[2] == phases.PRESS:
        state = _realise(state, when, events)
        state = _begin_disorder(state, when, events)
        return replace(state, phase=phases.next_step({}, point)), events
    state, orders = _gather(state, point, actions, events)
    phase = phases.engine_phase(point)
    result = engine.adjudicate(state.board, phase, orders, state.victory, state.edition)
    expected = phases.next_step({}, point)
    engine_next = result.next_phase
    if engine_next != engine.COMPLETED and (expected is None or engine_next != phases.format_time(expected)):
        raise engine.EngineError(f"the engine went from {phase} to {result.next_phase}")
    events.append(Event("adjudicated", "", None, {
        "phase": when, "engine": result.engine,
        "results": {unit: list(codes) for unit, codes in result.results if any(codes)}}))
    for owner, unit, attacker in result.dislodged:
        retreats = next((list(o) for p, u, o in result.board.dislodged if (p, u) == (owner, unit)), [])
        events.append(Event("dislodged", attacker or "", unit,
                            {"phase": when, "owner": owner, "unit": unit, "retreats": retreats}))
    events.extend(_centre_changes(state.board, result.board, when))
    state = replace(state, board=result.board)
    if phases.realises_relations(point):
        state = _realise(state, when, events)
    if point[1:] == (phases.FALL, phases.RETREATS) or result.next_phase == engine.COMPLETED:
        state = _outcome(state, result.next_phase, when, events)
    state = _begin_disorder(state, when, events)
    return replace(state, phase=expected), events


def _forget_old_voids(state: DowState, point: Point) -> DowState:
    """Void orders stay citable by the director for this and the previous game year."""
    kept = tuple(v for v in state.voids if phases.parse_time(v[0])[0] >= point[0] - 1)
    return state if len(kept) == len(state.voids) else replace(state, voids=kept)


def _begin_disorder(state: DowState, when: str, events: list[Event]) -> DowState:
    """Seed 001: "sent into CD for the second offense", from the phase after the one in which the second offence
    was recorded, by forbidden orders or by the director's warning alike."""
    state, entering = state.begin_disorder()
    for power in entering:
        events.append(Event("civil_disorder", power, None, {"phase": when, "offences": state.offences_of(power)}))
    return state


def _gather(
    state: DowState, point: Point, actions: Sequence[Action], events: list[Event]
) -> tuple[DowState, dict[str, tuple[str, ...]]]:
    """Every power's orders that count, and the sanctions earned (seed 001)."""
    when = phases.format_time(point)
    owed = set(owing(state, point))
    by_power: dict[str, tuple[str, ...]] = {}
    for action in actions:
        problem = action_problem(state, action)
        given = orders_of(action)
        if problem is not None or given is None or action.by in by_power:
            why = problem or f"{action.by} already gave orders at {when}"
            if action.by in state.powers:
                for order in given or ():
                    events.append(Event("void", action.by, None, {"phase": when, "order": order, "reason": why}))
            continue
        by_power[action.by] = given
    orders: dict[str, tuple[str, ...]] = {}
    voids: list[tuple[str, str, str, bool]] = []
    for power in state.powers:
        if point[2] == phases.MOVEMENT and power in owed:  # civil disorder after missed movement phases
            state = state.after_movement(power, power in by_power)
        if power not in by_power:
            if power in owed:
                events.append(Event("missed", power, None, {"phase": when}))
            continue
        kept: list[str] = []
        offended = False
        for order, normal, verdict, reason in judge(state, power, by_power[power]):
            if verdict == "ok":
                kept.append(str(normal))
            elif verdict in ("invalid", "rewritten"):
                voids.append((when, power, order, False))
                events.append(Event("void", power, None, {"phase": when, "order": order, "reason": reason}))
            else:
                voids.append((when, power, order, True))
                offended = True
                events.append(Event("warning", power, None, {
                    "phase": when, "order": order, "reason": reason, "offences": state.offences_of(power) + 1}))
        if offended:
            state = state.with_offences(power, state.offences_of(power) + 1)
        orders[power] = tuple(kept)
    if voids:
        state = replace(state, voids=state.voids + tuple(voids))
    return state, orders


def _centre_changes(before: Any, after: Any, when: str) -> list[Event]:
    old = {c: p for p, cs in before.centres for c in cs}
    new = {c: p for p, cs in after.centres for c in cs}
    return [Event("centres", new.get(c) or "", None, {"phase": when, "centre": c, "from": old.get(c), "to": new.get(c)})
            for c in sorted(set(old) | set(new)) if old.get(c) != new.get(c)]


def _realise(state: DowState, when: str, events: list[Event]) -> DowState:
    """Seed 001: realise the recognised changes (start of Spring and Fall retreats; end of the first half of
    Spring 1901), then the recognised gifts in recognition order."""
    gifts = state.gifts
    rel, changes = relations.realise(state.relations)
    state = replace(state, relations=rel, gifts=())
    if changes:
        events.append(Event("realised", "", None, {"phase": when, "changes": [list(c) for c in changes]}))
    for giver, taker, province in gifts:
        problem = gift_problem(state, giver, taker, province)
        data = {"phase": when, "to": taker, "province": province}
        if problem:
            events.append(Event("gift_void", giver, None, {**data, "reason": problem[1]}))
            continue
        before = state.board
        state = replace(state, board=before.with_gift(giver, taker, province))
        events.append(Event("gift", giver, None, data))
        events.extend(_centre_changes(before, state.board, when))
    return state


def _outcome(state: DowState, engine_phase: str, when: str, events: list[Event]) -> DowState:
    """Victory when the centres are counted on entering Winter (18 by default, alone in the lead), or the
    engine's draw at its 100-year limit."""
    counts = {p: len(state.board.centres_of(p)) for p in state.powers}
    best = max(counts.values())
    leaders = [p for p, n in counts.items() if n == best]
    if best >= state.victory and len(leaders) == 1:
        events.append(Event(VICTORY, leaders[0], None, {"phase": when, "centres": best}))
        return replace(state, outcome=(VICTORY, (leaders[0],)))
    if engine_phase == engine.COMPLETED:
        survivors = state.survivors()
        events.append(Event(DRAW, "", None, {"phase": when, "powers": list(survivors)}))
        return replace(state, outcome=(DRAW, survivors))
    return state
