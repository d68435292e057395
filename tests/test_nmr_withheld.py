"""What an nmr or a resign settles in a dice batch (DESIGN §4.8, §5; docs/dice.md "A part withheld"), the
protocol's rules alone, at a table of three where contributions are committed first: a withheld contribution
is left out of the seed whether or not its player had committed; a withheld reveal loses the batch's rolls; a
mark is written only by the agreement settling it, where its player owed something, and never changes.
The same cheats built with git and the CLI are in tests/test_attacks.py ("nmr settles withheld reveals").
"""

from __future__ import annotations

from typing import Any

from pbem.crypto import dice as dice_crypto
from pbem.protocol import dice
from pbem.protocol.dice import Batch
from pbem.rulesets.base import Withheld

MELEE = ["fed", "kli", "rom"]
SECRET = bytes(range(32))
KLI, ROM = bytes([1]) * 32, bytes([2]) * 32


def batch(**more: Any) -> Batch:
    raw = {"id": "fed-0001", "roller": "fed", "mode": "commit-reveal", "sides": 6,
           "rolls": [{"for": "CA ph1 at D7", "ref": "1.4.fire/CA/ph1"}],
           "commit": dice_crypto.commitment(SECRET).hex(), "owner_box": "AAAA", **more}
    return Batch(raw, "dice/fed-0001.yaml")


def committed(*who: str) -> dict[str, Any]:
    secrets = {"kli": KLI, "rom": ROM}
    return {"contribution_commits": {p: dice_crypto.contribution_commitment(secrets[p]).hex() for p in who},
            "contribution_boxes": {p: "AAAA" for p in who}}


def owed(b: Batch) -> list[tuple[str, str]]:
    return [(x.player, x.why.split(" ")[0] + " " + x.why.split(" ")[1]) for x in dice.owed(MELEE, [b], None)]


def rules(old: Batch, new: Batch, committer: str, settled: dict[str, str] | None = None) -> list[str]:
    return [f.rule for f in dice.batch_findings("melee", MELEE, {}, None, {old.id: old}, {new.id: new}, committer,
                                                settled)]


def test_a_contributor_who_never_committed_is_left_out_and_the_others_go_on() -> None:
    only_rom = batch(**committed("rom"))
    assert owed(only_rom) == [("kli", "contribution commitment")]
    settled = batch(**committed("rom"), withheld={"kli": "rom-0001"})
    assert rules(only_rom, settled, "rom", {"kli": "rom-0001"}) == []
    assert owed(settled) == [("rom", "contribution owed")]  # every contributor left has committed: rom reveals
    revealed = batch(**committed("rom"), withheld={"kli": "rom-0001"}, contributions={"rom": ROM.hex()})
    assert rules(settled, revealed, "rom") == []
    assert owed(revealed) == [("fed", "reveal owed")]
    done = batch(**revealed.raw, reveal=SECRET.hex())
    seed = dice_crypto.seed_commit_reveal("melee", "fed-0001", SECRET, [ROM])
    assert dice.derive("melee", MELEE, done) == dice_crypto.rolls(seed, 6, 1)


def test_a_contributor_who_committed_and_never_revealed_is_left_out_too() -> None:
    """docs/dice.md: whoever could steer the die by withholding must know the roller's secret; the roller's
    reveal comes last, so only a coalition with the roller could, and it gains a choice between two dice at the
    price of an nmr; the shot missing instead would let the target dodge alone."""
    waiting = batch(**committed("kli", "rom"), contributions={"rom": ROM.hex()})
    assert owed(waiting) == [("kli", "contribution owed")]
    settled = batch(**waiting.raw, withheld={"kli": "fed-0002"})
    assert rules(waiting, settled, "fed", {"kli": "fed-0002"}) == []
    assert owed(settled) == [("fed", "reveal owed")]
    done = batch(**settled.raw, reveal=SECRET.hex())
    seed = dice_crypto.seed_commit_reveal("melee", "fed-0001", SECRET, [ROM])
    assert dice.derive("melee", MELEE, done) == dice_crypto.rolls(seed, 6, 1)
    late = batch(**{**settled.raw, "contributions": {"rom": ROM.hex(), "kli": KLI.hex()}})
    assert rules(settled, late, "kli") == ["dice.withheld"]


def test_a_withheld_reveal_loses_the_rolls_and_says_whose_and_by_which_agreement() -> None:
    waiting = batch(**committed("kli", "rom"), contributions={"kli": KLI.hex(), "rom": ROM.hex()})
    assert owed(waiting) == [("fed", "reveal owed")]
    nmr = batch(**waiting.raw, withheld={"fed": "kli-0003"})
    assert rules(waiting, nmr, "kli", {"fed": "kli-0003"}) == []
    assert owed(nmr) == [] and dice.derive("melee", MELEE, nmr) is None
    assert nmr.lost() == Withheld("fed", "kli-0003", "nmr")
    assert nmr.lost().text() == "fed's reveal withheld, nmr kli-0003"
    assert batch(withheld={"fed": "fed-0004"}).lost() == Withheld("fed", "fed-0004", "resign")
    for key, value in (("reveal", SECRET.hex()), ("results", [6]), ("void", {"reason": "again"})):
        assert "dice.withheld" in rules(nmr, batch(**{**nmr.raw, key: value}), "fed")


def test_a_mark_is_the_settling_agreement_s_where_he_owed_and_never_changes() -> None:
    waiting = batch(**committed("kli"))  # kli committed; rom owes his commitment; fed owes nothing yet
    assert rules(waiting, batch(**waiting.raw, withheld={"rom": "kli-0001"}), "kli") == ["dice.bad-withheld"]
    assert rules(waiting, batch(**waiting.raw, withheld={"rom": "kli-0001"}), "kli",
                 {"rom": "kli-0002"}) == ["dice.bad-withheld"]
    # an nmr settles what he owes now (fed owes no reveal yet); his resign settles every part still to give
    assert rules(waiting, batch(**waiting.raw, withheld={"fed": "kli-0001"}), "kli",
                 {"fed": "kli-0001"}) == ["dice.bad-withheld"]
    assert rules(waiting, batch(**waiting.raw, withheld={"fed": "fed-0002"}), "fed", {"fed": "fed-0002"}) == []
    marked = batch(**waiting.raw, withheld={"rom": "kli-0001"})
    assert rules(marked, batch(**{**waiting.raw, "withheld": {"rom": "kli-0009"}}), "kli") == ["dice.bad-withheld"]
    assert rules(marked, waiting, "kli") == ["dice.bad-withheld"]


def test_the_settling_commit_marks_every_part_its_player_owes() -> None:
    waiting = batch(**committed("kli", "rom"), contributions={"rom": ROM.hex()})
    missing = dice.settlement_findings(MELEE, {waiting.id: waiting}, {waiting.id: waiting}, {"kli": "fed-0002"},
                                       set())
    assert [f.rule for f in missing] == ["dice.bad-withheld"]
    marked = batch(**waiting.raw, withheld={"kli": "fed-0002"})
    assert dice.settlement_findings(MELEE, {waiting.id: waiting}, {waiting.id: marked}, {"kli": "fed-0002"},
                                    set()) == []
    # rom owes nothing here: an nmr against him settles no part of this batch
    assert dice.settlement_findings(MELEE, {waiting.id: waiting}, {waiting.id: waiting}, {"rom": "fed-0002"},
                                    set()) == []
