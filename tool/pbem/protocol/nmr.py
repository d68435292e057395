"""What an nmr settles: everything its absent player owes up to his next decision (DESIGN §4.8; docs/protocol.md
"What an nmr settles").

The seeds are silent about an absent player; DESIGN §4.8 settles his part "by the ruleset's defaults (no new
orders, a pass, Diplomacy holds)". Served one step at a time, a tactical turn of some 160 steps would need an nmr
for every step his horizon falls short of. So an nmr covers him until his **next decision**: the next step the
ruleset declares sealed (DESIGN §4.7), where every player commits his input for what follows (tactical: the next
turn's energy allocation, seed 000 §2.C; Diplomacy: the next phase with orders, so an nmr there settles its own
phase only). Until then:

* his horizon reaches at least the last step before that decision (his units do what the ruleset does without
  orders, or what he had written: his entries and plans stand, "no new orders");
* his break conditions are not served (an absent player answers no break: each would be a pass), so no
  condition or explicit break of his, no action auction and no damage reply asks him;
* from the decision on, his own horizon and conditions count again. Where he had written orders past it, replay
  resumes with them there, as if the nmr had never cut them.

What comes owed to him later that no default can give (a contribution to a die announced after the nmr, a
reveal that falls due) is a new item with its own clock: a die is not a decision, but nobody can give his part.

Pure: functions of the ruleset, the setup and the inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from pbem.protocol.kinds import NMR
from pbem.protocol.model import HORIZON, Checkpoint, Inputs, Stop
from pbem.protocol.replay import MAX_STEPS, replay
from pbem.rulesets.base import Point, Ruleset

@dataclass(frozen=True)
class Cover:
    """An nmr's cover of its absent player: from the firm point it landed at (`since`) through `until` (the last
    step before his next decision; None: to the end of the game)."""

    player: str
    since: Point
    until: Point | None

    def active(self, point: Point | None) -> bool:
        """Whether a replay starting at `point` starts inside the cover."""
        return point is not None and self.since <= point and (self.until is None or point <= self.until)


def next_decision(ruleset: Ruleset, setup: Mapping[str, Any], point: Point) -> Point | None:
    """The absent player's next decision after `point`: the first later step the ruleset declares sealed (DESIGN
    §4.7). A ruleset without sealed steps declares no decision point: every step is one (the next step). None
    when the game ends first."""
    sealing = ruleset.sealing
    step = ruleset.next_step(setup, point)
    if sealing is None:
        return step
    for _ in range(MAX_STEPS):
        if step is None or sealing.sealed(step):
            return step
        step = ruleset.next_step(setup, step)
    raise RuntimeError("ruleset produced an endless step sequence")


def cover_of(ruleset: Ruleset, setup: Mapping[str, Any], player: str, since: Point) -> Cover:
    """The cover of an nmr that landed at the firm point `since`: through the step before his next decision
    (`since` itself when the decision is the very next step)."""
    decision = next_decision(ruleset, setup, since)
    if decision is None:
        return Cover(player, since, None)
    last, step = since, ruleset.next_step(setup, since)
    while step is not None and step < decision:
        last, step = step, ruleset.next_step(setup, step)
    return Cover(player, since, last)


def covers_at(ruleset: Ruleset, setup: Mapping[str, Any], recorded: Iterable[tuple[str, str, Point]],
              start: Point | None, now: str | None = None) -> tuple[Cover, ...]:
    """The covers a replay starting at `start` begins inside: those of the nmrs `recorded` (kind, player, point:
    `Verified.gone_at`) and of the one this commit completes (`now`, landing at `start`)."""
    if start is None:
        return ()
    found = [(player, point) for kind, player, point in recorded if kind == NMR and point <= start]
    if now is not None:
        found.append((now, start))
    out = {}
    for player, point in found:
        cover = cover_of(ruleset, setup, player, point)
        if cover.active(start):
            out[player] = cover  # a later nmr against him reaches as far or further
    return tuple(out[p] for p in sorted(out))


def covers_recorded(ruleset: Ruleset, setup: Mapping[str, Any],
                    recorded: Iterable[tuple[str, str, Point]]) -> tuple[Cover, ...]:
    """The cover of every nmr `recorded` (kind, player, point: `Verified.gone_at`), for a replay from the game
    start."""
    return tuple(cover_of(ruleset, setup, player, point) for kind, player, point in recorded if kind == NMR)


def covered(inputs: Inputs, covers: Sequence[Cover]) -> Inputs:
    """`inputs` as replay reads them inside `covers`: each absent player's horizon is his cover's end (replay
    then stops at his next decision at the latest, where his own inputs count again) and he has no break
    conditions."""
    if not covers:
        return inputs
    per_player = dict(inputs.per_player)
    for cover in covers:
        if cover.player in inputs.gone:
            continue  # resigned since: his horizon reaches the end of the game already
        mine = inputs.of(cover.player)
        through = cover.until if cover.until is not None else (float("inf"),)
        per_player[cover.player] = replace(mine, through=through, breaks=())
    return replace(inputs, per_player=per_player)


def horizons(inputs: Inputs, covers: Sequence[Cover]) -> Inputs:
    """`inputs` with each covered player's horizon reaching at least his cover's end, his conditions kept: for a
    replay from the game start (after an erratum), which must not wait for him inside a cover again."""
    per_player = None
    for cover in covers:
        mine = inputs.of(cover.player)
        through = cover.until if cover.until is not None else (float("inf"),)
        if mine.through is None or mine.through < through:  # type: ignore[operator]
            per_player = dict(inputs.per_player) if per_player is None else per_player
            per_player[cover.player] = replace(mine, through=through)
    return inputs if per_player is None else replace(inputs, per_player=per_player)


def replay_covered(ruleset: Ruleset, setup: Mapping[str, Any], inputs: Inputs, start: Checkpoint, after: str | None,
                   served: str | None = None, *, covers: Sequence[Cover] = (),
                   effects: Sequence[tuple[Point, Callable[[Any], Any]]] = (), **more: Any) -> Stop:
    """`replay` with the absent players of `covers` settled up to their next decisions. Where replay stops at
    the end of a cover only for the cover's horizon while its player had written orders further, it goes on from
    there with his own inputs: the nmr settled his breaks, it never cut his orders."""
    if not covers:
        return replay(ruleset, setup, inputs, start, after, served, effects=effects, **more)
    stop = replay(ruleset, setup, covered(inputs, covers), start, after, served, effects=effects, **more)
    point = stop.checkpoint.point
    if stop.over or point is None or not stop.pending or any(b.kind != HORIZON for b in stop.pending):
        return stop
    ended = [c for c in covers if c.until is not None and point > c.until]
    own = inputs.per_player
    if not ended or not any(b.player in {c.player for c in ended} and own.get(b.player) is not None
                            and own[b.player].through is not None
                            and own[b.player].through >= point  # type: ignore[operator]
                            for b in stop.pending):
        return stop  # a real horizon break, his own as much as the cover's
    # the state at `point` already holds the effects due there (replay applies them before the horizon check)
    rest = replay_covered(ruleset, setup, inputs, stop.checkpoint, after, None,
                          covers=[c for c in covers if c not in ended],
                          effects=[e for e in effects if e[0] > point],
                          **{k: v for k, v in more.items() if k != "fresh"})
    return replace(rest, problems=stop.problems + rest.problems, voids=stop.voids + rest.voids,
                   steps=stop.steps + rest.steps)
