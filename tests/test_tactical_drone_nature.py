"""A seeking weapon's nature (seed 000 §2.C): the launcher seals, with the target in the launch commit, whether the
weapon is `real` or a `dummy`; nobody learns which until he reveals it when it meets its prey. A dummy does no
damage and vanishes; a real one hits. Built through the CLI on test_tactical_cli_bad_input's game: kli's D7 launches
S1 at 1.1.activity, S1 pursues fed's CA (three hexes off) and meets it; kli owes the reveal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Table, copy_table
from test_dice_flow import cli, findings
from test_tactical_cli_bad_input import base_game, pending, seal  # noqa: F401  (a fixture, built for this module)


def launched(base: Table, root: Path, target: dict[str, Any]) -> Table:
    """kli launches S1 pursuing the CA, its target file `target` sealed in the launch commit; played to contact."""
    table = copy_table(base, root / "table")
    table.turn("fed", through="1.32.final")
    plan = {"unit": "S1", "from": "1.2.move", "until": "1.32.move", "do": {"pursue": "CA"}}
    table.edit("kli", through="1.32.final",
               entries=[{"at": "1.1.activity", "unit": "D7", "do": {"launch": {"weapon": "dr1", "as": "S1"}}}])
    table.write("players/kli.yaml", table.read("players/kli.yaml") + f"plans: [{json.dumps(plan)}]\n")
    source = root / "target.json"
    source.write_text(json.dumps(target))
    cli(table, "seal", "target", str(source), "--concerns", "S1", who="kli")
    table.turn("kli", note="a drone, its target (and nature) sealed")
    seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
    seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 0}}})
    for _ in range(6):  # a tie of the pursuit: its last option, until S1 meets the CA and kli reveals
        held = table.data("status.yaml")["pending"][0]
        if held["kind"] != "clarify":
            break
        table.turn("kli", entries=[{"at": held["at"], "unit": "S1", "do": held["options"][-1]}])
    # kli's last turn revealed S1's target, owed at contact (pbem yield settles what its player owes); the battle is
    # over, and each then opens his allocation (never in the commit that ended it: secret.early-reveal)
    assert sorted(pending(table)) == [("fed", "secret"), ("kli", "secret")], cli(table, "log")
    cli(table, "yield", who="fed")
    cli(table, "yield", who="kli")
    return table


def units(table: Table) -> dict[str, Any]:
    from pbem.services.workspace import Workspace

    last = Workspace.open(table.repo_dir).history().last
    assert last is not None and last.stop is not None
    return {u.id: u for u in last.stop.checkpoint.state.units}


NATURES = [
    # (name, the sealed file, S1's status after the reveal, the CA's shields after it)
    ("real-by-default", {"unit": "S1", "target": "CA"}, "expended", 14),
    ("real", {"unit": "S1", "target": "CA", "nature": "real"}, "expended", 14),
    ("dummy", {"unit": "S1", "target": "CA", "nature": "dummy"}, "dummy", 20),
]


@pytest.mark.parametrize("name, sealed, status, shield", NATURES, ids=[n[0] for n in NATURES])
def test_seed_2_c_a_dummy_vanishes_a_real_drone_hits(base_game: Table, tmp_path: Path, name: str,  # noqa: F811
                                                   sealed: dict, status: str, shield: int) -> None:
    table = launched(base_game, tmp_path, sealed)
    after = units(table)
    assert after["S1"].status == status and after["S1"].hex is None
    assert min(after["CA"].shields) == shield, after["CA"].shields
    assert findings(table) == []
    log = cli(table, "log")
    assert "S1" in log and ("dummy" in log) == (status == "dummy"), log
