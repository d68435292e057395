"""The engine adapter (issue 5): DATC-style checks that our wrapper passes orders to `diplomacy` and reads its results
back faithfully, refuses what the engine would drop silently, sorts what it returns unordered, and records the
engine's version. Cases name their DATC number (Lucas Kruijswijk's Diplomacy Adjudicator Test Cases)."""

from __future__ import annotations

import logging

import pytest

from pbem.rulesets.dow import engine
from pbem.rulesets.dow.board import Board

INFO = engine.standard_map()


def position(units: dict[str, list[str]], centres: dict[str, list[str]] | None = None,
             dislodged: dict[str, dict[str, list[str]]] | None = None) -> Board:
    """Only the given units; each power's centres as given (default: its home centres); units colour their
    provinces."""
    homes = {p: list(INFO.homes[p]) for p in INFO.powers}
    influence = {p: [u[2:5] for u in us] for p, us in units.items()}
    return Board.of(INFO.powers, units, centres if centres is not None else homes, influence, dislodged)


def accepted(board: Board, phase: str, power: str, orders: list[str]) -> list[str]:
    checked = engine.check_orders(board, phase, power, orders)
    return [c.normal for c in checked if c.normal is not None]


def run(board: Board, phase: str, orders: dict[str, list[str]]) -> engine.Adjudication:
    """Each power's orders as a player gives them: refused ones are dropped (they hold), the rest adjudicated."""
    kept = {p: accepted(board, phase, p, o) for p, o in orders.items()}
    return engine.adjudicate(board, phase, kept, 18)


def units_of(result: engine.Adjudication) -> dict[str, list[str]]:
    return {p: list(result.board.units_of(p)) for p in INFO.powers if result.board.units_of(p)}


def test_the_engine_is_the_pinned_version() -> None:
    assert engine.version() == engine.PINNED == "1.1.2"
    assert engine.engine_name() == "diplomacy 1.1.2"


def test_the_standard_map() -> None:
    assert INFO.powers == ("austria", "england", "france", "germany", "italy", "russia", "turkey")
    assert len(INFO.supply_centres) == 34 and len(INFO.provinces) == 75
    assert INFO.name("MUN") == "Munich" and INFO.name("BOT") == "Gulf of Bothnia"
    assert INFO.start.units_of("russia") == ("A MOS", "A WAR", "F SEV", "F STP/SC")
    assert INFO.start.centres_of("russia") == ("MOS", "SEV", "STP", "WAR")


@pytest.mark.parametrize("case, power, units, order, fragment", [
    ("6.A.1 moving to an area that is not a neighbour", "england", ["F NTH"], "F NTH - PIC", "refused"),
    ("6.A.2 move army to sea", "england", ["A LVP"], "A LVP - IRI", "refused"),
    ("6.A.3 move fleet to land", "germany", ["F KIE"], "F KIE - MUN", "refused"),
    ("6.A.4 move to own sector", "germany", ["F KIE"], "F KIE - KIE", "refused"),
    ("6.A.6 ordering a unit of another country", "germany", [], "F LON - NTH", "unorderable unit"),
    ("6.A.7 only armies can be convoyed", "england", ["F LON", "F NTH"], "F LON - BEL", "refused"),
    ("ordering a unit that does not exist", "england", ["F LON"], "F NTH - NWY", "unorderable unit"),
])
def test_illegal_orders_are_refused_not_dropped(case: str, power: str, units: list[str], order: str,
                                                fragment: str) -> None:
    """DATC 6.A: the engine would drop these silently into game.error; our acceptance check names them."""
    board = position({"england": ["F LON"], power: units} if power != "england" else {power: units})
    (checked,) = engine.check_orders(board, "S1901M", power, [order])
    assert checked.normal is None and checked.reason
    if fragment != "refused":
        assert fragment in checked.reason
    with pytest.raises(engine.EngineError, match="did not accept"):
        engine.adjudicate(board, "S1901M", {power: [order]}, 18)


def test_6_c_1_three_army_circular_movement() -> None:
    board = position({"turkey": ["F ANK", "A CON", "A SMY"]})
    result = run(board, "S1901M", {"turkey": ["F ANK - CON", "A CON - SMY", "A SMY - ANK"]})
    assert units_of(result) == {"turkey": ["A ANK", "A SMY", "F CON"]}


def test_6_c_3_a_disrupted_three_army_circular_movement() -> None:
    board = position({"turkey": ["F ANK", "A CON", "A SMY", "A BUL"]})
    result = run(board, "S1901M", {"turkey": ["F ANK - CON", "A CON - SMY", "A SMY - ANK", "A BUL - CON"]})
    assert units_of(result) == {"turkey": ["A BUL", "A CON", "A SMY", "F ANK"]}
    assert dict(result.results)["A BUL"] == ("bounce",)


def test_6_d_1_supported_hold_can_prevent_dislodgement() -> None:
    board = position({"austria": ["F ADR", "A TRI"], "italy": ["A VEN", "A TYR"]})
    result = run(board, "S1901M", {"austria": ["F ADR S A TRI - VEN", "A TRI - VEN"],
                                   "italy": ["A VEN H", "A TYR S A VEN"]})
    assert units_of(result) == {"austria": ["A TRI", "F ADR"], "italy": ["A TYR", "A VEN"]}
    assert result.board.dislodged == ()


DISLODGING = position({"austria": ["F ADR", "A TRI", "A VIE"], "italy": ["A VEN", "A TYR"]})
DISLODGING_ORDERS = {"austria": ["F ADR S A TRI - VEN", "A TRI - VEN", "A VIE - TYR"],
                     "italy": ["A VEN H", "A TYR S A VEN"]}


def test_6_d_2_a_move_cuts_support_on_hold() -> None:
    result = run(DISLODGING, "S1901M", DISLODGING_ORDERS)
    assert units_of(result) == {"austria": ["A VEN", "A VIE", "F ADR"], "italy": ["A TYR"]}
    assert result.dislodged == (("italy", "A VEN", "austria"),)
    assert result.board.dislodged == (("italy", "A VEN", ("APU", "PIE", "ROM", "TUS")),)
    assert result.next_phase == "S1901R"
    assert "VEN" in result.board.influence_of("austria") and "VEN" not in result.board.influence_of("italy")


def test_a_retreat_and_a_retreat_to_the_attackers_origin() -> None:
    """DATC 6.H.? (retreats): a dislodged unit may not retreat to the province the attacker came from."""
    after = run(DISLODGING, "S1901M", DISLODGING_ORDERS).board
    (to_trieste,) = engine.check_orders(after, "S1901R", "italy", ["A VEN R TRI"])
    assert to_trieste.normal is None and "invalid retreat destination" in str(to_trieste.reason)
    result = run(after, "S1901R", {"italy": ["A VEN - ROM"]})
    assert units_of(result)["italy"] == ["A ROM", "A TYR"]
    assert result.board.dislodged == () and result.next_phase == "F1901M"


def test_6_h_two_retreats_to_the_same_province_both_disband() -> None:
    board = position({"italy": ["A TYR"], "austria": ["A VEN"]},
                     dislodged={"italy": {"A TRI": ["ALB", "BUD"]}, "austria": {"A SER": ["ALB", "BUD"]}})
    result = run(board, "S1901R", {"italy": ["A TRI R ALB"], "austria": ["A SER R ALB"]})
    assert units_of(result) == {"austria": ["A VEN"], "italy": ["A TYR"]}


def test_an_unordered_dislodged_unit_disbands() -> None:
    after = run(DISLODGING, "S1901M", DISLODGING_ORDERS).board
    result = run(after, "S1901R", {})
    assert units_of(result)["italy"] == ["A TYR"]


def test_a_convoy() -> None:
    board = position({"england": ["A LON", "F NTH"]})
    result = run(board, "S1901M", {"england": ["A LON - NWY", "F NTH C A LON - NWY"]})
    assert units_of(result) == {"england": ["A NWY", "F NTH"]}


def test_centres_are_counted_on_entering_winter_and_builds_follow() -> None:
    units = {p: list(INFO.start.units_of(p)) for p in INFO.powers}
    units["france"] = ["F BRE", "A BUR", "A BEL"]
    board = Board.of(INFO.powers, units, {p: INFO.start.centres_of(p) for p in INFO.powers},
                     {p: INFO.start.influence_of(p) for p in INFO.powers})
    winter = run(board, "F1901R", {})
    assert winter.next_phase == "W1901A"
    assert winter.board.centres_of("france") == ("BEL", "BRE", "MAR", "PAR")
    assert engine.adjustment_due(winter.board, "france") == 1
    checked = engine.check_orders(winter.board, "W1901A", "france", ["A PAR B", "F MAR B", "F BRE B", "A MUN B"])
    assert [c.normal for c in checked] == ["A PAR B", None, None, None]
    assert [c.reason for c in checked[1:]] == ["more builds than due (1)", "invalid build site", "invalid build site"]
    built = run(winter.board, "W1901A", {"france": ["A PAR B"]})
    assert built.board.units_of("france") == ("A BEL", "A BUR", "A PAR", "F BRE")
    assert built.next_phase == "S1902M"


def test_disbands_due_and_civil_disorder_removal() -> None:
    """Standard rules: a power owing disbands that gives none loses its units farthest from home."""
    board = position({"france": ["A PAR", "A MAR", "A BUR", "A MOS"]}, centres={"france": ["PAR", "MAR", "BRE"]})
    assert engine.adjustment_due(board, "france") == -1
    (order,) = engine.check_orders(board, "W1901A", "france", ["A PAR B"])
    assert order.normal is None
    result = run(board, "W1901A", {})
    assert result.board.units_of("france") == ("A BUR", "A MAR", "A PAR")


def test_a_second_order_for_one_unit_is_refused() -> None:
    checked = engine.check_orders(INFO.start, "S1901M", "france", ["A PAR - BUR", "A PAR - PIC", "a mar - spa"])
    assert [c.normal for c in checked] == ["A PAR - BUR", None, "A MAR - SPA"]
    assert "a second order" in str(checked[1].reason)


def test_adjudication_is_deterministic_and_sorted() -> None:
    first = engine._adjudicate.__wrapped__(DISLODGING, "S1901M", tuple(sorted(
        (p, tuple(o)) for p, o in DISLODGING_ORDERS.items())), 18)
    again = run(DISLODGING, "S1901M", DISLODGING_ORDERS)
    assert first == again
    assert list(first.results) == sorted(first.results)
    assert list(first.board.units) == sorted(first.board.units)
    assert first.engine == "diplomacy 1.1.2"


@pytest.mark.parametrize("units, centres, fragment", [
    ({"france": ["A XYZ"]}, None, "unknown unit"),
    ({"france": ["A ENG"]}, None, "refused the position: invalid unit"),
    ({"france": ["A PAR"]}, {"france": ["BUR"]}, "BUR is not a supply centre"),
    ({"france": ["A PAR"]}, {"france": ["XYZ"]}, "unknown province"),
])
def test_unknown_names_are_refused_before_the_engine(units: dict, centres: dict | None, fragment: str) -> None:
    with pytest.raises(engine.EngineError, match=fragment):
        engine.check_orders(position(units, centres), "S1901M", "france", [])


def test_the_engine_stays_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    run(DISLODGING, "S1901M", {"austria": ["A TRI - MOS", "F ADR - PIC"]})
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    package_logger = logging.getLogger("diplomacy")
    assert package_logger.level > logging.CRITICAL and not package_logger.propagate
    assert not any(type(h) is logging.StreamHandler for h in package_logger.handlers)


def test_render_svg() -> None:
    svg = engine.render_svg(INFO.start, "S1901M")
    assert svg.lstrip().startswith("<") and "svg" in svg[:500]
