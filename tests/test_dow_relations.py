"""The relationship states of seed 001 as a table: announcements in recognition order -> the matrix in force after
the next realisation, each scenario named after the seed sentence it proves; then the bad press, each refused
with its rule id and changing nothing (issue 5, point 2 and "Bad input")."""

from __future__ import annotations

from typing import Any

import pytest

from pbem.rulesets.dow import DowRuleset, relations
from pbem.rulesets.dow.relations import Matrix
from pbem.rulesets.dow.state import POWERS, DowState

RULES = DowRuleset()
START = RULES.initial_state({"map": "standard"}, POWERS)


def message(line: str) -> dict[str, Any]:
    """'france propose germany ALLIED' -> {by: france, propose: {to: germany, state: ALLIED}}."""
    by, kind, *rest = line.split()
    if kind in ("propose", "declare"):
        return {"by": by, kind: {"to": rest[0], "state": rest[1]}}
    if kind == "accept":
        return {"by": by, "accept": {"from": rest[0], "state": rest[1]}}
    if kind == "reaffirm":
        return {"by": by, "reaffirm": dict(zip(rest[::2], rest[1::2]))}
    raise AssertionError(line)


def ally(a: str, b: str, state: str = "ALLIED") -> list[str]:
    return [f"{a} propose {b} {state}", f"{b} accept {a} {state}"]


def recognise_all(lines: list[str], state: DowState = START) -> DowState:
    for line in lines:
        state, refusal = RULES.recognise(state, message(line), line.split()[0])
        assert refusal is None, f"{line}: {refusal}"
    return state


def non_neutral(matrix: Matrix) -> dict[str, str]:
    return {f"{a}-{b}": s for a, b, s in matrix.cells if s != relations.NEUTRAL}


SCENARIOS = [
    ("State 3: NEUTRAL is the relationship with all countries at the start of the game", [], {}),
    ("to change status towards a higher number both parties must agree",
     ally("france", "germany"), {"france-germany": "ALLIED"}),
    ("one party publicly announces their intention: a raise announced by one side only changes nothing",
     ["france propose germany FRIENDLY"], {}),
    ("raising may go straight from NEUTRAL to any higher state",
     ally("austria", "italy", "FRIENDLY"), {"austria-italy": "FRIENDLY"}),
    ("to change it to a lower status only one party need make it known",
     ["france declare germany HOSTILE"], {"france-germany": "HOSTILE"}),
    ("State 1: your allies and your at-war countries will be forced into hostile relations",
     [*ally("france", "germany"), "germany declare england WAR"],
     {"france-germany": "ALLIED", "england-germany": "WAR", "england-france": "HOSTILE"}),
    ("State 1: the restriction binds the allies of both sides (the declared-upon is at war too)",
     [*ally("russia", "england"), "germany declare england WAR"],
     {"england-russia": "ALLIED", "england-germany": "WAR", "germany-russia": "HOSTILE"}),
    ("State 1: forced into hostile relations at most: WAR stays WAR",
     [*ally("france", "germany"), "france declare england WAR", "germany declare england WAR"],
     {"england-france": "WAR", "france-germany": "ALLIED", "england-germany": "WAR"}),
    ("State 1: forced into hostile relations: FRIENDLY goes down to HOSTILE",
     [*ally("france", "germany"), *ally("france", "england", "FRIENDLY"), "germany declare england WAR"],
     {"france-germany": "ALLIED", "england-france": "HOSTILE", "england-germany": "WAR"}),
    ("State 1: forced into hostile relations: HOSTILE stays HOSTILE",
     [*ally("france", "germany"), "france declare england HOSTILE", "germany declare england WAR"],
     {"france-germany": "ALLIED", "england-france": "HOSTILE", "england-germany": "WAR"}),
    ("State 1 / State *: unless your ally is also allied with your at-war country; then they enter limbo",
     [*ally("italy", "france"), *ally("italy", "germany"), "france declare germany WAR"],
     {"france-italy": "LIMBO", "germany-italy": "LIMBO", "france-germany": "WAR"}),
    ("State *: in limbo you are still treated as allies with regard to triggering hostile relations",
     [*ally("italy", "france"), *ally("italy", "germany"), "france declare germany WAR",
      "france declare austria WAR"],
     {"france-italy": "LIMBO", "germany-italy": "LIMBO", "france-germany": "WAR", "austria-france": "WAR",
      "austria-italy": "HOSTILE"}),
    ("State 1: even if you cease war, they remain in their current state with each other",
     [*ally("france", "germany"), "germany declare england WAR", "england propose germany HOSTILE",
      "germany accept england HOSTILE"],
     {"france-germany": "ALLIED", "england-germany": "HOSTILE", "england-france": "HOSTILE"}),
    ("State 1: even if you cease alliance, they remain until they clear it up between themselves",
     [*ally("france", "germany"), "germany declare england WAR", "france declare germany FRIENDLY",
      *ally("france", "england", "NEUTRAL")],
     {"france-germany": "FRIENDLY", "england-germany": "WAR"}),
    ("State *: you may exit limbo by publicly reaffirming allies / hostilities without new conflicts",
     [*ally("italy", "france"), *ally("italy", "germany"), "france declare germany WAR",
      "italy reaffirm france ALLIED germany HOSTILE"],
     {"france-italy": "ALLIED", "germany-italy": "HOSTILE", "france-germany": "WAR"}),
    ("State *: limbo may be left one pair at a time while no conflict arises",
     [*ally("italy", "france"), *ally("italy", "germany"), "france declare germany WAR",
      "italy reaffirm germany HOSTILE", "italy reaffirm france ALLIED"],
     {"france-italy": "ALLIED", "germany-italy": "HOSTILE", "france-germany": "WAR"}),
    ("State *: once you announce allies / hostilities you are free to change your relationships further",
     [*ally("italy", "france"), *ally("italy", "germany"), "france declare germany WAR",
      "italy reaffirm france ALLIED germany HOSTILE", "italy declare germany WAR"],
     {"france-italy": "ALLIED", "germany-italy": "WAR", "france-germany": "WAR"}),
    ("State *: the warring powers themselves may reaffirm their pair with the limbo power",
     [*ally("italy", "france"), *ally("italy", "germany"), "france declare germany WAR",
      "germany reaffirm italy HOSTILE"],
     {"france-italy": "LIMBO", "germany-italy": "HOSTILE", "france-germany": "WAR"}),
    ("Further definitions: players recognise more changes as if in the publicly recognised states",
     [*ally("france", "germany", "FRIENDLY"), *ally("france", "germany", "ALLIED")], {"france-germany": "ALLIED"}),
    ("a later proposal replaces its author's earlier one to the same power",
     ["france propose germany ALLIED", "france propose germany FRIENDLY", "germany accept france FRIENDLY"],
     {"france-germany": "FRIENDLY"}),
    ("a pair already at war may make peace by proposal and acceptance",
     ["france declare germany WAR", "germany propose france NEUTRAL", "france accept germany NEUTRAL"], {}),
]


@pytest.mark.parametrize("name, lines, expected", SCENARIOS, ids=[s[0][:60] for s in SCENARIOS])
def test_scenario(name: str, lines: list[str], expected: dict[str, str]) -> None:
    state = recognise_all(lines)
    assert non_neutral(state.relations.recognised) == expected
    assert non_neutral(state.relations.in_force) == {}, "nothing is in force before the realisation"
    realised, changes = relations.realise(state.relations)
    assert non_neutral(realised.in_force) == expected
    assert realised.pending() == ()
    assert {f"{a}-{b}" for a, b, _, _ in changes} == set(expected)
    assert relations.conflicts(realised.in_force) == []


def test_a_standing_proposal_is_kept_and_shown() -> None:
    state = recognise_all(["france propose germany FRIENDLY"])
    assert state.relations.proposals == (("france", "germany", "FRIENDLY"),)
    data = RULES.relations_data(state)
    assert data["proposals"] == [{"by": "france", "to": "germany", "state": "FRIENDLY"}]
    assert data["in_force"]["france"]["germany"] == "NEUTRAL"


def test_pending_changes_are_listed() -> None:
    state = recognise_all(["france declare germany HOSTILE"])
    assert state.relations.pending() == (("france", "germany", "NEUTRAL", "HOSTILE"),)


# --- bad press: each refused with its rule id, the state unchanged ------------------------------------------------

LIMBO_SETUP = [*ally("italy", "france"), *ally("italy", "germany"), "france declare germany WAR"]
WAR_SETUP = [*ally("france", "germany"), "germany declare england WAR"]

BAD = [
    ("an acceptance without a matching proposal", [], "germany accept france ALLIED", "press.no-proposal"),
    ("an acceptance of another state than proposed", ["france propose germany ALLIED"],
     "germany accept france FRIENDLY", "press.no-proposal"),
    ("the proposer cannot accept his own proposal", ["france propose germany ALLIED"],
     "france accept germany ALLIED", "press.no-proposal"),
    ("a proposal lapses when the pair changes", ["france propose germany ALLIED", "germany declare france HOSTILE"],
     "germany accept france ALLIED", "press.no-proposal"),
    ("raising C-B above HOSTILE while A is allied to C and at war with B", WAR_SETUP,
     "england propose france NEUTRAL", "press.forced-state"),
    ("accepting a raise of C-B above HOSTILE while A is allied to C and at war with B",
     ["england propose france FRIENDLY", *WAR_SETUP], "france accept england FRIENDLY", "press.no-proposal"),
    ("proposing an alliance with a power at war while friendly with its enemy",
     ["germany declare england WAR", *ally("france", "england", "FRIENDLY")],
     "france propose germany ALLIED", "press.forced-state"),
    ("accepting an alliance with a power at war while friendly with its enemy",
     ["france propose germany ALLIED", "germany declare england WAR", *ally("france", "england", "FRIENDLY")],
     "germany accept france ALLIED", "press.forced-state"),
    ("reaffirming alliance with both warring powers", LIMBO_SETUP,
     "italy reaffirm france ALLIED germany ALLIED", "press.forced-state"),
    ("reaffirming alliance with one while still in limbo with its enemy", LIMBO_SETUP,
     "italy reaffirm france ALLIED", "press.forced-state"),
    ("reaffirming a pair that is not in limbo", LIMBO_SETUP, "italy reaffirm austria HOSTILE",
     "press.not-in-limbo"),
    ("a declaration from limbo", LIMBO_SETUP, "italy declare germany WAR", "press.in-limbo"),
    ("a proposal from limbo", LIMBO_SETUP, "france propose italy ALLIED", "press.in-limbo"),
    ("a raise announced by one side only", [], "france declare germany FRIENDLY", "press.one-sided-raise"),
    ("a raise announced by one side only, from war", ["france declare germany WAR"], "germany declare france NEUTRAL",
     "press.one-sided-raise"),
    ("a proposal of a lower state", ["france declare germany HOSTILE"], "germany propose france WAR",
     "press.not-a-raise"),
    ("a proposal of the current state", [], "france propose germany NEUTRAL", "press.no-change"),
    ("a declaration of the current state", [], "france declare germany NEUTRAL", "press.no-change"),
    ("proposing to oneself", [], "france propose france ALLIED", "press.self"),
    ("proposing to someone who is no power", [], "france propose spain ALLIED", "press.unknown-power"),
]


@pytest.mark.parametrize("name, before, line, rule", BAD, ids=[b[0][:60] for b in BAD])
def test_bad_press(name: str, before: list[str], line: str, rule: str) -> None:
    state = recognise_all(before)
    after, refusal = RULES.recognise(state, message(line), line.split()[0])
    assert refusal is not None and refusal.rule == rule, refusal
    assert after is state
    assert line.split()[0] in refusal


def test_forced_state_message_names_the_cause() -> None:
    state = recognise_all(WAR_SETUP)
    _, refusal = RULES.recognise(state, message("england propose france NEUTRAL"), "england")
    assert refusal == ("england cannot propose NEUTRAL with france: while germany is allied to france and at war "
                       "with england, france and england may only be WAR, HOSTILE or LIMBO (they would be NEUTRAL; "
                       "seed 001, WAR)")


@pytest.mark.parametrize("text", ["LIMBO"])
def test_limbo_is_never_chosen(text: str) -> None:
    for line in (f"france propose germany {text}", f"france declare germany {text}"):
        _, refusal = RULES.recognise(START, message(line), "france")
        assert refusal is not None and refusal.rule == "press.limbo-not-chosen"


# --- property: whatever is announced, the seed's restriction always holds ------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_POWER = st.sampled_from(POWERS)
_STATE = st.sampled_from(relations.STATES)
_MESSAGE = st.one_of(
    st.tuples(st.just("propose"), _POWER, _POWER, _STATE),
    st.tuples(st.just("accept"), _POWER, _POWER, _STATE),
    st.tuples(st.just("declare"), _POWER, _POWER, _STATE),
    st.tuples(st.just("reaffirm"), _POWER, _POWER, st.sampled_from(relations.REAFFIRMABLE)),
)
_APPLY = {
    "propose": relations.propose,
    "accept": relations.accept,
    "declare": relations.declare,
    "reaffirm": lambda rel, by, other, state: relations.reaffirm(rel, by, {other: state}),
}


@settings(max_examples=150, deadline=None)
@given(st.lists(_MESSAGE, max_size=40))
def test_the_restriction_holds_after_any_announcements(messages: list[tuple[str, str, str, str]]) -> None:
    """Seed 001: "For as long as you remain allied to one country and at-war with another, those two may only ever
    be in a states 1, 2 or *" — and LIMBO is entered only by a war between two allies."""
    rel = relations.Relations.start(POWERS)
    for kind, by, other, state in messages:
        before = rel
        try:
            rel = _APPLY[kind](rel, by, other, state)
        except relations.PressRefused as refused:
            assert refused.rule.startswith("press.") and rel is before
            continue
        assert relations.conflicts(rel.recognised) == []
        entered = {(a, b) for a, b, s, t in before.recognised.changes_to(rel.recognised) if t == relations.LIMBO}
        if entered:
            assert kind == "declare" and state == relations.WAR
    assert relations.conflicts(relations.realise(rel)[0].in_force) == []
