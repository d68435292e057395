"""The order around the table by dice (seed 000 §2.A: "An ordering 'around the table' of the players must be
defined up front, if there are more than 2 players … simply choose one that is convenient, or determine by die
rolls"). Chosen in the consented start (`pbem start --first ID --order-by-dice`, or `--roll --order-by-dice`;
the start agreement says `order: roll`): the start batch rolls dice of n, n-1, …, 2 sides (refs start/order/1 …),
which give the order by Fisher-Yates; every status.yaml shows it (`table:`), and breaks are served in it.

Built through the CLI on games/tactical-melee (three players: fed, kli, rom), allocations open; and the
dice→order map checked to be a bijection onto all orders (so each order is as likely as any other).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pbem.protocol.serving import order_refs, permutation, start_sides

from conftest import Table, copy_table
from gitutil import Sandbox, fixed_key
from test_dice_flow import cli

SEATS = ("fed", "kli", "rom")


def joined_melee(root: Path) -> Table:
    """games/tactical-melee with every seat claimed (allocations open), not started: fed (alice), kli (bob),
    rom (dave's key, as keys/rom_ed25519), as tests/test_errata.py's melee."""
    from pbem.crypto.keys import write_keypair

    template = root.parent / f"{root.name}-template"
    template.mkdir()
    text = (Path(__file__).resolve().parents[1] / "games" / "tactical-melee" / "game.yaml").read_text()
    # speeds sealed need a sealed allocation: both open here
    (template / "game.yaml").write_text(text.replace("allocation: sealed", "allocation: open")
                                        .replace("speeds: sealed", "speeds: open"))
    box = Sandbox(root)
    shutil.rmtree(box.home / ".ssh")
    for name in ("alice", "bob", "carol"):
        box.new_key(name)
    write_keypair(root / "keys" / "rom_ed25519", fixed_key("dave"))
    table = Table(root)
    done = table.pbem("init", str(table.repo_dir), "--template", str(template), "--id", "order-e2e", who="fed",
                      cwd=root)
    assert done.returncode == 0, done.stderr
    for seat in SEATS:
        cli(table, "join", "--as", seat, who=seat)
    return table


def roll_start_dice(table: Table) -> dict:
    """Every player settles what he owes to the start batch (`pbem yield`: contribution commitments, then the
    contributions, then the roller's reveal) until it is rolled. Returns the batch."""
    from pbem.protocol.dice import Batch, owed

    for _ in range(12):
        [path] = sorted(p for p in (table.repo_dir / "dice").iterdir())
        raw = table.data(f"dice/{path.name}")
        if raw.get("results"):
            return raw
        first = owed(SEATS, [Batch(raw)], None)[0]
        cli(table, "yield", who=first.player)
    raise AssertionError("the start dice were never rolled")


def start_ordered(table: Table, *how: str) -> dict:
    """Each seat runs `pbem start HOW --order-by-dice` (fed proposes, kli and rom sign; rom's run announces the
    dice), the dice are rolled, and fed's run starts the game. Returns the start batch."""
    for seat in SEATS:
        cli(table, "start", *how, "--order-by-dice", who=seat)
    batch = roll_start_dice(table)
    out = cli(table, "start", *how, "--order-by-dice", who="fed")
    assert "around the table: " in out, out
    return batch


def rolled_order(batch: dict) -> tuple[str, ...]:
    refs = [r.get("ref") for r in batch["rolls"]]
    return permutation(SEATS, [batch["results"][refs.index(ref)] for ref in order_refs(len(SEATS))])


def around(order: tuple[str, ...], first: str) -> list[str]:
    """The seats in `order` starting with `first`: the order breaks are served in after his predecessor."""
    i = order.index(first)
    return list(order[i:] + order[:i])


@pytest.fixture(scope="module")
def base_joined(tmp_path_factory: pytest.TempPathFactory) -> Table:
    return joined_melee(tmp_path_factory.mktemp("order") / "joined")


@pytest.fixture(scope="module")
def base_ordered(base_joined: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed starts by consent; the dice decide the order around the table. The dice secrets are made reproducible
    here (pbem's own are fresh random bytes), chosen so that the order goes the other way round the table from
    game.yaml's: serving breaks in it then differs from serving them in game.yaml's order."""
    from pbem.crypto import dice as dice_crypto

    table = copy_table(base_joined, tmp_path_factory.mktemp("order") / "ordered")
    counter = itertools.count()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dice_crypto, "fresh_secret",
                      lambda: hashlib.sha256(f"order-0-{next(counter)}".encode()).digest())
        start_ordered(table, "--first", "fed")
    assert table.data("status.yaml")["table"] == ["kli", "fed", "rom"]  # not a turn of fed, kli, rom
    return table


@pytest.fixture
def ordered(base_ordered: Table, tmp_path: Path) -> Table:
    return copy_table(base_ordered, tmp_path / "table")


def test_seed_2_a_the_start_dice_give_the_table_order_and_breaks_are_served_in_it(ordered: Table) -> None:
    [path] = sorted((ordered.repo_dir / "dice").iterdir())
    batch = ordered.data(f"dice/{path.name}")
    assert [r["ref"] for r in batch["rolls"]] == ["start/order/1", "start/order/2"]
    assert [r.get("sides", batch["sides"]) for r in batch["rolls"]] == [3, 2]  # Fisher-Yates: d3, then d2
    order = rolled_order(batch)
    agreement = ordered.data("agreements/fed-0001.yaml")
    assert agreement["content"]["first"] == "fed" and agreement["content"]["order"] == "roll"
    status = ordered.data("status.yaml")
    assert status["table"] == list(order) and status["control"] == "fed"
    # at 1.0.alloc everybody needs orders: served around the rolled table, starting with fed
    assert [b["player"] for b in status["pending"]] == around(order, "fed") == ["fed", "rom", "kli"]  # game.yaml
    # seats kli after fed; around the table the dice made, rom comes next
    assert f"table:   {', '.join(order)} (the order around the table, by dice)" in cli(ordered, "status", "--plain")
    log = cli(ordered, "log")
    names = {"fed": "Federation", "kli": "Klingon", "rom": "Romulan"}
    assert ("Players, around the table (the order the start dice gave): "
            + ", ".join(f"{names[p]} ({p})" for p in order)) in log.splitlines()
    page = cli(ordered, "log", "--html")
    line = next(x for x in page.splitlines() if "Players, around the table" in x)
    at = [line.index(names[p]) for p in order]
    assert at == sorted(at), line  # the HTML page seats them as the dice did
    ordered.turn("fed", through="1.0.alloc")
    status = ordered.data("status.yaml")
    assert [b["player"] for b in status["pending"]] == around(order, "fed")[1:], status
    assert status["table"] == list(order)  # every status shows it
    nxt = status["control"]
    ordered.turn(nxt, through="1.0.alloc")
    assert ordered.data("status.yaml")["control"] == around(order, "fed")[2]
    done = ordered.cli("verify")
    assert done.exit_code == 0, done.output


def test_seed_2_a_who_starts_and_the_order_both_by_dice(base_joined: Table, tmp_path: Path) -> None:
    table = copy_table(base_joined, tmp_path / "table")
    batch = start_ordered(table, "--roll")
    assert [r["ref"] for r in batch["rolls"]] == ["start", "start/order/1", "start/order/2"]
    assert [r.get("sides", batch["sides"]) for r in batch["rolls"]] == [3, 3, 2]
    first = SEATS[batch["results"][0] - 1]
    order = rolled_order(batch)
    status = table.data("status.yaml")
    assert status["control"] == first and status["table"] == list(order)
    assert [b["player"] for b in status["pending"]] == around(order, first)
    assert table.cli("verify").exit_code == 0


def test_seed_2_a_without_the_dice_the_table_order_is_game_yamls(base_joined: Table, tmp_path: Path) -> None:
    table = copy_table(base_joined, tmp_path / "table")
    for seat in SEATS:
        cli(table, "start", "--first", "kli", who=seat)
    status = table.data("status.yaml")
    assert "table" not in status and [b["player"] for b in status["pending"]] == ["kli", "rom", "fed"]


def test_two_players_sit_in_the_only_order_there_is(started: Table) -> None:
    """The duel of conftest is started; a fresh duel before the start refuses --order-by-dice (usage)."""
    from conftest import SEATS as DUEL
    from test_dice_flow import refused

    table = copy_table(started, started.root.parent / "duel")
    shutil.rmtree(table.repo_dir)
    done = table.pbem("init", str(table.repo_dir), "--template", "tactical-duel", "--id", "duel-two", who="fed",
                      cwd=table.root)
    assert done.returncode == 0, done.stderr
    for seat in DUEL:
        cli(table, "join", "--as", seat, who=seat)
    error = refused(table, "start", "--roll", "--order-by-dice", who="fed", rule="usage.start", code=2)
    assert "who starts fixes who follows" in error, error
    # the same terms proposed without pbem's check: the verifier refuses them (agreement.malformed)
    from pbem.errors import PbemError
    from pbem.protocol.kinds import START
    from pbem.services import agreements
    from pbem.services.workspace import Workspace, load_identity

    ws = Workspace.open(table.repo_dir)
    me = load_identity(str(table.key("fed")), table.repo_dir)
    digest = ws.game_of(ws.head_files()).manifest.digest
    with pytest.raises(PbemError) as caught:
        agreements.propose(ws, me, START, {"game": digest, "roll": True, "order": "roll"}, "start, by dice")
    assert caught.value.finding.rule == "agreement.malformed", caught.value.finding


# --- the dice -> order map -------------------------------------------------------------------------------------

def dice_of(seats: tuple[str, ...], order: tuple[str, ...]) -> list[int]:
    """The one sequence of dice that gives `order` (Fisher-Yates run backwards)."""
    now, dice = list(seats), []
    for i in range(len(seats) - 1):
        j = now.index(order[i], i)
        dice.append(j - i + 1)
        now[i], now[j] = now[j], now[i]
    return dice


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_every_order_comes_from_exactly_one_sequence_of_dice(n: int) -> None:
    seats = tuple(f"p{i}" for i in range(n))
    sides = [start_sides(ref, n) for ref in order_refs(n)]
    assert sides == list(range(n, 1, -1))
    orders = [permutation(seats, dice) for dice in itertools.product(*(range(1, s + 1) for s in sides))]
    assert len(orders) == len(set(orders)) == math.factorial(n)  # n!/n! each: uniform when the dice are fair


@given(st.integers(min_value=3, max_value=16).flatmap(
    lambda n: st.tuples(st.just(n), st.permutations([f"p{i}" for i in range(n)]))))
def test_the_dice_to_order_map_is_a_bijection(case: tuple[int, list[str]]) -> None:
    n, wanted = case
    seats = tuple(f"p{i}" for i in range(n))
    dice = dice_of(seats, tuple(wanted))
    assert all(1 <= d <= start_sides(ref, n) for d, ref in zip(dice, order_refs(n)))  # each die in range
    assert permutation(seats, dice) == tuple(wanted)  # onto: every order is reached
    assert dice_of(seats, permutation(seats, dice)) == dice  # one to one: by exactly these dice


@given(st.integers(min_value=3, max_value=16).flatmap(
    lambda n: st.tuples(st.just(n), st.tuples(*(st.integers(1, n - k) for k in range(n - 1))))))
def test_any_dice_give_an_order_of_all_seats(case: tuple[int, tuple[int, ...]]) -> None:
    n, dice = case
    seats = tuple(f"p{i}" for i in range(n))
    order = permutation(seats, dice)
    assert sorted(order) == sorted(seats) and dice_of(seats, order) == list(dice)


def test_a_die_out_of_range_gives_no_order() -> None:
    with pytest.raises(ValueError):
        permutation(SEATS, [3, 3])  # the second die is a d2
    with pytest.raises(ValueError):
        permutation(SEATS, [1])
