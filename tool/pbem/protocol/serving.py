"""Who is served first among pending breaks (seed 000 §3.B; DESIGN §4.2): table order, starting after the
player who just yielded."""

from __future__ import annotations

from typing import Iterable, Sequence

from pbem.protocol.model import Break


def serving_order(breaks: Iterable[Break], players: Sequence[str], after: str | None) -> tuple[Break, ...]:
    """`breaks` sorted around the table starting with the seat after `after` (or the first seat)."""
    seats = {p: i for i, p in enumerate(players)}
    start = (seats[after] + 1) if after in seats else 0
    n = max(len(players), 1)
    return tuple(sorted(breaks, key=lambda b: ((seats.get(b.player, n) - start) % n, b.player)))


def seat_before(players: Sequence[str], player: str) -> str | None:
    """The seat before `player`, so that serving starts with `player` (used by `pbem start --first`)."""
    if player not in players:
        return None
    return players[players.index(player) - 1]
