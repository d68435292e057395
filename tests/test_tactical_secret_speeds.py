"""Secret speeds (`setup: speeds: sealed`; seed 000 §2.C: the speed plot is part of the secret, simultaneous energy
allocation, and SFB announces only the speed, by all at once): each ship's speed for the turn is sealed in its
owner's allocation; once every player has sealed, each opens the speeds alone (the secret's part, committed
beside the box, crypto/part.py), and T.0.alloc resolves with them. The rest of the allocation stays sealed until
the end of the battle, when each owner opens his box and the verifier audits it against everything his units did
(`rules.allocation`) and checks it holds the speeds he opened (`secret.part-mismatch`). A `speed` entry at
T.0.alloc is refused in its author's own commit (rules.sealed-speed).

Built through the CLI on the TEMPLATE of test_tactical_cli_bad_input with `speeds: sealed`: fed's CA at 0510
facing B, kli's D7 at 0810 facing E, both at speed 0, power 10; the battle is one turn long.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import GAME_ID, Table, _build, built_from, built_once, copy_table
from test_dice_flow import cli, findings, refused, sneak_as
from test_tactical_cli_bad_input import REPORT, TEMPLATE, line_of, pending, seal

SECRET_SPEEDS = TEMPLATE.replace("  allocation: sealed\n", "  allocation: sealed\n  speeds: sealed\n")


def speeds(table: Table) -> dict[str, Any]:
    """Each unit's speed in the game as replayed to the firm point (the verified history's last state)."""
    from pbem.services.workspace import Workspace

    last = Workspace.open(table.repo_dir).history().last
    assert last is not None and last.stop is not None
    return {u.id: u.speed for u in last.stop.checkpoint.state.units}


@pytest.fixture(scope="session")
def base_started(tmp_path_factory: pytest.TempPathFactory) -> Table:
    assert "speeds: sealed" in SECRET_SPEEDS

    def build(root: Path) -> None:
        (root / "template").mkdir(parents=True)
        (root / "template" / "game.yaml").write_text(SECRET_SPEEDS)
        _build(root / "started", str(root / "template"), GAME_ID)

    return Table(built_once(tmp_path_factory, "secret-speeds", build) / "started")


@pytest.fixture(scope="session")
def base_ordered(base_started: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Both players' orders reach the end of turn 1 (no speed entries): both owe a sealed allocation."""

    def build(table: Table) -> None:
        table.turn("fed", through="1.32.final")
        table.turn("kli", through="1.32.final", breaks=[{"at": "1.2.move"}])  # so the turn is not over at once
        assert pending(table) == [("fed", "sealed"), ("kli", "sealed")]

    return built_from(tmp_path_factory, "tactical_secret_speeds-base_ordered", base_started, build)


@pytest.fixture
def ordered(base_ordered: Table, tmp_path: Path) -> Table:
    return copy_table(base_ordered, tmp_path / "table")


def test_seed_2_c_only_the_speeds_are_opened_together_the_rest_at_the_end(ordered: Table) -> None:
    seal(ordered, "kli", {"turn": 1, "units": {"D7": {"speed": 4, "weapons": 1}}})
    assert pending(ordered) == [("fed", "sealed")]  # kli's speed is still sealed: nothing of it shows
    assert "part" not in ordered.data("secrets/kli-0001.yaml")
    seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 8, "reserve": 2}}})
    assert sorted(pending(ordered)) == [("fed", "secret"), ("kli", "secret")]  # everyone sealed: all open
    cli(ordered, "yield", who="kli")  # pbem yield opens the speeds he owes, out of turn
    assert pending(ordered) == [("fed", "secret")]
    kli = ordered.data("secrets/kli-0001.yaml")
    assert kli["part"] == {"units": {"D7": {"speed": 4}}} and "key" not in kli  # the weapons line stays sealed
    cli(ordered, "yield", who="fed")
    assert ordered.data("status.yaml")["firm"] != "1.0.alloc"
    assert speeds(ordered) == {"CA": 8, "D7": 4}
    assert "key" not in ordered.data("secrets/fed-0001.yaml")
    assert findings(ordered) == []
    # the battle's end: kli's turn ends it, then each opens his box, and each is audited
    ordered.turn("kli", through="1.32.final", breaks=[])
    assert sorted(pending(ordered)) == [("fed", "secret"), ("kli", "secret")]
    assert "key" not in ordered.data("secrets/kli-0001.yaml")  # not in the commit that ended the battle
    cli(ordered, "yield", who="fed")
    cli(ordered, "yield", who="kli")
    assert ordered.data("status.yaml")["over"] is True
    assert "key" in ordered.data("secrets/fed-0001.yaml") and findings(ordered) == []


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


def hand_seal(table: Table, who: str, value: dict, step: str = "1.0.alloc", part: Any = "same") -> str:
    """A sealed allocation written by hand (plain git, no pbem to check it first): the verifier sees only the
    box until it is opened. `part`: the speeds committed beside the box ("same": those of `value`, as pbem
    seals them; None: no part at all; else that part, which the box does not hold). Committed with
    `pbem yield`, which cannot see inside either."""
    import base64

    from pbem.crypto import part as parts
    from pbem.crypto import seal as sealing
    from pbem.crypto.keys import load_private_key
    from pbem.formats.canonical import dumps
    from pbem.formats.writer import dump_mapping
    from pbem.rulesets.tactical.energy import speeds_part

    sealed = sealing.seal(dumps(value), load_private_key(table.key(who)).public)
    sid = f"{who}-0001"
    raw = {"id": sid, "owner": who, "kind": "allocation", "step": step, "end": "end",
           "box": base64.b64encode(sealed.box).decode(), "commit": sealed.commit.hex(),
           "owner_box": base64.b64encode(sealed.owner_box).decode()}
    if part is not None:
        shown = speeds_part(value) if part == "same" else part
        raw["part_commit"] = parts.part_commitment(parts.part_salt(sealed.key), dumps(shown)).hex()
    table.write(f"secrets/{sid}.yaml", dump_mapping(raw))
    cli(table, "yield", who=who)
    return sid


def key_line(table: Table, sid: str) -> str:
    """Where a reveal's finding points: the `key` line pbem yield adds at the end of the secret's file."""
    return f"secrets/{sid}.yaml:{len(table.read(f'secrets/{sid}.yaml').splitlines()) + 1}"


def roll_all(table: Table) -> None:
    """Each die owed is rolled by its firer, contributed to and revealed, until only the battle's end reveals
    of the allocations are owed."""
    import re

    for _ in range(20):
        first = table.data("status.yaml")["pending"][0]
        if first["kind"] == "roll":
            ref = re.search(r"\d+\.\d+\.fire/\w+/\w+", first["why"])
            assert ref is not None, first
            cli(table, "roll", "--for", ref.group(0), "--ref", ref.group(0), who=first["player"])
        elif first["kind"] == "secret" and "allocation" in first["why"]:
            return
        cli(table, "yield", who=first["player"])
    raise AssertionError(f"still owed: {pending(table)}")


def end_battle(table: Table) -> None:
    """Both open their speeds (kli, then fed), then kli's turn plays the rest of the one-turn battle."""
    cli(table, "yield", who="kli")
    cli(table, "yield", who="fed")
    assert pending(table)[0][0] == "kli", pending(table)
    table.turn("kli", through="1.32.final", breaks=[])
    assert sorted(pending(table)) == [("fed", "secret"), ("kli", "secret")], pending(table)


def test_a_bad_allocation_found_when_opened_at_the_end_is_refused_and_its_owner_forfeits(ordered: Table) -> None:
    """docs/tactical.md "A bad allocation found when opened": fed seals by hand one point over power (in
    `reinforce`; his speed, 5, fits). Only his speed is opened at the turn start, so the battle is played with it;
    at the end his box does not pay (`rules.allocation` at its key line, refused by his own pbem yield and
    found by pbem verify); kli's lands, and kli alone records fed's forfeit (the seed's cheater, tarred and
    feathered): the game is over and the history verifies."""
    seal(ordered, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    hand_seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 5, "weapons": 1, "reinforce": 5}}})
    end_battle(ordered)
    assert speeds(ordered) == {"CA": 5, "D7": 2}
    error = refused(ordered, "yield", who="fed", rule="rules.allocation", where=key_line(ordered, "fed-0001"))
    assert "allocates 11 energy, its power is 10" in error, error
    cli(ordered, "yield", who="kli")
    assert pending(ordered) == [("fed", "secret")]
    cli(ordered, "agree", "end", "--result", "forfeit", "--player", "fed", "--note", "allocation over power",
        who="kli")
    assert ordered.data("status.yaml")["over"] is True and findings(ordered) == []


def test_an_allocation_sealed_by_hand_without_its_speeds_part_plots_nothing(ordered: Table) -> None:
    """A box with no part committed beside it (plain git) has no speeds to open: the step does not wait for
    what cannot come; the CA does not move this turn (its speeds plot nothing), and the game goes on."""
    seal(ordered, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    hand_seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 5}}}, part=None)
    assert pending(ordered) == [("kli", "secret")]  # only kli owes the opening of his speeds
    cli(ordered, "yield", who="kli")
    assert speeds(ordered) == {"CA": 0, "D7": 2} and findings(ordered) == []


def test_a_speed_its_power_cannot_pay_is_void_when_opened(ordered: Table) -> None:
    """A speed alone above power (by hand: pbem seal refuses it) is void when opened: the ship does not move, an
    `allocation_void` event says why, and nobody's commit is refused for it."""
    from pbem.services.workspace import Workspace

    seal(ordered, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    hand_seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 11}}})
    cli(ordered, "yield", who="kli")
    cli(ordered, "yield", who="fed")
    assert speeds(ordered) == {"CA": 0, "D7": 2} and findings(ordered) == []
    last = Workspace.open(ordered.repo_dir).history().last
    assert last is not None and last.stop is not None


UNPAID = [
    # (name, kli's allocation line for the D7, whether its reveal at the end is refused for its shot at 1.4.fire)
    ("no-weapons-energy", {"speed": 0}, True),
    ("paid-from-reserve", {"speed": 0, "reserve": 1}, False),
    ("paid", {"speed": 0, "weapons": 1}, False),
]


@pytest.mark.parametrize("name, line, refuse", UNPAID, ids=[u[0] for u in UNPAID])
def test_seed_2_c_an_action_the_sealed_allocation_does_not_pay_is_found_when_it_is_opened(
        ordered: Table, name: str, line: dict, refuse: bool) -> None:
    """Nobody sees an allocation before the battle ends, so a shot is never refused for it when given; the box
    opened at the end is audited against every shot, launch, HET, speed and system use of the turn: one that
    does not pay is refused at its key line (rules.allocation), a reserve covering the shortfall pays."""
    seal(ordered, "kli", {"turn": 1, "units": {"D7": line}})
    seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 0}}})
    cli(ordered, "yield", who="kli")
    cli(ordered, "yield", who="fed")
    assert pending(ordered)[0][0] == "kli", pending(ordered)
    ordered.turn("kli", through="1.32.final", breaks=[],
                 entries=[{"at": "1.4.fire", "unit": "D7", "do": {"fire": {"weapon": "ph1", "target": "CA"}}}])
    roll_all(ordered)
    cli(ordered, "yield", who="fed")
    if refuse:
        error = refused(ordered, "yield", who="kli", rule="rules.allocation", where=key_line(ordered, "kli-0001"))
        assert "weapons used (ph1) cost 1, 0 allocated" in error, error
    else:
        cli(ordered, "yield", who="kli")
        assert ordered.data("status.yaml")["over"] is True and findings(ordered) == []


def test_rules_allocation__an_allocation_opened_whole_before_its_turn_is_played_is_judged_at_once(
        ordered: Table) -> None:
    """An allocation opened whole by hand before its turn is played (only its speeds were due) shows at once
    what is wrong with it alone (the Audit capability's `audit_plot`): fed's, one point over power, is found at
    his key line in the commit that opens it, not only at the battle's end."""
    import base64

    from pbem.crypto import seal as sealing
    from pbem.crypto.keys import load_private_key
    from pbem.formats.writer import dump_mapping

    seal(ordered, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    sid = hand_seal(ordered, "fed", {"turn": 1, "units": {"CA": {"speed": 5, "weapons": 1, "reinforce": 5}}})
    assert findings(ordered) == []  # sealed, nothing of it can be seen
    raw = dict(ordered.data(f"secrets/{sid}.yaml"))
    key = sealing.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(ordered.key("fed")))
    line = key_line(ordered, sid)  # the key goes last
    ordered.write(f"secrets/{sid}.yaml", dump_mapping({**raw, "key": key.hex()}))
    oid = sneak_as(ordered, "fed", "fed: my whole allocation, early")
    got = [f for f in findings(ordered) if f["rule"] == "rules.allocation"]
    assert [(f["commit"], f"{f['file']}:{f['line']}") for f in got] == [(oid, line)], got
    assert "allocates 11 energy" in got[0]["message"], got
