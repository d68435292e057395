"""The units on the `tactical/1` board (DESIGN §7.1; seed 000 §6 damage): each as a disc in its owner's colour with
its id, an arrow for its facing, its speed and the hull it has left, and its six shields as a ring around it.

The shield ring: shield #1 faces ahead, #2..#6 follow clockwise (rulesets/tactical/arcs.py `shields_facing`), so
segment n is centred on the bearing of facing + (n − 1)·60°. A segment at full strength is drawn solid in the
owner's colour; a damaged one is orange and thinner, with its strength left written beside it ("9/15"); a shield
down to 0 is a thin red dashed arc with "0". Full strength is the unit's setup value. A unit without shields has
no ring. A seeking weapon in flight is a smaller dashed diamond, without a ring.

Units sharing a hex are drawn smaller around its centre, so that each stays visible.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping
from xml.sax.saxutils import escape, quoteattr

from pbem.render.tactical_geometry import SIZE, Point2, bearing_vector, centre, facing_vector
from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.hexmap import Hex
from pbem.rulesets.tactical.state import Unit, destroyed

UNKNOWN_OWNER = "#777777"
DAMAGED = "#e67e00"
DOWN = "#c0392b"
RING = 0.62  # the shield ring's radius, in SIZEs
SEGMENT = 50.0  # degrees of arc per shield (60 with a gap between shields)
GONE_WORDS = {"destroyed": "destroyed", "disengaged": "left the map", "resigned": "resigned",
              "expended": "impacted", "dummy": "dummy, vanished"}  # a unit out of play, by its status


def full_shields(unit: Unit) -> tuple[int, ...]:
    """The shields' strengths at setup (what "damaged" is measured against); the current ones if unknown."""
    raw = unit.extra.get("shields")
    if isinstance(raw, (list, tuple)) and len(raw) == len(unit.shields):
        return tuple(int(v) if isinstance(v, int) else 0 for v in raw)
    return unit.shields


def full_hull(unit: Unit) -> int:
    """The hull at setup."""
    raw = unit.extra.get("hull")
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else unit.hull


def units_layer(units: Iterable[Unit], paint: Mapping[str, str], faint: Mapping[str, float] | None = None
                ) -> tuple[list[str], dict[str, Point2]]:
    """The units on the map (drawn, those in `faint` with that opacity: a cloak), and where each one's centre
    was drawn."""
    by_hex: dict[Hex, list[Unit]] = {}
    for unit in units:
        assert unit.hex is not None
        by_hex.setdefault(unit.hex, []).append(unit)
    out: list[str] = []
    where: dict[str, Point2] = {}
    for hex_, here in sorted(by_hex.items()):
        x, y = centre(hex_)
        scale = 1.0 if len(here) == 1 else 0.62
        for i, unit in enumerate(here):
            dx = dy = 0.0
            if len(here) > 1:  # share the hex: around its centre
                angle = 2 * math.pi * i / len(here) - 3 * math.pi / 4
                dx, dy = 0.45 * SIZE * math.cos(angle), 0.45 * SIZE * math.sin(angle)
            where[unit.id] = (x + dx, y + dy)
            out.extend(unit_mark(unit, x + dx, y + dy, scale, paint.get(unit.owner, UNKNOWN_OWNER),
                                 (faint or {}).get(unit.id)))
    return out, where


def _arc(x: float, y: float, radius: float, centre_bearing: float, span: float) -> str:
    (ax, ay), (bx, by) = (bearing_vector(centre_bearing - span / 2), bearing_vector(centre_bearing + span / 2))
    return (f"M{x + ax * radius:.1f} {y + ay * radius:.1f}A{radius:.1f} {radius:.1f} 0 0 1 "
            f"{x + bx * radius:.1f} {y + by * radius:.1f}")


def shield_ring(unit: Unit, x: float, y: float, scale: float, colour: str) -> list[str]:
    """The six shields as arcs around the unit (see the module docstring)."""
    if len(unit.shields) != 6:
        return []
    full = full_shields(unit)
    radius = RING * SIZE * scale
    out = [f'<g class="shield-ring" data-unit={quoteattr(unit.id)}>']
    for n, (now, whole) in enumerate(zip(unit.shields, full), start=1):
        bearing = 60.0 * ((unit.facing + n - 1) % 6)
        if now >= whole:
            cls, stroke, width, dash = "shield-segment", colour, 4.5, ""
        elif now > 0:
            cls, stroke, width, dash = "shield-segment damaged", DAMAGED, 3.0, ""
        else:
            cls, stroke, width, dash = "shield-segment down", DOWN, 1.6, ' stroke-dasharray="3 2"'
        out.append(f'<path class="{cls}" data-shield="{n}" data-strength="{now}" data-full="{whole}" '
                   f'd="{_arc(x, y, radius, bearing, SEGMENT)}" fill="none" stroke="{stroke}" '
                   f'stroke-width="{width * scale:.1f}"{dash}><title>shield #{n}: {now} of {whole}</title></path>')
        if now < whole:
            vx, vy = bearing_vector(bearing)
            tx, ty = x + vx * (radius + 9 * scale), y + vy * (radius + 9 * scale) + 3.5 * scale
            out.append(f'<text class="shield-value" data-shield="{n}" x="{tx:.1f}" y="{ty:.1f}" '
                       f'font-size="{9 * scale:.1f}" font-weight="bold" text-anchor="middle" fill="{stroke}" '
                       f'stroke="#ffffff" stroke-width="2.5" paint-order="stroke">{now}</text>')
    out.append("</g>")
    return out


def unit_mark(unit: Unit, x: float, y: float, scale: float, colour: str, opacity: float | None = None
              ) -> list[str]:
    """One unit: its ring, facing arrow, body, id, speed and hull (`opacity`: drawn faint, under a cloak)."""
    vx, vy = facing_vector(unit.facing)
    px, py = -vy, vx  # perpendicular
    seeking = unit.seeking is not None
    body = (0.26 if seeking else 0.36) * SIZE * scale
    tip = (0.8 if seeking else 0.95) * SIZE * scale
    head = 0.22 * SIZE * scale
    base_x, base_y = x + vx * (tip - head * 1.4), y + vy * (tip - head * 1.4)
    arrow = (f'<polygon class="facing" points="{x + vx * tip:.1f},{y + vy * tip:.1f} {base_x + px * head:.1f},'
             f'{base_y + py * head:.1f} {base_x - px * head:.1f},{base_y - py * head:.1f}" fill="{colour}" '
             f'stroke="#ffffff" stroke-width="1"/>')
    shaft = (f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{base_x:.1f}" y2="{base_y:.1f}" stroke="{colour}" '
             f'stroke-width="{4 * scale:.1f}"/>')
    facing = hexmap.format_facing(unit.facing)
    attrs = (f'class="pbem-unit{" pbem-seeking" if seeking else ""}" data-unit={quoteattr(unit.id)} '
             f'data-owner={quoteattr(unit.owner)} data-hex="{hexmap.format_hex(unit.hex) if unit.hex else ""}" '
             f'data-facing="{facing}" data-speed="{unit.speed}" data-hull="{unit.hull}"')
    lost = destroyed(unit)
    if lost:
        attrs += f' data-lost={quoteattr(" ".join(lost))}'
    if opacity is not None:
        attrs += f' opacity="{opacity:.2f}"'
    out = [f"<g {attrs}>", f"<title>{escape(describe(unit))}</title>"]
    out.extend(shield_ring(unit, x, y, scale, colour))
    out += [shaft, arrow]
    if seeking:
        d = body * 1.25
        out.append(f'<polygon points="{x:.1f},{y - d:.1f} {x + d:.1f},{y:.1f} {x:.1f},{y + d:.1f} '
                   f'{x - d:.1f},{y:.1f}" fill="#ffffff" stroke="{colour}" stroke-width="2.2" '
                   f'stroke-dasharray="3 2"/>')
        out.append(f'<text class="unit-id" x="{x + d + 2:.1f}" y="{y - d + 2:.1f}" font-size="{11 * scale:.1f}" '
                   f'font-weight="bold" fill="{colour}" stroke="#ffffff" stroke-width="2.5" '
                   f'paint-order="stroke">{escape(unit.id)}</text>')
    else:
        font = min(11.0, 22.0 / max(len(unit.id), 1)) * scale * 1.1
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{body:.1f}" fill="{colour}" stroke="#ffffff" '
                   f'stroke-width="1.5"/>')
        out.append(f'<text class="unit-id" x="{x:.1f}" y="{y + font * 0.36:.1f}" font-size="{font:.1f}" '
                   f'font-weight="bold" fill="#ffffff" text-anchor="middle">{escape(unit.id)}</text>')
    below = y + (RING * SIZE + 14) * scale
    info = [f'<tspan class="unit-speed">sp {unit.speed}</tspan>']
    if not seeking:
        info.append(f' <tspan class="unit-hull">h {unit.hull}</tspan>')
    out.append(f'<text class="unit-info" x="{x:.1f}" y="{below:.1f}" font-size="{9.5 * scale:.1f}" '
               f'text-anchor="middle" fill="#222" stroke="#f4f1e8" stroke-width="2.5" paint-order="stroke">'
               f'{"".join(info)}</text>')
    out.append("</g>")
    return out


def describe(unit: Unit) -> str:
    """One line for a unit: "CA (fed) 1417 facing B, speed 12, shields 15 9 …, hull 180 of 200"."""
    where = hexmap.format_hex(unit.hex) if unit.hex else "off the map"
    text = f"{unit.id} ({unit.owner}) {where} facing {hexmap.format_facing(unit.facing)}, speed {unit.speed}"
    if unit.seeking is not None:
        return text + f", {unit.seeking.type} launched by {unit.seeking.launcher}"
    if unit.shields:
        text += ", shields " + " ".join(str(s) for s in unit.shields)
    lost = destroyed(unit)
    return text + f", hull {unit.hull} of {full_hull(unit)}" + (f", lost {', '.join(lost)}" if lost else "")


def roster_line(unit: Unit) -> str:
    """A unit in the legend's roster: "CA fed B 12 · sh 15 9 15 15 15 15 · h 180/200" (or why it is gone)."""
    if unit.status != "active" or unit.hex is None:
        return f"{unit.id} {unit.owner}: {GONE_WORDS.get(unit.status, unit.status)}"
    head = f"{unit.id} {unit.owner} {hexmap.format_hex(unit.hex)}{hexmap.format_facing(unit.facing)} sp {unit.speed}"
    if unit.seeking is not None:
        return head + f" ({unit.seeking.type})"
    shields = " sh " + " ".join(str(s) for s in unit.shields) if unit.shields else ""
    lost = destroyed(unit)
    return head + shields + f" h {unit.hull}/{full_hull(unit)}" + (f" · lost {' '.join(lost)}" if lost else "")
