"""tactical/1 movement (DESIGN §7.1): impulse chart, moves, turn mode, sideslips, HET, speed, leaving the map."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pbem.rulesets.base import Action, Event
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.movement import moves_in
from pbem.rulesets.tactical.state import TacticalState

RULES = TacticalRuleset()
PLAYERS = ["fed", "kli"]
Orders = Mapping[str, list[tuple[str, dict[str, Any]]]]


def ship(unit_id: str, owner: str, hex_: str, facing: str = "A", speed: int = 12, turn_mode: int = 2) -> dict:
    return {"id": unit_id, "owner": owner, "hex": hex_, "facing": facing, "speed": speed, "turn_mode": turn_mode}


def game(*units: dict, columns: int = 20, rows: int = 40, turns: int = 2, **more: Any) -> tuple[dict, TacticalState]:
    setup = {"map": {"columns": columns, "rows": rows}, "turns": turns, "units": list(units), **more}
    return setup, RULES.initial_state(setup, PLAYERS)


def act(state: TacticalState, when: str, unit: str, do: Mapping[str, Any], by: str | None = None,
        source: str = "entry") -> Action:
    return Action(RULES.parse_time(when), by or RULES.owner_of(state, unit) or "fed", unit, do, source)


def play(setup: dict, state: TacticalState, until: str, orders: Orders | None = None
         ) -> tuple[TacticalState, dict[str, list[Event]]]:
    """Resolve every step after `state` through `until`: the given orders (each must be legal), else defaults."""
    orders = orders or {}
    point = RULES.first_step(setup) if state.at is None else RULES.next_step(setup, state.at)
    log: dict[str, list[Event]] = {}
    while point is not None and point <= RULES.parse_time(until):
        when = RULES.format_time(point)
        given = [act(state, when, unit, do) for unit, do in orders.get(when, [])]
        for action in given:
            assert RULES.legal(state, action) is None
        acted = {a.unit for a in given}
        defaults = [d for p in PLAYERS for d in RULES.default_actions(state, point, p) if d.unit not in acted]
        state, log[when] = RULES.apply(state, point, given + defaults)
        point = RULES.next_step(setup, point)
    return state, log


def where(state: TacticalState, unit: str) -> tuple[str | None, str]:
    row = next(r for r in RULES.state_summary(state) if r["id"] == unit)
    return row["hex"], row["facing"]


# --- the impulse chart -------------------------------------------------------------------------------------

DESIGN_7_1_CHART = [
    (0, []),
    (1, [32]),
    (8, [4, 8, 12, 16, 20, 24, 28, 32]),
    (12, [3, 6, 8, 11, 14, 16, 19, 22, 24, 27, 30, 32]),
    (16, list(range(2, 33, 2))),
    (31, list(range(2, 33))),
    (32, list(range(1, 33))),
]


@pytest.mark.parametrize(("speed", "impulses"), DESIGN_7_1_CHART)
def test_design_7_1_movement_chart(speed: int, impulses: list[int]) -> None:
    assert [i for i in range(1, 33) if moves_in(speed, i)] == impulses


@given(st.integers(0, 32))
def test_design_7_1_a_unit_moves_speed_times_a_turn(speed: int) -> None:
    assert sum(moves_in(speed, i) for i in range(1, 33)) == speed


def test_design_7_1_played_turn_moves_speed_hexes_straight_ahead() -> None:
    setup, state = game(ship("CA", "fed", "0540", "A", speed=12))
    state, log = play(setup, state, "1.32.final")
    assert where(state, "CA") == ("0528", "A")
    moved = [when for when, events in log.items() if any(e.kind == "moved" for e in events)]
    assert moved == [f"1.{i}.move" for i in DESIGN_7_1_CHART[3][1]]


# --- where each move goes ------------------------------------------------------------------------------------

MOVE_GEOMETRY = [
    ("0505", "A", "F", "0504", "A"),
    ("0505", "A", "TL", "0404", "F"),
    ("0505", "A", "TR", "0604", "B"),
    ("0505", "A", "SL", "0404", "A"),   # sideslip: the forward-left hex, facing kept
    ("0505", "A", "SR", "0604", "A"),
    ("0606", "C", "F", "0707", "C"),
    ("0606", "D", "SL", "0707", "D"),   # facing D: forward-left is direction C
    ("0606", "A", "TL", "0506", "F"),
    ("0606", "F", "TR", "0605", "A"),
]


@pytest.mark.parametrize(("start", "facing", "how", "to", "facing_after"), MOVE_GEOMETRY)
def test_design_7_1_moves_f_tl_tr_sl_sr(start: str, facing: str, how: str, to: str, facing_after: str) -> None:
    setup, state = game(ship("CA", "fed", start, facing, speed=31))
    state, log = play(setup, state, "1.2.move", {"1.2.move": [("CA", {"move": how})]})
    assert where(state, "CA") == (to, facing_after)
    moved = [e for e in log["1.2.move"] if e.kind == "moved"]
    assert moved == [Event("moved", "fed", "CA", {"from": start, "to": to, "facing_before": facing,
                                                  "facing": facing_after, "how": how})]
    turned = [e.data for e in log["1.2.move"] if e.kind == "turned"]
    assert turned == ([{"from_facing": facing, "to_facing": facing_after, "how": how}] if how in ("TL", "TR") else [])


# --- turn mode and sideslips ---------------------------------------------------------------------------------

def attempt_after(moves: list[str], attempt: str, turn_mode: int = 2) -> str | None:
    """Make `moves` at speed 31 from 1.2.move on, then ask whether `attempt` is legal at the next move."""
    setup, state = game(ship("CA", "fed", "1030", "A", speed=31, turn_mode=turn_mode))
    orders = {f"1.{2 + i}.move": [("CA", {"move": how})] for i, how in enumerate(moves)}
    state, _ = play(setup, state, f"1.{1 + len(moves)}.damage", orders)
    return RULES.legal(state, act(state, f"1.{2 + len(moves)}.move", "CA", {"move": attempt}))


TURN_MODE = [
    ("may turn at once at game start", [], "TL", 2, None),
    ("one hex since the last turn is not enough", ["TL", "F"], "TR",  2,
     "CA cannot turn right at 1.4.move: turn mode 2, only 1 hex moved since last turn"),
    ("the turning move itself does not count", ["TR"], "TR", 2,
     "CA cannot turn right at 1.3.move: turn mode 2, only 0 hexes moved since last turn"),
    ("two hexes after a turn allow the next", ["TL", "F", "F"], "TL", 2, None),
    ("sideslips count towards turn mode", ["TL", "SL", "F"], "TR", 2, None),
    ("turn mode 0 turns every move", ["TL", "TL", "TL"], "TL", 0, None),
    ("turn mode 4", ["TL", "F", "F", "F"], "TL", 4,
     "CA cannot turn left at 1.6.move: turn mode 4, only 3 hexes moved since last turn"),
]


@pytest.mark.parametrize(("rule", "moves", "attempt", "turn_mode", "reason"), TURN_MODE, ids=[t[0] for t in TURN_MODE])
def test_design_7_1_turn_mode(rule: str, moves: list[str], attempt: str, turn_mode: int, reason: str | None) -> None:
    assert attempt_after(moves, attempt, turn_mode) == reason


SIDESLIPS = [
    ("may slip at once at game start", [], "SL", None),
    ("no slip right after a slip", ["SL"], "SR",
     "CA cannot slip right at 1.3.move: no hex moved since its last sideslip"),
    ("one forward hex allows the next slip", ["SL", "F"], "SL", None),
    ("a turning move counts for slips", ["SL", "TL"], "SR", None),
    ("a slip may follow a turn at once", ["TL"], "SL", None),
]


@pytest.mark.parametrize(("rule", "moves", "attempt", "reason"), SIDESLIPS, ids=[t[0] for t in SIDESLIPS])
def test_design_7_1_sideslips(rule: str, moves: list[str], attempt: str, reason: str | None) -> None:
    assert attempt_after(moves, attempt) == reason


def test_the_design_example_reason_reads_like_a_report() -> None:
    setup, state = game(ship("CA", "fed", "0510", "B", speed=31))
    state = dataclasses.replace(state, units=(dataclasses.replace(state.units[0], since_turn=1),))
    # speed 31 does not move in impulse 1: use impulse 3, where it does
    assert RULES.legal(state, act(state, "1.3.move", "CA", {"move": "TL"})) == (
        "CA cannot turn left at 1.3.move: turn mode 2, only 1 hex moved since last turn")


def test_turn_mode_counts_carry_over_into_the_next_turn() -> None:
    setup, state = game(ship("CA", "fed", "1030", "A", speed=8, turn_mode=3))  # moves at 4, 8, …, 32
    state, _ = play(setup, state, "1.32.final", {"1.24.move": [("CA", {"move": "TL"})]})  # then F at 28, 32
    assert RULES.legal(state, act(state, "2.4.move", "CA", {"move": "TR"})) == (
        "CA cannot turn right at 2.4.move: turn mode 3, only 2 hexes moved since last turn")
    state, _ = play(setup, state, "2.4.damage")
    assert RULES.legal(state, act(state, "2.8.move", "CA", {"move": "TR"})) is None


def test_a_move_only_when_the_chart_says_so() -> None:
    setup, state = game(ship("CA", "fed", "0510", speed=12))
    state, _ = play(setup, state, "1.0.alloc")
    assert RULES.legal(state, act(state, "1.1.move", "CA", {"move": "F"})) == (
        "CA cannot move forward at 1.1.move: at speed 12 it does not move in impulse 1")
    assert RULES.legal(state, act(state, "1.3.move", "CA", {"move": "F"})) is None


# --- HET ------------------------------------------------------------------------------------------------------

def test_design_7_1_het_once_a_turn_any_facing_at_activity() -> None:
    setup, state = game(ship("CA", "fed", "1030", "A", speed=8))
    state, log = play(setup, state, "1.5.activity", {"1.5.activity": [("CA", {"het": "D"})]})
    assert where(state, "CA") == ("1029", "D")  # moved at 1.4 (A), then turned in place
    assert [(e.kind, dict(e.data)) for e in log["1.5.activity"]] == [
        ("turned", {"from_facing": "A", "to_facing": "D", "how": "HET"})]
    assert RULES.legal(state, act(state, "1.9.activity", "CA", {"het": "A"})) == (
        "CA cannot make a high energy turn to A at 1.9.activity: it already made a high energy turn in turn 1")
    state, _ = play(setup, state, "1.32.final")
    assert RULES.legal(state, act(state, "2.3.activity", "CA", {"het": "A"})) is None


HET_REFUSED = [
    ("1.4.move", {"het": "C"},
     "CA cannot make a high energy turn to C at 1.4.move: {het: C} is only given at activity steps"),
    ("1.4.activity", {"het": "A"}, "CA cannot make a high energy turn to A at 1.4.activity: it already faces A"),
    ("1.4.activity", {"het": "G"},
     "CA cannot make a high energy turn to G at 1.4.activity: 'G' is not a facing (A..F)"),
]


@pytest.mark.parametrize(("when", "do", "reason"), HET_REFUSED)
def test_design_7_1_het_refusals(when: str, do: dict, reason: str) -> None:
    setup, state = game(ship("CA", "fed", "1030", "A", speed=8))
    assert RULES.legal(state, act(state, when, "CA", do)) == reason


def test_het_restarts_the_turn_mode_count() -> None:
    setup, state = game(ship("CA", "fed", "1030", "A", speed=8, turn_mode=1))
    state, _ = play(setup, state, "1.7.activity", {"1.7.activity": [("CA", {"het": "B"})]})
    assert RULES.legal(state, act(state, "1.8.move", "CA", {"move": "TL"})) == (
        "CA cannot turn left at 1.8.move: turn mode 1, only 0 hexes moved since last turn")


# --- speed --------------------------------------------------------------------------------------------------

def test_design_7_1_speed_at_allocation_sets_the_turn() -> None:
    setup, state = game(ship("CA", "fed", "1040", speed=12))
    state, log = play(setup, state, "1.32.final", {"1.0.alloc": [("CA", {"speed": 16})]})
    assert [(e.kind, dict(e.data)) for e in log["1.0.alloc"]] == [("speed", {"old": 12, "new": 16})]
    assert where(state, "CA") == ("1024", "A")
    state, log = play(setup, state, "2.32.final")  # no order at 2.0.alloc: the speed stays
    assert log["2.0.alloc"] == [] and where(state, "CA") == ("1008", "A")


def test_design_7_1_mid_turn_speed_change_counts_from_the_next_impulse() -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=16))  # moves at even impulses
    state, log = play(setup, state, "1.4.activity", {"1.4.activity": [("CA", {"speed": 0})]})
    assert [(e.kind, dict(e.data)) for e in log["1.4.activity"]] == [("speed", {"old": 16, "new": 0})]
    assert where(state, "CA") == ("1028", "A")  # moved at 1.2 and 1.4
    assert RULES.default_actions(state, RULES.parse_time("1.6.move"), "fed") == []
    state, _ = play(setup, state, "1.32.final")
    assert where(state, "CA") == ("1028", "A")
    assert state.unit("CA").speeds == ((RULES.parse_time("1.4.activity"), 0),)


SPEED_REFUSED = [
    ("1.4.move", {"speed": 8},
     "CA cannot change speed to 8 at 1.4.move: {speed: 8} is only given at alloc or activity steps"),
    ("1.0.alloc", {"speed": 21},
     "CA cannot change speed to 21 at 1.0.alloc: speed must be a whole number 0..20, got 21"),
    ("1.3.activity", {"speed": -1},
     "CA cannot change speed to -1 at 1.3.activity: speed must be a whole number 0..20, got -1"),
    ("1.3.activity", {"speed": True},
     "CA cannot change speed to True at 1.3.activity: speed must be a whole number 0..20, got True"),
    ("1.3.activity", {"speed": "8"},
     "CA cannot change speed to 8 at 1.3.activity: speed must be a whole number 0..20, got '8'"),
]


@pytest.mark.parametrize(("when", "do", "reason"), SPEED_REFUSED)
def test_design_7_1_speed_refusals(when: str, do: dict, reason: str) -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=12), max_speed=20)
    assert RULES.legal(state, act(state, when, "CA", do)) == reason


def test_the_same_speed_again_changes_nothing() -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=12))
    state, log = play(setup, state, "1.0.alloc", {"1.0.alloc": [("CA", {"speed": 12})]})
    assert log["1.0.alloc"] == [] and state.unit("CA").speeds == ()


# --- leaving the map ---------------------------------------------------------------------------------------

def test_a_unit_moving_off_the_map_disengages() -> None:
    setup, state = game(ship("CA", "fed", "0502", "A", speed=16), ship("D7", "kli", "0510", "A", speed=0))
    assert not RULES.is_over(state)
    state, log = play(setup, state, "1.4.move")
    assert [e.kind for e in log["1.2.move"]] == ["moved"]
    assert log["1.4.move"] == [Event("disengaged", "fed", "CA",
                                     {"from": "0501", "facing_before": "A", "facing": "A", "how": "F"})]
    assert where(state, "CA") == (None, "A")
    assert RULES.unit_positions(state) == {"CA": None, "D7": ("0510", "A")}
    assert state.range_between("CA", "D7") is None
    assert RULES.default_actions(state, RULES.parse_time("1.6.move"), "fed") == []
    assert RULES.legal(state, act(state, "1.6.move", "CA", {"move": "F"})) == (
        "CA cannot move forward at 1.6.move: it has left the map")
    assert RULES.is_over(state)


def test_a_slip_or_turn_off_the_map_disengages_too() -> None:
    setup, state = game(ship("CA", "fed", "0101", "A", speed=31), ship("D7", "kli", "0110", "D", speed=31))
    orders = {"1.2.move": [("CA", {"move": "SL"}), ("D7", {"move": "TR"})]}
    state, log = play(setup, state, "1.2.move", orders)
    assert [(e.unit, e.kind) for e in log["1.2.move"]] == [("CA", "disengaged"), ("D7", "turned"), ("D7", "disengaged")]
    assert RULES.is_over(state)  # nobody is left on the map
    assert RULES.state_summary(state)[0] == {"id": "CA", "owner": "fed", "hex": None, "facing": "A", "speed": 31,
                                             "status": "disengaged", "shields": [], "hull": 0}


# --- defaults, apply, legality of the rest ----------------------------------------------------------------

def test_defaults_move_forward_only_units_that_move_now() -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=16), ship("NCL", "fed", "1230", speed=8),
                        ship("D7", "kli", "1010", "D", speed=16))
    assert [(a.unit, dict(a.do), a.source) for a in RULES.default_actions(state, RULES.parse_time("1.2.move"), "fed")] \
        == [("CA", {"move": "F"}, "default")]
    assert [a.unit for a in RULES.default_actions(state, RULES.parse_time("1.4.move"), "fed")] == ["CA", "NCL"]
    assert [a.unit for a in RULES.default_actions(state, RULES.parse_time("1.4.move"), "kli")] == ["D7"]
    for when in ("1.0.alloc", "1.4.activity", "1.4.fire", "1.4.damage", "1.32.final", "1.3.move"):
        assert RULES.default_actions(state, RULES.parse_time(when), "fed") == []


def test_apply_moves_everyone_at_once_and_fills_in_missing_moves() -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=16), ship("D7", "kli", "1029", "D", speed=16))
    point = RULES.parse_time("1.2.move")
    new, events = RULES.apply(state, point, [])  # no action at all: both still move forward
    assert [(e.unit, e.data["from"], e.data["to"]) for e in events] == [("CA", "1030", "1029"), ("D7", "1029", "1030")]
    assert new.at == point and state.at is None and where(state, "CA") == ("1030", "A")  # the old state is untouched
    with pytest.raises(dataclasses.FrozenInstanceError):
        new.units[0].speed = 3  # type: ignore[misc]


def test_apply_prefers_entries_to_defaults_and_ignores_illegal_actions() -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=16), ship("D7", "kli", "1010", "D", speed=16, turn_mode=9))
    state = dataclasses.replace(state, units=(state.units[0], dataclasses.replace(state.units[1], since_turn=0)))
    actions = [act(state, "1.2.move", "CA", {"move": "F"}, source="default"),
               act(state, "1.2.move", "CA", {"move": "TL"}),
               act(state, "1.2.move", "D7", {"move": "TL"})]  # illegal (turn mode): D7 moves F instead
    new, events = RULES.apply(state, RULES.parse_time("1.2.move"), actions)
    assert where(new, "CA") == ("0930", "F") and where(new, "D7") == ("1011", "D")


def test_apply_refuses_actions_of_another_step() -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=16))
    with pytest.raises(ValueError, match="given to step 1.4.move"):
        RULES.apply(state, RULES.parse_time("1.4.move"), [act(state, "1.2.move", "CA", {"move": "F"})])


def test_pass_forfeits_the_step_but_a_moving_unit_still_moves() -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=16))
    for when in ("1.0.alloc", "1.2.move", "1.2.activity", "1.2.fire", "1.2.damage", "1.32.final"):
        assert RULES.legal(state, act(state, when, "CA", {"pass": True})) is None
        assert RULES.legal(state, Action(RULES.parse_time(when), "fed", None, {"pass": True})) is None
    new, events = RULES.apply(state, RULES.parse_time("1.2.move"), [act(state, "1.2.move", "CA", {"pass": True})])
    assert where(new, "CA") == ("1029", "A")


REFUSED = [
    ("not his unit", "fed", "D7", "1.2.move", {"move": "F"},
     "D7 cannot move forward at 1.2.move: D7 belongs to kli, not to fed"),
    ("no such unit", "fed", "XX", "1.2.move", {"move": "F"},
     "XX cannot move forward at 1.2.move: there is no unit XX in this game"),
    ("no unit named", "fed", None, "1.2.move", {"move": "F"},
     "fed cannot move forward at 1.2.move: the action names no unit"),
    ("move at activity", "fed", "CA", "1.2.activity", {"move": "F"},
     "CA cannot move forward at 1.2.activity: {move: F} is only given at move steps"),
    ("unknown move", "fed", "CA", "1.2.move", {"move": "B"},
     "CA cannot move 'B' at 1.2.move: move must be one of F, TL, TR, SL, SR, got 'B'"),
    ("pass is true", "fed", "CA", "1.2.move", {"pass": False},
     "CA cannot pass at 1.2.move: pass must be 'true', got False"),
    ("empty action", "fed", "CA", "1.2.move", {},
     "CA at 1.2.move: an action must be a mapping with one key such as {move: F}"),
    ("two actions", "fed", "CA", "1.2.activity", {"het": "B", "speed": 3},
     "CA at 1.2.activity: {het: B, speed: 3} has more than one action"),
    ("unknown action", "fed", "CA", "1.2.move", {"warp": 9}, "CA at 1.2.move: {warp: 9} has no action among"),
    ("target only for systems", "fed", "CA", "1.2.move", {"move": "F", "target": "D7"},
     "CA at 1.2.move: {move: F, target: D7}: target is not part of a move action"),
    ("no such weapon", "fed", "CA", "1.4.fire", {"fire": {"weapon": "ph1", "target": "D7"}},
     "CA cannot fire ph1 at D7 at 1.4.fire: CA has no weapon 'ph1' (it carries none)"),
    ("fire at fire steps only", "fed", "CA", "1.4.activity", {"fire": {"weapon": "ph1", "target": "D7"}},
     "CA cannot fire ph1 at D7 at 1.4.activity: {fire: {weapon: ph1, target: D7}} is only given at fire steps"),
    ("no such seeking weapon", "fed", "CA", "1.4.activity", {"launch": {"weapon": "d1", "as": "S1"}},
     "CA cannot launch d1 as S1 at 1.4.activity: CA has no weapon 'd1' (it carries none)"),
    ("no such system", "fed", "CA", "1.5.activity", {"use": "tractor", "target": "D7"},
     "CA cannot use tractor on D7 at 1.5.activity: CA has no system 'tractor' (it has none)"),
    ("cease a system it lacks", "fed", "CA", "1.5.activity", {"cease": "tractor"}, "…has no system 'tractor'"),
    ("announce at activity only", "fed", "CA", "1.5.move", {"announce": "cloak"},
     "…is only given at activity steps"),
    ("clarify is no action", "fed", "CA", "1.2.move", {"clarify": "SL"},
     "CA cannot clarify at 1.2.move: {clarify: SL} is not an action of tactical/1: answer a special break with the "
     "chosen option itself, e.g. {move: SL}"),
]


@pytest.mark.parametrize(("rule", "by", "unit", "when", "do", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_design_7_1_illegal_actions_name_the_reason(rule: str, by: str, unit: str | None, when: str, do: dict,
                                                    reason: str) -> None:
    setup, state = game(ship("CA", "fed", "1030", speed=16), ship("D7", "kli", "1010", speed=16))
    got = RULES.legal(state, Action(RULES.parse_time(when), by, unit, do))
    assert got is not None
    assert reason[1:] in got if reason.startswith("…") else got.startswith(reason)


# --- robustness: whatever an entry says, legality answers with a reason and apply never breaks ------------

values = st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.sampled_from(["F", "TL", "SR", "A", "G", ""]),
                   st.dictionaries(st.sampled_from(["weapon", "target"]), st.just("D7"), max_size=2))
dos = st.dictionaries(st.sampled_from(["move", "het", "speed", "pass", "fire", "target", "warp"]), values, max_size=3)


@given(st.lists(st.tuples(st.sampled_from(["CA", "D7", "XX", None]), st.sampled_from(PLAYERS), dos), max_size=6),
       st.sampled_from(["1.0.alloc", "1.2.move", "1.3.move", "1.2.activity", "1.2.fire", "1.32.final"]))
def test_any_entry_gets_a_reason_or_is_applied(entries: list[tuple[str | None, str, dict]], when: str) -> None:
    setup, state = game(ship("CA", "fed", "0101", "A", speed=16), ship("D7", "kli", "0505", "C", speed=31))
    actions = [Action(RULES.parse_time(when), by, unit, do) for unit, by, do in entries]
    for action in actions:
        reason = RULES.legal(state, action)
        assert reason is None or isinstance(reason, str) and " at " + when in reason
    new, events = RULES.apply(state, RULES.parse_time(when), actions)
    assert {e.kind for e in events} <= {"moved", "turned", "speed", "disengaged"}
    assert all(e.by == RULES.owner_of(new, e.unit) for e in events)
