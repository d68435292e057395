"""DATC v3.0, sections 6.A-6.J (tests/datc_cases.py): every case through the engine adapter
(rulesets/dow/engine.py) the way a phase resolves in a game: each power's orders checked by `check_orders`
(refused ones are void and the unit holds), the rest adjudicated by `adjudicate`, phase after phase."""

from __future__ import annotations

from collections import Counter

import pytest

from datc_cases import CASES, Case
from pbem.rulesets.dow import engine
from pbem.rulesets.dow.board import Board


def _board(case: Case) -> Board:
    info = engine.standard_map()
    centres = case.centres if case.centres is not None else dict(info.start.centres)
    return Board.of(info.powers, case.units, centres, {})


def _play(case: Case) -> tuple[Board, list[str]]:
    board, phase, void = _board(case), case.phase, []
    for given in case.orders:
        orders = {}
        for power, texts in given.items():
            checked = engine.check_orders(board, phase, power, texts)
            orders[power] = [c.normal for c in checked if c.normal is not None]
            void += [c.order for c in checked if c.normal is None]
        result = engine.adjudicate(board, phase, orders, 18)
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
