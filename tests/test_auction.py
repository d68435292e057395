"""The action auction at a simultaneous step (DESIGN §4.6, seed 000 §7), driven through replay with the real
tactical/1 ruleset: fire declared at a fire step meets the other player's `fire` break condition, the step is
not resolved, the triggered player adds fire or passes, rounds go on while he adds, then all fire resolves
together once each player's dice are in."""

from __future__ import annotations

from dataclasses import replace

from pbem.protocol.auction import AUCTION
from pbem.protocol.control import resume_from, status_of
from pbem.protocol.history import firm_findings
from pbem.protocol.model import Entry, Inputs, PlayerInputs, Rolled
from pbem.protocol.replay import replay, start_checkpoint
from pbem.rulesets.tactical import TacticalRuleset

RULES = TacticalRuleset()
PHASER = {"heavy": False, "max_range": 15, "brackets": [[0, 0], [1, 3], [4, 15]],
          "damage": [[9, 8, 7, 6, 5, 4], [6, 5, 4, 3, 2, 1], [3, 2, 2, 1, 1, 1]]}
SETUP = {
    "map": {"columns": 20, "rows": 20}, "turns": 1,
    "units": [
        {"id": "CA", "owner": "a", "hex": "0510", "facing": "B", "speed": 0, "turn_mode": 2,
         "shields": [20] * 6, "hull": 30, "weapons": [{"id": "ph1", "type": "phaser", "arcs": ["A", "B", "C"]},
                                                      {"id": "ph2", "type": "phaser", "arcs": ["A", "B", "C"]}]},
        {"id": "D7", "owner": "b", "hex": "0810", "facing": "E", "speed": 0, "turn_mode": 2,
         "shields": [20] * 6, "hull": 30, "weapons": [{"id": "ph1", "type": "phaser", "arcs": ["F", "A", "B"]},
                                                      {"id": "ph2", "type": "phaser", "arcs": ["F", "A", "B"]}]},
    ],
    "weapons": {"phaser": PHASER},
}
PLAYERS = ("a", "b")
FIRE = "1.1.fire"


def fire(by: str, unit: str, weapon: str, target: str, line: int) -> Entry:
    return Entry(RULES.parse_time(FIRE), FIRE, by, unit, {"fire": {"weapon": weapon, "target": target}},
                 "report/turn-01.yaml", line)


def inputs(entries: list[Entry], breaks: dict[str, list[dict]], dice: dict[str, int] | None = None) -> Inputs:
    per = {p: PlayerInputs(RULES.parse_time("1.1.damage"), "1.1.damage", tuple(breaks.get(p, ())))
           for p in PLAYERS}
    book = {ref: Rolled("b0001", "a" if ref.split("/")[1] == "CA" else "b", result)
            for ref, result in (dice or {}).items()}
    return replace(Inputs.of_entries(PLAYERS, tuple(entries), per), dice=book)


def test_declared_fire_opens_an_auction_for_the_triggered_player_seed_7b() -> None:
    declared = [fire("a", "CA", "ph1", "D7", 2)]
    stop = replay(RULES, SETUP, inputs(declared, {"b": [{"fire": {}}]}), start_checkpoint(RULES, SETUP, PLAYERS),
                  after="a", served="a")
    assert [(b.player, b.at, b.kind) for b in stop.pending] == [("b", FIRE, AUCTION)]
    assert status_of(RULES, stop, "a").firm == FIRE  # nothing of the fire step is resolved yet
    assert stop.checkpoint.auction is not None and stop.checkpoint.auction.round == 1


def test_me_too_rounds_go_on_while_the_triggered_player_adds_then_dice_then_resolution_seed_7d() -> None:
    breaks = {"b": [{"fire": {}}]}
    first = [fire("a", "CA", "ph1", "D7", 2)]
    opened = replay(RULES, SETUP, inputs(first, breaks), start_checkpoint(RULES, SETUP, PLAYERS), "a", "a")
    # b adds his own fire ("me too"); a has no condition it meets, so nobody has anything new to answer: the
    # auction ends (b is not asked again for nothing, tests/test_auction_reask.py); the step waits for the dice
    more = first + [fire("b", "D7", "ph1", "CA", 3)]
    waiting = replay(RULES, SETUP, inputs(more, breaks), resume_from(opened, "b"), "b", "b")
    assert waiting.checkpoint.auction.closed
    assert sorted((b.player, b.kind) for b in waiting.pending) == [("a", "roll"), ("b", "roll")]
    # with every die rolled the fire step resolves together: both ships are hit
    rolled = {"1.1.fire/CA/ph1": 3, "1.1.fire/D7/ph1": 5}
    done = replay(RULES, SETUP, inputs(more, breaks, rolled), resume_from(waiting, None), "b", None)
    hit = {u["id"]: u for u in RULES.state_summary(done.checkpoint.state)}
    assert hit["CA"]["shields"] != [20] * 6 and hit["D7"]["shields"] != [20] * 6
    assert [(b.kind, b.at) for b in done.pending][:1] == [("horizon", "1.2.move")]  # past the fire step


def test_no_auction_without_a_triggered_condition() -> None:
    declared = [fire("a", "CA", "ph1", "D7", 2)]
    stop = replay(RULES, SETUP, inputs(declared, {}), start_checkpoint(RULES, SETUP, PLAYERS), "a", "a")
    assert [(b.player, b.kind) for b in stop.pending] == [("a", "roll")]


def test_declared_fire_may_be_added_to_not_withdrawn_seed_7b() -> None:
    breaks = {"b": [{"fire": {}}]}
    first = [fire("a", "CA", "ph1", "D7", 2)]
    opened = replay(RULES, SETUP, inputs(first, breaks), start_checkpoint(RULES, SETUP, PLAYERS), "a", "a")
    auction = opened.checkpoint.auction
    withdrawn = firm_findings(inputs(first, breaks), inputs([], breaks), RULES.parse_time(FIRE), None, auction.seen)
    assert [f.rule for f in withdrawn] == ["firm.changed"]
    added = firm_findings(inputs(first, breaks), inputs(first + [fire("b", "D7", "ph1", "CA", 3)], breaks),
                          RULES.parse_time(FIRE), None, auction.seen)
    assert added == []


def test_an_auction_action_by_a_player_who_passed_is_refused_seed_7d() -> None:
    """Once the auction at a step is over, nobody adds actions there (the rule id the verifier reports)."""
    from pbem.verify.change import TURN, Change
    from pbem.verify.rules import firm  # the per-commit check, driven with hand-made states

    breaks = {"b": [{"fire": {}}]}
    first = [fire("a", "CA", "ph1", "D7", 2)]
    opened = replay(RULES, SETUP, inputs(first, breaks), start_checkpoint(RULES, SETUP, PLAYERS), "a", "a")
    passed = replay(RULES, SETUP, inputs(first, breaks), resume_from(opened, "b"), "b", "b")  # b passes
    assert passed.checkpoint.auction.closed and [(b.player, b.kind) for b in passed.pending] == [("a", "roll")]
    late = first + [fire("a", "CA", "ph2", "D7", 3)]  # a, holding the roll break, slips in another shot

    class _Game:
        def __init__(self, inp: Inputs) -> None:
            self.inputs, self.batches, self.secrets, self.press = inp, {}, {}, {}
            self.manifest = type("M", (), {"id": "g", "players": PLAYERS, "keys": {}, "escrow_key": None,
                                            "ruleset": RULES})()

    from pbem.protocol.verified import Verified

    prev = Verified(_Game(inputs(first, breaks)), passed, None)  # type: ignore[arg-type]
    game = _Game(inputs(late, breaks))
    change = Change(prev, game, {"report/turn-01.yaml"}, None)  # type: ignore[arg-type]
    change.player, change.kind = "a", TURN  # what the judge finds for a's commit: his turn
    found = firm.check(prev, game, change)  # type: ignore[arg-type]
    assert [f.rule for f in found] == ["rules.auction"]
