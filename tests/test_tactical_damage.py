"""tactical/1 internal damage allocated to systems (seed 000 §1, §6.C.1; docs/tactical.md "Damage hits
systems"): the damage allocation table of game.yaml, rolled with bound dice by the damaged unit's owner at the
damage step; weapons, power, control and systems lose boxes and stop working; hull last; repair; inconsistent
tables refused with their rule id at their line. Data tables: (state, action → events, new state)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import pytest
from pbem.errors import PbemError
from pbem.files.readers import read_manifest
from pbem.protocol import dice, dice_binding
from pbem.protocol.model import Entry, Inputs, PlayerInputs, ROLL, Rolled
from pbem.protocol.replay import replay, start_checkpoint
from pbem.rulesets.base import Action, SetupError, Withheld
from pbem.rulesets.tactical import TacticalRuleset, damage
from pbem.rulesets.tactical.state import TacticalState

RULES = TacticalRuleset()
PLAYERS = ("fed", "kli")
# what an internal hit takes, by die roll 1..6 (made up for pbem)
ROLLS = [["hull"], ["phaser", "hull"], ["weapon", "hull"], ["power", "hull"], ["control", "tractor", "hull"],
         ["tractor", "power"]]
WEAPONS = {"phaser": {"max_range": 10, "brackets": [[0, 10]], "damage": [[12, 10, 8, 6, 4, 2]]},
           "torpedo": {"max_range": 10, "brackets": [[0, 10]], "damage": [[20, 20, 20, 20, 20, 20]]}}


def ship(unit_id: str, owner: str, hex_: str, facing: str, **more: Any) -> dict[str, Any]:
    return {"id": unit_id, "owner": owner, "hex": hex_, "facing": facing, "speed": 0, "turn_mode": 2,
            "shields": [4] * 6, "hull": 3, "power": 10, "systems": ["tractor"],
            "boxes": {"power": 2, "control": 1, "tractor": 1},
            "weapons": [{"id": "ph1", "type": "phaser", "arcs": ["A", "B", "C", "D", "E", "F"]},
                        {"id": "tp1", "type": "torpedo", "arcs": ["A", "B", "C", "D", "E", "F"], "boxes": 2}],
            **more}


def setup(**table: Any) -> dict[str, Any]:
    return {"map": {"columns": 20, "rows": 20}, "turns": 2, "weapons": WEAPONS,
            "damage_allocation": {"rolls": ROLLS, **table},
            "units": [ship("CA", "fed", "0510", "B"), ship("D7", "kli", "0810", "E")]}


def game(at: str = "1.4.move", **table: Any) -> TacticalState:
    return dataclasses.replace(RULES.initial_state(setup(**table), list(PLAYERS)), at=RULES.parse_time(at))


def act(who: str, unit: str, do: Mapping[str, Any], at: str) -> Action:
    return Action(RULES.parse_time(at), who, unit, dict(do))


def fire(state: TacticalState, weapon: str = "ph1", roll: int = 1, at: str = "1.4.fire") -> TacticalState:
    """CA fires `weapon` at D7 (die `roll`); the state after the fire step."""
    actions = [act("fed", "CA", {"fire": {"weapon": weapon, "target": "D7"}}, at)]
    refs = RULES.dice_needed(state, actions[0].at, actions)
    after, _ = RULES.apply(state, actions[0].at, actions, {ref: roll for ref in refs})
    return after


def allocate(state: TacticalState, rolls: list[Any], at: str = "1.4.damage") -> tuple[TacticalState, list[Any]]:
    point = RULES.parse_time(at)
    refs = RULES.dice_needed(state, point, [])
    assert len(refs) == len(rolls)
    return RULES.apply(state, point, [], dict(zip(refs, rolls)))


def test_internals_wait_for_the_damage_step_and_are_rolled_by_the_damaged_owner() -> None:
    after = fire(game())  # 12 damage on a 4-point shield: 8 internals, none scored yet
    d7 = after.unit("D7")
    assert d7 is not None and d7.hull == 3 and damage.pending(d7) == 8 and d7.status == "active"
    refs = RULES.dice_needed(after, RULES.parse_time("1.4.damage"), [])
    assert refs == [f"1.4.damage/D7/{n}" for n in range(1, 9)]
    assert {RULES.dice_roller(after, ref) for ref in refs} == {"kli"}  # his own ship: DESIGN §5 "Who rolls"


# (die rolls at the damage step) -> what each hit took, and what D7 has left
ALLOCATIONS = [
    ([2], ["ph1"], {"ph1": 0, "hull": 3}),
    ([2, 2], ["ph1", "hull"], {"ph1": 0, "hull": 2}),                    # no phaser left: the row's hull
    ([3, 3, 3], ["ph1", "tp1", "tp1"], {"ph1": 0, "tp1": 0, "hull": 3}),  # `weapon`: the first with a box
    ([4, 4, 4], ["power", "power", "hull"], {"power": 0, "hull": 2}),
    ([6, 6, 6], ["tractor", "power", "power"], {"tractor": 0, "power": 0}),
    ([5, 5], ["control", "tractor"], {"control": 0, "tractor": 0}),
]


@pytest.mark.parametrize(("rolls", "hits", "left"), ALLOCATIONS)
def test_each_internal_takes_the_first_entry_of_its_row_with_a_box_left(rolls: list[int], hits: list[str],
                                                                        left: dict[str, int]) -> None:
    before = dataclasses.replace(game(at="1.4.fire").unit("D7"), pending=(("fed", len(rolls)),))  # type: ignore
    state = game(at="1.4.fire").with_units({"D7": before}, RULES.parse_time("1.4.fire"))
    after, events = allocate(state, rolls)
    assert [e.data["hit"] for e in events if e.kind == "internal"] == hits
    assert all(e.by == "fed" and e.unit == "D7" for e in events)
    d7 = after.unit("D7")
    assert d7 is not None and d7.pending == ()
    for name, count in left.items():
        assert (d7.hull if name == "hull" else damage.boxes_left(d7, name)) == count


def test_hull_last_a_hull_hit_with_no_hull_left_destroys_the_unit() -> None:
    after, events = allocate(fire(game()), [1, 1, 1, 1, 1, 1, 1, 1])
    assert [e.kind for e in events] == ["internal"] * 4 + ["destroyed"]  # 3 hull, then none left
    d7 = after.unit("D7")
    assert d7 is not None and d7.status == "destroyed" and d7.hex is None and d7.left_at == (1, 4, 4)


def test_a_withheld_damage_die_hits_the_hull_never_nothing() -> None:
    state = fire(game(), roll=5)  # 4 damage on the 4-point shield: no internals
    assert RULES.dice_needed(state, RULES.parse_time("1.4.damage"), []) == []
    state = fire(game(), roll=4)  # 6 damage: 2 internals
    lost = Withheld("kli", "fed-0002", "nmr")
    after, events = allocate(state, [lost, 2])
    assert [e.data["hit"] for e in events] == ["hull", "ph1"]
    assert after.unit("D7").hull == 2  # type: ignore[union-attr]


def test_a_destroyed_weapon_cannot_fire_and_says_why() -> None:
    after, _ = allocate(fire(game(), roll=3), [2, 4, 4, 1])  # 4 internals: ph1, power, power, hull
    shot = act("kli", "D7", {"fire": {"weapon": "ph1", "target": "CA"}}, "1.5.fire")
    why = RULES.legal(after, shot)
    assert why is not None and "ph1 is destroyed" in why and why.rule == "rules.out-of-action"  # type: ignore
    assert RULES.legal(after, act("kli", "D7", {"fire": {"weapon": "tp1", "target": "CA"}}, "1.5.fire")) is None
    assert RULES.dice_needed(after, shot.at, [shot]) == []  # nothing owed for it: nothing changes


def test_no_control_left_no_weapon_fires_and_a_destroyed_system_cannot_be_used() -> None:
    after, _ = allocate(fire(game(), roll=3), [5, 5, 1, 1])  # control, then tractor, then hull
    for weapon in ("ph1", "tp1"):
        why = RULES.legal(after, act("kli", "D7", {"fire": {"weapon": weapon, "target": "CA"}}, "1.5.fire"))
        assert why is not None and "no control left" in why
    why = RULES.legal(after, act("kli", "D7", {"use": "tractor", "target": "CA"}, "1.5.activity"))
    assert why is not None and "tractor is destroyed" in why and why.rule == "rules.out-of-action"  # type: ignore
    assert RULES.legal(after, act("fed", "CA", {"use": "tractor", "target": "D7"}, "1.5.activity")) is None


def test_lost_power_lowers_the_next_turns_power_and_reinforcement() -> None:
    after, _ = allocate(fire(game()), [4, 4, 1, 1, 1, 3, 3, 3])
    d7 = after.unit("D7")
    assert d7 is not None and damage.power_in_turn(d7, 1) == 10 and damage.power_in_turn(d7, 2) == 8
    reinforce = act("kli", "D7", {"reinforce": {"shield": 1, "points": 9}}, "2.1.fire")
    assert "more than its power 8" in (RULES.legal(after, reinforce) or "")
    assert RULES.legal(after, dataclasses.replace(reinforce, do={"reinforce": {"shield": 1, "points": 8}})) is None


def test_repair_gives_back_one_box_a_turn_where_the_table_allows_it() -> None:
    state, _ = allocate(fire(game(repair={"per_turn": 1, "energy": 2}), roll=3), [2, 3, 3, 1])
    d7 = state.unit("D7")
    assert d7 is not None and damage.boxes_left(d7, "ph1") == 0 and damage.boxes_left(d7, "tp1") == 0
    fix = act("kli", "D7", {"repair": "ph1"}, "1.5.activity")
    assert RULES.legal(state, fix) is None
    after, events = RULES.apply(state, fix.at, [fix])
    assert [(e.kind, e.data["box"], e.data["left"]) for e in events] == [("repaired", "ph1", 1)]
    assert RULES.legal(after, act("kli", "D7", {"fire": {"weapon": "ph1", "target": "CA"}}, "1.5.fire")) is None
    again = act("kli", "D7", {"repair": "tp1"}, "1.6.activity")
    assert "already repaired 1" in (RULES.legal(after, again) or "")
    assert RULES.legal(after, act("kli", "D7", {"repair": "tp1"}, "2.1.activity")) is None
    assert "has lost no box" in (RULES.legal(after, act("kli", "D7", {"repair": "power"}, "2.1.activity")) or "")
    assert "no repair" in (RULES.legal(fire(game()), fix) or "")


def test_without_a_table_internals_still_go_to_the_hull_at_the_fire_step() -> None:
    plain = setup()
    del plain["damage_allocation"]
    for unit in plain["units"]:
        del unit["boxes"]
        for mount in unit["weapons"]:
            mount.pop("boxes", None)
    state = dataclasses.replace(RULES.initial_state(plain, list(PLAYERS)), at=RULES.parse_time("1.4.move"))
    after = fire(state, roll=4)
    assert after.unit("D7").hull == 1 and after.unit("D7").pending == ()  # type: ignore[union-attr]
    assert RULES.dice_needed(after, RULES.parse_time("1.4.damage"), []) == []


# --- the damage dice are bound: owed by the damaged ship's owner, refused from anybody else ----------------------

def test_replay_waits_at_the_damage_step_for_the_damaged_owner_s_dice() -> None:
    shot = Entry(RULES.parse_time("1.1.fire"), "1.1.fire", "fed", "CA", {"fire": {"weapon": "ph1", "target": "D7"}},
                 "report/turn-01.yaml", 3)
    per = {p: PlayerInputs(RULES.parse_time("1.2.move"), "1.2.move") for p in PLAYERS}
    inputs = dataclasses.replace(Inputs.of_entries(PLAYERS, (shot,), per),
                                 dice={"1.1.fire/CA/ph1": Rolled("fed-0001", "fed", 4)})
    stop = replay(RULES, setup(), inputs, start_checkpoint(RULES, setup(), PLAYERS), "fed", "fed")
    assert stop.checkpoint.point == RULES.parse_time("1.1.damage")
    owed = [b for b in stop.pending if b.kind == ROLL]
    assert [b.player for b in owed] == ["kli"] and "1.1.damage/D7/1" in owed[0].why


@pytest.mark.parametrize(("roller", "found"), [("fed", ["dice.wrong-roller"]), ("kli", [])])
def test_a_damage_die_announced_by_the_wrong_player_is_refused(roller: str, found: list[str]) -> None:
    state = fire(game(), roll=4)
    refs = RULES.dice_needed(state, RULES.parse_time("1.4.damage"), [])
    batch = dice.Batch({"id": f"{roller}-0002", "roller": roller, "mode": "commit-reveal", "sides": 6,
                        "rolls": [{"ref": ref} for ref in refs], "at": "1.4.damage"}, f"dice/{roller}-0002.yaml",
                       {"roller": 4})
    findings = dice_binding.binding_findings({}, {batch.id: batch}, set(refs), lambda ref: 6, lambda ref: False,
                                     lambda ref: dice_binding.only(RULES.dice_roller(state, ref)))
    assert sorted({f.rule for f in findings}) == found
    assert all((f.file, f.line) == (batch.file, 4) for f in findings)


# --- inconsistent tables: refused at their line with their rule id, nothing made ----------------------------------

def _yaml(units: str, table: str) -> bytes:
    return f"""format: pbem/1
id: damage-test
ruleset: tactical/1
players:
  - {{id: fed}}
  - {{id: kli}}
setup:
  map: {{columns: 20, rows: 20}}
  turns: 2
  weapons:
    phaser: {{max_range: 10, brackets: [[0, 10]], damage: [[6, 5, 4, 3, 2, 1]]}}
  damage_allocation:
{table}
  units:
    - {{id: D7, owner: kli, hex: "0810", facing: E, speed: 0, turn_mode: 2, hull: 3}}
{units}
""".encode()


GOOD_TABLE = "    rolls: [[hull], [phaser], [power], [hull], [tractor], [hull]]"
GOOD_UNIT = ("    - {id: CA, owner: fed, hex: \"0510\", facing: B, speed: 0, turn_mode: 2, systems: [tractor],\n"
             "       boxes: {power: 2, tractor: 1}, weapons: [{id: ph1, type: phaser, arcs: [A]}]}")
BAD_TABLES = [
    ("a system with no boxes", GOOD_UNIT.replace("boxes: {power: 2, tractor: 1}", "boxes: {power: 2}"), GOOD_TABLE,
     "schema.no-boxes", 16, "system tractor has no boxes"),
    ("a box count of 0", GOOD_UNIT.replace("tractor: 1", "tractor: 0"), GOOD_TABLE, "schema.no-boxes", 17,
     "tractor has 0 boxes"),
    ("a weapon with no damage row", GOOD_UNIT, GOOD_TABLE.replace("[phaser]", "[hull]"), "schema.no-damage-row", 17,
     "ph1 (phaser) has no damage row"),
    ("a box no row hits", GOOD_UNIT, GOOD_TABLE.replace("[power]", "[hull]"), "schema.no-damage-row", 17,
     "no row of damage_allocation.rolls hits power"),
    ("five rows", GOOD_UNIT, GOOD_TABLE.replace(", [hull]]", "]"), "schema.damage-table", 13, "6 rows"),
    ("a row naming nothing", GOOD_UNIT, GOOD_TABLE.replace("[hull], [phaser]", "[hull], [phasr]"),
     "schema.damage-table", 13, "'phasr' is no weapon type"),
]


@pytest.mark.parametrize(("units", "table", "rule", "line", "text"), [b[1:] for b in BAD_TABLES],
                         ids=[b[0] for b in BAD_TABLES])
def test_an_inconsistent_table_is_refused_with_its_rule_at_its_line(units: str, table: str, rule: str, line: int,
                                                                    text: str) -> None:
    read_manifest(_yaml(GOOD_UNIT, GOOD_TABLE))  # the good one reads
    with pytest.raises(PbemError) as refused:
        read_manifest(_yaml(units, table))
    found = refused.value.finding
    assert (found.rule, found.file, found.line) == (rule, "game.yaml", line)
    assert text in str(refused.value)


def test_boxes_without_a_table_are_refused() -> None:
    plain = setup()
    del plain["damage_allocation"]
    with pytest.raises(SetupError) as refused:
        RULES.initial_state(plain, list(PLAYERS))
    assert refused.value.rule == "schema.damage-table" and refused.value.path == ("units", 0, "boxes")


def test_the_log_shows_each_internal_hit_beside_the_shots() -> None:
    after, _ = allocate(fire(game(), roll=3), [2, 4, Withheld("kli", "fed-0002", "nmr"), 1])
    assert RULES.shots_report(after)[1:] == [
        "1.4.damage D7 internal: die 2, ph1 hit (0 left)", "1.4.damage D7 internal: die 4, power hit (1 left)",
        f"1.4.damage D7 internal: die lost ({Withheld('kli', 'fed-0002', 'nmr').text()}), hull hit (2 left)",
        "1.4.damage D7 internal: die 1, hull hit (1 left)"]
    assert RULES.shots_report(after)[0].startswith("1.4.fire CA ph1 at D7, range 3: die 3, 8 damage")
