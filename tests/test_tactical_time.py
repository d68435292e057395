"""tactical/1 game time "T.I.step" (DESIGN §2, §7.1): parse, format, the step sequence, report periods."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.gametime import STEPS

RULES = TacticalRuleset()

# DESIGN §7.1: allocation, impulses 1..32 of move/activity/fire/damage, final after impulse 32.
VALID = [
    ("1.0.alloc", (1, 0, 0)),
    ("1.1.move", (1, 1, 1)),
    ("1.12.move", (1, 12, 1)),
    ("1.4.activity", (1, 4, 2)),
    ("1.4.fire", (1, 4, 3)),
    ("3.32.damage", (3, 32, 4)),
    ("8.32.final", (8, 32, 5)),
    ("999.1.move", (999, 1, 1)),
]

INVALID = [
    ("1.3.walk", "unknown step 'walk'"),
    ("1.3.MOVE", "not a game time"),
    ("1.33.move", "impulse must be 0..32"),
    ("1.100.move", "impulse must be 0..32"),
    ("1.0.move", "move needs an impulse 1..32"),
    ("1.5.alloc", "alloc is only at impulse 0"),
    ("1.31.final", "final is only after impulse 32"),
    ("1.0.final", "final is only after impulse 32"),
    ("01.3.move", "turn '01' has a leading zero"),
    ("1.03.move", "impulse '03' has a leading zero"),
    ("1.00.alloc", "impulse '00' has a leading zero"),
    ("0.3.move", "turn must be 1..999"),
    ("1000.3.move", "turn must be 1..999"),
    ("1.3", "not a game time"),
    ("1.3.move.x", "not a game time"),
    ("1.3.move\n", "not a game time"),
    (" 1.3.move", "not a game time"),
    ("1.\u0663.move", "not a game time"),  # a non-ASCII digit
    ("", "not a game time"),
]


@pytest.mark.parametrize(("text", "point"), VALID)
def test_design_7_1_times_parse_and_format(text: str, point: tuple[int, int, int]) -> None:
    assert RULES.parse_time(text) == point
    assert RULES.format_time(point) == text


@pytest.mark.parametrize(("text", "reason"), INVALID)
def test_design_7_1_bad_times_are_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason.replace(".", r"\.")):
        RULES.parse_time(text)


@pytest.mark.parametrize("value", [5, None, (1, 2, 3), b"1.1.move"])
def test_a_time_must_be_a_string(value: object) -> None:
    with pytest.raises(ValueError, match="must be a string"):
        RULES.parse_time(value)  # type: ignore[arg-type]


NOT_POINTS = [(1, 5, 0), (1, 31, 5), (1, 0, 1), (0, 1, 1), (1, 1, 6), (1, 1), "1.1.move", (1, 1, True)]


@pytest.mark.parametrize("point", NOT_POINTS)
def test_format_refuses_what_is_no_point(point: object) -> None:
    with pytest.raises(ValueError):
        RULES.format_time(point)  # type: ignore[arg-type]


def test_design_7_1_a_game_walks_alloc_impulses_final_turn_by_turn() -> None:
    setup = {"turns": 2}
    points = [RULES.first_step(setup)]
    while (nxt := RULES.next_step(setup, points[-1])) is not None:
        points.append(nxt)
    texts = [RULES.format_time(p) for p in points]
    assert len(points) == 2 * (1 + 32 * 4 + 1)
    assert points == sorted(points) and len(set(points)) == len(points)
    assert texts[:6] == ["1.0.alloc", "1.1.move", "1.1.activity", "1.1.fire", "1.1.damage", "1.2.move"]
    assert texts[128:132] == ["1.32.damage", "1.32.final", "2.0.alloc", "2.1.move"]
    assert texts[-1] == "2.32.final"
    assert all(RULES.parse_time(t) == p for t, p in zip(texts, points, strict=True))


def test_next_step_needs_setup_turns() -> None:
    with pytest.raises(ValueError, match="setup.turns"):
        RULES.next_step({}, (1, 32, 5))


@pytest.mark.parametrize("step", STEPS)
def test_design_4_6_fire_and_activity_are_simultaneous(step: str) -> None:
    text = {"alloc": "1.0.alloc", "final": "1.32.final"}.get(step, f"1.7.{step}")
    assert RULES.is_simultaneous(RULES.parse_time(text)) == (step in ("fire", "activity"))


@pytest.mark.parametrize(("text", "period"), [("1.0.alloc", "turn-01"), ("1.32.final", "turn-01"),
                                              ("12.3.move", "turn-12"), ("100.1.fire", "turn-100")])
def test_design_2_one_report_file_per_turn(text: str, period: str) -> None:
    assert RULES.period_of(RULES.parse_time(text)) == period


@st.composite
def points(draw: st.DrawFn) -> tuple[int, int, int]:
    turn = draw(st.integers(1, 999))
    step = draw(st.integers(0, 5))
    impulse = 0 if step == 0 else 32 if step == 5 else draw(st.integers(1, 32))
    return (turn, impulse, step)


@given(points())
def test_format_then_parse_round_trips(point: tuple[int, int, int]) -> None:
    assert RULES.parse_time(RULES.format_time(point)) == point


@given(st.text(alphabet="0123456789.almovectiyfrdgn \n", max_size=14) | st.text(max_size=14))
def test_any_text_parses_canonically_or_raises_value_error(text: str) -> None:
    try:
        point = RULES.parse_time(text)
    except ValueError:
        return
    assert RULES.format_time(point) == text


@given(points(), points())
def test_points_order_as_game_time(a: tuple[int, int, int], b: tuple[int, int, int]) -> None:
    # walking from the earlier point reaches the later one: tuple order is game order
    if a[0] == b[0] and a != b:
        setup = {"turns": a[0]}
        early, late = min(a, b), max(a, b)
        walked = early
        while walked is not None and walked < late:
            walked = RULES.next_step(setup, walked)
        assert walked == late
