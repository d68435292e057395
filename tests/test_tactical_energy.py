"""tactical/1 energy allocation audit (DESIGN §6, §7.1; seed 000 §2.C "each turn's Energy Allocation … retrieved
and verified at the conclusion of the battle"): the public record of a turn, and a revealed allocation checked
against it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pbem.errors import PbemError
from pbem.formats import schemas
from pbem.rulesets.base import Action
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.energy import TurnRecord, UnitTurn
from pbem.rulesets.tactical.state import TacticalState

RULES = TacticalRuleset()
PLAYERS = ["fed", "kli"]
SETUP: dict[str, Any] = {
    "map": {"columns": 30, "rows": 40},
    "turns": 3,
    "units": [
        {"id": "CA", "owner": "fed", "hex": "1030", "facing": "A", "speed": 12, "turn_mode": 1, "power": 30,
         "shields": [20] * 6, "hull": 20, "systems": ["tractor", "transporter"],
         "weapons": [{"id": "ph1", "type": "phaser", "arcs": ["A"]}, {"id": "tp1", "type": "torpedo", "arcs": ["A"]},
                     {"id": "dr1", "type": "drone", "arcs": ["A"]}]},
        {"id": "NCL", "owner": "fed", "hex": "0530", "facing": "A", "speed": 0, "turn_mode": 1, "power": 20},
        {"id": "D7", "owner": "kli", "hex": "1020", "facing": "D", "speed": 0, "turn_mode": 1, "power": 30,
         "shields": [20] * 6, "hull": 20},
    ],
    "weapons": {
        "phaser": {"energy": 1, "brackets": [[0, 15]], "damage": [[4, 3, 2, 1, 0, 0]]},
        "torpedo": {"energy": 2, "heavy": True, "brackets": [[0, 12]], "damage": [[8, 8, 8, 0, 0, 0]]},
        "drone": {"seeking": True, "warhead": 6, "energy": 0.5},
    },
    "costs": {"speed_point": 1, "het": 5, "tractor": 2},
}


def play_turn_one() -> TacticalState:
    """CA: speed 14 at allocation, 16 from 1.4.activity, HET at 1.5, ph1 and tp1 fired, tractor used, cease and
    announce (free), a drone launched."""
    orders = {
        "1.0.alloc": [("CA", {"speed": 14})],
        "1.4.activity": [("CA", {"speed": 16})],
        "1.5.activity": [("CA", {"het": "B"}), ("CA", {"use": "tractor", "target": "D7"})],
        "1.6.activity": [("CA", {"cease": "tractor"}), ("CA", {"announce": "transporter"})],
        "1.7.activity": [("CA", {"launch": {"weapon": "dr1", "as": "S1"}})],
        "1.2.fire": [("CA", {"fire": {"weapon": "ph1", "target": "D7"}}),
                     ("CA", {"fire": {"weapon": "tp1", "target": "D7"}})],
    }
    state = RULES.initial_state(SETUP, PLAYERS)
    point = RULES.first_step(SETUP)
    while point is not None and point <= RULES.parse_time("2.4.damage"):
        when = RULES.format_time(point)
        actions = [Action(point, "fed", unit, do) for unit, do in orders.get(when, [])]
        assert all(RULES.legal(state, a) is None for a in actions), [RULES.legal(state, a) for a in actions]
        actions += [d for p in PLAYERS for d in RULES.default_actions(state, point, p)]
        state, _ = RULES.apply(state, point, actions, {r: 1 for r in RULES.dice_needed(state, point, actions)})
        point = RULES.next_step(SETUP, point)
    return state


def test_seed_2_c_the_turn_record_comes_from_the_state() -> None:
    state = play_turn_one()
    assert RULES.turn_record(state, "fed", 1) == TurnRecord(1, "fed", (
        UnitTurn("CA", speeds=(14, 16), hets=1, fired=("ph1", "tp1", "dr1"), systems=("tractor",)),
        UnitTurn("NCL", speeds=(0,), hets=0, fired=(), systems=()),
    ))  # the drone S1 in flight needs no allocation
    assert RULES.turn_record(state, "fed", 2).units[0] == UnitTurn("CA", (16,), 0, (), ())
    assert RULES.turn_record(state, "kli", 1) == TurnRecord(1, "kli", (UnitTurn("D7", (0,), 0, (), ()),))
    assert RULES.audit_allocation(SETUP, RULES.turn_record(state, "fed", 1), {
        "turn": 1, "units": {"CA": {"speed": 16, "het": 5, "weapons": 3.5, "systems": 2}}}) == []


RECORD = TurnRecord(1, "fed", (UnitTurn("CA", (14, 16), 1, ("ph1", "tp1"), ("tractor",)),
                               UnitTurn("NCL", (0,), 0, (), ())))
PAID = {"speed": 16, "het": 5, "weapons": 3, "systems": 2}

# (rule, allocation, reasons) for CA: top speed 16 (14, then 16 mid-turn), one HET (5), ph1 + tp1 (1 + 2),
# the tractor used once (2); power 30.
AUDIT = [
    ("pays for everything", {"turn": 1, "units": {"CA": PAID}}, []),
    ("the mid-turn speed counts", {"turn": 1, "units": {"CA": {**PAID, "speed": 14}}},
     ["turn 1, CA: speed 16 used (14, 16), speed 14 allocated (2 short)"]),
    ("reserve pays a shortfall", {"turn": 1, "units": {"CA": {**PAID, "speed": 14, "reserve": 2}}}, []),
    ("reserve too small: every short line", {"turn": 1, "units": {"CA": {**PAID, "speed": 12, "het": 0,
                                                                         "reserve": 3}}},
     ["turn 1, CA: speed 16 used (14, 16), speed 12 allocated (4 short)",
      "turn 1, CA: 1 HET cost 5, 0 allocated (5 short)",
      "turn 1, CA: reserve 3 covers only part of the 9 short"]),
    ("weapons fired", {"turn": 1, "units": {"CA": {**PAID, "weapons": 2}}},
     ["turn 1, CA: weapons used (ph1, tp1) cost 3, 2 allocated (1 short)"]),
    ("systems used", {"turn": 1, "units": {"CA": {**PAID, "systems": 0}}},
     ["turn 1, CA: systems used (tractor) cost 2, 0 allocated (2 short)"]),
    ("never above power", {"turn": 1, "units": {"CA": {**PAID, "reserve": 4.5}}},
     ["turn 1, CA: allocates 30.5 energy, its power is 30"]),
    ("the turn must match", {"turn": 2, "units": {"CA": PAID}}, ["the allocation is for turn 2, not turn 1"]),
    ("only his units in play", {"turn": 1, "units": {"CA": PAID, "D7": {"speed": 0}}},
     ["turn 1, D7: not a unit of fed in play in this turn"]),
    ("a unit left out allocated nothing", {"turn": 1, "units": {}},
     ["turn 1, CA: speed 16 used (14, 16), speed 0 allocated (16 short)",
      "turn 1, CA: 1 HET cost 5, 0 allocated (5 short)",
      "turn 1, CA: weapons used (ph1, tp1) cost 3, 0 allocated (3 short)",
      "turn 1, CA: systems used (tractor) cost 2, 0 allocated (2 short)"]),
]


@pytest.mark.parametrize(("rule", "allocation", "reasons"), AUDIT, ids=[a[0] for a in AUDIT])
def test_seed_2_c_allocation_audit(rule: str, allocation: dict, reasons: list[str]) -> None:
    assert _valid(allocation)
    assert RULES.audit_allocation(SETUP, RECORD, allocation) == reasons


def test_speed_point_prices_the_speed() -> None:
    setup = {**SETUP, "costs": {"speed_point": 0.5, "het": 5, "tractor": 2}}
    allocation = {"turn": 1, "units": {"CA": {**PAID, "speed": 14, "reserve": 1}}}
    assert RULES.audit_allocation(setup, RECORD, allocation) == []  # 2 speed short cost 1
    assert RULES.audit_allocation(setup, RECORD, {"turn": 1, "units": {"CA": {**PAID, "speed": 13}}}) == [
        "turn 1, CA: speed 16 used (14, 16), speed 13 allocated (1.5 short)"]


def test_a_unit_destroyed_earlier_needs_no_allocation() -> None:
    state = play_turn_one()
    state = dataclasses.replace(state, units=tuple(
        dataclasses.replace(u, status="destroyed", hex=None, left_at=RULES.parse_time("1.20.fire"))
        if u.id == "NCL" else u for u in state.units))
    assert [u.unit for u in RULES.turn_record(state, "fed", 1).units] == ["CA", "NCL"]
    assert [u.unit for u in RULES.turn_record(state, "fed", 2).units] == ["CA"]


def _valid(allocation: Any) -> bool:
    try:
        schemas.validate(RULES.allocation_schema, allocation, file="secret")
    except PbemError:
        return False
    return True


@pytest.mark.parametrize("allocation", [
    {}, {"turn": 1}, {"turn": 0, "units": {}}, {"turn": 1, "units": {"CA": {}}},
    {"turn": 1, "units": {"CA": {"speed": 12, "shield_boost": 3}}}, {"turn": 1, "units": {"CA": {"speed": -1}}},
    {"turn": 1, "units": {"C A": {"speed": 1}}}, {"turn": 1, "units": {"CA": {"speed": 1, "het": "5"}}},
    {"turn": 1, "units": {}, "note": "x"},
])
def test_allocation_schema_refuses(allocation: Any) -> None:
    assert not _valid(allocation)
