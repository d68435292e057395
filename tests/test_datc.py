"""DATC v3.0, sections 6.A-6.J (tests/datc_cases.py): every case through the engine adapter
(rulesets/dow/engine.py) the way a phase resolves in a game: each power's orders checked by `check_orders`
(refused ones are void and the unit holds), the rest adjudicated by `adjudicate`, phase after phase."""

from __future__ import annotations

from collections import Counter
from typing import Iterator

import pytest

from datc_cases import CASES, Case
from pbem.rulesets.dow import corrections, engine
from pbem.rulesets.dow.board import Board


def _board(case: Case) -> Board:
    info = engine.standard_map()
    centres = case.centres if case.centres is not None else dict(info.start.centres)
    return Board.of(info.powers, case.units, centres, {})


def _play(case: Case, edition: str = "2023") -> tuple[Board, list[str]]:
    board, phase, void = _board(case), case.phase, []
    for given in case.orders:
        orders = {}
        for power, texts in given.items():
            checked = engine.check_orders(board, phase, power, texts)
            orders[power] = [c.normal for c in checked if c.normal is not None]
            void += [c.order for c in checked if c.normal is None]
        result = engine.adjudicate(board, phase, orders, 18, edition)
        board, phase = result.board, result.next_phase
    return board, void


def _by_power(pairs: object) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for power, unit, *_ in pairs:  # type: ignore[attr-defined]
        out.setdefault(power, []).append(unit)
    return {p: sorted(u) for p, u in out.items()}


def test_every_case_once() -> None:
    """Sections 6.A-6.J, each case once (6.J.9 has two positions)."""
    ids = [c.id for c in CASES]
    assert not [i for i, n in Counter(ids).items() if n > 1]
    sections = Counter(i.split(".")[1] for i in ids)
    assert sections == {"A": 12, "B": 15, "C": 9, "D": 34, "E": 15, "F": 25, "G": 20, "H": 16, "I": 7, "J": 12}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_datc(case: Case) -> None:
    board, void = _play(case)
    assert _by_power(board.units) == {p: sorted(u) for p, u in case.after.items() if u}
    assert _by_power(board.dislodged) == {p: sorted(u) for p, u in case.dislodged.items() if u}
    assert sorted(void) == sorted(case.void)


# --- the 2000 rulebook where DATC v3.0 gives it as the alternative (game.yaml setup `edition: "2000"`) ------------

OLDER = {
    # 4.B.4: coasts in supports are not specified in the 2000 rules; the support counts and Italy bounces
    "6.B.9": {"france": ["F MAO", "F POR"], "italy": ["F LYO", "F WES"]},
    # 4.A.3: with fallback, the army ordered via a convoy that is not there moves over land
    "6.G.8": {"england": ["A KIE", "F HEL"], "france": ["A HOL"]},
    # 4.D.8: "under older rulebooks the army in Tuscany was kept" (distance to home centres)
    "6.J.11": {"italy": ["A TUS"]},
}


CORRECTED = {"6.B.9", "6.G.8", "6.J.3", "6.J.6", "6.J.10", "6.J.11",
             "6.F.21", "6.G.10"}  # these two: the retreats after a convoyed attack (6.H.6, corrections.py)


@pytest.fixture()
def engine_alone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The engine's own movement steps (corrections.Corrected's overrides taken away), nothing cached."""
    engine._adjudicate.cache_clear()
    for name in ("_strengths", "_check_disruptions", "_resolve_moves", "_move_results"):
        monkeypatch.delattr(corrections.Corrected, name)
    yield
    engine._adjudicate.cache_clear()


def test_the_adapter_corrects_exactly_the_cases_the_engine_gets_wrong(engine_alone: None) -> None:
    """The count docs/dow.md gives: the engine alone (the 2000 edition and no correction inside its steps)
    differs from DATC v3.0's preferred ruling in exactly these cases; all pass with the corrections
    (test_datc)."""
    wrong = set()
    for case in CASES:
        board, _ = _play(case, "2000")
        if (_by_power(board.units), _by_power(board.dislodged)) != (
                {p: sorted(u) for p, u in case.after.items() if u},
                {p: sorted(u) for p, u in case.dislodged.items() if u}):
            wrong.add(case.id)
    assert wrong == CORRECTED


@pytest.mark.parametrize("case_id", sorted(OLDER))
def test_datc_2000_edition(case_id: str) -> None:
    [case] = [c for c in CASES if c.id == case_id]
    board, _ = _play(case, "2000")
    assert _by_power(board.units) == OLDER[case_id]


def test_an_unknown_edition_is_refused() -> None:
    with pytest.raises(engine.EngineError, match="edition"):
        engine.adjudicate(_board(CASES[0]), "S1901M", {}, 18, "1971")


def test_the_edition_is_a_setup_option() -> None:
    from pbem.rulesets.dow.state import initial_state

    players = ("austria", "england", "france", "germany", "italy", "russia", "turkey")
    assert initial_state({"map": "standard"}, players).edition == "2023"
    assert initial_state({"map": "standard", "edition": "2000"}, players).edition == "2000"
    with pytest.raises(ValueError, match="setup.edition"):
        initial_state({"map": "standard", "edition": "1982"}, players)


# --- orders the engine would read with another meaning (refused: rules.order-rewritten) -------------------------

def _spain_board() -> Board:
    info = engine.standard_map()
    units = {"france": ["F POR", "F MAO"], "italy": ["F LYO", "F WES"]}
    return Board.of(info.powers, units, dict(info.start.centres), {p: [] for p in info.powers})


def test_a_support_keeps_the_coast_given() -> None:
    """6.B.9: the engine drops the coast of "F POR S F MAO - SPA/NC"; the adapter keeps it (and voids the
    support when the fleet moves to the other coast), so the order is not rewritten."""
    [checked] = engine.check_orders(_spain_board(), "S1901M", "france", ["F POR S F MAO - SPA/NC"])
    assert checked.normal == "F POR S F MAO - SPA/NC" and not checked.rewritten


def test_a_support_the_engine_would_count_for_the_other_coast_is_refused() -> None:
    """The fleet in the Gulf of Lyon reaches only Spain's south coast: the engine would read a support "to the
    north coast" as one to the south coast. Refused, naming the order."""
    [checked] = engine.check_orders(_spain_board(), "S1901M", "france", ["F MAO S F LYO - SPA/NC"])
    assert checked.normal is None and checked.rewritten
    assert "SPA/SC" in (checked.reason or "") and "another coast" in (checked.reason or "")


def test_a_rewritten_order_is_void_at_resolution_with_its_own_verdict() -> None:
    """The verifier voids it like an invalid order (the unit holds, no offence); `pbem orders` refuses to seal
    it (rules.order-rewritten, services/dow/orders.py)."""
    from dataclasses import replace

    from pbem.rulesets.dow import DowRuleset
    from pbem.rulesets.dow.resolve import judge
    from pbem.rulesets.dow.state import POWERS

    rules = DowRuleset()
    start = rules.initial_state({"map": "standard"}, POWERS)
    state = replace(start, phase=rules.parse_time("S1901M"), board=_spain_board())
    [(order, normal, verdict, reason)] = judge(state, "france", ["F MAO S F LYO - SPA/NC"])
    assert (normal, verdict) == (None, "rewritten") and "F MAO S F LYO - SPA/NC" in str(reason)


def test_a_support_to_a_coast_the_fleet_cannot_reach_is_void() -> None:
    """6.A.10 with a coast: the engine keeps "A MAR S F GAS - SPA/SC" as written although Gascony reaches only
    the north coast; the support is impossible and void (not a rewrite)."""
    info = engine.standard_map()
    board = Board.of(info.powers, {"france": ["F GAS", "A MAR"]}, dict(info.start.centres), {})
    [checked] = engine.check_orders(board, "F1901M", "france", ["A MAR S F GAS - SPA/SC"])
    assert checked.normal is None and not checked.rewritten and "cannot move to SPA/SC" in str(checked.reason)


def test_corrections_run_only_where_their_situation_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Verification speed: an ordinary phase (no support naming a coast, no move via convoy, no power short of
    disbands) never enters a correction."""
    from pbem.rulesets.dow import datc

    def boom(*_: object) -> None:
        raise AssertionError("a correction ran where it does not apply")

    for name in ("void_unmatched_coast_supports", "no_land_fallback", "civil_disorder_disbands"):
        monkeypatch.setattr(datc, name, boom)
    info = engine.standard_map()
    start = info.start
    spring = engine._adjudicate.__wrapped__(  # type: ignore[attr-defined]
        start, "S1901M", (("france", ("A PAR - BUR", "F BRE - MAO")), ("italy", ("A VEN - TYR",))), 18)
    assert ("france", "A BUR") in spring.board.units
    builds = Board.of(info.powers, {"france": ["A PAR"]}, dict(start.centres), {})
    engine._adjudicate.__wrapped__(builds, "W1901A", (("france", ("A MAR B",)),), 18)  # type: ignore[attr-defined]
