"""Warnings before a player yields (docs/tactical.md "Warnings before you yield"; pbem.protocol.ahead): `pbem check`
and `pbem status` walk his own view of the game (the firm point carried on by his own orders) to his horizon and
warn, while he can still change them, when his orders take a ship off the map, when a shot of his will be void,
or when a seeking weapon he launches has no pursue plan (it flies straight on and can never hit once its target
is revealed). Warnings are not findings: the commit stays legal.

Built on the game of tests/test_tactical_cli_bad_input.py: fed's CA at 0510 facing B, kli's D7 at 0810 facing E,
both at speed 0, on a 20 × 20 map.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Table, copy_table
from test_dice_flow import cli
from test_tactical_cli_bad_input import base_game  # noqa: F401 (a fixture)

OFF_MAP = "off the map"


@pytest.fixture
def game(base_game: Table, tmp_path: Path) -> Table:  # noqa: F811
    return copy_table(base_game, tmp_path / "table")


def test_check_and_status_warn_before_orders_take_a_ship_off_the_map(game: Table) -> None:
    """fed plots speed 20 heading B from column 05 of a 20-column map: the CA leaves it within the turn. `pbem
    check` warns at once (the commit stays legal), and so does `pbem status` once it is committed."""
    game.edit("fed", through="1.32.final", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 20}}])
    said = cli(game, "check", who="fed")
    assert "warning: your orders take CA off the map at 1." in said and "pbem yield would make" in said, said
    cli(game, "yield", who="fed")
    assert OFF_MAP in cli(game, "status", who="fed")
    assert OFF_MAP not in cli(game, "status", who="kli")  # his own view only: kli is told nothing of fed's


def test_no_warning_for_orders_that_keep_the_ship_on_the_map(game: Table) -> None:
    game.edit("fed", through="1.32.final", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 4}}])
    assert "warning" not in cli(game, "check", who="fed")


def test_a_launch_without_a_pursue_plan_is_warned_at_launch(game: Table) -> None:
    """kli launches S1 at 1.1.activity with its target sealed but no plan to steer it: `pbem check` warns that it
    flies straight on and can never hit once its target is revealed; with a pursue plan the warning goes."""
    game.turn("fed", through="1.32.final")
    launch = {"at": "1.1.activity", "unit": "D7", "do": {"launch": {"weapon": "dr1", "as": "S1"}}}
    game.edit("kli", through="1.32.final", entries=[launch])
    source = game.root / "target.json"
    source.write_text(json.dumps({"unit": "S1", "target": "CA"}))
    cli(game, "seal", "target", str(source), "--concerns", "S1", who="kli")
    said = cli(game, "check", who="kli")
    assert "warning: S1, launched at 1.1.activity, has no pursue plan" in said, said
    players = game.data("players/kli.yaml")
    players["plans"] = [{"unit": "S1", "from": "1.2.move", "until": "1.32.final", "do": {"pursue": "CA"}}]
    from pbem.formats.writer import dump_mapping

    game.write("players/kli.yaml", dump_mapping(players))
    assert "has no pursue plan" not in cli(game, "check", who="kli")


def test_a_shot_void_at_the_step_waiting_for_its_dice_says_so_instead_of_dropping_out() -> None:
    """A void shot owes no die, so it drops out of "dice owed"; `pbem status` says why (protocol.ahead.void_here):
    fed's `aft` phaser (arc D) at the D7 ahead of him, at the fire step replay waits at."""
    import yaml

    from pbem.protocol.ahead import void_here
    from pbem.protocol.model import Checkpoint, Entry, Inputs, PlayerInputs
    from pbem.rulesets.tactical.ruleset import TacticalRuleset
    from test_tactical_cli_bad_input import TEMPLATE

    rules = TacticalRuleset()
    setup = yaml.safe_load(TEMPLATE)["setup"]
    state = rules.initial_state(setup, ["fed", "kli"])
    at = rules.parse_time("1.4.fire")
    shots = [Entry(at, "1.4.fire", "fed", "CA", {"fire": {"weapon": w, "target": "D7"}}, "report/turn-01.yaml", i)
             for i, w in ((2, "ph1"), (3, "aft"))]
    inputs = Inputs.of_entries(("fed", "kli"), tuple(shots), {"fed": PlayerInputs(), "kli": PlayerInputs()})
    lines = void_here(rules, Checkpoint(at, state), inputs, "fed")
    assert len(lines) == 1 and "report/turn-01.yaml:3" in lines[0] and "owes no die" in lines[0], lines
    assert void_here(rules, Checkpoint(at, state), inputs, "kli") == []


def test_status_tells_only_the_owner_that_his_sealed_allocation_does_not_pay(game: Table) -> None:
    """With allocations sealed until the end (public speeds), kli plots speed 4 and seals speed 2: nobody else can
    see it, and at the end his reveal would be refused (rules.allocation). His own `pbem status` opens his box
    with his key and says so while he can still keep within it; fed's says nothing of it."""
    from test_tactical_cli_bad_input import seal

    game.turn("fed", through="1.32.final")
    game.turn("kli", through="1.32.final", breaks=[{"at": "1.2.move"}],
              entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 4}}])
    seal(game, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    seal(game, "fed", {"turn": 1, "units": {"CA": {"speed": 0}}})
    said = cli(game, "status", who="kli")
    assert "warning: your sealed allocation kli-0001 does not pay for what you did" in said, said
    assert "speed 4 used" in said, said
    assert "sealed allocation" not in cli(game, "status", who="fed")
