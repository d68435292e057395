"""The judge's rules, one module per step of DESIGN §3–§7 (verify.commit runs them in the order of the commit's
kind). Each rule is `check(prev, game, change) -> list[Finding]`: `prev` what is known before the commit, `game`
the game as judged after it, `change` what the commit changed (verify.change), worked out once for all rules."""

from __future__ import annotations

from typing import Callable

from pbem.errors import Finding
from pbem.protocol.verified import Verified
from pbem.verify.change import Change
from pbem.protocol.game import Game

Rule = Callable[[Verified, Game, Change], list[Finding]]
