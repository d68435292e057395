"""Taking a turn: `pbem status`, `pbem check`, `pbem yield` (DESIGN §4, §8; seed 000 §4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pbem.errors import ILLEGAL, Finding, PbemError
from pbem.formats.writer import dump_mapping
from pbem.protocol.model import Status
from pbem.services.workspace import Identity, Workspace
from pbem.verify.gamefiles import STATUS
from pbem.verify.turns import Verified, expected_after_turn


@dataclass
class Outlook:
    """What `pbem status` and `pbem check` tell a player."""

    status: Status | None
    me: str | None
    findings: list[Finding] = field(default_factory=list)
    would_be: Status | None = None  # the status if the working tree were committed now

    def owes(self) -> str:
        """What *I* must do next, in one sentence with the command."""
        if self.status is None:
            return "the game has not started: claim a seat with `pbem join --as ID`, then `pbem start --first ID`"
        if self.status.over:
            return "the game is over"
        if self.me is None:
            return "your key holds no seat in this game"
        if self.status.control != self.me:
            return f"nothing: {self.status.control} holds control"
        why = self.status.pending[0]
        return (f"you hold control ({why.why}): edit players/{self.me}.yaml (through, breaks) and your entries "
                f"in report/ from {self.status.firm} on, check with `pbem check`, then `pbem yield -m NOTE`")


def whoami(ws: Workspace, me: Identity | None) -> str | None:
    head = ws.head()
    if head is None or me is None:
        return None
    seat = head.game.manifest.seat_of_key(me.public)
    return seat.id if seat else None


def outlook(ws: Workspace, me: Identity | None) -> Outlook:
    head = ws.head()
    return Outlook(head.game.status if head else None, whoami(ws, me))


def check(ws: Workspace, me: Identity) -> Outlook:
    """The working tree judged as if `me` committed it now, with the status it would get."""
    head = _started(ws)
    files = ws.worktree_files()
    player = whoami(ws, me)
    would = _computed(ws, head, files, me, player)
    if would is not None:
        files[STATUS] = dump_mapping(would.to_data()).encode()
    findings, _ = ws.judge(files, me)
    return Outlook(head.game.status, player, findings, would)


def yield_turn(ws: Workspace, me: Identity, note: str = "") -> tuple[str, Status]:
    """Write status.yaml as replay computes it and commit the turn signed; nothing changes if it is illegal."""
    head = _started(ws)
    player = whoami(ws, me)
    files = ws.worktree_files()
    status = _computed(ws, head, files, me, player, note)
    if status is None:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    files[STATUS] = dump_mapping(status.to_data()).encode()
    message = f"{player}: {note or 'yield'}\n\nnext: {status.control or 'game over'}"
    if status.pending:
        message += f" ({status.pending[0].why})"
    oid = ws.commit(files, me, message)
    return oid, status


def _started(ws: Workspace) -> Verified:
    head = ws.head()
    if head is None or not head.started:
        raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID)")
    return head


def _computed(ws: Workspace, head: Verified, files: dict[str, bytes], me: Identity, player: str | None,
              note: str = "") -> Status | None:
    if player is None:
        return None
    game = ws.game_of(files)
    _, status = expected_after_turn(head, game, player)
    return Status(status.control, status.firm, status.pending, status.over, status.yielded_by, note)
