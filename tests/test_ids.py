"""Ids that carry their author (DESIGN §2, §4.9; pbem.protocol.ids): every out-of-turn document kind (dice batch,
secret, agreement, whisper) is numbered per author by one rule, and the id names its author back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pbem.protocol import ids

authors = st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True)
numbered = st.builds(lambda a, n: f"{a}-{n:04d}", authors, st.integers(1, 9999))


@given(st.lists(numbered), authors)
def test_the_next_id_is_the_authors_own_and_new(existing: list[str], author: str) -> None:
    new = ids.next_id(existing, author)
    assert new not in existing
    assert ids.author_of(new) == author
    mine = [int(i.rpartition("-")[2]) for i in existing if ids.author_of(i) == author]
    assert int(new.rpartition("-")[2]) == max(mine, default=0) + 1


def test_numbers_count_per_author() -> None:
    existing = ["fed-0001", "fed-0003", "kli-0009", "fed-x-0002"]
    assert ids.next_id(existing, "fed") == "fed-0004"
    assert ids.next_id(existing, "kli") == "kli-0010"
    assert ids.next_id(existing, "fed-x") == "fed-x-0003"  # the author is all before the last `-`
    assert ids.next_id({}, "rom") == "rom-0001"  # a mapping's keys, as the game's batches and secrets are held
    assert ids.author_of("b0002") == ""  # an id without an author names nobody (no path of the layout)
    assert ids.press_author("press/france.yaml") == "france"
