"""Commits per fire step (docs/tactical.md "Round trips per fire step"): the duel of
tests/test_tactical_cli_bad_input.py, from fed's turn that declares his shot at 1.4.fire to the step resolved
(both shots declared in one action auction, each firer rolling his own die). A regression guard: a change that
adds a handoff to every fire step shows here."""

from __future__ import annotations

from conftest import Table
from test_tactical_cli_bad_input import base_armed, base_auction, base_game, base_resolved  # noqa: F401

# fed declares; kli adds his shot; fed passes; kli passes (the auction is over); then each firer announces his
# batch, the other contributes, the firer reveals: 4 + 2 × 3 (measured: 10)
DUEL_FIRE_STEP = 10


def _count(table: Table) -> int:
    return int(table.git("rev-list", "--count", "HEAD").stdout)


def test_one_fire_step_of_a_duel_takes_this_many_commits(base_armed: Table, base_resolved: Table) -> None:  # noqa: F811
    commits = _count(base_resolved) - _count(base_armed)
    assert commits <= DUEL_FIRE_STEP, commits
    print(f"duel fire step: {commits} commits")
