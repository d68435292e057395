"""Energy counted together (seed 000 §2.C: one allocation pays for the whole turn): with `speeds: sealed` only the
turn's speeds are opened when it starts; the rest of each allocation stays sealed until the battle is over, so
no shot can be refused for it when given. When the box is opened at the end, every shot of a unit, in one step
and across the turn, is counted against it together: two shots that each fit but together do not make the
reveal fail (`rules.allocation`, at the key line, naming every short line), a reserve covering the shortfall
pays, and the others then record the cheater's forfeit.

Built through the CLI on the secret-speeds game of test_tactical_secret_speeds: fed's CA (power 10; ph1 and ph2,
energy 1 each) three hexes from kli's D7, both at speed 0, a battle of one turn.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conftest import Table, copy_table
from test_dice_flow import cli, findings, refused
from test_tactical_cli_bad_input import fired, pending, seal
from test_tactical_secret_speeds import base_started, key_line  # noqa: F401  (the module fixture)


def shots(table: Table, *at_weapon: tuple[str, str]) -> list[dict[str, Any]]:
    return [{k: v for k, v in fired("fed", "CA", at, weapon, "D7").items() if k != "by"} for at, weapon in at_weapon]


def settle(table: Table) -> None:
    """Roll what fed's shots owe (each firer rolls, the other contributes, the roller reveals) until somebody
    owes orders again or the game is over."""
    for _ in range(20):
        status = table.data("status.yaml")
        if status["over"] or status["pending"][0]["kind"] == "horizon" or \
                status["pending"][0]["why"].startswith("reveal owed for secret"):
            return
        first = status["pending"][0]
        if first["kind"] == "roll":
            ref = re.search(r"\d+\.\d+\.fire/CA/\w+", first["why"])
            assert ref is not None, first
            cli(table, "roll", "--for", ref.group(0), "--ref", ref.group(0), who=first["player"])
        cli(table, "yield", who=first["player"])
    raise AssertionError(f"still owed: {pending(table)}")


def revealed(base: Table, tmp_path: Path, line: dict[str, Any], ahead: list[dict[str, Any]] = ()) -> Table:
    """fed's orders reach 1.3.damage (with `ahead` written before the allocations), kli's the end of the turn;
    both seal and open their speeds: fed then holds control at 1.4.move, the rest of each allocation sealed."""
    table = copy_table(base, tmp_path / "table")
    table.turn("fed", through="1.3.damage", entries=ahead)
    table.turn("kli", through="1.32.final")
    seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
    seal(table, "fed", {"turn": 1, "units": {"CA": line}})
    cli(table, "yield", who="kli")
    cli(table, "yield", who="fed")
    return table


# (name, fed's allocation line for the CA, the commits fed makes (each: its shots (step, weapon) and horizon),
#  what the audit of fed's allocation says when it is opened at the end (None: it pays))
TOGETHER = [
    ("one-shot-paid", {"speed": 0, "weapons": 1}, [([("1.4.fire", "ph1")], "1.32.final")], None),
    ("two-shots-paid", {"speed": 0, "weapons": 2}, [([("1.4.fire", "ph1"), ("1.4.fire", "ph2")], "1.32.final")],
     None),
    ("two-shots-one-step-one-paid", {"speed": 0, "weapons": 1},
     [([("1.4.fire", "ph1"), ("1.4.fire", "ph2")], "1.32.final")], "weapons used (ph1, ph2) cost 2, 1 allocated"),
    ("reserve-pays-the-second", {"speed": 0, "weapons": 1, "reserve": 1},
     [([("1.4.fire", "ph1"), ("1.4.fire", "ph2")], "1.32.final")], None),
    ("reserve-alone-pays-one", {"speed": 0, "reserve": 1},
     [([("1.4.fire", "ph1"), ("1.4.fire", "ph2")], "1.32.final")], "weapons used (ph1, ph2) cost 2, 0 allocated"),
    ("second-shot-in-a-later-commit-of-the-turn", {"speed": 0, "weapons": 1},
     [([("1.4.fire", "ph1")], "1.7.damage"), ([("1.8.fire", "ph2")], "1.32.final")],
     "weapons used (ph1, ph2) cost 2, 1 allocated"),
]


@pytest.mark.parametrize("name, line, commits, audit", TOGETHER, ids=[t[0] for t in TOGETHER])
def test_seed_2_c_a_units_shots_count_together_against_its_allocation(
        base_started: Table, tmp_path: Path, name: str, line: dict, commits: list, audit: str | None) -> None:
    table = revealed(base_started, tmp_path, line)
    assert pending(table)[0] == ("fed", "horizon"), pending(table)
    for fire_at, through in commits:
        table.turn("fed", through=through, entries=shots(table, *fire_at))  # never refused: nobody can see why
        settle(table)
    assert sorted(pending(table)) == [("fed", "secret"), ("kli", "secret")], pending(table)  # the battle is over
    cli(table, "yield", who="kli")
    if audit is None:
        cli(table, "yield", who="fed")
        assert table.data("status.yaml")["over"] is True and findings(table) == []
        return
    error = refused(table, "yield", who="fed", rule="rules.allocation", where=key_line(table, "fed-0001"))
    assert audit in error, error
    assert findings(table) == []


def test_plain_git_an_opening_that_does_not_pay_is_found(base_started: Table, tmp_path: Path) -> None:
    """The verifier (hook, workflow) counts them together too: fed's reveal made with plain git is found, at its
    key line, in his commit."""
    from test_dice_flow import sneak_as
    from pbem.services import chance
    from pbem.services.workspace import Workspace, load_identity

    table = revealed(base_started, tmp_path, {"speed": 0, "weapons": 1})
    table.turn("fed", through="1.32.final", entries=shots(table, ("1.4.fire", "ph1"), ("1.4.fire", "ph2")))
    settle(table)
    cli(table, "yield", who="kli")
    ws = Workspace.open(table.repo_dir)
    files = ws.worktree_files()
    chance.reveal_secret(files, ws.game_of(files), load_identity(str(table.key("fed")), table.repo_dir), "fed",
                         "fed-0001")
    table.write("secrets/fed-0001.yaml", files["secrets/fed-0001.yaml"].decode())
    where = int(key_line(table, "fed-0001").rsplit(":", 1)[1]) - 1
    head = sneak_as(table, "fed", "fed: my allocation opened")
    got = findings(table)
    assert [(f["rule"], f.get("file"), f.get("line"), f.get("commit")) for f in got] == [
        ("rules.allocation", "secrets/fed-0001.yaml", where, head)], got
