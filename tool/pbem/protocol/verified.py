"""What is known after accepting a commit (DESIGN §3 History): the state the judge is fed commit by commit."""

from __future__ import annotations

from dataclasses import dataclass

from pbem.crypto.keys import PublicKey
from pbem.protocol.model import Status, Stop
from pbem.rulesets.base import Point
from pbem.protocol.game import Game


@dataclass(frozen=True)
class Verified:
    """What is known after accepting a commit: the game as read there, where replay stopped, the status that
    follows (obligations first), and whose turn last moved the game on (serving order starts after him)."""

    game: Game
    stop: Stop | None  # None while the game is being set up
    founder: PublicKey | None
    actor: str | None = None  # the seat (or the escrow) that made this commit; None for the founder
    status: Status | None = None
    last_yielder: str | None = None
    # while special breaks are answered (seed §5.C): the player who took the turn before the first of them,
    # to whom control passes back
    back: str | None = None
    # what agreements did to the game at a game point (kind, player, the firm point where it took effect): a
    # resign, a seat given to a replacement, an nmr; a replay from an earlier point (after an erratum) does it
    # again at that same point (`gone_now`, `effects_of`)
    gone_at: tuple[tuple[str, str, Point], ...] = ()
    nmrs: tuple[tuple[str, Point], ...] = ()  # (an nmr agreement's id, the firm point it settled), in effect order

    @property
    def started(self) -> bool:
        return self.stop is not None
