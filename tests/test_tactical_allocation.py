"""tactical/1 energy allocation in full (seed 000 §2.C "each turn's Energy Allocation … retrieved and verified at
the conclusion of the battle"; docs/tactical.md "Energy allocation in full"): arming modes, batteries, life
support, fire control, shields, general and specific reinforcement, repair and power lowered by damage, each
audited against what the ship did. Data table: (the record of a turn, an allocation → the audit's reasons)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pbem.formats import schemas
from pbem.rulesets.base import Action
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.state import TacticalState

RULES = TacticalRuleset()
PLAYERS = ["fed", "kli"]
ALL = ["A", "B", "C", "D", "E", "F"]
SETUP: dict[str, Any] = {
    "map": {"columns": 20, "rows": 20}, "turns": 3, "allocation": "sealed",
    "weapons": {
        "photon": {"max_range": 12, "brackets": [[0, 12]], "damage": [[8] * 6],
                   "arming": {"turns": 2, "energy": 2, "hold": 1, "overload": 2}, "overload_damage": [[16] * 6]},
        "phaser": {"max_range": 10, "brackets": [[0, 10]], "damage": [[4] * 6], "energy": 1},
    },
    "costs": {"life_support": 1, "fire_control": 1, "shields": 2, "general_reinforcement": 2},
    "damage_allocation": {"rolls": [["hull"], ["power"], ["photon"], ["phaser"], ["hull"], ["hull"]],
                          "repair": {"per_turn": 1, "energy": 2}},
    "units": [
        {"id": "CA", "owner": "fed", "hex": "0510", "facing": "B", "speed": 0, "turn_mode": 2, "power": 20,
         "batteries": 4, "shields": [10] * 6, "hull": 10, "boxes": {"power": 4},
         "weapons": [{"id": "pt1", "type": "photon", "arcs": ALL}, {"id": "pt2", "type": "photon", "arcs": ALL,
                                                                     "armed": True},
                     {"id": "ph1", "type": "phaser", "arcs": ALL}]},
        {"id": "D7", "owner": "kli", "hex": "0810", "facing": "E", "speed": 0, "turn_mode": 2, "power": 20,
         "hull": 10},
    ],
}


def at(text: str) -> tuple[int, int, int]:
    return RULES.parse_time(text)


def played() -> TacticalState:
    """CA's record: pt2 (armed at the start) fired overloaded at 1.5, ph1 at 1.6, pt1 at 2.3; general
    reinforcement 3 at 1.6.fire; 2 power boxes lost at 1.6.damage; one repaired at 2.1."""
    state = RULES.initial_state(SETUP, PLAYERS)
    ca = state.unit("CA")
    assert ca is not None
    ca = dataclasses.replace(
        ca, fired=((at("1.5.fire"), "pt2"), (at("1.6.fire"), "ph1"), (at("2.3.fire"), "pt1")),
        overloads=((at("1.5.fire"), "pt2"),), reinforced=((at("1.6.fire"), 0, 3),),
        lost=((at("1.6.damage"), "power", 1), (at("1.6.damage"), "power", 1), (at("2.1.activity"), "power", -1)))
    return state.with_units({"CA": ca}, at("3.32.final"))


TURN_1 = {"speed": 0, "weapons": 1, "arming": {"pt1": "arm", "pt2": "overload"}, "life_support": 1,
          "fire_control": 1, "shields": 2, "general_reinforcement": 6}
TURN_2 = {"speed": 0, "arming": {"pt1": "arm"}, "life_support": 1, "fire_control": 1, "shields": 2, "repair": 2}

# (turn, CA's allocation line) -> words of each reason, [] when it pays
AUDITS = [
    (1, TURN_1, []),
    (1, {**TURN_1, "arming": {"pt2": "overload"}}, ["pt1 arming this turn, but the allocation does not arm or hold"]),
    (1, {**TURN_1, "arming": {"pt1": "hold", "pt2": "overload"}}, []),  # armed earlier and held: its choice
    (1, {**TURN_1, "arming": {"pt1": "arm", "pt2": "arm"}}, ["pt2 fires overloaded this turn, but the allocation "
                                                             "gives it arm"]),
    (1, {**TURN_1, "arming": {"pt1": "arm", "pt2": "overload", "ph1": "arm"}}, ["arming ph1: 'arm' is no mode"]),
    (1, {**TURN_1, "life_support": 0}, ["life support costs 1, 0 allocated (1 short)"]),
    (1, {**TURN_1, "life_support": 0, "batteries": 1}, []),                 # batteries pay like the reserve
    (1, {**TURN_1, "batteries": 5}, ["allocates 22 energy, its power is 20", "batteries 5 allocated, its batteries "
                                                                             "hold 4"]),
    (1, {**TURN_1, "fire_control": 0, "shields": 0, "reserve": 2},
     ["shields costs 2", "fire control costs 1", "reserve 2 covers only part of the 3 short"]),
    (1, {**TURN_1, "general_reinforcement": 4}, ["general reinforcement used 3 points × 2 = 6, 4 allocated"]),
    (1, {**TURN_1, "reserve": 4}, ["allocates 21 energy, its power is 20"]),  # arming modes count: 2 + 4
    (2, TURN_2, []),
    (2, {**TURN_2, "arming": {}}, ["pt1 fires this turn, but the allocation does not arm or hold it"]),
    (2, {**TURN_2, "repair": 0}, ["repair costs 2, 0 allocated"]),
    (2, {**TURN_2, "reserve": 11}, ["allocates 19 energy, its power is 18 (less the power boxes it lost)"]),
    (3, {"speed": 0, "life_support": 1, "shields": 2}, []),  # the repaired box counts again from turn 3
    (3, {"speed": 0, "life_support": 1, "shields": 2, "reserve": 17}, ["allocates 20 energy, its power is 19"]),
]


@pytest.mark.parametrize(("turn", "line", "words"), AUDITS)
def test_the_allocation_pays_for_everything_the_ship_did(turn: int, line: dict[str, Any], words: list[str]) -> None:
    allocation = {"turn": turn, "units": {"CA": line}}
    schemas.validate(RULES.allocation_schema, allocation, file="secret")  # every line is a line of the schema
    reasons = RULES.audit_allocation(SETUP, RULES.turn_record(played(), "fed", turn), allocation)
    assert len(reasons) == len(words), reasons
    for reason, word in zip(reasons, words):
        assert word in reason and reason.startswith(f"turn {turn}, CA:")


def test_general_reinforcement_stands_before_every_shield_and_is_limited_by_power() -> None:
    state = dataclasses.replace(RULES.initial_state(SETUP, PLAYERS), at=at("1.4.activity"))
    general = Action(at("1.4.fire"), "fed", "CA", {"reinforce": {"general": 3}})
    shot = Action(at("1.4.fire"), "kli", "D7", {"fire": {"weapon": "x", "target": "CA"}})
    assert RULES.legal(state, general) is None and RULES.legal(state, shot) is not None
    after, events = RULES.apply(state, general.at, [general])
    assert [(e.kind, e.data) for e in events] == [("reinforced", {"general": 3})]
    ca = after.unit("CA")
    assert ca is not None and ca.reinforced == ((general.at, 0, 3),)
    too_much = dataclasses.replace(general, at=at("1.5.fire"), do={"reinforce": {"general": 8}})
    assert "22 energy on reinforcement in turn 1" in (RULES.legal(after, too_much) or "")
    specific = dataclasses.replace(general, at=at("1.5.fire"), do={"reinforce": {"shield": 1, "points": 15}})
    assert "more than its power 20" in (RULES.legal(after, specific) or "")  # 6 energy of general spent already


def test_general_reinforcement_takes_damage_on_the_shield_hit_after_the_specific() -> None:
    setup = {**SETUP, "units": [SETUP["units"][0], {**SETUP["units"][1], "weapons": [
        {"id": "ph1", "type": "phaser", "arcs": ALL}]}]}
    state = dataclasses.replace(RULES.initial_state(setup, PLAYERS), at=at("1.4.activity"))
    given = [Action(at("1.4.fire"), "fed", "CA", {"reinforce": {"general": 1}}),
             Action(at("1.4.fire"), "fed", "CA", {"reinforce": {"shield": 2, "points": 2}}),
             Action(at("1.4.fire"), "kli", "D7", {"fire": {"weapon": "ph1", "target": "CA"}})]
    (ref,) = RULES.dice_needed(state, at("1.4.fire"), given)
    after, events = RULES.apply(state, at("1.4.fire"), given, {ref: 1})
    (hit,) = [e for e in events if e.kind == "damage"]
    assert (hit.data["shield"], hit.data["reinforcement"], hit.data["shield_damage"]) == (2, 3, 1)
    assert after.unit("CA").shields[1] == 9  # type: ignore[union-attr]
