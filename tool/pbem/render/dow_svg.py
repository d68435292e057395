"""The `dow/1` board as SVG (DESIGN §7.2; `pbem render`, and each handoff of `pbem log --html`).

The board itself is drawn by the `diplomacy` engine's renderer (`DowRuleset.render_svg`, the only way pbem
reaches the engine). On top of it, from data alone:

* the orders of a phase (pbem.render.dow_orders): each in its power's colour, drawn by kind (a move or retreat
  an arrow, a support a dashed line to what it supports, a convoy a dotted one through the fleet, a hold a ring,
  a disband a cross, a build a square), marked failed where the engine's results say so; and the same orders in
  words in a side panel, every one of them (the panel grows rather than cut an order off). An order the phase
  voided (the engine refused it, or its power was in civil disorder) is drawn grey and dashed and struck through
  in the panel; an order the relationship table forbade (void too, and a warning) is drawn red with a cross on
  it and marked "forbidden" in the panel;
* the board's dislodged units beside their provinces (not under the unit that took their place), with their
  retreat options;
* the relationship matrix in force (WAR 1 … ALLIED 5, LIMBO `*`), each cell coloured by its state and showing
  its symbol, each power's row with its map colour and its supply centres and units; the changes recognised but
  not yet in force, under the phase they come into force from (`realised_from`);
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
from pbem.render import dow_orders
from pbem.render.dow_orders import ORDER_COLOURS, VERDICT_STYLES
from pbem.rulesets.dow import phases
from pbem.rulesets.dow.relations import ALLIED, FRIENDLY, HOSTILE, LIMBO, NEUTRAL, SYMBOL, WAR, Matrix
from pbem.rulesets.base import Point
from pbem.rulesets.dow.ruleset import DowRuleset
from pbem.rulesets.dow.state import DowState
from pbem.text import markup as escape

RELATION_COLOURS = {WAR: "#d7301f", HOSTILE: "#fc8d59", NEUTRAL: "#c0c0c0", FRIENDLY: "#a6d96a",
                    ALLIED: "#01665e", LIMBO: "#e7298a"}
# The engine's own territory colours (its named colours as hex), restated so that they are ours to keep apart
# from the relationship colours.
POWER_COLOURS = {"austria": "#c48f85", "england": "#9400d3", "france": "#4169e1", "germany": "#a08a75",
                 "italy": "#228b22", "russia": "#757d91", "turkey": "#b9a61c"}
OWN_COLOUR = "#f5c400"  # the viewer's own territory: "yours"
UNCOLOURED = "#faebd7"  # land nobody colours, supply centre or not (the engine's own colour for the others)
PANEL = 560.0  # width of the side panel, in the engine's user units
MAP_OFFSET = (-195.0, -170.0)  # the engine's MapLayer transform
_DISLODGED_USE = re.compile(r'<use id="dislodged_unit_[^"]*"[^>]*/>')  # the engine's, stacked under the attacker
_UNIT = re.compile(r'<use id="unit_([A-Z]{3})(?:/[A-Z]{2})?" x="([0-9.]+)" y="([0-9.]+)" height="([0-9.]+)" '
                   r'width="([0-9.]+)"')
_PATH = re.compile(r'<path class="([^"]*)" d="([^"]*)" id="_([a-z]{3})"')
# The engine's SVG names five seas differently from its orders.
SVG_NAMES = {"NAT": "NAO", "NRG": "NWG", "MID": "MAO", "GOL": "LYO", "TYN": "TYS"}
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_VIEWBOX = re.compile(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)" width="([0-9.]+)px"')
_HEIGHT = re.compile(r'height="([0-9.]+)px"')


Verdicts = Mapping[str, Mapping[str, str]]  # power -> order text -> "void" | "forbidden" (others: "ok")


MOMENTS = ("before", "after")  # a phase drawn on the positions it was played from, or on what it made of them


def render(state: DowState, orders: Mapping[str, Sequence[str]] | None = None, orders_phase: str = "",
           viewer: str | None = None, verdicts: Verdicts | None = None, title: str = "",
           results: Mapping[str, Sequence[str]] | None = None, moment: str = "",
           disbanded: Sequence[tuple[str, str]] = ()) -> str:
    """The board with `orders` (power -> order texts, as given for `orders_phase`, each judged by `verdicts`,
    each unit's result codes from the engine in `results`, by unit "A PAR" or province), its dislodged units
    beside their provinces with their retreat options, and the relationships; a standalone SVG document (no
    XML prolog, so it can also be inlined in HTML). `moment`: "before" (the board is the one the orders were
    given on), "after" (the board is what they made of it: the orders drawn lighter) or "" (not said).
    `disbanded`: (owner, unit) dislodged with nowhere to retreat, drawn beside their province as disbanded."""
    svg = DowRuleset().render_svg(state)
    svg = _DISLODGED_USE.sub("", svg[svg.index("<svg"):])
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
    codes = {_province(unit): tuple(c) for unit, c in (results or {}).items()}
    panel, used = _panel(state, orders, orders_phase, viewer, title, width, verdicts, codes, moment)
    total = max(height, used)  # never cut an order off: the panel grows the picture instead
    scale = shown / width
    svg = svg.replace(size.group(0), f'viewBox="0 0 {width + PANEL:.0f} {total:.0f}" '
                                     f'width="{shown * (width + PANEL) / width:.0f}px"', 1)
    svg = svg.replace(height_px.group(0), f'height="{total * scale:.0f}px"', 1)
    gone = [(power, unit, ()) for power, unit in disbanded]
    dislodged, spots = dow_orders.draw_dislodged([*state.board.dislodged, *gone], places)
    arrows = dow_orders.draw_orders(orders, places, verdicts, codes, spots, faint=moment == "after")
    if moment == "before":
        arrows += dow_orders.draw_to_be_dislodged(codes, places)
    moment_class = f" pbem-{moment}" if moment in MOMENTS else ""
    extra = [f'<g id="pbem-orders" class="pbem-orders{moment_class}" data-phase="{escape(orders_phase)}" '
             f'data-moment="{escape(moment)}">', *arrows, "</g>",
             '<g id="pbem-dislodged" class="pbem-dislodged">', *dislodged, "</g>",
             f'<rect x="{width:.0f}" y="0" width="{PANEL:.0f}" height="{total:.0f}" fill="#fbfaf5"/>', *panel]
    end = svg.rindex("</svg>")
    return svg[:end] + "\n".join(extra) + "\n</svg>\n"


def _province(unit: str) -> str:
    """"A PAR", "F STP/SC" or "PAR" -> "PAR"."""
    words = unit.upper().split()
    return words[-1][:3] if words else ""


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


# --- the side panel: relationships, centres and orders in words -------------------------------------------------

def _panel(state: DowState, orders: Mapping[str, Sequence[str]], phase: str, viewer: str | None, title: str,
           left: float, verdicts: Verdicts, codes: Mapping[str, Sequence[str]], moment: str
           ) -> tuple[list[str], float]:
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
        when = realised_from(state.phase)
        out.append(f'<text class="pbem-pending-head" x="{x0:.0f}" y="{y:.0f}" font-size="18">recognised, '
                   f'{"in force from " + when if when else "never in force (the game is over)"}:</text>')
        for a, b, old, new in pending[:6]:
            y += 24
            out.append(f'<text class="pbem-pending" data-pair="{escape(a)}-{escape(b)}" data-state="{new}" '
                       f'x="{x0 + 16:.0f}" y="{y:.0f}" font-size="17">{escape(a)}–{escape(b)}: '
                       f'{old.lower()} → {new.lower()}</text>')
        if len(pending) > 6:
            y += 24
            out.append(f'<text x="{x0 + 16:.0f}" y="{y:.0f}" font-size="17">… and {len(pending) - 6} more '
                       f'(pbem relations)</text>')
        y += 36
    heading = "Orders " + escape(phase) if phase else "Orders"
    heading += {"before": " · before adjudication", "after": " · after adjudication"}.get(moment, "")
    out.append(f'<text class="pbem-orders-head" x="{x0:.0f}" y="{y:.0f}" font-size="22" font-weight="bold">'
               f'{heading}</text>')
    y += 8
    y = _order_legend(out, x0, y, any(verdict_of(verdicts, p, o) != "ok" for p in orders for o in orders[p]))
    if not any(orders.values()):
        out.append(f'<text x="{x0:.0f}" y="{y + 28:.0f}" font-size="17" fill="#555">none shown</text>')
        return out + ["</g>"], y + 60
    columns = [y, y]  # two columns of powers, each power put in the shorter one
    for power in sorted(orders):
        if not orders[power]:
            continue
        side = 0 if columns[0] <= columns[1] else 1
        x, cy = x0 + side * 262, columns[side] + 28
        ink = dow_orders.colour_of(power)
        out.append(f'<line x1="{x:.0f}" y1="{cy - 7:.0f}" x2="{x + 22:.0f}" y2="{cy - 7:.0f}" stroke="{ink}" '
                   f'stroke-width="5"/><text x="{x + 30:.0f}" y="{cy:.0f}" font-size="19" font-weight="bold" '
                   f'fill="{ink}">{escape(power)}</text>')
        for text in orders[power]:
            cy += 23
            verdict = verdict_of(verdicts, power, text)
            colour = VERDICT_STYLES[verdict][0]
            style = (' text-decoration="line-through"' if verdict == "void"
                     else ' font-weight="bold"' if verdict == "forbidden" else "")
            mark = " ✗" if verdict == "forbidden" else ""
            order = dow_orders.parse(text)
            result = tuple(codes.get(order.at, ())) if order is not None and verdict == "ok" else ()
            bad = order is not None and dow_orders.failed(order, result)
            said = (f'<tspan fill="{dow_orders.FAILED_COLOUR}" font-size="15"> ✗ {escape(", ".join(result))}'
                    f'</tspan>') if bad else ""
            out.append(f'<text x="{x + 10:.0f}" y="{cy:.0f}" font-size="18" class="pbem-order" '
                       f'data-power="{escape(power)}" data-verdict="{verdict}" data-result="'
                       f'{escape(" ".join(result))}" data-failed="{"true" if bad else "false"}" fill="{colour}"'
                       f'{style}>{escape(text)}{mark}{said}</text>')
        columns[side] = cy + 6
    return out + ["</g>"], max(columns) + 30


def _order_legend(out: list[str], x0: float, y: float, judged: bool) -> float:
    """How orders are drawn, in two rows of samples; the verdicts' line when the phase voided or forbade any."""
    ink = dow_orders.LEGEND_INK
    samples = [("move", f'<line x1="0" y1="0" x2="26" y2="0" stroke="{ink}" stroke-width="4"/>'
                        f'{dow_orders.head((0, 0), (36, 0), ink, 12)}'),
               ("support", f'<line x1="0" y1="0" x2="34" y2="0" stroke="{ink}" stroke-width="4" '
                           f'stroke-dasharray="10 6"/>'),
               ("convoy", f'<line x1="0" y1="0" x2="34" y2="0" stroke="{ink}" stroke-width="4" '
                          f'stroke-dasharray="2 6" stroke-linecap="round"/>'),
               ("failed", f'<line x1="0" y1="0" x2="26" y2="0" stroke="{ink}" stroke-width="4"/>'
                          f'{dow_orders.head((0, 0), (26, 0), ink, 12, flat=True)}<path d="M22 -8L36 6M36 -8L22 6" '
                          f'stroke="{dow_orders.FAILED_COLOUR}" stroke-width="4"/>'),
               ("dislodged", f'<circle cx="10" cy="0" r="9" fill="#fff" stroke="{dow_orders.FAILED_COLOUR}" '
                             f'stroke-width="3"/><line x1="20" y1="0" x2="32" y2="0" stroke="{ink}" '
                             f'stroke-width="2" stroke-dasharray="5 4"/>{dow_orders.head((20, 0), (40, 0), ink, 9)}')]
    y += 30
    for i, (label, sample) in enumerate(samples):
        x, ly = x0 + (i % 3) * 175, y + (i // 3) * 26
        said = "dislodged: may retreat" if label == "dislodged" else label
        out.append(f'<g class="pbem-order-legend" data-shows="{label}" transform="translate({x:.0f} {ly - 5:.0f})">'
                   f'{sample}<text x="44" y="5" font-size="16">{said}</text></g>')
    y += 52
    if judged:
        out.append(f'<text x="{x0:.0f}" y="{y + 2:.0f}" font-size="15" fill="#444">'
                   f'<tspan fill="{VERDICT_STYLES["void"][0]}" text-decoration="line-through">void</tspan>: '
                   f'the unit held instead · <tspan fill="{VERDICT_STYLES["forbidden"][0]}" font-weight="bold">'
                   f'forbidden</tspan>: void, and a warning</text>')
        y += 24
    return y


def realised_from(phase: Point | None) -> str:
    """The phase from which changes recognised now are in force (seed 001: realised at the start of the Spring
    and Fall retreats, and at the end of the first half of Spring 1901), or "" when the game is over."""
    point = phase
    while point is not None and not phases.realises_relations(point):
        point = phases.next_step({}, point)
    after = phases.next_step({}, point) if point is not None else None
    return phases.format_time(after) if after is not None else ""
