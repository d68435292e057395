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

from conftest import Table, built_from, copy_table
from test_dice_flow import cli, refused, sneak_as
from test_tactical_cli_bad_input import base_game, pending, private, seal  # noqa: F401

PURSUE = {"unit": "CA", "from": "1.1.move", "until": "1.32.move", "do": {"pursue": "D7"}}


@pytest.fixture(scope="session")
def base_own_clarify(base_game: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed's own turn runs into his own plan's tie: he took the turn before the special break."""

    def build(table: Table) -> None:
        table.turn("fed", through="1.0.alloc", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 16}}])
        table.turn("kli", through="1.32.final", breaks=[{"at": "1.5.move"}])
        seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 10}}})  # within its power (pbem seal checks it)
        seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
        assert pending(table) == [("fed", "horizon")]
        table.edit("fed", through="1.32.final", breaks=[{"at": "1.5.move"}])
        table.write("players/fed.yaml", table.read("players/fed.yaml") + f"plans: [{json.dumps(PURSUE)}]\n")
        table.turn("fed", note="pursuing the D7")
        held = table.data("status.yaml")["pending"][0]
        assert (held["player"], held["kind"], held["at"]) == ("fed", "clarify", "1.2.move"), held

    return built_from(tmp_path_factory, "tactical_seed_play-base_own_clarify", base_game, build)


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


# --- damage known, then scored: a reply in the same fire step, and shield reinforcement (seed §6.C.1, §6.C.2) ---

FED_FIRES = {"at": "1.4.fire", "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}}
KLI_FIRES = {"at": "1.4.fire", "unit": "D7", "do": {"fire": {"weapon": "ph1", "target": "CA"}}}


def settle(table: Table, until: str) -> None:
    """Whoever owes dice settles them (rolling his own shots when asked) until a break of kind `until` leads."""
    for _ in range(12):
        (who, kind), *_ = pending(table)
        if kind == until:
            return
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(table, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(table, "yield", who=who)
    raise AssertionError(pending(table))


@pytest.fixture(scope="session")
def base_damaged(base_game: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed fires at 1.4.fire; kli watches only for damage ({damage: {}}): no auction, fed rolls, and when the
    step resolves kli's D7 is hit: kli gets a `reply` break AT 1.4.fire (firm stays there)."""

    def build(table: Table) -> None:
        table.turn("fed", through="1.3.damage")
        table.turn("kli", through="1.32.final", breaks=[{"damage": {}}])
        seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "weapons": 1, "reinforce": 4}}})
        seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 0, "weapons": 2}}})
        table.turn("fed", through="1.8.damage", entries=[FED_FIRES])
        settle(table, "reply")
        status = table.data("status.yaml")
        assert pending(table) == [("kli", "reply")] and status["firm"] == "1.4.fire", status

    return built_from(tmp_path_factory, "tactical_seed_play-base_damaged", base_game, build)


def shields(table: Table, unit: str) -> list[int]:
    """The unit's shields at the firm point, as `pbem log` prints them."""
    line = next(x for x in table.cli("log", who="fed").output.splitlines() if x.strip().startswith(f"id={unit} "))
    return json.loads(line.split("shields=", 1)[1].split("]", 1)[0] + "]")


def shield_hit(table: Table) -> int:
    why = table.data("status.yaml")["pending"][0]["why"]
    return int(why.split("shield #", 1)[1].split()[0])


def test_damage_reply__the_damaged_player_fires_back_in_the_same_fire_step(base_damaged: Table,
                                                                            tmp_path: Path) -> None:
    """Seed §6.C.1: the amount is known at the break, its resolution delayed, so the damaged player can act
    simultaneously with the shot that hit him. kli adds his own shot at 1.4.fire (no `firm.changed`), rolls for
    it, and the step is scored with both shots together."""
    table = private(base_damaged, tmp_path)
    table.turn("kli", entries=[KLI_FIRES], note="firing back at 1.4")
    settle(table, "horizon")
    assert table.data("status.yaml")["firm"] == "1.9.move"
    assert shields(table, "CA") != [20] * 6 and shields(table, "D7") != [20] * 6  # both shots scored


def test_damage_reply__a_reinforcement_takes_the_hit_first(base_damaged: Table, tmp_path: Path) -> None:
    """Seed §6.C.2: at his shield-damage break kli reinforces the shield that was hit with the 4 points he
    allocated; the step is scored again with it: the reinforcement takes the hit first."""
    table = private(base_damaged, tmp_path)
    shield = shield_hit(table)
    table.turn("kli", entries=[{"at": "1.4.fire", "unit": "D7", "do": {"reinforce": {"shield": shield, "points": 4}}}],
               note="reinforcing")
    assert table.data("status.yaml")["firm"] == "1.9.move"
    assert shields(table, "D7") == [20] * 6  # the 4 points took the whole hit (the damage table gives 1 here)
    assert f"reinforce shield={shield} points=4" in table.cli("log", who="fed").output


def test_damage_reply__a_pass_lets_the_step_be_scored(base_damaged: Table, tmp_path: Path) -> None:
    """kli passes: the step is scored as it stood, and his damage break is not met a second time."""
    table = private(base_damaged, tmp_path)
    table.turn("kli", note="nothing to add")
    assert table.data("status.yaml")["firm"] == "1.9.move" and pending(table) == [("fed", "horizon")]
    assert shields(table, "D7") != [20] * 6


# --- results one can see: shots, entries, where the ships end up, the outcome (docs/tactical.md) -------------

def test_results__log_summary_check_and_render_show_the_shots_the_entries_and_the_outcome(
        base_damaged: Table, tmp_path: Path) -> None:
    """`pbem log`, `pbem log --html` and `pbem summary` list each scored shot (die, damage, the shield or internals
    that took it); `pbem summary` lists the entries themselves; `pbem check` says where the ships stand; once the
    game is over the log, the summary, the page and `pbem render` state the outcome by docs/tactical.md's rule."""
    table = private(base_damaged, tmp_path)
    table.turn("kli", note="nothing to add")
    checked = table.cli("check", who="fed").output
    assert "where the units stand where replay stops:" in checked and "CA (fed) 0510 facing B" in checked
    table.turn("fed", through="1.32.final")
    for _ in range(6):
        status = table.data("status.yaml")
        if status["over"]:
            break
        cli(table, "yield", who=status["control"])
    assert table.data("status.yaml")["over"]
    log = table.cli("log", who="fed").output
    shot = next(x for x in log.splitlines() if x.strip().startswith("1.4.fire CA ph1 at D7, range 3: die "))
    assert "damage: shield #" in shot and "internals 0" in shot
    assert "Outcome: fed wins on damage taken after the last turn" in log  # only the D7 was hit
    summary = table.cli("summary", who="fed").output
    assert "entry:   fed 1.4.fire CA fire weapon=ph1 target=D7" in summary and shot.strip() in summary
    assert "outcome: fed wins" in summary
    page = tmp_path / "game.html"
    table.cli("log", "--html", "--out", str(page), who="fed")
    assert "Outcome: fed wins" in page.read_text() and shot.strip() in page.read_text()
    assert "the game is over. fed wins" in table.cli("render", who="fed").output
