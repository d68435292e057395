"""Launches are simultaneous within their step, like fire (seed 000 §7.A: "the actions that are simultaneous in
normal game play really are simultaneous"; docs/tactical.md "Launches are simultaneous within their step").

The `activity` step of tactical/1 is a simultaneous step: a seeking-weapon launch declared there is not resolved
when it meets another player's `{launch: {}}` or `{fire: {}}` (seed §6.D.4: "fire" is any direct fire or seeking
weapon launch); it opens the same action auction as fire (seed §7.B-D, pbem.protocol.auction), in which each
triggered player may launch in reply at that very step or pass; when all have passed the step resolves every
launch together, from the state before the step. What else happens at activity (an HET, a speed change, a
system switched) opens no auction and meets conditions after the step, as before.

Data vectors driven through replay with the real ruleset (no git), then one race through `pbem push`: two
clones of a hooked bare repository, the reply launch (its target sealed in the same commit) rebased over an
out-of-turn commit that landed first.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pbem.protocol.auction import AUCTION
from pbem.protocol.control import resume_from, status_of
from pbem.protocol.history import firm_findings
from pbem.protocol.model import Entry, Inputs, PlayerInputs, Stop
from pbem.protocol.replay import replay, start_checkpoint
from pbem.rulesets.tactical import TacticalRuleset

RULES = TacticalRuleset()
PLAYERS = ("a", "b", "c")
RACKS = [{"id": "dr1", "type": "drone", "arcs": ["A"]}, {"id": "dr2", "type": "drone", "arcs": ["A"]},
         {"id": "pl1", "type": "plasma", "arcs": ["A"]}]


def _ship(unit: str, owner: str, hex_: str, facing: str) -> dict[str, Any]:
    return {"id": unit, "owner": owner, "hex": hex_, "facing": facing, "speed": 0, "turn_mode": 2,
            "shields": [20] * 6, "hull": 30, "weapons": RACKS}


SETUP = {
    "map": {"columns": 30, "rows": 30}, "turns": 1,
    "units": [_ship("CA", "a", "0510", "B"), _ship("D7", "b", "2510", "E"), _ship("KR", "c", "1525", "A")],
    "weapons": {"drone": {"heavy": False, "seeking": True, "speed": 8, "turn_mode": 1, "warhead": 6},
                "plasma": {"heavy": True, "seeking": True, "speed": 8, "turn_mode": 1, "warhead": 12}},
}
STEP = "1.1.activity"
UNIT_OF = {"a": "CA", "b": "D7", "c": "KR"}


def launch(by: str, weapon: str, name: str, line: int, at: str = STEP) -> Entry:
    return Entry(RULES.parse_time(at), at, by, UNIT_OF[by], {"launch": {"weapon": weapon, "as": name}},
                 "report/turn-01.yaml", line)


def act(by: str, do: dict[str, Any], line: int) -> Entry:
    return Entry(RULES.parse_time(STEP), STEP, by, UNIT_OF[by], do, "report/turn-01.yaml", line)


def inputs(entries: list[Entry], breaks: dict[str, list[dict[str, Any]]]) -> Inputs:
    per = {p: PlayerInputs(RULES.parse_time("1.1.damage"), "1.1.damage", tuple(breaks.get(p, ()))) for p in PLAYERS}
    return Inputs.of_entries(PLAYERS, tuple(entries), per)


def first(entries: list[Entry], breaks: dict[str, list[dict[str, Any]]], by: str) -> Stop:
    """Replay from the start after `by`'s commit that wrote `entries` (he held control at the start)."""
    return replay(RULES, SETUP, inputs(entries, breaks), start_checkpoint(RULES, SETUP, PLAYERS), after=by, served=by)


def then(previous: Stop, entries: list[Entry], breaks: dict[str, list[dict[str, Any]]], by: str) -> Stop:
    """Replay after `by`'s next commit (he was the one asked), with the entries as they then stand."""
    return replay(RULES, SETUP, inputs(entries, breaks), resume_from(previous, by), after=by, served=by)


def asked(stop: Stop) -> list[tuple[str, str | None, str]]:
    return [(b.player, b.at, b.kind) for b in stop.pending]


# --- the table: a declared launch, the breaks, and who the auction at the activity step asks ----------------------

CASES = [
    # (name, breaks, entries declared by their author in one commit, who commits, who is asked at 1.1.activity)
    ("a launch meets {launch: {}}: the auction asks him at the step itself",
     {"b": [{"launch": {}}]}, [launch("a", "dr1", "S1", 2)], "a", ["b"]),
    ("a launch counts as fire (seed 6.D.4)",
     {"b": [{"fire": {}}]}, [launch("a", "dr1", "S1", 2)], "a", ["b"]),
    ("{fire: {heavy: true}} and a plasma (heavy)",
     {"b": [{"fire": {"heavy": True}}]}, [launch("a", "pl1", "P1", 2)], "a", ["b"]),
    ("{fire: {heavy: true}} and a drone: no auction",
     {"b": [{"fire": {"heavy": True}}]}, [launch("a", "dr1", "S1", 2)], "a", []),
    ("{launch: {unit: D7}} and a launch by the CA: no auction",
     {"b": [{"launch": {"unit": "D7"}}]}, [launch("a", "dr1", "S1", 2)], "a", []),
    ("{system: {}} counts a seeking launch as a use",
     {"b": [{"system": {}}]}, [launch("a", "dr1", "S1", 2)], "a", ["b"]),
    ("his own launch never triggers his own condition",
     {"a": [{"launch": {}}]}, [launch("a", "dr1", "S1", 2)], "a", []),
    ("three players: asked in table order after the launcher",
     {"a": [{"launch": {}}], "c": [{"fire": {}}]}, [launch("b", "dr1", "T1", 2)], "b", ["c", "a"]),
    ("two launches at once are one declaration: one auction",
     {"b": [{"launch": {}}]}, [launch("a", "dr1", "S1", 2), launch("a", "dr2", "S2", 3)], "a", ["b"]),
    ("an HET at activity opens none (it meets {turn: {}} after the step)",
     {"b": [{"turn": {}}]}, [act("a", {"het": "D"}, 2)], "a", []),
    ("a speed change at activity opens none",
     {"b": [{"speed": {}}]}, [act("a", {"speed": 4}, 2)], "a", []),
    ("a launch that is not legal (no such weapon) opens none: it is void",
     {"b": [{"launch": {}}]}, [launch("a", "ph9", "S1", 2)], "a", []),
]


@pytest.mark.parametrize(("name", "breaks", "entries", "by", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_declared_launch_opens_an_action_auction_at_its_activity_step(
        name: str, breaks: dict, entries: list[Entry], by: str, expected: list[str]) -> None:
    stop = first(entries, breaks, by)
    if expected:
        assert asked(stop) == [(p, STEP, AUCTION) for p in expected]
        assert status_of(RULES, stop, by).firm == STEP  # nothing of the step is resolved yet
        assert not any(u.seeking for u in stop.checkpoint.state.units)  # no seeking weapon on the map yet
    else:
        assert stop.checkpoint.point is not None and stop.checkpoint.point > RULES.parse_time(STEP)
        assert all(b.kind != AUCTION for b in stop.pending)


# --- a reply launch at the same impulse, resolved together with the first ------------------------------------------

BOTH = {"a": [{"launch": {}}], "b": [{"launch": {}}]}
A_LAUNCH = launch("a", "dr1", "S1", 2)
B_REPLY = launch("b", "dr1", "T1", 3)


def test_a_reply_launch_is_taken_at_the_same_impulse_and_both_resolve_together() -> None:
    """a launches S1 at 1.1.activity; b, asked, launches T1 in reply at that very step (seed §7.D "me too"),
    which meets a's {launch: {}}: a is asked and passes; b added last and nothing came since his answer, so
    nobody is asked again and the step resolves once, with both launches: S1 and T1 appear together, each in its launcher's hex, both
    launched at 1.1.activity, and neither launch meets any condition again after the step."""
    opened = first([A_LAUNCH], BOTH, "a")
    assert asked(opened) == [("b", STEP, AUCTION)]
    replied = then(opened, [A_LAUNCH, B_REPLY], BOTH, "b")
    assert asked(replied) == [("a", STEP, AUCTION)]  # woken by b's launch
    assert status_of(RULES, replied, "b").firm == STEP
    done = then(replied, [A_LAUNCH, B_REPLY], BOTH, "a")  # a passes: the auction is over, the step resolves
    state = done.checkpoint.state
    launched = {u.id: (u.owner, u.hex, u.seeking.launcher, u.seeking.launched_at)
                for u in state.units if u.seeking is not None}
    at = RULES.parse_time(STEP)
    assert launched == {"S1": ("a", (5, 10), "CA", at), "T1": ("b", (25, 10), "D7", at)}
    # past the step, nothing of it is served again: the next break is everyone's horizon at 1.2.move
    assert {(b.at, b.kind) for b in done.pending} == {("1.2.move", "horizon")}


def test_a_seat_gone_while_asked_leaves_the_auction_and_the_launches_resolve() -> None:
    """DESIGN §4.8: a seat that resigns (or whose turn an nmr settles) while the activity auction asks him is out
    of it at once, as if he had passed: the step resolves with the launches declared, and nobody waits for him."""
    opened = first([A_LAUNCH], BOTH, "a")
    assert asked(opened) == [("b", STEP, AUCTION)]
    without_b = replace(inputs([A_LAUNCH], BOTH), gone=frozenset({"b"}))
    done = replay(RULES, SETUP, without_b, resume_from(opened, "a"), after="a", served="a")
    assert all(b.kind != AUCTION for b in done.pending) and done.checkpoint.point > RULES.parse_time(STEP)
    assert sorted(u.id for u in done.checkpoint.state.units if u.seeking is not None) == ["S1"]


def test_a_declared_launch_may_be_added_to_not_withdrawn_seed_7b() -> None:
    """The launch that opened the auction is committed (DESIGN §4.4): withdrawing it while the auction is open is
    `firm.changed`; a reply added at the step is not."""
    opened = first([A_LAUNCH], BOTH, "a")
    seen = opened.checkpoint.auction.seen
    withdrawn = firm_findings(inputs([A_LAUNCH], BOTH), inputs([], BOTH), RULES.parse_time(STEP), None, seen)
    assert [f.rule for f in withdrawn] == ["firm.changed"]
    added = firm_findings(inputs([A_LAUNCH], BOTH), inputs([A_LAUNCH, B_REPLY], BOTH), RULES.parse_time(STEP), None,
                          seen)
    assert added == []


def test_an_erratum_replay_never_reopens_the_activity_auction() -> None:
    """DESIGN §4.8: replayed again with `settled_before` past the step (after an erratum), the activity step
    resolves its launches at once, without asking anybody again."""
    entries = [A_LAUNCH, B_REPLY]
    again = replay(RULES, SETUP, inputs(entries, BOTH), start_checkpoint(RULES, SETUP, PLAYERS), after="b",
                   served=None, settled_before=RULES.parse_time("1.2.move"))
    assert all(b.kind != AUCTION for b in again.pending)
    assert sorted(u.id for u in again.checkpoint.state.units if u.seeking is not None) == ["S1", "T1"]


# --- the race: two clones of a hooked server, the reply launch rebased by `pbem push` ------------------------------

RACE_GAME = """\
format: pbem/1
id: launch-race
title: "Launch race"
ruleset: tactical/1
pbem: "0.1.0"
players:
  - {id: fed, name: Federation}
  - {id: kli, name: Klingon}
dice: {mode: commit-reveal}
setup:
  map: {columns: 40, rows: 30}
  turns: 1
  units:
    - {id: CA, owner: fed, hex: "0515", facing: B, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 50, weapons: [{id: dr1, type: drone, arcs: [A]}]}
    - {id: D7, owner: kli, hex: "3515", facing: E, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 50, weapons: [{id: dr1, type: drone, arcs: [A]}]}
  weapons:
    drone: {heavy: false, seeking: true, speed: 8, turn_mode: 1, warhead: 6, energy: 0}
"""


def _status(table: Any) -> list[tuple[str, str, str]]:
    return [(b["player"], b["at"], b["kind"]) for b in table.data("status.yaml")["pending"]]


def _ok(done: Any) -> None:
    """A command run in process (Table.cli: the same code as `pbem`, without an interpreter start-up) succeeded."""
    assert done.exit_code == 0, done.output


def launch_turn(table: Any, who: str, unit: str, name: str, target: str, tmp_path: Path) -> None:
    """`who` launches `unit`'s dr1 as `name` at 1.5.activity, its target sealed in the same turn, and yields
    (also used by tests/test_attacks.py)."""
    table.edit(who, entries=[{"at": "1.5.activity", "unit": unit, "do": {"launch": {"weapon": "dr1", "as": name}}}])
    plans = dict(table.data(f"players/{who}.yaml"))
    plans["plans"] = [{"unit": name, "from": "1.6.move", "until": "1.32.move", "do": {"pursue": target}}]
    from pbem.formats.writer import dump_mapping

    table.write(f"players/{who}.yaml", dump_mapping(plans))
    seal_target(table, who, name, target, tmp_path)
    _ok(table.cli("yield", "-m", f"{name} launched at 1.5.activity", who=who))


def seal_target(table: Any, who: str, name: str, target: str, tmp_path: Path) -> None:
    """`pbem seal target` for the seeking weapon `name` of `who`, aimed at `target`."""
    source = tmp_path / f"{name}.json"
    source.write_text(json.dumps({"unit": name, "target": target}))
    _ok(table.cli("seal", "target", str(source), "--concerns", name, who=who))


def test_two_clones_launch_at_the_same_impulse_through_pbem_push(tmp_path: Path) -> None:
    """kli launches S1 at 1.5.activity from his clone and pushes; fed, asked in the auction at that step, launches
    F1 in reply from his own clone (target sealed in the same commit), while kli proposes an amend out of turn
    and pushes first: fed's `pbem push` rebases and re-signs his reply onto it, the hook takes both, kli passes
    and fed passes, and the server's history verifies with S1 and F1 launched at the same impulse."""
    from conftest import _build
    from test_hook import clone_for, serve, server_ref

    template = tmp_path / "template"
    template.mkdir()
    (template / "game.yaml").write_text(RACE_GAME)
    fed = _build(tmp_path / "table", str(template), "launch-race")
    fed.turn("fed", through="1.32.final", breaks=[{"launch": {}}])
    server = serve(fed)
    kli = clone_for(fed, server, "kli-machine")
    kli.edit("kli", through="1.32.final", breaks=[{"launch": {}}])
    launch_turn(kli, "kli", "D7", "S1", "CA", tmp_path)
    _ok(kli.cli("push", who="kli"))
    assert _status(kli) == [("fed", "1.5.activity", "auction")]

    _ok(fed.cli("pull", who="fed"))
    launch_turn(fed, "fed", "CA", "F1", "D7", tmp_path)  # the reply, at the same impulse
    _ok(kli.cli("agree", "amend", "--deadline", "96h", who="kli"))  # out of turn, on the same tip
    _ok(kli.cli("push", who="kli"))
    pushed = fed.cli("push", who="fed")  # rebased onto kli's agreement, re-signed, verified, pushed
    _ok(pushed)
    assert server_ref(server) == fed.head()
    assert _status(fed) == [("kli", "1.5.activity", "auction")]  # fed's launch met kli's {launch: {}}

    _ok(kli.cli("pull", who="kli"))
    _ok(kli.cli("yield", "-m", "I pass", who="kli"))
    _ok(kli.cli("push", who="kli"))
    # the step resolved: fed added last and nothing came since, so he is not asked again
    assert all(at != "1.5.activity" for _, at, _ in _status(kli))
    _ok(fed.cli("pull", who="fed"))
    _ok(fed.cli("verify", who="fed"))
    from pbem.services.workspace import Workspace

    state = Workspace.open(fed.repo_dir).head().stop.checkpoint.state
    at = RULES.parse_time("1.5.activity")
    assert {u.id: (u.owner, u.seeking.launched_at) for u in state.units if u.seeking is not None} == {
        "S1": ("kli", at), "F1": ("fed", at)}
