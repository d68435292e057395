"""The Diplomacy map of each phase, read from the verified history (docs/pictures.md, Diplomacy; DESIGN §7.2).

A phase's map (`pbem.render.dow_phase.PhaseMap`) is built from the phase as replay resolved it, observed by the
chronicle (services.dow.chronicle): the state its orders met, the state it made, the orders revealed, what the
phase voided or forbade and the engine's result codes. Nothing is adjudicated a second time here.

* `map_inputs`: the map of a commit (`pbem render`, each handoff of `pbem log --html`): the last phase whose
  orders were revealed before the firm point, after its adjudication, on the board where replay stopped;
* `phase_map` / `phase_svg`: one phase, before or after its adjudication (`pbem render --phase P --before`);
* `phase_maps`: every phase resolved to the firm point, in one replay (a game page steps through them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pbem.errors import PbemError
from pbem.protocol.replay import start_checkpoint
from pbem.protocol.verified import Verified
from pbem.render.dow_phase import PhaseMap, from_events, render_phase


def revealed_orders(verified: Verified) -> dict[str, dict[str, tuple[str, ...]]]:
    """phase -> power -> the orders its sealed set held, for every set revealed so far."""
    by_phase: dict[str, dict[str, tuple[str, ...]]] = {}
    for (phase, power), given in verified.game.inputs.sealed.items():
        value = given.value if given.revealed else None
        if isinstance(value, Mapping) and isinstance(value.get("orders"), (list, tuple)):
            by_phase.setdefault(phase, {})[power] = tuple(str(o) for o in value["orders"])
    return by_phase


def last_phase(verified: Verified, revealed: Mapping[str, Any] | None = None) -> str:
    """The last phase whose orders were revealed before the firm point ("" when none was); `revealed`: what
    `revealed_orders` gives, when the caller has it already."""
    ruleset = verified.game.manifest.ruleset
    assert verified.stop is not None
    point = verified.stop.checkpoint.point
    phases = revealed_orders(verified) if revealed is None else revealed
    done = [p for p in phases if point is None or ruleset.parse_time(p) < point]
    return max(done, key=ruleset.parse_time) if done else ""


def map_inputs(verified: Verified, viewer: str | None, memo: dict[str, Any] | None = None) -> tuple[Any, ...]:
    """What the map of a commit is drawn from (pbem.render.maps: `render_phase(view, moment, viewer)`): the last
    phase whose orders were revealed before the firm point, after its adjudication, on the board where replay
    stopped (the firm point: what the player who got control saw). `memo` keeps the phases replayed for the
    previous map of the same game, so a page of every commit replays the game once."""
    assert verified.stop is not None
    firm = verified.stop.checkpoint.state
    revealed = revealed_orders(verified)
    phase = last_phase(verified, revealed)
    orders = revealed.get(phase, {})
    if not any(orders.values()):
        return PhaseMap(phase, firm, firm, orders), "after", viewer
    found = _phases_to(verified, phase, {} if memo is None else memo).get(phase)
    view = found if found is not None else PhaseMap(phase, firm, firm)
    return replace(view, orders=orders, after=firm), "after", viewer


def phase_map(verified: Verified, phase: str | None = None) -> PhaseMap:
    """One phase resolved before the firm point (default: the last one whose orders were revealed); rule
    `usage.bad-phase` for a phase that is no phase or has not been resolved."""
    ruleset = verified.game.manifest.ruleset
    if ruleset.press is None:
        raise PbemError("usage.not-diplomacy", f"this game plays {ruleset.name}: --phase, --before and --after "
                        "draw a Diplomacy phase")
    assert verified.stop is not None
    if phase is None:
        phase = last_phase(verified)
        if not phase:
            firm = verified.stop.checkpoint.state
            return PhaseMap("", firm, firm)
    try:
        wanted = ruleset.format_time(ruleset.parse_time(phase.strip().upper()))
    except ValueError as err:
        raise PbemError("usage.bad-phase", f"{phase!r}: {err}") from None
    point = verified.stop.checkpoint.point
    found = None
    if verified.stop.over or point is None or ruleset.parse_time(wanted) < point:
        found = _phases_to(verified, wanted, {}).get(wanted)
    if found is None:
        status = verified.status or verified.game.status
        raise PbemError("usage.bad-phase", f"{wanted} has not been resolved (the game is firm to "
                        f"{status.firm if status is not None else ruleset.format_time(point) if point else '?'})")
    return found


def phase_svg(verified: Verified, phase: str | None = None, moment: str = "after", viewer: str | None = None,
              title: str | None = None) -> str:
    """`pbem render --phase P --before|--after`: one phase's map as SVG (see `phase_map`); titled with the game
    and the phase unless `title` is given."""
    view = phase_map(verified, phase)
    if title is None:
        title = f"{verified.game.manifest.id}: {view.phase or 'no phase played yet'}, {moment} adjudication"
    return render_phase(view, moment, viewer, title)


def phase_maps(verified: Verified) -> list[PhaseMap]:
    """Every phase resolved to the firm point (to the end of a finished game), in order, from one replay."""
    from pbem.services.dow import chronicle  # imported only for a Diplomacy map

    return [_from_report(r) for r in chronicle.told(verified) if r.before is not None]


def _from_report(report: Any) -> PhaseMap:
    return from_events(report.phase, report.before, report.after, report.orders, report.events)


def _phases_to(verified: Verified, phase: str, memo: dict[str, Any]) -> dict[str, PhaseMap]:
    """The maps of the phases replayed so far, `phase` among them when it was resolved: replayed as `pbem
    results` does, continuing from the phase replayed for the previous map of the same game (`memo`), else from
    the start."""
    from pbem.services.dow import chronicle  # imported only for a Diplomacy map

    game = verified.game
    ruleset, setup = game.manifest.ruleset, game.manifest.setup
    found: dict[str, PhaseMap] = memo.setdefault("maps", {})
    if phase in found:
        return found
    target = ruleset.parse_time(phase)
    at, state = memo.get("at", (None, None))
    if at is None or at > target:
        start = start_checkpoint(ruleset, setup, game.manifest.players)
        at, state = start.point, start.state
    reports, memo["at"] = chronicle.chronicle(game, at, state, ruleset.next_step(setup, target), verified.gone_at,
                                              fresh=True)
    for done in reports:
        if done.before is not None:
            found[done.phase] = _from_report(done)
    return found
