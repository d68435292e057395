"""An nmr and a seat for the same player completed by one commit (docs/protocol.md "A seat and an nmr at once";
protocol.dice.how_settled): the seat's id marks the parts, and both settle: what the old key sealed (the seat)
and what he owes now (the nmr). With either alone something would be left: the seat's marks alone leave what
the nmr settles owed by the new key, the nmr's alone leave a part the old key sealed that nobody can open.
The protocol's rules alone, as data, in a duel: fed rolled a die kli has not contributed to yet (his reveal is
sealed, not owed now) and owes his contribution to kli's die (owed now, never sealed)."""

from __future__ import annotations

from typing import Any

import pytest

from pbem.crypto import dice as dice_crypto
from pbem.protocol import dice
from pbem.protocol.dice import Batch

DUEL = ["fed", "kli"]
SEAT, NMR = "fed-0003", "kli-0002"
SECRET = bytes(range(32))


def batch(batch_id: str, **more: Any) -> Batch:
    raw = {"id": batch_id, "roller": batch_id.split("-")[0], "mode": "commit-reveal", "sides": 6,
           "rolls": [{"for": "a die"}], "commit": dice_crypto.commitment(SECRET).hex(), "owner_box": "AAAA", **more}
    return Batch(raw, f"dice/{batch_id}.yaml", {"id": 1})


SEALED = batch("fed-0001")  # fed's own die: kli's contribution not in, so fed's reveal is sealed but not owed yet
OWED = batch("kli-0001")  # kli's die: fed owes his contribution now, never committed to
BEFORE = {b.id: b for b in (SEALED, OWED)}

HOW = [
    ("the seat alone: what the old key sealed", {"fed"}, set(), dice.SEAT_SETTLES, {"fed-0001"}),
    ("the nmr alone: what he owes now", set(), {"fed"}, dice.NMR_SETTLES, {"kli-0001"}),
    ("both in one commit: the seat's id, both parts", {"fed"}, {"fed"}, dice.SEAT_AND_NMR, {"fed-0001", "kli-0001"}),
]


@pytest.mark.parametrize(("name", "seats", "absent", "how", "due"), HOW, ids=[c[0] for c in HOW])
def test_what_each_settles_and_both_together(name: str, seats: set[str], absent: set[str], how: str,
                                             due: set[str]) -> None:
    agreement = SEAT if seats else NMR
    assert dice.how_settled("fed", agreement, seats, absent) == how
    assert {b.id for b in BEFORE.values() if dice.part_due(DUEL, b, "fed", how)} == due


def marked(*ids: str) -> dict[str, Batch]:
    return {b.id: batch(b.id, withheld={"fed": SEAT}) if b.id in ids else b for b in BEFORE.values()}


def test_the_commit_completing_both_marks_both_parts_with_the_seat_s_id() -> None:
    settled = {"fed": SEAT}
    both = dice.settlement_findings(DUEL, BEFORE, marked("fed-0001", "kli-0001"), settled, (), {"fed"}, {"fed"})
    assert both == []
    assert dice.batch_findings("g", DUEL, {}, None, BEFORE, marked("fed-0001", "kli-0001"), "kli", settled, {"fed"},
                               {"fed"}) == []
    # the seat's marks alone leave the part the nmr settles: the game would wait on fed's seat for it
    found = dice.settlement_findings(DUEL, BEFORE, marked("fed-0001"), settled, (), {"fed"}, {"fed"})
    assert [(f.rule, f.file) for f in found] == [("dice.bad-withheld", "dice/kli-0001.yaml")]
    # without the nmr, the seat may not withhold what the new key can give
    found = dice.batch_findings("g", DUEL, {}, None, BEFORE, marked("fed-0001", "kli-0001"), "kli", settled, {"fed"})
    assert [(f.rule, f.file) for f in found] == [("dice.bad-withheld", "dice/kli-0001.yaml")]
