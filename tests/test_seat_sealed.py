"""A seat given to a new key while its old key sealed something not opened yet (DESIGN §4.2, §4.8; docs/dice.md
"A seat given to a new key"): the new key cannot open the old key's boxes, so the commit completing the `seat`
agreement marks each such part withheld by it, as an nmr would, and nobody waits for a reveal nobody can make.

Through the real CLI: the duel of tests/conftest.py (fed = alice's key, kli = bob's; carol's key takes a seat),
where fed rolled, kli contributed, and fed's seat goes to carol before fed revealed; and the three-cornered melee,
where kli committed to his contribution (sealed to his key) and then lost it."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from conftest import KLI_TURN_1, Table, built_from, copy_table
from pbem.crypto import dice as dice_crypto
from pbem.crypto import seal
from pbem.crypto.keys import load_private_key
from pbem.protocol import dice as dice_protocol
from pbem.protocol.dice import Batch
from test_agreement_kinds import carol_pub
from test_seat_fair import newest
from test_tactical_cli_bad_input import base_game  # noqa: F401
from test_tactical_cli_bad_input import seal as seal_allocation
from test_dice_flow import (base_announced, base_contributed, batch, cli, findings, pending, refused,  # noqa: F401
                            sneak_as, write_batch)

SEAT = "kli-0001"  # kli's first agreement: the seat he gives


def seat_fed_to_carol(table: Table) -> str:
    """kli, the only other active player of the duel, gives fed's seat to carol's key (fed lost his): the
    proposal is the last signature it needs, so its commit takes effect. Returns what pbem said."""
    return cli(table, "agree", "seat", "--seat", "fed", "--new-key", carol_pub(table), "--why", "lost-key",
               who="kli")


@pytest.fixture(scope="session")
def base_reseated(base_contributed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:  # noqa: F811
    """fed owed the reveal of fed-0001 (kli contributed); fed's seat went to carol's key before he made it."""

    def build(table: Table) -> None:
        assert ("fed", "dice") in [(p, k) for p, k, _ in pending(table)]
        assert "in effect" in seat_fed_to_carol(table)
        assert "fed's part of dice fed-0001 withheld" in table.git("log", "-1", "--format=%B").stdout.decode()

    return built_from(tmp_path_factory, "seat_sealed-base_reseated", base_contributed, build)


@pytest.fixture
def reseated(base_reseated: Table, tmp_path: Path) -> Table:
    return copy_table(base_reseated, tmp_path / "table")


def test_the_old_keys_unopened_reveal_is_withheld_and_the_new_holder_moves_on(reseated: Table) -> None:
    """The seat's commit marks fed's reveal withheld by the seat agreement: its rolls are lost (the shots they
    were for miss, never a re-roll); nobody owes fed-0001 anything now, carol's pbem does not try to open the old
    key's box, and the game goes on with every commit verifying."""
    assert batch(reseated)["withheld"] == {"fed": SEAT}
    assert "reveal" not in batch(reseated) and "results" not in batch(reseated)
    assert all(k != "dice" for _p, k, _ in pending(reseated)), pending(reseated)
    status = cli(reseated, "status", "--plain", who="carol")
    assert f"missed: fed's reveal withheld, seat {SEAT}" in status
    assert pending(reseated) == [("kli", "horizon", "needs orders from 1.0.alloc")]  # as after a reveal
    reseated.turn("kli", **{k: v for k, v in KLI_TURN_1.items() if k != "note"})
    assert pending(reseated)[0][:2] == ("fed", "horizon")
    reseated.edit("fed", through="1.12.damage")
    cli(reseated, "yield", "-m", "carol plays fed", who="carol")
    assert findings(reseated) == []


def test_nobody_opens_the_old_keys_die_after_the_seat_change(reseated: Table) -> None:
    """The verifier keeps the loss firm: even the true reveal, recovered with the old key from its owner box,
    is refused once the seat changed, written by the new holder (dice.withheld) or by the old key, which holds no
    seat any more (signature.unknown-key); so no one picks the die after seeing it."""
    raw = batch(reseated)
    old_key = load_private_key(reseated.key("fed"))
    secret = seal.recover_key(base64.b64decode(raw["owner_box"]), old_key)
    write_batch(reseated, {**raw, "reveal": secret.hex()})
    line = refused(reseated, "yield", who="carol", rule="dice.withheld", where="dice/fed-0001.yaml")
    assert "fed-0001" in line
    head = reseated.head()
    sneak_as(reseated, "carol", "the old key's reveal, written by hand")
    assert "dice.withheld" in {f["rule"] for f in findings(reseated)}
    reseated.git("reset", "-q", "--hard", head)
    write_batch(reseated, {**raw, "reveal": secret.hex()})
    reseated.sneak("fed", "the old key's reveal, signed by the old key", status="keep")
    assert "signature.unknown-key" in {f["rule"] for f in findings(reseated)}


def test_a_contribution_the_old_key_committed_to_is_left_out_and_the_batch_goes_on(tmp_path: Path) -> None:
    """The melee (fed, kli, rom: contributions are committed first, each sealed to its contributor's key): kli
    committed to his contribution to fed's die, then lost his key; fed and rom give his seat to carol's key.
    His contribution is withheld by that seat agreement (left out of the seed: the die is made from rom's), carol's
    pbem does not try to open kli's box, and the batch resolves with every commit verifying."""
    from test_errata import _melee

    table = _melee(tmp_path / "melee")
    cli(table, "roll", "--for", "a table die", who="fed")
    table.edit("fed", through="1.8.damage")
    cli(table, "yield", "-m", "a die for the table", who="fed")
    cli(table, "yield", who="kli")  # his commitment, sealed to bob's key
    cli(table, "yield", who="rom")  # rom's, and then his contribution itself: every commitment is in
    assert ("kli", "dice", "contribution owed to dice fed-0001 of fed") in pending(table)
    cli(table, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(table), "--why", "lost-key", who="fed")
    seat = newest(table, "fed")
    cli(table, "sign", seat, who="rom")
    assert batch(table)["withheld"] == {"kli": seat}
    assert "kli" not in batch(table)["contributions"]
    assert ("fed", "dice", "reveal owed for dice fed-0001") in pending(table)
    assert "kli's contribution withheld, seat " + seat + ": left out of the seed" in cli(table, "status", "--plain")
    cli(table, "yield", who="fed")  # fed reveals: the die is made from rom's contribution alone
    raw = batch(table)
    others = [bytes.fromhex(raw["contributions"]["rom"])]
    seed = dice_crypto.seed_commit_reveal("melee-e2e", "fed-0001", bytes.fromhex(raw["reveal"]), others)
    assert raw["results"] == dice_crypto.rolls(seed, raw["sides"], len(raw["rolls"]))
    table.edit("kli", through="1.8.damage")
    cli(table, "yield", "-m", "carol plays kli", who="carol")  # she owes no box she cannot open
    assert findings(table) == []


def test_the_new_key_gives_what_the_old_one_never_committed_to(base_announced: Table,  # noqa: F811
                                                                tmp_path: Path) -> None:
    """fed announced a die and kli owes his contribution; kli's seat goes to carol's key before he gave it. The
    old key sealed nothing there, so nothing is withheld: carol contributes with `pbem yield`, fed reveals, and
    the die is made from both (a seat change is no way to leave a player out of a die)."""
    table = copy_table(base_announced, tmp_path / "table")
    cli(table, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(table), "--why", "lost-key", who="fed")
    assert "withheld" not in batch(table)
    cli(table, "yield", who="carol")
    assert "kli" in batch(table)["contributions"]
    cli(table, "yield", who="fed")
    assert batch(table)["results"]
    assert findings(table) == []


def test_a_seat_marks_exactly_what_the_old_key_sealed() -> None:
    """The verifier's rule for the seat's marks (pure): the commit completing a seat may mark the old key's
    reveal and a contribution he committed to, and must (dice.bad-withheld when left unmarked); it may not mark
    a contribution he never committed to (the new key gives that one: dice.bad-withheld)."""
    players = ["fed", "kli", "rom"]
    announced = {"id": "fed-0001", "roller": "fed", "mode": "commit-reveal", "sides": 6, "rolls": [{"for": "x"}],
                 "commit": "00" * 32, "owner_box": "AA=="}
    before = Batch({**announced, "contribution_commits": {"kli": "11" * 32}}, "dice/fed-0001.yaml")
    settled, seats = {"fed": "kli-0002", "kli": "fed-0003", "rom": "fed-0004"}, {"fed", "kli", "rom"}
    assert dice_protocol.sealed(players, before, "fed") and dice_protocol.sealed(players, before, "kli")
    assert not dice_protocol.sealed(players, before, "rom")
    for marks, rules in (({"fed": "kli-0002", "kli": "fed-0003"}, set()),
                         ({"fed": "kli-0002", "kli": "fed-0003", "rom": "fed-0004"}, {"dice.bad-withheld"})):
        after = Batch({**before.raw, "withheld": marks}, before.file)
        found = dice_protocol.batch_findings("g", players, {}, None, {"fed-0001": before}, {"fed-0001": after},
                                             "fed", settled, seats)
        assert {f.rule for f in found} == rules, found
    unmarked = dice_protocol.settlement_findings(players, {"fed-0001": before}, {"fed-0001": before},
                                                 {"kli": "fed-0003"}, set(), {"kli"})
    assert [f.rule for f in unmarked] == ["dice.bad-withheld"]


def test_a_sealed_allocation_of_the_old_key_is_withheld_by_the_seat(base_game: Table,  # noqa: F811
                                                                    tmp_path: Path) -> None:
    """A duel with sealed allocations: kli sealed his turn's allocation (to bob's key), then lost his key, and
    fed gives kli's seat to carol's key. The seat's commit marks the sealed allocation withheld by it, as a
    withheld secret is: it counts as none (no energy allocated); fed seals his, and the game goes on with carol
    owing nothing she cannot open."""
    table = copy_table(base_game, tmp_path / "table")
    table.turn("fed", through="1.3.damage")
    table.turn("kli", through="1.32.final")
    seal_allocation(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "weapons": 1}}})
    [secret] = [p.stem for p in (table.repo_dir / "secrets").glob("kli-*.yaml")]
    cli(table, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(table), "--why", "lost-key", who="fed")
    seat = newest(table, "fed")
    assert table.data(f"secrets/{secret}.yaml")["withheld"] == seat
    assert f"kli's reveal withheld, seat {seat}" in cli(table, "status", "--plain", who="carol")
    seal_allocation(table, "fed", {"turn": 1, "units": {"CA": {"speed": 0, "weapons": 2}}})
    assert all(who != "kli" or kind != "secret" for who, kind, _ in pending(table)), pending(table)
    assert findings(table) == []
