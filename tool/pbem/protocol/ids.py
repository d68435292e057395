"""Ids that carry their author (DESIGN §2, §4.9): whatever a player writes out of turn (a dice batch, a secret, an
agreement, a whisper) is named `<author>-NNNN`, numbered per author, so two players acting at once never write
the same path, and the id itself says whose it must be. A press file is named after its seat the same way,
`press/<seat>.yaml`."""

from __future__ import annotations

from typing import Iterable


def author_of(document_id: str) -> str:
    """The player an id names: the part before its last `-` (`rom-0001` -> `rom`); "" for an id without one,
    which names nobody (the layout and the schemas allow none)."""
    return document_id.rpartition("-")[0]


def press_author(path: str) -> str:
    """The seat a press file belongs to: press/<author>.yaml."""
    return path[len("press/"):-len(".yaml")]


def next_id(existing: Iterable[str], author: str) -> str:
    """`author`'s next free id: `<author>-NNNN`, one more than the highest of his among `existing` (other
    authors' ids are not counted)."""
    numbers = [int(number) for i in existing
               if (parts := i.rpartition("-"))[0] == author and (number := parts[2]).isdecimal()]
    return f"{author}-{max(numbers, default=0) + 1:04d}"
