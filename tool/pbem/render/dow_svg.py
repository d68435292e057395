"""The `dow/1` board as SVG (DESIGN §7.2; `pbem render`, and each handoff of `pbem log --html`).

The board itself is drawn by the `diplomacy` engine's renderer (`DowRuleset.render_svg`, the only way pbem
reaches the engine). On top of it, from data alone:

* the orders of a phase as arrows: a move (or retreat) from its province to the target, a support as a dashed
  line to what it supports, a convoy as a dotted one, a hold as a ring, a disband as a cross, a build as a
  square; and the same orders in words in a side panel;
* the relationship matrix in force (WAR 1 … ALLIED 5, LIMBO `*`), each cell coloured by its state, and the
  changes recognised but not yet in force;
* with a `viewer` power, each other power's territory coloured by its relationship with the viewer (red at
  war … green allied): what that power may do there (DESIGN §7.2 order legality) at a glance.

Where arrows start and end: the engine's unit placement where a unit stands, else the centroid of the
province's outline in the engine's map.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence
from xml.sax.saxutils import escape

from pbem.rulesets.dow.relations import ALLIED, FRIENDLY, HOSTILE, LIMBO, NEUTRAL, SYMBOL, WAR, Matrix
from pbem.rulesets.dow.ruleset import DowRuleset
from pbem.rulesets.dow.state import DowState

RELATION_COLOURS = {WAR: "#d7301f", HOSTILE: "#fc8d59", NEUTRAL: "#e0e0e0", FRIENDLY: "#a6d96a",
                    ALLIED: "#1a9850", LIMBO: "#9e7bb5"}
PANEL = 560.0  # width of the side panel, in the engine's user units
MAP_OFFSET = (-195.0, -170.0)  # the engine's MapLayer transform
_UNIT = re.compile(r'<use id="unit_([A-Z]{3})(?:/[A-Z]{2})?" x="([0-9.]+)" y="([0-9.]+)" height="([0-9.]+)" '
                   r'width="([0-9.]+)"')
_PATH = re.compile(r'<path class="([^"]*)" d="([^"]*)" id="_([a-z]{3})"')
# The engine's SVG names five seas differently from its orders.
SVG_NAMES = {"NAT": "NAO", "NRG": "NWG", "MID": "MAO", "GOL": "LYO", "TYN": "TYS"}
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_VIEWBOX = re.compile(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)" width="([0-9.]+)px"')


def render(state: DowState, orders: Mapping[str, Sequence[str]] | None = None, orders_phase: str = "",
           viewer: str | None = None, title: str = "") -> str:
    """The board with `orders` (power -> order texts, as given for `orders_phase`) and the relationships; a
    standalone SVG document (no XML prolog, so it can also be inlined in HTML)."""
    svg = DowRuleset().render_svg(state)
    svg = svg[svg.index("<svg"):]
    matrix = state.relations.in_force
    places = _places(svg)
    if viewer is not None and viewer in matrix.powers:
        svg = _recolour(svg, matrix, viewer)
    size = _VIEWBOX.search(svg)
    if size is None:  # pragma: no cover - the engine's map always has one
        raise ValueError("the engine's SVG has no viewBox")
    width, height, shown = float(size.group(1)), float(size.group(2)), float(size.group(3))
    svg = svg.replace(size.group(0), f'viewBox="0 0 {width + PANEL:.0f} {height:.0f}" '
                                     f'width="{shown * (width + PANEL) / width:.0f}px"', 1)
    extra = ['<g id="pbem-orders" class="pbem-orders">', *_arrows(orders or {}, places), "</g>",
             *_panel(state, orders or {}, orders_phase, viewer, title, width, height)]
    end = svg.rindex("</svg>")
    return svg[:end] + "\n".join(extra) + "\n</svg>\n"


# --- where things are ----------------------------------------------------------------------------------------

def _places(svg: str) -> dict[str, tuple[float, float]]:
    """Province code -> a point to draw at: the engine's unit placement, else the outline's centroid."""
    places: dict[str, tuple[float, float]] = {}
    for _cls, d, code in _PATH.findall(svg):
        point = _centroid(d)
        if point is not None:
            places[SVG_NAMES.get(code.upper(), code.upper())] = (point[0] + MAP_OFFSET[0], point[1] + MAP_OFFSET[1])
    for code, x, y, h, w in _UNIT.findall(svg):
        places[code] = (float(x) + float(w) / 2, float(y) + float(h) / 2)
    return places


def _centroid(d: str) -> tuple[float, float] | None:
    """The area centroid of the largest sub-path of an outline, its control points taken as a polygon."""
    best: tuple[float, float, float] | None = None
    for part in d.split("M")[1:]:
        numbers = [float(n) for n in _NUMBER.findall(part)]
        points = list(zip(numbers[0::2], numbers[1::2]))
        if len(points) < 3:
            continue
        area = cx = cy = 0.0
        for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):
            cross = x1 * y2 - x2 * y1
            area += cross
            cx += (x1 + x2) * cross
            cy += (y1 + y2) * cross
        if abs(area) < 1e-9:
            continue
        candidate = (abs(area) / 2, cx / (3 * area), cy / (3 * area))
        if best is None or candidate[0] > best[0]:
            best = candidate
    return None if best is None else (best[1], best[2])


def _recolour(svg: str, matrix: Matrix, viewer: str) -> str:
    """Every other power's territory filled with the colour of its state with the viewer."""
    def swap(match: re.Match[str]) -> str:
        owner = match.group(1)
        if owner in matrix.powers and owner != viewer:
            state = matrix.get(viewer, owner)
            return match.group(0).replace(f'class="{owner}"', f'class="pbem-rel-{state.lower()}"', 1)
        return match.group(0)

    style = "".join(f".pbem-rel-{s.lower()} {{fill:{c}; stroke:#000000; stroke-width:1}}\n"
                    for s, c in RELATION_COLOURS.items())
    svg = _PATH.sub(swap, svg)
    return svg.replace("]]></style>", style + "]]></style>", 1) if "]]></style>" in svg else svg


# --- orders ------------------------------------------------------------------------------------------------

def _arrows(orders: Mapping[str, Sequence[str]], places: Mapping[str, tuple[float, float]]) -> list[str]:
    out = ['<defs><marker id="pbem-arrowhead" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" '
           'markerHeight="5" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#111"/></marker></defs>']
    for power in sorted(orders):
        for text in orders[power]:
            out.extend(_order(text, places))
    return out


def _order(text: str, places: Mapping[str, tuple[float, float]]) -> list[str]:
    words = text.upper().split()
    if len(words) < 3 or words[0] not in ("A", "F"):
        return []
    at = places.get(words[1][:3])
    if at is None:
        return []
    verb, rest = words[2], words[3:]
    if verb in ("-", "R") and rest:
        to = places.get(rest[0][:3])
        return [_line(at, to, "#111", "", True)] if to else []
    if verb in ("S", "C") and len(rest) >= 2:
        helped = places.get(rest[1][:3])
        target = places.get(rest[3][:3]) if len(rest) >= 4 and rest[2] == "-" else helped
        if helped is None or target is None:
            return []
        dash = "10 6" if verb == "S" else "3 5"
        end = ((helped[0] + target[0]) / 2, (helped[1] + target[1]) / 2) if target != helped else helped
        return [_line(at, end, "#333", dash, False)]
    if verb == "H":
        return [f'<circle cx="{at[0]:.1f}" cy="{at[1]:.1f}" r="26" fill="none" stroke="#111" stroke-width="3"/>']
    if verb == "D":
        x, y = at
        return [f'<path d="M{x - 16:.1f} {y - 16:.1f}L{x + 16:.1f} {y + 16:.1f}M{x + 16:.1f} {y - 16:.1f}'
                f'L{x - 16:.1f} {y + 16:.1f}" stroke="#d7301f" stroke-width="5"/>']
    if verb == "B":
        return [f'<rect x="{at[0] - 24:.1f}" y="{at[1] - 24:.1f}" width="48" height="48" fill="none" '
                f'stroke="#111" stroke-width="3"/>']
    return []


def _line(a: tuple[float, float], b: tuple[float, float], colour: str, dash: str, head: bool) -> str:
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    marker = ' marker-end="url(#pbem-arrowhead)"' if head else ""
    return (f'<line x1="{a[0]:.1f}" y1="{a[1]:.1f}" x2="{b[0]:.1f}" y2="{b[1]:.1f}" stroke="{colour}" '
            f'stroke-width="4"{dashes}{marker} opacity="0.9"/>')


# --- the side panel: relationships and orders in words --------------------------------------------------------

def _panel(state: DowState, orders: Mapping[str, Sequence[str]], phase: str, viewer: str | None, title: str,
           left: float, height: float) -> list[str]:
    x0 = left + 20
    out = [f'<rect x="{left:.0f}" y="0" width="{PANEL:.0f}" height="{height:.0f}" fill="#fbfaf5"/>',
           '<g font-family="DejaVu Sans, Verdana, sans-serif" fill="#111">']
    y = 44.0
    if title:  # "game: where it stands" on two lines
        name, _, rest = title.partition(": ")
        out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="26" font-weight="bold">{escape(name)}</text>')
        if rest:
            y += 30
            out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="20">{escape(rest)}</text>')
        y += 42
    out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="22" font-weight="bold">Relationships in force</text>')
    if viewer:
        y += 26
        out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="17">the map shows them as {escape(viewer)} sees '
                   f'them</text>')
    y += 14
    matrix = state.relations.in_force
    powers = matrix.powers
    cell = 52.0
    for i, p in enumerate(powers):  # column heads
        out.append(f'<text x="{x0 + 110 + i * cell + cell / 2:.0f}" y="{y + 24:.0f}" font-size="18" '
                   f'text-anchor="middle">{escape(p[:3].upper())}</text>')
    y += 32
    for r, row in enumerate(powers):
        out.append(f'<text x="{x0:.0f}" y="{y + r * cell + 33:.0f}" font-size="18">{escape(row)}</text>')
        for c, col in enumerate(powers):
            cx, cy = x0 + 110 + c * cell, y + r * cell
            if row == col:
                out.append(f'<rect x="{cx:.0f}" y="{cy:.0f}" width="{cell - 3:.0f}" height="{cell - 3:.0f}" '
                           f'fill="#ffffff" stroke="#999"/>')
                continue
            s = matrix.get(row, col)
            out.append(f'<rect class="pbem-relation" data-pair="{row}-{col}" data-state="{s}" x="{cx:.0f}" '
                       f'y="{cy:.0f}" width="{cell - 3:.0f}" height="{cell - 3:.0f}" '
                       f'fill="{RELATION_COLOURS[s]}" stroke="#777"><title>{row}–{col}: {s}</title></rect>')
            out.append(f'<text x="{cx + (cell - 3) / 2:.0f}" y="{cy + 33:.0f}" font-size="22" '
                       f'text-anchor="middle">{SYMBOL[s]}</text>')
    y += len(powers) * cell + 30
    for i, s in enumerate((WAR, HOSTILE, NEUTRAL, FRIENDLY, ALLIED, LIMBO)):  # legend, two rows of three
        x, ly = x0 + (i % 3) * 170, y + (i // 3) * 26
        out.append(f'<rect x="{x:.0f}" y="{ly - 15:.0f}" width="18" height="18" fill="{RELATION_COLOURS[s]}" '
                   f'stroke="#777"/><text x="{x + 25:.0f}" y="{ly:.0f}" font-size="17">{SYMBOL[s]} {s.lower()}'
                   f'</text>')
    y += 62
    pending = state.relations.pending()
    if pending:
        out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="18">recognised, in force from the next '
                   f'retreats:</text>')
        for a, b, old, new in pending[:6]:
            y += 24
            out.append(f'<text x="{x0 + 16:.0f}" y="{y:.0f}" font-size="17">{escape(a)}–{escape(b)}: '
                       f'{old.lower()} → {new.lower()}</text>')
        y += 36
    out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="22" font-weight="bold">'
               f'{"Orders " + escape(phase) if phase else "Orders"}</text>')
    y += 8
    if not any(orders.values()):
        out.append(f'<text x="{x0:.0f}" y="{y + 28:.0f}" font-size="17" fill="#555">none shown</text>')
    for power in sorted(orders):
        if y > height - 40:
            break
        y += 30
        out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="18" font-weight="bold">{escape(power)}</text>')
        for text in orders[power]:
            y += 22
            if y > height - 20:
                break
            out.append(f'<text x="{x0 + 16:.0f}" y="{y:.0f}" font-size="16" class="pbem-order">'
                       f'{escape(text)}</text>')
    out.append("</g>")
    return out
