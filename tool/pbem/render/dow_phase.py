"""One Diplomacy phase as a map, before or after its adjudication (docs/pictures.md, Diplomacy; DESIGN §7.2).

`PhaseMap` is what a phase was, as data: the state its orders met (press recognised), the state it made, every
power's orders as given, which of them the phase voided or the relationship table forbade, and the engine's
result codes per unit. `render_phase(view, moment, viewer, title)` draws it:

* "before": the orders on the positions they were given on, each marked as the adjudication judged it (failed
  moves with a flat head and a cross; cut supports crossed), the relationships the orders were judged by;
* "after": what the phase made of them: the new positions, the units it dislodged beside their provinces with
  the provinces each may retreat to (or "disbanded" where it had none), the centres counted, the orders drawn
  lighter underneath.

`from_events` builds a PhaseMap from the events of the ruleset's resolution (rulesets/dow/resolve.py); the
services build one per phase from replay (pbem.services.dow.maps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Iterable

from pbem.render import dow_svg
from pbem.render.dow_svg import MOMENTS
from pbem.rulesets.base import Event
from pbem.rulesets.dow.state import DowState


@dataclass(frozen=True)
class PhaseMap:
    """One phase as data (see the module docstring); `phase` "" when no phase has been played yet (both states
    are then the one the game is in)."""

    phase: str
    before: DowState
    after: DowState
    orders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    verdicts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # power -> order -> void|forbidden
    results: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # unit ("A PAR") -> engine codes
    # the units the phase dislodged that had nowhere to retreat: the engine disbanded them at once, so they are
    # on no board; (owner, unit)
    disbanded: tuple[tuple[str, str], ...] = ()


def from_events(phase: str, before: DowState, after: DowState, orders: Mapping[str, Sequence[str]],
                events: Iterable[Event]) -> PhaseMap:
    """A PhaseMap from a resolved phase: its `void` and `warning` events mark orders void and forbidden, its
    `adjudicated` event gives the engine's result codes (and so the units dislodged with nowhere to go)."""
    verdicts: dict[str, dict[str, str]] = {}
    results: dict[str, tuple[str, ...]] = {}
    disbanded: list[tuple[str, str]] = []
    for event in events:
        data = event.data
        if event.kind in ("void", "warning") and isinstance(data.get("order"), str):
            verdicts.setdefault(event.by, {})[data["order"]] = "void" if event.kind == "void" else "forbidden"
        elif event.kind == "adjudicated" and isinstance(data.get("results"), Mapping):
            results.update({str(u): tuple(str(c) for c in codes) for u, codes in data["results"].items()})
    # the engine gives no `dislodged` for a unit with nowhere to go: only its result code says it was
    still = {unit for _power, unit, _options in after.board.dislodged}
    owners = dict((unit, power) for power, unit in before.board.units)
    for unit, codes in sorted(results.items()):
        if "dislodged" in codes and unit not in still and unit in owners and phase.endswith("M"):
            disbanded.append((owners[unit], unit))
    return PhaseMap(phase, before, after, {p: tuple(o) for p, o in orders.items()}, verdicts, results,
                    tuple(disbanded))


def render_phase(view: PhaseMap, moment: str = "after", viewer: str | None = None, title: str = "") -> str:
    """The map of one phase `moment` ("before" or "after") its adjudication, as an SVG document (no XML
    prolog: it can be inlined in HTML). `viewer`: colour the other powers' territory by their relationship with
    this power; `title`: "game: where it stands", shown above the relationships."""
    if moment not in MOMENTS:
        raise ValueError(f"moment must be one of {', '.join(MOMENTS)}, got {moment!r}")
    state = view.before if moment == "before" else view.after
    return dow_svg.render(state, view.orders, view.phase, viewer, view.verdicts, title, view.results, moment,
                          view.disbanded if moment == "after" else ())
