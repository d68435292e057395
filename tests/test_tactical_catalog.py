"""tactical/1 combat break conditions (DESIGN §4.3, §7.1; seed 000 §6.C 1–5, §6.D liberal readings): fire,
launch, damage, shield_down and system. Each vector: a step's events as the protocol passes them (the player's
own events removed unless `by: any`), a condition of player `fed`, and the expected text (None: not met)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pbem.rulesets.base import Action, Event
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.state import TacticalState

RULES = TacticalRuleset()
PLAYERS = ["fed", "kli", "rom"]
OWNERS = {"CA": "fed", "SH1": "fed", "D7": "kli", "S1": "kli", "KR": "rom"}
ALL_ROUND = [{"id": "ph1", "type": "phaser", "arcs": list("ABCDEF")}]
SETUP = {
    "map": {"columns": 30, "rows": 40},
    "turns": 2,
    "weapons": {"phaser": {"brackets": [[0, 15]], "damage": [[6, 5, 4, 3, 2, 1]]}},
    "units": [
        {"id": "CA", "owner": "fed", "hex": "1020", "facing": "A", "speed": 0, "turn_mode": 2,
         "shields": [30, 24, 24, 0, 24, 24], "hull": 30, "weapons": ALL_ROUND, "systems": ["tractor"]},
        {"id": "SH1", "owner": "fed", "kind": "shuttle", "hex": "1021", "facing": "A", "speed": 0, "turn_mode": 0,
         "hull": 6},
        {"id": "D7", "owner": "kli", "hex": "1010", "facing": "A", "speed": 0, "turn_mode": 2,
         "shields": [0, 22, 22, 18, 22, 22], "hull": 30, "weapons": ALL_ROUND, "systems": ["tractor"]},
        {"id": "KR", "owner": "rom", "hex": "2030", "facing": "A", "speed": 0, "turn_mode": 2,
         "shields": [0, 0, 0, 0, 0, 0], "hull": 30, "weapons": ALL_ROUND},
    ],
}
START = dataclasses.replace(RULES.initial_state(SETUP, PLAYERS), at=RULES.parse_time("1.4.fire"))


def board(**changes: dict[str, Any]) -> TacticalState:
    """The start position with some units changed, e.g. D7={"hex": (10, 25)}."""
    return dataclasses.replace(START, units=tuple(dataclasses.replace(u, **changes.get(u.id, {}))
                                                  for u in START.units))


def ev(kind: str, unit: str, by: str | None = None, /, **data: Any) -> Event:
    return Event(kind, by or OWNERS[unit], unit, data)


FIRE_D7 = ev("fire", "D7", weapon="ph1", target="CA", heavy=False, type="phaser", range=10, at="1.4.fire")
HEAVY_D7 = ev("fire", "D7", weapon="ds1", target="SH1", heavy=True, type="disruptor", range=11, at="1.4.fire")
LAUNCH_D7 = ev("launch", "D7", weapon="dr1", **{"as": "S1"}, type="drone", heavy=False, at="1.5.activity")
HEAVY_LAUNCH = ev("launch", "KR", weapon="pl1", **{"as": "P1"}, type="plasma", heavy=True, at="1.5.activity")


def hit(unit: str, shield: int, internal: int, by: str = "kli", attacker: str = "D7") -> Event:
    return ev("damage", unit, by, shield=4, shield_damage=shield, internal=internal, weapon="ph1", attacker=attacker,
              roll=2, range=10)


# (rule, events, condition, expected)
FIRE = [
    ("seed 6.D.4: any direct fire", [FIRE_D7], {"fire": {}}, "fire: D7 fires ph1 at CA (range 10) (1.4.fire)"),
    ("seed 6.D.4: a seeking launch is fire too", [LAUNCH_D7], {"fire": {}},
     "fire: D7 launches dr1 as S1 (1.5.activity)"),
    ("seed 6.C.3: a heavy weapon", [FIRE_D7, HEAVY_D7], {"fire": {"heavy": True}},
     "heavy fire: D7 fires ds1 at SH1 (range 11) (1.4.fire)"),
    ("a light weapon is no heavy fire", [FIRE_D7, LAUNCH_D7], {"fire": {"heavy": True}}, None),
    ("a heavy seeking launch is heavy fire", [HEAVY_LAUNCH], {"fire": {"heavy": True}},
     "heavy fire: KR launches pl1 as P1 (1.5.activity)"),
    ("heavy: false is read liberally as any fire", [FIRE_D7], {"fire": {"heavy": False}},
     "fire: D7 fires ph1 at CA (range 10) (1.4.fire)"),
    ("only the named enemy", [FIRE_D7], {"fire": {"unit": "KR"}}, None),
    ("damage is not fire", [hit("CA", 3, 0)], {"fire": {}}, None),
]

LAUNCH = [
    ("a launch", [FIRE_D7, LAUNCH_D7], {"launch": {}}, "launch: D7 launches dr1 as S1 (1.5.activity)"),
    ("direct fire is no launch", [FIRE_D7], {"launch": {}}, None),
    ("only the named launcher", [LAUNCH_D7], {"launch": {"unit": "KR"}}, None),
]

DAMAGE = [
    ("seed 6.C.2: shield damage on my ship", [hit("CA", 5, 0)], {"damage": {"kind": "shield"}},
     "damage (shield): CA took 5 on shield #4 and 0 internal from D7's ph1 (1.4.fire)"),
    ("shield damage is no internal damage", [hit("CA", 5, 0)], {"damage": {"kind": "internal"}}, None),
    ("seed 6.C.1: internal damage", [hit("CA", 0, 4)], {"damage": {"kind": "internal"}},
     "damage (internal): CA took 0 on shield #4 and 4 internal from D7's ph1 (1.4.fire)"),
    ("any damage without kind", [hit("CA", 0, 4)], {"damage": {}},
     "damage: CA took 0 on shield #4 and 4 internal from D7's ph1 (1.4.fire)"),
    ("a shot for 0 is no damage", [hit("CA", 0, 0)], {"damage": {}}, None),
    ("damage to an enemy is not mine", [hit("KR", 5, 5, by="kli")], {"damage": {}}, None),
    ("seed 6.C.1: any damage to my shuttle", [hit("SH1", 0, 2)], {"damage": {"kind": "shuttle"}},
     "damage (shuttle): SH1 took 0 on shield #4 and 2 internal from D7's ph1 (1.4.fire)"),
    ("a ship is no shuttle", [hit("CA", 5, 5)], {"damage": {"kind": "shuttle"}}, None),
    ("nor a fighter", [hit("SH1", 0, 2)], {"damage": {"kind": "fighter"}}, None),
    ("only the named unit of mine", [hit("CA", 5, 0), hit("SH1", 0, 1)], {"damage": {"unit": "SH1"}},
     "damage: SH1 took 0 on shield #4 and 1 internal from D7's ph1 (1.4.fire)"),
    ("several hits at once", [hit("CA", 5, 0), hit("CA", 2, 3, by="rom", attacker="KR")], {"damage": {}},
     "damage: CA took 5 on shield #4 and 0 internal from D7's ph1, CA took 2 on shield #4 and 3 internal from "
     "KR's ph1 (1.4.fire)"),
    ("an impact's damage", [ev("damage", "CA", "kli", shield=1, shield_damage=12, internal=0, weapon="dr1",
                               attacker="S1")], {"damage": {}},
     "damage: CA took 12 on shield #1 and 0 internal from S1's dr1 (1.4.fire)"),
]

USE = ev("system", "D7", kind="use", system="tractor", target="CA", at="1.5.activity")
CEASE = ev("system", "KR", kind="cease", system="cloak", at="1.5.activity")
SYSTEM = [
    ("seed 6.C.5: any system use", [USE], {"system": {}}, "system: D7 uses tractor on CA (1.5.activity)"),
    ("by name", [USE, CEASE], {"system": {"name": "cloak"}}, "system: KR ceases cloak (1.5.activity)"),
    ("system: is the same as name:", [USE, CEASE], {"system": {"system": "tractor"}},
     "system: D7 uses tractor on CA (1.5.activity)"),
    ("by kind", [USE], {"system": {"kind": "cease"}}, None),
    ("an announcement", [ev("system", "KR", kind="announce", system="cloak", at="1.6.activity")],
     {"system": {"kind": "announce"}}, "system: KR announces cloak (1.6.activity)"),
    ("seed 6.C.5: a seeking weapon launch is a system use", [LAUNCH_D7], {"system": {}},
     "system: D7 launches dr1 as S1 (1.5.activity)"),
    ("but not a named system", [LAUNCH_D7], {"system": {"name": "tractor"}}, None),
    ("only the named unit", [USE], {"system": {"unit": "KR"}}, None),
    ("fire is no system", [FIRE_D7], {"system": {}}, None),
]

VECTORS = FIRE + LAUNCH + DAMAGE + SYSTEM


@pytest.mark.parametrize(("rule", "events", "condition", "expected"), VECTORS, ids=[v[0] for v in VECTORS])
def test_seed_6_c_combat_break_conditions(rule: str, events: list[Event], condition: dict,
                                          expected: str | None) -> None:
    assert RULES.condition_error(condition) is None
    assert RULES.condition_met(condition, "fed", START, START, events) == expected


MOVED = {"facing_before": "D", "facing": "D", "how": "F"}
# CA (fed) at 1020 facing A has shield #4 (rear) down; D7 (kli) at 1010 facing A, ahead of it, has shield #1
# (front) down, turned away from CA; KR (rom) far off has every shield down. Every unit has an all-round phaser
# reaching 15.
SHIELD_DOWN = [
    ("seed 6.C.4: an enemy moves behind my down shield", {"D7": {"hex": (10, 25), "facing": 3}},
     [ev("moved", "D7", **MOVED)],
     {"shield_down": {}}, "shield_down: CA shows down shield #4 to D7 (1.4.fire)"),
    ("out of its range: no break", {"D7": {"hex": (10, 36), "facing": 3}}, [ev("moved", "D7", **MOVED)],
     {"shield_down": {}}, None),
    ("an enemy without a weapon bearing on it: no break", {"D7": {"hex": (10, 25), "facing": 3, "weapons": ()}},
     [ev("moved", "D7", **MOVED)], {"shield_down": {}}, None),
    ("a shield shot down while the enemy faces it", {"CA": {"shields": (0, 24, 24, 0, 24, 24)}},
     [hit("CA", 30, 0)], {"shield_down": {}}, "shield_down: CA shows down shield #1 to D7 (1.4.fire)"),
    ("seed 6.C.4: or the attacker is mine: an enemy turns its down shield to my ship",
     {"D7": {"facing": 3}}, [ev("turned", "D7", from_facing="A", to_facing="D", how="HET")],
     {"shield_down": {}}, "shield_down: D7 shows down shield #1 to CA (1.4.fire)"),
    ("my own move exposing me is not a trigger", {"CA": {"facing": 3}}, [], {"shield_down": {}}, None),
    ("between two other players: not mine", {"KR": {"hex": (10, 2)}}, [ev("moved", "KR")], {"shield_down": {}},
     None),
    ("only pairs with the named unit", {"D7": {"hex": (10, 25), "facing": 3}}, [ev("moved", "D7", **MOVED)],
     {"shield_down": {"unit": "KR"}}, None),
]


@pytest.mark.parametrize(("rule", "after", "events", "condition", "expected"), SHIELD_DOWN,
                         ids=[v[0] for v in SHIELD_DOWN])
def test_seed_6_c_4_shield_down(rule: str, after: dict, events: list[Event], condition: dict,
                                expected: str | None) -> None:
    assert RULES.condition_met(condition, "fed", START, board(**after), events) == expected


def test_shield_down_already_shown_is_no_new_break() -> None:
    exposed = board(D7={"hex": (10, 25), "facing": 3})
    moved_on = board(D7={"hex": (10, 26), "facing": 3})
    assert RULES.condition_met({"shield_down": {}}, "fed", exposed, moved_on, [ev("moved", "D7", **MOVED)]) is None


def test_declared_fire_meets_the_targets_condition_before_any_die() -> None:
    """End to end (seed 7.B): D7 declares fire at CA; fed's {fire: {}} is met by the declared events alone."""
    state = board(D7={"hex": (10, 14)})
    action = Action(RULES.parse_time("1.5.fire"), "kli", "D7", {"fire": {"weapon": "ph1", "target": "CA"}})
    declared = RULES.declared_events(state, action.at, [action])
    assert RULES.condition_met({"fire": {}}, "fed", state, state, declared) == (
        "fire: D7 fires ph1 at CA (range 6) (1.5.fire)")
    after, events = RULES.apply(state, action.at, [action], {"1.5.fire/D7/ph1": 2})
    resolved = [e for e in events if e.kind not in RULES.declared_kinds]
    assert RULES.condition_met({"damage": {"kind": "internal"}}, "fed", state, after, resolved) is None
    assert RULES.condition_met({"damage": {"kind": "shield"}}, "fed", state, after, resolved) == (
        "damage (shield): CA took 5 on shield #1 and 0 internal from D7's ph1 (1.5.fire)")


def test_system_actions_emit_system_events() -> None:
    state = board()
    point = RULES.parse_time("1.5.activity")
    actions = [Action(point, "fed", "CA", {"use": "tractor", "target": "D7"}),
               Action(point, "kli", "D7", {"announce": "tractor"}),
               Action(point, "kli", "D7", {"cease": "tractor"})]
    assert all(RULES.legal(state, a) is None for a in actions)
    after, events = RULES.apply(state, point, actions)
    assert [(e.kind, e.by, e.unit, dict(e.data)) for e in events] == [
        ("system", "fed", "CA", {"kind": "use", "system": "tractor", "at": "1.5.activity", "target": "D7"}),
        ("system", "kli", "D7", {"kind": "announce", "system": "tractor", "at": "1.5.activity"}),
        ("system", "kli", "D7", {"kind": "cease", "system": "tractor", "at": "1.5.activity"}),
    ]
    assert after.unit("CA").used == ((point, "use", "tractor"),)
    assert RULES.condition_met({"system": {"name": "tractor"}}, "kli", state, after,
                               [e for e in events if e.by != "kli"]) == (
        "system: CA uses tractor on D7 (1.5.activity)")


SYSTEM_REFUSED = [
    ({"use": "cloak"}, "CA cannot use cloak at 1.5.activity: CA has no system 'cloak' (it has tractor)"),
    ({"use": "tractor", "target": "XX"}, "CA cannot use tractor on XX at 1.5.activity: there is no unit 'XX'"),
    ({"announce": "tractor", "target": "XX"}, "there is no unit 'XX'"),
]


@pytest.mark.parametrize(("do", "reason"), SYSTEM_REFUSED)
def test_system_actions_need_the_system(do: dict, reason: str) -> None:
    got = RULES.legal(board(), Action(RULES.parse_time("1.5.activity"), "fed", "CA", do))
    assert got is not None and reason in got
    off = board(D7={"hex": None, "status": "destroyed"})
    assert RULES.legal(off, Action(RULES.parse_time("1.5.activity"), "fed", "CA", {"use": "tractor", "target": "D7"})
                       ) == "CA cannot use tractor on D7 at 1.5.activity: D7 is not on the map (it has been destroyed)"


REFUSED = [
    ({"fire": {"heavy": "yes"}}, "{fire: {heavy: yes}}: heavy must be true or false, got 'yes'"),
    ({"fire": {"kind": "shield"}}, "kind is not part of a fire condition"),
    ({"damage": {"kind": "hull"}}, "kind must be one of shield, internal, shuttle, fighter, got 'hull'"),
    ({"system": {"kind": "jettison"}}, "kind must be one of use, cease, announce"),
    ({"system": {"name": "tractor", "system": "tractor"}}, "give the system once, as name"),
    ({"system": {"name": 3}}, "name must be a system name, got 3"),
    ({"launch": {"heavy": True}}, "heavy is not part of a launch condition"),
    ({"shield_down": 1}, "shield_down takes a mapping"),
    ({"damage": {"unit": 7}}, "unit must be a unit name, got 7"),
]


@pytest.mark.parametrize(("condition", "reason"), REFUSED, ids=[str(c) for c, _ in REFUSED])
def test_design_4_3_combat_conditions_refused(condition: dict, reason: str) -> None:
    got = RULES.condition_error(condition)
    assert got is not None and reason in got
    assert RULES.condition_met(condition, "fed", START, START, [FIRE_D7, hit("CA", 1, 1), USE]) is None
