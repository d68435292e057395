"""The relationship states from a power's side (`pbem relations`): the matrix in force and what is recognised but not
yet realised, now or at the start of a resolved phase (seed 001, DESIGN §7.2). The ruleset says what they are
(`press.relations_data`); this module only tells them."""

from __future__ import annotations

from typing import Any, Mapping

from pbem.errors import PbemError
from pbem.protocol.replay import start_checkpoint
from pbem.rulesets.base import Point
from pbem.services.dow.chronicle import chronicle
from pbem.services.dow.seat import current_state, press_of
from pbem.services.workspace import Workspace
from pbem.protocol.verified import Verified

SYMBOL = {"WAR": "1", "HOSTILE": "2", "NEUTRAL": "3", "FRIENDLY": "4", "ALLIED": "5", "LIMBO": "*"}
LEGEND = "1 WAR, 2 HOSTILE, 3 NEUTRAL, 4 FRIENDLY, 5 ALLIED, * LIMBO"


def relations(ws: Workspace, at: str | None = None) -> dict[str, Any]:
    """The matrix in force and the changes recognised but not yet realised (`relations_data` of the ruleset),
    at the phase open now with its press so far, or at the start of phase `at` (a phase already resolved)."""
    head = ws.head()
    if head is None or not head.started or head.stop is None:
        raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID)")
    ruleset = head.game.manifest.ruleset
    if ruleset.press is None:
        raise PbemError("usage.not-diplomacy", f"this game plays {ruleset.name}, which has no relationships")
    if at is None:
        point, state = head.stop.checkpoint.point, current_state(head)
    else:
        try:
            point = ruleset.parse_time(at)
        except ValueError as err:
            raise PbemError("usage.bad-phase", f"--at {at!r}: {err}") from None
        point, state = _state_at(head, point)
    data = press_of(ruleset).relations_data(state)
    data["phase"] = ruleset.format_time(point) if point is not None else None
    data["when"] = "at the start of" if at is not None else "now, at"
    return data


def _state_at(head: Verified, target: Point) -> tuple[Point | None, Any]:
    """The state at the start of `target` (before its press is recognised), replayed from the game's start."""
    game = head.game
    manifest = game.manifest
    start = start_checkpoint(manifest.ruleset, manifest.setup, manifest.players)
    firm = head.stop.checkpoint.point if head.stop is not None else None
    if firm is not None and target > firm:
        raise PbemError("usage.bad-phase", f"{manifest.ruleset.format_time(target)} has not begun (the game is at "
                        f"{manifest.ruleset.format_time(firm)})")
    if start.point is not None and target < start.point:
        raise PbemError("usage.bad-phase", f"the game starts at {manifest.ruleset.format_time(start.point)}")
    _, (point, state) = chronicle(game, start.point, start.state, target, head.gone_at, fresh=True)
    return point, state


def relations_text(data: Mapping[str, Any]) -> str:
    """The matrix in force as a table of symbols, then what is pending, proposed, warned."""
    in_force = data["in_force"]
    powers = sorted(in_force)
    width = max(len(p) for p in powers)
    lines = [f"relationships in force {data.get('when', 'at')} {data['phase']} (orders are judged by these; "
             f"{LEGEND}):", " " * (width + 2) + " ".join(f"{p[:3]:^3}" for p in powers)]
    for p in powers:
        cells = [f"{'-' if q == p else SYMBOL.get(in_force[p][q], '?'):^3}" for q in powers]
        lines.append(f"  {p:<{width}}" + " ".join(cells).rstrip())
    pending = data.get("pending") or []
    lines.append("pending (recognised, not yet in force: realised at the start of the next Spring or Fall retreats, "
                 "or for the second half of Spring 1901):")
    lines.extend(f"  {a}-{b}: {before} -> {after}" for a, b, before, after in pending)
    if not pending:
        lines.append("  none")
    for proposal in data.get("proposals") or []:
        lines.append(f"proposal standing: {proposal['by']} -> {proposal['to']}: {proposal['state']} "
                     f"(`pbem accept {proposal['by']} {proposal['state']}` as {proposal['to']})")
    for gift in data.get("gifts") or []:
        lines.append(f"gift recognised: {gift['by']} gives {gift['province']} to {gift['to']}")
    offences = data.get("offences") or {}
    if offences:
        lines.append("warnings: " + ", ".join(f"{p} {n}" for p, n in sorted(offences.items())))
    if data.get("civil_disorder"):
        lines.append("civil disorder: " + ", ".join(data["civil_disorder"]))
    if data.get("entering_civil_disorder"):
        lines.append("civil disorder from the next phase (second offence): "
                     + ", ".join(data["entering_civil_disorder"]))
    from pbem.services.seat_record import former_lines  # a seat taken over: the old player's record apart

    lines.extend(former_lines(data))
    return "\n".join(lines) + "\n"
