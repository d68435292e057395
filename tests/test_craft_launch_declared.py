"""Craft launches are declared at `activity`, like seeking-weapon launches (seed 000 §7.A; docs/tactical.md
"Launches are simultaneous within their step"): a shuttle, fighter or PF launched there that meets another
player's condition (`{system: {kind: launch}}`, `{system: {}}`) opens the action auction at that very step, so
a reply launch at the same impulse is possible; once all have passed the step resolves every launch together,
and the launch events, checked when declared, do not meet any condition again after the step.

Data vectors through replay with the real ruleset (no git).
"""

from __future__ import annotations

from typing import Any

from pbem.protocol.auction import AUCTION
from pbem.protocol.control import resume_from
from pbem.protocol.model import Entry, Inputs, PlayerInputs, Stop
from pbem.protocol.replay import replay, start_checkpoint
from pbem.rulesets.tactical import TacticalRuleset

RULES = TacticalRuleset()
PLAYERS = ("a", "b")
STEP = "1.1.activity"


def _carrier(unit: str, owner: str, hex_: str, craft: str) -> dict[str, Any]:
    return {"id": unit, "owner": owner, "hex": hex_, "facing": "A", "speed": 0, "turn_mode": 2,
            "shields": [20] * 6, "hull": 30, "systems": ["bay"],
            "craft": [{"id": craft, "type": "shuttle"}], "weapons": []}


SETUP = {
    "map": {"columns": 30, "rows": 30}, "turns": 1,
    "units": [_carrier("CA", "a", "0510", "SH1"), _carrier("D7", "b", "2510", "SH2")],
    "craft": {"shuttle": {"kind": "shuttle", "speed": 6, "turn_mode": 1, "hull": 6, "weapons": []}},
    "weapons": {},
}
UNIT_OF = {"a": "CA", "b": "D7"}
LAUNCHES = {"b": [{"system": {"kind": "launch"}}], "a": [{"system": {"kind": "launch"}}]}


def launch(by: str, craft: str, line: int) -> Entry:
    return Entry(RULES.parse_time(STEP), STEP, by, UNIT_OF[by], {"launch": {"craft": craft}}, "report/turn-01.yaml",
                 line)


def inputs(entries: list[Entry], breaks: dict[str, list[dict[str, Any]]]) -> Inputs:
    per = {p: PlayerInputs(RULES.parse_time("1.1.damage"), "1.1.damage", tuple(breaks.get(p, ()))) for p in PLAYERS}
    return Inputs.of_entries(PLAYERS, tuple(entries), per)


def first(entries: list[Entry], breaks: dict[str, list[dict[str, Any]]]) -> Stop:
    return replay(RULES, SETUP, inputs(entries, breaks), start_checkpoint(RULES, SETUP, PLAYERS), after="a",
                  served="a")


def then(previous: Stop, entries: list[Entry], breaks: dict[str, list[dict[str, Any]]], by: str) -> Stop:
    return replay(RULES, SETUP, inputs(entries, breaks), resume_from(previous, by), after=by, served=by)


def asked(stop: Stop) -> list[tuple[str, str | None, str]]:
    return [(b.player, b.at, b.kind) for b in stop.pending]


def active(stop: Stop) -> dict[str, Any]:
    return {u.id: u.hex for u in stop.checkpoint.state.units if u.id.startswith("SH") and u.active}


def test_a_declared_craft_launch_opens_the_auction_at_its_activity_step() -> None:
    """a's shuttle launch meets b's {system: {kind: launch}}: b is asked at 1.1.activity itself, and nothing of
    the step is resolved yet (SH1 still aboard)."""
    stop = first([launch("a", "SH1", 2)], LAUNCHES)
    assert asked(stop) == [("b", STEP, AUCTION)]
    assert active(stop) == {}


def test_a_reply_launch_at_the_same_impulse_and_both_resolve_together_without_a_second_break() -> None:
    """b launches his own shuttle in reply at that step, which wakes a; a passes; the step resolves both launches
    together (each shuttle in its carrier's hex) and the launch events are not met again after the step: the
    next break is everyone's horizon, not a condition at 1.1.activity."""
    entries = [launch("a", "SH1", 2)]
    opened = first(entries, LAUNCHES)
    entries.append(launch("b", "SH2", 3))
    replied = then(opened, entries, LAUNCHES, "b")
    assert asked(replied) == [("a", STEP, AUCTION)]
    done = then(replied, entries, LAUNCHES, "a")
    assert active(done) == {"SH1": (5, 10), "SH2": (25, 10)}
    assert {(b.at, b.kind) for b in done.pending} == {("1.2.move", "horizon")}


def test_without_a_condition_met_the_launch_resolves_at_once() -> None:
    stop = first([launch("a", "SH1", 2)], {"b": [{"system": {"kind": "land"}}]})
    assert all(b.kind != AUCTION for b in stop.pending)
    assert active(stop) == {"SH1": (5, 10)}
