"""Shield reinforcement (seed §6.C.2) and the outcome rule (docs/tactical.md "The end and the outcome") on the
ruleset alone, as data-driven vectors: each row is one case, its expected result written out."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pbem.rulesets.base import Action
from pbem.rulesets.tactical import outcome
from test_tactical_fire import ARMED, RULES, duel, game, resolve, ship, shot


def reinforce(unit: str, shield: Any, points: Any, when: str = "1.4.fire", by: str = "kli") -> Action:
    return Action(RULES.parse_time(when), by, unit, {"reinforce": {"shield": shield, "points": points}})


# (reinforcement points on the hit shield, expected (reinforcement took, shield took, internals)); the CA's ph1
# hits the D7 at range 5 with die 1: phaser bracket [4, 8] row [5, 4, 3, 2, 1, 1] → 5 damage on shield #1
ABSORB = [
    (0, (0, 5, 0)),
    (2, (2, 3, 0)),
    (5, (5, 0, 0)),
    (9, (5, 0, 0)),  # what is left of it is spent anyway
]


@pytest.mark.parametrize("points, expected", ABSORB)
def test_a_reinforcement_takes_the_hit_first(points: int, expected: tuple[int, int, int]) -> None:
    state = duel()
    given = [shot(state, "CA", "ph1", "D7")] + ([reinforce("D7", 1, points)] if points else [])
    after, events = resolve(state, given)
    damage = next(e for e in events if e.kind == "damage")
    assert (damage.data.get("reinforcement", 0), damage.data["shield_damage"], damage.data["internal"]) == expected
    assert after.unit("D7").shields[0] == 30 - expected[1]
    assert [h.reinforcement for h in after.hits] == [expected[0]]
    if points:
        assert after.unit("D7").reinforced == ((RULES.parse_time("1.4.fire"), 1, points),)


# (the reinforce value, the unit's power, the reason's words or None when legal)
LEGALITY = [
    ({"shield": 1, "points": 4}, 10, None),
    ({"shield": 6, "points": 10}, 10, None),
    ({"shield": 1, "points": 11}, 10, "more than its power 10"),
    ({"shield": 7, "points": 1}, 10, "shield must be a whole number 1..6"),
    ({"shield": 1, "points": 0}, 10, "points must be a whole number of at least 1"),
    ({"shield": 1, "points": 2.0}, 10, "points must be a whole number"),
    ({"shield": True, "points": 2}, 10, "shield must be a whole number"),
    ({"shield": 1}, 10, "reinforce takes {shield: 1..6, points: N}"),
]


@pytest.mark.parametrize("value, power, reason", LEGALITY)
def test_reinforcement_legality(value: dict, power: int, reason: str | None) -> None:
    state = game(ship("CA", "fed", "1010", weapons=ARMED), ship("D7", "kli", "1005", "D", power=power))
    why = RULES.legal(state, Action(RULES.parse_time("1.4.fire"), "kli", "D7", {"reinforce": value}))
    assert (why is None) if reason is None else (why is not None and reason in why), why


def test_reinforcement_only_at_fire_steps_and_only_one_s_own_unit() -> None:
    state = duel()
    assert "only given at fire" in (RULES.legal(state, reinforce("D7", 1, 2, "1.4.move")) or "")
    assert "belongs to kli" in (RULES.legal(state, reinforce("D7", 1, 2, by="fed")) or "")


# (allocation line, points used, the audit's complaint or None)
AUDIT = [
    (4, 4, None),
    (4, 0, None),
    (0, 3, "shield reinforcement used 3, 0 allocated (3 short)"),
    (2, 6, "shield reinforcement used 6, 2 allocated (4 short)"),
]


@pytest.mark.parametrize("line, used, complaint", AUDIT)
def test_the_audit_pays_reinforcement_from_its_line(line: int, used: int, complaint: str | None) -> None:
    state = duel()
    given = [shot(state, "CA", "ph1", "D7")] + ([reinforce("D7", 1, used)] if used else [])
    after, _ = resolve(state, given)
    record = RULES.turn_record(after, "kli", 1)
    setup = {"units": [{"id": "D7", "power": 40}], "weapons": {}}
    reasons = RULES.audit_allocation(setup, record, {"turn": 1, "units": {"D7": {"speed": 0, "reinforce": line}}})
    assert reasons == ([] if complaint is None else [f"turn 1, D7: {complaint}"])


# (each player's units as (status, shields lost, hull lost), the outcome's opening words)
OUTCOMES = [
    ({"fed": [("active", 0, 0)], "kli": [("destroyed", 0, 0)]},
     "fed wins: the only one left in play (kli's units destroyed)"),
    ({"fed": [("disengaged", 0, 0)], "kli": [("active", 9, 9)]},
     "kli wins: the only one left in play (fed's units disengaged)"),
    ({"fed": [("destroyed", 0, 0)], "kli": [("disengaged", 0, 0)]}, "a draw: nobody is left in play"),
    ({"fed": [("active", 3, 0)], "kli": [("active", 2, 2)]},
     "fed wins on damage taken after the last turn (least is best: fed 3, kli 4)"),
    ({"fed": [("active", 4, 0)], "kli": [("active", 2, 2)]}, "a draw between fed and kli on damage taken"),
    ({"fed": [("active", 0, 0)], "kli": [("active", 1, 0)], "rom": [("destroyed", 0, 0)]},
     "fed wins on damage taken after the last turn (least is best: fed 0, kli 1)"),
]


@pytest.mark.parametrize("sides, expected", OUTCOMES)
def test_the_outcome_rule(sides: dict[str, list[tuple[str, int, int]]], expected: str) -> None:
    raw = [ship(f"{p[0].upper()}{i}", p, f"{10 + 2 * n:02d}{10 + i:02d}") for n, p in enumerate(sides)
           for i, _ in enumerate(sides[p])]
    state = game(*raw)
    units = {}
    for n, player in enumerate(sides):
        for i, (status, shields, hull) in enumerate(sides[player]):
            unit = state.unit(f"{player[0].upper()}{i}")
            assert unit is not None
            lost = (unit.shields[0] - shields, *unit.shields[1:])
            units[unit.id] = dataclasses.replace(unit, status=status, shields=lost, hull=unit.hull - hull,
                                                 hex=unit.hex if status == "active" else None)
    assert outcome.outcome(state.with_units(units, state.at)).startswith(expected)
