"""Game time of `dow/1` (DESIGN §2, §7.2): Diplomacy phases "S1901M", "S1901R", "F1901M", "F1901R", "W1901A".

A point is the tuple (year, season, kind): season 0 Spring, 1 Fall, 2 Winter; kind 0 press-only first half,
1 movement, 2 retreats, 3 adjustments. Plain tuple comparison is game order:

    S1901P < S1901M < S1901R < F1901M < F1901R < W1901A < S1902M < ...

Every phase exists in the sequence, also a retreat or adjustment phase in which nobody has anything to do
(`next_step` cannot look at the state); such a phase simply owes no orders (DowRuleset.owing_players).

Spring 1901 in two halves (seed 001: "Spring of 1901 will be extended one phase length. Any publicly recognized
changes in the first half will become realized for the second half"): the first half is the press-only phase
"S1901P" (no orders, nothing sealed); its end realises what was recognised in it, and the orders of "S1901M",
the second half, are judged by those states. `setup.start: S1901M` skips the first half.

Choices where the seed is silent: years run 1901..2000, the engine's own limit (it declares a draw when the
year-2000 centres are counted); "P" exists only in Spring 1901; entries of a year live in report/<year>.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pbem.rulesets.base import Point

SEASONS = "SFW"
KINDS = "PMRA"
SPRING, FALL, WINTER = range(3)
PRESS, MOVEMENT, RETREATS, ADJUSTMENTS = range(4)
FIRST_YEAR = 1901
LAST_YEAR = 2000
FIRST_HALF: Point = (FIRST_YEAR, SPRING, PRESS)
STARTS = ("S1901P", "S1901M")

_SHAPE = re.compile(r"([SFW])([0-9]{4})([PMRA])\Z", re.ASCII)
_VALID = {(SPRING, PRESS), (SPRING, MOVEMENT), (SPRING, RETREATS), (FALL, MOVEMENT), (FALL, RETREATS),
          (WINTER, ADJUSTMENTS)}
_NAMES = {SPRING: "Spring", FALL: "Fall", WINTER: "Winter"}
_KIND_NAMES = {PRESS: "first half (press only)", MOVEMENT: "movement", RETREATS: "retreats",
               ADJUSTMENTS: "adjustments"}


def parse_time(text: str) -> Point:
    """The point named by a phase such as "S1901M"; ValueError with the reason when `text` names none."""
    if not isinstance(text, str):
        raise ValueError(f"a phase must be a string like 'S1901M', got {type(text).__name__}")
    match = _SHAPE.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a phase like 'S1901M' (season S/F/W, year, kind P/M/R/A)")
    season, year, kind = SEASONS.index(match[1]), int(match[2]), KINDS.index(match[3])
    point = (year, season, kind)
    problem = _problem(point)
    if problem:
        raise ValueError(f"{text!r}: {problem}")
    return point


def _problem(point: tuple[int, int, int]) -> str | None:
    year, season, kind = point
    if not FIRST_YEAR <= year <= LAST_YEAR:
        return f"years run {FIRST_YEAR}..{LAST_YEAR}"
    if (season, kind) not in _VALID:
        return "Spring and Fall have movement (M) and retreats (R), Winter has adjustments (A)"
    if kind == PRESS and year != FIRST_YEAR:
        return "only Spring 1901 has a first half (S1901P)"
    return None


def format_time(point: Point) -> str:
    """The canonical phase name of a point; ValueError for a tuple that is no dow/1 phase."""
    if (
        not isinstance(point, tuple)
        or len(point) != 3
        or not all(isinstance(p, int) and not isinstance(p, bool) for p in point)
        or not 0 <= point[1] < len(SEASONS)
        or not 0 <= point[2] < len(KINDS)
        or _problem(point) is not None
    ):
        raise ValueError(f"{point!r} is not a dow/1 phase")
    year, season, kind = point
    return f"{SEASONS[season]}{year}{KINDS[kind]}"


def describe(point: Point) -> str:
    """A phase in words: "Spring 1901 movement"."""
    year, season, kind = point
    return f"{_NAMES[season]} {year} {_KIND_NAMES[kind]}"


def first_step(setup: Mapping[str, Any]) -> Point:
    """The first phase: the press-only first half of Spring 1901, or S1901M with `setup.start: S1901M`."""
    start = setup.get("start", STARTS[0]) if isinstance(setup, Mapping) else STARTS[0]
    if start not in STARTS:
        raise ValueError(f"setup.start must be one of {', '.join(STARTS)}, got {start!r}")
    return parse_time(start)


def next_step(setup: Mapping[str, Any], point: Point) -> Point | None:
    """The phase after `point`; None after the Winter of the last year."""
    year, season, kind = point
    if kind == PRESS:
        return (year, SPRING, MOVEMENT)
    if kind == MOVEMENT:
        return (year, season, RETREATS)
    if season == SPRING:
        return (year, FALL, MOVEMENT)
    if season == FALL:
        return (year, WINTER, ADJUSTMENTS)
    return (year + 1, SPRING, MOVEMENT) if year < LAST_YEAR else None


def sealed(point: Point) -> bool:
    """Orders are sealed at every phase where they are given (DESIGN §4.7): all but the press-only half."""
    return bool(point[2] != PRESS)


def is_simultaneous(point: Point) -> bool:
    """Order phases are simultaneous: every power's orders are resolved together."""
    return sealed(point)


def period_of(point: Point) -> str:
    """The report file stem of a phase: its year ("1901" -> report/1901.yaml)."""
    return str(point[0])


def engine_phase(point: Point) -> str:
    """The phase name the engine uses for an order phase (the engine has no press-only half)."""
    if point[2] == PRESS:
        raise ValueError("the press-only first half is not an engine phase")
    return format_time(point)


def realises_relations(point: Point) -> bool:
    """Seed 001: recognised changes are realised "at the beginning of Spring Retreats and Fall Retreats", and
    at the end of the first half of Spring 1901. True for the phases whose adjudication ends with that
    (movement phases and the first half)."""
    return point[2] in (PRESS, MOVEMENT)
