"""The action auction at a simultaneous step (DESIGN §4.6, seed 000 §7).

When actions declared at a simultaneous step (e.g. fire) meet a break condition of another player who may act
in that same step, the step is not resolved: the actions are committed, and each triggered player in turn adds
actions at that step or passes. A player who passes is out for that trigger, but joins again when a new action
meets one of his conditions. Rounds go on while anyone other than the player who was in control added an action
in the round just ended; a new round asks only those who have not passed and for whom something was added since
their last answer (docs/tactical.md "Commits per fire step"). When all have passed, the step's actions are
resolved together.

The auction's course depends on who added what in which commit, so it lives in the checkpoint the verifier
carries from commit to commit (and in status.yaml's pending breaks), never in the files alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from pbem.errors import Finding
from pbem.formats.records import evolve
from pbem.protocol.model import Break, Entry
from pbem.rulesets.base import Point

AUCTION = "auction"


@dataclass(frozen=True)
class Auction:
    """One auction at step `at`: who is asked in this round (`queue`, head first), who added this round, who
    is out, everyone taking part, and the entries at the step already seen (by identity)."""

    at: Point
    initiator: str | None
    round: int
    queue: tuple[str, ...]
    members: frozenset[str]
    added: frozenset[str] = frozenset()
    passed: frozenset[str] = frozenset()
    seen: frozenset[bytes] = frozenset()
    closed: bool = False
    # who has seen every action added since his last answer: another round does not ask him again for nothing
    current: frozenset[str] = frozenset()


Triggered = Callable[[Sequence[Entry]], list[str]]  # the players whose conditions these new entries meet


def open_or_go_on(previous: Auction | None, at: Point, entries: Sequence[Entry], served: str | None,
                  initiator: str | None, triggered: Triggered,
                  order: Callable[[Sequence[str]], list[str]], gone: frozenset[str] = frozenset()) -> Auction | None:
    """The auction after the latest commit, or None when the step may resolve. `served` is the player who just
    committed (the head of the queue when an auction was open), `initiator` who held control when it opened.
    `gone`: the seats that left the game (a resign) or whose turn an nmr settles: each is out of the auction at
    once, as if he had passed, wherever he stands in its queue (DESIGN §4.8)."""
    seen = previous.seen if previous is not None and previous.at == at else frozenset()
    new = [e for e in entries if e.key not in seen]
    every = frozenset(e.key for e in entries)
    if previous is None or previous.at != at or previous.closed:
        if not new:
            return previous if previous is not None and previous.at == at else None
        woken = [p for p in triggered(new) if p not in gone]  # own events never trigger (unless `by: any`)
        if not woken:
            return Auction(at, initiator, 0, (), frozenset(), seen=every, closed=True)
        queue = tuple(order(woken))
        return Auction(at, initiator, 1, queue, frozenset(queue), seen=every)
    auction = previous
    left = gone & (set(auction.queue) | (auction.members - auction.passed))
    if left:
        auction = evolve(auction, queue=tuple(p for p in auction.queue if p not in left),
                          passed=auction.passed | left)
        if not auction.queue:
            return _round_over(auction, set(auction.added), set(auction.passed), set(auction.members), every,
                               order)
    if served != auction.queue[0]:
        return auction  # someone else settled something he owed; the same player is still asked
    mine = [e for e in new if e.by == served]
    added = auction.added | ({served} if mine else set())
    passed = auction.passed | (set() if mine else {served})
    replying = set(triggered(mine)) - {served} - gone if mine else set()
    passed -= replying
    waiting = list(auction.queue[1:])
    waiting += [p for p in order(sorted(replying)) if p not in waiting]
    members = auction.members | replying
    # his answer is up to date; an addition is news to everybody else
    current = frozenset({served}) if mine else auction.current | {served}
    if waiting:
        return evolve(auction, queue=tuple(waiting), added=frozenset(added), passed=frozenset(passed),
                       members=frozenset(members), seen=every, current=current)
    return _round_over(evolve(auction, current=current), set(added), set(passed), set(members), every, order)


def _round_over(auction: Auction, added: set[str], passed: set[str], members: set[str], every: frozenset[bytes],
                order: Callable[[Sequence[str]], list[str]]) -> Auction:
    """The auction once its round's queue is empty: another round while anyone but the initiator added, else
    closed (DESIGN §4.6). The new round asks only those who have not passed and for whom something was added
    since their last answer: the one who added last has nothing new to see, and asking him again would only
    cost a commit (he could add all he wanted in his answer)."""
    if added - {auction.initiator}:
        again = [p for p in order(sorted(members)) if p not in passed and p not in auction.current]
        if again:
            return evolve(auction, round=auction.round + 1, queue=tuple(again), added=frozenset(),
                           passed=frozenset(passed), members=frozenset(members), seen=every)
    return evolve(auction, queue=(), added=frozenset(added), passed=frozenset(passed), members=frozenset(members),
                   seen=every, closed=True)


def breaks(auction: Auction, when: str) -> tuple[Break, ...]:
    """The pending breaks of an open auction: the players still to be asked this round, in order."""
    why = (f"simultaneous actions declared at {when}: add yours at {when} or pass (auction round "
           f"{auction.round}, seed §7)")
    return tuple(Break(p, when, AUCTION, why) for p in auction.queue)



def is_open(auction: Auction | None, at: Point | None) -> bool:
    """Whether an action auction is still asking players at step `at` (a checkpoint's auction and point)."""
    return auction is not None and not auction.closed and auction.at == at and bool(auction.queue)


def dice_findings(open_after: bool, changed: Sequence[tuple[str, int | None]], when: str | None) -> list[Finding]:
    """Seed 000 §7.B, §7.F: while an action auction is open nobody "resolves any dice rolls, damage, etc.":
    the later bidders decide without knowing any result. A commit after which one is still open (`open_after`:
    it opened one, added to one, or was made out of turn while one asks someone) may not announce, contribute
    to, reveal or void a dice batch, nor reveal a secret (`changed`: (file, line) of each such change). The
    player whose pass closes the auction may roll in that same commit."""
    if not open_after or not changed:
        return []
    why = (f"an action auction is open at {when}: no die is rolled or revealed until everyone asked has passed "
           "(seed §7.B); roll once the auction is over")
    return [Finding("dice.auction-open", why, file=path, line=line) for path, line in changed]
