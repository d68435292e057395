"""Who contributes to a batch (docs/dice.md "Who contributes"; protocol.dice_contributors): the seats still playing
when it is announced. The protocol's rules alone, as data: a batch's state -> who owes what; an announcement ->
its findings; a contribution by a seat that had left -> refused; the seed made of the contributors' parts only.
The same through `pbem` and plain git: tests/test_attacks.py, section "fair-20".
"""

from __future__ import annotations

from typing import Any

import pytest

from pbem.crypto import dice as dice_crypto
from pbem.protocol import dice, dice_contributors
from pbem.protocol.dice import Batch

MELEE = ["fed", "kli", "rom"]
SECRET = bytes(range(32))
PART = {"kli": "11" * 32, "rom": "22" * 32}
COMMITS = {p: dice_crypto.contribution_commitment(bytes.fromhex(v)).hex() for p, v in PART.items()}


def batch(mode: str = "commit-reveal", **more: Any) -> Batch:
    raw = {"id": "fed-0001", "roller": "fed", "mode": mode, "sides": 6, "rolls": [{"for": "a table die"}],
           **({"commit": dice_crypto.commitment(SECRET).hex(), "owner_box": "AAAA"} if mode != "escrow" else {}),
           **more}
    lines = {"id": 1, "roller": 2, **({"contributors": 8} if "contributors" in more else {})}
    return Batch(raw, "dice/fed-0001.yaml", lines)


def owed(b: Batch) -> list[tuple[str, str]]:
    return [(o.player, o.why.split(" owed")[0]) for o in dice.owed(MELEE, [b], None)]


OWED = [
    ("every seat playing: both commit first (a table of three)", batch(),
     [("kli", "contribution commitment"), ("rom", "contribution commitment")]),
    ("rom had resigned: kli alone contributes, in the clear (one contributor commits nothing first)",
     batch(contributors=["kli"]), [("kli", "contribution")]),
    ("rom had resigned, kli's part in: the roller reveals",
     batch(contributors=["kli"], contributions={"kli": PART["kli"]}), [("fed", "reveal")]),
    ("kli and rom both playing, named as such: as without the field", batch(contributors=["kli", "rom"]),
     [("kli", "contribution commitment"), ("rom", "contribution commitment")]),
    ("rom resigned after it was announced: his resign withheld his part, kli's commitment is asked",
     batch(withheld={"rom": "rom-0001"}), [("kli", "contribution commitment")]),
    ("rom had resigned and kli's part was withheld by an nmr: only the reveal is left",
     batch(contributors=["kli"], withheld={"kli": "fed-0002"}), [("fed", "reveal")]),
]


@pytest.mark.parametrize(("name", "state", "expected"), OWED, ids=[c[0] for c in OWED])
def test_who_owes_what_to_a_batch(name: str, state: Batch, expected: list[tuple[str, str]]) -> None:
    assert owed(state) == expected


ANNOUNCED = [
    ("nobody resigned, no field", batch(), frozenset(), []),
    ("nobody resigned, every other seat named", batch(contributors=["kli", "rom"]), frozenset(), []),
    ("rom resigned, kli named", batch(contributors=["kli"]), frozenset({"rom"}), []),
    ("rom resigned, no field: the batch would wait on a player who left", batch(), frozenset({"rom"}),
     ["dice.bad-batch@2"]),
    ("rom resigned, rom named too", batch(contributors=["kli", "rom"]), frozenset({"rom"}), ["dice.bad-batch@8"]),
    ("nobody resigned, kli left out: a die without his part", batch(contributors=["rom"]), frozenset(),
     ["dice.bad-batch@8"]),
    ("rom resigned, nobody named: the roller's own die", batch(contributors=[]), frozenset({"rom"}),
     ["dice.bad-batch@8"]),
    ("kli and rom resigned: nobody is left to contribute", batch(contributors=[]), frozenset({"kli", "rom"}),
     ["dice.bad-batch@8"]),
    ("an escrow batch names none", batch("escrow", contributors=["kli"]), frozenset({"rom"}), ["dice.bad-batch@8"]),
    ("an escrow batch without the field", batch("escrow"), frozenset({"rom"}), []),
]


@pytest.mark.parametrize(("name", "new", "gone", "expected"), ANNOUNCED, ids=[c[0] for c in ANNOUNCED])
def test_an_announcement_names_the_seats_still_playing(name: str, new: Batch, gone: frozenset[str],
                                                       expected: list[str]) -> None:
    found = dice_contributors.findings(MELEE, gone, {}, {new.id: new})
    assert [f"{f.rule}@{f.line}" for f in found] == expected


def test_a_batch_announced_before_the_resign_is_judged_as_announced() -> None:
    """Announced while rom played, unchanged since: his resign later marks his part withheld, the batch keeps no
    field and is not judged again."""
    before = batch(contributions={"kli": PART["kli"]})
    after = batch(contributions={"kli": PART["kli"]}, withheld={"rom": "rom-0001"})
    assert dice_contributors.findings(MELEE, frozenset({"rom"}), {before.id: before}, {after.id: after}) == []
    assert dice_contributors.to_write(MELEE, "fed", frozenset({"rom"})) == ["kli"]
    assert dice_contributors.to_write(MELEE, "fed", frozenset()) is None


def test_a_seat_that_had_left_contributes_nothing() -> None:
    """rom resigned before fed's batch: a contribution (or commitment) in his name is refused, even signed by him."""
    old = batch(contributors=["kli"])
    for field, value in (("contributions", PART["rom"]), ("contribution_commits", COMMITS["rom"])):
        new = batch(contributors=["kli"], **{field: {"rom": value}})
        found = dice.batch_findings("melee-e2e", MELEE, {}, None, {old.id: old}, {new.id: new}, "rom")
        assert {f.rule for f in found} == {"dice.bad-contribution"}, (field, found)
    new = batch(contributors=["kli"], contributions={"kli": PART["kli"]})
    assert dice.batch_findings("melee-e2e", MELEE, {}, None, {old.id: old}, {new.id: new}, "kli") == []


def test_the_seed_is_made_of_the_contributors_parts_and_the_named_list_is_fixed() -> None:
    revealed = batch(contributors=["kli"], contributions={"kli": PART["kli"]}, reveal=SECRET.hex())
    seed = dice_crypto.seed_commit_reveal("melee-e2e", "fed-0001", SECRET, [bytes.fromhex(PART["kli"])])
    assert dice.derive("melee-e2e", MELEE, revealed) == dice_crypto.rolls(seed, 6, 1)
    old = batch(contributors=["kli"], contributions={"kli": PART["kli"]})
    new = batch(contributors=["kli", "rom"], contributions={"kli": PART["kli"]})
    found = dice.batch_findings("melee-e2e", MELEE, {}, None, {old.id: old}, {new.id: new}, "fed")
    assert "dice.changed" in {f.rule for f in found}
