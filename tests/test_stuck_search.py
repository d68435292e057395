"""A machine that looks for stuck games (DESIGN §4.2, §4.8): hypothesis' rule-based state machine plays random
honest tactical games of 2-4 players through the pure judge (tests/stuck_game.py): orders far into the future,
break conditions of every kind of the catalog, sealed allocations, action auctions, shots and their dice
(commit-reveal: announce, contributions, reveals), damage replies, the reveals at the end, and agreements
(resign, nmr, a vacant seat given to a replacement). After every commit each player who holds control or owes
something must have a legal commit that moves the game on without an agreement.

The suite runs a bounded search; `bench/stuck_search.py` runs a longer one. Each stuck state it found is a named
vector in tests/test_no_deadlock.py.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, \
    run_state_machine_as_test

from stuck_game import Figures, Play, build, play_step, stuck

BUILT: dict[int, Path] = {}
FIGURES = Figures()
ROOT: list[Path] = []


def built(players: int) -> Path:
    """The started game of `players` seats, built once through the real CLI (the search plays it in memory)."""
    if players not in BUILT:
        if not ROOT:
            ROOT.append(Path(tempfile.mkdtemp(prefix="stuck-search-")))
        BUILT[players] = build(ROOT[0] / f"p{players}", players)
    return BUILT[players]


class StuckSearch(RuleBasedStateMachine):
    """One random game a run."""

    play: Play

    @initialize(players=st.sampled_from([2, 3, 4]))
    def start(self, players: int) -> None:
        self.play = Play.open(built(players))
        FIGURES.games += 1

    @precondition(lambda self: not self.play.over)
    @rule(seed=st.integers(0, 2**32 - 1))
    def step(self, seed: int) -> None:
        before = self.play.commits
        play_step(self.play, random.Random(seed), FIGURES, ROOT[0])
        FIGURES.commits += self.play.commits - before

    @precondition(lambda self: self.play.over)
    @rule()
    def over(self) -> None:
        """The game is over: nothing left to do (the run ends at its step count)."""

    @invariant()
    def nobody_is_stuck(self) -> None:
        found = stuck(self.play)
        if found:
            FIGURES.stuck.extend(found)
        pending = [(b.player, b.kind, b.at, b.why) for b in self.play.head.status.pending]  # type: ignore[union-attr]
        assert not found, "\n".join([*found, f"pending: {pending}", "after:", *self.play.log[-12:]])


def search(examples: int, steps: int, seed: int | None = None, machine: type = StuckSearch,
           shrink: bool = True) -> Figures:
    """Run the machine for `examples` games of up to `steps` steps each (derandomized unless a `machine` carries
    hypothesis' seed); the figures of the run."""
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, derandomize=seed is None,
        suppress_health_check=list(HealthCheck), database=None,
        phases=list(Phase) if shrink else [Phase.explicit, Phase.reuse, Phase.generate]))
    return FIGURES


def test_no_stuck_state_in_random_honest_games(tmp_path_factory: pytest.TempPathFactory) -> None:
    ROOT[:] = [tmp_path_factory.mktemp("stuck-search")]
    BUILT.clear()
    figures = search(examples=4, steps=25)
    print(figures.line())
    assert figures.games >= 4 and figures.commits > 0 and not figures.stuck
