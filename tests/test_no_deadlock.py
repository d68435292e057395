"""No honest deadlock (DESIGN §4.2: "no sequence of legal commits may leave a game where the player who holds
control cannot make a legal commit"), as named test vectors played through the real CLI.

`reveal-before-auction`: fed owes the reveal of his die at 1.4.fire; his own shot plotted at 1.5.fire opens an
action auction as soon as 1.4.fire resolves. The reveal is what resolves 1.4.fire, so it must land although the
auction it lets replay reach is open after it: seed 000 §7.B keeps the auction's own dice unknown, not those of
a step resolved before it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Table, copy_table
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
