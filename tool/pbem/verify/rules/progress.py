"""Seed 000 §4.C: a turn must act or forfeit the firm step, and settling what one owes must settle some of it
(progress.none); the answer to a special break is an explicit entry at its step, one of the options (seed §5.C,
rules.bad-clarify)."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.protocol.control import progress_error
from pbem.protocol.model import CLARIFY, Break
from pbem.protocol.verified import Verified
from pbem.verify.change import TURN, Change
from pbem.files.layout import STATUS
from pbem.protocol.game import Game


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    assert prev.stop is not None
    player, expected = change.player or "", change.expected[1]
    if change.kind == TURN:
        reason = (progress_error(game.manifest.ruleset, prev.stop.checkpoint.point, player, game.inputs)
                  if game.manifest.ruleset.uses_horizons else None)
        if reason:
            return [Finding("progress.none", reason, file=f"players/{player}.yaml")]
        assert prev.status is not None
        held = prev.status.pending[0]
        if held.kind == CLARIFY:
            return clarified(held, game)
        if held in expected.pending:
            return [Finding("progress.none", f"{player} made no progress: his break still stands ({held.why})",
                            file=STATUS)]
        return []
    mine = change.mine
    still = [b for b in mine if b in expected.pending]
    if len(still) == len(mine):
        return [Finding("progress.none", f"{player} owes {mine[0].why} and settled none of it", file=STATUS)]
    return []


def clarified(held: Break, game: Game) -> list[Finding]:
    """Seed §5.C: the answer to a special break is an explicit entry at that step, one of the options."""
    ruleset = game.manifest.ruleset
    point = ruleset.parse_time(held.at) if held.at else None
    answers = [e for e in game.inputs.at(point) if e.by == held.player and e.unit == held.unit] if point else []
    if not answers:
        return [Finding("rules.bad-clarify", f"{held.player} must answer the special break for {held.unit} at "
                        f"{held.at} with an entry there: one of {[dict(o) for o in held.options]}", file=STATUS)]
    return [Finding("rules.bad-clarify", f"{e.unit} at {e.at_text}: {dict(e.do)} is not one of the options "
                    f"{[dict(o) for o in held.options]} (seed §5.C)", file=e.file, line=e.line)
            for e in answers if dict(e.do) not in [dict(o) for o in held.options]]
