"""The strict YAML loader (DESIGN §2: "Every YAML file is read with a strict loader").

Tables of input -> data and input -> (rule id, line), run against both libyaml and the pure-Python parser, plus
property tests: arbitrary bytes raise nothing but PbemError.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.errors import PbemError
from pbem.formats import yamlsafe
from pbem.formats.yamlsafe import load


@pytest.fixture(params=["libyaml", "python"], autouse=True)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run every table with both parsers: the C one is the default, the pure one the fallback."""
    if request.param == "python":
        monkeypatch.setattr(yamlsafe, "_Loader", yaml.SafeLoader)
    elif not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML built without libyaml")
    return request.param


# --- §2 "YAML 1.1 surprises stay strings": plain scalars resolve JSON-like only --------------------------------

SCALARS = [
    ("null", None), ("~", None), ("", None), ("true", True), ("false", False),
    ("0", 0), ("-0", 0), ("42", 42), ("-17", -17), ("123456789012345678901234567890", 123456789012345678901234567890),
    ("1.5", 1.5), ("-0.25", -0.25), ("1e3", 1000.0), ("2.5E-2", 0.025), ("1e+2", 100.0),
    # YAML 1.1 / 1.2 core schema surprises: all stay strings
    ("yes", "yes"), ("no", "no"), ("NO", "NO"), ("on", "on"), ("off", "off"), ("y", "y"), ("n", "n"),
    ("True", "True"), ("FALSE", "FALSE"), ("Null", "Null"), ("NULL", "NULL"),
    ("1:30", "1:30"), ("0777", "0777"), ("0o17", "0o17"), ("0x1F", "0x1F"), ("1_000", "1_000"), ("+1", "+1"),
    ("2001-01-01", "2001-01-01"), ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
    (".inf", ".inf"), ("-.inf", "-.inf"), (".NaN", ".NaN"), ("1.", "1."), (".5", ".5"), ("01.5", "01.5"),
    ("=", "="), ("<<", "<<"), ("1.3.move", "1.3.move"), ("S1901M", "S1901M"), ("fed", "fed"),
    # quoted scalars are always strings
    ('"null"', "null"), ("'true'", "true"), ('"1"', "1"), ("'1.5'", "1.5"), ('""', ""), ("''", ""),
    ('"a\\tb"', "a\tb"), ('"\\u00e9"', "é"), ("é 😀", "é 😀"),
]


@pytest.mark.parametrize("text, expected", SCALARS)
def test_plain_scalars_resolve_json_like_only(text: str, expected: object) -> None:
    data = load(f"v: {text}\n".encode(), "f.yaml").data
    assert data == {"v": expected}
    assert type(data["v"]) is type(expected)


DOCUMENTS = [
    (b"", None),
    (b"# only a comment\n", None),
    (b"---\na: 1\n...\n", {"a": 1}),
    (b"\xef\xbb\xbfa: 1\n", {"a": 1}),  # a leading BOM is tolerated
    (b"- 1\n- [a, {b: c}]\n- {}\n- []\n", [1, ["a", {"b": "c"}], {}, []]),
    (b"a:\nb: ~\n", {"a": None, "b": None}),
    (b"text: |\n  two\n  lines\n", {"text": "two\nlines\n"}),
    (b"folded: >-\n  one\n  line\n", {"folded": "one line"}),
    (b"'1': quoted key\n\"true\": too\n", {"1": "quoted key", "true": "too"}),
    (b"yes: 1\nNo: 2\n", {"yes": 1, "No": 2}),
    (b"a: 1 # comment\n", {"a": 1}),
    (b"plain: multi\n  line\n", {"plain": "multi line"}),
    (b"at: 1.3.move\n", {"at": "1.3.move"}),
    (b"a: \"line\\u2028sep\"\n", {"a": "line\u2028sep"}),  # escaped, a line separator is just data
    (b"big: 1e308\n", {"big": 1e308}),
]


@pytest.mark.parametrize("source, expected", DOCUMENTS)
def test_documents(source: bytes, expected: object) -> None:
    assert load(source, "f.yaml").data == expected


# --- §2 "no anchors, aliases or tags, string keys only and no duplicates, caps": rule id and line -------------

REJECTED = [
    # (source, rule, line)
    (b"a: &x 1\nb: *x\n", "yaml.alias", 1),
    (b"a: 1\nb: *undefined\n", "yaml.alias", 2),
    (b"a: 1\nb: &anchor [1]\n", "yaml.alias", 2),
    (b"a: 1\nb: !!str 5\n", "yaml.tag", 2),
    (b"a: 1\nb: !custom x\n", "yaml.tag", 2),
    (b"a: 1\nb: ! x\n", "yaml.tag", 2),
    (b"a: 1\nb: !!python/object:os.system x\n", "yaml.tag", 2),
    (b"--- !!map\na: 1\n", "yaml.tag", 1),
    (b"a: 1\nb: 2\na: 3\n", "yaml.duplicate-key", 3),
    (b"x:\n  - {a: 1, a: 2}\n", "yaml.duplicate-key", 2),
    (b"a: 1\n'a': 2\n", "yaml.duplicate-key", 2),
    (b"1: a\n", "yaml.bad-key", 1),
    (b"a: 1\nnull: b\n", "yaml.bad-key", 2),
    (b"a: 1\ntrue: b\n", "yaml.bad-key", 2),
    (b"a: 1\n?\n: b\n", "yaml.bad-key", 2),
    (b"a: 1\n1.5: b\n", "yaml.bad-key", 2),
    (b"a: 1\n[x]: b\n", "yaml.bad-key", 2),
    (b"a: 1\n? {x: 1}\n: b\n", "yaml.bad-key", 2),
    (b"a: 1\n---\nb: 2\n", "yaml.syntax", 2),
    (b"a\n...\nb\n", "yaml.syntax", 3),
    (b"a: [1, 2\nb: 3\n", "yaml.syntax", 1),  # the unclosed `[` is on line 1 (libyaml notices on line 2)
    (b"a: b: c\n", "yaml.syntax", 1),
    (b"a: 1\n  b: 2\n", "yaml.syntax", 2),
    (b"a: 1\n\tb: 2\n", "yaml.syntax", 2),
    (b"a: \"unterminated\n", "yaml.syntax", 1),
    (b"a: 1\nb: 1e999\n", "yaml.syntax", 2),
    (b"a: 1\nb: " + b"9" * 400 + b"\n", "yaml.syntax", 2),
    (b"a: 1\nb: \xff\n", "yaml.encoding", 2),
    (b"\xfe\xff\x00a", "yaml.encoding", 1),  # UTF-16 is not UTF-8
    (b"a: 1\nb: x\x00y\n", "yaml.encoding", 2),
    (b"a: 1\nb: x\x07y\n", "yaml.encoding", 2),
    (b"a: 1\nb: x\x7fy\n", "yaml.encoding", 2),
    (b"a: 1\nb: x\xc2\x85y\n", "yaml.encoding", 2),  # NEL: a line break to YAML only
    (b"a: 1\nb: x\xe2\x80\xa8y\n", "yaml.encoding", 2),  # U+2028 likewise
    (b"a: 1\nb: x\xef\xbb\xbfy\n", "yaml.encoding", 2),  # a BOM other than at the start
    (b"a: 1\nb: \"x\\0y\"\n", "yaml.encoding", 2),  # escaped controls are refused too
    (b"a: 1\nb: \"x\\x1by\"\n", "yaml.encoding", 2),
    (b"\n\n\n" + b"[" * 2000 + b"]" * 2000, "yaml.too-deep", 4),  # libyaml's own depth limit is 1000
]


def test_lone_surrogate_escape_is_refused() -> None:
    # libyaml refuses the escape itself, the pure parser decodes it and we refuse the value
    with pytest.raises(PbemError) as caught:
        load(b"a: 1\nb: \"\\ud800\"\n", "f.yaml")
    assert caught.value.finding.rule in ("yaml.syntax", "yaml.encoding") and caught.value.finding.line == 2


@pytest.mark.parametrize("source, rule, line", REJECTED)
def test_rejected(source: bytes, rule: str, line: int) -> None:
    with pytest.raises(PbemError) as caught:
        load(source, "game/f.yaml")
    finding = caught.value.finding
    assert (finding.rule, finding.line, finding.file) == (rule, line, "game/f.yaml")
    assert caught.value.exit_code == 1


def test_messages_quote_the_offending_text() -> None:
    cases = [(b"a: 1\na: 2\n", "'a'"), (b"x: !foo 1\n", "!foo"), (b"x: &anc 1\n", "&anc"), (b"7: x\n", "'7'"),
             (b"a: b: c\n", "a: b: c")]
    for source, quoted in cases:
        with pytest.raises(PbemError) as caught:
            load(source, "f.yaml")
        assert quoted in caught.value.finding.message, caught.value.finding.message


# --- caps on size, depth and node count -------------------------------------------------------------------------

def test_size_cap() -> None:
    at_limit = b"a: " + b"x" * (yamlsafe.MAX_BYTES - 4) + b"\n"
    assert len(at_limit) == yamlsafe.MAX_BYTES
    assert len(load(at_limit, "f.yaml").data["a"]) == yamlsafe.MAX_BYTES - 4
    with pytest.raises(PbemError, match="too-large"):
        load(at_limit + b" ", "f.yaml")


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_depth_cap() -> None:
    assert load(nested(32), "f.yaml").data is not None
    with pytest.raises(PbemError) as caught:
        load(b"a: 1\nb: " + nested(33), "f.yaml")
    assert (caught.value.finding.rule, caught.value.finding.line) == ("yaml.too-deep", 2)
    with pytest.raises(PbemError, match="too-deep"):
        load(b"[" * 100_000, "f.yaml")  # stops early, before the parser sees the (missing) end


def test_node_cap(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if parser == "python":  # the pure parser takes seconds for 200,000 nodes; the logic is the same
        monkeypatch.setattr(yamlsafe, "MAX_NODES", 1000)
    # the root list plus its items are the nodes; keys count too
    at_limit = b"[" + b"0," * (yamlsafe.MAX_NODES - 1) + b"]"
    assert len(load(at_limit, "f.yaml").data) == yamlsafe.MAX_NODES - 1
    with pytest.raises(PbemError, match="too-many-nodes"):
        load(b"[" + b"0," * yamlsafe.MAX_NODES + b"]", "f.yaml")


# --- line_of: every error names file and line ---------------------------------------------------------------

LINES_SOURCE = b"""\
# a comment
entries:
  - {at: "1.3.move", by: fed, unit: CA, do: {move: TL}}
  - at: "1.4.fire"
    by: kli

    do:
      fire: {weapon: ph1,
             target: D7}
note: |
  text
last: [a,
  b]
"""

LINES = [
    ((), 1),
    (("entries",), 2),
    (("entries", 0), 3),
    (("entries", 0, "do", "move"), 3),
    (("entries", 1), 4),
    (("entries", 1, "at"), 4),
    (("entries", 1, "by"), 5),
    (("entries", 1, "do"), 7),
    (("entries", 1, "do", "fire"), 8),
    (("entries", 1, "do", "fire", "target"), 9),
    (("note",), 10),
    (("last", 1), 13),
    # missing nodes fall back to the nearest ancestor
    (("entries", 1, "unit"), 4),
    (("entries", 7, "do"), 2),
    (("entries", "x"), 2),
    (("nope", 3), 1),
    (("last", True), 12),
]


@pytest.mark.parametrize("path, line", LINES)
def test_line_of(path: tuple, line: int) -> None:
    assert load(LINES_SOURCE, "f.yaml").line_of(path) == line


def test_document_exposes_file_and_plain_data() -> None:
    doc = load(b"a: [1, {b: null}]\n", "players/fed.yaml")
    assert doc.file == "players/fed.yaml"
    assert type(doc.data) is dict and type(doc.data["a"]) is list
    assert "players/fed.yaml" in repr(doc)


# --- property tests: arbitrary input raises nothing but PbemError -------------------------------------------

YAMLISH = st.text(alphabet=st.sampled_from(list("ab01:-?[]{},#&*!|>'\"%@` \t\n\\.~eE+xé\u2028\x00")), max_size=80)


def _only_pbem_errors(source: bytes) -> None:
    try:
        doc = load(source, "f.yaml")
    except PbemError as exc:
        assert exc.finding.rule.startswith("yaml.") and exc.finding.file == "f.yaml" and exc.finding.line >= 1
        return
    doc.line_of(("a", 0, "b"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_pbem_errors(source: bytes) -> None:
    _only_pbem_errors(source)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(YAMLISH)
def test_yaml_like_text_raises_only_pbem_errors(text: str) -> None:
    _only_pbem_errors(text.encode("utf-8"))


# --- the fast reader of pbem's own writing (yamlsafe._fast): the strict builder's data, or it gives up ----------

def _strict(text: str) -> object:
    return yamlsafe._Builder("f.yaml").build(text).data


def _fast_agrees(text: str) -> bool:
    """`_fast` gives up (False) or gives exactly what the strict builder gives (True): same values, same types,
    same key order; where the strict builder refuses the text, `_fast` must have given up."""
    fast = yamlsafe._fast(text)
    try:
        strict = _strict(text)
    except PbemError:
        assert fast is None, f"fast reader accepted what the strict one refuses: {text!r}"
        return False
    assert fast is None or repr(fast[0]) == repr(strict), f"fast reader disagrees on {text!r}"
    return fast is not None


WRITTEN = [  # what pbem writes: the fast reader takes it
    "control: fed\nfirm: \"77.29.damage\"\npending:\n  - {player: fed, at: \"77.29.damage\", kind: horizon, "
    "why: \"needs orders from 77.29.damage\"}\nover: false\nyielded_by: kli\nnote: \"turn 9995\"\n",
    "through: \"1.8.damage\"\nbreaks:\n  - {range: 8}\n  - {at: \"2.1.move\"}\n",
    "{at: \"1.3.move\", by: fed, unit: CA, do: {move: TL}}",
    "a:\n  b:\n    c: [1, -2, 0, null, true, false, x_y.z/w-v]\n  d: {}\ne: []\n",
    "- {a: 1}\n- [b, \"c d\"]\n",
    "{}\n",
    "\"quoted key\": \"é 😀 #, [] {} : '\"\n",
]

NOT_WRITTEN = [  # anything else: the fast reader gives up (the strict builder reads or refuses it)
    "a: 1\na: 2\n", "{a: 1, a: 2}", "x:\n  - {a: 1, a: 2}\n", "a: 1\n  b: 2\n", "k: a\n  b\n", "k:\n- a\n",
    "k:\n", "k: \n", "k:  v\n", "k: v # c\n", "k: \"a\\tb\"\n", "k: \"a\tb\"\n", "k: 1.5\n", "k: 1e3\n", "k: 0777\n",
    "k: " + "9" * 19 + "\n", "k: a, b\n", "k: [a, b]]\n", "k: {a: b} c\n", "k: 'single'\n", "k: &x 1\n", "k: *x\n",
    "k: !!str 1\n", "null: 1\n", "true: 1\n", "\"null\": 1\n", "{1: a}", "{null: a}", "[a: b]", "{a, b}",
    "{a: b,}", "{\"a\":b}", "{a:b}", "a: 1\r\n", "---\na: 1\n", "a: 1\n...\n", "a: 1\n\n", " a: 1\n", " - a\n",
    "- - a\n", "-  a\n", "-\n", "k:\n  \n", "k:\n   a: 1\n", "fed\n", "", "[" * 20 + "]" * 20,
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 14)) + "  " * 14 + "v: 1\n",
    "a: x\nb:\n  - 1\n  c: 2\n", "a:\n  - 1\n    - 2\n", "k: \"" + "x" * 1001 + "\"\n",
    "{a: 1, \"a\": 2}", "k: {x: {y: 1}, \"x\": 2}\n", "k: " + "w" * 1001 + "\n", "k: 12ab\n",
]


@pytest.mark.parametrize("text", WRITTEN)
def test_fast_reader_reads_what_pbem_writes(text: str) -> None:
    assert _fast_agrees(text)


@pytest.mark.parametrize("text", NOT_WRITTEN)
def test_fast_reader_gives_up_on_anything_else(text: str) -> None:
    assert not _fast_agrees(text)


def test_fast_read_documents_find_their_lines() -> None:
    source = WRITTEN[0].encode()
    doc = load(source, "status.yaml")
    assert doc._lines is None  # read fast: lines only when asked
    strict = yamlsafe._Builder("status.yaml").build(source.decode())
    for path in [(), ("firm",), ("pending", 0), ("pending", 0, "why"), ("note",), ("nope",)]:
        assert doc.line_of(path) == strict.line_of(path)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
    | st.sampled_from(["fed", "x_y", "a.b/c-d", "null", "yes", "1.3.move", ""]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["a", "b", "at", "do", "x-note", "null", "1", "k k"]), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["a", "b", "pending", "through", "x y"]), JSONISH, max_size=5))
def test_fast_reader_agrees_on_written_data(data: dict) -> None:
    from pbem.formats.writer import UnwritableText, dump_flow, dump_mapping
    try:
        texts = [dump_mapping(data), dump_flow(data)]
    except (UnwritableText, ValueError, TypeError):
        return
    for text in texts:
        _fast_agrees(text)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(WRITTEN), st.lists(st.tuples(st.integers(0, 400), st.integers(0, 2), st.sampled_from(
    list("ab01:- ?[]{},#&*!|>'\"\\\t\n.~e+é"))), max_size=4))
def test_fast_reader_agrees_on_mangled_writing(text: str, edits: list) -> None:
    for at, action, char in edits:
        at %= len(text) + 1
        text = text[:at] + char + text[at:] if action == 0 else text[:at] + text[at + 1:] if action == 1 \
            else text[:at] + char + text[at + 1:]
    _fast_agrees(text)
