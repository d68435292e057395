"""Game time of dow/1 (DESIGN §2, §7.2; seed 001 "Spring of 1901 will be extended one phase length"): phase names,
their order, the sequence with every phase in it, and the parse/format round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.rulesets.dow import phases

P = phases.parse_time


def test_order_of_a_year() -> None:
    names = ["S1901P", "S1901M", "S1901R", "F1901M", "F1901R", "W1901A", "S1902M", "S1902R", "F1902M"]
    points = [P(n) for n in names]
    assert points == sorted(points)
    assert [phases.format_time(p) for p in points] == names


def test_the_sequence_holds_every_phase() -> None:
    """next_step cannot see the state, so retreat and adjustment phases are always in the sequence."""
    point, seen = phases.first_step({}), []
    while point is not None and len(seen) < 12:
        seen.append(phases.format_time(point))
        point = phases.next_step({}, point)
    assert seen == ["S1901P", "S1901M", "S1901R", "F1901M", "F1901R", "W1901A",
                    "S1902M", "S1902R", "F1902M", "F1902R", "W1902A", "S1903M"]
    assert phases.next_step({}, P("W2000A")) is None


def test_start_without_the_first_half() -> None:
    assert phases.first_step({"start": "S1901M"}) == P("S1901M")
    with pytest.raises(ValueError, match="setup.start"):
        phases.first_step({"start": "F1901M"})


@pytest.mark.parametrize("name, sealed", [("S1901P", False), ("S1901M", True), ("S1901R", True),
                                          ("F1905R", True), ("W1901A", True)])
def test_sealed_and_simultaneous(name: str, sealed: bool) -> None:
    """DESIGN §4.7: orders are sealed at every phase where they are given; the first half is press only."""
    assert phases.sealed(P(name)) is sealed
    assert phases.is_simultaneous(P(name)) is sealed


def test_period_is_the_year() -> None:
    assert phases.period_of(P("S1901P")) == "1901"
    assert phases.period_of(P("W1913A")) == "1913"


def test_realisation_points() -> None:
    """Seed 001: changes occur at the beginning of Spring and Fall retreats (the end of the movement phases) and
    for the second half of Spring 1901 (the end of S1901P)."""
    assert [n for n in ("S1901P", "S1901M", "S1901R", "F1901M", "F1901R", "W1901A")
            if phases.realises_relations(P(n))] == ["S1901P", "S1901M", "F1901M"]


@pytest.mark.parametrize("text, fragment", [
    ("S1902P", "only Spring 1901 has a first half"),
    ("W1901M", "Winter has adjustments"),
    ("F1901A", "Winter has adjustments"),
    ("S1900M", "years run 1901..2000"),
    ("S2001M", "years run 1901..2000"),
    ("s1901m", "is not a phase"),
    ("S1901M ", "is not a phase"),
    ("S01901M", "is not a phase"),
    ("", "is not a phase"),
])
def test_bad_phases(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        P(text)


def test_format_refuses_non_points() -> None:
    for bad in [(1901, 0), (1901, 2, 1), (1901, 0, 9), ("1901", 0, 1), (True, 0, 1), (1902, 0, 0)]:
        with pytest.raises(ValueError):
            phases.format_time(bad)  # type: ignore[arg-type]


points = st.one_of(
    st.just((1901, 0, 0)),
    st.tuples(st.integers(1901, 2000), st.sampled_from([(0, 1), (0, 2), (1, 1), (1, 2), (2, 3)])).map(
        lambda t: (t[0], *t[1])),
)


@given(points)
def test_round_trip(point: tuple[int, int, int]) -> None:
    assert P(phases.format_time(point)) == point


@given(st.text(max_size=12))
def test_any_text_parses_or_raises_value_error(text: str) -> None:
    try:
        point = P(text)
    except ValueError:
        return
    assert phases.format_time(point) == text


@given(points, points)
def test_order_is_game_order(a: tuple[int, int, int], b: tuple[int, int, int]) -> None:
    """Walking the sequence from the earlier point reaches the later one."""
    first, last = min(a, b), max(a, b)
    if last[0] - first[0] > 2:
        return
    point: tuple | None = first
    while point is not None and point < last:
        point = phases.next_step({}, point)
    assert point == last
