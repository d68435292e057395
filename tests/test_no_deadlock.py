"""No honest deadlock (DESIGN §4.2: "no sequence of legal commits may leave a game where the player who holds
control cannot make a legal commit"), as named test vectors played through the real CLI.

`reveal-before-auction`: fed owes the reveal of his die at 1.4.fire; his own shot plotted at 1.5.fire opens an
action auction as soon as 1.4.fire resolves. The reveal is what resolves 1.4.fire, so it must land although the
auction it lets replay reach is open after it: seed 000 §7.B keeps the auction's own dice unknown, not those of
a step resolved before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Table, copy_table
from pbem.formats.writer import dump_mapping, dump_report
from test_dice_flow import cli, findings
from test_tactical_cli_bad_input import base_armed, base_game, pending  # noqa: F401

SHOT_1 = {"at": "1.4.fire", "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}}
SHOT_2 = {"at": "1.5.fire", "unit": "CA", "do": {"fire": {"weapon": "ph2", "target": "D7"}}}


def roll_through(table: Table, until: str) -> None:
    """Each player owing dice at 1.4.fire rolls or settles, until the first pending break is of kind `until`."""
    for _ in range(8):
        (who, kind), *_ = pending(table)
        if kind == until:
            return
        if kind == "roll":
            cli(table, "roll", "--for", "CA ph1", "--ref", "1.4.fire/CA/ph1", who=who)
        cli(table, "yield", who=who)
    raise AssertionError(pending(table))


@pytest.fixture
def reveal_before_auction(base_armed: Table, tmp_path: Path) -> Table:
    """fed fires ph1 at 1.4.fire and has plotted ph2 at 1.5.fire; kli passes; the dice of 1.4.fire are rolled."""
    table = copy_table(base_armed, tmp_path / "table")
    table.turn("fed", through="1.8.damage", entries=[SHOT_1, SHOT_2])
    assert pending(table) == [("kli", "auction")]
    table.turn("kli")  # passes: fed's ph1 resolves once its die is in
    assert pending(table)[0] == ("fed", "roll")
    return table


def test_reveal_before_auction__the_reveal_lands_and_the_auction_of_the_next_step_opens(
        reveal_before_auction: Table) -> None:
    table = reveal_before_auction
    roll_through(table, "auction")
    assert pending(table) == [("kli", "auction")]
    assert table.data("status.yaml")["firm"] == "1.5.fire"
    assert findings(table) == []


def test_resign_in_auction__the_seat_asked_resigns_and_the_auction_goes_on_without_him(
        base_armed: Table, tmp_path: Path) -> None:
    """`resign-in-auction`: kli is asked in the action auction at 1.4.fire and resigns. He is out of it at once
    (DESIGN §4.8: a resignation takes the seat out of every open auction and owed item): nobody waits for him,
    nobody needs an nmr against him, and fed plays on."""
    table = copy_table(base_armed, tmp_path / "table")
    table.turn("fed", through="1.8.damage", entries=[SHOT_1])
    assert pending(table) == [("kli", "auction")]
    cli(table, "resign", who="kli")
    assert all(who != "kli" for who, _kind in pending(table)), pending(table)
    assert pending(table)[0][0] == "fed"
    assert findings(table) == []


def test_nmr_at_the_end__an_nmr_against_a_reveal_owed_after_the_last_step(base_armed: Table,
                                                                         tmp_path: Path) -> None:
    """`nmr-at-the-end` (found by tests/test_stuck_search.py): every step is played, fed owes the reveal of his
    allocation and withholds it; kli's nmr against him crashed the judge (a traceback for a legal commit).
    Played in memory through the judge, as the search does."""
    from stuck_game import Play, sign_agreement

    table = copy_table(base_armed, tmp_path / "table")
    play = Play.open(table.root, table.key)
    mine = dict(play.data("players/fed.yaml") or {})
    mine["through"] = "1.32.final"
    assert not play.commit("fed", lambda files: files.__setitem__("players/fed.yaml",
                                                                   dump_mapping(mine).encode()), "to the end",
                           settle=False)  # his own reveal, due once every step is played, withheld
    while any(b.player == "kli" for b in play.head.status.pending):
        assert not play.commit("kli", lambda files: None, "settles")
    assert play.head.stop.checkpoint.point is None and [b.kind for b in play.head.status.pending] == ["secret"]
    assert not sign_agreement(play, "kli", "nmr", {"player": "fed"})
    assert play.over


@pytest.fixture(scope="session")
def three(base_three: Path) -> Path:
    """A started game of three seats (alice, bob, carol; tests/stuck_game.py), built once per run through the CLI
    (conftest `base_three`) and only read."""
    return base_three


def _sealed_orders(three: Path, first: str) -> Any:
    """Every seat orders to break on any fire, `first` through 1.2.damage and the others through the turn; the
    seals are committed: `first` is asked next."""
    from stuck_game import Play, least

    play = Play.open(three)
    for seat in ("alice", "bob", "carol"):
        through = "1.2.damage" if seat == first else "1.32.final"
        assert not play.commit(seat, lambda files, s=seat, t=through: files.__setitem__(
            f"players/{s}.yaml", dump_mapping({"through": t, "breaks": [{"fire": {}}]}).encode()), "orders")
    while any(b.kind == "sealed" for b in play.head.status.pending):
        who = next(b.player for b in play.head.status.pending if b.kind == "sealed")
        assert not play.commit(who, lambda files, w=who: least(play, w, files), "seals")
    return play


def _to_auction(three: Path) -> Any:
    """alice fires at bob at 1.3.fire; bob and carol break on any fire: the auction asks bob, then carol."""
    from stuck_game import REPORT

    play = _sealed_orders(three, first="alice")
    shot = {"at": "1.3.fire", "by": "alice", "unit": "S0", "do": {"fire": {"weapon": "ph1", "target": "S1"}}}
    assert [b.player for b in play.head.status.pending] == ["alice"]

    def fire(files: dict[str, bytes]) -> None:
        files[REPORT] = dump_report([shot]).encode()
        files["players/alice.yaml"] = dump_mapping({"through": "1.8.damage", "breaks": [{"fire": {}}]}).encode()

    assert not play.commit("alice", fire, "fires")
    assert [(b.player, b.kind) for b in play.head.status.pending] == [("bob", "auction"), ("carol", "auction")]
    return play


def test_resign_in_auction__a_seat_further_down_the_queue_resigns(three: Path) -> None:
    """`resign-in-auction-queue`: carol, second in the auction's queue, resigns while bob is asked. She is out of
    the auction at once: bob's pass closes it, nobody waits for her (an nmr against her would be refused: she
    resigned)."""
    from stuck_game import sign_agreement, stuck

    play = _to_auction(three)
    assert not sign_agreement(play, "carol", "resign", {})
    assert [(b.player, b.kind) for b in play.head.status.pending] == [("bob", "auction")]
    assert not play.commit("bob", lambda files: None, "passes")
    assert all(b.player != "carol" for b in play.head.status.pending), play.head.status.pending
    assert not stuck(play)


def test_lost_batch__the_roller_resigns_before_anyone_contributes(base_armed: Table, tmp_path: Path) -> None:
    """`contribution-to-a-lost-batch` (found by tests/test_stuck_search.py): fed announces the die of his shot and
    resigns before kli contributes; the batch is lost (its roller's reveal withheld by his resign). When kli next
    yields (his allocation's reveal is owed at the end), `pbem yield` contributed to the lost batch as well and
    was refused (dice.withheld): kli could never commit again. A lost batch is owed nothing."""
    from stuck_game import Play, announce, sign_agreement, stuck

    table = copy_table(base_armed, tmp_path / "table")
    play = Play.open(table.root, table.key)
    orders = {"through": "1.8.damage", "breaks": [{"fire": {}}]}

    def fire(files: dict[str, bytes]) -> None:
        files["report/turn-01.yaml"] = dump_report([{**SHOT_1, "by": "fed"}]).encode()
        files["players/fed.yaml"] = dump_mapping(orders).encode()

    assert not play.commit("fed", fire, "fires")
    assert not play.commit("kli", lambda files: None, "passes")
    assert [(b.player, b.kind) for b in play.head.status.pending] == [("fed", "roll")]
    assert not play.commit("fed", lambda files: announce(play, "fed", files), "rolls")
    assert [(b.player, b.kind) for b in play.head.status.pending][:1] == [("kli", "dice")]
    assert not sign_agreement(play, "fed", "resign", {})
    assert play.game.batches["fed-0001"].lost() is not None
    assert not stuck(play)
    while not play.over:
        assert not play.commit("kli", lambda files: None, "yields"), play.head.status.pending


def moot_batch_in_auction(three: Path) -> Any:
    """bob's die for his shot at alice's ship at 1.3.fire announced, alice resigned before anyone contributed:
    the shot is void, 1.3.fire resolved without it, bob's batch still open, and his shot at carol at 1.5.fire
    opens an action auction that asks carol."""
    from stuck_game import REPORT, announce, sign_agreement

    play = _sealed_orders(three, first="bob")
    assert [b.player for b in play.head.status.pending] == ["bob"]
    shots = [{"at": "1.3.fire", "by": "bob", "unit": "S1", "do": {"fire": {"weapon": "ph1", "target": "S0"}}},
             {"at": "1.5.fire", "by": "bob", "unit": "S1", "do": {"fire": {"weapon": "ph2", "target": "S2"}}}]

    def fire(files: dict[str, bytes]) -> None:
        files[REPORT] = dump_report(shots).encode()
        files["players/bob.yaml"] = dump_mapping({"through": "1.8.damage", "breaks": [{"fire": {}}]}).encode()

    assert not play.commit("bob", fire, "fires")
    while [b.kind for b in play.head.status.pending][:1] == ["auction"]:
        who = play.head.status.pending[0].player
        assert not play.commit(who, lambda files: None, "passes")
    assert [(b.player, b.kind) for b in play.head.status.pending] == [("bob", "roll")]
    assert not play.commit("bob", lambda files: announce(play, "bob", files), "rolls")
    assert {b.player for b in play.head.status.pending if b.kind == "dice"} >= {"alice", "carol"}
    assert not sign_agreement(play, "alice", "resign", {})
    return play


def test_moot_batch_in_auction__contributions_to_a_batch_whose_shot_went_void_land_in_a_later_auction(
        three: Path) -> None:
    """`moot-batch-in-auction` (found by bench/stuck_search.py): bob's shot at alice's ship at 1.3.fire waits for
    its die; alice resigns before anyone contributes, her ship leaves the map, the shot is void and 1.3.fire
    resolves without it, and bob's shot at carol at 1.5.fire opens an action auction. bob's batch is still
    open (a batch whose step is resolved is never voided), so carol owes her contribution to it, and `pbem yield`
    wrote it with her pass: it was refused (dice.auction-open) and she could never commit again. Dice whose
    every ref is at a step resolved before the auction's tell its bidders nothing: they land."""
    from stuck_game import least, stuck

    play = moot_batch_in_auction(three)
    status = play.head.status
    assert status.firm == "1.5.fire", status
    assert ("carol", "auction") in [(b.player, b.kind) for b in status.pending], status.pending
    assert ("carol", "dice") in [(b.player, b.kind) for b in status.pending], status.pending
    assert not stuck(play)
    for _ in range(12):  # the auction closes, the dice of both batches are rolled, 1.5.fire resolves
        if play.over or play.head.status.firm != "1.5.fire":
            break
        who = play.acting()[0]
        assert not play.commit(who, lambda files, w=who: least(play, w, files), "least"), play.head.status.pending
    assert play.over or play.head.status.firm != "1.5.fire", play.head.status.pending
    assert play.game.batches["bob-0001"].results is not None  # the moot batch is done, its dice count for nothing
