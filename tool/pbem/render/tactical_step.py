"""What the last impulses did on the `tactical/1` board (DESIGN §7.1; seed 000 §2.C, §6): the data the services
hand over (`StepView`) and how it is drawn.

* `Trail`: where a unit was after each move of the last impulses, oldest first, ending where it is now (or where
  it was last seen, for a unit that has left the map): a polyline of its colour through the hex centres, a dot at
  each stop. A seeking weapon's trail is its path, drawn dashed.
* `FireLine`: one shot of those impulses (or declared at the fire step the game stands at, drawn dashed), from the attacker's hex to the target's at that fire step, with
  an arrowhead at the target and the label "UNIT WEAPON die N: D" (or "UNIT WEAPON missed" for a die lost to a
  withheld reveal); the full line (shield hit, internals) is its tooltip.
* `SeekingTarget`: a seeking weapon's target once its owner revealed it (never before: the target is sealed): a
  dotted line from the weapon to it, or, for a dummy, the word "dummy" beside it.
* `Gone`: a unit that has left play, at the hex where it was last seen: destroyed (a cross), disengaged or
  resigned (a dashed ring and an arrow off the board), a seeking weapon expended on impact (a burst) or a dummy
  that vanished (a faint ring).

Everything shown comes from the game's pure state and its record; nothing here reads git.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

from pbem.render.tactical_geometry import SIZE, Point2, centre
from pbem.render.tactical_units import GONE_WORDS
from pbem.rulesets.tactical.hexmap import Hex, format_hex

UNKNOWN_OWNER = "#777777"
FIRE_COLOUR = "#d4191c"


@dataclass(frozen=True)
class Trail:
    """A unit's hexes over the last impulses, oldest first, ending where it is (or was last seen)."""

    unit: str
    owner: str
    hexes: tuple[Hex, ...]
    seeking: bool = False


@dataclass(frozen=True)
class FireLine:
    """One scored shot: who fired which weapon from where at whom where, the die and the damage it did."""

    at: str
    attacker: str
    owner: str
    weapon: str
    target: str
    source: Hex
    aim: Hex
    range: int
    die: int | None  # None: the die was lost (its roller's reveal withheld), the shot missed
    damage: int
    shield: int
    shield_damage: int
    internal: int
    text: str = ""  # the log's line for the shot
    scored: bool = True  # False: declared at the firm point (a fire step waiting for dice or replies)

    @property
    def label(self) -> str:
        """What the line says on the board: "CA ph1 die 6: 4" (or "CA ph1 missed": the die was lost; "CA ph1
        declared" or "CA ph1 die 6, not yet scored" at a fire step still open)."""
        shot = f"{self.attacker} {self.weapon}"
        if not self.scored:
            return f"{shot} declared" if self.die is None else f"{shot} die {self.die}, not yet scored"
        return f"{shot} missed" if self.die is None else f"{shot} die {self.die}: {self.damage}"


@dataclass(frozen=True)
class SeekingTarget:
    """A seeking weapon's revealed target (`nature` "real" or "dummy")."""

    unit: str
    target: str
    nature: str = "real"


@dataclass(frozen=True)
class Gone:
    """A unit out of play (status destroyed, disengaged, resigned, expended or dummy), where it was last seen."""

    unit: str
    owner: str
    status: str
    hex: Hex
    at: str = ""  # the step at which it left play
    seeking: bool = False
    target: str = ""  # an expended seeking weapon: the target it hit (revealed at contact)
    warhead: int = 0  # and the damage its warhead did there


@dataclass(frozen=True)
class InternalHit:
    """One internal hit allocated by the damage table (damage.py `Allocated`): the box it took and what is left."""

    at: str
    unit: str
    die: int | None  # None: the die was lost (its roller's reveal withheld): the hull took it
    hit: str  # a box name, a weapon id or "hull"
    left: int
    text: str = ""  # the log's line for it

    @property
    def destroyed(self) -> bool:
        """A weapon or system whose last box this hit took."""
        return self.hit != "hull" and self.left <= 0



@dataclass(frozen=True)
class StepView:
    """What happened on the board in the impulses before the firm point: the window `since`..`until`."""

    since: str = ""
    until: str = ""
    trails: tuple[Trail, ...] = ()
    fire: tuple[FireLine, ...] = ()
    targets: tuple[SeekingTarget, ...] = ()
    gone: tuple[Gone, ...] = ()
    internal: tuple[InternalHit, ...] = ()  # the internal hits the damage table allocated in the window


def _points(hexes: Sequence[Hex]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in (centre(h) for h in hexes))


def trails(step: StepView, paint: Mapping[str, str]) -> list[str]:
    """The trails, under everything else on the map."""
    out = ['<g class="trails">']
    for trail in step.trails:
        if len(trail.hexes) < 2 or all(h == trail.hexes[0] for h in trail.hexes):
            continue
        colour = paint.get(trail.owner, UNKNOWN_OWNER)
        dash = ' stroke-dasharray="5 4"' if trail.seeking else ""
        cls = "trail seeking-path" if trail.seeking else "trail"
        out.append(f'<g class={quoteattr(cls)} data-unit={quoteattr(trail.unit)}>')
        out.append(f"<title>{escape(trail.unit)}: {escape(' → '.join(format_hex(h) for h in trail.hexes))}</title>")
        out.append(f'<polyline points="{_points(trail.hexes)}" fill="none" stroke="{colour}" stroke-width="3" '
                   f'stroke-linejoin="round" stroke-linecap="round" opacity="0.55"{dash}/>')
        for hex_ in trail.hexes[:-1]:
            x, y = centre(hex_)
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}" opacity="0.6"/>')
        out.append("</g>")
    out.append("</g>")
    return out


def targets(step: StepView, where: Mapping[str, Point2]) -> list[str]:
    """Dotted lines from each seeking weapon on the map to its revealed target; "dummy" beside a dummy."""
    out = ['<g class="seeking-targets">']
    for known in step.targets:
        if known.unit not in where:
            continue
        x1, y1 = where[known.unit]
        if known.nature == "dummy":
            out.append(f'<text class="seeking-target dummy" data-unit={quoteattr(known.unit)} x="{x1:.1f}" '
                       f'y="{y1 + 0.55 * SIZE:.1f}" font-size="10" font-style="italic" text-anchor="middle" '
                       f'fill="#555">dummy</text>')
            continue
        if known.target not in where:
            continue
        x2, y2 = where[known.target]
        out.append(f'<line class="seeking-target" data-unit={quoteattr(known.unit)} '
                   f'data-target={quoteattr(known.target)} x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                   f'stroke="#333" stroke-width="1.5" stroke-dasharray="1 4" stroke-linecap="round">'
                   f"<title>{escape(known.unit)} seeks {escape(known.target)} (revealed)</title></line>")
    out.append("</g>")
    return out


def fire_lines(step: StepView) -> tuple[list[str], list[str]]:
    """(the lines, drawn under the units; their labels, drawn over them)."""
    lines, labels = ['<g class="fire-lines">'], ['<g class="fire-labels">']
    seen: dict[tuple[Hex, Hex], int] = {}
    for shot in step.fire:
        (x1, y1), (x2, y2) = centre(shot.source), centre(shot.aim)
        pair = (min(shot.source, shot.aim), max(shot.source, shot.aim))
        nth = seen[pair] = seen.get(pair, -1) + 1  # shots between one pair: labels stacked, not piled up
        length = math.hypot(x2 - x1, y2 - y1)
        ux, uy = ((x2 - x1) / length, (y2 - y1) / length) if length else (0.0, 0.0)
        end_x, end_y = x2 - ux * 0.45 * SIZE, y2 - uy * 0.45 * SIZE  # the head stops at the target's disc
        attrs = (f'data-at={quoteattr(shot.at)} data-attacker={quoteattr(shot.attacker)} '
                 f'data-target={quoteattr(shot.target)} data-weapon={quoteattr(shot.weapon)} '
                 f'data-die="{"" if shot.die is None else shot.die}" data-damage="{shot.damage}"'
                 + ("" if shot.scored else ' data-declared="yes"'))
        lines.append(f'<g class="fire-line" {attrs}>')
        lines.append(f"<title>{escape(shot.text or shot.label)}</title>")
        if length:
            dash = ' stroke-dasharray="6 4" opacity="0.7"' if not shot.scored else (
                ' stroke-dasharray="2 3"' if shot.die is None else "")
            lines.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{end_x - ux * 6:.1f}" y2="{end_y - uy * 6:.1f}" '
                         f'stroke="{FIRE_COLOUR}" stroke-width="2.2"{dash}/>')
            lines.append(arrowhead(end_x, end_y, ux, uy, FIRE_COLOUR))
        else:  # range 0: a burst on the hex
            lines.append(f'<circle cx="{x1:.1f}" cy="{y1:.1f}" r="{0.7 * SIZE:.1f}" fill="none" '
                         f'stroke="{FIRE_COLOUR}" stroke-width="2.2"/>')
        lines.append("</g>")
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2 - (0 if length else 0.8 * SIZE)
        my += nth * 13 - 4
        labels.append(f'<text class="fire-label" {attrs} x="{mx:.1f}" y="{my:.1f}" font-size="11" '
                      f'font-weight="bold" text-anchor="middle" fill="{FIRE_COLOUR}" stroke="#ffffff" '
                      f'stroke-width="3" paint-order="stroke">{escape(shot.label)}</text>')
    lines.append("</g>")
    labels.append("</g>")
    return lines, labels


LABEL_ROOM = 6.0  # px per character of a mark's label, to keep it inside the map


def gone_marks(step: StepView, paint: Mapping[str, str], bounds: tuple[float, float] = (-1e9, 1e9)) -> list[str]:
    """A mark where each unit out of play was last seen; its label kept inside the map's `bounds` (left, right)
    (a unit that left the map was last seen on its edge)."""
    out = ['<g class="gone">']
    for gone in step.gone:
        x, y = centre(gone.hex)
        colour = paint.get(gone.owner, UNKNOWN_OWNER)
        what = GONE_WORDS.get(gone.status, gone.status)
        out.append(f'<g class="{gone.status}" data-unit={quoteattr(gone.unit)} data-hex="{format_hex(gone.hex)}">')
        out.append(f"<title>{escape(gone.unit)} ({escape(gone.owner)}) {escape(what)}"
                   f"{' at ' + escape(gone.at) if gone.at else ''}</title>")
        r = (0.28 if gone.seeking else 0.4) * SIZE
        if gone.status == "destroyed":
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="#3a3a3a" opacity="0.75"/>')
            out.append(f'<path d="M{x - r:.1f} {y - r:.1f}L{x + r:.1f} {y + r:.1f}M{x + r:.1f} {y - r:.1f}'
                       f'L{x - r:.1f} {y + r:.1f}" stroke="{colour}" stroke-width="4" stroke-linecap="round"/>')
        elif gone.status == "expended":
            spikes = " ".join(f"{x + (r if k % 2 == 0 else r / 2) * math.cos(math.pi * k / 6):.1f},"
                              f"{y + (r if k % 2 == 0 else r / 2) * math.sin(math.pi * k / 6):.1f}" for k in range(12))
            out.append(f'<polygon points="{spikes}" fill="#f5b700" stroke="{colour}" stroke-width="1.5"/>')
        else:
            faint = ' opacity="0.45"' if gone.status == "dummy" else ""
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="none" stroke="{colour}" '
                       f'stroke-width="2" stroke-dasharray="4 3"{faint}/>')
        label = f"{gone.unit} {what}" + (f" {gone.target}" if gone.target else "") + \
            (f": {gone.warhead}" if gone.target and gone.warhead else "")
        half = len(label) * LABEL_ROOM / 2
        tx = min(max(x, bounds[0] + half + 2), bounds[1] - half - 2)
        out.append(f'<text x="{tx:.1f}" y="{y + r + 11:.1f}" font-size="10" text-anchor="middle" fill="#333" '
                   f'stroke="#f4f1e8" stroke-width="3" paint-order="stroke">{escape(label)}</text>')
        out.append("</g>")
    out.append("</g>")
    return out


def arrowhead(x: float, y: float, ux: float, uy: float, colour: str, size: float = 9.0) -> str:
    """A filled arrowhead with its tip at (x, y) pointing along the unit vector (ux, uy). Drawn as a polygon,
    not an SVG marker: a page holds many boards, and a marker's id would be shared by all of them."""
    bx, by = x - ux * size, y - uy * size
    px, py = -uy * size * 0.45, ux * size * 0.45
    return (f'<polygon class="arrowhead" points="{x:.1f},{y:.1f} {bx + px:.1f},{by + py:.1f} '
            f'{bx - px:.1f},{by - py:.1f}" fill="{colour}"/>')


def hexes_of(step: StepView | None) -> list[Hex]:
    """Every hex the step's drawing touches (to keep it inside a cropped view)."""
    if step is None:
        return []
    found = [h for t in step.trails for h in t.hexes] + [g.hex for g in step.gone]
    found += [h for shot in step.fire for h in (shot.source, shot.aim)]
    return found

