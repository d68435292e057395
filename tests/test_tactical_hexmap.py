"""tactical/1 hex map (DESIGN §7.1): XXYY hexes, facings A..F clockwise, neighbours, range."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pbem.rulesets.tactical.hexmap import (
    FACINGS,
    distance,
    format_facing,
    format_hex,
    neighbour,
    on_map,
    opposite,
    parse_facing,
    parse_hex,
    turn_left,
    turn_right,
)

# DESIGN §7.1, literally: "From 0505: A 0504, B 0604, C 0605, D 0506, E 0405, F 0404. From 0606: A 0605,
# B 0706, C 0707, D 0607, E 0507, F 0506."
DESIGN_7_1_NEIGHBOURS = [
    ("0505", "A", "0504"), ("0505", "B", "0604"), ("0505", "C", "0605"),
    ("0505", "D", "0506"), ("0505", "E", "0405"), ("0505", "F", "0404"),
    ("0606", "A", "0605"), ("0606", "B", "0706"), ("0606", "C", "0707"),
    ("0606", "D", "0607"), ("0606", "E", "0507"), ("0606", "F", "0506"),
]


@pytest.mark.parametrize(("start", "facing", "expected"), DESIGN_7_1_NEIGHBOURS)
def test_design_7_1_neighbour_vectors(start: str, facing: str, expected: str) -> None:
    assert format_hex(neighbour(parse_hex(start), parse_facing(facing))) == expected


RANGES = [
    ("0505", "0505", 0),
    ("0505", "0504", 1),
    ("0505", "0510", 5),
    ("0101", "0201", 1),   # an even column sits half a hex lower: 0201 touches 0101
    ("0101", "0301", 2),
    ("0505", "1005", 5),   # B C B C C
    ("0505", "1002", 5),
    ("0505", "1010", 8),   # five C moves reach 1007, then three D
    ("0510", "0606", 4),
]


@pytest.mark.parametrize(("a", "b", "hexes"), RANGES)
def test_design_7_1_range_is_hex_distance(a: str, b: str, hexes: int) -> None:
    assert distance(parse_hex(a), parse_hex(b)) == hexes
    assert distance(parse_hex(b), parse_hex(a)) == hexes


@pytest.mark.parametrize("text", ["505", "05050", "0005", "0500", "05a5", "٠٥٠٥", "0505\n", 505, None])
def test_bad_hex_names_are_refused(text: object) -> None:
    with pytest.raises(ValueError):
        parse_hex(text)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["G", "a", "AB", "", 1, None])
def test_bad_facings_are_refused(text: object) -> None:
    with pytest.raises(ValueError):
        parse_facing(text)  # type: ignore[arg-type]


def test_facings_go_clockwise_from_a() -> None:
    assert [format_facing(turn_right(parse_facing(f))) for f in FACINGS] == list("BCDEFA")
    assert [format_facing(turn_left(parse_facing(f))) for f in FACINGS] == list("FABCDE")
    assert [format_facing(opposite(parse_facing(f))) for f in FACINGS] == list("DEFABC")


def test_on_map_counts_from_0101() -> None:
    assert on_map((1, 1), 42, 30) and on_map((42, 30), 42, 30)
    assert not any(on_map(h, 42, 30) for h in [(0, 1), (1, 0), (43, 1), (1, 31)])


hexes = st.tuples(st.integers(-60, 160), st.integers(-60, 160))
facings = st.integers(0, 5)


@given(hexes)
def test_hex_names_round_trip(hex_: tuple[int, int]) -> None:
    if 1 <= hex_[0] <= 99 and 1 <= hex_[1] <= 99:
        assert parse_hex(format_hex(hex_)) == hex_
    else:
        with pytest.raises(ValueError):
            format_hex(hex_)


@given(hexes, hexes)
def test_distance_is_symmetric_and_zero_only_on_the_same_hex(a: tuple[int, int], b: tuple[int, int]) -> None:
    assert distance(a, b) == distance(b, a) >= 0
    assert (distance(a, b) == 0) == (a == b)


@given(hexes, hexes, hexes)
def test_distance_obeys_the_triangle_inequality(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int]) -> None:
    assert distance(a, c) <= distance(a, b) + distance(b, c)


@given(hexes)
def test_six_distinct_neighbours_all_at_range_1(hex_: tuple[int, int]) -> None:
    around = [neighbour(hex_, f) for f in range(6)]
    assert len(set(around)) == 6
    assert all(distance(hex_, n) == 1 for n in around)
    # consecutive facings point at hexes that touch each other (a ring, clockwise)
    assert all(distance(around[f], around[(f + 1) % 6]) == 1 for f in range(6))


@given(hexes, facings)
def test_moving_ahead_then_back_returns(hex_: tuple[int, int], facing: int) -> None:
    assert neighbour(neighbour(hex_, facing), opposite(facing)) == hex_


@given(hexes, facings, st.integers(0, 40))
def test_straight_lines_measure_their_length(hex_: tuple[int, int], facing: int, steps: int) -> None:
    end = hex_
    for _ in range(steps):
        end = neighbour(end, facing)
    assert distance(hex_, end) == steps
