"""tactical/1 seeking weapons (DESIGN §7.1; seed 000 §2.C): launch at activity as a new unit, movement like any
unit, contact with a possible target, impact with the warhead, and the pursuit check once the target is known."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import pytest
from pbem.rulesets.base import Action, Event, Point
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.state import TacticalState

RULES = TacticalRuleset()
PLAYERS = ["fed", "kli", "rom"]
WEAPONS = {
    "phaser": {"brackets": [[0, 15]], "damage": [[6, 5, 4, 3, 2, 1]]},
    "drone": {"seeking": True, "speed": 16, "turn_mode": 1, "warhead": 12},
    "plasma": {"seeking": True, "heavy": True, "warhead": 40},
}
LAUNCHER = [{"id": "ph1", "type": "phaser", "arcs": ["A"]}, {"id": "dr1", "type": "drone", "arcs": ["A"]},
            {"id": "dr2", "type": "drone", "arcs": ["A"]}]


def ship(unit_id: str, owner: str, hex_: str, facing: str = "A", speed: int = 0, **more: Any) -> dict:
    return {"id": unit_id, "owner": owner, "hex": hex_, "facing": facing, "speed": speed, "turn_mode": 2,
            "shields": [20, 20, 20, 20, 20, 20], "hull": 10, **more}


def game(*units: dict) -> tuple[dict, TacticalState]:
    setup = {"map": {"columns": 30, "rows": 30}, "turns": 2, "units": list(units), "weapons": WEAPONS}
    return setup, RULES.initial_state(setup, PLAYERS)


def standard() -> tuple[dict, TacticalState]:
    """D7 (kli, drones) at 1020 facing A; CA (fed) at 1012 facing D, 8 hexes ahead; KR (rom) far off."""
    return game(ship("CA", "fed", "1012", "D", weapons=[{"id": "ph1", "type": "phaser", "arcs": list("ABCDEF")}]),
                ship("D7", "kli", "1020", weapons=LAUNCHER), ship("KR", "rom", "2505"))


def act(state: TacticalState, when: str, unit: str, do: Mapping[str, Any]) -> Action:
    return Action(RULES.parse_time(when), RULES.owner_of(state, unit) or "kli", unit, do)


def play(setup: dict, state: TacticalState, until: str, orders: Mapping[str, list[tuple[str, dict]]] | None = None,
         track: list[tuple[Point, TacticalState, list[Event]]] | None = None
         ) -> tuple[TacticalState, dict[str, list[Event]]]:
    """Resolve the steps after `state` through `until` with the given orders (each legal), else defaults."""
    orders = orders or {}
    point = RULES.first_step(setup) if state.at is None else RULES.next_step(setup, state.at)
    log: dict[str, list[Event]] = {}
    while point is not None and point <= RULES.parse_time(until):
        when = RULES.format_time(point)
        given = [act(state, when, unit, do) for unit, do in orders.get(when, [])]
        for action in given:
            assert RULES.legal(state, action) is None, RULES.legal(state, action)
        defaults = [d for p in PLAYERS for d in RULES.default_actions(state, point, p)
                    if d.unit not in {a.unit for a in given}]
        before = state
        state, log[when] = RULES.apply(state, point, given + defaults)
        if track is not None:
            track.append((point, before, log[when]))
        point = RULES.next_step(setup, point)
    return state, log


LAUNCH = ("D7", {"launch": {"weapon": "dr1", "as": "S1"}})


def test_seed_2_c_launch_makes_a_new_unit() -> None:
    setup, state = standard()
    state, log = play(setup, state, "1.1.activity", {"1.1.activity": [LAUNCH]})
    assert [(e.kind, e.by, e.unit, dict(e.data)) for e in log["1.1.activity"]] == [
        ("launch", "kli", "D7", {"weapon": "dr1", "as": "S1", "type": "drone", "heavy": False, "at": "1.1.activity"})]
    s1 = state.unit("S1")
    assert s1 is not None and s1.seeking is not None
    assert (s1.owner, s1.hex, s1.facing, s1.speed, s1.turn_mode, s1.kind) == ("kli", (10, 20), 0, 16, 1, "seeking")
    assert (s1.seeking.type, s1.seeking.launcher, s1.seeking.weapon, s1.seeking.warhead) == ("drone", "D7", "dr1", 12)
    assert RULES.owner_of(state, "S1") == "kli"
    assert RULES.state_summary(state)[-1] == {"id": "S1", "owner": "kli", "hex": "1020", "facing": "A", "speed": 16,
                                              "status": "active", "shields": [], "hull": 0}


def test_launch_is_declared_before_it_resolves() -> None:
    setup, state = standard()
    action = act(state, "1.1.activity", *LAUNCH)
    declared = RULES.declared_events(state, action.at, [action])
    _, events = RULES.apply(state, action.at, [action])
    assert declared == events and [e.kind for e in declared] == ["launch"]
    assert RULES.dice_needed(state, action.at, [action]) == []


LAUNCH_REFUSED = [
    ("once a turn", "1.5.activity", {"weapon": "dr1", "as": "S2"},
     "D7 cannot launch dr1 as S2 at 1.5.activity: dr1 already launched at 1.1.activity this turn"),
    ("a new name", "1.5.activity", {"weapon": "dr2", "as": "CA"},
     "D7 cannot launch dr2 as CA at 1.5.activity: CA is already the name of a unit"),
    ("the name of an earlier launch", "1.5.activity", {"weapon": "dr2", "as": "S1"}, "S1 is already the name"),
    ("a unit name", "1.5.activity", {"weapon": "dr2", "as": "S 2"}, "as must be a new unit name"),
    ("a seeking weapon", "1.5.activity", {"weapon": "ph1", "as": "S2"},
     "D7 cannot launch ph1 as S2 at 1.5.activity: ph1 is a direct-fire weapon: fire it at a fire step"),
    ("at activity only", "1.5.fire", {"weapon": "dr2", "as": "S2"}, "is only given at activity steps"),
    ("malformed", "1.5.activity", {"weapon": "dr2"}, "launch takes {weapon: WEAPON, as: NEW_UNIT}"),
]


@pytest.mark.parametrize(("rule", "when", "value", "reason"), LAUNCH_REFUSED, ids=[r[0] for r in LAUNCH_REFUSED])
def test_launch_refused(rule: str, when: str, value: dict, reason: str) -> None:
    setup, state = standard()
    state, _ = play(setup, state, "1.4.damage", {"1.1.activity": [LAUNCH]})
    got = RULES.legal(state, act(state, when, "D7", {"launch": value}))
    assert got is not None and reason in got


def test_two_launches_with_one_name_the_first_counts() -> None:
    setup, state = standard()
    actions = [act(state, "1.1.activity", "D7", {"launch": {"weapon": w, "as": "S1"}}) for w in ("dr2", "dr1")]
    new, events = RULES.apply(state, actions[0].at, actions)
    assert [e.data["weapon"] for e in events] == ["dr1"] and new.unit("D7").fired == ((actions[0].at, "dr1"),)


def test_a_seeking_weapon_moves_like_a_unit_but_only_moves() -> None:
    setup, state = standard()
    state, log = play(setup, state, "1.4.move", {"1.1.activity": [LAUNCH], "1.4.move": [("S1", {"move": "SR"})]})
    assert [(e.kind, e.data["to"]) for e in log["1.2.move"] if e.unit == "S1"] == [("moved", "1019")]  # default F
    assert state.unit("S1").hex == (11, 19)
    for do, reason in (({"speed": 20}, "S1 is a seeking weapon: its speed is fixed at 16"),
                       ({"het": "D"}, "S1 is a seeking weapon: it cannot make a high energy turn"),
                       ({"use": "tractor"}, "S1 has no system 'tractor' (it has none)")):
        assert RULES.legal(state, act(state, "1.4.activity", "S1", do)).endswith(reason)
    assert RULES.legal(state, act(state, "1.4.fire", "S1", {"fire": {"weapon": "dr1", "target": "CA"}})).endswith(
        "S1 has no weapon 'dr1' (it carries none)")


def test_seeking_weapons_do_not_keep_a_player_in_the_game() -> None:
    setup, state = standard()
    state, _ = play(setup, state, "1.1.activity", {"1.1.activity": [LAUNCH]})
    gone = {"D7", "KR"}
    state = dataclasses.replace(state, units=tuple(dataclasses.replace(u, hex=None, status="destroyed")
                                                   if u.id in gone else u for u in state.units))
    assert RULES.is_over(state)


# --- contact and impact ---------------------------------------------------------------------------------------

def launched() -> tuple[dict, TacticalState, list[tuple[Point, TacticalState, list[Event]]], dict[str, list[Event]]]:
    """S1 launched at 1.1.activity from 1020 at CA, 8 hexes straight ahead (1012, facing D, at rest)."""
    setup, state = standard()
    track: list[tuple[Point, TacticalState, list[Event]]] = []
    state, log = play(setup, state, "1.16.move", {"1.1.activity": [LAUNCH]}, track)
    return setup, state, track, log


def test_seed_2_c_contact_obliges_a_reveal() -> None:
    _, state, _, log = launched()  # S1 moves at even impulses: 8 hexes by 1.16.move
    contact = [e for events in log.values() for e in events if e.kind == "seeking_contact"]
    assert contact == [Event("seeking_contact", "kli", "S1", {"unit": "S1", "candidates": ["CA"], "hex": "1012"})]
    assert "seeking_contact" in [e.kind for e in log["1.16.move"]]
    assert state.unit("S1").came_from == (10, 13)


def test_no_contact_again_while_both_stay_put_nor_with_friends() -> None:
    setup, state, _, _ = launched()
    state = dataclasses.replace(state, units=tuple(dataclasses.replace(u, speed=0) if u.id == "S1" else u
                                                   for u in state.units))
    _, log = play(setup, state, "1.20.move")
    assert not any(e.kind == "seeking_contact" for events in log.values() for e in events)


def test_an_enemy_running_into_it_is_a_contact_too() -> None:
    setup, state = game(ship("CA", "fed", "1014", "D", speed=16), ship("D7", "kli", "1020", weapons=LAUNCHER))
    state, _ = play(setup, state, "1.1.activity", {"1.1.activity": [LAUNCH]})
    state = dataclasses.replace(state, units=tuple(dataclasses.replace(u, speed=0, hex=(10, 16))
                                                   if u.id == "S1" else u for u in state.units))
    _, log = play(setup, state, "1.4.move")  # CA moves 1015 (1.2), 1016 (1.4)
    assert [e.data["candidates"] for e in log["1.4.move"] if e.kind == "seeking_contact"] == [["CA"]]


def test_seed_2_c_impact_hits_the_shield_facing_its_approach() -> None:
    _, state, _, _ = launched()
    after, events = RULES.impact(state, "S1", "CA")
    assert [(e.kind, e.by, e.unit, dict(e.data)) for e in events] == [
        ("impact", "kli", "S1", {"target": "CA", "warhead": 12, "type": "drone", "hex": "1012"}),
        ("damage", "kli", "CA", {"shield": 1, "shield_damage": 12, "internal": 0, "weapon": "dr1", "attacker": "S1"}),
    ]  # CA faces D (down): S1 came up from 1013, ahead of it: shield #1
    assert after.unit("CA").shields == (8, 20, 20, 20, 20, 20)
    assert (after.unit("S1").status, after.unit("S1").hex, after.unit("S1").left_at) == ("expended", None, state.at)
    assert RULES.legal(after, act(after, "1.18.move", "S1", {"move": "F"})) == (
        "S1 cannot move forward at 1.18.move: it has impacted")


def test_impact_through_a_down_shield_can_destroy() -> None:
    _, state, _, _ = launched()
    state = dataclasses.replace(state, units=tuple(dataclasses.replace(u, shields=(5, 0, 0, 0, 0, 0), hull=7)
                                                   if u.id == "CA" else u for u in state.units))
    after, events = RULES.impact(state, "S1", "CA")
    assert [(e.kind, e.unit) for e in events] == [("impact", "S1"), ("damage", "CA"), ("destroyed", "CA")]
    assert events[1].data["internal"] == 7 and after.unit("CA").status == "destroyed"
    assert RULES.is_over(after) is False  # kli and rom are left


IMPACT_REFUSED = [
    ("not a seeking weapon", "D7", "CA", "'D7' is no seeking weapon on the map"),
    ("no such unit", "S9", "CA", "'S9' is no seeking weapon on the map"),
    ("not in its hex", "S1", "KR", "'KR' is no enemy unit in S1's hex"),
    ("not an enemy", "S1", "D7", "'D7' is no enemy unit in S1's hex"),
]


@pytest.mark.parametrize(("rule", "unit", "target", "reason"), IMPACT_REFUSED, ids=[r[0] for r in IMPACT_REFUSED])
def test_impact_refused_is_a_protocol_bug(rule: str, unit: str, target: str, reason: str) -> None:
    _, state, _, _ = launched()
    state = dataclasses.replace(state, units=tuple(dataclasses.replace(u, hex=(10, 12)) if u.id == "D7" else u
                                                   for u in state.units))
    with pytest.raises(ValueError, match=reason):
        RULES.impact(state, unit, target)


def test_a_seeking_weapon_can_be_shot_down() -> None:
    _, state, _, _ = launched()
    shot = act(state, "1.16.fire", "CA", {"fire": {"weapon": "ph1", "target": "S1"}})
    assert RULES.legal(state, shot) is None
    after, events = RULES.apply(state, shot.at, [shot], {"1.16.fire/CA/ph1": 6})
    assert [(e.kind, e.unit) for e in events] == [("fire", "CA"), ("damage", "S1"), ("destroyed", "S1")]
    assert after.unit("S1").status == "destroyed"


# --- the pursuit check (seed 2.C: it moves by its owner's pursuit plan) ------------------------------------------

def test_a_straight_run_at_the_target_is_a_pursuit() -> None:
    _, _, track, _ = launched()
    assert RULES.pursuit_violations(track, "S1", "CA") == []


def test_moves_that_did_not_pursue_are_listed() -> None:
    setup, state = standard()
    track: list[tuple[Point, TacticalState, list[Event]]] = []
    orders = {"1.1.activity": [LAUNCH], "1.4.move": [("S1", {"move": "SL"})], "1.8.move": [("S1", {"move": "TR"})]}
    play(setup, state, "1.10.move", orders, track)
    found = RULES.pursuit_violations(track, "S1", "CA")
    assert [v.reason for v in found] == [
        "S1 at 1.4.move: moved SL, but pursuing CA it had to move F",
        "S1 at 1.8.move: moved TR, but pursuing CA it had to move SR",
        "S1 at 1.10.move: moved F, but pursuing CA it had to move SL",  # judged from where it then was
    ]
    assert [(RULES.format_time(v.at), v.made, v.allowed) for v in found][:2] == [("1.4.move", "SL", ("F",)),
                                                                                 ("1.8.move", "TR", ("SR",))]
    # against another target (KR, far to the upper right) the same moves are judged afresh: only the turn right
    # towards it was a pursuit of KR
    assert [(RULES.format_time(v.at), v.made) for v in RULES.pursuit_violations(track, "S1", "KR")] == [
        ("1.2.move", "F"), ("1.4.move", "SL"), ("1.6.move", "F"), ("1.10.move", "F")]


def test_a_tie_allows_either_move() -> None:
    """Dead astern, TL and TR are equally good pursuit moves (seed 5.C ties)."""
    setup, state = game(ship("CA", "fed", "1026"), ship("D7", "kli", "1020", weapons=LAUNCHER))
    for choice in ("TL", "TR"):
        track: list[tuple[Point, TacticalState, list[Event]]] = []
        play(setup, state, "1.2.move", {"1.1.activity": [LAUNCH], "1.2.move": [("S1", {"move": choice})]}, track)
        assert RULES.pursuit_violations(track, "S1", "CA") == []
