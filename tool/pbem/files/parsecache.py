"""Parsed files kept by blob id, bounded in bytes (DESIGN §9, §11): most files do not change from one commit to
the next, and a changed file has a new id."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

FILE_BYTES = 16  # memory a parsed file holds per byte of YAML it was read from (measured on report files)
LINE_BYTES = 28  # the same for a report line kept by its text: the line, the mapping read from it, its entry
ITEM_BYTES = 512  # what any kept value costs at least, so that many small ones count too
_MISSING = object()


class ParseCache:
    """A least-recently-used cache of parsed files keyed by (blob id, kind), bounded by the memory its values
    hold, each weighed by the size of what it was read from (DESIGN §9: caches bounded in bytes). `lines`:
    the same for report lines by their text, with its own budget."""

    def __init__(self, budget: int = 48 << 20, lines: int = 32 << 20) -> None:
        self.budget = budget
        self.held = 0
        self._items: OrderedDict[tuple[str, ...], tuple[Any, int]] = OrderedDict()
        self.lines: ParseCache | None = ParseCache(lines, 0) if lines else None

    def get(self, key: tuple[str, ...], make: Callable[[], Any], weight: int | Callable[[], int] = 0) -> Any:
        """The value kept under `key`, else `make()`, kept at `weight` bytes (or what `weight()` says once
        it is made) and pushing out the least recently used values beyond the budget."""
        found = self._items.get(key, _MISSING)
        if found is not _MISSING:
            self._items.move_to_end(key)
            return found[0]  # type: ignore[index]
        value = make()
        cost = ITEM_BYTES + (weight() if callable(weight) else weight)
        if cost > self.budget:
            return value  # not kept: it would push out everything else, and be pushed out next
        self._items[key] = (value, cost)
        self.held += cost
        while self.held > self.budget:
            _, (_, gone) = self._items.popitem(last=False)
            self.held -= gone
        return value

    @property
    def count(self) -> int:
        """How many values are kept (not `__len__`: an empty cache is still a cache, and truthy)."""
        return len(self._items)


_WHOLE: ParseCache | None = None


def whole_files() -> ParseCache:
    """One cache per process of files read whole, never line by line: what the test suite's cross-checks read
    a game with to compare it with the incremental reader (PBEM_CROSSCHECK). A blob read whole gives the same
    value each time, so keeping it loses nothing of the comparison; without it, those checks read every file of
    the game again at every commit, most of the suite's time."""
    global _WHOLE
    if _WHOLE is None:
        _WHOLE = ParseCache(64 << 20, 0)
    return _WHOLE
