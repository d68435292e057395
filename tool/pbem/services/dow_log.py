"""Every resolved Diplomacy phase told from the game start (`pbem results`, `pbem log`)."""

from __future__ import annotations

from pbem.protocol.replay import start_checkpoint
from pbem.services.diplomacy import PhaseReport, chronicle
from pbem.protocol.verified import Verified


def told(head: Verified) -> list[PhaseReport]:
    """Every phase resolved up to HEAD's firm point, re-adjudicated from the game start: revealed orders, press,
    results; the phases an nmr settled and those after a resignation included."""
    game = head.game
    ruleset = game.manifest.ruleset
    assert head.stop is not None
    start = start_checkpoint(ruleset, game.manifest.setup, game.manifest.players)
    until = None if head.stop.over else head.stop.checkpoint.point
    return chronicle(game, start.point, start.state, until, head.gone_at, fresh=True)[0]


def log_lines(head: Verified) -> list[str]:
    """`pbem log` for a Diplomacy game: every resolved phase with its orders and results, press left out (the
    press files hold it, `pbem results` shows both)."""
    return [line for report in told(head) for line in report.lines(press=False)]
