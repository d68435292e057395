"""A phase builds the engine's position once (bench/README.md, A whole Diplomacy game): the orders of every power
are checked on one kept engine game, which the adjudication then consumes; the engine's map is built with its
adjacency answered on demand and the standard convoy paths recorded as data. Counts calls and compares with the
engine's own, never times."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from pbem.rulesets.base import Action
from pbem.rulesets.dow import DowRuleset, convoys, engine
from pbem.rulesets.dow.state import POWERS

RULES = DowRuleset()
OPENING = {
    "austria": ["A VIE - GAL", "A BUD - SER", "F TRI - ALB"],
    "england": ["F LON - NTH", "F EDI - NWG", "A LVP - YOR"],
    "france": ["F BRE - MAO", "A PAR - BUR", "A MAR S A PAR - BUR"],
    "germany": ["A MUN - RUH", "F KIE - DEN", "A BER - KIE"],
    "italy": ["F NAP - ION", "A ROM - APU", "A VEN H"],
    "russia": ["A MOS - UKR", "A WAR - GAL", "F SEV - BLA", "F STP/SC - BOT"],
    "turkey": ["F ANK - BLA", "A CON - BUL", "A SMY - ARM"],
}


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every engine position built from now on, by phase; nothing remembered from earlier tests."""
    engine._check_orders.cache_clear()
    engine._adjudicate.cache_clear()
    engine._positions.clear()
    built: list[str] = []
    real = engine._game

    def counting(board: Any, phase: str, victory: int | None = None) -> Any:
        built.append(phase)
        return real(board, phase, victory)

    monkeypatch.setattr(engine, "_game", counting)
    return built


def test_a_phase_of_seven_powers_builds_its_position_once(builds: list[str]) -> None:
    """Seven powers' orders judged (as `pbem orders` and replay do), then adjudicated: one position built."""
    state = RULES.initial_state({"map": "standard", "start": "S1901M"}, POWERS)
    assert state.phase is not None
    actions = [Action(state.phase, p, None, {"orders": o}) for p, o in OPENING.items()]
    for action in actions:
        assert RULES.reasons(state, action) is None
    after, events = RULES.apply(state, state.phase, actions)
    assert builds == ["S1901M"]
    assert any(e.kind == "adjudicated" for e in events)
    assert after.board.unit_in("BUR") == ("france", "A BUR")
    assert engine._positions == {}  # the adjudicated game is not kept: processing changed it


def test_the_next_phase_builds_its_own_position_once_and_a_game_stays_correct(builds: list[str]) -> None:
    """Two phases in a row: one build each; the kept game checks the same orders as a fresh one would."""
    state = RULES.initial_state({"map": "standard", "start": "S1901M"}, POWERS)
    assert state.phase is not None
    state, _ = RULES.apply(state, state.phase, [Action(state.phase, p, None, {"orders": o})
                                                for p, o in OPENING.items()])
    assert state.phase is not None
    state, _ = RULES.apply(state, state.phase, [])  # S1901R: nothing to retreat
    assert state.phase is not None
    bad = Action(state.phase, "france", None, {"orders": ["A BUR H", "A BUR - MUN"]})
    first = RULES.verdicts(state, bad)
    engine._check_orders.cache_clear()
    assert RULES.verdicts(state, bad) == first  # the kept game was left clean by the first check
    assert [v for _, _, v, _ in first] == ["ok", "invalid"]
    assert builds.count("S1901M") == 1 and builds.count("F1901M") == 1
    assert phase_name(state) == "F1901M"


def phase_name(state: Any) -> str:
    return RULES.format_time(state.phase)


def test_the_recorded_standard_map_is_the_engine_s() -> None:
    """standard.py records the engine's map so that reading it imports no engine; it must be the engine's own."""
    recorded, live = engine.standard_map(), engine.engine_map()
    assert engine.map_data(recorded) == engine.map_data(live)
    assert recorded == live


def test_reading_the_map_and_owing_orders_imports_no_engine() -> None:
    """A commit that adjudicates nothing (press, a sealed order) never loads the engine: in a fresh process."""
    import subprocess
    import sys

    code = ("import sys; from pbem.rulesets.dow import DowRuleset, engine; from pbem.rulesets.dow.state import "
            "DowState, POWERS; from pbem.rulesets.dow.relations import Relations; info = engine.standard_map(); "
            "state = DowState(None, info.start, Relations.start(POWERS)); "
            "assert [engine.adjustment_due(info.start, p) for p in POWERS] == [0] * 7; "
            "assert 'diplomacy' not in sys.modules, 'the engine was imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_recorded_convoy_paths_are_the_engine_s() -> None:
    """convoys.py records the standard map's convoy paths from the pickle the engine ships (keyed by the map
    file's MD5, as the engine looks them up); the adapter gives the engine these instead of that pickle."""
    import hashlib
    import pickle
    from pathlib import Path

    engine._package()
    from diplomacy import settings

    maps = Path(settings.PACKAGE_DIR) / "maps"
    shipped = pickle.loads((maps / "convoy_paths_cache.pkl").read_bytes())  # noqa: S301 - the package's own file
    digest = hashlib.md5((maps / "standard.map").read_bytes()).hexdigest()  # noqa: S324 - the engine's key
    assert convoys.paths() == shipped[digest]
    assert list(convoys.paths()) == list(shipped[digest])
    assert engine._map().convoy_paths == shipped[digest]


def test_the_map_answers_every_adjacency_question_as_the_engine_s_own_cache() -> None:
    """The adapter's map works out each adjacency at its first question (engine._LazyAbuts); the engine's own
    map, built from the same file, fills in every answer up front: they agree on every one of them, and on the
    rest of the cache."""
    from diplomacy import settings

    map_class = engine._package()[2]
    stock = engine._quiet(map_class, str(Path(settings.PACKAGE_DIR) / "maps" / "standard.map"), False)
    lazy = engine._map()
    assert type(lazy) is not map_class and type(stock) is map_class  # the adapter's, and the engine's own
    assert len(stock.abuts_cache) == 40344
    for key, answer in stock.abuts_cache.items():
        assert lazy.abuts_cache.get(key, 0) == answer, key
    assert lazy.abuts_cache.get(("A", "XYZ", "-", "PAR"), 0) == 0 and lazy.abuts("F", "MAO", "X", "BRE") == 0
    assert lazy.loc_coasts == stock.loc_coasts
    copied = copy.deepcopy(lazy)  # the engine's own deep copy of a map, slot by slot
    assert copied is not lazy and copied.loc_coasts == stock.loc_coasts
    assert [copied.abuts("F", "MAO", "-", c) for c in ("SPA/NC", "SPA/SC", "BUR")] == [1, 1, 0]
    assert {k: sorted(v) for k, v in lazy.dest_with_coasts.items()} == {
        k: sorted(v) for k, v in stock.dest_with_coasts.items()}


def test_adjudicating_loads_no_other_map_s_convoy_paths() -> None:
    """In a fresh process: adjudicating a phase does not load the engine's convoy-path module (every map's
    paths, a progress-bar library), and the opening still resolves as the engine resolves it."""
    import subprocess
    import sys

    code = ("import sys; from pbem.rulesets.dow import engine; board = engine.standard_map().start; "
            f"done = engine.adjudicate(board, 'S1901M', {OPENING!r}, 18); "
            "assert 'tqdm' not in sys.modules, 'the convoy-path module was loaded'; "
            "assert getattr(sys.modules['diplomacy.utils.convoy_paths'], '__file__', None) is None; "
            "assert 'A BUR' in done.board.units_of('france') and 'F NTH' in done.board.units_of('england')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
