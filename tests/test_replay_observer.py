"""Replay's observer (protocol/replay.py `observer`, protocol.model.Resolved): it sees every step replay resolves,
in game order, with what that step began from, its actions and what `apply` made of them, and nothing replay did
not resolve; raising in it ends the replay (services.dow.chronicle stops there)."""

from __future__ import annotations

import pytest

from pbem.protocol.model import Resolved
from pbem.protocol.replay import replay, start_checkpoint

from test_protocol import RULES, inputs


def _replay(observer, **kw):
    setup = {"start": {"a": 0, "b": 50}}
    inp = inputs(["a", "b"], **kw)
    return replay(RULES, setup, inp, start_checkpoint(RULES, setup, ["a", "b"]), None, observer=observer)


def test_the_observer_sees_each_resolved_step_in_order_and_no_other() -> None:
    seen: list[Resolved] = []
    stop = _replay(seen.append, entries=[("2", "a", {"step": 0})], through={"a": "4", "b": "6"})
    assert [RULES.format_time(s.point) for s in seen] == ["1", "2", "3", "4"]  # a's horizon ends at 4
    assert stop.checkpoint.point == RULES.parse_time("5") and stop.pending[0].player == "a"
    assert seen[0].begun == seen[0].before  # the tiny ruleset has no press: the actions meet the state it began from
    for earlier, later in zip(seen, seen[1:]):
        assert later.begun == earlier.after  # each step begins where the one before left the game
    second = seen[1]
    assert {(a.by, dict(a.do)["step"], a.source) for a in second.actions} == {("a", 0, "entry"), ("b", 1, "default")}
    assert second.after.at("a") == second.begun.at("a") and second.after.at("b") == second.begun.at("b") + 1
    assert seen[-1].after == stop.checkpoint.state


def test_an_observer_that_raises_ends_the_replay_there() -> None:
    class Enough(Exception):
        pass

    seen: list[str] = []

    def observe(step: Resolved) -> None:
        seen.append(RULES.format_time(step.point))
        if len(seen) == 2:
            raise Enough

    with pytest.raises(Enough):
        _replay(observe, through={"a": "9", "b": "9"})
    assert seen == ["1", "2"]


def test_without_an_observer_replay_is_unchanged() -> None:
    watched = _replay(lambda step: None, through={"a": "7", "b": "7"})
    plain = _replay(None, through={"a": "7", "b": "7"})
    assert watched == plain
