"""dow/1 played through the Ruleset protocol (issue 5, points 1-3): the first half of Spring 1901, realisation at
the start of the retreats, warnings and civil disorder, the director, gifts, owed orders, victory, draws, the
break catalog, and a recorded result that differs from the engine's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pbem.formats import yamlsafe
from pbem.formats.resources import games_dir
from pbem.rulesets.base import Action, Event
from pbem.rulesets.dow import DowRuleset, engine, invite
from pbem.rulesets.dow.board import Board
from pbem.rulesets.dow.relations import Relations
from pbem.rulesets.dow.state import POWERS, DowState

RULES = DowRuleset()
P = RULES.parse_time
START = RULES.initial_state({"map": "standard"}, POWERS)


def say(state: DowState, *messages: dict[str, Any]) -> DowState:
    for message in messages:
        state, refusal = RULES.recognise(state, message, message["by"])
        assert refusal is None, refusal
    return state


def refused(state: DowState, message: dict[str, Any], by: str | None = None) -> str:
    after, refusal = RULES.recognise(state, message, by or message["by"])
    assert refusal is not None and after is state
    return refusal.rule


def orders(state: DowState, **given: list[str]) -> list[Action]:
    assert state.phase is not None
    return [Action(state.phase, power, None, {"orders": o}) for power, o in given.items()]


def play(state: DowState, **given: list[str]) -> tuple[DowState, list[Event]]:
    assert state.phase is not None
    return RULES.apply(state, state.phase, orders(state, **given))


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def propose(by: str, to: str, state: str) -> dict[str, Any]:
    return {"by": by, "propose": {"to": to, "state": state}}


def accept(by: str, frm: str, state: str) -> dict[str, Any]:
    return {"by": by, "accept": {"from": frm, "state": state}}


def declare(by: str, to: str, state: str) -> dict[str, Any]:
    return {"by": by, "declare": {"to": to, "state": state}}


# --- the template, setup and time ---------------------------------------------------------------------------------

def test_the_template_starts_a_game() -> None:
    doc = yamlsafe.load((games_dir() / "dow-standard" / "game.yaml").read_bytes(), "game.yaml")
    assert doc.data["ruleset"] == "dow/1"
    players = [p["id"] for p in doc.data["players"]]
    assert players == list(POWERS)
    state = RULES.initial_state(doc.data["setup"], players)
    assert RULES.format_time(state.phase) == "S1901P" == RULES.format_time(RULES.first_step(doc.data["setup"]))
    assert state.engine == "diplomacy 1.1.2"
    assert invite.matches(doc.data["setup"]["invite_hash"], "IReadTheGameDescription")
    assert not invite.matches(doc.data["setup"]["invite_hash"], "IDidNotReadIt")


@pytest.mark.parametrize("setup, players, fragment", [
    ({"map": "ancmed"}, POWERS, "setup.map"),
    ({"map": "standard", "victory": 40}, POWERS, "setup.victory"),
    ({"map": "standard", "start": "F1901M"}, POWERS, "setup.start"),
    ({"map": "standard", "director": "gm"}, POWERS, "setup.director"),
    ({"map": "standard", "invite_hash": "IReadTheGameDescription"}, POWERS, "setup.invite_hash"),
    ({"map": "standard", "units": []}, POWERS, "unknown field units"),
    ({"map": "standard"}, POWERS[:6], "missing: turkey"),
])
def test_bad_setups(setup: dict[str, Any], players: tuple[str, ...], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        RULES.initial_state(setup, players)


def test_everything_starts_neutral_and_nothing_is_owed_in_the_first_half() -> None:
    assert set(s for _, _, s in START.relations.in_force.cells) == {"NEUTRAL"}
    # the first half is press only: nothing is sealed or owed; it ends when every power has said `ready`
    assert RULES.sealed(P("S1901P")) is False and RULES.owing_players(START, P("S1901P")) == []
    assert RULES.ready_owed(START, P("S1901P")) == list(START.powers)
    assert RULES.legal(START, Action(P("S1901P"), "france", None, {"orders": []})) == (
        "france: no orders are given in the first half of Spring 1901 (press only)")
    assert RULES.owner_of(START, "F STP/SC") == "russia" and RULES.owner_of(START, "A PAR") == "france"
    assert RULES.owner_of(START, "A MUN") == "germany" and RULES.owner_of(START, "A BUR") is None
    assert RULES.default_actions(START, P("S1901M"), "france") == []


# --- seed: "Any publicly recognized changes in the first half will become realized for the second half" -------

@pytest.fixture(scope="module")
def allied_in_first_half() -> tuple[DowState, list[Event]]:
    state = say(START, propose("france", "germany", "ALLIED"), accept("germany", "france", "ALLIED"),
                {"by": "france", "gift": {"to": "germany", "province": "BRE"}})
    return RULES.apply(state, P("S1901P"), [])


def test_first_half_changes_are_realised_for_the_second_half(allied_in_first_half: Any) -> None:
    state, events = allied_in_first_half
    assert RULES.format_time(state.phase) == "S1901M"
    assert state.relations.in_force.get("france", "germany") == "ALLIED"
    assert events[0] == Event("realised", "", None, {"phase": "S1901P",
                                                     "changes": [["france", "germany", "NEUTRAL", "ALLIED"]]})


def test_allies_may_publicly_gift_a_province(allied_in_first_half: Any) -> None:
    """Seed 001, State 5: "You may also (publicly) gift territories to your allies"; realised with the states."""
    state, events = allied_in_first_half
    assert ("gift", "france") in [(e.kind, e.by) for e in events]
    assert state.board.colour_of("BRE") == "germany" and state.board.centre_owner("BRE") == "germany"
    assert Event("centres", "germany", None, {"phase": "S1901P", "centre": "BRE", "from": "france",
                                              "to": "germany"}) in events
    assert state.gifts == ()


@pytest.mark.parametrize("message, rule", [
    ({"by": "france", "gift": {"to": "italy", "province": "MAR"}}, "press.gift-not-allied"),
    ({"by": "france", "gift": {"to": "germany", "province": "MUN"}}, "press.gift-not-yours"),
    ({"by": "france", "gift": {"to": "germany", "province": "XYZ"}}, "press.unknown-province"),
    ({"by": "france", "gift": {"to": "france", "province": "MAR"}}, "press.self"),
])
def test_bad_gifts(allied_in_first_half: Any, message: dict[str, Any], rule: str) -> None:
    assert refused(allied_in_first_half[0], message) == rule


# --- seed: changes "only occur at the beginning of Spring Retreats and Fall Retreats" ------------------------------

@pytest.fixture(scope="module")
def war_in_spring() -> dict[str, Any]:
    state = RULES.apply(START, P("S1901P"), [])[0]
    at_war = say(state, declare("germany", "france", "WAR"))
    legal_before = RULES.reasons(at_war, orders(at_war, germany=["A MUN - BUR"])[0])
    forbidden_before = RULES.reasons(at_war, orders(at_war, france=["A MAR S A MUN - BUR"])[0])
    after, events = play(at_war, germany=["A MUN - BUR"], france=["A PAR - PIC"])
    return {"declared": at_war, "after": after, "events": events, "legal": legal_before,
            "forbidden": forbidden_before}


def test_a_recognised_change_waits_for_the_retreats(war_in_spring: dict[str, Any]) -> None:
    declared = war_in_spring["declared"]
    assert declared.relations.recognised.get("france", "germany") == "WAR"
    assert declared.relations.in_force.get("france", "germany") == "NEUTRAL"
    assert war_in_spring["legal"] is None  # BUR is uncoloured: a bounce there is always allowed
    assert "Burgundy" not in str(war_in_spring["forbidden"])  # supporting Germany needs FRIENDLY: refused
    assert "France and Germany are NEUTRAL" in str(war_in_spring["forbidden"])
    after = war_in_spring["after"]
    assert RULES.format_time(after.phase) == "S1901R"
    assert after.relations.in_force.get("france", "germany") == "WAR"
    assert kinds(war_in_spring["events"])[-1] == "realised"


def test_nothing_to_retreat_owes_nothing(war_in_spring: dict[str, Any]) -> None:
    after = war_in_spring["after"]
    assert RULES.owing_players(after, after.phase) == []
    fall, events = RULES.apply(after, after.phase, [])
    assert RULES.format_time(fall.phase) == "F1901M" and kinds(events) == ["adjudicated"]
    assert fall.board.colour_of("BUR") == "germany"
    assert RULES.reasons(fall, orders(fall, france=["A PIC - BUR"])[0]) is None  # at WAR: allowed
    assert RULES.reasons(fall, orders(fall, italy=["A VEN - TRI"])[0]) == (
        "italy may not move into Trieste: Austria's territory, and Italy and Austria are NEUTRAL (moves into a "
        "power's territory need WAR)")


# --- seed: "a one time warning for an honest mistake, and then sent into CD for the second offense" ----------------

@pytest.fixture(scope="module")
def offences() -> dict[str, Any]:
    spring = RULES.apply(START, P("S1901P"), [])[0]
    warned, first = play(spring, italy=["A VEN - TRI", "A ROM - APU"], austria=["A VIE - GAL"])
    retreats = RULES.apply(warned, warned.phase, [])[0]
    disorder, second = play(retreats, italy=["A VEN - TRI"])
    return {"warned": warned, "first": first, "disorder": disorder, "second": second}


def test_an_illegal_order_is_void_with_a_public_warning(offences: dict[str, Any]) -> None:
    warned, events = offences["warned"], offences["first"]
    warning = next(e for e in events if e.kind == "warning")
    assert warning == Event("warning", "italy", None, {
        "phase": "S1901M", "order": "A VEN - TRI", "offences": 1,
        "reason": "italy may not move into Trieste: Austria's territory, and Italy and Austria are NEUTRAL (moves "
                  "into a power's territory need WAR)"})
    assert set(warned.board.units_of("italy")) == {"A VEN", "A APU", "F NAP"}  # VEN held, the legal order moved
    assert warned.offences_of("italy") == 1 and not warned.in_disorder("italy")
    assert [e.by for e in events if e.kind == "missed"] == ["england", "france", "germany", "russia", "turkey"]


def test_the_second_offence_is_civil_disorder(offences: dict[str, Any]) -> None:
    disorder, events = offences["disorder"], offences["second"]
    assert Event("civil_disorder", "italy", None, {"phase": "F1901M", "offences": 2}) in events
    assert disorder.in_disorder("italy")
    assert "italy" not in RULES.owing_players(disorder, disorder.phase)
    winter = RULES.apply(disorder, disorder.phase, [])[0]
    spring = RULES.apply(winter, winter.phase, [])[0]
    # Austria gave orders in both movement phases; France gave none (civil disorder after two missed: below)
    assert "italy" not in RULES.owing_players(spring, spring.phase) and "austria" in RULES.owing_players(
        spring, spring.phase)
    action = orders(spring, italy=["A VEN - PIE"])[0]
    assert RULES.legal(spring, action) == "italy is in civil disorder (second offence) and gives no more orders"
    after, events = RULES.apply(spring, spring.phase, [action])
    assert [e.kind for e in events if e.by == "italy"] == ["void"]
    assert "A VEN" in after.board.units_of("italy")
    assert refused(spring, propose("italy", "austria", "FRIENDLY")) == "press.civil-disorder"
    assert RULES.recognise(spring, {"by": "italy", "say": "I protest"}, "italy")[1] is None


def test_an_order_the_engine_refuses_is_void_without_offence() -> None:
    spring = RULES.apply(START, P("S1901P"), [])[0]
    action = orders(spring, france=["A PAR - MOS", "A MAR - SPA"])[0]
    assert RULES.reasons(spring, action) == (
        "france: 'A PAR - MOS' is not a valid order at S1901M: convoying unit must reach coast")
    assert [v[2] for v in RULES.verdicts(spring, action)] == ["invalid", "ok"]
    after, events = RULES.apply(spring, spring.phase, [action])
    assert [e.kind for e in events if e.by == "france"] == ["void"]
    assert after.offences_of("france") == 0 and "A SPA" in after.board.units_of("france")


# --- the director, bounded (seed 001: "a one time warning for an honest mistake, and then sent into CD for the
# second offense"): a warning cites a breach the game recorded, once; never a message; never his own power; none is
# lifted -----------------------------------------------------------------------------------------------------------

def voided(director: str = "gm") -> DowState:
    """S1901M played with France's two impossible orders (void, no offence of their own), Austria's forbidden
    F TRI - VEN (void and warned automatically) and Italy's impossible A ROM - MOS; the director `director`."""
    players = (*POWERS, "gm") if director == "gm" else POWERS
    spring = RULES.apply(RULES.initial_state({"map": "standard", "director": director}, players), P("S1901P"),
                         [])[0]
    after, _ = play(spring, france=["A PAR - MOS", "A MAR - BER"], austria=["F TRI - VEN"], italy=["A ROM - MOS"])
    return after


def test_the_director_warns_for_recorded_offences_and_the_second_is_civil_disorder() -> None:
    after = say(voided(), {"by": "france", "say": "I will take Munich whatever the states say"})
    warn = {"by": "gm", "warn": "france", "reason": "an impossible order",
            "offence": {"phase": "S1901M", "order": "A PAR - MOS"}}
    once = say(after, warn)
    assert once.offences_of("france") == 1 and not once.in_disorder("france") and once.entering == ()
    twice = say(once, {**warn, "offence": {"phase": "S1901M", "order": "A MAR - BER"}})
    # the second offence: civil disorder from the next phase, as for forbidden orders
    assert twice.entering == ("france",) and not twice.in_disorder("france")
    assert refused(START, warn) == "press.unknown-power"  # no seat gm in that game
    assert refused(after, {**warn, "by": "germany"}) == "press.not-director"
    assert refused(after, propose("gm", "france", "ALLIED")) == "press.unknown-power"


@pytest.mark.parametrize("offence", [
    {"press": 1},                                  # a message is no offence (seen: a greeting cited)
    {"phase": "S1901M", "order": "A MAR - SPA"},   # made up: France never gave it
    {"phase": "S1901M", "order": "A PAR - BUR"},   # made up: not France's order
    {"phase": "F1901M", "order": "A PAR - MOS"},   # the right order at a phase it was not given in
    {"phase": "S1901M"},                           # malformed
    None,                                          # no offence cited
])
def test_a_warning_citing_no_recorded_offence_is_refused(offence: Any) -> None:
    after = say(voided(), {"by": "france", "say": "hello"})
    warn = {"by": "gm", "warn": "france", "reason": "r", **({"offence": offence} if offence is not None else {})}
    assert refused(after, warn) == "press.warn-no-offence"


def test_one_warning_per_offence_none_for_his_own_power_and_none_lifted() -> None:
    after = voided("italy")  # Italy directs and plays
    cited = {"by": "italy", "warn": "france", "reason": "r", "offence": {"phase": "S1901M", "order": "A PAR - MOS"}}
    once = say(after, cited)
    assert refused(once, cited) == "press.warn-twice"
    assert refused(after, {**cited, "warn": "austria", "offence": {"phase": "S1901M", "order": "F TRI - VEN"}}) == (
        "press.warn-twice")  # a forbidden order was its own warning
    assert refused(after, {**cited, "warn": "italy", "offence": {"phase": "S1901M", "order": "A ROM - MOS"}}) == (
        "press.self-warn")
    assert refused(once, {"by": "italy", "lift": "france"}) == "press.no-lift"
    assert refused(once, {"by": "italy", "lift": "italy"}) == "press.no-lift"
    assert refused(once, {"by": "france", "lift": "france"}) == "press.not-director"


def test_civil_disorder_starts_after_the_phase_for_both_paths() -> None:
    spring = voided("italy")  # now at S1901R; France's two void orders of S1901M are on record
    spring = say(spring,
                 {"by": "italy", "warn": "france", "reason": "r1", "offence": {"phase": "S1901M", "order": "A PAR - MOS"}},
                 {"by": "italy", "warn": "france", "reason": "r2", "offence": {"phase": "S1901M", "order": "A MAR - BER"}})
    # by the director: the phase open when the second warning came still resolves with France; disorder after it
    after, events = RULES.apply(spring, spring.phase, [])
    assert Event("civil_disorder", "france", None, {"phase": RULES.format_time(spring.phase), "offences": 2}) \
        in events
    assert after.in_disorder("france") and "france" not in RULES.owing_players(after, after.phase)
    # by orders: the same point (see the `offences` fixture: Italy's legal orders of the second offence stand)


@pytest.mark.parametrize("message, by, rule", [
    ({"by": "france", "say": "hello"}, "germany", "press.not-author"),
    ({"by": "france", "say": "hello", "at": "S1901M"}, "france", "press.wrong-phase"),
    ({"by": "france", "say": "hello", "propose": {"to": "germany", "state": "ALLIED"}}, "france", "press.malformed"),
    ({"by": "france"}, "france", "press.malformed"),
    ({"by": "france", "propose": {"to": "germany"}}, "france", "press.malformed"),
    ({"by": "france", "draw": "yes"}, "france", "press.malformed"),
    ({"by": "mallory", "say": "hello"}, "mallory", "press.unknown-power"),
])
def test_malformed_press(message: dict[str, Any], by: str, rule: str) -> None:
    assert refused(START, message, by) == rule


def test_dated_press_in_its_phase() -> None:
    assert RULES.recognise(START, {"by": "france", "say": "hello", "at": "S1901P"}, "france")[1] is None


# --- owed orders, victory and draws ---------------------------------------------------------------------------------

def fall_with_seventeen() -> DowState:
    """France with 17 centres, its army in Burgundy next to an empty German Munich, at war with Germany."""
    info = engine.standard_map()
    french = ["BRE", "MAR", "PAR", "BEL", "HOL", "SPA", "POR", "TUN", "NAP", "ROM", "VEN", "KIE", "BER", "DEN",
              "SWE", "NWY", "LON"]
    centres = {"france": french, "germany": ["MUN"], "austria": ["BUD", "TRI", "VIE"], "england": ["EDI", "LVP"],
               "russia": ["MOS", "SEV", "STP", "WAR"], "turkey": ["ANK", "CON", "SMY"]}
    units = {"france": ["A BUR", "F NTH"], "germany": ["A SIL"], "russia": ["A MOS"], "turkey": ["A CON"],
             "austria": ["A VIE"], "england": ["F EDI"]}
    influence = {p: [u[2:5] for u in us] for p, us in units.items()}
    influence["germany"].append("MUN")
    board = Board.of(info.powers, units, centres, influence)
    relations = Relations.start(POWERS)
    war = relations.in_force.with_states({("france", "germany"): "WAR"})
    return replace(START, phase=P("F1901M"), board=board, relations=Relations(war, war))


def test_owing_players_by_phase() -> None:
    state = fall_with_seventeen()
    assert RULES.owing_players(state, state.phase) == ["austria", "england", "france", "germany", "russia", "turkey"]
    winter = replace(state, phase=P("W1901A"))
    assert RULES.owing_players(winter, winter.phase) == ["austria", "england", "france", "russia", "turkey"]


def test_victory_at_eighteen_centres_when_winter_counts_them() -> None:
    state = fall_with_seventeen()
    moved, events = play(state, france=["A BUR - MUN"])
    assert "victory" not in kinds(events) and not RULES.is_over(moved)
    counted, events = RULES.apply(moved, moved.phase, [])
    assert Event("victory", "france", None, {"phase": "F1901R", "centres": 18}) in events
    assert Event("centres", "france", None, {"phase": "F1901R", "centre": "MUN", "from": "germany",
                                             "to": "france"}) in events
    assert counted.outcome == ("victory", ("france",)) and RULES.is_over(counted)
    assert RULES.owing_players(counted, counted.phase) == []
    assert refused(counted, propose("england", "russia", "ALLIED")) == "press.game-over"


def test_a_draw_needs_every_survivor_not_in_disorder() -> None:
    state = START
    for power in POWERS[:-1]:
        state = say(state, {"by": power, "draw": True})
    assert state.outcome is None
    withdrawn = say(state, {"by": "austria", "draw": False}, {"by": "turkey", "draw": True})
    assert withdrawn.outcome is None and withdrawn.draw_votes == POWERS[1:]
    drawn = say(state, {"by": "turkey", "draw": True})
    assert drawn.outcome == ("draw", POWERS) and RULES.is_over(drawn)
    turkey_out = state.with_offences("turkey", 2).begin_disorder()[0]
    assert say(turkey_out, {"by": "austria", "draw": True}).outcome == ("draw", POWERS)


# --- break conditions ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("condition, error", [
    ({"phase": {}}, None), ({"attacked": {}}, None), ({"state": {}}, None), ({"state": {}, "by": "any"}, None),
    ({"at": "F1902M"}, None),
    ({"at": "S1902P"}, "only Spring 1901 has a first half"),
    ({"at": "F1902M", "by": "any"}, "an at condition takes no `by`"),
    ({"range": 8}, "has no break condition among at, phase, attacked, state"),
    ({"phase": {}, "state": {}}, "more than one"),
    ({"phase": {"kind": "M"}}, "phase takes an empty mapping"),
    ({"phase": {}, "by": "me"}, "by must be 'any'"),
    ({"phase": {}, "unit": "A PAR"}, "unit is not part of a phase condition"),
])
def test_condition_catalog(condition: dict[str, Any], error: str | None) -> None:
    found = RULES.condition_error(condition)
    assert (found is None) if error is None else (found is not None and error in found), found


def test_conditions_met() -> None:
    dislodged = Event("dislodged", "austria", "A VEN", {"phase": "S1902M", "owner": "italy", "unit": "A VEN"})
    adjudicated = Event("adjudicated", "", None, {"phase": "S1902M", "results": {}})
    realised = Event("realised", "", None, {"phase": "S1902M", "changes": [["austria", "italy", "NEUTRAL", "WAR"]]})
    events = [adjudicated, dislodged, realised]
    met = lambda c, p: RULES.condition_met(c, p, START, START, events)  # noqa: E731
    assert met({"attacked": {}}, "italy") == "attacked: A VEN dislodged by austria in S1902M"
    assert met({"attacked": {}}, "france") is None
    assert met({"phase": {}}, "france") == "S1902M adjudicated"
    assert met({"state": {}}, "turkey") == "relationships realised: austria-italy NEUTRAL -> WAR"
    assert RULES.condition_met({"phase": {}}, "france", START, START, []) is None


# --- bad input: recorded results that differ from the engine's ---------------------------------------------------

def test_recorded_results_that_differ_from_the_engines() -> None:
    spring = RULES.apply(START, P("S1901P"), [])[0]
    after, _ = play(spring, france=["A PAR - BUR"], germany=["A MUN - RUH"])
    recorded = RULES.position(after)
    assert recorded["units"]["france"] == ["A BUR", "A MAR", "F BRE"]
    assert RULES.position_mismatch(after, recorded) is None
    recorded["units"]["france"] = ["A MAR", "A PAR", "F BRE"]
    recorded["influence"]["germany"].remove("RUH")
    mismatch = RULES.position_mismatch(after, recorded)
    assert mismatch is not None and mismatch.rule == "result.mismatch"
    assert "units of france: recorded ['A MAR', 'A PAR', 'F BRE'], engine ['A BUR', 'A MAR', 'F BRE']" in mismatch
    assert "influence of germany" in mismatch
    malformed = RULES.position_mismatch(after, {"units": {}})
    assert malformed is not None and malformed.rule == "result.mismatch"


def test_a_game_adjudicated_by_another_engine_version_is_refused() -> None:
    with pytest.raises(engine.EngineError, match="diplomacy 1.0.0"):
        RULES.apply(replace(START, engine="diplomacy 1.0.0"), P("S1901P"), [])


def test_relations_view() -> None:
    state = say(START, declare("france", "germany", "HOSTILE"), propose("italy", "austria", "FRIENDLY"))
    data = RULES.relations_data(state)
    assert data["pending"] == [["france", "germany", "NEUTRAL", "HOSTILE"]]
    assert data["recognised"]["germany"]["france"] == "HOSTILE"
    assert data["proposals"] == [{"by": "italy", "to": "austria", "state": "FRIENDLY"}]
    assert RULES.relations(state) is state.relations


def test_the_time_of_the_acceptance_is_the_time_the_change_becomes_known() -> None:
    """Seed 001: a proposal in the first half accepted in the second half is recognised at the acceptance, and
    realised only at the start of the Spring retreats."""
    state = say(START, propose("england", "france", "FRIENDLY"))
    second_half = RULES.apply(state, P("S1901P"), [])[0]
    assert second_half.relations.in_force.get("england", "france") == "NEUTRAL"
    accepted = say(second_half, accept("france", "england", "FRIENDLY"))
    assert accepted.relations.recognised.get("england", "france") == "FRIENDLY"
    assert "NEUTRAL" in str(RULES.reasons(accepted, orders(accepted, france=["F BRE S F LON - ENG"])[0]))
    retreats, events = play(accepted)
    assert retreats.relations.in_force.get("england", "france") == "FRIENDLY"
    assert events[-1].kind == "realised"


def test_orders_relying_on_a_raise_proposed_by_one_side_only_are_warned() -> None:
    """Seed 001: a raise needs both parties; until England accepts, France and England stay NEUTRAL, so France
    may not support England's fleet."""
    state = say(START, propose("france", "england", "FRIENDLY"))
    spring = RULES.apply(state, P("S1901P"), [])[0]
    assert spring.relations.in_force.get("england", "france") == "NEUTRAL"
    after, events = play(spring, france=["F BRE S F LON - ENG"], england=["F LON - ENG"])
    (warning,) = [e for e in events if e.kind == "warning"]
    assert warning.by == "france" and "France and England are NEUTRAL" in warning.data["reason"]
    assert after.offences_of("france") == 1


def test_the_engines_hundred_year_limit_ends_the_game_as_a_draw() -> None:
    last = replace(START, phase=P("F2000R"))
    over, events = RULES.apply(last, last.phase, [])
    assert over.outcome == ("draw", POWERS) and RULES.is_over(over)
    assert Event("draw", "", None, {"phase": "F2000R", "powers": list(POWERS)}) in events
    assert RULES.next_step({}, P("W2000A")) is None


# --- table options: civil disorder after missed movement phases; gunboat games -------------------------------------

def test_missed_movement_phases_in_a_row_put_a_power_into_civil_disorder_and_disbands_never_count() -> None:
    """setup.civil_disorder_after (default 2): Turkey misses S1901M and F1901M (no orders: an nmr settled them, or
    a set withheld), and from W1901A on it is in civil disorder; a missed retreat or adjustment never counts, and
    orders given in a movement phase start the count again."""
    state = RULES.apply(RULES.initial_state({"map": "standard"}, POWERS), P("S1901P"), [])[0]
    after, events = play(state)  # S1901M: nobody gave orders
    assert dict(after.missed)["turkey"] == 1 and not after.entering
    assert ("missed", "turkey") in [(e.kind, e.by) for e in events]
    while after.phase != P("F1901M"):  # S1901R: nothing owed, not counted
        after = play(after)[0]
    once_more, events = play(after, austria=["A VIE H"])
    assert Event("civil_disorder", "turkey", None, {"phase": "F1901M", "offences": 0}) in events
    assert once_more.in_disorder("turkey") and "turkey" not in RULES.owing_players(once_more, once_more.phase)
    assert "austria" not in once_more.disorder and "austria" not in dict(once_more.missed)  # gave orders: reset
    patient = RULES.initial_state({"map": "standard", "civil_disorder_after": 3}, POWERS)
    patient = RULES.apply(patient, P("S1901P"), [])[0]
    for _ in range(2):
        patient = play(patient)[0]
        while patient.phase is not None and patient.phase[2] != 1:
            patient = play(patient)[0]  # retreats and adjustments (forced disbands too) never count
    assert dict(patient.missed)["turkey"] == 2 and not patient.disorder and not patient.entering


@pytest.mark.parametrize("bad", [0, 21, "2", True])
def test_civil_disorder_after_is_a_number_of_phases(bad: Any) -> None:
    with pytest.raises(ValueError, match="civil_disorder_after"):
        RULES.initial_state({"map": "standard", "civil_disorder_after": bad}, POWERS)


def test_a_gunboat_game_has_no_press_and_no_relationship_rules() -> None:
    """setup.press: none: every message but `ready` and a draw vote is refused (press.gunboat); every pair is at
    WAR, so any order the engine accepts stands (plain Diplomacy)."""
    gunboat = RULES.initial_state({"map": "standard", "press": "none"}, POWERS)
    for message in ({"by": "france", "say": "hello"}, propose("france", "germany", "ALLIED"),
                    {"by": "france", "declare": {"to": "germany", "state": "HOSTILE"}}):
        assert refused(gunboat, message) == "press.gunboat"
    spring = say(gunboat, *({"by": p, "ready": True} for p in POWERS))
    spring = RULES.apply(spring, P("S1901P"), [])[0]
    after, events = play(spring, germany=["A MUN - BUR"], france=["A PAR S A MUN - BUR"])
    assert "warning" not in kinds(events) and "A BUR" in after.board.units_of("germany")
    with pytest.raises(ValueError, match="setup.press"):
        RULES.initial_state({"map": "standard", "press": "some"}, POWERS)


# --- the secret draw vote: sealed with the orders, opened with them ---------------------------------------------

def test_a_sealed_draw_vote_needs_every_surviving_power_in_one_phase_and_expires_with_it() -> None:
    """Each power may seal `draw: true` with its orders; the draw is agreed when every surviving power not in
    civil disorder voted so in the same phase; no vote is no; a vote lasts one phase."""
    spring = RULES.apply(RULES.initial_state({"map": "standard"}, POWERS), P("S1901P"), [])[0]

    def sealed(state: DowState, voters: tuple[str, ...]) -> list[Action]:
        return [Action(state.phase, p, None, {"orders": [], **({"draw": True} if p in voters else {})})
                for p in POWERS]

    six, events = RULES.apply(spring, spring.phase, sealed(spring, POWERS[:-1]))
    assert six.outcome is None and "draw" not in kinds(events)  # Turkey gave no vote: no is no
    # the six votes of S1901M do not stand in F1901M: Turkey's vote alone there is no draw
    fall = six
    while fall.phase != P("F1901M"):
        fall = RULES.apply(fall, fall.phase, [])[0]
    alone, _ = RULES.apply(fall, fall.phase, sealed(fall, ("turkey",)))
    assert alone.outcome is None
    agreed, events = RULES.apply(fall, fall.phase, sealed(fall, POWERS))
    assert agreed.outcome == ("draw", POWERS) and RULES.is_over(agreed)
    assert Event("draw", "", None, {"phase": "F1901M", "powers": list(POWERS), "vote": "sealed"}) in events
    # a vote with its orders is still an orders submission: legal, judged as the orders alone
    vote = Action(fall.phase, "france", None, {"orders": ["A PAR - BUR"], "draw": True})
    assert RULES.legal(fall, vote) is None and [v[2] for v in RULES.verdicts(fall, vote)] == ["ok"]
