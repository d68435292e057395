"""What the `tactical/1` board shows of the impulses before a game point (DESIGN §7.1, §4.2; docs/pictures.md
"The tactical board"): read from the record, handed to the pure renderer (render/tactical_step.py `StepView`).

The state where replay stopped holds where each unit is, its shields and hull, and every scored shot
(`TacticalState.hits`), but not where the units were before. So the steps up to the firm point are replayed
(protocol.replay, observed: the same replay the verifier makes, every step already played and served resolved
again quietly, as after an erratum) and the positions after each step are kept for the last TRAIL_IMPULSES
impulses. From them come the trails, the hexes of each shot of those impulses (the shots themselves are the
state's own), and where each unit out of play was last seen. A seeking weapon's target is shown once its owner
revealed it (the sealed input `target`, game.inputs.targets); never before.

The replayed state at the firm point must equal the verifier's (`Verified.stop.checkpoint.state`, compared unit
by unit); where it does not, the board is drawn without trails and shots rather than with wrong ones.

For a page of many maps (`pictures.Board`), `memo` keeps the last map's checkpoint and the positions seen, and the
next map replays only from there; only the last impulses are kept, so the memo stays small at any game length.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pbem.protocol import nmr
from pbem.protocol.model import Checkpoint, Resolved
from pbem.protocol.kinds import ERRATUM
from pbem.protocol.replay import replay, start_checkpoint
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import covered_by_nmr, effects_of, excused_by_nmr
from pbem.render.tactical_step import FireLine, Gone, InternalHit, SeekingTarget, StepView, Trail
from pbem.rulesets.base import Point
from pbem.rulesets.tactical import damage, fire, hexmap
from pbem.rulesets.tactical.gametime import FIRE, MOVE, format_time
from pbem.rulesets.tactical.hexmap import Hex
from pbem.rulesets.tactical.state import ACTIVE, EXPENDED, TacticalState

TRAIL_IMPULSES = 8  # at least a quarter of a turn: a ship at speed 12 shows three moves
LONGEST = 32  # at most a turn's impulses
KEPT = 6 * (LONGEST + 1)  # position changes kept: a move, a launch and losses per impulse, with room
STEPS_KEPT = 6 * (LONGEST + 1)  # the points of the steps resolved last
MEMO_KEY = "tactical-board"
END: Point = (float("inf"),)  # after every step of any game (a finished game is replayed to its end)


@dataclass
class Seen:
    """What the replay saw, kept from one map of a game to the next (bounded: see KEPT)."""

    key: Any = None
    checkpoint: Checkpoint | None = None  # where the last map's replay ended: the verifier's checkpoint there
    changes: deque[tuple[Point, dict[str, Hex | None]]] = field(default_factory=lambda: deque(maxlen=KEPT))
    moves: deque[Point] = field(default_factory=lambda: deque(maxlen=LONGEST))
    steps: deque[Point] = field(default_factory=lambda: deque(maxlen=STEPS_KEPT))
    last_seen: dict[str, Hex] = field(default_factory=dict)  # one hex per unit: as many as the game has units

    def note(self, point: Point, state: TacticalState, moved: bool = False) -> None:
        """Keep the positions after a step (`moved`: a move step, resolved) or before it when they changed."""
        now = {u.id: u.hex if u.status == ACTIVE else None for u in state.units}
        if not self.changes or self.changes[-1][1] != now:
            self.changes.append((point, now))
        for unit, hex_ in now.items():
            if hex_ is not None:
                self.last_seen[unit] = hex_
        if moved:
            self.moves.append(point)


class _Enough(Exception):
    """The replay reached the firm point."""


def _key(verified: Verified) -> Any:
    game = verified.game
    # an erratum agreement rewrites entries replay has passed: a memo kept across it would continue a wrong story
    return (verified.game.manifest.id, verified.gone_at,
            tuple(sorted((k, len(a.signatures)) for k, a in game.agreements.items() if a.kind == ERRATUM)))


def _replay_to(verified: Verified, seen: Seen, start: Checkpoint | None) -> TacticalState | None:
    """Replay from `start` (None: the game start) to the firm point, noting positions in `seen`; the state
    reached there (None if replay stopped before it)."""
    game = verified.game
    manifest = game.manifest
    ruleset, setup = manifest.ruleset, manifest.setup
    assert verified.stop is not None
    firm = verified.stop.checkpoint.point
    gone_at = verified.gone_at
    inputs = nmr.horizons(covered_by_nmr(excused_by_nmr(game, gone_at), gone_at).inputs,
                          nmr.covers_recorded(ruleset, setup, gone_at))
    begin = start if start is not None else start_checkpoint(ruleset, setup, manifest.players)
    effects = effects_of(ruleset, gone_at, begin.point if start is not None else None)
    reached: list[TacticalState] = []

    def observe(step: Resolved) -> None:
        seen.note(step.point, step.begun)  # what happened between steps (an impact, a resignation)
        if firm is not None and step.point >= firm:
            reached.append(step.begun)
            raise _Enough
        seen.note(step.point, step.after, moved=step.point[2] == MOVE)
        seen.steps.append(step.point)

    try:
        stop = replay(ruleset, setup, inputs, replace(begin, carried=()), None, quiet_before=firm or END,
                      effects=effects, observer=observe)
    except _Enough:
        return reached[0]
    if stop.over or stop.checkpoint.point == firm:
        seen.note(stop.checkpoint.point or END, stop.checkpoint.state)  # the impacts after the last step
        return stop.checkpoint.state  # type: ignore[no-any-return]
    return None


def _same(a: TacticalState | None, b: TacticalState) -> bool:
    return a is not None and [(u.id, u.hex, u.facing, u.status, u.shields, u.hull) for u in a.units] == \
        [(u.id, u.hex, u.facing, u.status, u.shields, u.hull) for u in b.units]


def history(verified: Verified, memo: dict[str, Any] | None = None) -> Seen | None:
    """The positions seen up to this game point, continuing the last map's replay when `memo` holds one for the
    same game and its firm point is not later than this one's; None when the replay disagrees with the verifier."""
    assert verified.stop is not None
    now = verified.stop.checkpoint
    key = _key(verified)
    kept = memo.get(MEMO_KEY) if memo is not None else None
    seen: Seen | None = None
    if isinstance(kept, Seen) and kept.key == key and kept.checkpoint is not None and \
            kept.checkpoint.point is not None and (now.point is None or kept.checkpoint.point <= now.point):
        seen = kept
        if kept.checkpoint.point == now.point:
            if not _same(kept.checkpoint.state, now.state):  # changed in place (an impact at a reveal)
                seen = None
        elif not _same(_replay_to(verified, seen, kept.checkpoint), now.state):
            seen = None
    if seen is None:
        seen = Seen(key)
        if not _same(_replay_to(verified, seen, None), now.state):
            return None
    seen.checkpoint = now
    if memo is not None:
        memo[MEMO_KEY] = seen
    return seen


def step_view(verified: Verified, memo: dict[str, Any] | None = None) -> StepView:
    """The trails, shots, revealed targets and units gone of the impulses before this game point."""
    assert verified.stop is not None
    state: TacticalState = verified.stop.checkpoint.state
    firm = verified.stop.checkpoint.point
    until = format_time(firm) if firm is not None else "the end"
    seen = history(verified, memo)
    if seen is None or not seen.moves:
        return StepView(until=until, fire=_declared(verified, state), targets=_targets(verified, state))
    since = _since(seen, verified, state)
    changes = list(seen.changes)
    # the positions just before the window, then each change inside it
    base = next((i for i in range(len(changes) - 1, -1, -1) if changes[i][0] < since), 0)
    window = changes[base:]
    trails = []
    for unit in state.units:
        hexes = _dedup([c[1][unit.id] for c in window if c[1].get(unit.id) is not None])  # type: ignore[misc]
        if len(hexes) > 1:
            trails.append(Trail(unit.id, unit.owner, tuple(hexes), unit.seeking is not None))
    shots = tuple(line for hit in state.hits if isinstance(hit, fire.Hit) and hit.at >= since
                  and (line := _fire_line(hit, state, window)))
    internal = tuple(InternalHit(format_time(hit.at), hit.unit, hit.roll if isinstance(hit.roll, int) else None,
                                 hit.hit, hit.left, hit.text())
                     for hit in state.hits if isinstance(hit, damage.Allocated) and hit.at >= since)
    gone = tuple(Gone(u.id, u.owner, u.status, seen.last_seen[u.id],
                      format_time(u.left_at) if u.left_at is not None else "", u.seeking is not None,
                      (_revealed(verified, u.owner, u.id) or ("",))[0] if u.status == EXPENDED else "",
                      u.seeking.warhead if u.seeking is not None and u.status == EXPENDED else 0)
                 for u in state.units if u.status != ACTIVE and u.id in seen.last_seen
                 and (u.seeking is None or (u.left_at is not None and u.left_at >= since)))
    return StepView(format_time(since), until, tuple(trails), shots + _declared(verified, state),
                    _targets(verified, state), gone, internal)


def _since(seen: Seen, verified: Verified, state: TacticalState) -> Point:
    """Where the window starts: TRAIL_IMPULSES impulses back, or earlier to take in every step this game point's
    replay resolved (what happened since the point before) and the last fire step that scored shots; never more
    than LONGEST impulses back. Read from the game point alone, so a page and `pbem render --at` agree."""
    assert verified.stop is not None
    moves = list(seen.moves)
    start = moves[-TRAIL_IMPULSES] if len(moves) >= TRAIL_IMPULSES else moves[0]
    resolved = verified.stop.steps
    if resolved > 0 and seen.steps:
        start = min(start, seen.steps[-min(resolved, len(seen.steps))])
    shots = [hit for hit in state.hits if isinstance(hit, fire.Hit)]  # its internals are allocated after it
    if shots and shots[-1].at >= moves[0]:
        start = min(start, shots[-1].at)
    return max(start, moves[0])


def _dedup(hexes: list[Hex]) -> list[Hex]:
    return [h for i, h in enumerate(hexes) if i == 0 or hexes[i - 1] != h]


def _fire_line(hit: Any, state: TacticalState, window: list[tuple[Point, dict[str, Hex | None]]]
               ) -> FireLine | None:
    """A shot of the window, drawn between where attacker and target stood when it was fired."""
    at_shot = next((c[1] for c in reversed(window) if c[0] < hit.at), None)  # fire moves nobody
    if at_shot is None:
        return None
    source, aim = at_shot.get(hit.attacker), at_shot.get(hit.target)
    if source is None or aim is None:
        return None
    attacker = state.unit(hit.attacker)
    return FireLine(format_time(hit.at), hit.attacker, attacker.owner if attacker is not None else "", hit.weapon,
                    hit.target, source, aim, hit.range, None if hit.lost else hit.roll, hit.amount, hit.shield,
                    hit.shield_damage, hit.internal, hit.text())


def _declared(verified: Verified, state: TacticalState) -> tuple[FireLine, ...]:
    """The shots declared at the fire step the game stands at (waiting for its dice or its damage replies):
    each legal one, with its die once revealed; scored only when the step resolves (seed §6.C.1)."""
    assert verified.stop is not None
    firm = verified.stop.checkpoint.point
    if firm is None or firm[2] != FIRE:
        return ()
    found = []
    for entry in verified.game.inputs.at(firm):
        value = entry.do.get("fire")
        unit = state.unit(entry.unit)
        if not isinstance(value, Mapping) or unit is None or unit.owner != entry.by \
                or fire.why_not_fire(state, unit, value, firm) is not None:
            continue
        target = state.unit(value["target"])
        assert target is not None and target.hex is not None and unit.hex is not None  # why_not_fire: on the map
        rolled = verified.game.inputs.dice.get(fire.dice_ref(firm, unit.id, value["weapon"]))
        die = rolled.result if rolled is not None and isinstance(rolled.result, int) else None
        found.append(FireLine(format_time(firm), unit.id, unit.owner, value["weapon"], target.id, unit.hex,
                              target.hex, hexmap.distance(unit.hex, target.hex), die, 0, 0, 0, 0,
                              f"{format_time(firm)} {unit.id} {value['weapon']} at {target.id}: declared",
                              scored=False))
    return tuple(found)


def _revealed(verified: Verified, owner: str, unit: str) -> tuple[str, str] | None:
    """(target, nature) of a seeking weapon once its owner revealed its sealed `target` input, else None."""
    sealed = verified.game.inputs.targets.get((owner, unit))
    value = sealed.value if sealed is not None and sealed.revealed else None
    if isinstance(value, Mapping) and isinstance(value.get("target"), str):
        return value["target"], str(value.get("nature", "real"))
    return None


def _targets(verified: Verified, state: TacticalState) -> tuple[SeekingTarget, ...]:
    """The revealed targets of the seeking weapons on the map."""
    found = []
    for unit in state.units:
        known = _revealed(verified, unit.owner, unit.id) if unit.seeking is not None and unit.active else None
        if known is not None:
            found.append(SeekingTarget(unit.id, *known))
    return tuple(found)
