"""Where things sit on the `tactical/1` board (DESIGN §7.1): hex centres, corners, sides and regions in SVG
user units.

Columns are vertical and even columns sit half a hex lower, so hexes are *flat-topped*: a hex has flat sides on
top and bottom, its neighbour in facing A is straight up and the facings go clockwise in steps of 60°. With
`SIZE` the distance from a hex's centre to its corners and `HEIGHT` = √3·SIZE, hex (column, row) has its centre
at x = 1.5·SIZE·(column − 1) + SIZE, y = HEIGHT·(row − 1) + HEIGHT/2, plus HEIGHT/2 in even columns. The centre
of `hexmap.neighbour(hex, f)` then lies exactly one HEIGHT away in the direction of facing f (tests/test_render.py
checks this for every facing, in odd and even columns).
"""

from __future__ import annotations

import math

from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.hexmap import Hex

SIZE = 30.0  # centre to corner, in SVG user units
HEIGHT = math.sqrt(3) * SIZE  # flat side to flat side

Point2 = tuple[float, float]


def centre(hex_: Hex) -> Point2:
    """The centre of a hex in SVG user units (y grows downwards)."""
    column, row = hex_
    x = 1.5 * SIZE * (column - 1) + SIZE
    y = HEIGHT * (row - 1) + HEIGHT / 2 + (HEIGHT / 2 if column % 2 == 0 else 0.0)
    return x, y


def facing_vector(facing: int) -> Point2:
    """The unit vector of facing 0..5 (A up, then clockwise by 60°)."""
    return bearing_vector(60.0 * (facing % 6))


def bearing_vector(degrees: float) -> Point2:
    """The unit vector of a bearing in degrees (0 up, clockwise on screen)."""
    angle = math.radians(degrees)
    return math.sin(angle), -math.cos(angle)


def corner(hex_: Hex, k: int) -> Point2:
    """Corner k (0 east, then clockwise on screen by 60°) of a flat-topped hex."""
    x, y = centre(hex_)
    angle = math.radians(60 * (k % 6))
    return x + SIZE * math.cos(angle), y + SIZE * math.sin(angle)


def edge(hex_: Hex, facing: int) -> tuple[Point2, Point2]:
    """The side of a hex shared with its neighbour in direction `facing`."""
    return corner(hex_, 4 + facing), corner(hex_, 5 + facing)


def within(hex_: Hex, radius: int) -> set[Hex]:
    """Every hex at range ≤ `radius` of `hex_` (on the map or not)."""
    q0, r0 = hexmap.to_axial(hex_)
    found = set()
    for dq in range(-radius, radius + 1):
        for dr in range(max(-radius, -dq - radius), min(radius, -dq + radius) + 1):
            found.add(hexmap.from_axial(q0 + dq, r0 + dr))
    return found
