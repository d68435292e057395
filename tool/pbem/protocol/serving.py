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


# --- the order around the table by dice (seed 000 §2.A: "simply choose one that is convenient, or determine by
# die rolls"): the start batch rolls one die for each seat but the last, of n, n-1, …, 2 sides --------------------

START_REF = "start"  # the ref of the die that decides who starts (`pbem start --roll`)
ORDER_REF = "start/order/"  # + k (1 … n-1): the dice of the table order


def order_refs(seats: int) -> list[str]:
    """The refs of the table order's dice at a table of `seats` (none below three: two players sit in the only
    order there is, and who starts fixes who follows)."""
    return [f"{ORDER_REF}{k}" for k in range(1, seats)] if seats >= 3 else []


def start_sides(ref: str, seats: int) -> int | None:
    """The die the rules roll for a start ref: one side per seat for who starts, n-k+1 for the k-th order die;
    None for any other ref."""
    if ref == START_REF:
        return seats
    if ref in order_refs(seats):
        return seats - int(ref[len(ORDER_REF):]) + 1
    return None


def permutation(seats: Sequence[str], dice: Sequence[int]) -> tuple[str, ...]:
    """The table order the dice give (Fisher-Yates, from game.yaml's order): die k (1-based, of n-k+1 sides)
    picks which of the n-k+1 seats not placed yet sits k-th (it swaps places with the seat there). Every sequence
    of dice gives another order and every order comes from exactly one, so each of the n! orders is as likely."""
    order = list(seats)
    if len(dice) != max(len(order) - 1, 0):
        raise ValueError(f"{len(order)} seats need {max(len(order) - 1, 0)} order dice, got {len(dice)}")
    for i, die in enumerate(dice):
        if not 1 <= die <= len(order) - i:
            raise ValueError(f"order die {i + 1} is a d{len(order) - i}, got {die}")
        j = i + die - 1
        order[i], order[j] = order[j], order[i]
    return tuple(order)
