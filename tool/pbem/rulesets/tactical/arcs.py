"""Directions on the hex map of `tactical/1` (DESIGN §7.1): firing arcs, the shield that faces an attacker, and
how far a hex lies off a unit's centreline.

Sectors. Around a hex, direction d (0..5 = A..F) owns the 60° sector centred on the line to its neighbour in
that direction: everything within 30° either side of it. The sector edges (at ±30°) run through the hex centres
"between" two directions (for A and B: the hexes 1 A + 1 B, 2 A + 2 B, … away), and a hex exactly on an edge
lies in both sectors; every other hex lies in exactly one; the origin hex itself lies in all six.

Arcs and shields are sectors counted from a unit's facing: relative direction k = (absolute direction − facing)
mod 6, written with the facing letters, so "A" is the unit's front, "B" its right front, … "F" its left front.
A weapon with arcs [F, A, B] covers the three front sectors (180°). Shield #n faces relative direction n − 1:
#1 the front, #2 the right front, #4 the rear, #6 the left front.

The test is exact and uses whole numbers only: a hex offset P lies in the sector spanned by the edge vectors a
and b (60° apart) iff P is a combination αa + βb with α, β ≥ 0, i.e. det(a, P) and det(P, b) have the sign of
det(a, b) or are zero. Axial coordinates are a linear image of the plane, so cones are preserved.
"""

from __future__ import annotations

from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.hexmap import Hex

# Axial unit steps (dq, dr) of directions A..F, clockwise (as in hexmap).
_STEP: tuple[tuple[int, int], ...] = ((0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0))
ALL_DIRECTIONS = frozenset(range(6))


def _det(a: tuple[int, int], b: tuple[int, int]) -> int:
    return a[0] * b[1] - a[1] * b[0]


def _edges(direction: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two edge vectors of a direction's sector: its step plus the step to each side."""
    here, left, right = _STEP[direction % 6], _STEP[(direction - 1) % 6], _STEP[(direction + 1) % 6]
    return (here[0] + left[0], here[1] + left[1]), (here[0] + right[0], here[1] + right[1])


def _offset(origin: Hex, other: Hex) -> tuple[int, int]:
    q0, r0 = hexmap.to_axial(origin)
    q1, r1 = hexmap.to_axial(other)
    return (q1 - q0, r1 - r0)


def sectors(origin: Hex, other: Hex) -> frozenset[int]:
    """The absolute directions (0..5) whose sector around `origin` holds `other`: one, two on an edge, all six
    for the same hex."""
    point = _offset(origin, other)
    if point == (0, 0):
        return ALL_DIRECTIONS
    found = set()
    for direction in range(6):
        a, b = _edges(direction)
        whole = _det(a, b)
        if _det(a, point) * whole >= 0 and _det(point, b) * whole >= 0:
            found.add(direction)
    return frozenset(found)


def relative_sectors(origin: Hex, facing: int, other: Hex) -> frozenset[int]:
    """The sectors holding `other` counted from a unit at `origin` facing `facing` (0 = its front)."""
    return frozenset((d - facing) % 6 for d in sectors(origin, other))


def in_arc(origin: Hex, facing: int, other: Hex, arcs: frozenset[int]) -> bool:
    """Whether `other` lies in one of the relative sectors `arcs` of a unit at `origin` facing `facing`
    (a hex on the edge between an arc sector and another counts as in arc; the unit's own hex is in every arc)."""
    return bool(relative_sectors(origin, facing, other) & arcs)


def shields_facing(target: Hex, facing: int, attacker: Hex) -> tuple[int, ...]:
    """The shield numbers (1..6) of a unit at `target` facing `facing` that face a hex `attacker`: one, or two
    when the attacker is on the edge between them (the caller chooses, see fire.shield_hit), in order."""
    return tuple(sorted(k + 1 for k in relative_sectors(target, facing, attacker)))


def ahead(origin: Hex, facing: int, steps: int) -> Hex:
    """The hex `steps` hexes straight ahead of `origin` in direction `facing`."""
    q, r = hexmap.to_axial(origin)
    dq, dr = _STEP[facing % 6]
    return hexmap.from_axial(q + steps * dq, r + steps * dr)


def centreline_offset(origin: Hex, facing: int, other: Hex) -> int:
    """How many hexes `other` lies off the centreline of a unit at `origin` facing `facing`: the range from
    `other` to the nearest hex of the centreline (the unit's own hex and every hex straight ahead of it).
    0 means dead ahead (or the unit's own hex); a target behind the unit is as far off as it is away."""
    reach = hexmap.distance(origin, other)
    return min(hexmap.distance(other, ahead(origin, facing, k)) for k in range(reach + 1))


def off_centre(origin: Hex, facing: int, other: Hex) -> tuple[int, int]:
    """How far `other` is from dead ahead of a unit at `origin` facing `facing`: (sectors, hexes). Sectors: 0 when
    it lies in the front sector A, 1 in B or F, 2 in C or E, 3 in the rear sector D (on an edge, the nearer);
    hexes: its centreline_offset. Compared as a pair, the bearing first."""
    turned = min(min(k, 6 - k) for k in relative_sectors(origin, facing, other))
    return turned, centreline_offset(origin, facing, other)


def mirrored(through: Hex, other: Hex) -> Hex:
    """The hex as far beyond `through` as `other` is before it (other → through → result in a straight line)."""
    qt, rt = hexmap.to_axial(through)
    qo, ro = hexmap.to_axial(other)
    return hexmap.from_axial(2 * qt - qo, 2 * rt - ro)
