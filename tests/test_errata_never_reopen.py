"""Errata correct, never re-open (DESIGN §4.8): after an erratum only the corrected entries differ; the breaks
served at the corrected step stay served (no damage reply is asked again, no action auction opens again), and no
new action is accepted at a corrected step whose dice are known (erratum.new-action). Played through the real
CLI on the damage-reply game of tests/test_tactical_seed_play.py: fed's ph1 hits kli's D7 at 1.4.fire, kli
reinforces the shield hit with 4 points in his reply."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Table, copy_table
from test_dice_flow import cli, findings, refused
from test_tactical_cli_bad_input import base_game, pending  # noqa: F401
from test_tactical_seed_play import base_damaged, shield_hit  # noqa: F401

REPORT = "report/turn-01.yaml"


@pytest.fixture
def reinforced(base_damaged: Table, tmp_path: Path) -> Table:
    table = copy_table(base_damaged, tmp_path / "table")
    shield = shield_hit(table)
    table.turn("kli", entries=[{"at": "1.4.fire", "unit": "D7", "do": {"reinforce": {"shield": shield,
                                                                                      "points": 4}}}])
    assert table.data("status.yaml")["firm"] == "1.9.move"
    return table


def newest(table: Table, who: str) -> str:
    return max(p.stem for p in (table.repo_dir / "agreements").glob(f"{who}-*.yaml"))


@pytest.mark.parametrize("correction", ["3 points, not 4", "no reinforcement at all"])
def test_an_erratum_of_a_reinforcement_serves_no_reply_again(reinforced: Table, correction: str) -> None:
    """kli's reinforcement was 3 points, not 4 (or none at all, so the hit now scores): the erratum changes that
    entry and nothing else; the reply break kli was served at 1.4.fire is not served again (he could otherwise
    reply a second time knowing every die of the step), the game stands where it stood."""
    table = reinforced
    before = table.data("status.yaml")
    lines = table.read(REPORT).splitlines(keepends=True)
    mine = [i for i, line in enumerate(lines) if "points: 4}" in line]
    assert len(mine) == 1
    lines[mine[0]] = lines[mine[0]].replace("points: 4}", "points: 3}") if correction.startswith("3") else ""
    table.write(REPORT, "".join(lines))
    cli(table, "erratum", "propose", "--reason", correction, who="kli")
    cli(table, "sign", newest(table, "kli"), who="fed")
    after = table.data("status.yaml")
    assert ("points: 3}" in table.read(REPORT)) == correction.startswith("3")
    assert not any(b["kind"] == "reply" for b in after["pending"]), after
    assert (after["firm"], after["control"], after["pending"]) == (before["firm"], before["control"],
                                                                  before["pending"])
    assert findings(table) == []


def test_an_erratum_adding_a_shot_where_the_dice_are_known_is_refused(reinforced: Table) -> None:
    """Threat: fed, knowing both dice of 1.4.fire, proposes an erratum that adds a second shot there. Defence:
    an erratum adds no new action at a step whose dice are known (erratum.new-action); nothing changes."""
    table = reinforced
    text = table.read(REPORT)
    table.write(REPORT, text.rstrip("\n") + "\n  - {at: 1.4.fire, by: fed, unit: CA, do: {fire: {weapon: ph2, "
                "target: D7}}}\n")
    refused(table, "erratum", "propose", "--reason", "I fired ph2 as well", who="fed", rule="erratum.new-action",
            where="agreements/fed-0002.yaml:8")
