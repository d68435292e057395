"""DESIGN §2, rules of ownership: a player changes only his own players file and his own entries
(ownership.foreign-file, ownership.*)."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.protocol.history import ownership_findings
from pbem.protocol.verified import Verified
from pbem.verify.change import Change
from pbem.protocol.game import Game


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    player = change.player or ""
    findings = [Finding("ownership.foreign-file", f"{player} changed {path}, which only {owner} may change",
                        file=path) for path, owner in change.owner.items() if owner != player]
    findings.extend(ownership_findings(prev.game.inputs, game.inputs, player, change.reports))
    return findings
