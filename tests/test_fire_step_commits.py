"""Commits per fire step (docs/tactical.md "Round trips per fire step"): the duel of
tests/test_tactical_cli_bad_input.py, from fed's turn that declares his shot at 1.4.fire to the step resolved
(both shots declared in one action auction, each firer rolling his own die), by hand and with `pbem watch`
settling what needs no decision. A regression guard: a change that adds a handoff to every fire step shows here.
bench/fire_step_commits.py measures the same with three players."""

from __future__ import annotations

from pathlib import Path

from conftest import Table, copy_table
from pbem.services import watch
from pbem.services.workspace import Identity, Workspace, load_identity
from test_dice_flow import cli
from test_tactical_cli_bad_input import base_armed, base_auction, base_game, base_resolved  # noqa: F401

# fed declares; kli adds his shot; fed passes (the auction is over: kli, who added last, has nothing new to see);
# then each firer announces his batch, the other contributes, the firer reveals: 3 + 2 × 3 (measured: 9; 10
# while the auction asked kli again)
DUEL_FIRE_STEP = 9
# the same step with both watches running: the players decide the declarations, the pass and announcements
# (5 commits); the watches give the contributions and the reveals (4 commits)
DUEL_DECISIONS = 5


def count(table: Table) -> int:
    return int(table.git("rev-list", "--count", "HEAD").stdout)


def identity(table: Table, who: str) -> Identity:
    return load_identity(str(table.key(who)), table.repo_dir)


def settle_by_watch(table: Table, seats: tuple[str, ...]) -> int:
    """Each seat's watch settles what it owes without a decision (`pbem watch`'s own settle step, on the one
    shared clone: nothing to pull or push); the commits it made."""
    made = 0
    for who in seats:
        if watch.settle_owed(Workspace.open(table.repo_dir), identity(table, who)):
            made += 1
    return made


def resolve(table: Table, seats: tuple[str, ...], units: dict[str, str], watched: bool) -> tuple[int, int]:
    """Play the announced fire step to its end: each firer rolls for his shot (`pbem roll`, then `pbem yield`);
    by hand, every contribution and reveal is a `pbem yield` of its owner; with `watched`, the watches settle
    them. Returns (commits by players, commits by watches) until a player needs orders."""
    by_hand = by_watch = 0
    for _ in range(40):
        if watched:
            made = settle_by_watch(table, seats)
            by_watch += made
            if made:
                continue
        owed = table.data("status.yaml")["pending"]
        first = owed[0]
        if first["kind"] == "horizon":
            return by_hand, by_watch
        who = first["player"]
        if first["kind"] == "roll":
            unit = units[who]
            cli(table, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(table, "yield", who=who)
        by_hand += 1
    raise AssertionError(table.data("status.yaml"))


def test_one_fire_step_of_a_duel_takes_this_many_commits(base_armed: Table, base_resolved: Table) -> None:  # noqa: F811
    commits = count(base_resolved) - count(base_armed)
    assert commits <= DUEL_FIRE_STEP, commits
    print(f"duel fire step: {commits} commits")


def test_with_pbem_watch_the_players_make_only_the_decisions(base_auction: Table, base_armed: Table,  # noqa: F811
                                                              tmp_path: Path) -> None:
    table = copy_table(base_auction, tmp_path / "watched")
    declared = count(base_auction) - count(base_armed)  # declare, add, pass: each a decision
    by_hand, by_watch = resolve(table, ("fed", "kli"), {"fed": "CA", "kli": "D7"}, watched=True)
    assert declared + by_hand <= DUEL_DECISIONS, (declared, by_hand)
    assert declared + by_hand + by_watch <= DUEL_FIRE_STEP, (declared, by_hand, by_watch)
    assert by_watch > 0
    print(f"duel fire step with watch: {declared + by_hand} decisions, {by_watch} commits by the watches")
