"""The dow/1 schemas (DESIGN §2 conventions): setup, action, break condition and press message; valid examples pass
and a table of bad ones fails with `schema.invalid`."""

from __future__ import annotations

from typing import Any

import pytest

from pbem.errors import PbemError
from pbem.formats import schemas, yamlsafe
from pbem.formats.resources import games_dir
from pbem.rulesets.dow import DowRuleset

RULES = DowRuleset()


def valid(schema_id: str, data: Any) -> bool:
    try:
        schemas.validate(schema_id, data, file="f.yaml")
    except PbemError as err:
        assert err.finding.rule == "schema.invalid"
        return False
    return True


def test_ids_match_the_ruleset() -> None:
    ids = set(schemas.schema_ids())
    assert {RULES.setup_schema, RULES.action_schema, RULES.condition_schema, RULES.press_schema} <= ids


def test_the_template_validates() -> None:
    doc = yamlsafe.load((games_dir() / "dow-standard" / "game.yaml").read_bytes(), "game.yaml")
    schemas.validate("pbem/game/1", doc.data, file="game.yaml", doc=doc)
    schemas.validate(RULES.setup_schema, doc.data["setup"], file="game.yaml", doc=doc, base=("setup",))


@pytest.mark.parametrize("setup, ok", [
    ({"map": "standard"}, True),
    ({"map": "standard", "start": "S1901M", "victory": 18, "director": "gm", "x-note": "club game"}, True),
    ({"map": "standard", "invite_hash": "sha256:" + "0" * 32 + ":" + "a" * 64}, True),
    ({}, False),
    ({"map": "ancmed"}, False),
    ({"map": "standard", "start": "F1901M"}, False),
    ({"map": "standard", "victory": 35}, False),
    ({"map": "standard", "invite_hash": "IReadTheGameDescription"}, False),
    ({"map": "standard", "units": []}, False),
])
def test_setup(setup: dict[str, Any], ok: bool) -> None:
    assert valid(RULES.setup_schema, setup) is ok


@pytest.mark.parametrize("do, ok", [
    ({"orders": []}, True),
    ({"orders": ["A PAR - BUR", "F BRE S A PAR - PIC", "F ENG C A LON - BRE", "A LON - BRE VIA", "F STP/NC B",
                 "WAIVE", "a mar - spa"]}, True),
    ({"order": "A PAR - BUR"}, False),
    ({"orders": "A PAR - BUR"}, False),
    ({"orders": ["A PAR - BUR", "A PAR - BUR"]}, False),
    ({"orders": ["A PAR -> BUR"]}, False),
    ({"orders": ["A PAR - BUR\n"]}, False),
    ({"orders": [""]}, False),
    ({"orders": ["A PAR - BUR"], "unit": "A PAR"}, False),
])
def test_action(do: dict[str, Any], ok: bool) -> None:
    assert valid(RULES.action_schema, do) is ok


@pytest.mark.parametrize("condition, ok", [
    ({"phase": {}}, True), ({"attacked": {}}, True), ({"state": {}, "by": "any"}, True), ({"at": "S1901P"}, True),
    ({"at": "W1905A"}, True), ({"at": "W1905M"}, False), ({"at": "S1901M", "by": "any"}, False),
    ({"phase": {"kind": "M"}}, False), ({"range": 8}, False), ({"phase": {}, "state": {}}, False), ({}, False),
])
def test_condition(condition: dict[str, Any], ok: bool) -> None:
    assert valid(RULES.condition_schema, condition) is ok
    if ok:
        assert RULES.condition_error(condition) is None


PRESS_VALID = [
    {"by": "france", "say": "Bonjour à tous"},
    {"by": "france", "at": "S1901P", "propose": {"to": "germany", "state": "ALLIED"}},
    {"by": "germany", "accept": {"from": "france", "state": "ALLIED"}},
    {"by": "france", "declare": {"to": "england", "state": "WAR"}},
    {"by": "italy", "reaffirm": {"france": "ALLIED", "germany": "HOSTILE"}},
    {"by": "france", "gift": {"to": "germany", "province": "BEL"}},
    {"by": "gm", "warn": "france", "reason": "moved into Munich while NEUTRAL"},
    {"by": "gm", "lift": "france"},
    {"by": "france", "draw": True},
    {"by": "france", "say": "hi", "x-client": "pbem 0.1"},
]

PRESS_INVALID = [
    {"by": "france"},
    {"say": "who am I"},
    {"by": "france", "say": ""},
    {"by": "france", "say": "hi", "declare": {"to": "england", "state": "WAR"}},
    {"by": "france", "propose": {"to": "germany", "state": "LIMBO"}},
    {"by": "france", "propose": {"to": "germany", "state": 5}},
    {"by": "france", "propose": {"to": "germany"}},
    {"by": "germany", "accept": {"to": "france", "state": "ALLIED"}},
    {"by": "italy", "reaffirm": {"france": "FRIENDLY"}},
    {"by": "italy", "reaffirm": {}},
    {"by": "france", "gift": {"to": "germany", "province": "bel"}},
    {"by": "gm", "warn": "france"},
    {"by": "france", "say": "hi", "reason": "because"},
    {"by": "france", "draw": "yes"},
    {"by": "france", "at": "S1902P", "say": "hi"},
    {"by": "France", "say": "hi"},
]


@pytest.mark.parametrize("message", PRESS_VALID)
def test_press_valid(message: dict[str, Any]) -> None:
    assert valid(RULES.press_schema, message)
    from pbem.rulesets.dow.press import kind_of

    kind_of(message)  # the ruleset reads every valid message (whether the rules then accept it is another matter)


@pytest.mark.parametrize("message", PRESS_INVALID)
def test_press_invalid(message: dict[str, Any]) -> None:
    assert not valid(RULES.press_schema, message)
