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

from typing import Any

from pbem.formats.writer import dump_mapping
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


def test_no_stuck_state_in_random_honest_games(base_three: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    ROOT[:] = [tmp_path_factory.mktemp("stuck-search")]
    BUILT.clear()
    BUILT[3] = base_three  # the suite's started game of three seats (conftest), the same `build(root, 3)`
    figures = search(examples=4, steps=25)
    print(figures.line())
    assert figures.games >= 4 and figures.commits > 0 and not figures.stuck


def test_a_reply_launch_at_the_same_impulse_leaves_nobody_stuck() -> None:
    """A named course through the same judge (launches simultaneous within their step, docs/tactical.md): alice
    pre-plots her drone's launch at 1.3.activity; once bob's sealed allocation lets replay reach it, bob is asked
    in that step's action auction and launches his in reply at the same impulse; alice, woken by it, passes (bob
    opened the auction with his commit, so his own addition starts no new round, seed §7.D); both drones come
    out together and fly on. After every commit each player who holds control or owes something has his least
    move."""
    import json

    from pbem.services import chance
    from stuck_game import _add_entry, least

    if not ROOT:
        ROOT.append(Path(tempfile.mkdtemp(prefix="stuck-search-")))
    play = Play.open(built(2))
    ruleset = play.game.manifest.ruleset

    def launch(files: dict[str, bytes], who: str, unit: str, name: str, target: str) -> None:
        _add_entry(files, {"at": "1.3.activity", "by": who, "unit": unit,
                           "do": {"launch": {"weapon": "dr1", "as": name}}})
        chance.seal_secret(files, play.game_of(files), play.keys[who], who, "target",
                           json.dumps({"unit": name, "target": target}).encode(), "end", name)

    met: list[tuple[str, str, str]] = []
    for _ in range(60):
        if play.over or ruleset.parse_time(play.head.status.firm or "1.32.final") > ruleset.parse_time("1.8.move"):
            break
        who = play.acting()[0]
        head = play.head.status.pending[0]
        met.append((who, head.kind, head.at))

        def edit(files: dict[str, bytes], who: str = who, head: Any = head) -> None:
            least(play, who, files)
            if head.kind == "horizon" and head.player == who and head.at == "1.0.alloc":
                mine = {"through": "1.32.final", "breaks": [{"launch": {}}]}
                if who == "alice":
                    mine["plans"] = [{"unit": "M0", "from": "1.4.move", "until": "1.32.move", "do": {"pursue": "S1"}}]
                    launch(files, who, "S0", "M0", "S1")
                files[f"players/{who}.yaml"] = dump_mapping(mine).encode()
            if (who, head.kind, head.at) == ("bob", "auction", "1.3.activity") and "round 1," in head.why:
                launch(files, who, "S1", "M1", "S0")
                mine = dict(play.data("players/bob.yaml"))
                mine["plans"] = [{"unit": "M1", "from": "1.4.move", "until": "1.32.move", "do": {"pursue": "S0"}}]
                files["players/bob.yaml"] = dump_mapping(mine).encode()

        assert not play.commit(who, edit, f"{who}: {head.kind} at {head.at}"), play.log[-4:]
        assert not stuck(play), play.log[-4:]
    assert [m for m in met if m[1] == "auction"] == [("bob", "auction", "1.3.activity"),
                                                    ("alice", "auction", "1.3.activity")], met
    state = play.head.stop.checkpoint.state
    assert {u.id: u.seeking.launched_at for u in state.units if u.seeking is not None} == {
        "M0": ruleset.parse_time("1.3.activity"), "M1": ruleset.parse_time("1.3.activity")}
