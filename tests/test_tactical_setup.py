"""tactical/1 setup and schemas (DESIGN §2, §7.1): the initial state from game.yaml `setup`, and the three
JSON Schemas (setup, one action's `do`, one break condition) checked against what the ruleset accepts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from jsonschema import Draft202012Validator
from pbem.errors import PbemError
from pbem.formats import schemas
from pbem.rulesets import get
from pbem.rulesets.tactical import TacticalRuleset
from pbem.rulesets.tactical.state import FrozenDict

RULES = TacticalRuleset()
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"

# The game.yaml example of DESIGN §7.1 (its damage table completed).
DESIGN_SETUP: dict[str, Any] = {
    "map": {"columns": 42, "rows": 30},
    "turns": 8,
    "units": [
        {"id": "CA", "owner": "fed", "hex": "0510", "facing": "B", "speed": 12, "turn_mode": 2,
         "shields": [30, 24, 24, 20, 24, 24], "hull": 40, "power": 30,
         "weapons": [{"id": "ph1", "type": "phaser", "arcs": ["F", "A", "B"]}], "systems": ["tractor", "transporter"]},
        {"id": "D7", "owner": "kli", "hex": "3620", "facing": "E", "speed": 10, "turn_mode": 2},
    ],
    "weapons": {"phaser": {"heavy": False, "brackets": [[0, 0], [1, 1], [2, 4], [5, 8], [9, 15]],
                           "damage": [[9, 8, 7, 6, 5, 4], [8, 7, 7, 6, 5, 4], [7, 6, 6, 5, 4, 3],
                                      [5, 4, 4, 3, 2, 1], [3, 3, 2, 2, 1, 1]]}},
}


def test_the_registry_builds_tactical_1() -> None:
    rules = get("tactical/1")
    assert isinstance(rules, TacticalRuleset) and rules.name == "tactical/1"


def test_design_7_1_initial_state_from_the_game_yaml_example() -> None:
    state = RULES.initial_state(DESIGN_SETUP, ["fed", "kli"])
    assert RULES.state_summary(state) == [
        {"id": "CA", "owner": "fed", "hex": "0510", "facing": "B", "speed": 12, "status": "active",
         "shields": [30, 24, 24, 20, 24, 24], "hull": 40},
        {"id": "D7", "owner": "kli", "hex": "3620", "facing": "E", "speed": 10, "status": "active",
         "shields": [], "hull": 0},
    ]
    assert RULES.owner_of(state, "D7") == "kli" and RULES.owner_of(state, "XX") is None
    ca = state.unit("CA")
    assert ca is not None and ca.extra["shields"] == (30, 24, 24, 20, 24, 24) and ca.extra["hull"] == 40
    assert ca.extra["weapons"][0]["arcs"] == ("F", "A", "B")
    assert state.tables["weapons"]["phaser"]["brackets"][2] == (2, 4)
    assert isinstance(state.tables, FrozenDict)
    assert hash(state) == hash(RULES.initial_state(DESIGN_SETUP, ["fed", "kli"]))
    assert state.max_speed == 31 and state.at is None


def test_the_state_does_not_share_the_setup_it_came_from() -> None:
    setup = copy.deepcopy(DESIGN_SETUP)
    state = RULES.initial_state(setup, ["fed", "kli"])
    setup["units"][0]["shields"][0] = 0
    setup["weapons"]["phaser"]["heavy"] = True
    assert state.unit("CA").extra["shields"][0] == 30 and state.tables["weapons"]["phaser"]["heavy"] is False


def _with(path: tuple, value: Any) -> dict:
    setup = copy.deepcopy(DESIGN_SETUP)
    node: Any = setup
    for step in path[:-1]:
        node = node[step]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return setup


BAD_SETUPS = [
    ("owner not a player", ("units", 1, "owner"), "rom", "unit D7 belongs to 'rom', who is not a player (fed, kli)"),
    ("duplicate unit id", ("units", 1, "id"), "CA", "setup.units[1]: unit id 'CA' is used twice"),
    ("hex off the map", ("units", 1, "hex"), "4320", "hex 4320 is off the 42x30 map"),
    ("bad hex", ("units", 1, "hex"), "36-20", "is not a hex"),
    ("bad facing", ("units", 1, "facing"), "G", "'G' is not a facing"),
    ("speed above max_speed", ("max_speed",), 8, "setup.units[0].speed must be a whole number 0..8, got 12"),
    ("no turn_mode", ("units", 1, "turn_mode"), KeyError, "setup.units[1] lacks turn_mode"),
    ("no map", ("map",), KeyError, "setup.map must be {columns: N, rows: N}"),
    ("map too big", ("map", "columns"), 100, "setup.map.columns must be a whole number 1..99"),
    ("no turns", ("turns",), KeyError, "setup.turns must be a whole number 1..999"),
    ("no units", ("units",), [], "setup.units must be a non-empty list"),
    ("unknown weapon type", ("units", 0, "weapons", 0, "type"), "laser",
     "setup.units[0] (CA).weapons[0] (ph1): weapon type 'laser' is not in setup.weapons (phaser)"),
    ("weapon id twice", ("units", 0, "weapons"), [{"id": "ph1", "type": "phaser", "arcs": ["A"]}] * 2,
     "weapon id 'ph1' is used twice on this unit"),
    ("bad arc", ("units", 0, "weapons", 0, "arcs"), ["G"], "(ph1): 'G' is not a facing"),
    ("one damage row per bracket", ("weapons", "phaser", "damage"), [[9, 8, 7, 6, 5, 4]],
     "setup.weapons.phaser.damage must have one row per bracket (5)"),
    ("six damage values a row", ("weapons", "phaser", "damage", 0), [9, 8, 7],
     "setup.weapons.phaser.damage[0] must list the damage for die rolls 1..6"),
    ("brackets in order", ("weapons", "phaser", "brackets", 1), [0, 1],
     "setup.weapons.phaser.brackets[1] starts at 0, inside the bracket before it"),
    ("a seeking type needs a warhead", ("weapons", "phaser"), {"seeking": True},
     "setup.weapons.phaser.warhead must be a whole number 0..1000, got None"),
    ("six shields", ("units", 0, "shields"), [1, 2], "setup.units[0].shields must list the 6 shields"),
    ("unit kinds", ("units", 1, "kind"), "base", "setup.units[1].kind must be one of ship, shuttle, fighter"),
]


@pytest.mark.parametrize(("rule", "path", "value", "reason"), BAD_SETUPS, ids=[b[0] for b in BAD_SETUPS])
def test_a_bad_setup_is_refused_with_a_reason(rule: str, path: tuple, value: Any, reason: str) -> None:
    with pytest.raises(ValueError) as err:
        RULES.initial_state(_with(path, value), ["fed", "kli"])
    assert reason in str(err.value)


# --- the schemas --------------------------------------------------------------------------------------------

SCHEMA_FILES = {
    RULES.setup_schema: "tactical-setup.json",
    RULES.action_schema: "tactical-action.json",
    RULES.condition_schema: "tactical-condition.json",
    RULES.plan_schema: "tactical-plan.json",
}


def _nodes(node: Any, depth: int = 0) -> Iterator[tuple[dict, int]]:
    if isinstance(node, dict):
        yield node, depth
        for key, value in node.items():
            if key in ("properties", "patternProperties", "$defs"):
                for sub in value.values():
                    yield from _nodes(sub, depth + 1)
            elif key not in ("enum", "const"):
                yield from _nodes(value, depth + 1 if key in ("items", "additionalProperties") else depth)
    elif isinstance(node, list):
        for item in node:
            yield from _nodes(item, depth)


@pytest.mark.parametrize(("schema_id", "name"), SCHEMA_FILES.items())
def test_design_2_schema_conventions(schema_id: str, name: str) -> None:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == schema_id and schema["$schema"].endswith("/2020-12/schema")
    assert schema_id in schemas.schema_ids()
    for node, depth in _nodes(schema):
        if "pattern" in node:
            assert node["pattern"].startswith("^") and node["pattern"].endswith("\\Z"), node
            assert "\\w" not in node["pattern"] and "\\d" not in node["pattern"], node
        if node.get("type") == "object":
            assert node.get("additionalProperties") is False, node
            if "^x-" in node.get("patternProperties", {}):
                assert depth == 0, f"x- fields are for top-level objects only: {node}"


def _valid(schema_id: str, data: Any) -> bool:
    try:
        schemas.validate(schema_id, data, file="test")
    except PbemError:
        return False
    return True


def test_the_design_setup_is_valid() -> None:
    assert _valid(RULES.setup_schema, DESIGN_SETUP)
    assert _valid(RULES.setup_schema, {**DESIGN_SETUP, "x-note": "free", "max_speed": 20, "costs": {"het": 5}})
    seeking = {**DESIGN_SETUP["weapons"], "drone": {"seeking": True, "speed": 20, "warhead": 12, "energy": 0.5}}
    assert _valid(RULES.setup_schema, {**DESIGN_SETUP, "weapons": seeking})


@pytest.mark.parametrize("template", sorted((SCHEMA_DIR.parent / "games").glob("*/game.yaml")),
                         ids=lambda p: p.parent.name)
def test_the_game_templates_are_valid(template: Path) -> None:
    """Every template in games/ (the duel, the three-player melee) passes the schemas and makes a state."""
    from pbem.files.readers import read_manifest
    manifest = read_manifest(template.read_bytes())
    if manifest.ruleset_name == "tactical/1":
        state = RULES.initial_state(manifest.setup, [s.id for s in manifest.seats])
        assert len({u.owner for u in state.units}) == len(manifest.seats)


def test_the_melee_has_three_players_a_heavy_and_a_seeking_type() -> None:
    from pbem.files.readers import read_manifest
    manifest = read_manifest((SCHEMA_DIR.parent / "games" / "tactical-melee" / "game.yaml").read_bytes())
    state = RULES.initial_state(manifest.setup, [s.id for s in manifest.seats])
    assert [s.id for s in manifest.seats] == ["fed", "kli", "rom"]
    kinds = state.weapon_types.values()
    assert any(t.heavy and not t.seeking for t in kinds) and any(t.seeking and t.warhead > 0 for t in kinds)
    assert all(u.shields and u.hull and u.extra.get("power") for u in state.units)


@pytest.mark.parametrize(("path", "value"), [
    (("units", 0, "hex"), "0010"), (("units", 0, "facing"), "a"), (("units", 0, "speed"), 32),
    (("units", 0, "shields"), [1, 2, 3]), (("units", 0, "weapons", 0, "arcs"), ["F", "F"]),
    (("units", 0, "colour"), "red"), (("units", 0, "x-note"), "nested x- fields are not allowed"),
    (("map", "columns"), 100), (("turns",), 0), (("units", 0, "owner"), "Fed"), (("weapons", "Phaser"), {}),
    (("units", 0, "id"), "C A"), (("turns",), KeyError), (("weapons", "phaser", "damage", 0), [9, 8, 7]),
    (("weapons", "phaser", "brackets"), KeyError), (("weapons", "phaser"), {"seeking": True}),
    (("weapons", "phaser", "speed"), 40), (("units", 0, "kind"), "base"),
])
def test_setup_schema_refuses(path: tuple, value: Any) -> None:
    assert not _valid(RULES.setup_schema, _with(path, value))


# Every action of DESIGN §7.1's list, as written there, is valid ({clarify: …} too: the ruleset refuses it).
ACTIONS_VALID = [
    {"move": "F"}, {"move": "TL"}, {"move": "TR"}, {"move": "SL"}, {"move": "SR"}, {"het": "D"}, {"speed": 10},
    {"speed": 0}, {"fire": {"weapon": "ph1", "target": "D7"}}, {"launch": {"weapon": "dr1", "as": "S1"}},
    {"use": "tractor", "target": "CA"}, {"use": "ESG"}, {"cease": "tractor"}, {"announce": "cloak"},
    {"pass": True}, {"clarify": "SL"},
]
ACTIONS_INVALID = [
    {}, {"move": "B"}, {"move": "F", "speed": 3}, {"het": "G"}, {"speed": 32}, {"speed": -1}, {"speed": "8"},
    {"fire": {"weapon": "ph1"}}, {"fire": {"weapon": "ph1", "target": "D7", "extra": 1}}, {"pass": False},
    {"move": "F", "target": "D7"}, {"target": "D7"}, {"warp": 9}, {"x-note": "no"}, {"use": "tractor beam"},
    {"launch": {"weapon": "dr1"}},
]


@pytest.mark.parametrize("do", ACTIONS_VALID)
def test_design_7_1_action_schema_accepts_the_whole_list(do: dict) -> None:
    assert _valid(RULES.action_schema, do)


@pytest.mark.parametrize("do", ACTIONS_INVALID)
def test_action_schema_refuses(do: dict) -> None:
    assert not _valid(RULES.action_schema, do)


CONDITIONS_EVALUATED = [
    {"range": 8}, {"range": 8, "unit": "D7", "mine": "CA"}, {"range": 3, "by": "any"}, {"turn": {}},
    {"turn": {"within": 10}}, {"speed": {}}, {"speed": {"unit": "D7"}}, {"at": "1.16.move"},
    {"fire": {}}, {"fire": {"heavy": True}}, {"fire": {"unit": "D7"}}, {"launch": {}}, {"damage": {}},
    {"damage": {"kind": "shield"}}, {"damage": {"kind": "internal"}}, {"damage": {"kind": "shuttle"}},
    {"shield_down": {}}, {"shield_down": {"unit": "CA"}}, {"system": {}}, {"system": {"name": "tractor"}},
    {"system": {"kind": "use", "system": "tractor"}}, {"system": {"kind": "announce", "unit": "D7"}},
    {"fire": {}, "by": "any"},
]
CONDITIONS_INVALID = [
    {}, {"range": -1}, {"range": "8"}, {"range": 8, "turn": {}}, {"turn": {"near": 3}}, {"turn": 5},
    {"speed": {}, "unit": "D7"}, {"range": 8, "by": "me"}, {"at": "1.33.moves"}, {"at": "1.3.move", "by": "any"},
    {"near": 3}, {"damage": {"kind": "hull"}}, {"range": 8, "x-note": "no"}, {"fire": {"heavy": "yes"}},
    {"system": {"kind": "jettison"}}, {"system": {"name": "tractor", "system": "tractor"}},
    {"launch": {"heavy": True}}, {"shield_down": {"kind": "shield"}},
]


@pytest.mark.parametrize("condition", CONDITIONS_EVALUATED)
def test_design_4_3_conditions_in_schema_and_catalog_agree(condition: dict) -> None:
    assert _valid(RULES.condition_schema, condition)
    assert RULES.condition_error(condition) is None


@pytest.mark.parametrize("condition", CONDITIONS_INVALID)
def test_condition_schema_and_catalog_refuse(condition: dict) -> None:
    assert not _valid(RULES.condition_schema, condition)
    assert RULES.condition_error(condition) is not None
