"""`pbem verify [RANGE]` and `pbem allowed-signers` (DESIGN §3, §8)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pbem.crypto.keys import PublicKey, allowed_signers_line
from pbem.errors import Finding, PbemError
from pbem.protocol.dice import ESCROW
from pbem.store.repo import GameRepo

if TYPE_CHECKING:  # `pbem verify` needs no workspace, and none of what it imports
    from pbem.services.workspace import Workspace
    from pbem.verify.history import HistoryResult


def commits_in_range(repo: GameRepo, spec: str) -> tuple[str, set[str]]:
    """(tip, commits reachable from the tip but not from the base) for `BASE..TIP` or a single revision."""
    base, sep, tip = spec.partition("..")
    if not sep:
        base, tip = "", spec
    tip_oid = repo.resolve(tip or "HEAD")
    hidden = set(repo.reachable(repo.resolve(base))) if base else set()
    return tip_oid, set(repo.reachable(tip_oid)) - hidden


def verify_range(repo: GameRepo, spec: str | None) -> tuple[list[Finding], int, "HistoryResult"]:
    """Verify the whole history to the range's tip; report the findings of the range's commits only, since
    each is checked against the full state before it (DESIGN §9 pull requests). Also the judged history
    itself, for a caller that keeps it (cli/fast.py: freeing it is work a process about to end need not do)."""
    if spec:
        tip, only = commits_in_range(repo, spec)
    else:
        head = repo.head_oid()
        if head is None:
            raise PbemError("repo.empty", "this repository has no commits yet")
        tip, only = head, None
    from pbem.verify.history import verify_history

    result = verify_history(repo, tip, cached=True, whole_sequence=only is not None, statuses=False)
    findings = result.findings(only)
    count = result.total if only is None else sum(1 for oid in result.sequence if oid in only)
    return findings, count, result


def signer_keys(ws: "Workspace") -> list[tuple[str, PublicKey]]:
    """(principal, public key) of every seated player at HEAD, and of the dice escrow."""
    game = ws.game_of(ws.head_files())
    keys = [(s.id, s.key) for s in game.manifest.seats if s.key is not None]
    if game.manifest.escrow_key is not None:
        keys.append((ESCROW, game.manifest.escrow_key))
    return keys


def allowed_signers_text(ws: "Workspace") -> str:
    """The players' keys at HEAD (and the dice escrow's) as a git allowed-signers file."""
    return "".join(allowed_signers_line(who, key) + "\n" for who, key in signer_keys(ws))
