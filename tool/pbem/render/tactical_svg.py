"""The `tactical/1` board as SVG (DESIGN §7.1; `pbem render`, and each handoff of `pbem log --html`).

`render(state, rings, step, title=…)` draws one game point from data alone: the state where replay stopped,
the `RangeRing`s of the players holding pending breaks, and the `StepView` of the impulses before it (what the
services read from the record: trails, shots, revealed targets, units gone). Where things sit is
render/tactical_geometry.py; the units and their shield rings render/tactical_units.py; trails, fire lines,
seeking weapons and the marks of units gone render/tactical_step.py; the title band and the legend
render/tactical_legend.py.

What is drawn: every hex of the view with its number XXYY; each unit on the map with its facing, speed, hull and
shield ring; seeking weapons as smaller dashed diamonds with their path and, once revealed, a dotted line to their
target; the trails and shots of the last impulses; a mark where each unit out of play was last seen; and the
`range` break conditions as the outline of every hex within that range of their unit; tractor beams, cloaked
units and internal damage to systems (render/tactical_systems.py). Every name shown (units,
players, the title) is escaped: markup in a name is shown as text.

A large map is cropped to the units, their rings and the step's marks, with a margin; hexes keep their numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from pbem.render import tactical_legend, tactical_step, tactical_systems
from pbem.render.tactical_geometry import HEIGHT, SIZE, centre, corner, edge, facing_vector, within
from pbem.render.tactical_step import StepView
from pbem.render.tactical_units import units_layer
from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.hexmap import Hex
from pbem.rulesets.tactical.state import TacticalState

__all__ = ["HEIGHT", "SIZE", "RangeRing", "StepView", "centre", "colours", "corner", "edge", "facing_vector",
           "range_rings", "render", "view_of", "within"]
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


def view_of(state: TacticalState, rings: Sequence[RangeRing] = (), crop: bool | None = None,
            step: StepView | None = None) -> tuple[int, int, int, int]:
    """The hexes to draw as (first column, last column, first row, last row): the whole map, or for a map of
    more than CROP_ABOVE hexes (or `crop=True`) the units, their rings and the step's marks with a MARGIN,
    clamped to the map."""
    whole = (1, state.columns, 1, state.rows)
    if crop is False or (crop is None and state.columns * state.rows <= CROP_ABOVE):
        return whole
    hexes = [u.hex for u in state.units if u.active and u.hex is not None]
    hexes += [h for h in tactical_step.hexes_of(step) if hexmap.on_map(h, state.columns, state.rows)]
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

def render(state: TacticalState, rings: Sequence[RangeRing] = (), step: StepView | None = None, *,
           title: str = "", crop: bool | None = None) -> str:
    """One game point as a standalone SVG document (see the module docstring for what is drawn): `state` where
    replay stopped, `rings` of the players holding breaks, `step` what the impulses before it did (None: the
    board alone)."""
    c0, c1, r0, r1 = view_of(state, rings, crop, step)
    paint = colours(state.players)
    left = centre((c0, 1))[0] - SIZE - 2
    right = centre((c1, 1))[0] + SIZE + 2
    top = HEIGHT * (r0 - 1) - tactical_legend.BAND
    bottom = HEIGHT * r1 + HEIGHT / 2 + 2
    legend = tactical_legend.legend_of(state, step)
    subtitle = tactical_legend.subtitle(step)
    map_height = bottom - top - tactical_legend.BAND
    height = tactical_legend.BAND + max(map_height, legend.height)
    width = max(right - left + legend.width, tactical_legend.title_width(title, subtitle))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{left:.1f} {top:.1f} {width:.1f} {height:.1f}" '
           f'width="{width:.0f}" height="{height:.0f}" font-family="DejaVu Sans, Verdana, sans-serif" '
           f'class="pbem-tactical">',
           f"<title>{escape(title or 'tactical map')}</title>",
           f'<rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{height:.1f}" fill="#ffffff"/>',
           f'<rect class="map-area" x="{left:.1f}" y="{top + tactical_legend.BAND:.1f}" width="{right - left:.1f}" '
           f'height="{map_height:.1f}" fill="#f4f1e8"/>']
    out.extend(tactical_legend.band(title, subtitle, left, top, width))
    out.extend(_grid(c0, c1, r0, r1))
    position = {u.id: u.hex for u in state.units if u.active and u.hex is not None}
    for ring in rings:
        if ring.unit in position:
            out.extend(_ring(position[ring.unit], ring, paint.get(ring.player, UNKNOWN_OWNER)))
    cloaked = tactical_systems.cloaks(state)
    drawn, where = units_layer([u for u in state.units if u.active and u.hex is not None], paint,
                               {unit: tactical_systems.FAINT[how] for unit, how in cloaked.items()})
    labels: list[str] = []
    if step is not None:
        out.extend(tactical_step.trails(step, paint))
        out.extend(tactical_step.gone_marks(step, paint, (left, right)))
        lines, labels = tactical_step.fire_lines(step)
        out.extend(lines)
    out.extend(tactical_systems.tractor_beams(state, where, paint))
    out.extend(drawn)
    out.extend(tactical_systems.cloak_marks(cloaked, where))
    if step is not None:
        out.extend(tactical_step.targets(step, where))
        out.extend(tactical_systems.internal_marks(step.internal, where))
    out.extend(labels)
    out.extend(tactical_legend.panel(legend, paint, right, top + tactical_legend.BAND, height - tactical_legend.BAND))
    out.append("</svg>")
    return "\n".join(out) + "\n"


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
