"""Issue 4's bad inputs of tactical combat, each tried through the real CLI in a real game repository with real
signed commits (DESIGN §11: "every bad input gets one clear message naming file, line and rule, and changes
nothing"): fire out of arc, out of range, a weapon fired twice in a turn, damage written that differs from the
dice, a special-break answer that is not among its options, an auction action by a player who passed and was
not re-triggered, an allocation that does not pay for what was done, a seeking weapon that did not pursue its
revealed target. tests/test_tactical_bad_input.py proves the same rules on replay alone.

Each is refused by `pbem yield` (exit 1, one line `pbem: FILE:LINE: [rule] …`, no traceback, HEAD, refs, index
and working tree unchanged: test_dice_flow.refused); where a player could slip it past pbem with plain git
(a commit signed with his own key), `pbem verify` finds it with the same rule, file and line.

The game (TEMPLATE, built by conftest's `_build`): fed's CA at 0510 facing B, kli's D7 three hexes away at 0810
facing E, both at speed 0; every turn's energy allocation is sealed (`allocation: sealed`). CA's ph1 (arcs A, B,
C) reaches the D7, its `aft` gun (arc D) does not bear, its `sh1` reaches 2 hexes only. Flows, built once per
module and copied per test:

* `armed`: orders given (fed's to 1.3.damage, kli's to the end with a {fire: {}} break), both allocations
  sealed out of turn: fed holds control at 1.4.move;
* `auction`: fed declared ph1 at 1.4.fire; kli added his own shot ("me too"); fed passed; kli passed in the
  second round: the auction is over and the firers owe their rolls;
* `resolved`: the dice rolled, 1.4.fire resolved: fed holds control at 1.9.move;
* `clarify`: fed's plan pursues the D7, dead astern: a special break for fed at 1.1.move;
* `ending`: fed's CA ran at speed 4 on an allocation of speed 2: the turn is over, the reveals are owed;
* `contact`: kli's drone S1, its target sealed, slipped away from the CA at 1.2.move before pursuing it; it meets
  the CA and kli owes the reveal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import GAME_ID, Table, _build, built_from, built_once, copy_table
from test_dice_bad_input import honest_reveal
from test_dice_flow import batch, cli, findings, refused, sneak_as, write_batch

REPORT = "report/turn-01.yaml"
TEMPLATE = """\
format: pbem/1
id: tactical-bad
title: "Bad inputs: a cruiser and a battlecruiser three hexes apart"
ruleset: tactical/1
pbem: "0.1.0"
players:
  - {id: fed, name: Federation}
  - {id: kli, name: Klingon}
dice: {mode: commit-reveal}
setup:
  map: {columns: 20, rows: 20}
  turns: 1
  allocation: sealed
  units:
    - {id: CA, owner: fed, hex: "0510", facing: B, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 30, power: 10, weapons: [{id: ph1, type: long, arcs: [A, B, C]}, {id: aft, type: long, arcs: [D]},
                                      {id: sh1, type: short, arcs: [A, B, C]}, {id: ph2, type: long, arcs: [A, B, C]}]}
    - {id: D7, owner: kli, hex: "0810", facing: E, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 30, power: 10, weapons: [{id: ph1, type: long, arcs: [F, A, B]}, {id: dr1, type: drone, arcs: [A]}]}
  weapons:
    long: {heavy: false, max_range: 15, energy: 1, brackets: [[0, 15]], damage: [[3, 3, 2, 2, 1, 1]]}
    short: {heavy: false, max_range: 2, energy: 1, brackets: [[0, 2]], damage: [[3, 3, 2, 2, 1, 1]]}
    drone: {heavy: false, seeking: true, speed: 16, turn_mode: 1, warhead: 6, energy: 0}
  costs: {speed_point: 1}
"""


# --- the flows ---------------------------------------------------------------------------------------------------

def seal(table: Table, who: str, value: dict[str, Any]) -> None:
    """`pbem seal allocation FILE`, then `pbem yield`, as `who` (out of turn: a sealed step needs no control)."""
    source = table.root / f"{who}-allocation.yaml"
    source.write_text(json.dumps(value))
    cli(table, "seal", "allocation", str(source), who=who)
    cli(table, "yield", who=who)


def pending(table: Table) -> list[tuple[str, str]]:
    return [(b["player"], b["kind"]) for b in table.data("status.yaml")["pending"]]


def private(base: Table, tmp_path: Path) -> Table:
    return copy_table(base, tmp_path / "table")


# The base games below are built once per run (`built_once`: five modules use them, on either worker) and only
# read; each test takes a private copy (`private`).

def _build_game(root: Path) -> None:
    (root / "template").mkdir(parents=True)
    (root / "template" / "game.yaml").write_text(TEMPLATE)
    # the conftest game id: test_dice_bad_input.honest_reveal re-derives dice for that id
    _build(root / "started", str(root / "template"), GAME_ID)


@pytest.fixture(scope="session")
def base_game(tmp_path_factory: pytest.TempPathFactory) -> Table:
    return Table(built_once(tmp_path_factory, "tactical-bad", _build_game) / "started")


def arm(table: Table) -> Table:
    """`armed` from a started game (see the module docstring): orders given, both allocations sealed."""
    table.turn("fed", through="1.3.damage", breaks=[{"fire": {}}])
    table.turn("kli", through="1.32.final", breaks=[{"fire": {}}])
    assert pending(table) == [("fed", "sealed"), ("kli", "sealed")]
    seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "weapons": 1}}})  # in any order
    seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 0, "weapons": 2}}})
    assert pending(table) == [("fed", "horizon")] and table.data("status.yaml")["firm"] == "1.4.move"
    return table


def declare_both(table: Table) -> Table:
    """`auction` from `armed`: both shots at 1.4.fire declared, the auction over, the firers owe their rolls."""
    fire = {"at": "1.4.fire", "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}}
    table.turn("fed", through="1.8.damage", entries=[fire])
    assert pending(table) == [("kli", "auction")]
    table.turn("kli", entries=[{"at": "1.4.fire", "unit": "D7", "do": {"fire": {"weapon": "ph1", "target": "CA"}}}])
    assert pending(table) == [("fed", "auction")]  # woken by kli's shot
    table.turn("fed")  # passes: kli added last and nothing came since, so he is not asked again: it is over
    assert {kind for _, kind in pending(table)} == {"roll"}, pending(table)
    return table


@pytest.fixture(scope="session")
def base_armed(base_game: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    return Table(built_once(tmp_path_factory, "tactical-bad-armed", lambda into: arm(copy_table(base_game, into))))


@pytest.fixture(scope="session")
def base_auction(base_armed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    return Table(built_once(tmp_path_factory, "tactical-bad-auction",
                            lambda into: declare_both(copy_table(base_armed, into))))


@pytest.fixture(scope="session")
def base_resolved(base_auction: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    return Table(built_once(tmp_path_factory, "tactical-bad-resolved",
                            lambda into: resolve(copy_table(base_auction, into))))


def resolve(table: Table) -> Table:
    """`resolved` from `auction`: the dice of 1.4.fire rolled, contributed and revealed; fed holds control."""
    for _ in range(12):  # each firer rolls for his shot, the other contributes, the roller reveals
        (who, kind), *_ = pending(table)
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(table, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        if kind == "horizon":
            break
        cli(table, "yield", who=who)
    assert pending(table) == [("fed", "horizon")] and table.data("status.yaml")["firm"] == "1.9.move"
    return table


@pytest.fixture
def armed(base_armed: Table, tmp_path: Path) -> Table:
    return private(base_armed, tmp_path)


@pytest.fixture
def auction(base_auction: Table, tmp_path: Path) -> Table:
    return private(base_auction, tmp_path)


@pytest.fixture
def resolved(base_resolved: Table, tmp_path: Path) -> Table:
    return private(base_resolved, tmp_path)


def line_of(table: Table, rel: str, needle: str) -> int:
    """The 1-based line of `rel` holding `needle` (exactly one)."""
    lines = [i for i, text in enumerate(table.read(rel).splitlines(), 1) if needle in text]
    assert len(lines) == 1, (needle, table.read(rel))
    return lines[0]


def fired(who: str, unit: str, at: str, weapon: str, target: str) -> dict[str, Any]:
    return {"at": at, "by": who, "unit": unit, "do": {"fire": {"weapon": weapon, "target": target}}}


def verify_finds(table: Table, rule: str, file: str, line: int) -> dict[str, Any]:
    """`pbem verify` (in-process; exit 1) finds `rule` at `file`:`line` in HEAD, and its text output says so."""
    head = table.head()
    got = findings(table)
    hit = [f for f in got if f["rule"] == rule]
    assert hit and (hit[0].get("file"), hit[0].get("line"), hit[0].get("commit")) == (file, line, head), got
    text = table.cli("verify")
    assert text.exit_code == 1 and f"{file}:{line}: [{rule}] " in text.stdout, text.stdout
    return hit[0]


# --- fire out of arc, out of range, twice in a turn (DESIGN §7.1) ----------------------------------------------

@pytest.mark.parametrize("weapon, says", [("aft", "outside aft's arcs D"), ("sh1", "range")],
                         ids=["out-of-arc", "out-of-range"])
def test_rules_illegal_action__fire_that_cannot_bear_is_refused(armed: Table, weapon: str, says: str) -> None:
    """DESIGN §7.1: a shot is legal only in one of the weapon's arcs and within its range."""
    armed.edit("fed", through="1.8.damage", entries=[fired("fed", "CA", "1.4.fire", weapon, "D7")])
    line = line_of(armed, REPORT, f"weapon: {weapon}")
    error = refused(armed, "yield", who="fed", rule="rules.illegal-action", where=f"{REPORT}:{line}")
    assert "CA cannot fire" in error and says in error, error
    check = armed.pbem("check", who="fed")
    assert check.returncode == 1 and f"{REPORT}:{line}: [rules.illegal-action]" in check.stdout + check.stderr


def test_rules_illegal_action__plain_git_fire_out_of_arc_is_found(armed: Table) -> None:
    """The same shot committed with plain git, signed with fed's own key: `pbem verify` finds it."""
    armed.edit("fed", through="1.8.damage", entries=[fired("fed", "CA", "1.4.fire", "aft", "D7")])
    sneak_as(armed, "fed", "fed: aft gun at the D7")
    verify_finds(armed, "rules.illegal-action", REPORT, line_of(armed, REPORT, "weapon: aft"))


def test_rules_illegal_action__a_weapon_fired_twice_in_a_turn(resolved: Table) -> None:
    """DESIGN §7.1: each weapon fires once a game turn; ph1 fired at 1.4.fire (resolved) cannot fire at 1.12."""
    resolved.edit("fed", through="1.16.damage", entries=[fired("fed", "CA", "1.12.fire", "ph1", "D7")])
    line = line_of(resolved, REPORT, "1.12.fire")
    error = refused(resolved, "yield", who="fed", rule="rules.illegal-action", where=f"{REPORT}:{line}")
    assert "fired" in error, error


# --- damage written that differs from the dice (DESIGN §5, §7.1) ---------------------------------------------

def test_dice_bad_results__a_roller_writes_other_results_for_his_shot(auction: Table) -> None:
    """Damage is what the dice say: a roller who writes other results than the derivation (for a bigger hit) is
    refused by `pbem yield`, and found by `pbem verify` when committed with plain git."""
    for _ in range(12):  # up to fed's reveal: his roll announced, kli's contribution in (kli's die first)
        (who, kind), *_ = pending(auction)
        if who == "fed" and kind == "dice" and auction.data("status.yaml")["pending"][0]["why"].startswith("reveal"):
            break
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(auction, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(auction, "yield", who=who)
    mine = next(bid for bid in ("fed-0001", "kli-0001") if batch(auction, bid)["roller"] == "fed")
    path = f"dice/{mine}.yaml"
    raw = honest_reveal(auction, batch(auction, mine))
    cheat = {**raw, "results": [1 if raw["results"][0] != 1 else 2]}  # a 1 does the most damage
    write_batch(auction, cheat, mine)
    line = line_of(auction, path, "results:")
    refused(auction, "yield", who="fed", rule="dice.bad-results", where=f"{path}:{line}", real=False)
    sneak_as(auction, "fed", "fed: revealed")
    verify_finds(auction, "dice.bad-results", path, line)


def test_schema_invalid__damage_written_as_an_entry_is_refused(resolved: Table) -> None:
    """Damage is never written by a player: replay scores it from the dice. An entry that writes damage is not an
    action of tactical/1."""
    resolved.edit("fed", through="1.16.damage",
                  entries=[{"at": "1.9.damage", "unit": "D7", "do": {"damage": {"shield": 2, "points": 9}}}])
    line = line_of(resolved, REPORT, "points: 9")
    refused(resolved, "yield", who="fed", rule="schema.invalid", where=f"{REPORT}:{line}")


# --- an auction action by a player who passed (seed §7.D) ------------------------------------------------------

def test_rules_auction__a_player_who_passed_adds_a_shot_at_the_auction_step(auction: Table) -> None:
    """Seed §7.D: fed passed in round 1 after kli's shot, and nothing came after: the auction at 1.4.fire is
    over. Holding control for his roll (kli's die comes first), he slips in a second shot there."""
    for _ in range(6):
        (who, kind), *_ = pending(auction)
        if (who, kind) == ("fed", "roll"):
            break
        if kind == "roll":
            cli(auction, "roll", "--for", "D7 ph1", "--ref", "1.4.fire/D7/ph1", who=who)
        cli(auction, "yield", who=who)
    assert pending(auction)[0] == ("fed", "roll")
    auction.edit("fed", entries=[fired("fed", "CA", "1.4.fire", "ph2", "D7")])
    line = line_of(auction, REPORT, "weapon: ph2")
    error = refused(auction, "yield", who="fed", rule="rules.auction", where=f"{REPORT}:{line}")
    assert "it is over" in error, error
    sneak_as(auction, "fed", "fed: one more shot")
    verify_finds(auction, "rules.auction", REPORT, line)


# --- a special-break answer that is not among its options (seed §5.C) -----------------------------------------

@pytest.fixture(scope="session")
def base_clarify(base_game: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        plan = {"unit": "CA", "from": "1.1.move", "until": "1.32.move", "do": {"pursue": "D7"}}
        table.edit("fed", through="1.32.final", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 16}}])
        table.write("players/fed.yaml", table.read("players/fed.yaml") + f"plans: [{json.dumps(plan)}]\n")
        table.turn("fed", note="pursuing the D7")
        table.turn("kli", through="1.32.final")
        seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 10}}})  # within its power (pbem seal checks it)
        seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
        held = table.data("status.yaml")["pending"][0]
        assert (held["player"], held["kind"], held["at"]) == ("fed", "clarify", "1.2.move"), held
        assert held["options"] == [{"move": "TR"}, {"move": "SR"}]

    return built_from(tmp_path_factory, "tactical_cli_bad_input-base_clarify", base_game, build)


def test_rules_bad_clarify__an_answer_not_among_the_options(base_clarify: Table, tmp_path: Path) -> None:
    """Seed §5.C, DESIGN §4.5: the D7 lies where fed's pursuit ties between TR and SR; fed answers TL."""
    table = private(base_clarify, tmp_path)
    table.edit("fed", entries=[{"at": "1.2.move", "unit": "CA", "do": {"move": "TL"}}])
    line = line_of(table, REPORT, "move: TL")
    error = refused(table, "yield", who="fed", rule="rules.bad-clarify", where=f"{REPORT}:{line}")
    assert "not one of the options" in error and "'TR'" in error, error
    sneak_as(table, "fed", "fed: turning left")
    verify_finds(table, "rules.bad-clarify", REPORT, line)


# --- an allocation that does not pay for what was done (seed §2.C) --------------------------------------------

@pytest.fixture(scope="session")
def base_ending(base_game: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        table.turn("fed", through="1.32.final", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 4}}])
        table.turn("kli", through="1.32.final")
        seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
        seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 2, "reserve": 1}}})  # short by one: reserve 1 of 2
        assert pending(table) == [("fed", "secret"), ("kli", "secret")]  # the turn is over: the reveals are owed (by id)

    return built_from(tmp_path_factory, "tactical_cli_bad_input-base_ending", base_game, build)


def test_rules_allocation__a_revealed_allocation_that_does_not_pay(base_ending: Table, tmp_path: Path) -> None:
    """Seed §2.C, issue 4 point 5: fed's CA ran at speed 4 on an allocation of speed 2 and a reserve of 1: his
    reveal is refused by `pbem yield` and, committed with plain git, found by `pbem verify`."""
    table = private(base_ending, tmp_path)
    mine = next(p.name for p in (table.repo_dir / "secrets").iterdir()
                if table.data(f"secrets/{p.name}")["owner"] == "fed")
    path = f"secrets/{mine}"
    cli(table, "reveal", mine[:-len(".yaml")], who="fed")
    line = line_of(table, path, "key:")
    error = refused(table, "yield", who="fed", rule="rules.allocation", where=f"{path}:{line}")
    assert "speed 4 used (4), speed 2 allocated" in error, error
    sneak_as(table, "fed", "fed: revealing my allocation")
    verify_finds(table, "rules.allocation", path, line)


def test_secret_bad_secret__an_allocation_sealed_for_a_step_not_owed(base_ending: Table, tmp_path: Path) -> None:
    """DESIGN §4.7: a sealed input answers a sealed step its owner owes; the allocation step is long over."""
    table = private(base_ending, tmp_path)
    raw = dict(table.data("secrets/fed-0001.yaml"))
    table.write("secrets/fed-0009.yaml", "".join(f"{k}: {json.dumps(v)}\n" for k, v in
                                              {**raw, "id": "fed-0009", "owner": "fed", "step": "1.0.alloc"}.items()))
    line = line_of(table, "secrets/fed-0009.yaml", "step:")
    error = refused(table, "yield", who="fed", rule="secret.bad-secret", where=f"secrets/fed-0009.yaml:{line}")
    assert "answers step 1.0.alloc, for which fed owes no sealed input" in error, error


# --- a seeking weapon that did not pursue its revealed target (seed §2.C) --------------------------------------

@pytest.fixture(scope="session")
def base_contact(base_game: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        table.turn("fed", through="1.32.final")
        plan = {"unit": "S1", "from": "1.3.move", "until": "1.32.move", "do": {"pursue": "CA"}}
        table.edit("kli", through="1.32.final",
                   entries=[{"at": "1.1.activity", "unit": "D7", "do": {"launch": {"weapon": "dr1", "as": "S1"}}},
                            {"at": "1.2.move", "unit": "S1", "do": {"move": "SL"}}])
        table.write("players/kli.yaml", table.read("players/kli.yaml") + f"plans: [{json.dumps(plan)}]\n")
        target = table.root / "target.yaml"
        target.write_text('{"unit": "S1", "target": "CA"}')
        cli(table, "seal", "target", str(target), "--concerns", "S1", who="kli")
        table.turn("kli", note="a drone, its target sealed")
        # kli first: fed's seal completes the step, and replay runs on until S1 meets the CA
        seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
        seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 0}}})
        for _ in range(6):  # answer any tie of the drone's pursuit with its first option, until it meets the CA
            held = table.data("status.yaml")["pending"][0]
            if held["kind"] != "clarify":
                break
            table.turn("kli", entries=[{"at": held["at"], "unit": held["unit"], "do": held["options"][0]}])
        held = table.data("status.yaml")["pending"][0]
        assert (held["player"], held["kind"]) == ("kli", "secret") and "S1" in held["why"], held

    return built_from(tmp_path_factory, "tactical_cli_bad_input-base_contact", base_game, build)


def test_rules_pursuit__a_seeking_weapon_that_slipped_away_from_its_target(base_contact: Table,
                                                                          tmp_path: Path) -> None:
    """Seed §2.C, DESIGN §7.1: once S1's target (the CA) is revealed, its slip away at 1.2.move is checked
    against pursuit of the CA: kli's reveal is refused, naming the move's entry; committed with plain git,
    `pbem verify` finds it."""
    table = private(base_contact, tmp_path)
    line = line_of(table, REPORT, "unit: S1")
    error = refused(table, "yield", who="kli", rule="rules.pursuit", where=f"{REPORT}:{line}")
    assert "S1 did not pursue its target CA at 1.2.move: it made SL" in error, error
    cli(table, "reveal", "kli-0001", who="kli")
    sneak_as(table, "kli", "kli: S1's target")
    verify_finds(table, "rules.pursuit", REPORT, line)
