"""A game with `allocation: sealed` (DESIGN §4.7, seed 000 §2.C): each turn's allocation step waits until every
player with a ship has sealed his energy allocation, in any order and without holding control; the
allocations are revealed at the end and audited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import TEACHING_DUEL, Table, _build, copy_table
from test_tactical_cli_bad_input import base_game  # noqa: F401 (a fixture)

# the duel with open allocations and public speeds, made here to seal the allocations alone (speeds stay entries)
GAME = (TEACHING_DUEL / "game.yaml").read_text()


@pytest.fixture
def sealed_game(tmp_path: Path) -> Table:
    template = tmp_path / "template"
    template.mkdir()
    text = GAME.replace("  turns: 4\n", "  turns: 1\n  allocation: sealed\n")
    assert "allocation: sealed" in text
    (template / "game.yaml").write_text(text)
    return _build(tmp_path / "table", str(template), "sealed-ea")


def status(table: Table) -> dict:
    return json.loads(table.pbem("status", "--format", "json", who="fed").stdout)["status"]


def test_the_allocation_step_waits_for_every_sealed_allocation(sealed_game: Table, tmp_path: Path) -> None:
    table = sealed_game
    for who, unit in (("fed", "CA"), ("kli", "D7")):
        table.write(f"players/{who}.yaml", 'through: "1.32.final"\n')
        done = table.pbem("yield", "-m", "orders", who=who)
        assert done.returncode == 0, done.stderr
    pending = [(b["player"], b["kind"]) for b in status(table)["pending"]]
    assert pending == [("fed", "sealed"), ("kli", "sealed")]
    # kli seals first, out of turn: legal without control
    plan = tmp_path / "kli.yaml"
    plan.write_text("turn: 1\nunits: {D7: {speed: 12, reserve: 5}}\n")
    assert table.pbem("seal", "allocation", str(plan), who="kli").returncode == 0
    assert table.pbem("yield", who="kli").returncode == 0
    assert [(b["player"], b["kind"]) for b in status(table)["pending"]] == [("fed", "sealed")]
    plan = tmp_path / "fed.yaml"
    plan.write_text("turn: 1\nunits: {CA: {speed: 12}}\n")
    assert table.pbem("seal", "allocation", str(plan), who="fed").returncode == 0
    checked = table.pbem("check", who="fed")
    done = table.pbem("yield", who="fed")
    assert done.returncode == 0, checked.stdout + done.stderr
    after = status(table)
    assert all(b["kind"] != "sealed" for b in after["pending"])
    assert table.pbem("verify").returncode == 0
    files = sorted(p.name for p in (table.repo_dir / "secrets").iterdir())
    assert len(files) == 2
    for name in files:
        text = (table.repo_dir / "secrets" / name).read_text()
        assert 'step: "1.0.alloc"' in text or "step: 1.0.alloc" in text


def test_players_sealing_at_the_same_moment_write_their_own_files_and_both_land(base_game: Table,
                                                                              tmp_path: Path) -> None:
    """DESIGN §4.9: each player seals into secrets/<his id>-NNNN.yaml, so two players sealing their allocations on
    the same tip, each in his own clone of a hooked server, never write the same path: the first push lands, the
    second `pbem push` rebases, re-signs and lands too, and the server's history verifies."""
    from test_hook import clone_for, serve, server_ref

    fed = copy_table(base_game, tmp_path / "table")  # test_tactical_cli_bad_input's TEMPLATE, started
    fed.turn("fed", through="1.32.final")
    fed.turn("kli", through="1.32.final")
    assert [(b["player"], b["kind"]) for b in status(fed)["pending"]] == [("fed", "sealed"), ("kli", "sealed")]
    server = serve(fed)
    kli = clone_for(fed, server, "kli-machine")
    for table, who, unit in ((fed, "fed", "CA"), (kli, "kli", "D7")):
        source = tmp_path / f"{who}.json"
        source.write_text(json.dumps({"turn": 1, "units": {unit: {"speed": 0}}}))
        assert table.pbem("seal", "allocation", str(source), who=who).returncode == 0
        done = table.pbem("yield", who=who)
        assert done.returncode == 0, done.stderr
    assert (fed.repo_dir / "secrets" / "fed-0001.yaml").is_file()
    assert (kli.repo_dir / "secrets" / "kli-0001.yaml").is_file()
    first = fed.pbem("push", who="fed")
    assert first.returncode == 0, first.stderr
    second = kli.pbem("push", who="kli")
    assert second.returncode == 0, second.stdout + second.stderr
    assert server_ref(server) == kli.head()
    assert sorted(p.name for p in (kli.repo_dir / "secrets").iterdir()) == ["fed-0001.yaml", "kli-0001.yaml"]
    assert kli.pbem("verify").returncode == 0
