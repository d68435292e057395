"""A seat taken over keeps the old player's record apart (docs/dow.md "A power taken over"): what `pbem status`
and `pbem relations` say about it. The ruleset keeps the records (`relations_data(state)["former"]`: the power,
the phase of the takeover, the former player's warnings and movement phases missed in a row); this only words
them."""

from __future__ import annotations

from typing import Any, Mapping

from pbem.services.workspace import Workspace


def former_lines(data: Mapping[str, Any]) -> list[str]:
    """One line per takeover, from a ruleset's `relations_data`."""
    out = []
    for record in data.get("former") or []:
        warnings, missed = record["warnings"], record["missed"]
        out.append(f"taken over: {record['power']} by a new player at {record['since']}; the former player's record, "
                   f"kept apart: {warnings} warning{'s' * (warnings != 1)}, {missed} movement phase"
                   f"{'s' * (missed != 1)} missed in a row (withheld sets counted); the new player started with none")
    return out


def record_lines(ws: Workspace) -> list[str]:
    """`pbem status` lines for each seat taken over by a new player, in a game whose ruleset keeps records."""
    head = ws.head()
    if head is None or head.stop is None:
        return []
    press = head.game.manifest.ruleset.press
    if press is None:
        return []
    data = press.relations_data
    from pbem.services.dow.seat import current_state

    return former_lines(data(current_state(head)))
