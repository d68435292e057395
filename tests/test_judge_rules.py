"""The judge's shape (ARCHITECTURE §4.1): the protocol's names where the protocol is, one rule module per DESIGN
step, each citing its section, and the judge small enough to read like the rules."""

from __future__ import annotations

from pbem.protocol import dice, secrets
from pbem.protocol.model import OWED, READY, SEALED


def test_owed_names_the_break_kinds_of_dice_and_secrets() -> None:
    """What is owed out of turn (DESIGN §5, §6) spells the break kinds their own modules write."""
    assert OWED == (dice.DICE, secrets.SECRET, SEALED, READY)
