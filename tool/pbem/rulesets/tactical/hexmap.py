"""The hex map of `tactical/1` (DESIGN §7.1): hexes "XXYY", facings A..F, neighbours and range.

Hexes are numbered by column XX and row YY from 0101. Columns are vertical and even columns sit half a hex
lower than odd ones, so a hex has a neighbour straight up (facing A) and straight down (D); facings go
clockwise: A up, B upper right, C lower right, D down, E lower left, F upper left. From 0505: A 0504, B 0604,
C 0605, D 0506, E 0405, F 0404; from 0606: A 0605, B 0706, C 0707, D 0607, E 0507, F 0506.

A hex is the pair (column, row) of ints. Neighbours and range work on any pair, on the map or not; whether a
hex is on the map is `on_map`'s question. Range is the hex distance, computed in axial (cube) coordinates:
q = column, r = row - (column + 1) // 2 (the shift that makes odd columns the raised ones).
"""

from __future__ import annotations

import re

Hex = tuple[int, int]

FACINGS = "ABCDEF"
MAX_MAP = 99  # "XXYY" has two digits per coordinate

# Axial steps (dq, dr) for facings A..F, in clockwise order.
_AXIAL_STEPS: tuple[tuple[int, int], ...] = ((0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0))
_HEX = re.compile(r"[0-9]{4}\Z", re.ASCII)


def parse_hex(text: str) -> Hex:
    """The hex named "XXYY" (column XX, row YY, each 01..99); ValueError with the reason otherwise."""
    if not isinstance(text, str) or _HEX.match(text) is None:
        raise ValueError(f"{text!r} is not a hex like '0510' (two digits column, two digits row)")
    column, row = int(text[:2]), int(text[2:])
    if column < 1 or row < 1:
        raise ValueError(f"{text!r}: columns and rows count from 01")
    return (column, row)


def format_hex(hex_: Hex) -> str:
    """The "XXYY" name of a hex with column and row 1..99."""
    column, row = hex_
    if not (1 <= column <= MAX_MAP and 1 <= row <= MAX_MAP):
        raise ValueError(f"{hex_!r} has no XXYY name")
    return f"{column:02d}{row:02d}"


def parse_facing(text: str) -> int:
    """Facing letter A..F -> 0..5; ValueError otherwise."""
    if not isinstance(text, str) or len(text) != 1 or text not in FACINGS:
        raise ValueError(f"{text!r} is not a facing (A..F)")
    return FACINGS.index(text)


def format_facing(facing: int) -> str:
    """Facing 0..5 -> letter A..F."""
    return FACINGS[facing % 6]


def turn_left(facing: int) -> int:
    """One facing step counter-clockwise (B -> A, A -> F)."""
    return (facing - 1) % 6


def turn_right(facing: int) -> int:
    """One facing step clockwise (A -> B, F -> A)."""
    return (facing + 1) % 6


def opposite(facing: int) -> int:
    """The facing pointing the other way (A <-> D)."""
    return (facing + 3) % 6


def to_axial(hex_: Hex) -> tuple[int, int]:
    """Offset (column, row) -> axial (q, r)."""
    column, row = hex_
    return (column, row - (column + 1) // 2)


def from_axial(q: int, r: int) -> Hex:
    """Axial (q, r) -> offset (column, row)."""
    return (q, r + (q + 1) // 2)


def neighbour(hex_: Hex, facing: int) -> Hex:
    """The adjacent hex in direction `facing` (0..5 = A..F)."""
    q, r = to_axial(hex_)
    dq, dr = _AXIAL_STEPS[facing % 6]
    return from_axial(q + dq, r + dr)


def distance(a: Hex, b: Hex) -> int:
    """Range between two hexes: the number of hex steps (0 for the same hex)."""
    qa, ra = to_axial(a)
    qb, rb = to_axial(b)
    dq, dr = qa - qb, ra - rb
    return max(abs(dq), abs(dr), abs(dq + dr))


def on_map(hex_: Hex, columns: int, rows: int) -> bool:
    """Whether a hex lies on a map of `columns` x `rows` hexes numbered from 0101."""
    column, row = hex_
    return 1 <= column <= columns and 1 <= row <= rows
