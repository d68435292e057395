"""tactical/1 plans (DESIGN §4.1, §4.5, §7.1; seed 000 §5.B "forward towards ship X, but slip right or left as
needed to keep him centerlined", §5.C special break on ties): forward, pursue and keep_range."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pbem.errors import PbemError
from pbem.formats import schemas
from pbem.rulesets.base import Action, Ambiguous
from pbem.rulesets.tactical import TacticalRuleset, arcs, hexmap
from pbem.rulesets.tactical.state import TacticalState

RULES = TacticalRuleset()
PLAYERS = ["fed", "kli", "rom"]
AT = RULES.parse_time("1.2.move")  # a speed-31 unit moves in impulse 2


def game(me: str = "1020", facing: str = "A", turn_mode: int = 0, columns: int = 30, rows: int = 30,
         **others: str) -> TacticalState:
    units = [{"id": "CA", "owner": "fed", "hex": me, "facing": facing, "speed": 31, "turn_mode": turn_mode}]
    owners = {"D7": "kli", "KR": "rom", "NCL": "fed", "F5": "kli"}
    units += [{"id": u, "owner": owners[u], "hex": h, "facing": "A", "speed": 0, "turn_mode": 2}
              for u, h in others.items()]
    setup = {"map": {"columns": columns, "rows": rows}, "turns": 2, "units": units}
    return RULES.initial_state(setup, PLAYERS)


def plan(do: dict, unit: str = "CA", start: str = "1.1.move", until: str = "1.32.final") -> dict:
    return {"unit": unit, "from": start, "until": until, "do": do}


def moves(result: list[Action] | Ambiguous | None) -> tuple[str, ...] | None:
    """The move a plan resolves to, or the tied options, as a tuple of move names."""
    if result is None:
        return None
    if isinstance(result, Ambiguous):
        assert result.unit == "CA" and len(result.options) > 1
        return tuple(o["move"] for o in result.options)
    (action,) = result
    assert (action.at, action.by, action.unit, action.source) == (AT, "fed", "CA", "plan")
    return (action.do["move"],)


def test_seed_5_b_forward() -> None:
    assert moves(RULES.resolve_plan(game(D7="1010"), AT, "fed", plan({"forward": {}}))) == ("F",)


# CA at 1020 facing A (up), turn mode 0, pursues D7 at these hexes.
PURSUE = [
    ("dead ahead: straight on", "1010", ("F",)),
    ("one hex off the centreline ahead: slip right onto it", "1110", ("SR",)),
    ("further off to the right front: slip right", "1410", ("SR",)),
    ("ahead-left: turn left (nearer, and on the centreline)", "0517", ("TL",)),
    ("abeam to the right: turn right", "1520", ("TR",)),
    ("right beside: the turn faces it, the slip would not", "1220", ("TR",)),
    ("adjacent ahead: into its hex", "1019", ("F",)),
    ("seed 5.C: dead astern, left or right is a special break", "1030", ("TL", "TR")),
    ("adjacent astern: four equal moves", "1021", ("TL", "TR", "SL", "SR")),
]


@pytest.mark.parametrize(("rule", "target", "expected"), PURSUE, ids=[p[0] for p in PURSUE])
def test_seed_5_b_pursue_choices_and_ties(rule: str, target: str, expected: tuple[str, ...]) -> None:
    result = RULES.resolve_plan(game(D7=target), AT, "fed", plan({"pursue": "D7"}))
    assert moves(result) == expected


def test_pursue_only_among_legal_moves() -> None:
    state = game(turn_mode=2, D7="1520")  # right abeam: TR would be best, but the turn mode forbids it now
    state = dataclasses.replace(state, units=(dataclasses.replace(state.units[0], since_turn=0), *state.units[1:]))
    assert moves(RULES.resolve_plan(state, AT, "fed", plan({"pursue": "D7"}))) == ("SR",)


def test_pursue_keeps_on_the_map_when_it_can() -> None:
    """CA at 0102 facing E, D7 at 0101: a right turn or slip would be nearer but leave the map."""
    state = game("0102", "E", columns=6, rows=6, D7="0101")
    assert moves(RULES.resolve_plan(state, AT, "fed", plan({"pursue": "D7"}))) == ("SL",)


def test_ambiguous_options_are_actions() -> None:
    result = RULES.resolve_plan(game(D7="1030"), AT, "fed", plan({"pursue": "D7"}))
    assert result == Ambiguous("CA", ({"move": "TL"}, {"move": "TR"}))


# CA at 1020 facing A keeps range N from the nearest enemy.
KEEP_RANGE = [
    ("closing in to 8: straight on", {"D7": "1010"}, 8, ("F",)),
    ("at 8 straight ahead: the sideslips keep it, left or right is a special break", {"D7": "1012"}, 8, ("SL", "SR")),
    ("equally far whatever: straight on, the smallest change of course", {"D7": "1030"}, 10, ("F",)),
    ("abeam at 5: straight on keeps 5", {"D7": "1520"}, 5, ("F",)),
    ("the nearest enemy counts, of any player", {"D7": "1010", "KR": "1012"}, 8, ("SL", "SR")),
    ("my own units do not count", {"NCL": "1019", "D7": "1010"}, 8, ("F",)),
]


@pytest.mark.parametrize(("rule", "others", "distance", "expected"), KEEP_RANGE, ids=[k[0] for k in KEEP_RANGE])
def test_keep_range_choices_and_ties(rule: str, others: dict, distance: int, expected: tuple[str, ...]) -> None:
    result = RULES.resolve_plan(game(**others), AT, "fed", plan({"keep_range": distance}))
    assert moves(result) == expected


NOT_ACTING = [
    ("before the window", plan({"forward": {}}, start="1.3.move"), "fed", "1.2.move"),
    ("after the window", plan({"forward": {}}, until="1.1.damage"), "fed", "1.2.move"),
    ("not a move step", plan({"forward": {}}), "fed", "1.2.activity"),
    ("not his unit", plan({"forward": {}}, unit="D7"), "kli", "1.2.move"),
    ("someone else's plan for my unit", plan({"forward": {}}), "kli", "1.2.move"),
    ("the unit does not move in this impulse", plan({"forward": {}}, unit="NCL"), "fed", "1.2.move"),
    ("the target is off the map", plan({"pursue": "KR"}), "fed", "1.2.move"),
    ("no such target", plan({"pursue": "XX"}), "fed", "1.2.move"),
    ("no enemy on the map", plan({"keep_range": 3}, unit="CA"), "fed", "1.2.move"),
    ("a broken plan", {"unit": "CA", "do": {"forward": {}}}, "fed", "1.2.move"),
]


@pytest.mark.parametrize(("rule", "given", "player", "when"), NOT_ACTING, ids=[n[0] for n in NOT_ACTING])
def test_a_plan_does_not_act_outside_its_window_and_unit(rule: str, given: dict, player: str, when: str) -> None:
    state = game(D7="1010", NCL="1520", KR="1212")
    state = dataclasses.replace(state, units=tuple(
        dataclasses.replace(u, hex=None, status="disengaged") if u.id == "KR" else u for u in state.units))
    if rule == "no enemy on the map":
        state = dataclasses.replace(state, units=tuple(u for u in state.units if u.owner == "fed"))
    assert RULES.resolve_plan(state, RULES.parse_time(when), player, given) is None


def test_the_window_includes_both_ends() -> None:
    state = game(D7="1010")
    for start, until in (("1.2.move", "1.5.move"), ("1.1.move", "1.2.move")):
        assert moves(RULES.resolve_plan(state, AT, "fed", plan({"forward": {}}, start=start, until=until))) == ("F",)


PLAN_ERRORS = [
    ({"unit": "CA", "from": "1.1.move", "until": "1.3.move", "do": {"fly": {}}}, "do must be one of {forward: …}"),
    (plan({"pursue": 7}), "pursue needs the unit to pursue, got 7"),
    (plan({"keep_range": -1}), "keep_range must be a whole number 0..200, got -1"),
    (plan({"forward": {"fast": True}}), "forward takes no options"),
    (plan({"forward": {}}, start="1.5.move", until="1.3.move"), "until 1.3.move is before from 1.5.move"),
    (plan({"forward": {}}, start="1.33.move"), "impulse must be 0..32"),
    ({"unit": "CA", "do": {"forward": {}}}, "a plan must be {unit, from, until, do}"),
    ({**plan({"forward": {}}), "note": 1}, "a plan must be {unit, from, until, do}"),
    (plan({"forward": {}, "pursue": "D7"}), "do must be one of"),
]


@pytest.mark.parametrize(("given", "reason"), PLAN_ERRORS)
def test_design_4_1_plan_errors(given: dict, reason: str) -> None:
    assert reason in (RULES.plan_error(given) or "")


def _valid(do: Any) -> bool:
    try:
        schemas.validate(RULES.plan_schema, do, file="test")
    except PbemError:
        return False
    return True


@pytest.mark.parametrize("do", [{"forward": {}}, {"pursue": "D7"}, {"keep_range": 8}])
def test_plan_schema_and_plan_error_agree_on_good_plans(do: dict) -> None:
    assert _valid(do) and RULES.plan_error(plan(do)) is None
    schemas.validate("pbem/players/1", {"plans": [plan(do)]}, file="players/fed.yaml")


@pytest.mark.parametrize("do", [{"forward": {"x": 1}}, {"pursue": ""}, {"keep_range": 201}, {"keep_range": "8"},
                                {"fly": {}}, {"forward": {}, "pursue": "D7"}, {}])
def test_plan_schema_and_plan_error_agree_on_bad_plans(do: dict) -> None:
    assert not _valid(do) and RULES.plan_error(plan(do)) is not None


@given(st.tuples(st.integers(1, 20), st.integers(1, 20)), st.sampled_from("ABCDEF"),
       st.tuples(st.integers(1, 20), st.integers(1, 20)), st.integers(0, 3))
def test_pursue_never_moves_further_off_than_it_must(me: tuple[int, int], facing: str, target: tuple[int, int],
                                                     turn_mode: int) -> None:
    """Whatever the position, a pursuit move is legal and no legal move on the map gets nearer the target."""
    if me == target:
        return
    state = game(hexmap.format_hex(me), facing, turn_mode, columns=20, rows=20, D7=hexmap.format_hex(target))
    result = RULES.resolve_plan(state, AT, "fed", plan({"pursue": "D7"}))
    options = [{"move": m} for m in moves(result) or ()]
    assert options
    ranges = {}
    for do in [{"move": m} for m in ("F", "TL", "TR", "SL", "SR")]:
        action = Action(AT, "fed", "CA", do)
        if RULES.legal(state, action) is None:
            after, _ = RULES.apply(state, AT, [action])
            ranges[do["move"]] = after.range_between("CA", "D7")
    assert all(RULES.legal(state, Action(AT, "fed", "CA", o)) is None for o in options)
    on_map = [r for r in ranges.values() if r is not None]
    if on_map:
        assert all(ranges[o["move"]] == min(on_map) for o in options)


def test_off_centre_measures() -> None:
    """arcs.off_centre: (sectors from dead ahead, hexes off the centreline)."""
    here = (10, 20)
    assert arcs.off_centre(here, 0, hexmap.parse_hex("1010")) == (0, 0)
    assert arcs.off_centre(here, 0, hexmap.parse_hex("1110")) == (0, 1)
    assert arcs.off_centre(here, 0, hexmap.parse_hex("1520")) == (1, 5)  # on the B/C edge: the nearer, B
    assert arcs.off_centre(here, 0, hexmap.parse_hex("1030")) == (3, 10)
    assert arcs.off_centre(here, 3, hexmap.parse_hex("1030")) == (0, 0)
