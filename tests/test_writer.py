"""What pbem writes (DESIGN §2): report files one entry per line, other files in block style, both read back
unchanged by the strict loader; and the canonical JSON that everything hashed or signed goes through.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.formats import canonical
from pbem.formats.writer import dump_flow, dump_mapping, dump_report
from pbem.formats.yamlsafe import load

TRICKY = [
    "", " ", "yes", "No", "ON", "y", "n", "null", "Null", "~", "true", "False", "1:30", "0777", "0x1F", "1_000",
    "2001-01-01", ".inf", "-.inf", ".nan", "1e3", "5", "-0", "1.5", "a: b", "a #b", "#", "{a}", "[a]", "a, b", "&a",
    "*a", "!a", "|", ">", "%x", "@x", "`x", "'", '"', "\\", "-", "- a", "? a", ":", "---", "...", "=", "<<",
    " lead", "trail ", "tab\there", "new\nline", "cr\rhere", "é", "😀", "日本", "\u2028", "\u2029", "\ufeff",
    "\ufffe", "\uffff", "x-note", "tactical/1", "1.3.move", "S1901M", "F LON-NTH", "ssh-ed25519 AAAA x@y",
]


# --- §2 / §7.1: report files, one entry per line --------------------------------------------------------------

def test_report_layout_is_the_design_example() -> None:
    entries = [
        {"do": {"move": "TL"}, "unit": "CA", "by": "fed", "at": "1.3.move"},
        {"at": "1.4.activity", "by": "fed", "unit": "CA", "do": {"speed": 10}},
        {"at": "1.4.fire", "by": "fed", "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}},
        {"x-note": "me too", "at": "1.5.activity", "by": "kli", "unit": "D7", "do": {"use": "tractor"}},
        {"at": "S1901M", "by": "england", "do": {"orders": ["F LON-NTH", "A LVP-YOR"]}},
    ]
    assert dump_report(entries) == (
        "entries:\n"
        '  - {at: "1.3.move", by: fed, unit: CA, do: {move: TL}}\n'
        '  - {at: "1.4.activity", by: fed, unit: CA, do: {speed: 10}}\n'
        '  - {at: "1.4.fire", by: fed, unit: CA, do: {fire: {weapon: ph1, target: D7}}}\n'
        '  - {at: "1.5.activity", by: kli, unit: D7, do: {use: tractor}, x-note: "me too"}\n'
        '  - {at: "S1901M", by: england, do: {orders: ["F LON-NTH", "A LVP-YOR"]}}\n'
    )


def test_flow_is_one_line() -> None:
    assert dump_flow({"id": "fed", "note": "a\nb", "n": [1, None]}) == '{id: fed, note: "a\\nb", "n": [1, null]}'


def test_empty_report() -> None:
    assert dump_report([]) == "entries: []\n"
    assert load(dump_report([]).encode(), "r.yaml").data == {"entries": []}


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_strings_stay_strings(text: str) -> None:
    entry = {"at": text, "by": text, "do": {text: text}, "x-list": [text, {"k": text}]}
    assert load(dump_report([entry]).encode(), "r.yaml").data == {"entries": [entry]}
    assert load(dump_mapping({text: text, "k": [text]}).encode(), "f.yaml").data == {text: text, "k": [text]}


@pytest.mark.parametrize("text, written", [
    ("fed", "fed"), ("CA", "CA"), ("x-note", "x-note"), ("tactical/1", "tactical/1"), ("ph1", "ph1"),
    ("yes", '"yes"'), ("Null", '"Null"'), ("true", '"true"'), ("1:30", '"1:30"'), ("0777", '"0777"'), ("", '""'),
    ("5", '"5"'), ("a: b", '"a: b"'), ("é", '"é"'), ("new\nline", '"new\\nline"'), ("\u2028", '"\\u2028"'),
    ('say "hi"', '"say \\"hi\\""'),
])
def test_strings_are_quoted_only_when_needed(text: str, written: str) -> None:
    assert dump_mapping({"v": text}) == f"v: {written}\n"


@pytest.mark.parametrize("value, problem", [
    ({"v": "nul\x00"}, ValueError), ({"v": "bell\x07"}, ValueError), ({"v": "del\x7f"}, ValueError),
    ({"v": "nel\x85"}, ValueError), ({"v": float("nan")}, ValueError), ({"v": float("inf")}, ValueError),
    ({1: "v"}, TypeError), ({"v": {2: "x"}}, TypeError), ({"v": {1, 2}}, TypeError), ({"v": b"x"}, TypeError),
    ({"k" * 1200: 1}, ValueError),
])
def test_unwritable_values_are_refused(value: dict, problem: type) -> None:
    with pytest.raises(problem):
        dump_mapping(value)
    with pytest.raises(problem):
        dump_report([{"at": "1.1.move", "by": "fed", "do": value}])


def test_report_entries_must_be_mappings() -> None:
    with pytest.raises(TypeError):
        dump_report(["not an entry"])  # type: ignore[list-item]


# --- block style for players, status, game ------------------------------------------------------------------

def test_mapping_layout() -> None:
    status = {
        "control": "kli", "firm": "1.8.damage",
        "pending": [{"player": "kli", "at": "1.8.damage", "kind": "condition", "why": "range 8 to CA"}],
        "yielded_by": None, "over": False, "note": "", "shields": [30, 24, 24], "empty": {}, "none": [],
        "setup": {"map": {"columns": 42, "rows": 30}, "ratio": 0.5},
    }
    assert dump_mapping(status) == (
        "control: kli\n"
        'firm: "1.8.damage"\n'
        "pending:\n"
        '  - {player: kli, at: "1.8.damage", kind: condition, why: "range 8 to CA"}\n'
        "yielded_by: null\n"
        "over: false\n"
        'note: ""\n'
        "shields: [30, 24, 24]\n"
        "empty: {}\n"
        "none: []\n"
        "setup:\n"
        "  map:\n"
        "    columns: 42\n"
        "    rows: 30\n"
        "  ratio: 0.5\n"
    )


def test_large_items_are_written_in_block_style() -> None:
    unit = {"id": "CA", "owner": "fed", "hex": "0510", "facing": "B", "speed": 12, "turn_mode": 2,
            "shields": [30, 24, 24, 20, 24, 24], "weapons": [{"id": "ph1", "type": "phaser", "arcs": ["F", "A"]}]}
    data = {"units": [unit, {"id": "D7"}], "table": [[1] * 40, [[2, 3], {"a": "b" * 120}]]}
    text = dump_mapping(data)
    assert text.startswith("units:\n  - id: CA\n    owner: fed\n    hex: \"0510\"\n")
    assert "    weapons:\n      - {id: ph1, type: phaser, arcs: [F, A]}\n  - {id: D7}\n" in text
    assert "table:\n  - - 1\n    - 1\n" in text
    assert load(text.encode(), "g.yaml").data == data
    assert max(len(line) for line in text.splitlines() if "bbb" not in line) <= 100


def test_empty_mapping() -> None:
    assert dump_mapping({}) == "{}\n"
    assert load(b"{}\n", "f.yaml").data == {}
    with pytest.raises(TypeError):
        dump_mapping([])  # type: ignore[arg-type]


# --- property tests: write then read gives the same data, same types, same key order ---------------------------

CHARS = st.characters(exclude_categories=("Cs", "Cc")) | st.sampled_from("\t\n\r")
STRINGS = st.sampled_from(TRICKY) | st.text(CHARS, max_size=30)
KEYS = st.sampled_from(TRICKY) | st.text(CHARS, max_size=20)
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10**40), max_value=10**40)
           | st.floats(allow_nan=False, allow_infinity=False) | STRINGS)
JSONISH = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5),
                       max_leaves=12)


def same(a: Any, b: Any) -> bool:
    """Equal with types (True is not 1, 1.0 is not 1) and key order."""
    return json.dumps(a) == json.dumps(b)


@settings(max_examples=120, deadline=None)
@given(st.dictionaries(KEYS, JSONISH, max_size=8))
def test_dump_mapping_round_trips(data: dict[str, Any]) -> None:
    text = dump_mapping(data)
    assert same(load(text.encode("utf-8"), "f.yaml").data, data), text


ENTRIES = st.lists(
    st.fixed_dictionaries({"at": STRINGS, "by": STRINGS, "do": st.dictionaries(KEYS, JSONISH, min_size=1, max_size=1)},
                          optional={"unit": STRINGS, "x-note": JSONISH}),
    max_size=6,
)


@settings(max_examples=120, deadline=None)
@given(ENTRIES)
def test_dump_report_round_trips_line_by_line(entries: list[dict[str, Any]]) -> None:
    text = dump_report(entries)
    loaded = load(text.encode("utf-8"), "r.yaml").data["entries"]
    assert [json.dumps(e, sort_keys=True) for e in loaded] == [json.dumps(e, sort_keys=True) for e in entries]
    lines = text.splitlines()
    assert len(lines) == len(entries) + 1 or (not entries and lines == ["entries: []"])
    for line, entry in zip(lines[1:], entries):  # each line alone is its entry: the verifier parses only new lines
        alone = load(line.strip().encode("utf-8"), "r.yaml").data
        assert json.dumps(alone, sort_keys=True) == json.dumps([entry], sort_keys=True)


# --- canonical JSON: the one serialiser for everything hashed or signed ------------------------------------------

def test_canonical_form() -> None:
    assert canonical.dumps({"b": [1, 2.5, None, True], "a": "é", "c": {"z": 0, "y": -1}}) == (
        '{"a":"é","b":[1,2.5,null,true],"c":{"y":-1,"z":0}}'.encode())
    assert canonical.dumps({"b": 1, "a": 2}) == canonical.dumps({"a": 2, "b": 1})
    assert canonical.dumps("line\nsep\u2028") == b'"line\\nsep\xe2\x80\xa8"'


@pytest.mark.parametrize("value, problem", [
    (float("nan"), ValueError), (float("inf"), ValueError), ({"a": [float("-inf")]}, ValueError),
    ({1: "a"}, TypeError), ({"a": {None: 1}}, TypeError), ({"a": {1, 2}}, TypeError), (b"x", TypeError),
    ("\ud800", ValueError),
])
def test_canonical_refuses(value: Any, problem: type) -> None:
    with pytest.raises(problem):
        canonical.dumps(value)


@settings(max_examples=100, deadline=None)
@given(JSONISH)
def test_canonical_is_stable_through_a_reload(value: Any) -> None:
    once = canonical.dumps(value)
    assert canonical.dumps(json.loads(once)) == once
