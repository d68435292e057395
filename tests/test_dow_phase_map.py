"""The Diplomacy map shows the phase (docs/pictures.md, Diplomacy): data-driven vectors, each a known position and
orders adjudicated by the real `diplomacy` engine (rulesets/dow/resolve.py), drawn before and after, and the SVG
read back with xml.etree: each order's classes (`order move failed`), its power's colour, the dislodged units
beside their provinces with one `retreat-option` per option the engine gives, and text shown as text.

The games are gunboat (`press: none`: every pair at WAR), so the relationship table never voids an order here;
the void and forbidden verdicts are tested in tests/test_dow_map.py.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import pytest
from hypothesis import given, settings, strategies as st

from pbem.render import dow_orders, dow_phase, dow_svg
from pbem.rulesets.base import Action
from pbem.rulesets.dow import DowRuleset, phases, resolve
from pbem.rulesets.dow.board import Board
from pbem.rulesets.dow.state import POWERS, DowState
from pbem.text import markup

SVG = "{http://www.w3.org/2000/svg}"
RULES = DowRuleset()
GUNBOAT = RULES.initial_state({"map": "standard", "start": "S1901M", "press": "none"}, POWERS)
APART = 60.0  # the least RGB distance at which two colours are told apart at a glance


@dataclass(frozen=True)
class Vector:
    """A position (units per power), the orders, and what the map must show: per order the classes its group
    holds beyond `order KIND` ("failed" or nothing), per dislodged unit the provinces it may retreat to."""

    name: str
    units: Mapping[str, tuple[str, ...]]
    orders: Mapping[str, tuple[str, ...]]
    failed: frozenset[str]  # the orders drawn as failed; every other one is drawn as carried out
    dislodged: Mapping[str, frozenset[str]] = field(default_factory=dict)  # unit -> its retreat options
    phase: str = "S1901M"


VECTORS = [
    Vector("a standoff: both moves bounce",
           {"austria": ("A VIE",), "russia": ("A WAR",)},
           {"austria": ("A VIE - GAL",), "russia": ("A WAR - GAL",)},
           frozenset({"A VIE - GAL", "A WAR - GAL"})),
    Vector("a supported attack dislodges the holding unit",
           {"austria": ("A VIE", "A BOH"), "russia": ("A GAL",)},
           {"austria": ("A VIE - GAL", "A BOH S A VIE - GAL"), "russia": ("A GAL H",)},
           frozenset({"A GAL H"}), {"A GAL": frozenset({"BUD", "RUM", "SIL", "UKR", "WAR"})}),
    Vector("a cut support: the attack bounces, and so does the move that cut it",
           {"austria": ("A VIE", "A BOH"), "russia": ("A GAL",), "germany": ("A MUN",)},
           {"austria": ("A VIE - GAL", "A BOH S A VIE - GAL"), "russia": ("A GAL H",), "germany": ("A MUN - BOH",)},
           frozenset({"A VIE - GAL", "A BOH S A VIE - GAL", "A MUN - BOH"})),
    Vector("a convoy carries the army",
           {"england": ("A LON", "F NTH")},
           {"england": ("A LON - BEL", "F NTH C A LON - BEL")},
           frozenset()),
    Vector("a convoy disrupted: the fleet is dislodged, the army stays",
           {"england": ("A LON", "F NTH"), "germany": ("F HEL", "F DEN")},
           {"england": ("A LON - BEL", "F NTH C A LON - BEL"), "germany": ("F HEL - NTH", "F DEN S F HEL - NTH")},
           frozenset({"A LON - BEL", "F NTH C A LON - BEL"}),
           {"F NTH": frozenset({"BEL", "EDI", "ENG", "HOL", "NWG", "NWY", "SKA", "YOR"})}),
    Vector("a head-to-head battle: the stronger side dislodges the other",
           {"france": ("A BUR", "A RUH"), "germany": ("A MUN",)},
           {"france": ("A BUR - MUN", "A RUH S A BUR - MUN"), "germany": ("A MUN - BUR",)},
           frozenset({"A MUN - BUR"}), {"A MUN": frozenset({"BER", "BOH", "KIE", "SIL", "TYR"})}),
]


def position(units: Mapping[str, tuple[str, ...]], phase: str = "S1901M") -> DowState:
    board = Board.of(POWERS, units, dict(GUNBOAT.board.centres), dict(GUNBOAT.board.influence))
    return replace(GUNBOAT, board=board, phase=phases.parse_time(phase))


def play(state: DowState, orders: Mapping[str, tuple[str, ...]]) -> dow_phase.PhaseMap:
    """The phase adjudicated by the engine through the ruleset, as a PhaseMap."""
    assert state.phase is not None
    actions = [Action(state.phase, power, None, {"orders": list(given)}, "sealed") for power, given in orders.items()]
    after, events = resolve.resolve(state, state.phase, actions)
    return dow_phase.from_events(phases.format_time(state.phase), state, after, orders, events)


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if cls in (g.get("class") or "").split()]


def unit_centre(root: ET.Element, province: str) -> tuple[float, float]:
    use = next(u for u in root.iter(f"{SVG}use") if (u.get("id") or "").split("/")[0] == f"unit_{province}")
    return float(use.get("x", "0")) + float(use.get("width", "0")) / 2, \
        float(use.get("y", "0")) + float(use.get("height", "0")) / 2


def stroke_of(group: ET.Element) -> str | None:
    return next((e.get("stroke") for e in group.iter() if e.get("stroke") and e.get("stroke") != "#ffffff"), None)


@pytest.fixture(scope="module", params=VECTORS, ids=[v.name for v in VECTORS])
def drawn(request: pytest.FixtureRequest) -> tuple[Vector, dow_phase.PhaseMap, ET.Element, ET.Element]:
    vector: Vector = request.param
    view = play(position(vector.units, vector.phase), vector.orders)
    before = ET.fromstring(dow_phase.render_phase(view, "before"))
    after = ET.fromstring(dow_phase.render_phase(view, "after"))
    return vector, view, before, after


def test_each_order_is_drawn_as_the_engine_judged_it_in_its_power_s_colour(drawn: Any) -> None:
    vector, _view, before, after = drawn
    for root in (before, after):
        orders = {g.get("data-order"): g for g in groups(root, "order")}
        assert set(orders) == {o for given in vector.orders.values() for o in given}
        for power, given in vector.orders.items():
            for text in given:
                classes = (orders[text].get("class") or "").split()
                kind = dow_orders.parse(text)
                assert kind is not None and {"order", kind.kind} <= set(classes), (text, classes)
                assert ("failed" in classes) == (text in vector.failed), (text, classes)
                assert orders[text].get("data-power") == power
                assert stroke_of(orders[text]) == dow_orders.ORDER_COLOURS[power], text
                marks = [e for e in orders[text].iter() if e.get("class") == "pbem-failed-mark"]
                assert len(marks) == (1 if text in vector.failed else 0), text
        panel = {t.text: t for t in root.iter(f"{SVG}text") if t.get("class") == "pbem-order"}
        assert {o for o, t in panel.items() if t.get("data-failed") == "true"} == vector.failed
        for text in vector.failed:  # the panel says why, in the engine's words
            why = "".join(panel[text].itertext())
            assert any(code in why for code in (panel[text].get("data-result") or "-").split()), why
        ours = [g for g in root.iter(f"{SVG}g") if g.get("id") in ("pbem-orders", "pbem-dislodged")]
        inside = [e for g in ours for e in g.iter() if e is not g]
        assert not [e for e in inside if e.get("id") or "url(#" in " ".join(e.attrib.values())]  # many maps, one page
        faint = {g.get("opacity") for g in groups(root, "order")}
        assert faint == ({"0.5"} if root is after else {None})  # after: the orders lighter, under the result


def test_two_moves_head_to_head_are_drawn_side_by_side() -> None:
    view = play(position({"france": ("A BUR",), "germany": ("A MUN",)}),
                {"france": ("A BUR - MUN",), "germany": ("A MUN - BUR",)})
    root = ET.fromstring(dow_phase.render_phase(view, "before"))
    lines = [next(g.iter(f"{SVG}line")) for g in groups(root, "move")]
    middles = [((float(e.get("x1", "0")) + float(e.get("x2", "0"))) / 2,
                (float(e.get("y1", "0")) + float(e.get("y2", "0"))) / 2) for e in lines]
    assert len(middles) == 2 and math.dist(*middles) >= 8


def test_a_dislodged_unit_stands_beside_its_province_with_the_engine_s_retreat_options(drawn: Any) -> None:
    vector, view, before, after = drawn
    assert not groups(before, "dislodged")  # before the adjudication nobody is dislodged
    marked = {g.get("data-province") for g in groups(before, "to-be-dislodged")}
    assert marked == {u.split()[1][:3] for u in vector.dislodged}  # but the units it will dislodge are ringed
    engine = {unit: frozenset(options) for _power, unit, options in view.after.board.dislodged}
    assert engine == vector.dislodged  # the vector's expectation is the engine's answer
    shown = {g.get("data-unit"): g for g in groups(after, "dislodged")}
    assert set(shown) == set(engine)
    for unit, group in shown.items():
        options = {line.get("data-to") for line in group.iter(f"{SVG}line") if line.get("class") == "retreat-option"}
        assert options == engine[unit]
        province = unit.split()[1][:3]
        use = next(group.iter(f"{SVG}use"))
        x = float(use.get("x", "0")) + float(use.get("width", "0")) / 2
        y = float(use.get("y", "0")) + float(use.get("height", "0")) / 2
        winner = unit_centre(after, province)  # the unit that took its place, at the province's point
        assert math.dist((x, y), winner) >= 40  # beside it, not stacked under it
    assert not [u for u in after.iter(f"{SVG}use") if (u.get("id") or "").startswith("dislodged_unit_")]


def test_before_shows_the_positions_the_orders_met_and_after_what_they_made(drawn: Any) -> None:
    _vector, view, before, after = drawn
    def units(root: ET.Element) -> set[str]:
        return {(u.get("id") or "")[5:8] for u in root.iter(f"{SVG}use") if (u.get("id") or "").startswith("unit_")}

    assert units(before) == {u.split()[1][:3] for _p, u in view.before.board.units}
    assert units(after) == {u.split()[1][:3] for _p, u in view.after.board.units}
    moment = {root: next(g for g in root.iter(f"{SVG}g") if g.get("id") == "pbem-orders").get("data-moment")
              for root in (before, after)}
    assert moment == {before: "before", after: "after"}


def test_a_retreat_starts_from_the_dislodged_unit_and_after_it_the_unit_stands_there() -> None:
    dislodging = play(position({"austria": ("A VIE", "A BOH"), "russia": ("A GAL",)}),
                      {"austria": ("A VIE - GAL", "A BOH S A VIE - GAL"), "russia": ("A GAL H",)})
    retreat = play(dislodging.after, {"russia": ("A GAL R UKR",)})
    assert retreat.phase == "S1901R"
    before = ET.fromstring(dow_phase.render_phase(retreat, "before"))
    spot = next(g for g in groups(before, "dislodged"))
    order = next(g for g in groups(before, "retreat"))
    line = next(order.iter(f"{SVG}line"))
    start = (float(line.get("x1", "0")), float(line.get("y1", "0")))
    assert math.dist(start, (float(spot.get("data-x", "0")), float(spot.get("data-y", "0")))) < 30
    assert "failed" not in (order.get("class") or "").split()
    after = ET.fromstring(dow_phase.render_phase(retreat, "after"))
    assert not groups(after, "dislodged")
    assert ("russia", "A UKR") in retreat.after.board.units
    assert any((u.get("id") or "") == "unit_UKR" for u in after.iter(f"{SVG}use"))


def test_a_unit_with_nowhere_to_retreat_is_drawn_disbanded_after_the_phase() -> None:
    """Every neighbour of Galicia held or attacked: the engine gives no option and disbands the unit at once (it is
    on no board); the map after the phase still shows it beside its province, marked disbanded."""
    view = play(position({"austria": ("A VIE", "A BOH", "A BUD"), "russia": ("A GAL", "A WAR", "A UKR"),
                          "turkey": ("A RUM",), "germany": ("A SIL",)}),
                {"austria": ("A VIE - GAL", "A BOH S A VIE - GAL", "A BUD H"), "russia": ("A GAL H",)})
    assert not view.after.board.dislodged and view.disbanded == (("russia", "A GAL"),)
    before = ET.fromstring(dow_phase.render_phase(view, "before"))
    assert [g.get("data-province") for g in groups(before, "to-be-dislodged")] == ["GAL"]
    after = ET.fromstring(dow_phase.render_phase(view, "after"))
    group = next(g for g in groups(after, "dislodged"))
    assert group.get("data-unit") == "A GAL" and group.get("data-retreats") == ""
    assert not [e for e in group.iter() if e.get("class") == "retreat-option"]
    assert [t.text for t in group.iter(f"{SVG}text") if t.get("class") == "retreat-none"] == ["disbanded"]
    assert not groups(before, "dislodged")


def test_the_power_colours_are_apart_from_each_other_and_from_the_verdict_and_relationship_colours() -> None:
    def rgb(colour: str) -> tuple[int, ...]:
        return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))

    colours = list(dow_orders.ORDER_COLOURS.values())
    verdicts = [c for v, (c, _) in dow_orders.VERDICT_STYLES.items() if v != "ok"]
    verdicts += list(dow_svg.RELATION_COLOURS.values())  # nor is any a relationship colour
    assert set(dow_orders.ORDER_COLOURS) == set(POWERS)
    for i, a in enumerate(colours):
        for b in colours[i + 1:] + verdicts:
            assert math.dist(rgb(a), rgb(b)) > APART, (a, b)
        assert sum(rgb(a)) < 3 * 200  # dark enough to read on the map's light land and sea


def test_the_legend_explains_each_way_an_order_is_drawn_and_names_each_power_in_its_colour() -> None:
    view = play(position({"austria": ("A VIE",), "russia": ("A WAR",)}),
                {"austria": ("A VIE - GAL",), "russia": ("A WAR - GAL",)})
    root = ET.fromstring(dow_phase.render_phase(view, "before"))
    shows = {g.get("data-shows") for g in root.iter(f"{SVG}g") if g.get("class") == "pbem-order-legend"}
    assert shows == {"move", "support", "convoy", "failed", "dislodged"}
    names = {t.text: t.get("fill") for t in root.iter(f"{SVG}text") if t.text in ("austria", "russia")
             and t.get("fill") in dow_orders.ORDER_COLOURS.values()}
    assert names == {"austria": dow_orders.ORDER_COLOURS["austria"], "russia": dow_orders.ORDER_COLOURS["russia"]}


def test_a_moment_that_is_neither_before_nor_after_is_refused() -> None:
    view = play(position({"austria": ("A VIE",)}), {"austria": ("A VIE H",)})
    with pytest.raises(ValueError, match="before, after"):
        dow_phase.render_phase(view, "during")


# --- the changes recognised but not yet in force: what the panel says is true ------------------------------------

@pytest.mark.parametrize("phase,in_force_from", [("S1901P", "S1901M"), ("S1901M", "S1901R"), ("S1901R", "F1901R"),
                                                 ("F1901M", "F1901R"), ("W1901A", "S1902R")])
def test_a_recognised_change_is_listed_with_the_phase_it_comes_into_force(phase: str, in_force_from: str) -> None:
    """Seed 001: recognised changes are realised at the start of the Spring and Fall retreats (and after the first
    half of Spring 1901); the panel lists each and says from when, and the ruleset realises it exactly then."""
    start = replace(RULES.initial_state({"map": "standard"}, POWERS), phase=phases.parse_time(phase))
    state, refusal = RULES.recognise(start, {"by": "france", "declare": {"to": "germany", "state": "WAR"}}, "france")
    assert refusal is None
    root = ET.fromstring(dow_svg.render(state))
    head = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "pbem-pending-head"]
    assert head == [f"recognised, in force from {in_force_from}:"]
    listed = {(t.get("data-pair"), t.get("data-state")) for t in root.iter(f"{SVG}text")
              if t.get("class") == "pbem-pending"}
    assert listed == {("france-germany", "WAR")}
    point: Any = state.phase  # the ruleset agrees: the change is in force at that phase, not before
    while phases.format_time(point) != in_force_from:
        assert state.relations.in_force.get("france", "germany") != "WAR"
        state, _events = resolve.resolve(state, point, [])
        point = state.phase
    assert state.relations.in_force.get("france", "germany") == "WAR"


# --- text shown as text --------------------------------------------------------------------------------------------

CONTROLS = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff"
HOSTILE_TEXT = '<script>alert("x")</script> & \x1b[31m \u202e'


def test_orders_names_and_titles_with_markup_or_controls_are_shown_as_text() -> None:
    orders = {"austria": ("A VIE - GAL", f"A BUD - SER {HOSTILE_TEXT}", HOSTILE_TEXT)}
    view = play(position({"austria": ("A VIE", "A BUD")}), orders)
    svg = dow_phase.render_phase(view, "before", viewer=HOSTILE_TEXT, title=f"{HOSTILE_TEXT}: {HOSTILE_TEXT}")
    root = ET.fromstring(svg)  # still one well-formed document
    assert not [e for e in root.iter() if e.tag.endswith("script")]
    panel = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "pbem-order"]
    shown = ET.fromstring(f"<a>{markup(HOSTILE_TEXT)}</a>").text or ""  # what a reader sees
    assert f"A BUD - SER {shown}" in panel and shown in panel
    assert "\\x1b" in shown and "\\u202e" in shown and "\x1b" not in svg and "\u202e" not in svg
    drawn = {g.get("data-order") for g in groups(root, "order")}
    assert f"A BUD - SER {shown}" in drawn  # the engine refused it (void): drawn, its text kept as text


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=40))
def test_markup_keeps_any_text_inert_in_content_and_attributes(text: str) -> None:
    safe = markup(text)
    root = ET.fromstring(f'<a b="{safe}" c=\'{safe}\'>{safe}</a>')
    assert root.get("b") == root.get("c") == (root.text or "")
    assert not list(root)  # no element smuggled in
    plain = root.get("b") or ""
    assert not re.search(f"[{CONTROLS}]", plain)  # every control shown as a visible escape
    if not re.search(f"[{CONTROLS}]", text):
        assert plain == text  # text without controls reads exactly as written
