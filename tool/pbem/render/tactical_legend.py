"""The title band and the legend of the `tactical/1` board (DESIGN §7.1).

Layout: the title band runs across the top of the picture and holds only the title and the impulses shown; the
map sits under it on the left and the legend in its own column on the right, under the band too, so the legend
can never cover the title or the map. The legend lists the players with their colours, what each mark means,
every unit (position, speed, shields, hull, or why it is gone) and the shots drawn. The picture is made wide
enough for the title and tall enough for the longer of map and legend.

Text widths are estimated (CHAR em per character): enough to size the areas, as no font metrics are at hand in
pure code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping
from xml.sax.saxutils import escape, quoteattr

from pbem.render import tactical_systems
from pbem.render.tactical_step import StepView, arrowhead
from pbem.render.tactical_units import DAMAGED, roster_line
from pbem.rulesets.tactical.state import TacticalState

BAND = 56.0  # the title band's height
TITLE_FONT = 17.0
FONT = 11.0
LINE = 15.0
CHAR = 0.62  # DejaVu Sans: average advance per character, in ems (bold a little more)
PAD = 12.0
MIN_PANEL = 230.0


def text_width(text: str, size: float, bold: bool = False) -> float:
    return len(text) * size * (CHAR + (0.05 if bold else 0.0))


def title_width(title: str, subtitle: str) -> float:
    """How wide the band must be for its text."""
    return 2 * PAD + max(text_width(title, TITLE_FONT, bold=True), text_width(subtitle, FONT))


def band(title: str, subtitle: str, left: float, top: float, width: float) -> list[str]:
    """The title band (white, across the whole picture)."""
    return [f'<g class="title-band"><rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{BAND:.1f}" '
            f'fill="#ffffff"/>',
            f'<text class="board-title" x="{left + PAD:.1f}" y="{top + 24:.1f}" font-size="{TITLE_FONT:.0f}" '
            f'font-weight="bold" fill="#222">{escape(title)}</text>',
            f'<text class="board-step" x="{left + PAD:.1f}" y="{top + 44:.1f}" font-size="{FONT:.0f}" '
            f'fill="#555">{escape(subtitle)}</text></g>']


def subtitle(step: StepView | None) -> str:
    """The band's second line: which impulses the trails and fire lines show."""
    if step is None or not step.since:
        return "no impulse resolved yet" if step is not None else ""
    return f"trails and fire of {step.since} to {step.until}"


@dataclass(frozen=True)
class Legend:
    """The legend's lines, measured before it is placed."""

    players: tuple[str, ...]
    roster: tuple[str, ...]
    shots: tuple[str, ...]
    systems: tuple[str, ...] = ()  # the marks of tactical_systems this board shows (their legend lines)

    @property
    def marks(self) -> dict[str, str]:
        """Mark class -> what it means: the usual ones, then those of the systems shown."""
        return {**SYMBOLS, **{mark: tactical_systems.SYMBOLS[mark] for mark in self.systems}}

    @property
    def width(self) -> float:
        texts = [*self.marks.values(), *self.roster, *self.shots, *self.players]
        return max(MIN_PANEL, 2 * PAD + 30 + max((text_width(t, FONT) for t in texts), default=0.0))

    @property
    def height(self) -> float:
        rows = 1 + len(self.players) + 1 + len(self.marks) + 1 + len(self.roster) + (1 + len(self.shots)
                                                                                   if self.shots else 0)
        return 2 * PAD + rows * LINE + 3 * 8


# what each mark means, by the class of its sample in the legend
SYMBOLS = {
    "trail": "trail: where it moved, last impulses",
    "fire-line": "fire: weapon, die and damage",
    "seeking-path": "seeking weapon's path (dashed)",
    "seeking-target": "its target, once revealed (dotted)",
    "shield-ring": "shields: #1 ahead, then clockwise",
    "damaged": "shield damaged: what is left",
    "destroyed": "destroyed (where last seen)",
    "disengaged": "left the map / resigned",
    "pbem-ring": "break condition: range N",
}


def legend_of(state: TacticalState, step: StepView | None) -> Legend:
    """What the legend lists."""
    shots = tuple(f"{s.at} {s.label} (at {s.target})" for s in step.fire) if step is not None else ()
    return Legend(state.players, tuple(roster_line(u) for u in state.units), shots,
                  tactical_systems.marks_used(state, step))


def panel(legend: Legend, paint: Mapping[str, str], x: float, y: float, height: float) -> list[str]:
    """The legend's column at (x, y), `height` tall."""
    out = [f'<g class="legend"><rect x="{x:.1f}" y="{y:.1f}" width="{legend.width:.1f}" height="{height:.1f}" '
           f'fill="#ffffff" stroke="#d8d2c0"/>']
    cx, cy = x + PAD, y + PAD + 10

    def heading(text: str) -> None:
        nonlocal cy
        out.append(f'<text x="{cx:.1f}" y="{cy:.1f}" font-size="{FONT + 1:.0f}" font-weight="bold" fill="#222">'
                   f"{escape(text)}</text>")
        cy += LINE

    def line(text: str, cls: str, **data: str) -> None:
        nonlocal cy
        extra = "".join(f" data-{k}={quoteattr(v)}" for k, v in data.items())
        out.append(f'<text class="{cls}" x="{cx + 30:.1f}" y="{cy:.1f}" font-size="{FONT:.0f}" '
                   f'fill="#222"{extra}>{escape(text)}</text>')
        cy += LINE

    heading("Players")
    for player in legend.players:
        out.append(f'<rect x="{cx + 8:.1f}" y="{cy - 10:.1f}" width="12" height="12" rx="2" '
                   f'fill="{paint.get(player, "#777777")}"/>')
        line(player, "legend-player", player=player)
    cy += 8
    heading("Marks")
    for cls, text in legend.marks.items():
        out.extend(_sample(cls, cx, cy - 4))
        line(text, "legend-mark", mark=cls)
    cy += 8
    heading("Units")
    for text in legend.roster:
        line(text, "legend-unit")
    if legend.shots:
        cy += 8
        heading("Fire shown")
        for text in legend.shots:
            line(text, "legend-shot")
    out.append("</g>")
    return out


def _sample(cls: str, x: float, y: float) -> list[str]:
    """A small drawing of a mark, 24 wide, centred on height y."""
    grey, red = "#555555", "#d4191c"
    samples = {
        "trail": f'<polyline points="{x:.1f},{y + 3:.1f} {x + 12:.1f},{y - 3:.1f} {x + 24:.1f},{y + 2:.1f}" '
                 f'fill="none" stroke="{grey}" stroke-width="3" opacity="0.55"/>',
        "fire-line": f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 17:.1f}" y2="{y:.1f}" stroke="{red}" '
                     f'stroke-width="2.2"/>' + arrowhead(x + 24, y, 1.0, 0.0, red),
        "seeking-path": f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 24:.1f}" y2="{y:.1f}" stroke="{grey}" '
                        f'stroke-width="3" stroke-dasharray="5 4" opacity="0.55"/>',
        "seeking-target": f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 24:.1f}" y2="{y:.1f}" stroke="#333" '
                          f'stroke-width="1.5" stroke-dasharray="1 4" stroke-linecap="round"/>',
        "shield-ring": f'<path d="M{x + 4:.1f} {y + 3:.1f}A10 10 0 0 1 {x + 20:.1f} {y + 3:.1f}" fill="none" '
                       f'stroke="{grey}" stroke-width="4"/>',
        "damaged": f'<path d="M{x + 4:.1f} {y + 3:.1f}A10 10 0 0 1 {x + 20:.1f} {y + 3:.1f}" fill="none" '
                   f'stroke="{DAMAGED}" stroke-width="3"/>',
        "destroyed": f'<path d="M{x + 6:.1f} {y - 6:.1f}L{x + 18:.1f} {y + 6:.1f}M{x + 18:.1f} {y - 6:.1f}'
                     f'L{x + 6:.1f} {y + 6:.1f}" stroke="{grey}" stroke-width="3.5" stroke-linecap="round"/>',
        "disengaged": f'<circle cx="{x + 12:.1f}" cy="{y:.1f}" r="7" fill="none" stroke="{grey}" stroke-width="2" '
                      f'stroke-dasharray="4 3"/>',
        "pbem-ring": f'<path d="M{x:.1f} {y:.1f}H{x + 24:.1f}" stroke="{grey}" stroke-width="2.5" '
                     f'stroke-dasharray="7 4"/>',
    }
    drawn = samples[cls] if cls in samples else tactical_systems.sample(cls, x, y)
    return [f'<g class="legend-sample" data-mark="{cls}">{drawn}</g>']

