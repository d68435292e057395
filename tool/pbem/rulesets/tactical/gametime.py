"""Game time of `tactical/1` (DESIGN §2, §7.1): "T.I.step" strings and the points they name.

Each turn T (1..setup.turns) is `T.0.alloc` (energy allocation), then impulses 1..32, each with the steps
`move`, `activity` and `fire` (both simultaneous, §4.6: launches and shots) and `damage`, and after impulse 32's
damage `T.32.final`.

A point is the tuple (T, I, step index) with the step index in STEPS order, so plain tuple comparison is game
order: (1, 0, 0) < (1, 1, 1) < … < (1, 32, 4) < (1, 32, 5) < (2, 0, 0).

Choices where the design is silent: turns are 1..999; numbers are written without leading zeros, so each point
has exactly one spelling.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Mapping

from pbem.rulesets.base import Point

STEPS: tuple[str, ...] = ("alloc", "move", "activity", "fire", "damage", "final")
ALLOC, MOVE, ACTIVITY, FIRE, DAMAGE, FINAL = range(len(STEPS))
IMPULSE_STEPS: tuple[int, ...] = (MOVE, ACTIVITY, FIRE, DAMAGE)
IMPULSES = 32
MAX_TURNS = 999

_STEP_INDEX = {name: index for index, name in enumerate(STEPS)}
_SHAPE = re.compile(r"([0-9]+)\.([0-9]+)\.([a-z]+)\Z", re.ASCII)


def parse_time(text: str) -> Point:
    """The point named by "T.I.step"; ValueError with the reason when `text` names none."""
    if type(text) is str:
        return _parse_cached(text)
    return _parse(text)


def format_time(point: Point) -> str:
    """The canonical "T.I.step" of a point; ValueError for a tuple that is no point of this ruleset."""
    if type(point) is tuple and len(point) == 3 and type(point[0]) is int and type(point[1]) is int \
            and type(point[2]) is int:  # exact: True == 1 would share a cached spelling
        return _format_cached(point)
    return _format(point)


# Game times are parsed and written many times per commit (entries, breaks, statuses, messages); a few thousand
# recent ones are kept (ValueErrors are not: lru_cache keeps only results).
@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Point:
    return _parse(text)


@lru_cache(maxsize=4096)
def _format_cached(point: Point) -> str:
    return _format(point)


def _parse(text: str) -> Point:
    if not isinstance(text, str):
        raise ValueError(f"game time must be a string like '1.12.move', got {type(text).__name__}")
    match = _SHAPE.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a game time like '1.12.move' (turn.impulse.step)")
    turn_text, impulse_text, name = match.groups()
    for part, what in ((turn_text, "turn"), (impulse_text, "impulse")):
        if len(part) > 1 and part.startswith("0"):
            raise ValueError(f"{text!r}: {what} {part!r} has a leading zero")
    if len(turn_text) > 3 or not 1 <= int(turn_text) <= MAX_TURNS:
        raise ValueError(f"{text!r}: turn must be 1..{MAX_TURNS}")
    if len(impulse_text) > 2 or int(impulse_text) > IMPULSES:
        raise ValueError(f"{text!r}: impulse must be 0..{IMPULSES}")
    if name not in _STEP_INDEX:
        raise ValueError(f"{text!r}: unknown step {name!r}; steps are {', '.join(STEPS)}")
    point = (int(turn_text), int(impulse_text), _STEP_INDEX[name])
    _check(point, text)
    return point


def _check(point: tuple[int, int, int], text: str) -> None:
    """Which impulse each step may have: alloc only at 0, final only at 32, the others at 1..32."""
    _, impulse, step = point
    if step == ALLOC and impulse != 0:
        raise ValueError(f"{text!r}: alloc is only at impulse 0 (write 'T.0.alloc')")
    if step == FINAL and impulse != IMPULSES:
        raise ValueError(f"{text!r}: final is only after impulse {IMPULSES} (write 'T.{IMPULSES}.final')")
    if step in IMPULSE_STEPS and not 1 <= impulse <= IMPULSES:
        raise ValueError(f"{text!r}: {STEPS[step]} needs an impulse 1..{IMPULSES}")


def _format(point: Point) -> str:
    if (
        not isinstance(point, tuple)
        or len(point) != 3
        or not all(isinstance(p, int) and not isinstance(p, bool) for p in point)
        or not 0 <= point[2] < len(STEPS)
        or not 1 <= point[0] <= MAX_TURNS
    ):
        raise ValueError(f"{point!r} is not a tactical/1 game time")
    turn, impulse, step = point
    text = f"{turn}.{impulse}.{STEPS[step]}"
    _check((turn, impulse, step), text)
    return text


def step_name(point: Point) -> str:
    """The step's name ("move", "fire", …) of a point."""
    return STEPS[point[2]]


def turns_of(setup: Mapping[str, Any]) -> int:
    """setup.turns, checked: how many turns the game lasts."""
    turns = setup.get("turns")
    if not isinstance(turns, int) or isinstance(turns, bool) or not 1 <= turns <= MAX_TURNS:
        raise ValueError(f"setup.turns must be a whole number 1..{MAX_TURNS}, got {turns!r}")
    return turns


def first_step(setup: Mapping[str, Any]) -> Point:
    """The first step of every game: turn 1's energy allocation, "1.0.alloc"."""
    return (1, 0, ALLOC)


def next_step(setup: Mapping[str, Any], point: Point) -> Point | None:
    """The step after `point`; None after the last turn's final step."""
    turn, impulse, step = point
    if step == ALLOC:
        return (turn, 1, MOVE)
    if step == FINAL:
        return (turn + 1, 0, ALLOC) if turn < turns_of(setup) else None
    if step == DAMAGE:
        return (turn, impulse + 1, MOVE) if impulse < IMPULSES else (turn, IMPULSES, FINAL)
    return (turn, impulse, step + 1)


def is_simultaneous(point: Point) -> bool:
    """Direct fire and the activity step (seeking weapon launches) are simultaneous (DESIGN §4.6, §7.1; seed 000
    §7.A): their declared actions open an action auction when they meet a condition (docs/tactical.md)."""
    return point[2] in (FIRE, ACTIVITY)


def period_of(point: Point) -> str:
    """The report file stem of a point's turn: "turn-01" (two digits at least)."""
    return f"turn-{point[0]:02d}"
