"""tactical/1 direct fire and damage (DESIGN §7.1; seed 000 §7.A simultaneity): arcs, the shield facing the
firer, damage by range bracket and die, one shot per weapon and turn, dice refs, destruction."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pbem.rulesets.base import Action, Event
from pbem.rulesets.tactical import TacticalRuleset, arcs, fire, hexmap
from pbem.rulesets.tactical.state import TacticalState

RULES = TacticalRuleset()
PLAYERS = ["fed", "kli", "rom"]
PHASER_DAMAGE = [[9, 8, 7, 6, 5, 4], [8, 7, 6, 5, 4, 3], [7, 6, 5, 4, 3, 2], [5, 4, 3, 2, 1, 1], [3, 2, 1, 1, 0, 0]]
WEAPONS = {
    "phaser": {"max_range": 15, "brackets": [[0, 0], [1, 1], [2, 3], [4, 8], [9, 15]], "damage": PHASER_DAMAGE},
    "torpedo": {"heavy": True, "max_range": 12, "brackets": [[0, 1], [2, 4], [6, 12]],
                "damage": [[16, 16, 16, 16, 0, 0], [16, 16, 16, 0, 0, 0], [16, 16, 0, 0, 0, 0]]},
    "drone": {"seeking": True, "speed": 16, "warhead": 12},
}
SHIELDS = [30, 24, 22, 20, 18, 16]


def ship(unit_id: str, owner: str, hex_: str, facing: str = "A", speed: int = 0, **more: Any) -> dict:
    return {"id": unit_id, "owner": owner, "hex": hex_, "facing": facing, "speed": speed, "turn_mode": 2,
            "shields": list(SHIELDS), "hull": 20, **more}


ARMED = [{"id": "ph1", "type": "phaser", "arcs": ["F", "A", "B"]}, {"id": "ph2", "type": "phaser", "arcs": ["D"]},
         {"id": "tp1", "type": "torpedo", "arcs": ["A"]}, {"id": "dr1", "type": "drone", "arcs": ["A"]}]


def game(*units: dict, at: str = "1.4.activity") -> TacticalState:
    setup = {"map": {"columns": 30, "rows": 30}, "turns": 3, "units": list(units), "weapons": WEAPONS}
    return dataclasses.replace(RULES.initial_state(setup, PLAYERS), at=RULES.parse_time(at))


def duel(target_hex: str = "1005", target_facing: str = "D", **target: Any) -> TacticalState:
    """CA (fed) at 1010 facing A with ARMED; D7 (kli) where asked, armed the same."""
    return game(ship("CA", "fed", "1010", weapons=ARMED),
                ship("D7", "kli", target_hex, target_facing, weapons=ARMED, **target))


def shot(state: TacticalState, unit: str, weapon: str, target: str, when: str = "1.4.fire") -> Action:
    return Action(RULES.parse_time(when), RULES.owner_of(state, unit) or "fed", unit,
                  {"fire": {"weapon": weapon, "target": target}})


def resolve(state: TacticalState, actions: list[Action], roll: int | Mapping[str, int] = 1
            ) -> tuple[TacticalState, list[Event]]:
    point = actions[0].at
    refs = RULES.dice_needed(state, point, actions)
    rolls = roll if isinstance(roll, Mapping) else {ref: roll for ref in refs}
    return RULES.apply(state, point, actions, rolls)


# --- arcs: sectors of 60°, edges in both (DESIGN §7.1) -------------------------------------------------------

# From 1010 (an even column): the absolute sectors holding each hex.
SECTORS = [
    ("1008", "A"), ("1108", "A"), ("0908", "A"), ("1006", "A"), ("1109", "AB"), ("1208", "B"), ("1310", "B"),
    ("1210", "BC"), ("1211", "C"), ("1112", "CD"), ("1012", "D"), ("1011", "D"), ("0912", "DE"), ("0911", "E"),
    ("0810", "EF"), ("0809", "F"), ("1010", "ABCDEF"),
]


@pytest.mark.parametrize(("other", "expected"), SECTORS)
def test_design_7_1_arcs_sectors_and_their_edges(other: str, expected: str) -> None:
    found = arcs.sectors((10, 10), hexmap.parse_hex(other))
    assert "".join(hexmap.format_facing(d) for d in sorted(found)) == expected


def _angle(origin: tuple[int, int], other: tuple[int, int]) -> float:
    """Degrees clockwise from straight up, from hex centres in the plane (even columns half a hex lower)."""
    def centre(h: tuple[int, int]) -> tuple[float, float]:
        return 1.5 * h[0], math.sqrt(3) * (h[1] + (0.5 if h[0] % 2 == 0 else 0.0))
    (x0, y0), (x1, y1) = centre(origin), centre(other)
    return math.degrees(math.atan2(x1 - x0, -(y1 - y0))) % 360


@given(st.tuples(st.integers(1, 60), st.integers(1, 60)), st.tuples(st.integers(1, 60), st.integers(1, 60)))
def test_sectors_agree_with_plane_geometry(origin: tuple[int, int], other: tuple[int, int]) -> None:
    """An independent oracle: a hex is in sector d iff its bearing is within 30° of d × 60° (edges: both)."""
    found = arcs.sectors(origin, other)
    if origin == other:
        assert found == frozenset(range(6))
        return
    angle = _angle(origin, other)
    for direction in range(6):
        off = abs((angle - 60 * direction + 180) % 360 - 180)
        if abs(off - 30) > 1e-6:
            assert (direction in found) == (off < 30), (direction, angle)
        else:
            assert direction in found
    assert 1 <= len(found) <= 2


# CA at 1010 facing A (front up) with ph1 arcs F, A, B (the front half), ph2 arc D (rear), tp1 arc A.
IN_ARC = [
    ("DESIGN 7.1: dead ahead is in the front arc", "1005", "ph1", None),
    ("front-left sector", "0809", "ph1", None),
    ("edge between B and C: in B, so in arc", "1210", "ph1", None),
    ("C sector only: out of a front-half arc", "1211", "ph1",
     "CA cannot fire ph1 at D7 at 1.4.fire: D7 (1211) is in CA's C sector, outside ph1's arcs A, B, F"),
    ("rear arc D", "1012", "ph2", None),
    ("edge C/D is in the rear arc", "1112", "ph2", None),
    ("rear arc misses the front", "1005", "ph2",
     "CA cannot fire ph2 at D7 at 1.4.fire: D7 (1005) is in CA's A sector, outside ph2's arcs D"),
    ("a 60° arc: the A/B edge is in", "1109", "tp1", None),
    ("a 60° arc: B is out", "1208", "tp1",
     "CA cannot fire tp1 at D7 at 1.4.fire: D7 (1208) is in CA's B sector, outside tp1's arcs A"),
    ("range 0 is in every arc", "1010", "ph2", None),
]


@pytest.mark.parametrize(("rule", "where", "weapon", "reason"), IN_ARC, ids=[r[0] for r in IN_ARC])
def test_design_7_1_in_arc_or_not(rule: str, where: str, weapon: str, reason: str | None) -> None:
    state = duel(where)
    assert RULES.legal(state, shot(state, "CA", weapon, "D7")) == reason


def test_arcs_turn_with_the_firer() -> None:
    """Arcs are counted from the unit's facing: facing C, its front arc A is the absolute C sector."""
    state = game(ship("CA", "fed", "1010", "C", weapons=ARMED), ship("D7", "kli", "1211", weapons=ARMED))
    assert RULES.legal(state, shot(state, "CA", "tp1", "D7")) is None
    assert "D7 (1211) is in CA's A sector, outside ph2's arcs D" in (RULES.legal(state, shot(state, "CA", "ph2", "D7"))
                                                                    or "")


# --- which shield is hit (DESIGN 7.1: the target's shield facing the firer) ----------------------------------

# D7 at 1010 facing A; CA fires from these hexes (the shield facing the firer; on an edge the stronger one).
SHIELD_FACING = [
    ("from ahead: #1", "1008", "A", 1), ("right front: #2", "1208", "A", 2), ("right rear: #3", "1211", "A", 3),
    ("behind: #4", "1012", "A", 4), ("left rear: #5", "0911", "A", 5), ("left front: #6", "0809", "A", 6),
    ("target facing D: ahead is below", "1012", "D", 1), ("target facing B: from ahead-left", "1008", "B", 6),
    ("edge #1/#2: the stronger, #1 (30 vs 24)", "1109", "A", 1),
    ("edge #2/#3: the stronger, #2 (24 vs 22)", "1210", "A", 2),
    ("edge #5/#6: the stronger, #5 (18 vs 16)", "0810", "A", 5),
]


@pytest.mark.parametrize(("rule", "firer", "facing", "shield"), SHIELD_FACING, ids=[r[0] for r in SHIELD_FACING])
def test_design_7_1_shield_facing_the_firer(rule: str, firer: str, facing: str, shield: int) -> None:
    state = game(ship("CA", "fed", firer, weapons=[{"id": "ph1", "type": "phaser", "arcs": list("ABCDEF")}]),
                 ship("D7", "kli", "1010", facing))
    _, events = resolve(state, [shot(state, "CA", "ph1", "D7")])
    assert [e.data["shield"] for e in events if e.kind == "damage"] == [shield]


def test_shield_edge_tie_goes_to_the_lower_number() -> None:
    state = game(ship("CA", "fed", "1109", weapons=[{"id": "ph1", "type": "phaser", "arcs": list("ABCDEF")}]),
                 ship("D7", "kli", "1010", "A", shields=[10, 10, 0, 0, 0, 0]))
    _, events = resolve(state, [shot(state, "CA", "ph1", "D7")])
    assert events[1].data["shield"] == 1


RANGE_ZERO = [
    ("the firer came from below: #4", {"came_from": (10, 11)}, {}, 4),
    ("the firer never moved, the target came from below: firer taken above, #1", {}, {"came_from": (10, 11)}, 1),
    ("neither moved: #1", {}, {}, 1),
    ("the firer's last hex wins", {"came_from": (11, 10)}, {"came_from": (10, 11)}, 2),
]


@pytest.mark.parametrize(("rule", "firer", "target", "shield"), RANGE_ZERO, ids=[r[0] for r in RANGE_ZERO])
def test_range_zero_shield(rule: str, firer: dict, target: dict, shield: int) -> None:
    state = game(ship("CA", "fed", "1010", weapons=ARMED), ship("D7", "kli", "1010", "A"))
    units = {"CA": firer, "D7": target}
    state = dataclasses.replace(state, units=tuple(dataclasses.replace(u, **units[u.id]) for u in state.units))
    _, events = resolve(state, [shot(state, "CA", "ph1", "D7")])
    assert events[1].data["shield"] == shield


# --- damage by bracket and die (DESIGN §7.1) ------------------------------------------------------------------

# D7 straight ahead at these ranges; phaser rows per bracket [0], [1], [2–3], [4–8], [9–15].
DAMAGE_TABLE = [(r, die, PHASER_DAMAGE[b][die - 1]) for b, ranges in enumerate([[1], [2, 3], [4, 8], [9, 15]], 1)
                for r in ranges for die in (1, 4, 6)]


@pytest.mark.parametrize(("distance", "die", "damage"), DAMAGE_TABLE)
def test_design_7_1_damage_by_bracket_and_die(distance: int, die: int, damage: int) -> None:
    state = game(ship("CA", "fed", "1020", weapons=ARMED), ship("D7", "kli", f"10{20 - distance:02d}", "D"))
    _, events = resolve(state, [shot(state, "CA", "ph1", "D7")], die)
    assert [(e.kind, e.data["shield"], e.data["shield_damage"], e.data["roll"], e.data["range"]) for e in events
            if e.kind == "damage"] == [("damage", 1, damage, die, distance)]


def test_design_7_1_excess_goes_to_internals_and_shots_add_up_in_dice_order() -> None:
    state = duel("1008", shields=[10, 24, 22, 20, 18, 16])  # range 2: torpedo 16 on die 1, phaser 7
    new, events = resolve(state, [shot(state, "CA", "tp1", "D7"), shot(state, "CA", "ph1", "D7")])
    damage = [dict(e.data) for e in events if e.kind == "damage"]
    assert [(d["weapon"], d["shield"], d["shield_damage"], d["internal"]) for d in damage] == [
        ("ph1", 1, 7, 0), ("tp1", 1, 3, 13)]  # dice order: ph1 before tp1 (weapon order on CA)
    assert new.unit("D7").shields == (0, 24, 22, 20, 18, 16) and new.unit("D7").hull == 7


def test_a_unit_without_shields_takes_everything_inside() -> None:
    state = game(ship("CA", "fed", "1010", weapons=ARMED),
                 {k: v for k, v in ship("D7", "kli", "1008").items() if k != "shields"})
    new, events = resolve(state, [shot(state, "CA", "ph1", "D7")])
    assert events[1].data == {"shield": 4, "shield_damage": 0, "internal": 7, "weapon": "ph1", "attacker": "CA",
                              "roll": 1, "range": 2, "amount": 7}
    assert new.unit("D7").hull == 13


# --- seed §7.A: simultaneous resolution -----------------------------------------------------------------------

def test_seed_7_a_both_ships_destroy_each_other_in_one_fire_step() -> None:
    state = duel("1008", "D", hull=5)
    state = dataclasses.replace(state, units=tuple(dataclasses.replace(u, hull=5, shields=(0,) * 6)
                                                   for u in state.units))
    actions = [shot(state, "D7", "ph1", "CA"), shot(state, "CA", "ph1", "D7")]
    assert RULES.dice_needed(state, actions[0].at, actions) == ["1.4.fire/CA/ph1", "1.4.fire/D7/ph1"]
    new, events = resolve(state, actions)
    assert [(e.kind, e.unit) for e in events] == [("fire", "CA"), ("damage", "D7"), ("fire", "D7"),
                                                  ("damage", "CA"), ("destroyed", "D7"), ("destroyed", "CA")]
    assert [(e.by, e.unit, e.data["hex"]) for e in events if e.kind == "destroyed"] == [
        ("fed", "D7", "1008"), ("kli", "CA", "1010")]
    assert [(u["id"], u["status"], u["hex"], u["hull"]) for u in RULES.state_summary(new)] == [
        ("CA", "destroyed", None, 0), ("D7", "destroyed", None, 0)]
    assert RULES.is_over(new)
    assert RULES.legal(new, shot(new, "CA", "ph2", "D7", "1.8.fire")) == (
        "CA cannot fire ph2 at D7 at 1.8.fire: it has been destroyed")


def test_seed_7_a_a_unit_destroyed_by_the_first_shot_still_fires() -> None:
    state = duel("1008", "D")
    state = dataclasses.replace(state, units=tuple(dataclasses.replace(u, hull=1, shields=(0,) * 6)
                                                   if u.id == "CA" else u for u in state.units))
    new, events = resolve(state, [shot(state, "CA", "ph1", "D7"), shot(state, "D7", "ph1", "CA"),
                                  shot(state, "D7", "tp1", "CA")])
    assert [e.kind for e in events].count("fire") == 3
    assert new.unit("CA").status == "destroyed" and new.unit("D7").shields[0] == 23
    assert [e.by for e in events if e.kind == "destroyed"] == ["kli"]


def test_game_over_when_all_but_one_player_are_out() -> None:
    state = game(ship("CA", "fed", "1010", weapons=ARMED), ship("D7", "kli", "1008", "D", hull=0, shields=[0] * 6),
                 ship("KR", "rom", "1009", hull=1, shields=[0] * 6))
    assert not RULES.is_over(state)
    new, _ = resolve(state, [shot(state, "CA", "ph1", "D7")])
    assert not RULES.is_over(new)  # rom is still in
    new, _ = resolve(new, [shot(new, "CA", "tp1", "KR", "1.8.fire")])
    assert RULES.is_over(new)


def test_declared_events_are_the_fire_events_of_apply() -> None:
    state = duel("1008")
    actions = [shot(state, "CA", "tp1", "D7"), shot(state, "D7", "ph1", "CA"), shot(state, "CA", "ph1", "D7")]
    declared = RULES.declared_events(state, actions[0].at, actions)
    where = {"range": 2, "at": "1.4.fire"}
    assert [(e.by, e.unit, dict(e.data)) for e in declared] == [
        ("fed", "CA", {"weapon": "ph1", "target": "D7", "heavy": False, "type": "phaser", **where}),
        ("fed", "CA", {"weapon": "tp1", "target": "D7", "heavy": True, "type": "torpedo", **where}),
        ("kli", "D7", {"weapon": "ph1", "target": "CA", "heavy": False, "type": "phaser", **where}),
    ]
    _, events = resolve(state, actions)
    assert [e for e in events if e.kind in RULES.declared_kinds] == declared
    assert RULES.declared_events(state, RULES.parse_time("1.4.move"), []) == []


# --- one shot per weapon and turn; dice -------------------------------------------------------------------------

def test_design_7_1_each_weapon_fires_once_a_turn() -> None:
    state = duel("1008")
    new, _ = resolve(state, [shot(state, "CA", "ph1", "D7")])
    assert RULES.legal(new, shot(new, "CA", "ph1", "D7", "1.9.fire")) == (
        "CA cannot fire ph1 at D7 at 1.9.fire: ph1 already fired at 1.4.fire this turn")
    assert RULES.legal(new, shot(new, "CA", "ph2", "D7", "1.9.fire")) is not None  # out of arc, but not fired
    assert RULES.legal(new, shot(new, "CA", "tp1", "D7", "1.9.fire")) is None
    assert RULES.legal(new, shot(new, "CA", "ph1", "D7", "2.1.fire")) is None  # a new turn
    assert new.unit("CA").fired == ((RULES.parse_time("1.4.fire"), "ph1"),)


def test_the_same_weapon_twice_in_one_step_fires_once() -> None:
    state = game(ship("CA", "fed", "1010", weapons=ARMED), ship("D7", "kli", "1008"), ship("KR", "rom", "1108"))
    actions = [shot(state, "CA", "ph1", "D7"), shot(state, "CA", "ph1", "KR")]
    assert RULES.slot_of(actions[0].do) == RULES.slot_of(actions[1].do) == ("fire", "ph1")
    assert RULES.dice_needed(state, actions[0].at, actions) == ["1.4.fire/CA/ph1"]
    _, events = resolve(state, actions)
    assert [e.data["target"] for e in events if e.kind == "fire"] == ["D7"]


ILLEGAL = [
    ("out of range", "1004", {"weapon": "ph1", "target": "D7"}, None,
     "CA cannot fire ph1 at D7 at 1.4.fire: D7 is at range 16, beyond ph1's range 15 (phaser)"),
    ("a gap in the brackets", "1015", {"weapon": "tp1", "target": "D7"}, None,
     "CA cannot fire tp1 at D7 at 1.4.fire: torpedo has no damage bracket for range 5"),
    ("no such weapon", "1018", {"weapon": "ph9", "target": "D7"}, None,
     "CA cannot fire ph9 at D7 at 1.4.fire: CA has no weapon 'ph9' (it carries ph1, ph2, tp1, dr1)"),
    ("a seeking weapon is launched, not fired", "1018", {"weapon": "dr1", "target": "D7"}, None,
     "CA cannot fire dr1 at D7 at 1.4.fire: dr1 is a seeking weapon (drone): launch it at an activity step"),
    ("no such target", "1018", {"weapon": "ph1", "target": "XX"}, None,
     "CA cannot fire ph1 at XX at 1.4.fire: there is no unit 'XX' to fire at"),
    ("not at an enemy", "1018", {"weapon": "ph1", "target": "NCL"}, None,
     "CA cannot fire ph1 at NCL at 1.4.fire: NCL is not an enemy unit (it belongs to fed)"),
    ("only at fire steps", "1018", {"weapon": "ph1", "target": "D7"}, "1.4.activity",
     "CA cannot fire ph1 at D7 at 1.4.activity: {fire: {weapon: ph1, target: D7}} is only given at fire steps"),
    ("malformed", "1018", {"weapon": "ph1"}, None,
     "CA cannot fire ph1 at ? at 1.4.fire: fire takes {weapon: WEAPON, target: UNIT}"),
]


@pytest.mark.parametrize(("rule", "where", "value", "when", "reason"), ILLEGAL, ids=[r[0] for r in ILLEGAL])
def test_design_7_1_illegal_fire_quotes_the_action(rule: str, where: str, value: dict, when: str | None,
                                                   reason: str) -> None:
    state = game(ship("CA", "fed", "1020", weapons=ARMED), ship("NCL", "fed", "1021"), ship("D7", "kli", where, "D"))
    action = Action(RULES.parse_time(when or "1.4.fire"), "fed", "CA", {"fire": value})
    assert RULES.legal(state, action) == reason
    assert RULES.dice_needed(state, action.at, [action]) == []


def test_fire_at_a_unit_off_the_map() -> None:
    state = duel("1008")
    state = dataclasses.replace(state, units=(state.units[0], dataclasses.replace(state.units[1], hex=None,
                                                                                 status="disengaged")))
    assert RULES.legal(state, shot(state, "CA", "ph1", "D7")) == (
        "CA cannot fire ph1 at D7 at 1.4.fire: D7 is not on the map (it has left the map)")


def test_apply_needs_every_die() -> None:
    state = duel("1008")
    actions = [shot(state, "CA", "ph1", "D7"), shot(state, "CA", "tp1", "D7")]
    with pytest.raises(ValueError, match="needs a die 1..6 for 1.4.fire/CA/tp1, got None"):
        RULES.apply(state, actions[0].at, actions, {"1.4.fire/CA/ph1": 3})
    with pytest.raises(ValueError, match="got 7"):
        RULES.apply(state, actions[0].at, actions, {"1.4.fire/CA/ph1": 3, "1.4.fire/CA/tp1": 7})
    with pytest.raises(ValueError, match="1.4.fire/CA/ph1"):
        RULES.apply(state, actions[0].at, actions)
    assert RULES.dice_sides("1.4.fire/CA/ph1") == 6
    new, events = RULES.apply(state, actions[0].at, [], None)  # nothing fired: no dice needed
    assert events == [] and new.units == state.units


def test_the_damage_step_does_nothing() -> None:
    state = duel("1008")
    new, events = RULES.apply(state, RULES.parse_time("1.4.damage"), [])
    assert events == [] and new.units == state.units


# --- properties ---------------------------------------------------------------------------------------------

@given(st.lists(st.integers(0, 40), min_size=6, max_size=6), st.integers(0, 60), st.integers(1, 6),
       st.integers(0, 200))
def test_strike_never_goes_below_zero(shields: list[int], hull: int, shield: int, amount: int) -> None:
    state = duel("1008", shields=shields, hull=hull)
    target = state.unit("D7")
    hit, on_shield, internal = fire.strike(target, shield, amount)
    assert on_shield >= 0 and internal >= 0 and on_shield + internal == amount
    assert all(s >= 0 for s in hit.shields) and hit.hull >= 0
    assert on_shield == min(amount, shields[shield - 1])


hexes = st.tuples(st.integers(1, 12), st.integers(1, 12)).map(hexmap.format_hex)


@given(hexes, hexes, st.sampled_from("ABCDEF"), st.sampled_from("ABCDEF"), st.integers(1, 6), st.integers(0, 8))
def test_any_volley_keeps_shields_and_hull_at_zero_or_more(firer: str, target: str, facing: str, target_facing: str,
                                                           roll: int, strength: int) -> None:
    types = ["phaser", "phaser", "phaser", "torpedo"]
    everywhere = [{"id": f"w{i}", "type": t, "arcs": list("ABCDEF")} for i, t in enumerate(types)]
    state = game(ship("CA", "fed", firer, facing, weapons=everywhere, shields=[strength] * 6, hull=strength),
                 ship("D7", "kli", target, target_facing, weapons=everywhere, shields=[strength] * 6, hull=strength))
    actions = [shot(state, u, w["id"], t) for u, t in (("CA", "D7"), ("D7", "CA")) for w in everywhere]
    legal = [a for a in actions if RULES.legal(state, a) is None]
    refs = RULES.dice_needed(state, actions[0].at, actions)
    assert len(refs) == len(legal)
    new, events = RULES.apply(state, actions[0].at, actions, {r: roll for r in refs})
    assert [e for e in events if e.kind == "fire"] == RULES.declared_events(state, actions[0].at, actions)
    for unit in new.units:
        assert all(s >= 0 for s in unit.shields) and unit.hull >= 0
        assert (unit.status == "destroyed") == (unit.hull == 0 and any(
            e.kind == "damage" and e.unit == unit.id and e.data["internal"] > 0 for e in events))
    assert all(e.data["shield_damage"] >= 0 and e.data["internal"] >= 0 for e in events if e.kind == "damage")
