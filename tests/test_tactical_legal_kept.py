"""`legal` keeps its last answers by the identity of the state and of the action's `do` (actions.py `_LEGAL`):
asked again it says what judging afresh says, and a changed state or another `do` is judged afresh."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.formats.records import evolve
from pbem.rulesets.base import Action
from pbem.rulesets.tactical import TacticalRuleset, actions

RULES = TacticalRuleset()
SETUP = {"map": {"columns": 20, "rows": 20}, "turns": 2,
         "units": [{"id": "CA", "owner": "fed", "hex": "1010", "facing": "A", "speed": 8, "turn_mode": 2},
                   {"id": "D7", "owner": "kli", "hex": "1015", "facing": "D", "speed": 8, "turn_mode": 2}]}
STATE = RULES.initial_state(SETUP, ["fed", "kli"])
DOS = [{"pass": True}, {"move": "F"}, {"move": "TL"}, {"speed": 4}, {"het": "C"}, {"fire": {"weapon": "ph1",
       "target": "D7"}}, {"clarify": 1}, {}, {"move": "F", "pass": True}]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["1.0.alloc", "1.1.move", "1.1.activity", "1.1.fire", "1.2.move", "1.32.final"]),
       st.sampled_from(["fed", "kli"]), st.sampled_from(["CA", "D7", "X", None]), st.integers(0, len(DOS) - 1),
       st.booleans())
def test_a_kept_answer_is_what_judging_afresh_says(when: str, by: str, unit: str | None, which: int,
                                                    moved: bool) -> None:
    state = evolve(STATE, units=(evolve(STATE.units[0], speed=0), STATE.units[1])) if moved else STATE
    action = Action(RULES.parse_time(when), by, unit, DOS[which], "entry")
    first, again = actions.legal(state, action), actions.legal(state, action)
    assert first == again == actions._judge(state, action, {})
    assert actions._LEGAL[(id(state), id(action.do), action.at, by, unit)][0] is state  # kept
    # the same words in another `do`, or the same `do` in another state: judged afresh
    assert actions.legal(state, Action(action.at, by, unit, dict(DOS[which]), "entry")) == first
    other = evolve(state, units=tuple(state.units))
    assert other is not state and actions.legal(other, action) == first


def test_the_kept_answers_stay_bounded() -> None:
    for i in range(actions._LEGAL_KEPT * 3):
        actions.legal(STATE, Action(RULES.parse_time("1.1.move"), "fed", "CA", {"move": "F", "n": i}, "entry"))
    assert len(actions._LEGAL) <= actions._LEGAL_KEPT
