"""The `dow/1` board as SVG (DESIGN §7.2; `pbem render`, and each handoff of `pbem log --html`).

The board itself is drawn by the `diplomacy` engine's renderer (`DowRuleset.render_svg`, the only way pbem
reaches the engine). On top of it, from data alone:

* the orders of a phase as arrows: a move (or retreat) from its province to the target, a support as a dashed
  line to what it supports, a convoy as a dotted one, a hold as a ring, a disband as a cross, a build as a
  square; and the same orders in words in a side panel, every one of them (the panel grows rather than cut an
  order off). An order the phase voided (the engine refused it, or its power was in civil disorder) is drawn
  grey and dashed and struck through in the panel; an order the relationship table forbade (void too, and a
  warning) is drawn red with a cross on it and marked "forbidden" in the panel;
* the relationship matrix in force (WAR 1 … ALLIED 5, LIMBO `*`), each cell coloured by its state and showing
  its symbol, each power's row with its map colour and its supply centres and units; the changes recognised but
  not yet in force;
* with a `viewer` power, each other power's territory coloured by its relationship with the viewer (red at
  war … teal allied): what that power may do there (DESIGN §7.2 order legality) at a glance; the viewer's own
  territory in a colour of its own ("yours"), uncoloured land in one plain colour.

The colours are chosen so that no power's map colour, nor "yours", nor uncoloured land, can be mistaken for a
relationship colour of the legend (tests/test_render.py measures their distances).

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

RELATION_COLOURS = {WAR: "#d7301f", HOSTILE: "#fc8d59", NEUTRAL: "#c0c0c0", FRIENDLY: "#a6d96a",
                    ALLIED: "#01665e", LIMBO: "#e7298a"}
# The engine's own territory colours (its named colours as hex), restated so that they are ours to keep apart
# from the relationship colours.
POWER_COLOURS = {"austria": "#c48f85", "england": "#9400d3", "france": "#4169e1", "germany": "#a08a75",
                 "italy": "#228b22", "russia": "#757d91", "turkey": "#b9a61c"}
OWN_COLOUR = "#f5c400"  # the viewer's own territory: "yours"
UNCOLOURED = "#faebd7"  # land nobody colours, supply centre or not (the engine's own colour for the others)
VERDICT_STYLES = {  # how an order is drawn: (colour, dash pattern); "ok" is what the phase carried out
    "ok": ("#111111", ""), "void": ("#8c8c8c", "6 6"), "forbidden": ("#d7301f", "")}
PANEL = 560.0  # width of the side panel, in the engine's user units
MAP_OFFSET = (-195.0, -170.0)  # the engine's MapLayer transform
_UNIT = re.compile(r'<use id="unit_([A-Z]{3})(?:/[A-Z]{2})?" x="([0-9.]+)" y="([0-9.]+)" height="([0-9.]+)" '
                   r'width="([0-9.]+)"')
_PATH = re.compile(r'<path class="([^"]*)" d="([^"]*)" id="_([a-z]{3})"')
# The engine's SVG names five seas differently from its orders.
SVG_NAMES = {"NAT": "NAO", "NRG": "NWG", "MID": "MAO", "GOL": "LYO", "TYN": "TYS"}
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_VIEWBOX = re.compile(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)" width="([0-9.]+)px"')
_HEIGHT = re.compile(r'height="([0-9.]+)px"')


Verdicts = Mapping[str, Mapping[str, str]]  # power -> order text -> "void" | "forbidden" (others: "ok")


def render(state: DowState, orders: Mapping[str, Sequence[str]] | None = None, orders_phase: str = "",
           viewer: str | None = None, verdicts: Verdicts | None = None, title: str = "") -> str:
    """The board with `orders` (power -> order texts, as given for `orders_phase`, each judged by `verdicts`)
    and the relationships; a standalone SVG document (no XML prolog, so it can also be inlined in HTML)."""
    svg = DowRuleset().render_svg(state)
    svg = svg[svg.index("<svg"):]
    matrix = state.relations.in_force
    places = _places(svg)
    svg = _recolour(svg, matrix, viewer if viewer in matrix.powers else None)
    size = _VIEWBOX.search(svg)
    height_px = _HEIGHT.search(svg)
    if size is None or height_px is None:  # pragma: no cover - the engine's map always has them
        raise ValueError("the engine's SVG has no viewBox or height")
    width, height, shown = float(size.group(1)), float(size.group(2)), float(size.group(3))
    orders = orders or {}
    verdicts = verdicts or {}
    panel, used = _panel(state, orders, orders_phase, viewer, title, width, verdicts)
    total = max(height, used)  # never cut an order off: the panel grows the picture instead
    scale = shown / width
    svg = svg.replace(size.group(0), f'viewBox="0 0 {width + PANEL:.0f} {total:.0f}" '
                                     f'width="{shown * (width + PANEL) / width:.0f}px"', 1)
    svg = svg.replace(height_px.group(0), f'height="{total * scale:.0f}px"', 1)
    extra = ['<g id="pbem-orders" class="pbem-orders">', *_arrows(orders, places, verdicts), "</g>",
             f'<rect x="{width:.0f}" y="0" width="{PANEL:.0f}" height="{total:.0f}" fill="#fbfaf5"/>', *panel]
    end = svg.rindex("</svg>")
    return svg[:end] + "\n".join(extra) + "\n</svg>\n"


def verdict_of(verdicts: Verdicts, power: str, order: str) -> str:
    """"ok", "void" or "forbidden" for one order of a power."""
    return verdicts.get(power, {}).get(order, "ok")


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


def _recolour(svg: str, matrix: Matrix, viewer: str | None) -> str:
    """Each power's territory in its own colour (no viewer), or (with a viewer) every other power's territory
    in the colour of its state with the viewer, the viewer's own as "yours" and uncoloured land plain."""
    def swap(match: re.Match[str]) -> str:
        owner = match.group(1)
        if viewer is None or owner == "water":
            return match.group(0)
        if owner in ("nopower", "neutral"):
            return match.group(0).replace(f'class="{owner}"', 'class="pbem-uncoloured"', 1)
        if owner == viewer:
            return match.group(0).replace(f'class="{owner}"', 'class="pbem-own"', 1)
        if owner in matrix.powers:
            state = matrix.get(viewer, owner)
            return match.group(0).replace(f'class="{owner}"', f'class="pbem-rel-{state.lower()}"', 1)
        return match.group(0)

    stroke = "stroke:#000000; stroke-width:1"
    style = "".join(f".{p} {{fill:{c}; {stroke}}}\n" for p, c in POWER_COLOURS.items())
    style += f".neutral {{fill:{UNCOLOURED}; {stroke}}}\n"  # the engine's grey of unowned centres read as NEUTRAL
    if viewer is not None:
        style += "".join(f".pbem-rel-{s.lower()} {{fill:{c}; {stroke}}}\n" for s, c in RELATION_COLOURS.items())
        style += f".pbem-own {{fill:{OWN_COLOUR}; {stroke}}}\n.pbem-uncoloured {{fill:{UNCOLOURED}; {stroke}}}\n"
        svg = _PATH.sub(swap, svg)
    return svg.replace("]]></style>", style + "]]></style>", 1) if "]]></style>" in svg else svg


# --- orders ------------------------------------------------------------------------------------------------

def _arrows(orders: Mapping[str, Sequence[str]], places: Mapping[str, tuple[float, float]],
            verdicts: Verdicts) -> list[str]:
    out = ["<defs>", *(f'<marker id="pbem-arrowhead-{v}" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" '
                       f'markerHeight="5" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="{c}"/>'
                       f'</marker>' for v, (c, _) in VERDICT_STYLES.items()), "</defs>"]
    for power in sorted(orders):
        for text in orders[power]:
            verdict = verdict_of(verdicts, power, text)
            drawn = _order(text, places, verdict)
            if drawn:
                out.append(f'<g class="pbem-arrow pbem-{verdict}" data-power="{escape(power)}" '
                           f'data-order="{escape(text)}" data-verdict="{verdict}">{"".join(drawn)}</g>')
    return out


def _order(text: str, places: Mapping[str, tuple[float, float]], verdict: str = "ok") -> list[str]:
    words = text.upper().split()
    if len(words) < 3 or words[0] not in ("A", "F"):
        return []
    at = places.get(words[1][:3])
    if at is None:
        return []
    colour, void_dash = VERDICT_STYLES[verdict]
    verb, rest = words[2], words[3:]
    drawn: list[str] = []
    end = at
    if verb in ("-", "R") and rest:
        to = places.get(rest[0][:3])
        if to is None:
            return []
        drawn.append(_line(at, to, colour, void_dash, verdict))
        end = to
    elif verb in ("S", "C") and len(rest) >= 2:
        helped = places.get(rest[1][:3])
        target = places.get(rest[3][:3]) if len(rest) >= 4 and rest[2] == "-" else helped
        if helped is None or target is None:
            return []
        dash = "10 6" if verb == "S" else "3 5"
        end = ((helped[0] + target[0]) / 2, (helped[1] + target[1]) / 2) if target != helped else helped
        drawn.append(_line(at, end, colour if verdict != "ok" else "#333", dash, None))
    elif verb == "H":
        dashes = f' stroke-dasharray="{void_dash}"' if void_dash else ""
        drawn.append(f'<circle cx="{at[0]:.1f}" cy="{at[1]:.1f}" r="26" fill="none" stroke="{colour}" '
                     f'stroke-width="3"{dashes}/>')
    elif verb == "D":
        x, y = at
        drawn.append(f'<path d="M{x - 16:.1f} {y - 16:.1f}L{x + 16:.1f} {y + 16:.1f}M{x + 16:.1f} {y - 16:.1f}'
                     f'L{x - 16:.1f} {y + 16:.1f}" stroke="{"#d7301f" if verdict == "ok" else colour}" '
                     f'stroke-width="5"/>')
    elif verb == "B":
        dashes = f' stroke-dasharray="{void_dash}"' if void_dash else ""
        drawn.append(f'<rect x="{at[0] - 24:.1f}" y="{at[1] - 24:.1f}" width="48" height="48" fill="none" '
                     f'stroke="{colour}" stroke-width="3"{dashes}/>')
    else:
        return []
    if verdict != "ok":  # a mark halfway: a cross for a forbidden order, a barred ring for a void one
        x, y = (at[0] + end[0]) / 2, (at[1] + end[1]) / 2
        if verdict == "forbidden":
            drawn.append(f'<path class="pbem-mark" d="M{x - 11:.1f} {y - 11:.1f}L{x + 11:.1f} {y + 11:.1f}'
                         f'M{x + 11:.1f} {y - 11:.1f}L{x - 11:.1f} {y + 11:.1f}" stroke="#ffffff" '
                         f'stroke-width="9"/><path d="M{x - 11:.1f} {y - 11:.1f}L{x + 11:.1f} {y + 11:.1f}'
                         f'M{x + 11:.1f} {y - 11:.1f}L{x - 11:.1f} {y + 11:.1f}" stroke="{colour}" '
                         f'stroke-width="5"/>')
        else:
            drawn.append(f'<circle class="pbem-mark" cx="{x:.1f}" cy="{y:.1f}" r="10" fill="#ffffff" '
                         f'stroke="{colour}" stroke-width="3"/><path d="M{x - 7:.1f} {y + 7:.1f}'
                         f'L{x + 7:.1f} {y - 7:.1f}" stroke="{colour}" stroke-width="3"/>')
    return drawn


def _line(a: tuple[float, float], b: tuple[float, float], colour: str, dash: str, head: str | None) -> str:
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    marker = f' marker-end="url(#pbem-arrowhead-{head})"' if head else ""
    return (f'<line x1="{a[0]:.1f}" y1="{a[1]:.1f}" x2="{b[0]:.1f}" y2="{b[1]:.1f}" stroke="{colour}" '
            f'stroke-width="4"{dashes}{marker} opacity="0.9"/>')


# --- the side panel: relationships, centres and orders in words -------------------------------------------------

def _panel(state: DowState, orders: Mapping[str, Sequence[str]], phase: str, viewer: str | None, title: str,
           left: float, verdicts: Verdicts) -> tuple[list[str], float]:
    """The panel's elements, and the height they need."""
    x0 = left + 20
    out = ['<g font-family="DejaVu Sans, Verdana, sans-serif" fill="#111">']
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
    board = state.board
    cell = 46.0
    grid = x0 + 118  # the matrix starts right of the row names and their colour swatches
    for i, p in enumerate(powers):  # column heads
        out.append(f'<text x="{grid + i * cell + cell / 2:.0f}" y="{y + 24:.0f}" font-size="17" '
                   f'text-anchor="middle">{escape(p[:3].upper())}</text>')
    right = grid + len(powers) * cell + 8
    out.append(f'<text x="{right + 26:.0f}" y="{y + 24:.0f}" font-size="17" text-anchor="middle" '
               f'font-weight="bold">SC</text>')
    out.append(f'<text x="{right + 72:.0f}" y="{y + 24:.0f}" font-size="17" text-anchor="middle">units</text>')
    y += 32
    for r, row in enumerate(powers):
        cy = y + r * cell
        out.append(f'<rect x="{x0:.0f}" y="{cy + 12:.0f}" width="16" height="18" '
                   f'fill="{POWER_COLOURS.get(row, "#ffffff")}" stroke="#555"/>')
        bold = ' font-weight="bold"' if row == viewer else ""
        out.append(f'<text x="{x0 + 22:.0f}" y="{cy + 28:.0f}" font-size="17"{bold}>{escape(row)}</text>')
        for c, col in enumerate(powers):
            cx = grid + c * cell
            if row == col:
                out.append(f'<rect x="{cx:.0f}" y="{cy:.0f}" width="{cell - 3:.0f}" height="{cell - 3:.0f}" '
                           f'fill="#ffffff" stroke="#999"/>')
                continue
            s = matrix.get(row, col)
            ink = "#ffffff" if s in (WAR, ALLIED, LIMBO) else "#111111"
            out.append(f'<rect class="pbem-relation" data-pair="{row}-{col}" data-state="{s}" x="{cx:.0f}" '
                       f'y="{cy:.0f}" width="{cell - 3:.0f}" height="{cell - 3:.0f}" '
                       f'fill="{RELATION_COLOURS[s]}" stroke="#777"><title>{row}–{col}: {s}</title></rect>')
            out.append(f'<text x="{cx + (cell - 3) / 2:.0f}" y="{cy + 30:.0f}" font-size="21" font-weight="bold" '
                       f'text-anchor="middle" fill="{ink}">{SYMBOL[s]}</text>')
        centres, units = len(board.centres_of(row)), len(board.units_of(row))
        out.append(f'<text class="pbem-centres" data-power="{row}" data-centres="{centres}" x="{right + 26:.0f}" '
                   f'y="{cy + 29:.0f}" font-size="21" font-weight="bold" text-anchor="middle">{centres}</text>')
        out.append(f'<text x="{right + 72:.0f}" y="{cy + 29:.0f}" font-size="18" text-anchor="middle" '
                   f'fill="#444">{units}</text>')
    y += len(powers) * cell + 26
    legend: list[tuple[str, str]] = [(RELATION_COLOURS[s], f"{SYMBOL[s]} {s.lower()}")
                                     for s in (WAR, HOSTILE, NEUTRAL, FRIENDLY, ALLIED, LIMBO)]
    if viewer:
        legend += [(OWN_COLOUR, f"yours ({viewer})"), (UNCOLOURED, "uncoloured")]
    for i, (colour, label) in enumerate(legend):  # three to a row
        x, ly = x0 + (i % 3) * 175, y + (i // 3) * 26
        out.append(f'<rect class="pbem-legend" x="{x:.0f}" y="{ly - 15:.0f}" width="18" height="18" '
                   f'fill="{colour}" stroke="#777"/><text x="{x + 25:.0f}" y="{ly:.0f}" font-size="17">'
                   f'{escape(label)}</text>')
    y += 26 * ((len(legend) + 2) // 3) + 14
    pending = state.relations.pending()
    if pending:
        out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="18">recognised, in force from the next '
                   f'retreats:</text>')
        for a, b, old, new in pending[:6]:
            y += 24
            out.append(f'<text x="{x0 + 16:.0f}" y="{y:.0f}" font-size="17">{escape(a)}–{escape(b)}: '
                       f'{old.lower()} → {new.lower()}</text>')
        if len(pending) > 6:
            y += 24
            out.append(f'<text x="{x0 + 16:.0f}" y="{y:.0f}" font-size="17">… and {len(pending) - 6} more '
                       f'(pbem relations)</text>')
        y += 36
    out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="22" font-weight="bold">'
               f'{"Orders " + escape(phase) if phase else "Orders"}</text>')
    if any(verdict_of(verdicts, p, o) != "ok" for p in orders for o in orders[p]):
        y += 22
        out.append(f'<text x="{x0:.0f}" y="{y:.0f}" font-size="15" fill="#444">'
                   f'<tspan fill="{VERDICT_STYLES["void"][0]}" text-decoration="line-through">void</tspan>: '
                   f'the unit held instead · <tspan fill="{VERDICT_STYLES["forbidden"][0]}" font-weight="bold">'
                   f'forbidden</tspan>: void, and a warning</text>')
    y += 8
    if not any(orders.values()):
        out.append(f'<text x="{x0:.0f}" y="{y + 28:.0f}" font-size="17" fill="#555">none shown</text>')
        return out + ["</g>"], y + 60
    columns = [y, y]  # two columns of powers, each power put in the shorter one
    for power in sorted(orders):
        if not orders[power]:
            continue
        col = 0 if columns[0] <= columns[1] else 1
        x, cy = x0 + col * 262, columns[col] + 28
        out.append(f'<text x="{x:.0f}" y="{cy:.0f}" font-size="19" font-weight="bold">{escape(power)}</text>')
        for text in orders[power]:
            cy += 23
            verdict = verdict_of(verdicts, power, text)
            colour = VERDICT_STYLES[verdict][0]
            style = (' text-decoration="line-through"' if verdict == "void"
                     else ' font-weight="bold"' if verdict == "forbidden" else "")
            mark = " ✗" if verdict == "forbidden" else ""
            out.append(f'<text x="{x + 10:.0f}" y="{cy:.0f}" font-size="18" class="pbem-order" '
                       f'data-power="{escape(power)}" data-verdict="{verdict}" fill="{colour}"{style}>'
                       f'{escape(text)}{mark}</text>')
        columns[col] = cy + 6
    return out + ["</g>"], max(columns) + 30
