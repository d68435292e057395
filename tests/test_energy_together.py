"""Energy counted together (seed 000 §2.C: one allocation pays for the whole turn): with `speeds: sealed` the turn's
allocations are revealed before it is played, and every shot of a unit in one step, and in the turn, is counted
against its allocation together. Two shots that each fit but together do not are not both accepted: the commit
that makes the sum exceed it is refused (`rules.unpaid-action`), and where that could not be known when the
entries were written (they came before the reveal, or the first shot was at an earlier step of the same commit),
the shot beyond the allocation is void at replay and never fires.

Built through the CLI on the secret-speeds game of test_tactical_secret_speeds: fed's CA (power 10; ph1 and ph2,
energy 1 each) three hexes from kli's D7, both at speed 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import Table, copy_table
from test_dice_flow import cli, findings, refused
from test_tactical_cli_bad_input import REPORT, fired, line_of, pending, seal
from test_tactical_secret_speeds import base_started  # noqa: F401  (the module fixture)


def shots(table: Table, *at_weapon: tuple[str, str]) -> list[dict[str, Any]]:
    return [{k: v for k, v in fired("fed", "CA", at, weapon, "D7").items() if k != "by"} for at, weapon in at_weapon]


def settle(table: Table) -> None:
    """Roll what fed's shots owe (each firer rolls, the other contributes, the roller reveals) until somebody
    owes orders again or the game is over."""
    for _ in range(20):
        status = table.data("status.yaml")
        if status["over"] or status["pending"][0]["kind"] == "horizon":
            return
        first = status["pending"][0]
        if first["kind"] == "roll":
            ref = re.search(r"\d+\.\d+\.fire/CA/\w+", first["why"])
            assert ref is not None, first
            cli(table, "roll", "--for", ref.group(0), "--ref", ref.group(0), who=first["player"])
        cli(table, "yield", who=first["player"])
    raise AssertionError(f"still owed: {pending(table)}")


def void_weapons(table: Table) -> list[str]:
    """The weapons of fed's entries replay found void (the history's last state)."""
    from pbem.services.workspace import Workspace

    last = Workspace.open(table.repo_dir).history().last
    assert last is not None and last.stop is not None
    return [v.do["fire"]["weapon"] for v in last.stop.checkpoint.voids if v.player == "fed"]


def reveal(base: Table, root: Path, line: dict[str, Any], ahead: Sequence[dict[str, Any]] = ()) -> Table:
    """fed's orders reach 1.3.damage (with `ahead` written before the allocations), kli's the end of the turn;
    both seal and reveal: fed then holds control at 1.4.move, the turn's allocations public."""
    table = copy_table(base, root)
    table.turn("fed", through="1.3.damage", entries=ahead)
    table.turn("kli", through="1.32.final")
    seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
    seal(table, "fed", {"turn": 1, "units": {"CA": line}})
    cli(table, "yield", who="kli")
    cli(table, "yield", who="fed")
    return table


Revealed = Callable[[dict[str, Any], Sequence[dict[str, Any]]], Table]


@pytest.fixture(scope="module")
def built_reveals() -> dict[str, Table]:
    """Each revealed game (`reveal`) built once for the module, by its allocation line and orders ahead."""
    return {}


@pytest.fixture
def revealed(base_started: Table, built_reveals: dict[str, Table], tmp_path_factory: pytest.TempPathFactory,
             tmp_path: Path) -> Revealed:
    """`revealed(line, ahead)`: a private copy of the game `reveal` builds (tests share the same builds)."""
    def copy(line: dict[str, Any], ahead: Sequence[dict[str, Any]] = ()) -> Table:
        key = json.dumps([line, list(ahead)], sort_keys=True)
        if key not in built_reveals:
            built_reveals[key] = reveal(base_started, tmp_path_factory.mktemp("revealed") / "table", line, ahead)
        return copy_table(built_reveals[key], tmp_path / "table")

    return copy


# (name, fed's allocation line for the CA, the commits fed makes (each: its shots (step, weapon) and horizon),
#  the weapon whose entry is refused (None: every commit accepted), the weapons found void at replay)
TOGETHER = [
    ("one-shot-paid", {"speed": 0, "weapons": 1}, [([("1.4.fire", "ph1")], "1.32.final")], None, []),
    ("two-shots-paid", {"speed": 0, "weapons": 2}, [([("1.4.fire", "ph1"), ("1.4.fire", "ph2")], "1.32.final")],
     None, []),
    ("two-shots-one-step-one-paid", {"speed": 0, "weapons": 1},
     [([("1.4.fire", "ph1"), ("1.4.fire", "ph2")], "1.32.final")], "ph2", []),
    ("reserve-pays-the-second", {"speed": 0, "weapons": 1, "reserve": 1},
     [([("1.4.fire", "ph1"), ("1.4.fire", "ph2")], "1.32.final")], None, []),
    ("reserve-alone-pays-one", {"speed": 0, "reserve": 1},
     [([("1.4.fire", "ph1"), ("1.4.fire", "ph2")], "1.32.final")], "ph2", []),
    ("second-shot-in-a-later-commit-of-the-turn", {"speed": 0, "weapons": 1},
     [([("1.4.fire", "ph1")], "1.7.damage"), ([("1.8.fire", "ph2")], "1.32.final")], "ph2", []),
    ("second-shot-later-in-the-same-commit", {"speed": 0, "weapons": 1},
     [([("1.4.fire", "ph1"), ("1.8.fire", "ph2")], "1.32.final")], None, ["ph2"]),
]


@pytest.mark.parametrize("name, line, commits, refused_weapon, void", TOGETHER, ids=[t[0] for t in TOGETHER])
def test_seed_2_c_a_units_shots_count_together_against_its_allocation(
        revealed: Revealed, name: str, line: dict, commits: list, refused_weapon: str | None,
        void: list[str]) -> None:
    table = revealed(line, ())
    assert pending(table)[0] == ("fed", "horizon"), pending(table)
    for i, (fire_at, through) in enumerate(commits):
        table.edit("fed", through=through, entries=shots(table, *fire_at))
        last = i == len(commits) - 1
        if last and refused_weapon is not None:
            where = f"{REPORT}:{line_of(table, REPORT, f'weapon: {refused_weapon}')}"
            error = refused(table, "yield", who="fed", rule="rules.unpaid-action", where=where)
            assert "its revealed allocation cannot pay for it" in error, error
            return
        cli(table, "yield", who="fed")
        settle(table)
    assert findings(table) == []
    assert void_weapons(table) == void


def test_seed_2_c_shots_written_before_the_reveal_fire_only_as_far_as_the_allocation_pays(
        base_started: Table, revealed: Revealed) -> None:
    """Two shots given before anybody's allocation is public cannot be judged against it: both are accepted, and
    at replay the first fires and the second, beyond the allocation, is void (the turn's audit then passes)."""
    ahead = shots(base_started, ("1.4.fire", "ph1"), ("1.4.fire", "ph2"))
    table = revealed({"speed": 0, "weapons": 1}, ahead)
    table.turn("fed", through="1.32.final")
    settle(table)
    assert findings(table) == []
    assert void_weapons(table) == ["ph2"]


def test_plain_git_two_shots_beyond_the_allocation_are_found(revealed: Revealed) -> None:
    """The verifier (hook, workflow) counts them together too: a commit made with plain git is found."""
    from test_dice_flow import sneak_as

    table = revealed({"speed": 0, "weapons": 1}, ())
    table.edit("fed", through="1.32.final", entries=shots(table, ("1.4.fire", "ph1"), ("1.4.fire", "ph2")))
    where = line_of(table, REPORT, "weapon: ph2")
    head = sneak_as(table, "fed", "fed: two shots on one phaser's energy")
    got = findings(table)
    assert [(f["rule"], f.get("file"), f.get("line"), f.get("commit")) for f in got] == [
        ("rules.unpaid-action", REPORT, where, head)], got
