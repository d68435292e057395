"""tactical/1 break conditions (DESIGN §4.3, §7.1; seed 000 §6.C, §6.D): the catalog, checked and evaluated.

Each vector gives the units' hexes before and after one step, the step's events as the protocol passes them
(the player's own events already removed unless `by: any`), a condition of player `fed`, and the expected text.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pbem.rulesets.base import Event
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.state import DISENGAGED, TacticalState

RULES = TacticalRuleset()
OWNERS = {"CA": "fed", "NCL": "fed", "D7": "kli", "F5": "kli", "KR": "rom"}
HOME = {"CA": "1020", "NCL": "1220", "D7": "1010", "F5": "0610", "KR": "1840"}
SETUP = {
    "map": {"columns": 30, "rows": 40},
    "turns": 1,
    "units": [{"id": u, "owner": o, "hex": HOME[u], "facing": "A", "speed": 12, "turn_mode": 2}
              for u, o in OWNERS.items()],
}
START = RULES.initial_state(SETUP, ["fed", "kli", "rom"])


def board(at: str = "1.8.move", **hexes: str | None) -> TacticalState:
    """The start position with some units moved (None: left the map), after step `at`."""
    units = []
    for unit in START.units:
        if unit.id in hexes and hexes[unit.id] is None:
            unit = dataclasses.replace(unit, hex=None, status=DISENGAGED)
        elif unit.id in hexes:
            unit = dataclasses.replace(unit, hex=(int(hexes[unit.id][:2]), int(hexes[unit.id][2:])))
        units.append(unit)
    return dataclasses.replace(START, units=tuple(units), at=RULES.parse_time(at))


def ev(kind: str, unit: str, **data: Any) -> Event:
    return Event(kind, OWNERS[unit], unit, data)


MOVED = {"facing_before": "A", "facing": "A", "how": "F"}

# (rule, before, after, events, condition, expected)
RANGE = [
    ("seed 6.D.1: range 8 means 8 or less, crossed inward", {"D7": "1011"}, {"D7": "1012"},
     [ev("moved", "D7", **MOVED)], {"range": 8}, "range 8: D7 at range 8 from CA (1.8.move)"),
    ("one hex short", {"D7": "1011"}, {"D7": "1012"}, [ev("moved", "D7")], {"range": 7}, None),
    ("already within: no new break", {"D7": "1013"}, {"D7": "1014"}, [ev("moved", "D7")], {"range": 8}, None),
    ("moving away: no break", {"D7": "1014"}, {"D7": "1013"}, [ev("moved", "D7")], {"range": 8}, None),
    ("my own move is not a trigger", {"CA": "1020"}, {"CA": "1019"}, [ev("moved", "F5")], {"range": 9}, None),
    ("by any: my own move triggers", {"CA": "1020"}, {"CA": "1019"}, [ev("moved", "CA"), ev("moved", "F5")],
     {"range": 9, "by": "any"}, "range 9: D7 at range 9 from CA (1.8.move)"),
    ("both close in at once", {"CA": "1020", "D7": "1011"}, {"CA": "1019", "D7": "1012"},
     [ev("moved", "CA"), ev("moved", "D7")], {"range": 8, "by": "any"}, "range 8: D7 at range 7 from CA (1.8.move)"),
    ("seed 6.B: any of my units", {"D7": "1011"}, {"D7": "1213"}, [ev("moved", "D7")], {"range": 7},
     "range 7: D7 at range 7 from NCL (1.8.move)"),
    ("mine: only that unit of mine", {"D7": "1011"}, {"D7": "1213"}, [ev("moved", "D7")], {"range": 7, "mine": "CA"},
     None),
    ("unit: only that enemy", {"D7": "1011"}, {"D7": "1012"}, [ev("moved", "D7")], {"range": 8, "unit": "F5"}, None),
    ("unit: that enemy crossing", {"F5": "1014"}, {"F5": "1015"}, [ev("moved", "F5")], {"range": 5, "unit": "F5"},
     "range 5: F5 at range 5 from CA (1.8.move)"),
    ("seed 6.D.3: any enemy, of any player", {"KR": "1027"}, {"KR": "1026"}, [ev("moved", "KR")], {"range": 6},
     "range 6: KR at range 6 from CA (1.8.move)"),
    ("several at once, in setup order", {"D7": "1011", "F5": "1112"}, {"D7": "1012", "F5": "1113"},
     [ev("moved", "D7"), ev("moved", "F5")], {"range": 8},
     "range 8: D7 at range 8 from CA, F5 at range 8 from CA, F5 at range 8 from NCL (1.8.move)"),
    ("range 0 is the same hex", {"D7": "1019"}, {"D7": "1020"}, [ev("moved", "D7")], {"range": 0},
     "range 0: D7 at range 0 from CA (1.8.move)"),
    ("no range to a unit off the map", {"D7": "1011"}, {"D7": None}, [ev("disengaged", "D7")], {"range": 20}, None),
    ("a speed change alone crosses nothing", {}, {}, [ev("speed", "D7", old=12, new=10)], {"range": 30}, None),
]

TURN = [
    ("seed 6.D.2: a turn left", {}, {}, [ev("turned", "D7", from_facing="A", to_facing="F", how="TL")], {"turn": {}},
     "turn: D7 turned left A to F (1.8.move)"),
    ("an HET is a turn", {}, {}, [ev("turned", "D7", from_facing="A", to_facing="D", how="HET")], {"turn": {}},
     "turn: D7 made a high energy turn A to D (1.8.move)"),
    ("a straight move is no turn", {}, {}, [ev("moved", "D7", **MOVED)], {"turn": {}}, None),
    ("seed 6.C.7: within 10 of a friendly ship", {}, {}, [ev("turned", "D7", from_facing="A", to_facing="B", how="TR")],
     {"turn": {"within": 10}}, "turn within 10: D7 turned right A to B at range 10 from CA (1.8.move)"),
    ("too far for within", {}, {}, [ev("turned", "F5", from_facing="A", to_facing="B", how="TR")],
     {"turn": {"within": 10}}, None),
    ("only the named enemy", {}, {}, [ev("turned", "D7", from_facing="A", to_facing="B", how="TR")],
     {"turn": {"unit": "F5"}}, None),
    ("a turn off the map still is a turn", {}, {"D7": None},
     [ev("turned", "D7", from_facing="A", to_facing="B", how="TR"), ev("disengaged", "D7")], {"turn": {}},
     "turn: D7 turned right A to B (1.8.move)"),
    ("but not within range of anything", {}, {"D7": None},
     [ev("turned", "D7", from_facing="A", to_facing="B", how="TR"), ev("disengaged", "D7")], {"turn": {"within": 30}},
     None),
    ("by any: my own turn, measured from my other units", {}, {},
     [ev("turned", "CA", from_facing="A", to_facing="B", how="TR")],
     {"turn": {"within": 2}, "by": "any"}, "turn within 2: CA turned right A to B at range 2 from NCL (1.8.move)"),
]

SPEED = [
    ("seed 6.C.6: speed change by any unit", {}, {}, [ev("speed", "D7", old=12, new=10)], {"speed": {}},
     "speed: D7 changed speed from 12 to 10 (1.8.move)"),
    ("a move is no speed change", {}, {}, [ev("moved", "D7", **MOVED)], {"speed": {}}, None),
    ("only the named enemy", {}, {}, [ev("speed", "D7", old=12, new=10)], {"speed": {"unit": "F5"}}, None),
    ("two at once", {}, {}, [ev("speed", "D7", old=12, new=10), ev("speed", "KR", old=4, new=0)], {"speed": {}},
     "speed: D7 changed speed from 12 to 10, KR changed speed from 4 to 0 (1.8.move)"),
]

VECTORS = RANGE + TURN + SPEED


@pytest.mark.parametrize(("rule", "before", "after", "events", "condition", "expected"), VECTORS,
                         ids=[v[0] for v in VECTORS])
def test_seed_6_break_condition_vectors(rule: str, before: dict, after: dict, events: list[Event],
                                        condition: dict, expected: str | None) -> None:
    assert RULES.condition_error(condition) is None
    assert RULES.condition_met(condition, "fed", board(**before), board(**after), events) == expected


def test_range_from_a_real_step() -> None:
    """End to end: a real step's events and states."""
    setup = {**SETUP, "units": [u for u in SETUP["units"] if u["id"] in ("CA", "D7")]}
    setup["units"][1] = {**setup["units"][1], "hex": "1011", "facing": "D"}
    before = RULES.initial_state(setup, ["fed", "kli"])
    after, events = RULES.apply(before, RULES.parse_time("1.3.move"),
                                RULES.default_actions(before, RULES.parse_time("1.3.move"), "kli"))
    # CA moves at 1.3 too (apply moves every unit the chart moves): 9 -> 7, and both sides see the other close in
    assert RULES.condition_met({"range": 8}, "fed", before, after, [e for e in events if e.by != "fed"]) == (
        "range 8: D7 at range 7 from CA (1.3.move)")
    assert RULES.condition_met({"range": 8}, "kli", before, after, [e for e in events if e.by != "kli"]) == (
        "range 8: CA at range 7 from D7 (1.3.move)")


ACCEPTED = [
    {"range": 8}, {"range": 8, "unit": "D7"}, {"range": 8, "mine": "CA", "by": "any"}, {"turn": {}},
    {"turn": {"within": 10}}, {"turn": {"within": 10, "unit": "D7"}}, {"speed": {}}, {"speed": {"unit": "D7"}},
    {"at": "1.12.move"}, {"speed": {}, "by": "any"},
]


@pytest.mark.parametrize("condition", ACCEPTED)
def test_design_4_3_conditions_of_this_catalog_are_accepted(condition: dict) -> None:
    assert RULES.condition_error(condition) is None


REFUSED = [
    ({"near": 3}, "{near: 3} has no break condition among at, range, turn, speed, fire"),
    ({"range": 8, "turn": {}}, "{range: 8, turn: {}} has more than one break condition"),
    ({"range": -1}, "{range: -1}: range must be a whole number 0..200, got -1"),
    ({"range": "8"}, "{range: 8}: range must be a whole number 0..200, got '8'"),
    ({"range": True}, "range must be a whole number"),
    ({"range": 8, "unit": 7}, "{range: 8, unit: 7}: unit must be a unit name, got 7"),
    ({"range": 8, "within": 3}, "within is not part of a range condition"),
    ({"turn": 5}, "{turn: 5}: turn takes a mapping such as {turn: {}}, got 5"),
    ({"turn": {"near": 3}}, "{turn: {near: 3}}: near is not part of a turn condition"),
    ({"turn": {"within": -2}}, "within must be a whole number 0..200"),
    ({"speed": {}, "unit": "D7"}, "unit is not part of a speed condition"),
    ({"speed": {"within": 3}}, "within is not part of a speed condition"),
    ({"range": 8, "by": "me"}, "{range: 8, by: me}: by must be 'any', got 'me'"),
    ({"at": "1.33.move"}, "impulse must be 0..32"),
    ({"at": "1.3.move", "range": 3}, "has more than one break condition"),
    ({}, "a break condition must be a mapping"),
    ("range 8", "a break condition must be a mapping"),
]


@pytest.mark.parametrize(("condition", "reason"), REFUSED, ids=[str(c) for c, _ in REFUSED])
def test_design_4_3_a_condition_it_cannot_evaluate_is_an_error(condition: Any, reason: str) -> None:
    got = RULES.condition_error(condition)
    assert got is not None and reason in got
    if isinstance(condition, dict) and condition:
        assert RULES.condition_met(condition, "fed", START, board(), [ev("moved", "D7")]) is None


leaves = st.one_of(st.none(), st.booleans(), st.integers(-2, 300), st.sampled_from(["any", "D7", "1.3.move", ""]))
keys = st.sampled_from(["range", "turn", "speed", "within", "unit", "mine", "by", "at", "fire", "near"])
conditions = st.dictionaries(keys, st.one_of(leaves, st.dictionaries(keys, leaves, max_size=3)), max_size=4)


@given(conditions)
def test_any_condition_is_accepted_or_refused_never_crashes(condition: dict) -> None:
    reason = RULES.condition_error(condition)
    assert reason is None or isinstance(reason, str)
    met = RULES.condition_met(condition, "fed", START, board(D7="1019"), [ev("moved", "D7"), ev("speed", "D7")])
    assert met is None or (reason is None and isinstance(met, str))


# --- DESIGN §4.3 (revised): conditions that already hold, and ships that meet -------------------------------------
# (rule, before, after, events, condition, expected): a pair already inside the range that meets breaks again.
MEETING = [
    ("§4.3: two ships swap hexes under a standing range condition", {"D7": "1019"}, {"CA": "1019", "D7": "1020"},
     [ev("moved", "D7")], {"range": 3}, "range 3: D7 meets CA (range 1 to 1 through 0) (1.8.move)"),
    ("§4.3: range 0 under a standing range 0 (swap, never in one hex)", {"D7": "1019"}, {"CA": "1019", "D7": "1020"},
     [ev("moved", "D7")], {"range": 0}, "range 0: D7 meets CA (range 1 to 1 through 0) (1.8.move)"),
    ("§4.3: into one hex from inside the range", {"D7": "1019"}, {"D7": "1020"}, [ev("moved", "D7")], {"range": 5},
     "range 5: D7 meets CA (range 1 to 0 through 0) (1.8.move)"),
    ("leaving the shared hex is no new meeting", {"D7": "1020"}, {"D7": "1019"}, [ev("moved", "D7")], {"range": 5},
     None),
    ("side by side, not meeting", {"D7": "1019"}, {"D7": "1018"}, [ev("moved", "D7")], {"range": 5}, None),
    ("a meeting of another player's pair is not mine", {"D7": "1019"}, {"CA": "1019", "D7": "1020"},
     [ev("moved", "D7")], {"range": 3, "unit": "F5"}, None),
]


@pytest.mark.parametrize(("rule", "before", "after", "events", "condition", "expected"), MEETING,
                         ids=[v[0] for v in MEETING])
def test_design_4_3_ships_never_pass_through_each_other_without_a_break(
        rule: str, before: dict, after: dict, events: list[Event], condition: dict, expected: str | None) -> None:
    assert RULES.condition_met(condition, "fed", board(**before), board(**after), events) == expected


# (positions, condition, what already holds for fed): DESIGN §4.3 "a condition that already holds when written"
HOLDS = [
    ({"D7": "1017"}, {"range": 5, "mine": "CA"}, "range 5: D7 at range 3 from CA (1.8.move)"),
    ({"D7": "1017"}, {"range": 5}, "range 5: D7 at range 3 from CA, D7 at range 4 from NCL (1.8.move)"),
    ({"D7": "1015"}, {"range": 5, "mine": "CA"}, "range 5: D7 at range 5 from CA (1.8.move)"),
    ({"D7": "1014"}, {"range": 5, "mine": "CA"}, None),
    ({"D7": "1017"}, {"range": 5, "unit": "F5"}, None),
    ({"D7": "1017"}, {"fire": {}}, None),  # met by events only: it never "holds"
]


@pytest.mark.parametrize(("hexes", "condition", "expected"), HOLDS, ids=[str(v[:2]) for v in HOLDS])
def test_design_4_3_what_already_holds(hexes: dict, condition: dict, expected: str | None) -> None:
    assert RULES.condition_holds(condition, "fed", board(**hexes)) == expected


def _duel(d7_hex: str, d7_speed: int) -> tuple[dict, Any, Any]:
    """CA (fed) at 1020 facing A, speed 0; D7 (kli) at `d7_hex` facing A (away from CA)."""
    from pbem.protocol.model import Inputs, PlayerInputs
    from pbem.protocol.replay import start_checkpoint

    setup = {**SETUP, "units": [{**u, "speed": 0} for u in SETUP["units"] if u["id"] == "CA"]
             + [{"id": "D7", "owner": "kli", "hex": d7_hex, "facing": "A", "speed": d7_speed, "turn_mode": 2}]}
    players = ("fed", "kli")
    per = {"fed": PlayerInputs(RULES.parse_time("1.32.final"), "1.32.final", ({"range": 5},)),
           "kli": PlayerInputs(RULES.parse_time("1.32.final"), "1.32.final")}
    return setup, Inputs.of_entries(players, (), per), start_checkpoint(RULES, setup, players)


def test_design_4_3_range_5_written_at_range_3_fires_at_the_next_step_it_holds() -> None:
    """Seed 000 §6.D read as DESIGN §4.3 says: `{range: 5}` written at range 3 is met at the next step at which it
    still holds (D7 moves away to range 4 at 1.2.move); an old condition, not written now, waits for a crossing."""
    from pbem.protocol.replay import replay

    setup, inputs, start = _duel("1017", 16)  # D7 moves away in every even impulse
    stop = replay(RULES, setup, inputs, start, "kli", fresh={"fed": ({"range": 5},)})
    first = stop.pending[0]
    assert (first.player, first.at, first.kind, first.why) == (
        "fed", "1.2.move", "condition", "range 5: D7 at range 4 from CA (1.2.move)")
    old = replay(RULES, setup, inputs, start, "kli")
    assert old.over or all(b.kind == "horizon" for b in old.pending), old.pending


def test_design_4_3_a_condition_that_stops_holding_is_disarmed() -> None:
    """Written at range 5 exactly; D7's first move takes it to 6: it no longer holds, so no break then or later
    (it is a crossing condition again, and D7 never comes back)."""
    from pbem.protocol.replay import replay

    setup, inputs, start = _duel("1015", 16)
    stop = replay(RULES, setup, inputs, start, "kli", fresh={"fed": ({"range": 5},)})
    assert all(b.kind != "condition" for b in stop.pending), stop.pending
    assert stop.checkpoint.armed == ()
