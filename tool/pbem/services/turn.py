"""Taking a turn: `pbem status`, `pbem check`, `pbem yield` (DESIGN §4, §8; seed 000 §4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pbem.errors import ILLEGAL, Finding, PbemError
from pbem.formats.escape import first_control, terminal
from pbem.formats.writer import dump_mapping
from pbem.protocol.model import Status, Void
from pbem.crypto.keys import PrivateKey
from pbem.protocol import secrets
from pbem.protocol.dice import ESCROW
from pbem.services import chance, errata, results, setup
from pbem.services.workspace import Identity, PlannedCommit, Workspace
from pbem.verify.gamefiles import STATUS
from pbem.verify.turns import OWED, Verified, expected_after, takes_turn, who


@dataclass
class Outlook:
    """What `pbem status` and `pbem check` tell a player."""

    status: Status | None
    me: str | None
    findings: list[Finding] = field(default_factory=list)
    would_be: Status | None = None  # the status if the working tree were committed now
    voids: tuple[Void, ...] = ()  # my entries replay found void, most recent last (DESIGN §4.2)
    setup: str | None = None  # before the start: what I owe towards it (services.setup.before_start)
    positions: tuple[str, ...] = ()  # where the units stand where replay would stop (services/results.py)
    outcome: str | None = None  # who would have won, if the commit ends the game

    def owes(self) -> str:
        """What *I* must do next, in one sentence with the command."""
        if self.status is None:
            return self.setup or ("the game has not started: claim a seat with `pbem join --as ID`, then "
                                  "`pbem start --first ID`")
        if self.status.over:
            return "the game is over"
        if self.me is None:
            return "your key holds no seat in this game"
        mine = [b for b in self.status.pending if b.player == self.me and b.kind in OWED]
        if mine:
            first = mine[0]
            how = {"sealed": "seal your input (pbem orders FILE in Diplomacy, pbem seal KIND FILE otherwise)",
                   "secret": "reveal it: `pbem yield` (in Diplomacy `pbem orders --reveal`)",
                   "dice": "`pbem yield` settles it",
                   "ready": "post your press, then `pbem ready`"}.get(first.kind, "`pbem yield`")
            return f"{first.why}: {how}; you need not hold control"
        if self.status.control != self.me:
            return f"nothing: {self.status.control} holds control"
        why = self.status.pending[0]
        return (f"you hold control ({why.why}): edit players/{self.me}.yaml (through, breaks) and your entries "
                f"in report/ from {self.status.firm} on, check with `pbem check`, then `pbem yield -m NOTE`")


def whoami(ws: Workspace, me: Identity | None) -> str | None:
    """My seat (or the escrow) in this game, by my key."""
    head = ws.head()
    if head is None or me is None:
        return None
    return who(head.game, me.public)


def outlook(ws: Workspace, me: Identity | None) -> Outlook:
    head = ws.head()
    player = whoami(ws, me)
    if head is not None and not head.started:
        return Outlook(None, player, setup=setup.before_start(head.game, player))
    return Outlook(head.game.status if head else None, player, voids=voids_of(head, player))


SHOWN_VOIDS = 5


def voids_of(head: Verified | None, player: str | None) -> tuple[Void, ...]:
    """`player`'s entries that replay found void so far (DESIGN §4.2 "Entries and time"): what others did after
    he wrote them made them impossible. The game went on without them."""
    if head is None or head.stop is None or player is None:
        return ()
    return tuple(v for v in head.stop.checkpoint.voids if v.player == player)


def void_lines(view: Outlook) -> list[str]:
    """`pbem status` lines for my void entries: the latest few, and how to see them all."""
    lines = [f"void: {v.text()}" for v in view.voids[-SHOWN_VOIDS:]]
    if len(view.voids) > SHOWN_VOIDS:
        lines.insert(0, f"void: {len(view.voids) - SHOWN_VOIDS} earlier entries of yours are void too (pbem log)")
    return lines


def errata_lines(ws: Workspace) -> list[str]:
    """The errata not applied yet at HEAD, each with who still has to sign (DESIGN §4.8), for `pbem status`."""
    head = ws.head()
    return [] if head is None else errata.listing(head.game, with_applied=False)


def check(ws: Workspace, me: Identity) -> Outlook:
    """The working tree judged as if `me` committed it now, with the status it would get."""
    head = _started(ws)
    files = ws.worktree_files()
    player = whoami(ws, me)
    would = _computed(ws, head, files, me, player)
    if would is not None:
        files[STATUS] = dump_mapping(would.to_data()).encode()
    findings, after = ws.judge(files, me)
    shown = after if after.stop is not None else None
    return Outlook(head.game.status, player, findings, would, positions=tuple(results.positions(shown)),
                   outcome=results.outcome(shown))


def check_note(note: str) -> None:
    """A yield note is data every player reads, in a terminal too: newlines and tabs are fine, a control
    character (ESC, carriage return, C1, a bidi override) is refused before anything is done (rule
    `note.control-character`, a usage error). The status schema refuses the same in a note written by hand."""
    bad = first_control(note, lines=True)
    if bad is not None:
        raise PbemError("note.control-character", f"the note holds the control character U+{ord(bad):04X} "
                        f"at {note.index(bad) + 1}: {terminal(note[:60])}",
                        hint="write the note as plain text (newlines are fine)")


def yield_turn(ws: Workspace, me: Identity, note: str = "") -> tuple[str, Status | None]:
    """Settle what I owe (dice contributions and reveals, secrets due), write status.yaml as replay computes it
    and commit signed; nothing changes if the result is illegal. Before the start it settles dice only."""
    check_note(note)
    head = ws.head()
    if head is None:
        raise PbemError("setup.not-started", "this repository has no game yet (pbem init)")
    player = whoami(ws, me)
    if player is None:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    files = ws.worktree_files()
    if not head.started:
        done: list[str] = []
        for _ in range(4):  # a commitment may make the contribution due at once (the last to commit reveals)
            step = chance.settle_dice(files, ws.game_of(files), me, player)
            if not step:
                break
            done += step
        if not _edits(ws, files):
            raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID) and you "
                            "owe no dice")
        return ws.commit(files, me, f"{player}: {'; '.join(done) or 'dice'}"), None
    one = _plan_turn(ws, head, ws.head_files(), files, me, player, note)
    if not one.findings or takes_turn(head, player) or not _owes(head, player):
        if one.findings:
            raise PbemError.from_finding(one.findings[0], exit_code=ILLEGAL)
        return ws.write_commits([one.commit]), one.status
    # What I owe comes before my turn (DESIGN §5: the game waits for it): settle it alone on HEAD's files,
    # then my edits in a commit of their own. Both are judged before anything is written.
    base = ws.head_files()
    first = _plan_turn(ws, head, base, dict(base), me, player, "")
    if first.findings or first.verified is None:
        raise PbemError.from_finding(one.findings[0], exit_code=ILLEGAL)
    merged = dict(first.commit.files)
    for path in set(files) | set(base):
        if files.get(path) != base.get(path) and path != STATUS:
            if path in files:
                merged[path] = files[path]
            else:
                merged.pop(path, None)
    second = _plan_turn(ws, first.verified, first.commit.files, merged, me, player, note)
    if second.findings:
        raise PbemError.from_finding(one.findings[0], exit_code=ILLEGAL)
    oid = ws.write_commits([first.commit, second.commit])
    return oid, second.status


@dataclass
class _Plan:
    """A commit worked out and judged, not yet written."""

    commit: PlannedCommit
    status: Status
    findings: list
    verified: Verified | None


def _plan_turn(ws: Workspace, prev: Verified, prev_files: dict[str, bytes], files: dict[str, bytes],
               me: Identity, player: str, note: str) -> _Plan:
    """Settle what `player` owes in `files`, write the computed status, judge the result against `prev`."""
    files = dict(files)
    done = settle(ws, prev, files, me, player)
    status = expected_after(prev, ws.game_of(files), player, note)[1]
    files[STATUS] = dump_mapping(status.to_data()).encode()
    summary = note or "; ".join(done) or "yield"
    message = f"{player}: {summary}\n\nnext: {status.control or 'game over'}"
    if status.pending:
        message += f" ({status.pending[0].why})"
    if done and note:
        message += "\n" + "\n".join(done)
    findings, verified = ws.judge_after(prev, prev_files, files, me)
    return _Plan(PlannedCommit(files, message, me), status, findings, verified)


def _owes(head: Verified, player: str) -> bool:
    return head.status is not None and any(b.player == player and b.kind in OWED for b in head.status.pending)


def _edits(ws: Workspace, files: dict[str, bytes]) -> bool:
    """Whether the working tree holds edits beyond HEAD (other than status.yaml)."""
    head = ws.head_files()
    return any(head.get(p) != files.get(p) for p in set(head) | set(files) if p != STATUS)


def settle(ws: Workspace, head: Verified, files: dict[str, bytes], me: Identity, player: str) -> list[str]:
    """Settle, in `files`, everything `player` owes now or will owe once this commit is replayed: his dice
    contributions and reveals, and the reveals of his secrets that come due (DESIGN §5, §6)."""
    done: list[str] = []
    for _ in range(8):  # each round may make more due (a reveal completes a batch); a few rounds suffice
        game = ws.game_of(files)
        stop, status = expected_after(head, game, player)
        if not any(b.player == player and b.kind in ("dice", "secret") for b in status.pending):
            break
        step = chance.settle_dice(files, game, me, player)
        mine = [s.id for s in secrets.due(game.secrets, game.manifest.ruleset.parse_time, stop.checkpoint.point,
                                          stop.over) if s.owner == player]
        # a sealed step's input is asked for once everyone has sealed (DESIGN §4.7): replay names the step
        steps = {b.at for b in status.pending if b.player == player and b.kind == "secret"}
        units = {b.unit for b in status.pending if b.player == player and b.kind == "secret" and b.unit}
        mine += [s.id for s in game.secrets.values()
                 if s.owner == player and not s.revealed and s.id not in mine
                 and (s.raw.get("step") in steps or (s.raw["kind"] == "target" and s.raw.get("concerns") in units))]
        # a secret sealed in this very commit is not revealed by it (that would be writing it in the clear)
        mine = [sid for sid in mine if sid in head.game.secrets]
        step += chance.due_reveals(files, game, me, player, mine)
        if not step:
            break
        done += step
    return done


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
    return expected_after(head, game, player, note)[1]


def commit_escrow(ws: Workspace, me: Identity, key: PrivateKey) -> list[str]:
    """As the dice escrow: sign every open escrow batch at HEAD, write the results (and the status that
    follows), commit signed by the escrow key. Only HEAD's files are used, never a working tree's edits."""
    head = ws.head()
    if head is None:
        raise PbemError("setup.not-started", "this repository has no game yet (pbem init)")
    files = ws.head_files()
    done = chance.escrow_sign(files, ws.game_of(files), key)
    if not done:
        return []
    if head.started:
        status = expected_after(head, ws.game_of(files), ESCROW)[1]
        files[STATUS] = dump_mapping(status.to_data()).encode()
    ws.commit(files, me, "escrow: " + "; ".join(done))
    return done
