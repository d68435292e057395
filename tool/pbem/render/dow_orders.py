"""The orders of one Diplomacy phase drawn on the engine's map, and the dislodged units beside their provinces
(docs/pictures.md, Diplomacy; DESIGN §7.2). Pure: order texts, places and the engine's results in, SVG elements
out.

Every order is a group `<g class="pbem-arrow pbem-VERDICT order KIND [failed]">` with `data-power`,
`data-order`, `data-verdict` and `data-result` (the engine's result codes), drawn in its power's colour
(`ORDER_COLOURS`):

* a move or retreat: an arrow from the unit to the province; a failed one (bounced, no convoy, the unit
  dislodged) stops short with a flat head and a cross;
* a support: a dashed line to the middle of the supported move's path, or a ring round the unit it holds;
  cut (or void, or its unit dislodged): a cross where it ends;
* a convoy: a dotted line from the army through the fleet to the army's goal; failed: a cross on the fleet;
* a hold: a ring (crossed when the unit was dislodged); a disband: a cross; a build: a square.

An order the phase voided or the relationship table forbade keeps the verdict's colour (`VERDICT_STYLES`): the
engine never saw it, so it has no result.

A dislodged unit (`Board.dislodged`, the engine's retreat options with it) is drawn beside its province,
`DISLODGED_OFFSET` from its centre, ringed, linked to it, with a thin arrow to each province it may retreat to
(`retreat-option`), or "disbanded" when it had none (the engine disbands it at once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from pbem.text import markup

Point = tuple[float, float]

# Dark and saturated, so that an arrow reads on any territory colour and on the sea; apart from each other and
# from the verdict colours (tests/test_dow_phase_map.py measures their distances).
ORDER_COLOURS = {"austria": "#7f0000", "england": "#6a1b9a", "france": "#1565c0", "germany": "#4e342e",
                 "italy": "#2e7d32", "russia": "#455a64", "turkey": "#b8860b"}
OTHER_COLOUR = "#111111"  # an order of a seat without a power of the map (never given by the rules)
VERDICT_STYLES = {  # how an order the phase did not carry out is drawn: (colour, dash pattern); "ok": its power's
    "ok": ("#111111", ""), "void": ("#8c8c8c", "6 6"), "forbidden": ("#d7301f", "")}
LEGEND_INK = "#444444"  # the samples of the legend: a shape, no power
FAILED_COLOUR = "#d7301f"  # the cross on a failed order
DISLODGED_OFFSET = (44.0, 34.0)  # from the province's point: beside the unit that took its place, not under it
# the engine's result codes (diplomacy.utils.order_results) that mean an order did not do what it said
_FAILS = {"move": {"bounce", "void", "no convoy", "disrupted", "dislodged"},
          "retreat": {"bounce", "void", "disband"},
          "support": {"cut", "void", "dislodged"}, "convoy": {"void", "no convoy", "disrupted", "dislodged"},
          "hold": {"dislodged", "void"}, "build": {"void"}, "disband": {"void"}}
KINDS = {"-": "move", "R": "retreat", "S": "support", "C": "convoy", "H": "hold", "D": "disband", "B": "build"}
SHORT = 22.0  # an arrow stops this far from a unit's point, so it does not cover the unit


@dataclass(frozen=True)
class Order:
    """One order taken apart: `at` the unit's province, `kind` (move, retreat, support, convoy, hold, disband,
    build), `to` where it goes; for a support or convoy `helped` the province of the unit helped and `to` where
    that unit goes (`to` == `helped` for a support to hold)."""

    kind: str
    unit: str
    at: str
    to: str = ""
    helped: str = ""


def parse(text: str) -> Order | None:
    """An order as given ("A PAR - BUR", "a par-bur", "F NTH C A LON - BEL", "A MAR S A PAR - BUR VIA"), or
    None when it is no order that can be drawn."""
    words = text.upper().replace("-", " - ").split()
    if len(words) < 3 or words[0] not in ("A", "F") or words[2] not in KINDS:
        return None
    kind, at, rest = KINDS[words[2]], words[1][:3], words[3:]
    unit = f"{words[0]} {words[1]}"
    if kind in ("move", "retreat"):
        return Order(kind, unit, at, rest[0][:3]) if rest and rest[0] not in ("-", "VIA") else None
    if kind in ("support", "convoy"):
        if len(rest) < 2 or rest[0] not in ("A", "F"):
            return None
        helped = rest[1][:3]
        to = rest[3][:3] if len(rest) >= 4 and rest[2] == "-" else helped
        return None if kind == "convoy" and to == helped else Order(kind, unit, at, to, helped)
    return Order(kind, unit, at)


def failed(order: Order, codes: Sequence[str]) -> bool:
    """Whether the engine's result codes for the order's unit say it did not do what it said."""
    return any(c in _FAILS.get(order.kind, ()) for c in codes)


def colour_of(power: str) -> str:
    return ORDER_COLOURS.get(power, OTHER_COLOUR)


def head(a: Point, b: Point, colour: str, size: float = 14.0, flat: bool = False) -> str:
    """An arrow head at `b` pointing along a→b (`flat`: a bar across it, for an order that failed), as a shape
    of its own rather than an SVG marker: a page that inlines many maps would share one marker id among all."""
    length = math.hypot(b[0] - a[0], b[1] - a[1]) or 1.0
    ux, uy = (b[0] - a[0]) / length, (b[1] - a[1]) / length
    nx, ny = -uy, ux
    if flat:
        w, d = size * 0.55, size * 0.22
        corners = [(b[0] + nx * w, b[1] + ny * w), (b[0] + nx * w - ux * d, b[1] + ny * w - uy * d),
                   (b[0] - nx * w - ux * d, b[1] - ny * w - uy * d), (b[0] - nx * w, b[1] - ny * w)]
    else:
        w = size * 0.5
        base = (b[0] - ux * size, b[1] - uy * size)
        corners = [b, (base[0] + nx * w, base[1] + ny * w), (base[0] - nx * w, base[1] - ny * w)]
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in corners)
    return f'<polygon class="pbem-{"flat" if flat else "head"}" points="{points}" fill="{colour}"/>'


def draw_orders(orders: Mapping[str, Sequence[str]], places: Mapping[str, Point],
                verdicts: Mapping[str, Mapping[str, str]], results: Mapping[str, Sequence[str]],
                starts: Mapping[str, Point], faint: bool = False) -> list[str]:
    """Every order of every power as a group (see the module docstring). `results`: province of the unit ->
    the engine's result codes; `starts`: where a dislodged unit is drawn (its retreat starts there); `faint`:
    the orders of a phase already carried out, drawn lighter under the result."""
    out: list[str] = []
    for power in sorted(orders):
        for text in orders[power]:
            verdict = verdicts.get(power, {}).get(text, "ok")
            order = parse(text)
            if order is None:
                continue
            codes = tuple(results.get(order.at, ())) if verdict == "ok" else ()
            bad = verdict == "ok" and failed(order, codes)
            drawn = _order(order, places, starts, verdict, colour_of(power), bad)
            if not drawn:
                continue
            classes = f"pbem-arrow pbem-{verdict} order {order.kind}" + (" failed" if bad else "")
            if verdict != "ok":
                classes += f" {verdict}"
            opacity = ' opacity="0.5"' if faint else ""
            out.append(f'<g class="{classes}" data-power="{markup(power)}" data-order="{markup(text)}" '
                       f'data-verdict="{verdict}" data-result="{markup(" ".join(codes))}"{opacity}>'
                       f'{"".join(drawn)}</g>')
    return out


def _order(order: Order, places: Mapping[str, Point], starts: Mapping[str, Point], verdict: str, own: str,
           bad: bool) -> list[str]:
    at = starts.get(order.at) or places.get(order.at)  # a dislodged unit's orders start where it is drawn
    if at is None:
        return []
    colour, void_dash = VERDICT_STYLES[verdict] if verdict != "ok" else (own, "")
    drawn: list[str] = []
    end = at
    if order.kind in ("move", "retreat"):
        to = places.get(order.to)
        if to is None:
            return []
        a, b = _beside(*_shorten(at, to, SHORT, SHORT + (18 if bad else 0)), 5.0)  # two moves head to head: apart
        drawn.append(_line(a, b, colour, void_dash, "flat" if bad else "head"))
        end = b
    elif order.kind in ("support", "convoy"):
        helped, target = places.get(order.helped), places.get(order.to)
        if helped is None or target is None:
            return []
        if order.kind == "support" and order.to == order.helped:  # to hold: a ring round the unit held
            end = _shorten(at, helped, 0, 26)[1]
            drawn.append(_line(at, end, colour, void_dash or "10 6", None))
            drawn.append(_ring(helped, 26, colour, "10 6"))
        elif order.kind == "support":  # to the middle of the supported move's path
            end = ((helped[0] + target[0]) / 2, (helped[1] + target[1]) / 2)
            drawn.append(_line(at, end, colour, void_dash or "10 6", None))
            drawn.append(f'<circle cx="{end[0]:.1f}" cy="{end[1]:.1f}" r="5" fill="{colour}"/>')
        else:  # the army's way through the fleet
            a, _ = _shorten(helped, at, SHORT, 0)
            _, b = _shorten(at, target, 0, SHORT)
            tip = _shorten(at, b, 0, 8)[1]  # the dots stop where the head begins
            drawn.append(f'<path d="M{a[0]:.1f} {a[1]:.1f}L{at[0]:.1f} {at[1]:.1f}L{tip[0]:.1f} {tip[1]:.1f}" '
                         f'fill="none" stroke="{colour}" stroke-width="4" stroke-dasharray="{void_dash or "2 6"}" '
                         f'stroke-linecap="round"/>')
            drawn.append(head(at, b, colour))
            end = at
    elif order.kind == "hold":
        drawn.append(_ring(at, 26, colour, void_dash))
        end = (at[0] + 26 * math.cos(math.pi / 4), at[1] - 26 * math.sin(math.pi / 4))
    elif order.kind == "disband":
        drawn.append(_cross(at, 16, "#d7301f" if verdict == "ok" else colour, 5))
    elif order.kind == "build":
        dashes = f' stroke-dasharray="{void_dash}"' if void_dash else ""
        drawn.append(f'<rect x="{at[0] - 24:.1f}" y="{at[1] - 24:.1f}" width="48" height="48" fill="none" '
                     f'stroke="{colour}" stroke-width="3"{dashes}/>')
    if bad:
        drawn.append(f'<g class="pbem-failed-mark">{_cross(end, 9, "#ffffff", 8)}'
                     f'{_cross(end, 9, FAILED_COLOUR, 4)}</g>')
    if verdict != "ok":  # a mark halfway: a cross for a forbidden order, a barred ring for a void one
        x, y = (at[0] + end[0]) / 2, (at[1] + end[1]) / 2
        if verdict == "forbidden":
            drawn.append(f'<g class="pbem-mark">{_cross((x, y), 11, "#ffffff", 9)}'
                         f'{_cross((x, y), 11, colour, 5)}</g>')
        else:
            drawn.append(f'<circle class="pbem-mark" cx="{x:.1f}" cy="{y:.1f}" r="10" fill="#ffffff" '
                         f'stroke="{colour}" stroke-width="3"/><path d="M{x - 7:.1f} {y + 7:.1f}'
                         f'L{x + 7:.1f} {y - 7:.1f}" stroke="{colour}" stroke-width="3"/>')
    return drawn


def draw_dislodged(dislodged: Sequence[tuple[str, str, Sequence[str]]], places: Mapping[str, Point]
                   ) -> tuple[list[str], dict[str, Point]]:
    """Each dislodged unit (power, unit, retreat options) beside its province with its retreat options; and
    where each was drawn, by province (a retreat order starts there)."""
    out: list[str] = []
    spots: dict[str, Point] = {}
    for power, unit, options in dislodged:
        province = unit[2:5].upper()
        at = places.get(province)
        if at is None:
            continue
        spot = (at[0] + DISLODGED_OFFSET[0], at[1] + DISLODGED_OFFSET[1])
        spots[province] = spot
        colour = colour_of(power)
        symbol = "DislodgedFleet" if unit.startswith("F") else "DislodgedArmy"
        parts = [f'<line class="dislodged-link" x1="{at[0]:.1f}" y1="{at[1]:.1f}" x2="{spot[0]:.1f}" '
                 f'y2="{spot[1]:.1f}" stroke="{FAILED_COLOUR}" stroke-width="2" stroke-dasharray="3 3"/>']
        for option in options:
            there = places.get(option[:3].upper())
            if there is None:
                continue
            a, b = _shorten(spot, there, SHORT, SHORT)
            tip = _shorten(a, b, 0, 6)[1]
            parts.append(f'<line class="retreat-option" data-to="{markup(option)}" x1="{a[0]:.1f}" '
                         f'y1="{a[1]:.1f}" x2="{tip[0]:.1f}" y2="{tip[1]:.1f}" stroke="{colour}" stroke-width="3" '
                         f'stroke-dasharray="6 4"/>{head(a, b, colour, 10)}')
        parts.append(f'<circle cx="{spot[0]:.1f}" cy="{spot[1]:.1f}" r="25" fill="#ffffff" fill-opacity="0.7" '
                     f'stroke="{FAILED_COLOUR}" stroke-width="3"/>')
        parts.append(f'<use x="{spot[0] - 20:.1f}" y="{spot[1] - 20:.1f}" height="40" width="40" '
                     f'xlink:href="#{symbol}" class="unit{markup(power)}"/>')
        if not options:
            parts.append(f'<text class="retreat-none" x="{spot[0]:.1f}" y="{spot[1] + 42:.1f}" font-size="16" '
                         f'text-anchor="middle" fill="{FAILED_COLOUR}" font-family="DejaVu Sans, sans-serif">'
                         f'disbanded</text>')
        out.append(f'<g class="unit dislodged" data-power="{markup(power)}" data-unit="{markup(unit)}" '
                   f'data-province="{province}" data-x="{spot[0]:.1f}" data-y="{spot[1]:.1f}" '
                   f'data-retreats="{markup(" ".join(options))}">{"".join(parts)}'
                   f'<title>{markup(unit)} ({markup(power)}) dislodged: may retreat to '
                   f'{markup(", ".join(options)) or "nowhere (disbanded)"}</title></g>')
    return out, spots


def draw_to_be_dislodged(results: Mapping[str, Sequence[str]], places: Mapping[str, Point]) -> list[str]:
    """On the positions before a phase: a red dashed ring round each unit the phase dislodged (by province),
    whether or not it was given an order."""
    out = []
    for province, codes in sorted(results.items()):
        at = places.get(province)
        if at is None or "dislodged" not in codes:
            continue
        out.append(f'<g class="to-be-dislodged" data-province="{markup(province)}">'
                   f'{_ring(at, 31, FAILED_COLOUR, "4 4")}<title>dislodged in this phase</title></g>')
    return out


def _shorten(a: Point, b: Point, start: float, end: float) -> tuple[Point, Point]:
    """The segment a→b with `start` cut off its start and `end` off its end (never more than 60% of it)."""
    length = math.hypot(b[0] - a[0], b[1] - a[1])
    if length < 1e-6:
        return a, b
    if start + end > length * 0.6:  # neighbours close together: keep the arrow long enough to be seen
        start, end = (length * 0.6 * start / (start + end), length * 0.6 * end / (start + end))
    ux, uy = (b[0] - a[0]) / length, (b[1] - a[1]) / length
    return (a[0] + ux * start, a[1] + uy * start), (b[0] - ux * end, b[1] - uy * end)


def _beside(a: Point, b: Point, by: float) -> tuple[Point, Point]:
    """The segment a→b moved `by` to its right."""
    length = math.hypot(b[0] - a[0], b[1] - a[1]) or 1.0
    nx, ny = -(b[1] - a[1]) / length * by, (b[0] - a[0]) / length * by
    return (a[0] + nx, a[1] + ny), (b[0] + nx, b[1] + ny)


def _line(a: Point, b: Point, colour: str, dash: str, tip: str | None) -> str:
    """A line a→b, ending in an arrow head (`tip` "head"), a flat one ("flat") or nothing (None)."""
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    end = _shorten(a, b, 0, 8)[1] if tip == "head" else b  # the line stops where the head begins
    shape = head(a, b, colour, flat=tip == "flat") if tip else ""
    return (f'<line x1="{a[0]:.1f}" y1="{a[1]:.1f}" x2="{end[0]:.1f}" y2="{end[1]:.1f}" stroke="{colour}" '
            f'stroke-width="4"{dashes} stroke-linecap="round" opacity="0.95"/>{shape}')


def _ring(at: Point, r: float, colour: str, dash: str) -> str:
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<circle cx="{at[0]:.1f}" cy="{at[1]:.1f}" r="{r:.0f}" fill="none" stroke="{colour}" '
            f'stroke-width="3"{dashes}/>')


def _cross(at: Point, r: float, colour: str, width: float) -> str:
    x, y = at
    return (f'<path d="M{x - r:.1f} {y - r:.1f}L{x + r:.1f} {y + r:.1f}M{x + r:.1f} {y - r:.1f}L{x - r:.1f} '
            f'{y + r:.1f}" stroke="{colour}" stroke-width="{width:g}" stroke-linecap="round"/>')
