"""Only turns move control (DESIGN §4.8, last lines): a commit that only signs, posts press or proposes an
agreement leaves control, the firm point and every owed break exactly as they were, whoever makes it; inside
an action auction and at a horizon break, by the player in control and by one who is not. Played through the
real CLI (`pbem agree`, `pbem sign`, a press line and `pbem yield`), and by plain git (a hand-made commit the
verifier judges), on the tactical game of tests/test_tactical_cli_bad_input.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import Table, copy_table
from test_attacks import post_in
from test_dice_flow import cli, findings, sneak_as
from test_tactical_cli_bad_input import base_armed, base_game, pending  # noqa: F401

FED_SHOT = {"at": "1.4.fire", "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}}


def held(table: Table) -> dict[str, Any]:
    """What no out-of-turn commit may change: control, the firm point, every pending break."""
    status = table.data("status.yaml")
    return {k: status.get(k) for k in ("control", "firm", "pending")}


def press(table: Table, who: str) -> None:
    post_in(table, f"press/{who}.yaml", {"by": who, "at": table.data("status.yaml")["firm"], "say": "hello"})
    cli(table, "yield", who=who)


def propose(table: Table, who: str) -> None:
    cli(table, "agree", "amend", "--deadline", "96h", who=who)


def sign(table: Table, who: str) -> None:
    other = "kli" if who == "fed" else "fed"
    cli(table, "agree", "amend", "--deadline", "96h", who=other)
    newest = max(p.stem for p in (table.repo_dir / "agreements").glob(f"{other}-*.yaml"))
    cli(table, "sign", newest, who=who)


ACTS: dict[str, Callable[[Table, str], None]] = {"press": press, "propose": propose, "sign": sign}


@pytest.fixture
def horizon(base_armed: Table, tmp_path: Path) -> Table:
    """fed holds control at 1.4.move: his horizon ended; kli holds none."""
    table = copy_table(base_armed, tmp_path / "table")
    assert pending(table) == [("fed", "horizon")]
    return table


@pytest.fixture
def auction(base_armed: Table, tmp_path: Path) -> Table:
    """fed declared ph1 at 1.4.fire: the action auction asks kli."""
    table = copy_table(base_armed, tmp_path / "table")
    table.turn("fed", through="1.8.damage", entries=[FED_SHOT])
    assert pending(table) == [("kli", "auction")]
    return table


# (state, act, who, whether he holds control there)
CASES = [(state, act, who, in_control)
         for state, controller in (("horizon", "fed"), ("auction", "kli"))
         for act in ACTS
         for who, in_control in ((controller, True), ("kli" if controller == "fed" else "fed", False))]


@pytest.mark.parametrize(("state", "act", "who", "in_control"), CASES,
                         ids=[f"{s}-{a}-{'in' if c else 'out'}-of-control" for s, a, _w, c in CASES])
def test_an_out_of_turn_act_leaves_control_and_every_break_as_it_was(
        request: pytest.FixtureRequest, state: str, act: str, who: str, in_control: bool) -> None:
    table: Table = request.getfixturevalue(state)
    before = held(table)
    assert (before["control"] == who) == in_control
    ACTS[act](table, who)
    assert held(table) == before
    assert findings(table) == []
    # the player in control still moves the game on with his turn
    controller = before["control"]
    table.turn(controller, through="1.8.damage")
    assert held(table) != before


@pytest.mark.parametrize("state", ["horizon", "auction"])
def test_a_press_commit_by_plain_git_that_serves_the_break_is_refused(request: pytest.FixtureRequest,
                                                                     state: str) -> None:
    """The same press by the player in control, committed with plain git and a status.yaml that hands his break
    on: the verifier computes the break as still his (status.mismatch)."""
    table: Table = request.getfixturevalue(state)
    controller = table.data("status.yaml")["control"]
    before = held(table)
    post_in(table, f"press/{controller}.yaml", {"by": controller, "at": before["firm"], "say": "over to you"})
    sneak_as(table, controller, "press only")
    assert held(table) == before  # what the computed status says: unchanged
    status = table.data("status.yaml")
    other = "kli" if controller == "fed" else "fed"
    table.write("status.yaml", table.read("status.yaml").replace(f"control: {controller}", f"control: {other}"))
    table.git("reset", "-q", "--soft", "HEAD~1")
    table.sneak(controller, "press only, break handed on", status="keep")
    assert status["control"] == controller
    assert {f["rule"] for f in findings(table)} == {"status.mismatch"}
