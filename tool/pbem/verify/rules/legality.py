"""DESIGN §4.2 "Entries and time": the entries a turn adds are judged with what their author could know when
writing them, the firm point and his own orders since (rules.illegal-action, rules.duplicate-action); what others
made impossible later is void at replay, never a finding."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.protocol.legality import own_findings
from pbem.protocol.verified import Verified
from pbem.verify.change import Change
from pbem.protocol.game import Game


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    if not change.reports:
        return []
    assert prev.stop is not None
    return own_findings(game.manifest.ruleset, game.manifest.setup, game.inputs, prev.stop.checkpoint,
                        change.player or "", change.added)
