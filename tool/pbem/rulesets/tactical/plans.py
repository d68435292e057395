"""Plans of `tactical/1` (DESIGN §4.1, §4.5; seed 000 §5.B, §5.C): variable movement resolved when needed.

A plan is a players/<id>.yaml `plans` entry {unit, from, until, do}; it acts at the move steps from `from` to
`until` (both included) at which its unit moves (impulse chart), and only for the unit's owner. Its `do`:

* `{forward: {}}` — move F.
* `{pursue: TARGET}` — among the legal moves (F, TL, TR, SL, SR) take the one that brings the unit closest to
  TARGET (range from its new hex to the target's hex before the step); among those equally close, the one that
  leaves the target nearest its centreline, after the move and with its new facing (arcs.off_centre): first
  by bearing, in 60° sectors from dead ahead (0 in the front sector, 1 in the front-side ones, 2 in the
  rear-side ones, 3 in the rear one; on an edge the nearer), then by the range from the target to the nearest
  hex straight ahead of the unit (its own hex included). A move that would take it off the map only if every
  legal move would. Still tied: a special break (Ambiguous) listing the tied moves.
* `{pursue_sealed: {}}` — pursue the seeking weapon's own sealed target without naming it (seed §2.C: the
  target stays secret until impact): the move that pursues every possible target at once (every enemy unit on
  the map that is no seeking weapon), the first such in F, TL, TR, SL, SR order; when no move pursues them all,
  a special break (Ambiguous) listing every move that pursues one of them, which its owner answers with the
  move that pursues his real target (his own pbem writes it). Checked against the real target when it is
  revealed, as every move of a seeking weapon is (`pursuit_violations`). For seeking weapons only.
* `{keep_range: N}` — take the legal move after which the range to the nearest enemy unit on the map (seeking
  weapons not counted) is as close to N as possible (off the map only if every move is). Choice where the design
  is silent: among moves that keep it equally well the smallest manoeuvre wins: straight on (F), then a
  sideslip, then a turn (the plan changes course only as far as it must); a tie left or right is a special break.

A plan does not act (None) outside its window, at other steps, when its unit does not move, is not the
player's or is off the map, when TARGET is not on the map, or when no enemy is; the unit then moves by default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

from pbem.rulesets.base import Action, Ambiguous, Event, Point
from pbem.rulesets.tactical import arcs, hexmap, movement
from pbem.rulesets.tactical.actions import quote
from pbem.rulesets.tactical.gametime import MOVE, format_time, parse_time
from pbem.rulesets.tactical.state import TacticalState, Unit

MAX_RANGE = 200
PLAN_KEYS = ("unit", "from", "until", "do")
MANOEUVRE = {"F": 0, "SL": 1, "SR": 1, "TL": 2, "TR": 2}  # keep_range: the smaller change of course first


def plan_error(plan: Any) -> str | None:
    """None if `plan` is a plan this ruleset can resolve, else why not (a schema-level error for the player)."""
    if not isinstance(plan, Mapping) or set(plan) - {*PLAN_KEYS} or any(k not in plan for k in PLAN_KEYS):
        return "a plan must be {unit, from, until, do}"
    if not isinstance(plan["unit"], str) or not plan["unit"]:
        return f"{quote(plan)}: unit must be a unit name"
    try:
        start, end = parse_time(plan["from"]), parse_time(plan["until"])
    except ValueError as err:
        return f"{quote(plan)}: {err}"
    if end < start:
        return f"{quote(plan)}: until {plan['until']} is before from {plan['from']}"
    do = plan["do"]
    if not isinstance(do, Mapping) or len(do) != 1 or next(iter(do)) not in PLANS:
        return f"{quote(plan)}: do must be one of {', '.join('{' + k + ': …}' for k in PLANS)}"
    name = next(iter(do))
    problem = PLANS[name].check(do[name])
    return f"{quote(plan)}: {problem}" if problem else None


def legal_moves(unit: Unit, impulse: int) -> tuple[str, ...]:
    """The moves (in F, TL, TR, SL, SR order) `unit` may make in `impulse`."""
    return tuple(m for m in movement.MOVES if movement.why_not_move(unit, m, impulse) is None)


def _best(moves: Sequence[str], score: Callable[[str], tuple[Any, ...]]) -> tuple[str, ...]:
    keyed = [(score(m), m) for m in moves]
    low = min(k for k, _ in keyed)
    return tuple(m for k, m in keyed if k == low)


def pursue_choices(state: TacticalState, unit: Unit, target: Unit, impulse: int) -> tuple[str, ...]:
    """The equally good pursuit moves of `unit` after `target` in `impulse` (one, or several when tied)."""
    goal = target.hex
    assert unit.hex is not None and goal is not None

    def score(how: str) -> tuple[bool, int, tuple[int, int]]:
        to = movement.landing(state, unit, how)
        off = not hexmap.on_map(to, state.columns, state.rows)
        return off, hexmap.distance(to, goal), arcs.off_centre(to, movement.facing_after(unit, how), goal)

    return _best(legal_moves(unit, impulse), score)


def keep_range_choices(state: TacticalState, unit: Unit, distance: int, impulse: int) -> tuple[str, ...] | None:
    """The moves keeping `unit` nearest to `distance` from its nearest enemy; None when no enemy is on the map."""
    enemies = [u.hex for u in state.units if u.active and u.owner != unit.owner and u.seeking is None]
    if not enemies:
        return None

    def score(how: str) -> tuple[bool, int, int]:
        to = movement.landing(state, unit, how)
        off = not hexmap.on_map(to, state.columns, state.rows)
        return off, abs(min(hexmap.distance(to, e) for e in enemies if e is not None) - distance), MANOEUVRE[how]

    return _best(legal_moves(unit, impulse), score)


def _forward(state: TacticalState, unit: Unit, value: Any, impulse: int) -> tuple[str, ...] | None:
    return ("F",)


def _pursue(state: TacticalState, unit: Unit, value: Any, impulse: int) -> tuple[str, ...] | None:
    target = state.unit(value)
    if target is None or not target.active or target.id == unit.id:
        return None
    return pursue_choices(state, unit, target, impulse)


def _keep_range(state: TacticalState, unit: Unit, value: Any, impulse: int) -> tuple[str, ...] | None:
    return keep_range_choices(state, unit, value, impulse)


def candidates(state: TacticalState, unit: Unit) -> list[Unit]:
    """The units a seeking weapon's sealed target may be, as far as everybody else can see: every enemy unit on
    the map that is no seeking weapon (seeking.contacts counts the same ones)."""
    return [u for u in state.units if u.active and u.owner != unit.owner and u.seeking is None and u.hex is not None]


def sealed_pursuit_choices(state: TacticalState, unit: Unit, impulse: int) -> tuple[str, ...] | None:
    """`{pursue_sealed: {}}`: the one move (first in F, TL, TR, SL, SR order) that pursues every possible target
    at once, so that it shows nothing of the real one; else every move that pursues one of them (a special
    break for the owner, who answers for his real target). None when there is nothing to pursue (or only
    units in its own hex, where a pursuit allows any move)."""
    chased = [c for c in candidates(state, unit) if c.hex != unit.hex]
    if unit.seeking is None or not chased:
        return None
    each = [pursue_choices(state, unit, c, impulse) for c in chased]
    common = [m for m in movement.MOVES if all(m in moves for moves in each)]
    if common:
        return (common[0],)
    return tuple(m for m in movement.MOVES if any(m in moves for moves in each))


def _pursue_sealed(state: TacticalState, unit: Unit, value: Any, impulse: int) -> tuple[str, ...] | None:
    return sealed_pursuit_choices(state, unit, impulse)


def _check_forward(value: Any) -> str | None:
    return None if isinstance(value, Mapping) and not value else "forward takes no options: {forward: {}}"


def _check_pursue(value: Any) -> str | None:
    return None if isinstance(value, str) and value else f"pursue needs the unit to pursue, got {value!r}"


def _check_pursue_sealed(value: Any) -> str | None:
    return None if isinstance(value, Mapping) and not value else "pursue_sealed takes no options: {pursue_sealed: {}}"


def _check_keep_range(value: Any) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_RANGE:
        return f"keep_range must be a whole number 0..{MAX_RANGE}, got {value!r}"
    return None


@dataclass(frozen=True)
class PlanKind:
    """One plan `do`: how its value is checked and which moves it allows (None: it does not act)."""

    name: str
    check: Callable[[Any], "str | None"]
    choices: Callable[[TacticalState, Unit, Any, int], "tuple[str, ...] | None"]


PLANS: dict[str, PlanKind] = {
    "forward": PlanKind("forward", _check_forward, _forward),
    "pursue": PlanKind("pursue", _check_pursue, _pursue),
    "keep_range": PlanKind("keep_range", _check_keep_range, _keep_range),
    "pursue_sealed": PlanKind("pursue_sealed", _check_pursue_sealed, _pursue_sealed),
}


def resolve_plan(state: TacticalState, point: Point, player: str, plan: Mapping[str, Any]
                 ) -> list[Action] | Ambiguous | None:
    """What `plan` of `player` does at `point`: one move action, the tied options, or None (see module)."""
    if point[2] != MOVE or plan_error(plan) is not None:
        return None
    if not parse_time(plan["from"]) <= point <= parse_time(plan["until"]):
        return None
    unit = state.unit(plan["unit"])
    if unit is None or unit.owner != player or not unit.active or not movement.moves_in(unit.speed, point[1]):
        return None
    name = next(iter(plan["do"]))
    choices = PLANS[name].choices(state, unit, plan["do"][name], point[1])
    if not choices:
        return None
    if len(choices) > 1:
        return Ambiguous(unit.id, tuple({"move": m} for m in choices))
    return [Action(point, player, unit.id, {"move": choices[0]}, "plan")]


@dataclass(frozen=True)
class Violation:
    """A move of a seeking weapon that did not pursue its revealed target (seed §2.C)."""

    at: Point
    unit: str
    target: str
    made: str
    allowed: tuple[str, ...]

    @property
    def reason(self) -> str:
        """The finding's text, e.g. "S1 at 1.12.move: moved SL, but pursuing D7 it had to move F"."""
        return (f"{self.unit} at {format_time(self.at)}: moved {self.made}, but pursuing {self.target} it had to "
                f"move {' or '.join(self.allowed)}")


def pursuit_violations(track: Sequence[tuple[Point, TacticalState, Sequence[Event]]], unit: str, target: str
                       ) -> list[Violation]:
    """The moves of `unit` that were no pursuit of `target` (ties allowed), in order.

    `track` holds (point, state before the step, the step's events) for the steps from the launch to the
    impact (any steps: those where `unit` did not move are skipped, and so are those where it or the target was
    not on the map, or already in one hex). The move made is read from the unit's `moved`/`disengaged` event.
    """
    found: list[Violation] = []
    for point, before, events in track:
        made = next((str(e.data.get("how")) for e in events
                     if e.unit == unit and e.kind in ("moved", "disengaged")), None)
        mover, chased = before.unit(unit), before.unit(target)
        if made is None or mover is None or chased is None or not mover.active or not chased.active:
            continue
        if mover.hex == chased.hex:
            continue
        allowed = pursue_choices(before, mover, chased, point[1])
        if made not in allowed:
            found.append(Violation(point, unit, target, made, allowed))
    return found
