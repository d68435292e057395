"""The JSON Schemas of DESIGN §2 and their loader: a valid example of each file kind passes, and a table of
one-line changes to it fails with `schema.invalid` at the changed line, saying which field and what was wrong.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import struct
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbem
from pbem.errors import PbemError
from pbem.formats import resources, schemas
from pbem.formats.yamlsafe import load

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB29ckwGcxpMLtrjRA2DlJ1o6Ad4BdRchw7SNReWAiie alice@example"


def ed25519_line(raw: bytes, comment: str = "") -> str:
    """An OpenSSH public key line for a 32-byte key: the blob is string "ssh-ed25519" + string key (51 bytes)."""
    blob = struct.pack(">I", 11) + b"ssh-ed25519" + struct.pack(">I", len(raw)) + raw
    return f"ssh-ed25519 {base64.b64encode(blob).decode()}" + (f" {comment}" if comment else "")


def check(schema_id: str, source: str, file: str = "f.yaml") -> None:
    doc = load(source.encode(), file)
    schemas.validate(schema_id, doc.data, file=file, doc=doc)


def expect_invalid(schema_id: str, source: str, line: int, fragment: str) -> PbemError:
    with pytest.raises(PbemError) as caught:
        check(schema_id, source)
    finding = caught.value.finding
    assert finding.rule == "schema.invalid" and caught.value.exit_code == 1
    assert (finding.file, finding.line) == ("f.yaml", line), finding.text()
    assert fragment in finding.message, finding.message
    return caught.value


def mutate(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


# --- pbem/game/1: game.yaml ------------------------------------------------------------------------------------

GAME = f"""\
format: pbem/1
id: twirling-aces-601
title: Twirling Aces
ruleset: tactical/1
pbem: 0.1.0
players:
  - {{id: fed, name: Alice, key: "{KEY}"}}
  - {{id: kli, name: Bob, role: director}}
dice: {{mode: commit-reveal}}
setup:
  map: {{columns: 42, rows: 30}}
rules: {{}}
x-club: Aces
"""

GAME_INVALID = [
    # (old, new, line, message fragment)
    ("format: pbem/1", "format: pbem/2", 1, "format: expected 'pbem/1', got 'pbem/2'"),
    ("format: pbem/1\n", "", 1, "top level: missing required field 'format'"),
    ("id: twirling-aces-601", "id: Twirling", 2, "id: 'Twirling' is not the game id"),
    ("id: twirling-aces-601", "id: -aces", 2, "id:"),
    ("id: twirling-aces-601", "id: " + "a" * 64, 2, "id:"),
    ("id: twirling-aces-601", "id: 601", 2, "id: 601 is not of type 'string'"),
    ("title: Twirling Aces", "title: " + "t" * 201, 3, "title: has 201 characters; expected at most 200"),
    ("ruleset: tactical/1", "ruleset: tactical", 4, "ruleset: 'tactical' is not a ruleset"),
    ("ruleset: tactical/1", "ruleset: Tactical/1", 4, "ruleset:"),
    ("pbem: 0.1.0", "pbem: v0.1", 5, "pbem: 'v0.1' is not the pinned pbem version"),
    ("pbem: 0.1.0", "pbem: 0.1", 5, "pbem: 0.1 is not of type 'string'"),
    ("id: fed,", "id: Fed,", 7, "players[0].id: 'Fed' is not a player id"),
    ("id: fed,", "id: f-d,", 7, "players[0].id"),
    ("id: fed,", "id: abcdefghijklmnopq,", 7, "players[0].id"),
    ("name: Alice,", "name: " + "A" * 81 + ",", 7, "players[0].name: has 81 characters"),
    (KEY, KEY.replace("ssh-ed25519", "ssh-rsa"), 7, "players[0].key: 'ssh-rsa"),
    (KEY, KEY[:-20], 7, "players[0].key"),  # key blob cut short
    (KEY, KEY.replace("AAAAIB29", "AAAAIB2"), 7, "players[0].key"),  # 67 base64 characters
    (KEY, KEY + "\\t", 7, "players[0].key"),  # a tab in the comment
    ("role: director", "role: god", 8, "players[1].role: expected one of 'player', 'director'; got 'god'"),
    ("role: director", "colour: red", 8, "players[1].colour: unknown field 'colour'; allowed: id, name, key, role"),
    ("{id: kli, name: Bob, role: director}", "{name: Bob}", 8, "players[1]: missing required field 'id'"),
    ("{mode: commit-reveal}", "{mode: escrow}", 9, "dice: missing required field 'escrow_key'"),
    ("{mode: commit-reveal}", "{mode: coin}", 9, "dice.mode: expected one of 'commit-reveal', 'escrow'"),
    ("{mode: commit-reveal}", "{mode: escrow, escrow_key: nope}", 9, "dice.escrow_key"),
    ("setup:\n  map: {columns: 42, rows: 30}", "setup: [1]\n", 10, "setup: [1] is not of type 'object'"),
    ("x-club: Aces", "x_club: Aces", 13, "x_club: unknown field 'x_club'"),
    ("x-club: Aces", "turns: 8", 13, "(and x-… extension fields)"),
]


def test_game_valid_example() -> None:
    check("pbem/game/1", GAME)
    escrow = mutate(GAME, "{mode: commit-reveal}", f'{{mode: escrow, escrow_key: "{KEY}"}}')
    check("pbem/game/1", escrow)
    check("pbem/game/1", "format: pbem/1\nid: g\nruleset: dow/1\nplayers:\n  - {id: a}\n")


@pytest.mark.parametrize("old, new, line, fragment", GAME_INVALID)
def test_game_invalid(old: str, new: str, line: int, fragment: str) -> None:
    expect_invalid("pbem/game/1", mutate(GAME, old, new), line, fragment)


def test_game_player_count() -> None:
    seats = "".join(f"  - {{id: p{i}}}\n" for i in range(17))
    too_many = GAME.split("players:")[0] + "players:\n" + seats
    expect_invalid("pbem/game/1", too_many, 6, "players: has 17 items; expected at most 16")
    expect_invalid("pbem/game/1", mutate(GAME, "players:\n", "players: []\nx-old:\n"), 6, "at least 1")


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40))
def test_any_ed25519_public_key_line_is_accepted(raw: bytes, comment: str) -> None:
    """The key pattern accepts exactly OpenSSH Ed25519 lines: 51-byte blob = 68 base64 characters, no padding."""
    line = ed25519_line(raw, comment)
    assert len(line.split(" ")[1]) == 68
    players = [{"id": "fed", "key": line}]
    schemas.validate("pbem/game/1", {"format": "pbem/1", "id": "g", "ruleset": "t/1", "players": players}, file="g")


@pytest.mark.parametrize("raw", [b"\0" * 31, b"\0" * 33, b"\0" * 64])
def test_ed25519_wrong_key_length_is_refused(raw: bytes) -> None:
    players = [{"id": "fed", "key": ed25519_line(raw)}]
    with pytest.raises(PbemError, match="schema.invalid"):
        schemas.validate("pbem/game/1", {"format": "pbem/1", "id": "g", "ruleset": "t/1", "players": players}, file="g")


# --- pbem/players/1: players/<id>.yaml -------------------------------------------------------------------------

PLAYERS = """\
through: "1.8.damage"
breaks:
  - {range: 8}
  - {fire: {heavy: true}}
  - {at: "1.16.move"}
plans:
  - {unit: CA, from: "1.9.move", until: "1.16.move", do: {pursue: D7}}
x-memo: keep range
"""

PLAYERS_INVALID = [
    ('through: "1.8.damage"', 'through: "1 8"', 1, "through: '1 8' is not a game time"),
    ('through: "1.8.damage"', "through: 5", 1, "through: 5 is not of type 'string' or 'null'"),
    ('through: "1.8.damage"', "through: " + "9" * 33 + "x", 1, "through:"),
    ("{range: 8}", "{}", 3, "breaks[0]: has 0 fields; expected at least 1"),
    ("{range: 8}", "{a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7}", 3, "breaks[0]: has 7 fields; expected at most 6"),
    ("{range: 8}", "range 8", 3, "breaks[0]: 'range 8' is not of type 'object'"),
    ('until: "1.16.move", ', "", 7, "plans[0]: missing required field 'until'"),
    ("do: {pursue: D7}", "do: {pursue: D7, keep_range: 3}", 7,
     "plans[0].do: has 2 fields ('pursue', 'keep_range'); expected exactly one"),
    ("unit: CA", "unit: -CA", 7, "plans[0].unit: '-CA' is not a unit id"),
    ("x-memo: keep range", "memo: keep range", 8, "memo: unknown field 'memo'; allowed: through, breaks, plans"),
]


def test_players_valid_examples() -> None:
    check("pbem/players/1", PLAYERS)
    check("pbem/players/1", "through: null\n")
    check("pbem/players/1", "{}\n")
    check("pbem/players/1", "breaks: []\nplans: []\n")


@pytest.mark.parametrize("old, new, line, fragment", PLAYERS_INVALID)
def test_players_invalid(old: str, new: str, line: int, fragment: str) -> None:
    expect_invalid("pbem/players/1", mutate(PLAYERS, old, new), line, fragment)


def test_players_caps_and_empty_file() -> None:
    many = "breaks:\n" + "  - {range: 1}\n" * 101
    expect_invalid("pbem/players/1", many, 1, "breaks: has 101 items; expected at most 100")
    expect_invalid("pbem/players/1", "", 1, "top level: None is not of type 'object'")


# --- pbem/report/1: report/<period>.yaml ---------------------------------------------------------------------

REPORT = """\
entries:
  - {at: "1.3.move", by: fed, unit: CA, do: {move: TL}}
  - {at: "1.4.activity", by: fed, unit: CA, do: {speed: 10}}
  - {at: "1.4.fire", by: fed, unit: CA, do: {fire: {weapon: ph1, target: D7}}}
  - {at: "S1901M", by: england, do: {orders: [F LON-NTH]}, x-note: "opening"}
"""

REPORT_INVALID = [
    ('at: "1.3.move", ', "", 2, "entries[0]: missing required field 'at'"),
    ("by: fed, unit: CA, do: {move: TL}", "by: Fed, unit: CA, do: {move: TL}", 2,
     "entries[0].by: 'Fed' is not a player id"),
    ("do: {move: TL}", "do: {}", 2, "entries[0].do: has 0 fields; expected at least 1"),
    ("do: {move: TL}", "do: move", 2, "entries[0].do: 'move' is not of type 'object'"),
    ("do: {speed: 10}", "do: {speed: 10, move: F, het: A, pass: true, use: x}", 3,
     "entries[1].do: has 5 fields; expected at most 4"),
    ('"1.4.fire"', '"1.4 fire"', 4, "entries[2].at: '1.4 fire' is not a game time"),
    ('"1.4.fire"', "1.4", 4, "entries[2].at: 1.4 is not of type 'string'"),
    ("unit: CA, do: {fire", "unit: ABCDEFGHIJKLMNOPQ, do: {fire", 4, "entries[2].unit:"),
    ('x-note: "opening"', 'note: "opening"', 5, "entries[3].note: unknown field 'note'; allowed: at, by, unit, do"),
]


def test_report_valid_example() -> None:
    check("pbem/report/1", REPORT)
    check("pbem/report/1", "entries: []\n")


@pytest.mark.parametrize("old, new, line, fragment", REPORT_INVALID)
def test_report_invalid(old: str, new: str, line: int, fragment: str) -> None:
    expect_invalid("pbem/report/1", mutate(REPORT, old, new), line, fragment)


def test_report_top_level() -> None:
    expect_invalid("pbem/report/1", "# no entries\nx-a: 1\n", 1, "top level: missing required field 'entries'")
    expect_invalid("pbem/report/1", "entries: {}\n", 1, "entries: {} is not of type 'array'")
    expect_invalid("pbem/report/1", "x-a: 1\nentries: []\nturn: 1\n", 3, "turn: unknown field 'turn'")


def test_one_entry_checked_in_place() -> None:
    """The verifier parses only changed lines: one entry is checked with the line and path of the whole file."""
    doc = load(mutate(REPORT, "do: {speed: 10}", "do: {}").encode(), "report/turn-01.yaml")
    entries = doc.data["entries"]
    schemas.validate("pbem/report/1#/$defs/entry", entries[0], file="report/turn-01.yaml", doc=doc, base=("entries", 0))
    with pytest.raises(PbemError) as caught:
        schemas.validate("pbem/report/1#/$defs/entry", entries[1], file="report/turn-01.yaml", doc=doc,
                         base=("entries", 1))
    assert caught.value.finding.line == 3
    assert caught.value.finding.message.startswith("entries[1].do: has 0 fields")


# --- pbem/status/1: status.yaml ------------------------------------------------------------------------------

STATUS = """\
control: kli
firm: "1.8.damage"
pending:
  - {player: kli, at: "1.8.damage", kind: condition, why: "range 8 to CA"}
  - {player: fed, at: "1.9.move", kind: clarify, options: [{move: SL}, {move: SR}]}
yielded_by: fed
over: false
note: "closing in"
"""

STATUS_INVALID = [
    ("control: kli", "control: Kli", 1, "control: 'Kli' is not a player id"),
    ("control: kli\n", "", 1, "top level: missing required field 'control'"),
    ('firm: "1.8.damage"', "firm: []", 2, "firm: [] is not of type 'string' or 'null'"),
    ("kind: condition", "kind: whim", 4, "pending[0].kind: expected one of 'start', 'horizon'"),
    ('why: "range 8 to CA"', "why: " + "w" * 501, 4, "pending[0].why: has 501 characters; expected at most 500"),
    ("{player: kli, ", "{", 4, "pending[0]: missing required field 'player'"),
    ("[{move: SL}, {move: SR}]", "[{move: SL, turn: 1}]", 5, "pending[1].options[0]: has 2 fields"),
    ("yielded_by: fed", "yielded_by: 3", 6, "yielded_by: 3 is not of type 'string' or 'null'"),
    ("over: false", "over: no", 7, "over: 'no' is not of type 'boolean'"),
    ('note: "closing in"', "note: " + "n" * 2001, 8, "note: has 2001 characters; expected at most 2000"),
    ('note: "closing in"', "auction: {}", 8, "auction: unknown field 'auction'"),
]


def test_status_valid_examples() -> None:
    check("pbem/status/1", STATUS)
    check("pbem/status/1", "control: null\nfirm: null\npending: []\nover: true\nx-build: abc\n")


@pytest.mark.parametrize("old, new, line, fragment", STATUS_INVALID)
def test_status_invalid(old: str, new: str, line: int, fragment: str) -> None:
    expect_invalid("pbem/status/1", mutate(STATUS, old, new), line, fragment)


# --- the loader: ids, references between files, conventions -------------------------------------------------

def test_schema_ids() -> None:
    assert {"pbem/common/1", "pbem/game/1", "pbem/players/1", "pbem/report/1", "pbem/status/1"} <= set(
        schemas.schema_ids())


def test_unknown_schema_is_a_usage_error() -> None:
    for bad in ("pbem/nope/1", "pbem/report/1#/$defs/nope", "pbem/nope/1#/$defs/entry"):
        with pytest.raises(PbemError) as caught:
            schemas.validate(bad, {}, file="f.yaml")
        assert caught.value.finding.rule == "schema.unknown" and caught.value.exit_code == 2


def test_without_document_there_is_no_line() -> None:
    with pytest.raises(PbemError) as caught:
        schemas.validate("pbem/report/1", {"entries": "x"}, file="f.yaml")
    assert caught.value.finding.line is None and caught.value.finding.file == "f.yaml"


def test_long_values_are_cut_short_in_messages() -> None:
    with pytest.raises(PbemError) as caught:
        schemas.validate("pbem/report/1", {"entries": "x" * 5000}, file="f.yaml")
    assert len(caught.value.finding.message) < 300


@pytest.mark.parametrize("path, text", [
    ((), "top level"), (("entries", 2, "do", "move"), "entries[2].do.move"), (("a b", 0), '["a b"][0]'),
    (("x-n", "c"), "x-n.c"),
])
def test_format_path(path: tuple, text: str) -> None:
    assert schemas.format_path(path) == text


@pytest.fixture
def schema_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private copy of the shipped schemas, with the loader's caches emptied before and after."""
    folder = tmp_path / "schemas"
    shutil.copytree(resources.schemas_dir(), folder)
    monkeypatch.setattr(schemas, "schemas_dir", lambda: folder)
    schemas.reset()
    yield folder
    schemas.reset()


def test_new_schema_files_are_picked_up_and_can_refer_to_others(schema_folder: Path) -> None:
    setup = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "pbem/tactical/setup/1",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "units": {"type": "array", "items": {"$ref": "#/$defs/unit"}},
            "owner": {"$ref": "pbem/common/1#/$defs/player_id"},
            "action": {"$ref": "pbem/report/1#/$defs/entry"},
        },
        "$defs": {"unit": {"type": "object", "properties": {"id": {"$ref": "pbem/common/1#/$defs/unit_id"},
                                                            "move": {"type": "string"}}}},
    }
    (schema_folder / "tactical-setup.json").write_text(json.dumps(setup))
    assert "pbem/tactical/setup/1" in schemas.schema_ids()
    source = "units:\n  - {id: CA}\n  - {id: D7}\n  - {id: F5, move: 5}\nowner: fed\n"
    expect_invalid("pbem/tactical/setup/1", source, 4, "units[2].move: 5 is not of type 'string'")
    expect_invalid("pbem/tactical/setup/1", "owner: Fed\n", 1, "owner: 'Fed' is not a player id")
    expect_invalid("pbem/tactical/setup/1", "action: {at: x, by: y, do: {}}\n", 1, "action.do: has 0 fields")


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "tactical-setup.json"),
    ('{"type": "object"}', "no usable $id"),
    ('{"$id": "pbem/game/1"}', "used by two files"),
    ('{"$id": "pbem/x/1", "type": "nonsense"}', "tactical-setup.json"),
])
def test_broken_schema_files_are_an_install_error(schema_folder: Path, content: str, fragment: str) -> None:
    (schema_folder / "tactical-setup.json").write_text(content)
    with pytest.raises(PbemError) as caught:
        schemas.schema_ids()
    assert caught.value.finding.rule == "schema.broken" and caught.value.exit_code == 2
    assert fragment in caught.value.finding.message


def _walk(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{where}/{i}")


@pytest.mark.parametrize("path", sorted(resources.schemas_dir().glob("*.json")), ids=lambda p: p.name)
def test_schema_conventions(path: Path) -> None:
    """DESIGN §2: 2020-12, versioned $id, additionalProperties false except x- fields, anchored ASCII patterns,
    no `format`."""
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert re.fullmatch(r"pbem(/[a-z0-9-]+)+/[0-9]+", schema["$id"])
    for where, node in _walk(schema, path.name):
        if isinstance(node.get("pattern"), str):
            pattern = node["pattern"]
            assert pattern.startswith("^") and pattern.endswith("\\Z"), where
            assert not re.search(r"\\[dwsDWS]", pattern), f"{where}: use ASCII classes"
        assert "format" not in node or isinstance(node.get("format"), dict), where
        if isinstance(node.get("properties"), dict) and node.get("type") == "object":
            assert node.get("additionalProperties") is False, f"{where}: additionalProperties must be false"


# --- resources: where the shipped data lives -----------------------------------------------------------------

def test_source_tree_data_dirs() -> None:
    root = Path(pbem.__file__).resolve().parents[2]
    assert resources.schemas_dir() == root / "schemas"
    assert (resources.schemas_dir() / "game.json").is_file()


def test_packaged_data_dirs_come_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site-packages" / "pbem"
    (package / "schemas").mkdir(parents=True)
    (package / "games").mkdir()
    monkeypatch.setattr(pbem, "__file__", str(package / "__init__.py"))
    assert resources.schemas_dir() == package / "schemas"
    assert resources.games_dir() == package / "games"


def test_missing_data_dir_is_an_install_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pbem, "__file__", str(tmp_path / "a" / "b" / "pbem" / "__init__.py"))
    with pytest.raises(PbemError) as caught:
        resources.games_dir()
    assert caught.value.finding.rule == "install.missing-data" and caught.value.exit_code == 2
