"""tactical/1 energy audit of the whole battle (seed 000 §2.C "each turn's Energy Allocation … retrieved and
verified at the conclusion of the battle"; docs/tactical.md "The whole battle"): one player's allocations read
together across turns, weapon arming and battery charge carried from turn to turn. Data tables: (the public
record of the battle, the allocations by turn → the faults, each with its turn and rule id)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pbem.errors import PbemError
from pbem.files.readers import read_manifest
from pbem.formats import schemas
from pbem.rulesets.base import SetupError
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.state import TacticalState

from test_tactical_secret_speeds import SECRET_SPEEDS

RULES = TacticalRuleset()
PLAYERS = ["fed", "kli"]
ALL = ["A", "B", "C", "D", "E", "F"]
TURNS = 5
SETUP: dict[str, Any] = {
    "map": {"columns": 20, "rows": 20}, "turns": TURNS, "allocation": "sealed",
    "weapons": {
        "photon": {"max_range": 12, "brackets": [[0, 12]], "damage": [[8] * 6],
                   "arming": {"turns": 2, "energy": 2, "hold": 1, "overload": 2}, "overload_damage": [[16] * 6]},
    },
    "costs": {"life_support": 1},
    "units": [
        {"id": "CA", "owner": "fed", "hex": "0510", "facing": "B", "speed": 0, "turn_mode": 2, "power": 20,
         "batteries": 4, "hull": 10,
         "weapons": [{"id": "pt1", "type": "photon", "arcs": ALL},
                     {"id": "pt2", "type": "photon", "arcs": ALL, "armed": True}]},
        {"id": "D7", "owner": "kli", "hex": "0810", "facing": "E", "speed": 0, "turn_mode": 2, "power": 20,
         "hull": 10},
    ],
}


def at(text: str) -> tuple[int, int, int]:
    return RULES.parse_time(text)


def played(setup: dict[str, Any] = SETUP, **more: Any) -> TacticalState:
    """CA's record: pt1 (unarmed at the start, arms over 2 turns) fired at 2.3; pt2 (armed at the start) at 3.5;
    `more` replaces more of CA's record."""
    state = RULES.initial_state(setup, PLAYERS)
    ca = state.unit("CA")
    assert ca is not None
    ca = dataclasses.replace(ca, fired=((at("2.3.fire"), "pt1"), (at("3.5.fire"), "pt2")), **more)
    return state.with_units({"CA": ca}, at(f"{TURNS}.32.final"))


def line(arming: dict[str, str] | None = None, **more: Any) -> dict[str, Any]:
    return {"speed": 0, "life_support": 1, **({"arming": arming} if arming else {}), **more}


# what pays, turn by turn: pt1 armed in turns 1 and 2 and fired in 2; pt2 held until it fires in 3
PAID = {1: line({"pt1": "arm", "pt2": "hold"}), 2: line({"pt1": "arm", "pt2": "hold"}), 3: line({"pt2": "hold"}),
        4: line(), 5: line()}


def battle(**changed: dict[str, Any] | None) -> dict[int, dict[str, Any]]:
    """PAID with some turns' CA lines replaced (t1=…, t3=None: that turn's allocation unknown)."""
    lines = {**PAID, **{int(k[1:]): v for k, v in changed.items()}}
    return {turn: {"turn": turn, "units": {"CA": value}} for turn, value in lines.items() if value is not None}


ARMING = [
    ("paid as played", battle(), []),
    ("overload counts as an arming turn", battle(t2=line({"pt1": "overload", "pt2": "hold"})), []),
    ("held in its first turn, never armed", battle(t1=line({"pt1": "hold", "pt2": "hold"})),
     [(1, "rules.held-unarmed", "pt1 held, but it is not armed at the start of the turn (never armed"),
      (2, "rules.not-armed", "pt1 fires, but its allocations armed it in only 1 of the 2 turns")]),
    ("held after its shot discharged it", battle(t3=line({"pt1": "hold", "pt2": "hold"})),
     [(3, "rules.held-unarmed", "pt1 held, but it is not armed at the start of the turn (never armed since the "
                                "start or its last shot")]),
    ("held after one of its two arming turns", battle(t3=line({"pt1": "arm", "pt2": "hold"}),
                                                      t4=line({"pt1": "hold"})),
     [(4, "rules.held-unarmed", "armed in 1 of the 2 turns it needs")]),
    ("armed again over two turns, then held", battle(t3=line({"pt1": "arm", "pt2": "hold"}),
                                                     t4=line({"pt1": "arm"}), t5=line({"pt1": "hold"})), []),
    ("arming interrupted starts over", battle(t3=line({"pt1": "arm", "pt2": "hold"}), t4=line(),
                                              t5=line({"pt1": "hold"})),
     [(5, "rules.held-unarmed", "never armed")]),
    # turn 1's own audit finds the missing hold too; the battle shows what follows from it
    ("armed at the start, not held in turn 1: discharged", battle(t1=line({"pt1": "arm"})),
     [(2, "rules.held-unarmed", "pt2 held"), (3, "rules.held-unarmed", "pt2 held"),
      (3, "rules.not-armed", "pt2 fires, but its allocations armed it in only 0 of the 2")]),
    ("a hold after an unknown turn is not judged", battle(t1=None, t2=line({"pt1": "hold", "pt2": "hold"})), []),
    ("a shot discharges even in an unknown turn", battle(t2=None, t3=line({"pt1": "hold", "pt2": "hold"})),
     [(3, "rules.held-unarmed", "pt1 held")]),
]


def test_a_weapon_destroyed_loses_its_arming_and_arms_again_from_nothing_once_repaired() -> None:
    """pt2, armed at the start and held, loses its one box at 1.10.damage and is repaired at 2.5.activity: its
    holds in turns 2 and 3 hold nothing, and its shot in turn 3 was never armed."""
    state = played(boxes=(("pt2", 1),), lost=((at("1.10.damage"), "pt2", 1), (at("2.5.activity"), "pt2", -1)))
    records = [RULES.turn_record(state, "fed", turn) for turn in range(1, TURNS + 1)]
    assert [r.units[0].destroyed for r in records] == [("pt2",), (), (), (), ()]
    found = RULES.audit_battle(SETUP, records, battle())
    assert [(turn, rule) for turn, rule, _ in found] == [(2, "rules.held-unarmed"), (3, "rules.held-unarmed"),
                                                         (3, "rules.not-armed")], found
    rearmed = battle(t2=line({"pt1": "arm", "pt2": "arm"}), t3=line({"pt2": "arm"}))  # armed again in 2 and 3
    assert RULES.audit_battle(SETUP, records, rearmed) == []


@pytest.mark.parametrize(("allocations", "faults"), [a[1:] for a in ARMING], ids=[a[0] for a in ARMING])
def test_arming_is_audited_across_the_battle(allocations: dict[int, dict[str, Any]],
                                             faults: list[tuple[int, str, str]]) -> None:
    records = [RULES.turn_record(played(), "fed", turn) for turn in range(1, TURNS + 1)]
    for turn, allocation in allocations.items():  # every one pays for its own turn: only the battle shows it
        schemas.validate(RULES.allocation_schema, allocation, file="secret")
        own = RULES.audit_allocation(SETUP, records[turn - 1], allocation)
        assert own == [] or own == [f"turn 1, CA: pt2 held armed since the start this turn, but the allocation does "
                                    "not arm or hold it"], (turn, allocation)
    found = RULES.audit_battle(SETUP, records, allocations)
    assert [(turn, rule) for turn, rule, _ in found] == [(turn, rule) for turn, rule, _ in faults], found
    for (_, _, reason), (turn, _, words) in zip(found, faults):
        assert words in reason and reason.startswith(f"turn {turn}, CA: "), reason


CHARGED = {"battery_charge": 4}
BATTERIES = [
    ("charged in turn 1, drawn in turn 2", {},
     battle(t1=PAID[1] | {"batteries": 3}, t2=PAID[2] | {"from_batteries": 3}), []),
    ("carried over a turn that does not touch it", {}, battle(t1=PAID[1] | {"batteries": 3},
                                                              t4=line(from_batteries=3)), []),
    ("drawn, never charged", {}, battle(t2=PAID[2] | {"from_batteries": 3}),
     [(2, "rules.battery-overdrawn", "draws 3 from its batteries, which carried 0 into the turn")]),
    ("the charge a shortfall spent is gone", {}, battle(t1=PAID[1] | {"life_support": 0, "batteries": 3},
                                                        t2=PAID[2] | {"from_batteries": 3}),
     [(2, "rules.battery-overdrawn", "carried 2 into the turn")]),
    ("charged over what is left of the capacity", {}, battle(t1=PAID[1] | {"batteries": 3},
                                                             t2=PAID[2] | {"batteries": 2}),
     [(2, "rules.battery-overcharged", "puts 2 into its batteries, which hold 3 of 4 (room for 1)")]),
    ("drawn, then charged to capacity", {}, battle(t1=PAID[1] | {"batteries": 3},
                                                   t2=PAID[2] | {"from_batteries": 3, "batteries": 4}), []),
    ("charged at the start", CHARGED, battle(t1=PAID[1] | {"from_batteries": 4, "reserve": 17}), []),
    ("the start charge drawn twice", CHARGED, battle(t1=PAID[1] | {"from_batteries": 4},
                                                     t2=PAID[2] | {"from_batteries": 1}),
     [(2, "rules.battery-overdrawn", "draws 1 from its batteries, which carried 0")]),
    ("after an unknown turn nothing is judged", {}, battle(t1=None, t2=PAID[2] | {"from_batteries": 3}), []),
]


@pytest.mark.parametrize(("unit", "allocations", "faults"), [b[1:] for b in BATTERIES], ids=[b[0] for b in BATTERIES])
def test_battery_charge_is_carried_and_audited_across_the_battle(
        unit: dict[str, Any], allocations: dict[int, dict[str, Any]], faults: list[tuple[int, str, str]]) -> None:
    setup = {**SETUP, "units": [{**SETUP["units"][0], **unit}, SETUP["units"][1]]}
    records = [RULES.turn_record(played(setup), "fed", turn) for turn in range(1, TURNS + 1)]
    for turn, allocation in allocations.items():
        schemas.validate(RULES.allocation_schema, allocation, file="secret")
        assert RULES.audit_allocation(setup, records[turn - 1], allocation) == [], (turn, allocation)
    found = RULES.audit_battle(setup, records, allocations)
    assert [(turn, rule) for turn, rule, _ in found] == [(turn, rule) for turn, rule, _ in faults], found
    for (_, _, reason), (_, _, words) in zip(found, faults):
        assert words in reason, reason


# one turn's own audit of the battery lines: (CA's line in turn 4) -> words of each reason
ONE_TURN = [
    (line(from_batteries=4, reserve=19), []),  # 1 + 19 = 20 of power, 4 drawn beside it: spent on nothing
    (line(from_batteries=4, reserve=24), ["allocates 25 energy, its power is 20 and 4 drawn from its batteries"]),
    (line(from_batteries=5), ["from_batteries 5 allocated, its batteries hold 4"]),
    (line(batteries=5), ["allocates 6 energy", "batteries 5 allocated, its batteries hold 4"]),
]


@pytest.mark.parametrize(("unit_line", "words"), ONE_TURN)
def test_one_turn_counts_what_it_draws_beside_its_power(unit_line: dict[str, Any], words: list[str]) -> None:
    allocation = {"turn": 4, "units": {"CA": unit_line}}
    power = {**SETUP, "units": [{**SETUP["units"][0], "power": 5}, SETUP["units"][1]]} if "batteries" in unit_line \
        else SETUP
    reasons = RULES.audit_allocation(power, RULES.turn_record(played(), "fed", 4), allocation)
    assert len(reasons) == len(words), reasons
    for reason, word in zip(reasons, words):
        assert word in reason
    assert [r for r in RULES.audit_plot(power, allocation) if "batteries hold" in r] == \
        [f"turn 4, CA: {w}" for w in words if "batteries hold" in w]


def test_a_start_charge_above_capacity_is_refused_at_its_line() -> None:
    with pytest.raises(SetupError) as refused:
        RULES.initial_state({**SETUP, "units": [{**SETUP["units"][0], "battery_charge": 5}, SETUP["units"][1]]},
                            PLAYERS)
    assert refused.value.rule == "schema.battery-charge" and refused.value.path == ("units", 0, "battery_charge")
    text = b"""format: pbem/1
id: battery-test
ruleset: tactical/1
players:
  - {id: fed}
  - {id: kli}
setup:
  map: {columns: 20, rows: 20}
  turns: 2
  units:
    - {id: CA, owner: fed, hex: "0510", facing: B, speed: 0, turn_mode: 2, hull: 3, batteries: 2,
       battery_charge: 3}
    - {id: D7, owner: kli, hex: "0810", facing: E, speed: 0, turn_mode: 2, hull: 3}
"""
    with pytest.raises(PbemError) as read:
        read_manifest(text)
    found = read.value.finding
    assert (found.rule, found.file, found.line) == ("schema.battery-charge", "game.yaml", 12)
    assert "battery_charge 3 is more than its batteries hold (2)" in str(read.value)
    read_manifest(text.replace(b"battery_charge: 3", b"battery_charge: 2"))  # within capacity: it reads


_MODE = st.sampled_from([None, "arm", "hold", "overload"])
_LINE = st.fixed_dictionaries({"pt1": _MODE, "pt2": _MODE, "draw": st.integers(0, 4), "charge": st.integers(0, 4)})


@settings(max_examples=40, deadline=None)
@given(st.lists(_LINE, min_size=TURNS, max_size=TURNS), st.sets(st.integers(1, TURNS)), st.sets(st.integers(1, TURNS)))
def test_opening_more_allocations_only_ever_finds_more(lines: list[dict[str, Any]], known: set[int],
                                                       more: set[int]) -> None:
    """What the verifier relies on to judge each reveal by what it adds: the faults found with some turns known
    are all found again, the same, once more turns are known (a turn not known judges nothing after it)."""
    records = [RULES.turn_record(played(), "fed", turn) for turn in range(1, TURNS + 1)]

    def allocation(turn: int, drawn: dict[str, Any]) -> dict[str, Any]:
        arming = {w: drawn[w] for w in ("pt1", "pt2") if drawn[w] is not None}
        return {"turn": turn, "units": {"CA": line(arming, from_batteries=drawn["draw"], batteries=drawn["charge"])}}

    every = {turn: allocation(turn, drawn) for turn, drawn in enumerate(lines, 1)}
    fewer = RULES.audit_battle(SETUP, records, {t: every[t] for t in known})
    found = RULES.audit_battle(SETUP, records, {t: every[t] for t in known | more})
    assert set(fewer) <= set(found), (fewer, found)


# --- the verifier: what a reveal adds is refused at the allocation at fault -------------------------------------

class _Secret:
    """A revealed (or still sealed) allocation as the verifier sees it: only what verify/rules/tactical reads."""

    def __init__(self, turn: int, value: dict[str, Any], revealed: bool) -> None:
        self.id, self.owner, self.revealed = f"fed-000{turn}", "fed", revealed
        self.raw = {"kind": "allocation", "step": f"{turn}.0.alloc"}
        self.file, self._value = f"secrets/fed-000{turn}.yaml", value

    def value(self) -> dict[str, Any]:
        return self._value

    def line_of(self, key: str) -> int:
        return 9 if key == "key" else 1


def _game(opened: set[int], allocations: dict[int, dict[str, Any]]) -> Any:
    from types import SimpleNamespace

    secrets = {s.id: s for s in (_Secret(t, v, t in opened) for t, v in allocations.items())}
    return SimpleNamespace(secrets=secrets, manifest=SimpleNamespace(ruleset=RULES, setup=SETUP))


HELD_2 = ("rules.held-unarmed", "secrets/fed-0002.yaml")
HELD_3, SHOT_3 = ("rules.held-unarmed", "secrets/fed-0003.yaml"), ("rules.not-armed", "secrets/fed-0003.yaml")


@pytest.mark.parametrize(("first", "then", "found"), [
    (set(), {2, 3}, []),                           # turn 1 not known: pt2 may have been held in it
    ({2, 3}, {1, 2, 3}, [HELD_2, HELD_3, SHOT_3]),  # the later ones first: judged once turn 1 opens
    (set(), {1, 2, 3}, [HELD_2, HELD_3, SHOT_3]),   # all at once
    ({1, 2}, {1, 2, 3}, [HELD_3, SHOT_3]),          # what was found at an earlier reveal is not found again
])
def test_a_reveal_is_refused_for_what_it_adds_at_the_allocation_at_fault(first: set[int], then: set[int],
                                                                         found: list[tuple[str, str]]) -> None:
    from types import SimpleNamespace

    from pbem.verify.rules import tactical

    allocations = battle(t1=line({"pt1": "arm"}))  # pt2, armed at the start, not held in turn 1: discharged
    stop = SimpleNamespace(over=True, checkpoint=SimpleNamespace(point=None, state=played()))
    prev, game = SimpleNamespace(game=_game(first, allocations)), _game(then, allocations)
    findings = tactical._battle(prev, game, stop)  # type: ignore[arg-type]
    assert [(f.rule, f.file) for f in findings] == found, findings
    assert all(f.line == 9 and f"(fed, turn {f.file[-6]}): turn {f.file[-6]}, CA: pt2" in f.message
               for f in findings), findings


# --- through pbem: two turns, the charge carried from one to the next -------------------------------------------
# The secret-speeds duel (test_tactical_secret_speeds) with CA given a photon (pt1, arms over 2 turns, unarmed at
# the start) and batteries (4, charged 3 at the start), D7 empty batteries (4); tests/test_attacks.py plays its
# one turn, and the test below two.

BATTERY_DUEL = SECRET_SPEEDS.replace(
    "power: 10, weapons: [{id: ph1, type: long, arcs: [A, B, C]}, {id: aft",
    "power: 10, batteries: 4, battery_charge: 3,\n       weapons: [{id: pt1, type: photon, arcs: [A, B, C]},"
    " {id: ph1, type: long, arcs: [A, B, C]}, {id: aft").replace(
    "power: 10, weapons: [{id: ph1, type: long, arcs: [F, A, B]}",
    "power: 10, batteries: 4, weapons: [{id: ph1, type: long, arcs: [F, A, B]}").replace(
    "  weapons:\n",
    "  weapons:\n    photon: {heavy: true, max_range: 12, brackets: [[0, 12]], damage: [[8, 8, 8, 8, 8, 8]],\n"
    "             arming: {turns: 2, energy: 2, hold: 1}}\n")


def test_the_charge_of_turn_1_is_drawn_in_turn_2_and_pbem_seal_reads_the_turns_before(tmp_path: Path) -> None:
    """kli charges 2 in turn 1; sealing turn 2, `pbem seal` opens his turn-1 box and refuses a draw of 3
    (rules.battery-overdrawn, at the unit's line) and takes a draw of 2; fed arms pt1 in both turns (holding
    it in turn 2 instead is refused: armed in 1 of its 2 turns). At the end both reveals land and the whole
    history verifies. (A shot after arming over turns: the data tables above; each extra commit here is slow.)"""
    from conftest import GAME_ID, _build
    from test_dice_flow import cli
    from test_tactical_cli_bad_input import pending, seal

    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "game.yaml").write_text(BATTERY_DUEL.replace("  turns: 1\n", "  turns: 2\n"))
    table = _build(tmp_path / "started", str(tmp_path / "template"), GAME_ID)
    table.turn("fed", through="2.32.final")
    table.turn("kli", through="2.32.final", breaks=[{"at": "1.2.move"}])
    seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "batteries": 2}}})
    seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 0, "arming": {"pt1": "arm"}}}})
    cli(table, "yield", who="kli")
    cli(table, "yield", who="fed")
    table.turn("kli", through="2.32.final", breaks=[])
    assert pending(table) == [("fed", "sealed"), ("kli", "sealed")], pending(table)
    for value, rule, words in (
            ({"turn": 2, "units": {"D7": {"speed": 0, "from_batteries": 3}}}, "rules.battery-overdrawn",
             "draws 3 from its batteries, which carried 2 into the turn"),
            ({"turn": 2, "units": {"CA": {"speed": 0, "arming": {"pt1": "hold"}}}}, "rules.held-unarmed",
             "armed in 1 of the 2 turns it needs")):
        who = "kli" if "D7" in value["units"] else "fed"
        source = tmp_path / f"{who}-2.json"
        source.write_text(json.dumps(value))
        done = table.pbem("seal", "allocation", str(source), who=who)
        assert done.returncode == 1 and f"{source}:1: [{rule}]" in done.stderr and words in done.stderr, done.stderr
    seal(table, "kli", {"turn": 2, "units": {"D7": {"speed": 0, "from_batteries": 2, "reserve": 12}}})
    seal(table, "fed", {"turn": 2, "units": {"CA": {"speed": 0, "arming": {"pt1": "arm"}}}})
    cli(table, "yield", who="kli")
    cli(table, "yield", who="fed")
    for _ in range(4):  # the reveals at the end
        owed = pending(table)
        if not owed:
            break
        cli(table, "yield", who=owed[0][0])
    assert table.data("status.yaml")["over"] is True
    verdict = table.pbem("verify")
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
