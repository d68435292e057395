"""The engine corrections beyond the DATC cases (tests/datc_variants.py; docs/dow.md "Corrections of the engine"):
each variant reproduced through the adapter with the corrections taken out (the engine alone gets it wrong),
then adjudicated right with them, the way a game plays it (test_datc._play)."""

from __future__ import annotations

import pytest

from datc_variants import OLDER, VARIANTS
from pbem.rulesets.dow import engine
from pbem.rulesets.dow.board import Board
from test_datc import _board, _by_power, _play, engine_alone  # noqa: F401 (a fixture)


def _retreats(case) -> dict[str, dict[str, list[str]]]:  # type: ignore[no-untyped-def]
    board = _board(case)
    orders = {p: [c.normal for c in engine.check_orders(board, case.phase, p, o) if c.normal]
              for p, o in case.orders[0].items()}
    after = engine.adjudicate(board, case.phase, orders, 18).board
    out: dict[str, dict[str, list[str]]] = {}
    for power, unit, options in after.dislodged:
        out.setdefault(power, {})[unit] = list(options)
    return out


def _right(case) -> bool:  # type: ignore[no-untyped-def]
    try:
        board, void = _play(case)
    except engine.EngineError:
        return False
    return (_by_power(board.units) == {p: sorted(u) for p, u in case.after.items() if u}
            and _by_power(board.dislodged) == {p: sorted(u) for p, u in case.dislodged.items() if u}
            and sorted(void) == sorted(case.void)
            and (case.retreats is None or _retreats(case) == case.retreats)
            and (case.results is None or _results_hold(case)))


def _results_hold(case) -> bool:  # type: ignore[no-untyped-def]
    board = _board(case)
    orders = {p: [c.normal for c in engine.check_orders(board, case.phase, p, o) if c.normal]
              for p, o in case.orders[0].items()}
    results = dict(engine.adjudicate(board, case.phase, orders, 18).results)
    return all(set(codes) <= set(results.get(unit, ())) for unit, codes in (case.results or {}).items())


@pytest.mark.parametrize("case", VARIANTS, ids=[c.id for c in VARIANTS])
def test_the_adapter_rules_each_variant_as_the_datc_does(case) -> None:  # type: ignore[no-untyped-def]
    assert _right(case), case.note


@pytest.mark.parametrize("case", [c for c in VARIANTS if c.id != "6.H.15+coast"],
                         ids=[c.id for c in VARIANTS if c.id != "6.H.15+coast"])
def test_the_engine_alone_gets_each_variant_wrong(case, engine_alone: None) -> None:  # type: ignore[no-untyped-def]
    assert not _right(case)


def test_the_engine_alone_refuses_a_coast_it_coloured_itself() -> None:
    """6.H.15+coast: after "F BOT R STP/SC" the engine colours "STP/SC"; a position holding that colour is
    refused in the next phase. Board keeps colours on provinces, so the game goes on (test above)."""
    info = engine.standard_map()
    board = Board.of(info.powers, {"russia": ["F STP/SC"]}, dict(info.start.centres), {"russia": ["STP/SC"]})
    assert board.influence_of("russia") == ("STP",)
    coloured = Board(board.units, board.dislodged, board.centres,
                     tuple((p, ("STP/SC",) if p == "russia" else c) for p, c in board.influence))
    with pytest.raises(engine.EngineError, match="unknown province 'STP/SC'"):
        engine.check_orders(coloured, "F1901M", "russia", [])


@pytest.mark.parametrize("case_id", sorted(OLDER))
def test_the_2000_edition_keeps_the_land_fallback(case_id: str) -> None:
    [case] = [c for c in VARIANTS if c.id == case_id]
    board, _ = _play(case, "2000")
    assert _by_power(board.units) == OLDER[case_id]
