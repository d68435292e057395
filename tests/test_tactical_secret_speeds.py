"""Secret speeds (`setup: speeds: sealed`; seed 000 §2.C: the speed plot is part of the secret, simultaneous energy
allocation): each ship's speed for the turn is sealed in its owner's allocation and revealed with everyone's at
T.0.alloc, which then resolves with the revealed speeds. A `speed` entry at T.0.alloc is refused in its author's
own commit (rules.sealed-speed); an allocation whose speeds do not pay is `rules.allocation` (the energy audit).

Built through the CLI on the TEMPLATE of test_tactical_cli_bad_input with `speeds: sealed`: fed's CA at 0510
facing B, kli's D7 at 0810 facing E, both at speed 0, power 10.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import GAME_ID, Table, _build, copy_table
from test_dice_flow import cli, findings, refused, sneak_as
from test_tactical_cli_bad_input import REPORT, TEMPLATE, line_of, pending, seal

SECRET_SPEEDS = TEMPLATE.replace("  allocation: sealed\n", "  allocation: sealed\n  speeds: sealed\n")


def speeds(table: Table) -> dict[str, Any]:
    """Each unit's speed in the game as replayed to the firm point (the verified history's last state)."""
    from pbem.services.workspace import Workspace

    last = Workspace.open(table.repo_dir).history().last
    assert last is not None and last.stop is not None
    return {u.id: u.speed for u in last.stop.checkpoint.state.units}


@pytest.fixture(scope="module")
def base_started(tmp_path_factory: pytest.TempPathFactory) -> Table:
    assert "speeds: sealed" in SECRET_SPEEDS
    root = tmp_path_factory.mktemp("secret-speeds")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(SECRET_SPEEDS)
    return _build(root / "started", str(root / "template"), GAME_ID)


@pytest.fixture(scope="module")
def base_ordered(base_started: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Both players' orders reach the end of turn 1 (no speed entries): both owe a sealed allocation."""
    table = copy_table(base_started, tmp_path_factory.mktemp("secret-speeds") / "ordered")
    table.turn("fed", through="1.32.final")
    table.turn("kli", through="1.32.final", breaks=[{"at": "1.2.move"}])  # so the turn is not over at once
    assert pending(table) == [("fed", "sealed"), ("kli", "sealed")]
    return table


@pytest.fixture
def ordered(base_ordered: Table, tmp_path: Path) -> Table:
    return copy_table(base_ordered, tmp_path / "table")


def test_seed_2_c_speeds_are_revealed_together_then_used(ordered: Table) -> None:
    seal(ordered, "kli", {"turn": 1, "units": {"D7": {"speed": 4}}})
    assert pending(ordered) == [("fed", "sealed")]  # kli's speed is still sealed: nothing of it shows
    seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 8, "reserve": 2}}})
    assert sorted(pending(ordered)) == [("fed", "secret"), ("kli", "secret")]  # everyone sealed: all reveal
    cli(ordered, "yield", who="kli")  # pbem yield reveals what he owes, out of turn
    assert pending(ordered) == [("fed", "secret")]
    cli(ordered, "yield", who="fed")
    assert ordered.data("status.yaml")["firm"] != "1.0.alloc"
    assert speeds(ordered) == {"CA": 8, "D7": 4}
    assert findings(ordered) == []


def test_seed_2_c_orders_past_the_sealed_step_are_not_judged_against_a_speed_nobody_knows(
        base_started: Table, tmp_path: Path) -> None:
    """fed moves at 1.4.move, an impulse where only the speed he is about to seal (8) moves the CA: accepted."""
    ordered = copy_table(base_started, tmp_path / "table")
    ordered.turn("fed", through="1.32.final", entries=[{"at": "1.4.move", "unit": "CA", "do": {"move": "SL"}}])
    ordered.turn("kli", through="1.32.final")
    seal(ordered, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
    seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 8}}})
    cli(ordered, "yield", who="kli")
    cli(ordered, "yield", who="fed")
    assert speeds(ordered)["CA"] == 8 and findings(ordered) == []


@pytest.fixture
def started(base_started: Table, tmp_path: Path) -> Table:
    return copy_table(base_started, tmp_path / "table")


def test_rules_sealed_speed__a_speed_entry_is_refused_in_its_authors_commit(started: Table) -> None:
    """Bad input: a speed given as an entry would show it before the others choose theirs."""
    ordered = started
    ordered.edit("fed", through="1.32.final", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 8}}])
    line = line_of(ordered, REPORT, "speed: 8")
    error = refused(ordered, "yield", who="fed", rule="rules.sealed-speed", where=f"{REPORT}:{line}")
    assert "speeds are sealed in this game" in error and "allocation" in error, error


def test_rules_sealed_speed__plain_git_speed_entry_is_found(started: Table) -> None:
    ordered = started
    ordered.turn("fed", through="1.32.final")
    ordered.edit("kli", through="1.32.final", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 20}}])
    line = line_of(ordered, REPORT, "speed: 20")
    head = sneak_as(ordered, "kli", "kli: my speed in the clear")
    got = findings(ordered)
    assert [(f["rule"], f.get("file"), f.get("line"), f.get("commit")) for f in got] == [
        ("rules.sealed-speed", REPORT, line, head)], got


PLOTS = [
    ("speed-above-power", {"CA": {"speed": 8, "weapons": 3}},
     "allocates 11 energy (speed 8 × 1 and 3 more), its power is 10"),
    ("speed-above-max", {"CA": {"speed": 32}}, "speed 32 allocated, above max_speed 31"),
    # every line counts: one point over power in `reinforce` is over power
    ("reinforce-above-power", {"CA": {"speed": 5, "weapons": 1, "reinforce": 5}},
     "allocates 11 energy (speed 5 × 1 and 6 more), its power is 10"),
]


@pytest.mark.parametrize("name, units, says", PLOTS, ids=[p[0] for p in PLOTS])
def test_rules_allocation__pbem_seal_refuses_an_allocation_over_power_with_its_line(ordered: Table, name: str,
                                                                                  units: dict, says: str) -> None:
    """What the verifier can see only once it is opened is checked before it is sealed, every line counted:
    `pbem seal allocation` refuses it at the unit's line of the file, and nothing is written."""
    source = ordered.root / "fed-allocation.yaml"
    source.write_text("turn: 1\nunits:\n" + "".join(f"  {u}: {json.dumps(line)}\n" for u, line in units.items()))
    error = refused(ordered, "seal", "allocation", str(source), who="fed", rule="rules.allocation",
                    where=f"{source}:3")
    assert says in error, error
    other = _write(ordered, {"turn": 1, "units": {"D7": {"speed": 1}}})
    error = refused(ordered, "seal", "allocation", str(other), who="fed", rule="rules.allocation", where=f"{other}:1")
    assert "D7 is not a unit of fed" in error, error


def _write(table: Table, value: dict) -> Path:
    source = table.root / "allocation.json"
    source.write_text(json.dumps(value))
    return source


def hand_seal(table: Table, who: str, value: dict, step: str = "1.0.alloc") -> str:
    """A sealed allocation written by hand (plain git, no pbem to check it first): the verifier sees only the
    box until it is opened. Committed with `pbem yield`, which cannot see inside either."""
    import base64

    from pbem.crypto import seal as sealing
    from pbem.crypto.keys import load_private_key
    from pbem.formats.canonical import dumps
    from pbem.formats.writer import dump_mapping

    sealed = sealing.seal(dumps(value), load_private_key(table.key(who)).public)
    sid = f"{who}-0001"
    table.write(f"secrets/{sid}.yaml", dump_mapping({
        "id": sid, "owner": who, "kind": "allocation", "step": step, "end": "end",
        "box": base64.b64encode(sealed.box).decode(), "commit": sealed.commit.hex(),
        "owner_box": base64.b64encode(sealed.owner_box).decode()}))
    cli(table, "yield", who=who)
    return sid


def test_a_bad_allocation_found_when_opened_voids_what_it_did_not_pay_for_and_the_game_goes_on(
        ordered: Table) -> None:
    """docs/tactical.md "A bad allocation found when opened": fed seals by hand one point over power (in
    `reinforce`). Its reveal lands (refusing it would let a cheater hold the game); his line is void whole: the
    CA does not move and nothing of its turn is paid (each costly action is refused as rules.unpaid-action);
    and the game goes on to the turn's end (here the game's), no rules.allocation on whoever ends it."""
    from pbem.services.workspace import Workspace

    seal(ordered, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    hand_seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 5, "weapons": 1, "reinforce": 5}}})
    cli(ordered, "yield", who="kli")
    cli(ordered, "yield", who="fed")  # the reveal lands
    assert findings(ordered) == []
    assert speeds(ordered) == {"CA": 0, "D7": 2}
    last = Workspace.open(ordered.repo_dir).history().last
    assert last is not None and last.stop is not None
    turn, lines = last.stop.checkpoint.state.budgets
    assert turn == 1 and dict(lines["CA"]) == {} and dict(lines["D7"]) == {"speed": 2}
    assert pending(ordered)[0][0] == "kli"
    ordered.turn("kli", through="1.32.final", breaks=[])  # on to the turn's end: the game's (one turn)
    assert ordered.data("status.yaml")["over"] is True, ordered.data("status.yaml")
    assert findings(ordered) == []


UNPAID = [
    # (name, kli's allocation line for the D7, whether its shot at 1.4.fire is refused)
    ("no-weapons-energy", {"speed": 0}, True),
    ("paid-from-reserve", {"speed": 0, "reserve": 1}, False),
    ("paid", {"speed": 0, "weapons": 1}, False),
]


@pytest.mark.parametrize("name, line, refuse", UNPAID, ids=[u[0] for u in UNPAID])
def test_seed_2_c_an_action_the_revealed_allocation_cannot_pay_is_refused_when_given(
        ordered: Table, name: str, line: dict, refuse: bool) -> None:
    """With sealed speeds the turn's allocations are public once it starts: a shot the firer's allocation cannot
    pay for is refused in his own commit (rules.unpaid-action), never found later on whoever ends the turn."""
    seal(ordered, "kli", {"turn": 1, "units": {"D7": line}})
    seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 0}}})
    cli(ordered, "yield", who="kli")
    cli(ordered, "yield", who="fed")
    assert pending(ordered)[0][0] == "kli", pending(ordered)
    ordered.edit("kli", entries=[{"at": "1.4.fire", "unit": "D7", "do": {"fire": {"weapon": "ph1", "target": "CA"}}}])
    if refuse:
        where = f"{REPORT}:{line_of(ordered, REPORT, 'target: CA')}"
        error = refused(ordered, "yield", who="kli", rule="rules.unpaid-action", where=where)
        assert "its revealed allocation cannot pay for it" in error and "weapons used (ph1) cost 1" in error, error
    else:
        cli(ordered, "yield", who="kli")
        assert findings(ordered) == []
