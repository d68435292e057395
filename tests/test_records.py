"""`evolve` (formats/records.py) gives what `dataclasses.replace` gives, and takes the long road for records whose
`__init__` does more than store fields."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.formats import records
from pbem.formats.records import evolve, once


@dataclass(frozen=True)
class Plain:
    a: int
    b: tuple[int, ...] = ()
    c: str = "x"


@dataclass(frozen=True)
class Derived:
    a: int
    double: int = field(default=0, compare=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "double", 2 * self.a)


@dataclass(frozen=True)
class Cached:
    a: int

    @cached_property
    def square(self) -> int:
        return self.a * self.a


@given(st.integers(), st.lists(st.integers(), max_size=3).map(tuple), st.text(max_size=5),
       st.sampled_from([{}, {"a": 1}, {"b": (2,)}, {"a": 3, "c": "y"}]))
def test_evolve_is_replace_on_plain_records(a: int, b: tuple[int, ...], c: str, changes: dict) -> None:
    record = Plain(a, b, c)
    made = evolve(record, **changes)
    assert made == dataclasses.replace(record, **changes) and type(made) is Plain
    assert record == Plain(a, b, c)  # the original is untouched
    assert records._plain_fields(Plain) == {"a", "b", "c"}


def test_records_that_compute_go_the_long_road() -> None:
    assert evolve(Derived(2), a=5).double == 10
    cached = Cached(3)
    assert cached.square == 9
    assert evolve(cached, a=4).square == 16  # a copied cache would say 9
    assert records._plain_fields(Derived) is None and records._plain_fields(Cached) is None


def test_unknown_fields_are_refused_as_replace_refuses_them() -> None:
    with pytest.raises(TypeError):
        evolve(Plain(1), d=2)


def test_the_records_judging_copies_most_take_the_short_road() -> None:
    from pbem.protocol.auction import Auction
    from pbem.protocol.model import Checkpoint, Status
    from pbem.rulesets.tactical.foresight import OwnView
    from pbem.rulesets.tactical.state import TacticalState, Unit

    for cls in (TacticalState, Unit, OwnView, Status, Checkpoint, Auction):
        assert records._plain_fields(cls) is not None, cls


def test_once_computes_a_property_at_its_first_read_and_keeps_it() -> None:
    calls: list[int] = []

    class Counted:
        @once
        def value(self) -> int:
            calls.append(1)
            return len(calls) * 10

    first, second = Counted(), Counted()
    assert (first.value, first.value, second.value) == (10, 10, 20) and len(calls) == 2
    assert vars(first) == {"value": 10}  # kept in the instance: read after as any attribute
    assert isinstance(vars(Counted)["value"], cached_property)  # `evolve` knows a copy would carry it stale
    assert Counted.value is vars(Counted)["value"]
