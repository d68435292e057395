"""Bad inputs met by replay (seed 000 §7, DESIGN §4.2, §4.5, §7.1): fire out of arc, out of range, a weapon fired
twice in a turn are void when replay reaches them (DESIGN §4.2 "Entries and time": never a finding there; what the
author could know is refused in his own commit, tests/test_tactical_cli_bad_input.py), and a special-break answer
that is not among its options is a finding with its rule id at the entry's file and line."""

from __future__ import annotations

from dataclasses import replace

from pbem.protocol.model import CLARIFY, Break, Entry, Inputs, PlayerInputs, Rolled
from pbem.protocol.replay import replay, start_checkpoint
from pbem.rulesets.tactical import TacticalRuleset
from pbem.verify.rules.progress import clarified as _clarified

RULES = TacticalRuleset()
SHORT = {"heavy": False, "max_range": 2, "brackets": [[0, 2]], "damage": [[3, 3, 2, 2, 1, 1]]}
LONG = {"heavy": False, "max_range": 15, "brackets": [[0, 15]], "damage": [[3, 3, 2, 2, 1, 1]]}
SETUP = {
    "map": {"columns": 20, "rows": 20}, "turns": 1,
    "units": [
        {"id": "CA", "owner": "a", "hex": "0510", "facing": "B", "speed": 0, "turn_mode": 2,
         "shields": [20] * 6, "hull": 30,
         "weapons": [{"id": "ph1", "type": "long", "arcs": ["A", "B", "C"]},
                     {"id": "aft", "type": "long", "arcs": ["D"]},
                     {"id": "sh1", "type": "short", "arcs": ["A", "B", "C"]}]},
        {"id": "D7", "owner": "b", "hex": "0810", "facing": "E", "speed": 0, "turn_mode": 2,
         "shields": [20] * 6, "hull": 30, "weapons": []},
    ],
    "weapons": {"long": LONG, "short": SHORT},
}
PLAYERS = ("a", "b")


def shot(at: str, weapon: str, line: int) -> Entry:
    return Entry(RULES.parse_time(at), at, "a", "CA", {"fire": {"weapon": weapon, "target": "D7"}},
                 "report/turn-01.yaml", line)


def problems(entries: list[Entry], rolled: dict[str, int]) -> list[tuple[str, int, str]]:
    per = {p: PlayerInputs(RULES.parse_time("1.3.damage"), "1.3.damage") for p in PLAYERS}
    inputs = replace(Inputs.of_entries(PLAYERS, tuple(entries), per),
                     dice={ref: Rolled("b0001", "a", r) for ref, r in rolled.items()})
    stop = replay(RULES, SETUP, inputs, start_checkpoint(RULES, SETUP, PLAYERS), "a", "a")
    assert stop.problems == ()
    return [("void", v.line, v.reason) for v in stop.voids]


def test_fire_out_of_arc_is_void_at_replay() -> None:
    (found,) = problems([shot("1.1.fire", "aft", 7)], {})
    assert found[:2] == ("void", 7) and "arc" in found[2]


def test_fire_out_of_range_is_void_at_replay() -> None:
    (found,) = problems([shot("1.1.fire", "sh1", 8)], {})
    assert found[:2] == ("void", 8) and "range" in found[2]


def test_a_weapon_fired_twice_in_a_turn_is_void_the_second_time() -> None:
    found = problems([shot("1.1.fire", "ph1", 2), shot("1.2.fire", "ph1", 3)], {"1.1.fire/CA/ph1": 4})
    assert [(rule, line) for rule, line, _ in found] == [("void", 3)]
    assert "fired" in found[0][2]


def test_a_clarify_answer_not_among_the_options_seed_5c() -> None:
    held = Break("a", "1.1.move", CLARIFY, "ambiguous", ({"move": "TL"}, {"move": "TR"}), "CA")
    answer = Entry(RULES.parse_time("1.1.move"), "1.1.move", "a", "CA", {"move": "F"}, "report/turn-01.yaml", 4)

    class _Game:
        inputs = Inputs.of_entries(PLAYERS, (answer,), {})
        manifest = type("M", (), {"ruleset": RULES})()

    found = _clarified(held, _Game())  # type: ignore[arg-type]
    assert [(f.rule, f.line) for f in found] == [("rules.bad-clarify", 4)]
    good = replace(answer, do={"move": "TR"})

    class _Good(_Game):
        inputs = Inputs.of_entries(PLAYERS, (good,), {})

    assert _clarified(held, _Good()) == []  # type: ignore[arg-type]
