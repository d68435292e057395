"""`evolve`: `dataclasses.replace` without running `__init__` again, for the frozen records judging copies at
every step (a game state with one unit changed, a unit with one more shot, an author's view).

`dataclasses.replace` builds its arguments field by field and calls the class's generated `__init__`, which sets
each field through `object.__setattr__`: some 5 to 10 µs a copy, several times a commit. A record whose
`__init__` only stores its fields (no `__post_init__`, no `InitVar`, no cached properties that a copy would
carry stale) is the same once its fields are copied and the changed ones set, so `evolve` does that; any other
class goes to `dataclasses.replace`.

`once`: `functools.cached_property` without the lock it takes at each first read before Python 3.12 (the judge
reads a dozen such properties of each commit's change once each).
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any, TypeVar

T = TypeVar("T")


class once(cached_property):  # type: ignore[type-arg]
    """A property computed at its first read and kept in the instance (then read as any attribute). Two threads
    reading it first at once may both compute it, as `cached_property` does since Python 3.12: the values here
    are pure."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value


_PLAIN: dict[type, frozenset[str] | None] = {}  # class -> its field names if copying them is enough, else None


def _plain_fields(cls: type) -> frozenset[str] | None:
    try:
        return _PLAIN[cls]
    except KeyError:
        pass
    names: frozenset[str] | None = None
    if (dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__")
            and not any(isinstance(v, cached_property) for k in cls.__mro__ for v in vars(k).values())):
        fields = dataclasses.fields(cls)
        if all(f.init and f._field_type is dataclasses._FIELD for f in fields):  # type: ignore[attr-defined]
            names = frozenset(f.name for f in fields)
    _PLAIN[cls] = names
    return names


def evolve(record: T, **changes: Any) -> T:
    """`record` with `changes` to its fields, as `dataclasses.replace(record, **changes)` gives it."""
    names = _plain_fields(type(record))
    if names is None or not changes.keys() <= names or record.__dict__.keys() != names:
        return dataclasses.replace(record, **changes)  # type: ignore[type-var]
    copy = object.__new__(type(record))
    state = copy.__dict__
    state.update(record.__dict__)
    state.update(changes)
    return copy
