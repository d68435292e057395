"""Replay resumes where the commit before stopped (DESIGN §4.2): the history walk carries one checkpoint (the
firm point and the state there) from commit to commit, and each commit's replay starts from it, so a commit
costs its own steps, never the game's. Carried wrongly, that state would judge every later commit against a
game nobody played. Here, at every commit of stored games (tests/golden), the carried checkpoint is compared
with the same point rebuilt from the game start with every entry written by then (`quiet_before`: each step
resolved, no break served again, as replay after an erratum does; a long game at fifteen of its commits),
and the step count shows each commit's replay is its own steps only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import golden
from pbem.protocol import nmr
from pbem.protocol.model import Resolved
from pbem.protocol.replay import replay, start_checkpoint
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import FOREVER, covered_by_nmr, effects_of, excused_by_nmr, without_orders
from pbem.store.repo import GameRepo
from pbem.verify import history
from pbem.verify.history import Verifier, turn_sequence

# Clean games with tactical steps, sealed speeds and seeking weapons (twirling-aces), an nmr, a resignation and a
# replacement, an erratum, revealed dice and secrets, and Diplomacy phases with a resignation.
GAMES = ("demo-duel", "demo-twirling-aces", "nmr", "forfeit", "resign-replaced", "seat-replacement-keeps",
         "errata-agreed", "dice-revealed", "seal-revealed", "dow-resign-replaced")


class _Reached(Exception):
    """Raised by the observer at the step the walk's checkpoint stands before: the state there is known."""

    def __init__(self, state: Any) -> None:
        self.state = state


def from_start(verified: Verified) -> tuple[Any, Any]:
    """(point, state) of `verified`'s checkpoint rebuilt from the game start with the game's inputs as they
    stand after its commit: every step before the checkpoint resolved again, none served again."""
    assert verified.stop is not None
    game = verified.game
    ruleset, setup = game.manifest.ruleset, game.manifest.setup
    point = verified.stop.checkpoint.point
    until = point if point is not None else FOREVER  # a game over: every step resolved
    game = without_orders(excused_by_nmr(game, verified.gone_at), {})
    inputs = nmr.horizons(covered_by_nmr(game, verified.gone_at).inputs,
                          nmr.covers_recorded(ruleset, setup, verified.gone_at))

    def observe(step: Resolved) -> None:
        if point is not None and step.point >= point:
            raise _Reached(step.begun)

    try:
        stop = replay(ruleset, setup, inputs, start_checkpoint(ruleset, setup, game.manifest.players), None,
                      quiet_before=until, settled_before=until, effects=effects_of(ruleset, verified.gone_at, None),
                      observer=observe)
    except _Reached as reached:
        return point, reached.state
    return stop.checkpoint.point, stop.checkpoint.state


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("carried")
    stored = golden.games()
    return {name: golden.unpack(name, root / name, stored[name]["branch"]) for name in GAMES}


@pytest.mark.parametrize("name", GAMES)
def test_the_carried_checkpoint_is_the_one_replay_from_the_start_reaches(
        name: str, unpacked: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "_CROSSCHECK", False)  # the readers are not what this compares
    repo = GameRepo.open(unpacked[name])
    sequence, findings = turn_sequence(repo, repo.head_oid() or "")
    assert not findings
    verifier = Verifier(repo)
    compared = 0
    every = max(1, len(sequence) // 15)  # a state carried wrongly stays wrong: a long game is sampled (cheaper)
    for i, oid in enumerate(sequence):
        result = verifier.step(oid)
        assert not result.findings, (name, oid, result.findings)
        verified = verifier.verified
        if verified is None or verified.stop is None or (i % every and i != len(sequence) - 1):
            continue  # before the start nothing is replayed yet
        carried = verified.stop.checkpoint
        point, state = from_start(verified)
        assert point == carried.point, (name, oid, point, carried.point)
        assert state == carried.state, (name, oid, carried.point)
        compared += 1
    assert compared >= 2, name


def test_each_commit_replays_only_its_own_steps(unpacked: dict[str, Path],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """In the benchmark's duel each turn after the first two moves the game on by one step: its replay resolves
    that step alone, wherever in the game it stands (so commit 10,000 costs what commit 10 does)."""
    monkeypatch.setattr(history, "_CROSSCHECK", False)
    stored = golden.games()
    path = golden.unpack("bench-verify-300", unpacked["demo-duel"].parent / "bench-verify-300",
                         stored["bench-verify-300"]["branch"])
    repo = GameRepo.open(path)
    sequence, _ = turn_sequence(repo, repo.head_oid() or "")
    verifier = Verifier(repo)
    steps = []
    for oid in sequence:
        assert not verifier.step(oid).findings
        if verifier.verified is not None and verifier.verified.stop is not None:
            steps.append(verifier.verified.stop.steps)
    assert len(steps) > 250 and set(steps[3:]) == {1}, [(i, s) for i, s in enumerate(steps) if s != 1]
