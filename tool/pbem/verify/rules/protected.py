"""DESIGN §3 Trees: game.yaml, README, the workflow and .github/CODEOWNERS are frozen once the game has started
(protected.changed); game.yaml changes only as a completed amend or seat agreement says, the workflow only by a
completed upgrade (DESIGN §4.8)."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.protocol.verified import Verified
from pbem.verify.change import Change
from pbem.files.layout import CODEOWNERS, GAME, README, WORKFLOW
from pbem.protocol.game import Game

PROTECTED = (GAME, WORKFLOW, README, CODEOWNERS)


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """A commit in play changed a frozen file."""
    return [Finding("protected.changed", f"{path} is frozen once the game has started (a turn must not be able to "
                    "change the game or disable its own check)", file=path)
            for path in PROTECTED if path in change.paths and not (path == GAME and change.agreed)
            and not (path == WORKFLOW and change.upgraded)]


def at_start(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """The start commit (pbem start) freezes game.yaml as the players consented to it (DESIGN §2 Setup)."""
    if GAME in change.paths:
        return [Finding("protected.changed", "the start commit may not change game.yaml", file=GAME)]
    return []
