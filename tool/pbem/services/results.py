"""What a game's fire did and how it ended, for `pbem log`, `pbem log --html`, `pbem summary`, `pbem check` and
`pbem render` (docs/tactical.md "The end and the outcome"): the ruleset's `shots_report` (each scored shot's die,
damage, and which shield or internals took it), its `outcome` once the game is over, and where the units stand."""

from __future__ import annotations

from typing import Any

from pbem.protocol.verified import Verified


def shots(last: Verified | None) -> list[str]:
    """One line per scored shot so far, in game order ([] for a ruleset without shots)."""
    if last is None or last.stop is None:
        return []
    summary = last.game.manifest.ruleset.summary
    return list(summary.shots_report(last.stop.checkpoint.state)) if summary is not None else []


def outcome(last: Verified | None) -> str | None:
    """Who won, or a draw, and why, once the game is over; None while it goes on (or without a rule)."""
    if last is None or last.stop is None or not last.stop.over:
        return None
    summary = last.game.manifest.ruleset.summary
    return summary.outcome(last.stop.checkpoint.state) if summary is not None else None


def positions(last: Verified | None) -> list[str]:
    """Where each unit stands at the firm point (or the end): "CA (fed) 1417 facing B, speed 8, hull 200"."""
    if last is None or last.stop is None:
        return []
    summary = last.game.manifest.ruleset.summary
    if summary is None:
        return []
    out = []
    for unit in summary.state_summary(last.stop.checkpoint.state):
        where = (f"{unit['hex']} facing {unit['facing']}, speed {unit['speed']}" if unit.get("hex")
                 else str(unit.get("status")))
        shields = unit.get("shields")
        out.append(f"{unit['id']} ({unit['owner']}) {where}; shields {shields}, hull {unit.get('hull')}"
                   if shields else f"{unit['id']} ({unit['owner']}) {where}; hull {unit.get('hull')}")
    return out


def as_dict(last: Verified | None) -> dict[str, Any]:
    """The same for JSON output."""
    return {"shots": shots(last), "outcome": outcome(last), "positions": positions(last)}
