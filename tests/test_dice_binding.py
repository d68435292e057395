"""Dice bound to the rules (DESIGN §5 "Binding"; docs/dice.md "Bound to the rules" and "Three or more players"),
the protocol's rules alone: which refs a batch may roll for, with which die, one batch per ref, no void of a
scored batch, the id that carries its roller, and contributions committed before any is revealed at a table of
three. The same cheats built with git and the CLI are in tests/test_attacks.py ("Dice bound to the rules").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pbem.crypto import dice as dice_crypto
from pbem.protocol import dice, dice_binding
from pbem.protocol.dice import Batch

SHOT = "1.4.fire/CA/ph1"
MELEE = ["fed", "kli", "rom"]
SECRET = bytes(range(32))


def batch(batch_id: str = "fed-0001", refs: tuple[str, ...] = (SHOT,), sides: int = 6, **more: Any) -> Batch:
    raw = {"id": batch_id, "roller": batch_id.rsplit("-", 1)[0] if "-" in batch_id else "fed",
           "mode": "commit-reveal", "sides": sides, "rolls": [{"for": r, "ref": r} for r in refs],
           "commit": dice_crypto.commitment(SECRET).hex(), "owner_box": "AAAA", **more}
    return Batch(raw, f"dice/{batch_id}.yaml", {"id": 1, "sides": 4, "rolls": 5})


def binding(before: list[Batch], after: list[Batch], owed: set[str], resolved: bool = False) -> list[str]:
    found = dice_binding.binding_findings({b.id: b for b in before}, {b.id: b for b in after}, owed,
                                  lambda ref: 6 if ref != "start" else 2, lambda ref: resolved)
    return [f"{f.rule}@{f.file}:{f.line}" for f in found]


def test_a_batch_for_a_ref_owed_now_with_the_rules_die_is_bound() -> None:
    assert binding([], [batch()], {SHOT}) == []


def test_the_die_must_be_the_one_the_rules_give_the_ref() -> None:
    assert binding([], [batch(sides=2)], {SHOT}) == ["dice.bad-sides@dice/fed-0001.yaml:4"]
    assert binding([], [batch(sides=1000)], {SHOT}) == ["dice.bad-sides@dice/fed-0001.yaml:4"]
    assert binding([], [batch(refs=("start",), sides=3)], {"start"}) == ["dice.bad-sides@dice/fed-0001.yaml:4"]


def test_a_ref_not_owed_now_is_unbound_and_says_whether_its_step_is_resolved() -> None:
    assert binding([], [batch()], set()) == ["dice.unbound-ref@dice/fed-0001.yaml:5"]
    found = dice_binding.binding_findings({}, {"fed-0001": batch()}, set(), lambda ref: 6, lambda ref: True)
    assert "resolved already" in found[0].message
    found = dice_binding.binding_findings({}, {"fed-0001": batch()}, set(), lambda ref: 6, lambda ref: False)
    assert "never before it is declared" in found[0].message


def test_one_standing_batch_per_ref_and_a_voided_one_does_not_count() -> None:
    first = batch()
    assert binding([first], [first, batch("fed-0002")], {SHOT}) == ["dice.rebound-ref@dice/fed-0002.yaml:5"]
    # the first standing batch keeps the ref, whatever the ids' order
    assert binding([batch("kli-0001")], [batch("kli-0001"), batch("fed-0001")], {SHOT}) == [
        "dice.rebound-ref@dice/fed-0001.yaml:5"]
    assert binding([], [batch("fed-0001"), batch("fed-0002")], {SHOT}) == ["dice.rebound-ref@dice/fed-0002.yaml:5"]
    assert binding([], [batch(refs=(SHOT, SHOT))], {SHOT}) == ["dice.rebound-ref@dice/fed-0001.yaml:5"]
    voided = batch(void={"reason": "wrong purpose"})
    assert binding([voided], [voided, batch("fed-0002")], {SHOT}) == []


def test_a_batch_announced_before_is_not_judged_again_and_a_table_die_is_free() -> None:
    assert binding([batch()], [batch()], set()) == []
    table_die = Batch({**batch().raw, "rolls": [{"for": "crew morale"}], "sides": 20}, "dice/fed-0001.yaml")
    assert binding([], [table_die], set()) == []


def test_a_scored_batch_cannot_be_voided() -> None:
    voided = batch(void={"reason": "again"})
    assert [f.rule for f in dice_binding.void_binding_findings({"fed-0001": batch()}, {"fed-0001": voided}, set())] == [
        "dice.bad-void"]
    assert dice_binding.void_binding_findings({"fed-0001": batch()}, {"fed-0001": voided}, {SHOT}) == []


def test_an_id_names_its_roller() -> None:
    wrong = Batch({**batch().raw, "id": "kli-0001"}, "dice/kli-0001.yaml", {"id": 1})
    got = dice.batch_findings("g", ["fed", "kli"], {}, None, {}, {"kli-0001": wrong}, "fed")
    assert [(f.rule, f.line) for f in got] == [("ownership.id-author", 1)]


# --- three or more players: committed before revealed -----------------------------------------------------------

def test_the_contribution_commitment_vectors_of_docs_dice_md() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "dice.md").read_text()
    first, second = re.findall(r'key=b"pbem-contrib-v1"\) = ([0-9a-f]{64})', text)
    assert dice_crypto.contribution_commitment(bytes(range(32))).hex() == first
    assert dice_crypto.contribution_commitment(b"\xff" * 32).hex() == second
    assert first != dice_crypto.commitment(bytes(range(32))).hex()  # its own key: never the roller's commitment


def _owed(raw: dict[str, Any], players: list[str] = MELEE) -> list[tuple[str, str]]:
    return [(b.player, b.why) for b in dice.owed(players, [Batch(raw, "dice/fed-0001.yaml")], None)]


def _changed(old: dict[str, Any], new: dict[str, Any], who: str, players: list[str] = MELEE) -> list[str]:
    got = dice.batch_findings("g", players, {}, None, {"fed-0001": Batch(old, "dice/fed-0001.yaml")},
                              {"fed-0001": Batch(new, "dice/fed-0001.yaml")}, who)
    return [f.rule for f in got]


S_KLI, S_ROM = b"\x01" * 32, b"\x02" * 32


def _commit(secret: bytes) -> str:
    return dice_crypto.contribution_commitment(secret).hex()


def test_at_a_table_of_three_commitments_are_owed_first_then_the_reveals_then_the_roller_s() -> None:
    raw = dict(batch().raw)
    assert _owed(raw) == [("kli", "contribution commitment owed to dice fed-0001 of fed"),
                          ("rom", "contribution commitment owed to dice fed-0001 of fed")]
    raw["contribution_commits"] = {"kli": _commit(S_KLI), "rom": _commit(S_ROM)}
    raw["contribution_boxes"] = {"kli": "AAAA", "rom": "AAAA"}
    assert _owed(raw) == [("kli", "contribution owed to dice fed-0001 of fed"),
                          ("rom", "contribution owed to dice fed-0001 of fed")]
    raw["contributions"] = {"kli": S_KLI.hex(), "rom": S_ROM.hex()}
    assert _owed(raw) == [("fed", "reveal owed for dice fed-0001")]
    # two players: unchanged, one contribution in the clear
    assert _owed(dict(batch().raw), ["fed", "kli"]) == [("kli", "contribution owed to dice fed-0001 of fed")]


def test_a_contribution_before_every_commitment_or_not_opening_its_own_is_refused() -> None:
    old = dict(batch().raw)
    assert _changed(old, {**old, "contributions": {"kli": S_KLI.hex()}}, "kli") == ["dice.bad-contribution"]
    committed = {**old, "contribution_commits": {"kli": _commit(S_KLI), "rom": _commit(S_ROM)},
                 "contribution_boxes": {"kli": "AAAA", "rom": "AAAA"}}
    assert _changed(committed, {**committed, "contributions": {"kli": S_KLI.hex()}}, "kli") == []
    assert _changed(committed, {**committed, "contributions": {"kli": S_ROM.hex()}}, "kli") == [
        "dice.bad-contribution"]


def test_the_last_to_commit_may_reveal_in_the_same_commit() -> None:
    old = {**batch().raw, "contribution_commits": {"kli": _commit(S_KLI)}, "contribution_boxes": {"kli": "AAAA"}}
    new = {**old, "contribution_commits": {"kli": _commit(S_KLI), "rom": _commit(S_ROM)},
           "contribution_boxes": {"kli": "AAAA", "rom": "AAAA"}, "contributions": {"rom": S_ROM.hex()}}
    assert _changed(old, new, "rom") == []


def test_commitments_are_written_once_by_their_own_player_with_a_box_and_not_at_two() -> None:
    old = dict(batch().raw)
    mine = {**old, "contribution_commits": {"kli": _commit(S_KLI)}, "contribution_boxes": {"kli": "AAAA"}}
    assert _changed(old, mine, "kli") == []
    assert _changed(old, mine, "rom") == ["dice.bad-contribution"]  # in another's name
    assert _changed(old, {**old, "contribution_commits": {"kli": _commit(S_KLI)}}, "kli") == [
        "dice.bad-contribution"]  # no box: he could not reveal from another machine
    again = {**mine, "contribution_commits": {"kli": _commit(S_ROM)}}
    assert _changed(mine, again, "kli") == ["dice.bad-contribution"]  # changed
    assert _changed(old, mine, "kli", ["fed", "kli"]) == ["dice.bad-contribution"]  # two players: no commitments
    copied = {**mine, "contribution_commits": {"kli": _commit(S_KLI), "rom": _commit(S_KLI)},
              "contribution_boxes": {"kli": "AAAA", "rom": "AAAA"}}
    assert _changed(mine, copied, "rom") == ["dice.bad-contribution"]  # a copy of kli's


def test_once_every_commitment_is_in_the_roller_voids_only_with_every_co_signature() -> None:
    old = dict(batch().raw)
    assert _changed(old, {**old, "void": {"reason": "wrong purpose"}}, "fed") == []
    committed = {**old, "contribution_commits": {"kli": _commit(S_KLI), "rom": _commit(S_ROM)},
                 "contribution_boxes": {"kli": "AAAA", "rom": "AAAA"}}
    assert set(_changed(committed, {**committed, "void": {"reason": "wrong purpose"}}, "fed")) == {"dice.bad-void"}
