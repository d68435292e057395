"""Errata from the player's side (DESIGN §4.8; seed 000 §4.A "Review the game report for errors up to the
current firm point. Promptly bring up errors with other players"): propose a correction of the firm report, sign
one. Each is one signed commit, made without holding control.

`propose` takes the correction from the working tree: the player edits the report files as they should read,
pbem turns the difference into an agreement of kind `erratum` (agreements/<me>-NNNN.yaml, signed by him), and
the report files go back to what is firm until every active player has signed; the last signature's commit
changes the report by exactly its entries (services.agreements). Other edits in the working tree are kept, and
never mixed into these commits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from pbem.errors import ILLEGAL, PbemError
from pbem.formats.freetext import check_text
from pbem.protocol import erratum as erratum_kind
from pbem.protocol import kinds
from pbem.protocol.agreements import Agreement
from pbem.protocol.erratum import Erratum
from pbem.protocol.kinds import ERRATUM
from pbem.protocol.history import entry_changes
from pbem.protocol.model import Status
from pbem.services import agreements
from pbem.services.agreements import correct, entry_data
from pbem.services.workspace import Identity, Workspace
from pbem.files.layout import REPORT_RE, STATUS
from pbem.protocol.game import Game
from pbem.protocol.control import who
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import errata_agreed

Files = dict[str, bytes]
OLD_ID = re.compile(r"e[0-9]{4,6}")  # the ids of the errata/ files, an older form no longer read


@dataclass(frozen=True)
class Done:
    """What an errata command did: the erratum, whether it is now applied, who still has to sign, the status."""

    erratum: str
    applied: bool
    unsigned: tuple[str, ...]
    status: Status
    commit: str


def propose(ws: Workspace, me: Identity, reason: str) -> Done:
    """Turn the working tree's changes to firm report entries into a new erratum signed by me, and commit it;
    the report files go back to HEAD's (the correction takes effect once everyone has signed)."""
    head, player = _seat(ws, me)
    check_text(reason, "the reason")
    if not reason.strip():
        raise PbemError("usage.erratum", "give the reason for the correction: --reason TEXT")
    head_files, working = ws.head_files(), ws.worktree_files()
    edited = sorted(p for p in set(head_files) | set(working)
                    if p != STATUS and head_files.get(p) != working.get(p))
    others = [p for p in edited if not REPORT_RE.match(p)]
    if others:
        raise PbemError("usage.uncommitted", f"you have edits to {', '.join(others)}: an erratum is proposed from "
                        "the report files alone", hint="commit or discard them first (git stash), then propose")
    removed, added = entry_changes(head.game.inputs, ws.game_of(working).inputs, set(edited))
    if not removed and not added:
        raise PbemError("usage.erratum", "the report files are as at HEAD: edit them as the correction should read "
                        "(only entries before the firm marker), then run `pbem erratum propose --reason TEXT`")
    firm = head.stop.checkpoint.point if head.stop is not None else None
    status = head.status
    assert status is not None  # `_seat` refused a head without a status
    for entry in (*removed, *added):
        if firm is not None and entry.at >= firm:
            raise PbemError("erratum.not-firm", f"{entry.by}'s {dict(entry.do)} at {entry.at_text} is not firm yet "
                            f"(firm to {status.firm}): its owner changes it in his turn; an erratum corrects "
                            "only what lies before the firm marker", file=entry.file, line=entry.line,
                            exit_code=ILLEGAL, hint="keep only the correction of firm entries in the working tree")
    content = {"reason": reason, "removed": [entry_data(e) for e in removed],
               "added": [entry_data(e) for e in added]}
    erratum_id = agreements.next_id(head.game, player)
    raw: dict[str, Any] = {"id": erratum_id, "kind": ERRATUM, "by": player, "content": content, "signatures": {}}
    raw["signatures"] = {player: agreements.signature(head.game, raw, me)}
    files = dict(head_files)
    files[f"agreements/{erratum_id}.yaml"] = agreements.dump(raw)
    summary = f"proposes erratum {erratum_id}: {reason}"
    for erratum in errata_agreed(head, ws.game_of(files)):  # a game of one active player: in effect at once
        correct(files, erratum, head.game)
    return _commit(ws, head, me, player, files, erratum_id, summary, keep_edits=False)


def sign(ws: Workspace, me: Identity, erratum_id: str) -> Done:
    """Add my signature to an erratum; when it completes the set, the same commit applies the correction."""
    head, _player = _seat(ws, me)
    return _as_done(ws, agreements.sign(ws, me, _agreement(head.game, erratum_id).id))


def apply(ws: Workspace, me: Identity, erratum_id: str) -> Done:
    """An erratum takes effect with its last signature (DESIGN §4.8): there is nothing to apply; say who still
    has to sign it."""
    head, _player = _seat(ws, me)
    agreement = _agreement(head.game, erratum_id)
    missing = agreements.unsigned(head.game, agreement)
    raise PbemError("erratum.unsigned" if missing else "usage.erratum",
                    f"erratum {erratum_id} takes effect with its last signature"
                    + (f": it lacks the signature of {', '.join(missing)}" if missing else ", and it has it"),
                    file=agreement.file, exit_code=ILLEGAL if missing else 2,
                    hint=f"{', '.join(missing)} runs `pbem sign {erratum_id}`" if missing else None)


def listing(game: Game, with_applied: bool = True) -> list[str]:
    """One line per erratum agreement for `pbem status` and `pbem watch`: what it corrects and who still has to
    sign."""
    out = []
    for agreement in sorted(_kind_erratum(game), key=lambda a: a.id):
        missing = agreements.unsigned(game, agreement)
        if not missing and not with_applied:
            continue
        state = f"to sign: {', '.join(missing)}" if missing else "applied"  # last, as `pbem watch` reads it
        out.append(f"{agreement.id} by {agreement.by} ({kinds.describe(agreement)}) — {state}")
    return out


def show(game: Game, erratum_id: str) -> str:
    """An erratum's reason, its entries and its signatures (`pbem erratum show`)."""
    agreement = _agreement(game, erratum_id)
    missing = agreements.unsigned(game, agreement)
    return _shown(erratum_kind.of_agreement(agreement), game, not missing, missing, f"pbem sign {erratum_id}")


def _shown(erratum: Erratum, game: Game, applied: bool, missing: Sequence[str], command: str) -> str:
    lines = [f"erratum {erratum.id} by {erratum.by}: {erratum.reason}"]
    for sign_, entries in (("-", erratum.removed), ("+", erratum.added)):
        for e in entries:
            what = " ".join(f"{k} {v}" for k, v in e.do.items())
            lines.append(f"  {sign_} {e.file}: {e.at_text:<14} {e.by:<8} {e.unit or '':<6} {what}")
    players = game.manifest.players
    lines.append("  signed by: " + (", ".join(p for p in players if p in erratum.signatures) or "nobody"))
    if applied:
        lines.append("  applied")
    elif missing:
        lines.append("  to sign: " + ", ".join(missing) + f" ({command})")
    return "\n".join(lines) + "\n"


# --- helpers ----------------------------------------------------------------------------------------------------

def _seat(ws: Workspace, me: Identity) -> tuple[Verified, str]:
    head = ws.head()
    if head is None or not head.started or head.status is None:
        raise PbemError("setup.not-started", "the game has not started yet: there is nothing firm to correct")
    if head.status.over:
        raise PbemError("game.over", "the game is over: its report is final", exit_code=ILLEGAL)
    player = who(head.game, me.public)
    if player is None or player not in head.game.manifest.players:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    return head, player


def _kind_erratum(game: Game) -> list[Agreement]:
    return [a for a in game.agreements.values() if a.kind == ERRATUM]


def _agreement(game: Game, erratum_id: str) -> Agreement:
    if OLD_ID.fullmatch(erratum_id):
        raise PbemError("usage.erratum", f"{erratum_id} is an id of the older errata/ files, which pbem no longer "
                        "reads: an erratum is an agreement (agreements/<author>-NNNN.yaml)",
                        hint="edit the report files as they should read, then `pbem agree erratum --reason TEXT`")
    agreement = agreements.by_id(game).get(erratum_id)
    if agreement is None or agreement.kind != ERRATUM:
        known = ", ".join(sorted(a.id for a in _kind_erratum(game))) or "none yet"
        raise PbemError("usage.no-erratum", f"no erratum {erratum_id!r} (errata: {known})")
    return agreement


def _as_done(ws: Workspace, done: agreements.Done) -> Done:
    """What `pbem erratum sign` says of an erratum agreement just signed: applied with its last signature."""
    head = ws.head()
    assert head is not None and head.status is not None
    return Done(done.agreement, not done.unsigned, done.unsigned, head.status, done.commit)


def _commit(ws: Workspace, head: Verified, me: Identity, player: str, files: Files, erratum_id: str, summary: str,
            keep_edits: bool = True) -> Done:
    """Commit with the status replay computes (Workspace.commit_out_of_turn), and say who still has to sign."""
    _stop, status, oid = ws.commit_out_of_turn(head, player, files, me, summary, keep_edits=keep_edits)
    game = ws.game_of(files)
    missing = agreements.unsigned(game, agreements.find(game, erratum_id))
    return Done(erratum_id, not missing, missing, status, oid)
