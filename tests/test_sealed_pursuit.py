"""A seeking weapon steered by a sealed pursuit (seed 000 §2.C: a seeking weapon's target is secret until impact;
docs/tactical.md "Seeking weapons"): the plan `{pursue_sealed: {}}` names no target. At each move step it takes
the move that pursues every possible target at once (showing nothing of the real one), and where none does, a
special break asks its owner to choose among the moves that pursue one of them; every move is checked against
the real target once it is revealed (`pursuit_violations`). Data vectors on the states of test_tactical_plans:
the weapon S1 (kli's, speed 31, turn mode 0) at 1020 facing A.
"""

from __future__ import annotations

import dataclasses

import pytest

from pbem.formats import schemas
from pbem.rulesets.base import Ambiguous
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.plans import plan_error, pursue_choices
from pbem.rulesets.tactical.state import TacticalState
from pbem.rulesets.tactical.weapons import Seeker

RULES = TacticalRuleset()
AT = RULES.parse_time("1.2.move")
SEALED = {"unit": "S1", "from": "1.1.move", "until": "1.32.final", "do": {"pursue_sealed": {}}}


def game(**ships: str) -> TacticalState:
    """kli's drone S1 at 1020 facing A; fed's and rom's ships (CA, NCL: fed; KR: rom) where given; kli's D7 far
    off at 0120 (his own ship is never a target)."""
    owners = {"CA": "fed", "NCL": "fed", "KR": "rom"}
    units = [{"id": "S1", "owner": "kli", "hex": "1020", "facing": "A", "speed": 31, "turn_mode": 0},
             {"id": "D7", "owner": "kli", "hex": "0120", "facing": "A", "speed": 31, "turn_mode": 0}]
    units += [{"id": u, "owner": owners[u], "hex": h, "facing": "A", "speed": 0, "turn_mode": 2}
              for u, h in ships.items()]
    state = RULES.initial_state({"map": {"columns": 30, "rows": 30}, "turns": 2, "units": units},
                                ["fed", "kli", "rom"])
    drone = dataclasses.replace(state.unit("S1"), seeking=Seeker("drone", "D7", "dr1", 6, (1, 1, "activity")))
    return dataclasses.replace(state, units=tuple(drone if u.id == "S1" else u for u in state.units))


def resolved(state: TacticalState) -> tuple[str, ...] | None:
    result = RULES.resolve_plan(state, AT, "kli", SEALED)
    if result is None:
        return None
    if isinstance(result, Ambiguous):
        return ("?",) + tuple(o["move"] for o in result.options)
    (action,) = result
    assert (action.unit, action.source) == ("S1", "plan")
    return (action.do["move"],)


CASES = [
    # (name, the possible targets, what the sealed pursuit does: a move, or "?" and the options asked)
    ("one possible target: pursued as by name", {"CA": "1010"}, ("F",)),
    ("two dead ahead: one move pursues both", {"CA": "1010", "KR": "1005"}, ("F",)),
    ("ahead-right and abeam right: no move pursues both, the owner chooses", {"CA": "1110", "KR": "1520"},
     ("?", "TR", "SR")),
    ("right and left: the owner chooses between them", {"CA": "1520", "KR": "0517"}, ("?", "TL", "TR")),
    ("the launcher's own ships are no targets", {}, None),
]


@pytest.mark.parametrize("name, ships, does", CASES, ids=[c[0] for c in CASES])
def test_a_sealed_pursuit_shows_nothing_of_its_target_where_one_move_pursues_them_all(
        name: str, ships: dict, does: tuple | None) -> None:
    state = game(**ships)
    assert resolved(state) == does
    if does is not None and does[0] != "?":
        for ship in ships:  # whatever the real target, the move made pursues it: the check finds nothing
            assert does[0] in pursue_choices(state, state.unit("S1"), state.unit(ship), AT[1])
    if does is not None and does[0] == "?":
        for ship in ships:  # the options hold every real target's pursuit: the owner can always answer
            assert set(pursue_choices(state, state.unit("S1"), state.unit(ship), AT[1])) <= set(does[1:])


def test_a_sealed_pursuit_is_for_seeking_weapons_and_takes_no_options() -> None:
    state = game(CA="1010")
    ship = {**SEALED, "unit": "D7"}
    assert RULES.resolve_plan(state, AT, "kli", ship) is None  # a ship never pursues a sealed target
    assert plan_error(SEALED) is None
    assert "takes no options" in (plan_error({**SEALED, "do": {"pursue_sealed": {"target": "CA"}}}) or "")
    schemas.validate("pbem/tactical/plan/1", {"pursue_sealed": {}}, file="players/kli.yaml")


def test_the_moves_it_made_are_checked_against_the_real_target_when_revealed() -> None:
    """The owner answers a tie for CA with SR (pursues CA); had the real target been KR (abeam right, TR), that
    answer is a violation: the check at reveal holds the owner to his sealed target."""
    state = game(CA="1110", KR="1520")
    after, events = RULES.apply(state, AT, [*RULES.resolve_plan(state, AT, "kli", {**SEALED, "do": {"pursue": "CA"}})])
    track = [(AT, state, events)]
    assert RULES.pursuit_violations(track, "S1", "CA") == []
    (violation,) = RULES.pursuit_violations(track, "S1", "KR")
    assert (violation.made, violation.allowed) == ("SR", ("TR",))
