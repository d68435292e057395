"""The action auction asks nobody again when nothing new happened since his last answer (DESIGN §4.6, seed 000
§7.D; docs/tactical.md "Commits per fire step, asked once"): a round after one in which somebody added asks only
the players who have not passed and for whom an action was added after they last answered. The protocol's
`open_or_go_on` alone, with hand-made triggers, at tables of two and three.
"""

from __future__ import annotations

from typing import Sequence

from pbem.protocol.auction import Auction, open_or_go_on
from pbem.protocol.model import Entry

AT = (1, 4, 1)
TABLE = ("a", "b", "c")


def shot(by: str, line: int) -> Entry:
    return Entry(AT, "1.4.fire", by, by.upper(), {"fire": {"weapon": f"ph{line}", "target": "X"}}, "report/t.yaml",
                 line)


def everybody_else(entries: Sequence[Entry]) -> list[str]:
    """Each shot meets the `fire` condition of every other player."""
    return sorted({p for e in entries for p in TABLE if p != e.by})


def order(players: Sequence[str]) -> list[str]:
    return [p for p in TABLE if p in players]


def step(previous: Auction | None, entries: list[Entry], served: str | None) -> Auction | None:
    return open_or_go_on(previous, AT, entries, served, "a", everybody_else, order)


def test_a_duel_the_one_who_added_last_is_not_asked_again_when_the_other_passes() -> None:
    entries = [shot("a", 1)]
    auction = step(None, entries, "a")
    assert auction is not None and auction.queue == ("b", "c")
    entries.append(shot("b", 2))  # b adds: a is woken (his condition), c still to answer
    auction = step(auction, entries, "b")
    assert auction is not None and auction.queue == ("c", "a")
    auction = step(auction, entries, "c")  # c passes
    auction = step(auction, entries, "a")  # a passes
    # b added in this round, but since his answer only passes came: nothing new to see, the auction is over
    assert auction is not None and auction.closed and auction.queue == ()


def test_three_players_only_those_with_something_new_are_asked_in_the_next_round() -> None:
    entries = [shot("a", 1)]
    auction = step(None, entries, "a")
    entries.append(shot("b", 2))
    auction = step(auction, entries, "b")  # b adds: news to c and a
    entries.append(shot("c", 3))
    auction = step(auction, entries, "c")  # c adds: news to a and b, whom it wakes in this round
    assert auction is not None and auction.queue == ("a", "b")
    auction = step(auction, entries, "a")  # a passes
    auction = step(auction, entries, "b")  # b passes
    # someone but a added, so a round would follow; but only c is left in it, and since c's answer only passes
    # came: nothing new to see, the auction is over
    assert auction is not None and auction.closed


def test_a_player_with_news_he_was_not_woken_by_is_asked_in_the_next_round() -> None:
    """b's condition meets only a's shots; c adds after b answered: b has not passed and something was added
    since his answer, so the next round asks him (and not c, who added last)."""
    def only_a_wakes_b(entries: Sequence[Entry]) -> list[str]:
        return sorted({p for e in entries for p in TABLE if p != e.by and (p != "b" or e.by == "a")})

    def go(previous: Auction | None, entries: list[Entry], served: str | None) -> Auction | None:
        return open_or_go_on(previous, AT, entries, served, "a", only_a_wakes_b, order)

    entries = [shot("a", 1)]
    auction = go(None, entries, "a")
    entries.append(shot("b", 2))
    auction = go(auction, entries, "b")
    entries.append(shot("c", 3))
    auction = go(auction, entries, "c")
    assert auction is not None and auction.queue == ("a",)
    auction = go(auction, entries, "a")  # a passes: round 2
    assert auction is not None and auction.round == 2 and auction.queue == ("b",), auction


def test_a_duel_course_asks_each_player_once_when_one_adds() -> None:
    """The same duel course, counted: the closed auction asked b once; asking him again would be one commit
    more per fire step with nothing to decide."""
    entries = [shot("a", 1)]
    asked = []
    auction = step(None, entries, "a")
    while auction is not None and not auction.closed:
        who = auction.queue[0]
        asked.append(who)
        if who == "b" and not any(e.by == "b" for e in entries):
            entries.append(shot("b", 2))
        auction = step(auction, entries, who)
    assert asked == ["b", "c", "a"]
