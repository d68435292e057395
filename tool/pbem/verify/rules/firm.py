"""Seed 000 §3.C, DESIGN §4.2: nothing before the firm marker changes (firm.changed); the entries a held step
was resolved with, and those an action auction has seen, may be added to but not withdrawn; only the player asked
in an open action auction adds to its step (rules.auction, seed §6.C.1, §7.D)."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.protocol.history import firm_findings
from pbem.protocol.model import REPLY
from pbem.protocol.verified import Verified
from pbem.verify.change import TURN, Change
from pbem.protocol.game import Game


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    assert prev.stop is not None
    player, turn = change.player or "", change.kind == TURN
    firm = prev.stop.checkpoint.point
    auction = prev.stop.checkpoint.auction
    committed = auction.seen if auction is not None and auction.at == firm else frozenset()
    if firm is not None and prev.status is not None and any(b.kind == REPLY for b in prev.status.pending):
        # a step held for replies was resolved once with these entries: they may be added to, not withdrawn
        committed = committed | {e.key for e in prev.game.inputs.at(firm)}
    findings = firm_findings(prev.game.inputs, game.inputs, firm, change.reports, committed)
    if committed and auction is not None and auction.at == firm:
        replying = turn and prev.status is not None and prev.status.pending[:1] != () and \
            prev.status.pending[0].kind == REPLY and prev.status.pending[0].player == player
        asked = (not auction.closed and auction.queue[:1] == (player,)) or replying  # seed §6.C.1
        for entry in game.inputs.at(auction.at):
            if entry.key not in committed and entry.by == player and not asked:
                findings.append(Finding("rules.auction", f"{player} adds {dict(entry.do)} at {entry.at_text}, but "
                                        "he is not the one asked in its action auction" +
                                        (" (it is over)" if auction.closed else f" ({auction.queue[0]} is)")
                                        + " (seed §7.D)", file=entry.file, line=entry.line))
    return findings
