"""The `tactical/1` map as SVG (DESIGN §7.1; `pbem render`, and each handoff of `pbem log --html`).

Geometry. Columns are vertical and even columns sit half a hex lower, so hexes are *flat-topped*: a hex has
flat sides on top and bottom, its neighbour in facing A is straight up and the facings go clockwise in steps
of 60°. With `SIZE` the distance from a hex's centre to its corners and `HEIGHT` = √3·SIZE, hex (column, row)
has its centre at x = 1.5·SIZE·(column − 1) + SIZE, y = HEIGHT·(row − 1) + HEIGHT/2, plus HEIGHT/2 in even
columns. The centre of `hexmap.neighbour(hex, f)` then lies exactly one HEIGHT away in the direction of facing
f (tests/test_render.py checks this for every facing, in odd and even columns).

What is drawn: every hex of the view with its number XXYY; each unit on the map as a disc in its owner's colour
with its id and an arrow for its facing (units that disengaged, were destroyed or have impacted are not on the
map and are not drawn); seeking weapons as smaller dashed diamonds; and `RangeRing`s, the `range` break
conditions of the players who hold pending breaks, as the outline of every hex within that range of their unit.

A large map is cropped to the units and their rings, with a margin; hexes keep their real numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.hexmap import Hex
from pbem.rulesets.tactical.state import TacticalState, Unit

SIZE = 30.0  # centre to corner, in SVG user units
HEIGHT = math.sqrt(3) * SIZE  # flat side to flat side
BAND = 44.0  # the title band above the map
CROP_ABOVE = 400  # maps with more hexes than this are cropped to what matters
MARGIN = 3  # hexes around the units (and rings) when cropping
MIN_VIEW = (12, 10)  # columns, rows: a cropped view is never smaller (unless the map is)
PALETTE = ("#1f5fbf", "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#16817a", "#7f6000", "#555555")
UNKNOWN_OWNER = "#777777"


@dataclass(frozen=True)
class RangeRing:
    """A `{range: N}` break condition drawn around one of its player's units: every hex within `radius`."""

    player: str
    unit: str
    radius: int
    label: str


# --- geometry ------------------------------------------------------------------------------------------------

def centre(hex_: Hex) -> tuple[float, float]:
    """The centre of a hex in SVG user units (y grows downwards)."""
    column, row = hex_
    x = 1.5 * SIZE * (column - 1) + SIZE
    y = HEIGHT * (row - 1) + HEIGHT / 2 + (HEIGHT / 2 if column % 2 == 0 else 0.0)
    return x, y


def facing_vector(facing: int) -> tuple[float, float]:
    """The unit vector of facing 0..5 (A up, then clockwise by 60°)."""
    angle = math.radians(60 * (facing % 6))
    return math.sin(angle), -math.cos(angle)


def corner(hex_: Hex, k: int) -> tuple[float, float]:
    """Corner k (0 east, then clockwise on screen by 60°) of a flat-topped hex."""
    x, y = centre(hex_)
    angle = math.radians(60 * (k % 6))
    return x + SIZE * math.cos(angle), y + SIZE * math.sin(angle)


def edge(hex_: Hex, facing: int) -> tuple[tuple[float, float], tuple[float, float]]:
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


# --- what to draw --------------------------------------------------------------------------------------------

def range_rings(state: TacticalState, breaks: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[RangeRing]:
    """The `range` conditions of the given players (player -> his break conditions) as rings around each of his
    units on the map (only around `mine` when the condition names one; seeking weapons get none)."""
    rings = []
    for player, conditions in breaks.items():
        for condition in conditions:
            radius = condition.get("range") if isinstance(condition, Mapping) else None
            if not isinstance(radius, int) or isinstance(radius, bool) or radius < 0:
                continue
            label = f"{player}: range {radius}" + (f" of {condition['unit']}" if condition.get("unit") else "")
            for unit in state.units:
                if (unit.owner == player and unit.active and unit.seeking is None
                        and condition.get("mine", unit.id) == unit.id):
                    rings.append(RangeRing(player, unit.id, radius, label))
    return rings


def colours(players: Sequence[str]) -> dict[str, str]:
    """Each player's colour, by table order."""
    return {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(players)}


def view_of(state: TacticalState, rings: Sequence[RangeRing] = (),
            crop: bool | None = None) -> tuple[int, int, int, int]:
    """The hexes to draw as (first column, last column, first row, last row): the whole map, or for a map of
    more than CROP_ABOVE hexes (or `crop=True`) the units and their rings with a MARGIN, clamped to the map."""
    whole = (1, state.columns, 1, state.rows)
    if crop is False or (crop is None and state.columns * state.rows <= CROP_ABOVE):
        return whole
    hexes = [u.hex for u in state.units if u.active and u.hex is not None]
    position = {u.id: u.hex for u in state.units if u.active and u.hex is not None}
    for ring in rings:
        if ring.unit in position:
            hexes.extend(_ring_box(position[ring.unit], ring.radius))
    if not hexes:
        return whole
    c0 = min(h[0] for h in hexes) - MARGIN
    c1 = max(h[0] for h in hexes) + MARGIN
    r0 = min(h[1] for h in hexes) - MARGIN
    r1 = max(h[1] for h in hexes) + MARGIN
    c0, c1 = _at_least(c0, c1, MIN_VIEW[0], state.columns)
    r0, r1 = _at_least(r0, r1, MIN_VIEW[1], state.rows)
    return c0, c1, r0, r1


def _ring_box(hex_: Hex, radius: int) -> list[Hex]:
    column, row = hex_
    return [(column - radius, row), (column + radius, row), (column, row - radius), (column, row + radius)]


def _at_least(low: int, high: int, size: int, limit: int) -> tuple[int, int]:
    """[low, high] widened to `size` (at most the map), then shifted and clamped into 1..limit."""
    size = min(size, limit)
    while high - low + 1 < size:
        if (high - low) % 2:
            low -= 1
        else:
            high += 1
    if low < 1:
        low, high = 1, high + (1 - low)
    if high > limit:
        low, high = low - (high - limit), limit
    return max(low, 1), min(high, limit)


# --- drawing -------------------------------------------------------------------------------------------------

def render(state: TacticalState, rings: Sequence[RangeRing] = (), title: str = "",
           crop: bool | None = None) -> str:
    """The map as a standalone SVG document (see the module docstring for what is drawn)."""
    c0, c1, r0, r1 = view_of(state, rings, crop)
    paint = colours(state.players)
    left = centre((c0, 1))[0] - SIZE - 2
    right = centre((c1, 1))[0] + SIZE + 2
    top = HEIGHT * (r0 - 1) - BAND
    bottom = HEIGHT * r1 + HEIGHT / 2 + 2
    width, height = right - left, bottom - top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{left:.1f} {top:.1f} {width:.1f} {height:.1f}" '
           f'width="{width:.0f}" height="{height:.0f}" font-family="DejaVu Sans, Verdana, sans-serif" '
           f'class="pbem-tactical">',
           f"<title>{escape(title or 'tactical map')}</title>",
           f'<rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{height:.1f}" fill="#ffffff"/>',
           f'<rect x="{left:.1f}" y="{top + BAND:.1f}" width="{width:.1f}" height="{height - BAND:.1f}" '
           f'fill="#f4f1e8"/>']
    out.extend(_band(title, state.players, paint, left, right, top))
    out.extend(_grid(c0, c1, r0, r1))
    position = {u.id: u.hex for u in state.units if u.active and u.hex is not None}
    for ring in rings:
        if ring.unit in position:
            out.extend(_ring(position[ring.unit], ring, paint.get(ring.player, UNKNOWN_OWNER)))
    out.extend(_units([u for u in state.units if u.active and u.hex is not None], paint))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _band(title: str, players: Sequence[str], paint: Mapping[str, str], left: float, right: float,
          top: float) -> list[str]:
    out = [f'<text x="{left + 8:.1f}" y="{top + 27:.1f}" font-size="17" font-weight="bold" fill="#222">'
           f"{escape(title)}</text>"]
    x = right - 8
    for player in reversed(players):
        label = escape(player)
        x -= 9 * len(player) + 6
        out.append(f'<text x="{x:.1f}" y="{top + 27:.1f}" font-size="14" fill="#222">{label}</text>')
        x -= 20
        out.append(f'<rect x="{x:.1f}" y="{top + 15:.1f}" width="14" height="14" rx="3" '
                   f'fill="{paint[player]}"/>')
        x -= 10
    return out


def _grid(c0: int, c1: int, r0: int, r1: int) -> list[str]:
    half, step = HEIGHT / 2, SIZE / 2
    outline = []
    numbers = []
    for column in range(c0, c1 + 1):
        for row in range(r0, r1 + 1):
            x, y = centre((column, row))
            outline.append(f"M{x + SIZE:.1f} {y:.1f}l{-step:.1f} {half:.2f}h{-SIZE:.0f}l{-step:.1f} {-half:.2f}"
                           f" {step:.1f} {-half:.2f}h{SIZE:.0f}z")
            numbers.append(f'<text x="{x:.1f}" y="{y - half + 11:.1f}">{column:02d}{row:02d}</text>')
    return [f'<path d="{"".join(outline)}" fill="none" stroke="#b9b2a0" stroke-width="1"/>',
            '<g font-size="9" fill="#8a8474" text-anchor="middle">', *numbers, "</g>"]


def _ring(at: Hex, ring: RangeRing, colour: str) -> list[str]:
    region = within(at, ring.radius)
    path = []
    for hex_ in region:
        for facing in range(6):
            if hexmap.neighbour(hex_, facing) not in region:
                (x1, y1), (x2, y2) = edge(hex_, facing)
                path.append(f"M{x1:.1f} {y1:.1f}L{x2:.1f} {y2:.1f}")
    path.sort()  # the same picture gives the same text
    top = at
    for _ in range(ring.radius):
        top = hexmap.neighbour(top, 0)
    x, y = centre(top)
    return [f'<g class="pbem-ring" data-player={quoteattr(ring.player)} data-unit={quoteattr(ring.unit)} '
            f'data-range="{ring.radius}">',
            f'<path d="{"".join(path)}" fill="none" stroke="{colour}" stroke-width="2.5" '
            f'stroke-dasharray="7 4" stroke-linecap="round" opacity="0.85"/>',
            f'<text x="{x:.1f}" y="{y - HEIGHT / 2 - 4:.1f}" font-size="12" text-anchor="middle" '
            f'fill="{colour}">{escape(ring.label)}</text>',
            "</g>"]


def _units(units: Iterable[Unit], paint: Mapping[str, str]) -> list[str]:
    by_hex: dict[Hex, list[Unit]] = {}
    for unit in units:
        assert unit.hex is not None
        by_hex.setdefault(unit.hex, []).append(unit)
    out = []
    for hex_, here in sorted(by_hex.items()):
        x, y = centre(hex_)
        scale = 1.0 if len(here) == 1 else 0.75
        for i, unit in enumerate(here):
            dx = dy = 0.0
            if len(here) > 1:  # share the hex: around its centre
                angle = 2 * math.pi * i / len(here) - 3 * math.pi / 4
                dx, dy = 0.42 * SIZE * math.cos(angle), 0.42 * SIZE * math.sin(angle)
            out.extend(_unit(unit, x + dx, y + dy, scale, paint.get(unit.owner, UNKNOWN_OWNER)))
    return out


def _unit(unit: Unit, x: float, y: float, scale: float, colour: str) -> list[str]:
    vx, vy = facing_vector(unit.facing)
    px, py = -vy, vx  # perpendicular
    seeking = unit.seeking is not None
    body = (0.32 if seeking else 0.42) * SIZE * scale
    tip = (0.95 if not seeking else 0.8) * SIZE * scale
    head = 0.24 * SIZE * scale
    base_x, base_y = x + vx * (tip - head * 1.4), y + vy * (tip - head * 1.4)
    arrow = (f'<polygon points="{x + vx * tip:.1f},{y + vy * tip:.1f} {base_x + px * head:.1f},'
             f'{base_y + py * head:.1f} {base_x - px * head:.1f},{base_y - py * head:.1f}" fill="{colour}" '
             f'stroke="#ffffff" stroke-width="1"/>')
    shaft = (f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{base_x:.1f}" y2="{base_y:.1f}" stroke="{colour}" '
             f'stroke-width="{4 * scale:.1f}"/>')
    facing = hexmap.format_facing(unit.facing)
    attrs = (f'class="pbem-unit{" pbem-seeking" if seeking else ""}" data-unit={quoteattr(unit.id)} '
             f'data-owner={quoteattr(unit.owner)} data-hex="{hexmap.format_hex(unit.hex) if unit.hex else ""}" '
             f'data-facing="{facing}"')
    what = f"{unit.id} ({unit.owner}) facing {facing}" + (" — seeking weapon" if seeking else "")
    out = [f"<g {attrs}>", f"<title>{escape(what)}</title>", shaft, arrow]
    if seeking:
        d = body * 1.25
        out.append(f'<polygon points="{x:.1f},{y - d:.1f} {x + d:.1f},{y:.1f} {x:.1f},{y + d:.1f} '
                   f'{x - d:.1f},{y:.1f}" fill="#ffffff" stroke="{colour}" stroke-width="2.2" '
                   f'stroke-dasharray="3 2"/>')
        out.append(f'<text x="{x + d + 2:.1f}" y="{y - d + 2:.1f}" font-size="{11 * scale:.1f}" '
                   f'font-weight="bold" fill="{colour}">{escape(unit.id)}</text>')
    else:
        font = min(12.0, 24.0 / max(len(unit.id), 1)) * scale * 1.1
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{body:.1f}" fill="{colour}" stroke="#ffffff" '
                   f'stroke-width="1.5"/>')
        out.append(f'<text x="{x:.1f}" y="{y + font * 0.36:.1f}" font-size="{font:.1f}" font-weight="bold" '
                   f'fill="#ffffff" text-anchor="middle">{escape(unit.id)}</text>')
    out.append("</g>")
    return out
