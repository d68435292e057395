"""Diplomacy (`dow/1`) from a power's side: where the game stands for him, and how a command's change is committed
(DESIGN §4.7, §2).

Each command that changes the game builds the new tree from HEAD's files (never from half-edited working files),
writes the status replay computes, and commits signed through `Workspace.commit`, which judges the commit exactly
as the verifier will: nothing is written when it is refused. Sealing, revealing and press are legal without
holding control (DESIGN §4.7, §2), so each is committed at once; other edits in the working tree are put back
afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from pbem.errors import ILLEGAL, PbemError
from pbem.protocol.model import Status
from pbem.rulesets.base import Point, Press, Ruleset
from pbem.services.workspace import Identity, Workspace
from pbem.protocol.control import who
from pbem.protocol.verified import Verified


def press_file(player: str) -> str:
    """Where a seat posts its press: a file of its own, so seats posting at the same time never touch the same
    path (DESIGN §2, §4.9)."""
    return f"press/{player}.yaml"


@dataclass(frozen=True)
class Seat:
    """HEAD as seen by one player: what is verified there, his seat, the phase open now and its state."""

    head: Verified
    player: str
    when: str  # the phase open now (status.yaml `firm`): press is dated with it, orders answer it
    point: Point
    state: Any  # the state at `when` with the press already sent during it recognised


def seat_of(ws: Workspace, me: Identity) -> Seat:
    """HEAD as my power sees it; refused before the start, for a game without press, a key without a seat, and
    once the game is over."""
    head = ws.head()
    if head is None or not head.started or head.status is None or head.stop is None:
        raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID)")
    ruleset = head.game.manifest.ruleset
    if ruleset.press is None:
        raise PbemError("usage.not-diplomacy", f"this game plays {ruleset.name}, which has no orders, press or "
                        "relationships (those are dow/1 commands)")
    player = who(head.game, me.public)
    if player is None or player not in head.game.manifest.players:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    if head.status.over or head.stop.checkpoint.point is None:
        raise PbemError("game.over", "the game is over", exit_code=ILLEGAL)
    point = head.stop.checkpoint.point
    when = ruleset.format_time(point)
    return Seat(head, player, when, point, current_state(head))


def current_state(head: Verified) -> Any:
    """The state at HEAD's firm point with the press sent during that phase recognised in the order it was sent: what
    players have publicly recognised so far (seed 001), though replay recognises it only when the phase resolves."""
    assert head.stop is not None
    ruleset = head.game.manifest.ruleset
    state, point = head.stop.checkpoint.state, head.stop.checkpoint.point
    if point is None:
        return state
    for message in head.game.inputs.press.get(ruleset.format_time(point), ()):
        state, _refused = press_of(ruleset).recognise(state, message.body, message.by)
    return state


def commit_seated(ws: Workspace, seat: Seat, me: Identity, files: dict[str, bytes], summary: str,
                  details: Sequence[str] = ()) -> tuple[Status, Any]:
    """Commit `seat`'s change with the status replay computes, keeping his other edits
    (Workspace.commit_out_of_turn)."""
    stop, status, _oid = ws.commit_out_of_turn(seat.head, seat.player, files, me, summary, details)
    return status, stop


def press_of(ruleset: Ruleset) -> Press:
    """The ruleset's press (`seat_of`, `pbem relations` and `pbem results` refuse a game without it first)."""
    if ruleset.press is None:
        raise PbemError("usage.not-diplomacy", f"this game plays {ruleset.name}, which has no press")
    return ruleset.press
