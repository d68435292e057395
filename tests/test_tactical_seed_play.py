"""The tactical game as seed 000 plays it, through the CLI in real game repositories (docs/tactical.md,
docs/protocol.md): no dice while an action auction is open (§7.B), control back after a special break (§5.C),
damage known before it is scored so the damaged player can still act in the same step, with shield reinforcement
(§6.C.1, §6.C.2), and results one can see (shots, damage, the outcome).

The game is tests/test_tactical_cli_bad_input.py's: fed's CA at 0510 facing B, kli's D7 three hexes away at 0810
facing E, allocations sealed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Table, copy_table
from test_dice_flow import cli, refused, sneak_as
from test_tactical_cli_bad_input import base_game, pending, private, seal  # noqa: F401

PURSUE = {"unit": "CA", "from": "1.1.move", "until": "1.32.move", "do": {"pursue": "D7"}}


@pytest.fixture(scope="module")
def base_own_clarify(base_game: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed's own turn runs into his own plan's tie: he took the turn before the special break."""
    table = copy_table(base_game, tmp_path_factory.mktemp("seed") / "own-clarify")
    table.turn("fed", through="1.0.alloc", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 16}}])
    table.turn("kli", through="1.32.final", breaks=[{"at": "1.5.move"}])
    seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 16}}})
    seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
    assert pending(table) == [("fed", "horizon")]
    table.edit("fed", through="1.32.final", breaks=[{"at": "1.5.move"}])
    table.write("players/fed.yaml", table.read("players/fed.yaml") + f"plans: [{json.dumps(PURSUE)}]\n")
    table.turn("fed", note="pursuing the D7")
    held = table.data("status.yaml")["pending"][0]
    assert (held["player"], held["kind"], held["at"]) == ("fed", "clarify", "1.2.move"), held
    return table


def test_special_break_then_back__control_returns_to_the_player_who_was_in_control(
        base_own_clarify: Table, tmp_path: Path) -> None:
    """Seed §5.C: the owner answers the special break "then pass[es] control of the game back to the current
    player". fed took the turn that met the tie; after his answer both explicit breaks at 1.5.move are met, and
    fed, who was in control, is served first (plain table order after the answerer would have served kli)."""
    table = private(base_own_clarify, tmp_path)
    table.turn("fed", entries=[{"at": "1.2.move", "unit": "CA", "do": {"move": "TR"}}], note="TR")
    assert pending(table) == [("fed", "at"), ("kli", "at")]
    assert table.data("status.yaml")["firm"] == "1.5.activity"


def test_special_break__an_answer_from_someone_else_is_refused(base_own_clarify: Table, tmp_path: Path) -> None:
    """Bad input: kli answers fed's special break for him (an entry for fed's CA at 1.2.move). `pbem yield`
    refuses it: only fed holds control; the same commit made with plain git is found by the verifier."""
    table = private(base_own_clarify, tmp_path)
    table.edit("kli", entries=[{"at": "1.2.move", "unit": "CA", "do": {"move": "SR"}}])
    refused(table, "yield", who="kli", rule="signature.not-in-control", where="status.yaml")
    sneak_as(table, "kli", "kli: answering for fed")
    done = table.cli("verify")
    assert done.exit_code == 1 and "[signature.not-in-control]" in done.output
