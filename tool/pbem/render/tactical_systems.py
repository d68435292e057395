"""The systems that act on the `tactical/1` board (DESIGN §7.1; docs/tactical.md "Systems that act", "Damage hits
systems"): tractor beams, cloaks and internal damage allocated to systems, read from the state where replay stopped
and from the step's `InternalHit`s.

* A tractor beam: a wide pale band in the holder's colour with a dashed line on it, from the holder to the unit it
  holds (gear.holding), drawn under the units; its tooltip "CA holds D7 in its tractor beam".
* A cloak: a unit fading out or in is drawn faint with a dashed ring around it and "fading" to its left; a unit
  fully cloaked is fainter still, with "cloaked" (acting.cloak_state: what the rules say at the firm point).
* Internal damage: the boxes the impulses shown took, one line each to the right of the damaged unit in the colour
  of damage, with the hits it took and what is left ("power ×3: 1 left"; bold when none is: "dr2 destroyed");
  the log's lines are its tooltip.

A board without any of these draws nothing more, and its legend lists none of these marks.
"""

from __future__ import annotations

from typing import Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

from pbem.render.tactical_geometry import SIZE, Point2
from pbem.render.tactical_step import InternalHit, StepView
from pbem.render.tactical_units import DAMAGED, UNKNOWN_OWNER
from pbem.rulesets.tactical import acting
from pbem.rulesets.tactical.state import TacticalState

TRACTOR, CLOAK, INTERNAL = "tractor-beam", "cloaked", "internal-hit"
SYMBOLS = {  # added to the legend only on a board that shows them
    TRACTOR: "tractor beam: holder to held",
    CLOAK: "cloaked or fading: faint, dashed ring",
    INTERNAL: "internal damage: box hit, boxes left",
}
FAINT = {"fading": 0.65, "cloaked": 0.4}


def beams(state: TacticalState) -> list[tuple[str, str]]:
    """(holder, held) of every tractor hold between units on the map, in setup order."""
    on_map = {u.id for u in state.units if u.active and u.hex is not None}
    return [(u.id, str(u.gear.holding)) for u in state.units
            if u.gear.holding is not None and u.id in on_map and u.gear.holding in on_map]


def cloaks(state: TacticalState) -> dict[str, str]:
    """Unit id -> "cloaked" or "fading", for each unit on the map under its cloak at the state's point."""
    found = {}
    for unit in state.units:
        if unit.active and unit.hex is not None and unit.seeking is None:
            shown = acting.cloak_state(state, unit, state.at)
            if shown is not None:
                found[unit.id] = shown
    return found


def marks_used(state: TacticalState, step: StepView | None) -> tuple[str, ...]:
    """The legend marks of this module the board shows, in SYMBOLS order."""
    used = {TRACTOR: bool(beams(state)), CLOAK: bool(cloaks(state)),
            INTERNAL: step is not None and bool(step.internal)}
    return tuple(mark for mark in SYMBOLS if used[mark])


def tractor_beams(state: TacticalState, where: Mapping[str, Point2], paint: Mapping[str, str]) -> list[str]:
    """The tractor beams, to be drawn under the units (`where`: each unit's drawn centre)."""
    out = ['<g class="tractor-beams">']
    for holder, held in beams(state):
        owner = state.unit(holder)
        colour = paint.get(owner.owner, UNKNOWN_OWNER) if owner is not None else UNKNOWN_OWNER
        (x1, y1), (x2, y2) = where[holder], where[held]
        line = f'x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"'
        out += [f'<g class="{TRACTOR}" data-holder={quoteattr(holder)} data-held={quoteattr(held)}>',
                f"<title>{escape(holder)} holds {escape(held)} in its tractor beam</title>",
                f'<line {line} stroke="{colour}" stroke-width="{0.34 * SIZE:.1f}" stroke-linecap="round" '
                f'opacity="0.22"/>',
                f'<line {line} stroke="{colour}" stroke-width="2" stroke-dasharray="2 3" opacity="0.9"/>', "</g>"]
    return [*out, "</g>"] if len(out) > 1 else []  # a board without any draws nothing more


def cloak_marks(shown: Mapping[str, str], where: Mapping[str, Point2]) -> list[str]:
    """A dashed ring and the word around each cloaked or fading unit (drawn over it)."""
    out = ['<g class="cloaks">']
    for unit, how in shown.items():
        if unit not in where:
            continue
        x, y = where[unit]
        radius = 0.8 * SIZE
        out += [f'<g class="{CLOAK} {how}" data-unit={quoteattr(unit)} data-cloak="{how}">',
                f"<title>{escape(unit)}: {'cloaked' if how == CLOAK else 'its cloak fading out or in'}</title>",
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="none" stroke="#4a4a6a" '
                f'stroke-width="1.6" stroke-dasharray="2 4" opacity="{FAINT[how] + 0.3:.2f}"/>',
                f'<text x="{x - radius - 2:.1f}" y="{y + 3:.1f}" font-size="9.5" font-style="italic" '
                f'text-anchor="end" fill="#4a4a6a" stroke="#f4f1e8" stroke-width="2.5" paint-order="stroke">'
                f"{how}</text>", "</g>"]
    return [*out, "</g>"] if len(out) > 1 else []  # a board without any draws nothing more


def internal_marks(hits: Sequence[InternalHit], where: Mapping[str, Point2]) -> list[str]:
    """The internal hits shown, to the right of each damaged unit: one line per box hit, in the order first hit,
    with how many hits it took and what is left ("dr2 destroyed", "power ×3: 1 left")."""
    by_unit: dict[str, dict[str, list[InternalHit]]] = {}
    for hit in hits:
        if hit.unit in where:
            by_unit.setdefault(hit.unit, {}).setdefault(hit.hit, []).append(hit)
    out = ['<g class="internal-hits">']
    for unit, boxes in by_unit.items():
        x, y = where[unit]
        for n, (name, taken) in enumerate(boxes.items()):
            last = taken[-1]
            times = f" ×{len(taken)}" if len(taken) > 1 else ""
            label = f"{name}{times} destroyed" if last.destroyed else f"{name}{times}: {last.left} left"
            bold = ' font-weight="bold"' if last.destroyed else ""
            tooltip = "\n".join(h.text for h in taken)
            out.append(f'<text class="{INTERNAL}" data-unit={quoteattr(unit)} data-hit={quoteattr(name)} '
                       f'data-hits="{len(taken)}" data-left="{last.left}" data-at={quoteattr(last.at)} '
                       f'x="{x + 0.75 * SIZE:.1f}" y="{y - 0.3 * SIZE + 11 * n:.1f}" font-size="9.5"{bold} '
                       f'fill="{DAMAGED}" stroke="#ffffff" stroke-width="2.5" paint-order="stroke">'
                       f"<title>{escape(tooltip)}</title>{escape(label)}</text>")
    return [*out, "</g>"] if len(out) > 1 else []  # a board without any draws nothing more


def sample(cls: str, x: float, y: float) -> str:
    """The legend's small drawing of one of these marks, 24 wide, centred on height y."""
    grey = "#555555"
    if cls == TRACTOR:
        return (f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 24:.1f}" y2="{y:.1f}" stroke="{grey}" stroke-width="8" '
                f'opacity="0.22"/><line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 24:.1f}" y2="{y:.1f}" stroke="{grey}" '
                'stroke-width="2" stroke-dasharray="2 3"/>')
    if cls == CLOAK:
        return (f'<circle cx="{x + 12:.1f}" cy="{y:.1f}" r="7" fill="none" stroke="#4a4a6a" stroke-width="1.6" '
                f'stroke-dasharray="2 4"/>')
    return (f'<text x="{x + 12:.1f}" y="{y + 3.5:.1f}" font-size="9.5" font-weight="bold" text-anchor="middle" '
            f'fill="{DAMAGED}">box</text>')
