"""Protocol core (DESIGN §4.1–§4.4, seed 000 §3–§6) driven by the tiny ruleset in tests/tinyrules.py."""

from __future__ import annotations

import pytest

from pbem.protocol.control import progress_error, resume_from, status_of
from pbem.protocol.history import firm_findings, ownership_findings
from pbem.protocol.model import Entry, Inputs, PlayerInputs
from pbem.protocol.replay import replay, start_checkpoint
from pbem.protocol.serving import seat_before, serving_order
from pbem.protocol.model import Break
from tinyrules import TinyRuleset

RULES = TinyRuleset()


def inputs(players, entries=(), through=None, breaks=None):
    through = through or {}
    breaks = breaks or {}
    per = {
        p: PlayerInputs(
            through=RULES.parse_time(through[p]) if p in through else None,
            through_text=through.get(p),
            breaks=tuple(breaks.get(p, ())),
            file=f"players/{p}.yaml",
        )
        for p in players
    }
    ents = tuple(
        Entry(RULES.parse_time(at), at, by, by, do, "report/steps.yaml", i + 2)
        for i, (at, by, do) in enumerate(entries)
    )
    return Inputs.of_entries(tuple(players), ents, per)


def run(players, start, after=None, **kw):
    setup = {"start": start}
    inp = inputs(players, **kw)
    return replay(RULES, setup, inp, start_checkpoint(RULES, setup, players), after), inp


def who(stop):
    return [(b.player, b.at, b.kind) for b in stop.pending]


# (name, players, start positions, entries, through, breaks, after) -> expected pending [(player, at, kind)]
VECTORS = [
    ("§4.2.1 at the start everyone needs orders, table order", ["a", "b"], {"a": 0, "b": 50}, [], {}, {}, None,
     [("a", "1", "horizon"), ("b", "1", "horizon")]),
    ("§4.2.1 the shorter horizon breaks first, before the step", ["a", "b"], {"a": 0, "b": 50}, [],
     {"a": "9", "b": "4"}, {}, "a", [("b", "5", "horizon")]),
    ("§4.2.2 a condition met by an enemy's move breaks after the step", ["a", "b"], {"a": 0, "b": 10},
     [("3", "b", {"step": -1})], {"a": "20", "b": "20"}, {"a": [{"near": 9}]}, "b",
     [("a", "3", "condition")]),
    ("§4.2 own events never trigger", ["a", "b"], {"a": 0, "b": 10},
     [("3", "a", {"step": 0})], {"a": "20", "b": "20"}, {"a": [{"moves": {}}]}, "b",
     []),
    ("§4.2 own events trigger with by: any", ["a", "b"], {"a": 0, "b": 10},
     [("3", "a", {"step": 0})], {"a": "20", "b": "20"}, {"a": [{"moves": {}, "by": "any"}]}, "b",
     [("a", "3", "condition")]),
    ("seed §6.A explicit break point", ["a", "b"], {"a": 0, "b": 10}, [],
     {"a": "20", "b": "20"}, {"b": [{"at": "7"}]}, "a", [("b", "7", "at")]),
    ("seed §3.B several met: table order after the yielder", ["a", "b", "c"], {"a": 0, "b": 30, "c": 60},
     [("4", "b", {"step": 0})], {"a": "20", "b": "20", "c": "20"},
     {"a": [{"moves": {}}], "c": [{"moves": {}}]}, "b", [("c", "4", "condition"), ("a", "4", "condition")]),
    ("seed §3.B horizons of several: table order after the yielder", ["a", "b", "c"], {"a": 0, "b": 30, "c": 60},
     [], {"a": "3", "b": "9", "c": "3"}, {}, "a", [("c", "4", "horizon"), ("a", "4", "horizon")]),
]


@pytest.mark.parametrize("name,players,start,entries,through,breaks,after,expected", VECTORS,
                         ids=[v[0] for v in VECTORS])
def test_replay_vectors(name, players, start, entries, through, breaks, after, expected):
    stop, _ = run(players, start, after, entries=entries, through=through, breaks=breaks)
    assert who(stop) == expected
    if not expected:
        assert stop.over


def test_condition_break_makes_the_step_firm_and_carries_the_others():
    stop, inp = run(["a", "b", "c"], {"a": 0, "b": 30, "c": 60}, "b",
                    entries=[("4", "b", {"step": 0})], through={"a": "20", "b": "20", "c": "20"},
                    breaks={"a": [{"moves": {}}], "c": [{"moves": {}}]})
    status = status_of(RULES, stop, "b")
    assert status.control == "c" and status.firm == "5"
    # c is served; a is still owed control at the same firm point, whatever c wrote after it.
    resumed = resume_from(stop, "c")
    again = replay(RULES, {"start": {}}, inp, resumed, "c")
    assert who(again) == [("a", "4", "condition")]
    assert status_of(RULES, again, "c").firm == "5"
    # once a is served too, replay goes on from the firm point to the end
    last = replay(RULES, {"start": {}}, inp, resume_from(again, "a"), "a")
    assert last.over and status_of(RULES, last, "a").control is None


def test_crossing_condition_does_not_refire_while_inside():
    # b walks towards a; `near 9` fires once when crossing, not at every later step
    stop, inp = run(["a", "b"], {"a": 0, "b": 10}, "b",
                    entries=[(str(i), "b", {"step": -1}) for i in range(1, 8)],
                    through={"a": "20", "b": "20"}, breaks={"a": [{"near": 9}]})
    assert who(stop) == [("a", "1", "condition")]
    after = replay(RULES, {"start": {}}, inp, resume_from(stop, "a"), "a")
    assert after.over


def test_an_entry_illegal_at_replay_is_void_with_file_and_line_and_default_applies():
    """DESIGN §4.2 "Entries and time": replay voids it (logged, for its owner), it is never a finding."""
    stop, _ = run(["a", "b"], {"a": 0, "b": 50}, "a",
                  entries=[("2", "a", {"step": 5})], through={"a": "3", "b": "3"})
    assert stop.problems == ()
    (void,) = stop.voids
    assert (void.player, void.at, void.file, void.line) == ("a", "2", "report/steps.yaml", 2)
    assert stop.checkpoint.voids == stop.voids
    assert stop.checkpoint.state.at("a") == 3  # three default steps of +1


def test_a_second_action_for_one_unit_at_one_step_is_void():
    stop, _ = run(["a", "b"], {"a": 0, "b": 50}, "a",
                  entries=[("2", "a", {"step": 0}), ("2", "a", {"step": 1})], through={"a": "3", "b": "3"})
    assert stop.problems == () and [v.reason for v in stop.voids] == ["a second 'step' for a at 2"]


def test_progress_rule_seed_4c():
    firm = RULES.parse_time("5")
    behind = inputs(["a", "b"], through={"a": "4", "b": "9"})
    covered = inputs(["a", "b"], through={"a": "5", "b": "9"})
    assert "made no progress" in progress_error(RULES, firm, "a", behind)
    assert progress_error(RULES, firm, "a", covered) is None
    assert "over" in progress_error(RULES, None, "a", covered)


def test_firm_entries_cannot_change_but_later_ones_can():
    firm = RULES.parse_time("5")
    before = inputs(["a", "b"], entries=[("3", "a", {"step": 0}), ("7", "a", {"step": 0})])
    edited_late = inputs(["a", "b"], entries=[("3", "a", {"step": 0}), ("7", "a", {"step": -1})])
    edited_firm = inputs(["a", "b"], entries=[("3", "a", {"step": 1}), ("7", "a", {"step": 0})])
    reordered = inputs(["a", "b"], entries=[("7", "a", {"step": 0}), ("3", "a", {"step": 0})])
    assert firm_findings(before, edited_late, firm) == []
    assert firm_findings(before, reordered, firm) == []
    rules = [f.rule for f in firm_findings(before, edited_firm, firm)]
    assert rules == ["firm.changed", "firm.changed"]  # removed old + added new


def test_horizon_may_not_move_back_behind_firm():
    firm = RULES.parse_time("5")
    before = inputs(["a", "b"], through={"a": "8"})
    after = inputs(["a", "b"], through={"a": "4"})
    assert [f.rule for f in firm_findings(before, after, firm)] == ["firm.changed"]


def test_ownership_foreign_entry():
    before = inputs(["a", "b"], entries=[("7", "b", {"step": 0})])
    after = inputs(["a", "b"], entries=[("7", "b", {"step": 1}), ("8", "a", {"step": 0})])
    found = ownership_findings(before, after, "a")
    assert [f.rule for f in found] == ["ownership.foreign-entry", "ownership.foreign-entry"]
    assert ownership_findings(before, after, "b")[0].message.startswith("b wrote an entry in a's name")


def test_serving_order_wraps_around_the_table():
    breaks = [Break(p, "1", "horizon", "") for p in ["a", "b", "c", "d"]]
    assert [b.player for b in serving_order(breaks, ["a", "b", "c", "d"], "c")] == ["d", "a", "b", "c"]
    assert seat_before(["a", "b", "c"], "a") == "c"
