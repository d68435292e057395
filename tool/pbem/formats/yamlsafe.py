"""The strict YAML loader: bytes -> plain JSON data with line numbers (DESIGN §2).

Every game file is read here and nowhere else. The loader is built on PyYAML's *event* stream (libyaml's C parser
when available), never on its constructors, so none of YAML's object machinery can run: no anchors, aliases or
tags; mapping keys are strings and unique; exactly one document; caps on size, depth and node count.
Plain scalars resolve JSON-like only (`null`/`~`/empty, `true`/`false`, JSON integers and floats); every other
plain scalar, including the YAML 1.1 surprises (`yes`, `NO`, `1:30`, `0777`, `2001-01-01`, `.inf`), stays a
string. Every error is a `PbemError` that names the file, the line and the rule.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import TYPE_CHECKING, Any, Union

from pbem.errors import ILLEGAL, PbemError

if TYPE_CHECKING:
    import yaml
else:
    yaml = None  # PyYAML, imported by the strict builder's first use (`_strict`): the fast reader needs none of it

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 32
MAX_NODES = 200_000
MAX_NUMBER_CHARS = 300

JsonPath = tuple[Union[str, int], ...]

# libyaml is ~10x faster; the pure-Python parser emits the same events. Set with PyYAML's import (`_strict`).
_Loader: Any = None

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_NULLS = frozenset({"", "~", "null"})
# Raw text: C0 controls except tab/LF/CR, DEL, C1 (incl. NEL), surrogates and the two non-characters are not YAML
# at all; U+2028/U+2029/NEL are line breaks to YAML but not to git or editors, so they would shift line numbers;
# a BOM is only tolerated as the very first character.
_BAD_RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")
# Values (after escapes like "\0" are decoded): the same controls, which no game field has a use for.
_BAD_VALUE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")

# Per-node line bookkeeping, parallel to the data: (line, children) where children is a dict (mapping), a list
# (sequence) or None (scalar). For a mapping member the line is the key's line.
_Lines = tuple[int, Union[dict[str, "_Lines"], list["_Lines"], None]]
# The events that make a value (`_Builder._node`): a scalar or the start of a mapping or sequence, each with a tag.
_NodeEvent = Union["yaml.ScalarEvent", "yaml.CollectionStartEvent"]


class Document:
    """A loaded YAML file: `.data` (plain JSON types) and `.line_of(path)` for messages."""

    __slots__ = ("_data", "_lines", "_file", "_text")

    def __init__(self, data: Any, lines: _Lines | None, file: str, text: str = "") -> None:
        self._data = data
        self._lines = lines  # None: read by the strict builder from `_text` when first asked (`_fast`)
        self._file = file
        self._text = text

    @property
    def data(self) -> Any:
        """The document as dict/list/str/int/float/bool/None; None for an empty file."""
        return self._data

    @property
    def file(self) -> str:
        """The file name given to `load`, for messages."""
        return self._file

    def line_of(self, path: JsonPath) -> int:
        """1-based line of the node at `path` (the key's line for a mapping member).

        Falls back to the nearest ancestor present in the document; 1 for the root.
        """
        if self._lines is None:
            self._lines = _Builder(self._file).build(self._text)._lines
        line, children = 1, self._lines[1]  # type: ignore[index]
        for step in path:
            if isinstance(children, dict) and isinstance(step, str) and step in children:
                line, children = children[step]
            elif isinstance(children, list) and isinstance(step, int) and not isinstance(step, bool) \
                    and 0 <= step < len(children):
                line, children = children[step]
            else:
                break
        return line

    def __repr__(self) -> str:
        return f"Document(file={self._file!r}, data={self._data!r})"


def load(data: bytes, file: str) -> Document:
    """Parse one YAML file strictly (DESIGN §2); raise `PbemError` (exit 1) naming file, line and rule."""
    text = _decode(data, file)
    if len(text) <= FAST_MAX:
        fast = _fast(text)
        if fast is not None:
            if _CROSSCHECK:  # the test suite's: the fast reader gives what the strict one gives, types and order
                assert repr(_Builder(file).build(text).data) == repr(fast[0]), f"fast YAML reader disagrees: {text!r}"
            return Document(fast[0], None, file, text)
    return _Builder(file).build(text)


def _strict() -> None:
    """Import PyYAML for the strict builder, once: a game file pbem wrote itself is read without it (`_fast`),
    and importing it costs more than judging one new commit."""
    global yaml, _Loader
    if yaml is not None and _Builder._handlers and _Loader is not None:
        return
    import yaml as module

    yaml = module
    if _Loader is None:
        _Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    b = _Builder
    _Builder._handlers = {yaml.DocumentStartEvent: b._document, yaml.AliasEvent: b._alias, yaml.MappingEndEvent: b._end,
                          yaml.SequenceEndEvent: b._end, yaml.ScalarEvent: b._node, yaml.MappingStartEvent: b._node,
                          yaml.SequenceStartEvent: b._node}


def _line_of(event: yaml.Event) -> int:
    """The 1-based line an event starts on: the parser marks every event it emits (the stubs allow none)."""
    assert event.start_mark is not None
    return event.start_mark.line + 1


def _fail(rule: str, message: str, file: str, line: int) -> PbemError:
    return PbemError(rule, message, file=file, line=line, exit_code=ILLEGAL)


def _brief(text: str, limit: int = 40) -> str:
    """A short quotable excerpt of user text for messages."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _decode(data: bytes, file: str) -> str:
    if len(data) > MAX_BYTES:
        raise _fail("yaml.too-large", f"file is {len(data)} bytes; the limit is {MAX_BYTES} (1 MiB)", file, 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start:exc.start + 4]
        raise _fail("yaml.encoding", f"not UTF-8: bytes {bad!r} at offset {exc.start}", file, line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    bad_char = _BAD_RAW.search(text)
    if bad_char:
        where = bad_char.start()
        line = text.count("\n", 0, where) + 1
        code = ord(bad_char.group())
        hint = "; write it as \\u%04X inside double quotes" % code if code in (0x2028, 0x2029, 0xFEFF) else ""
        raise _fail("yaml.encoding", f"character U+{code:04X} is not allowed in a game file{hint}", file, line)
    return text


class _Frame:
    """An open collection while building: its container, its line map, and (mappings) the pending key."""

    __slots__ = ("value", "lines", "is_map", "key", "key_line")

    def __init__(self, value: Any, lines: Any, is_map: bool) -> None:
        self.value = value
        self.lines = lines
        self.is_map = is_map
        self.key: str | None = None
        self.key_line = 0


class _Builder:
    """Turns the event stream into data + line map, enforcing every rule as it goes (never reads ahead)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.nodes = 0
        self.documents = 0

    def build(self, text: str) -> Document:
        _strict()
        root: list[Any] = []  # [value, lines] once the single document's root node is seen
        stack: list[_Frame] = []
        loader = _Loader(text)
        handlers = self._handlers
        try:
            while True:
                event = loader.get_event()
                if event is None:
                    break
                handler = handlers.get(type(event))
                if handler is not None:
                    handler(self, event, stack, root)
                elif type(event) is yaml.StreamEndEvent:
                    break
        except yaml.MarkedYAMLError as exc:
            raise self._syntax(exc, text) from None
        except yaml.YAMLError as exc:  # ReaderError and friends carry no mark
            raise _fail("yaml.syntax", f"malformed YAML: {exc}", self.file, 1) from None
        finally:
            loader.dispose()
        if not root:
            return Document(None, (1, None), self.file)
        return Document(root[0], (1, root[1][1]), self.file)

    def _syntax(self, exc: yaml.MarkedYAMLError, text: str) -> PbemError:
        mark = exc.problem_mark or exc.context_mark
        lines = text.splitlines()
        problem = exc.problem or exc.context or "cannot parse"
        context = exc.context or ""
        opened = exc.context_mark if context.startswith("while parsing a flow") else None
        if opened is not None and mark is not None and opened.line < mark.line:
            # an unclosed `{` or `[`: libyaml notices at the next line it cannot take; the mistake is where it opened
            after = ("nothing after it closes it" if mark.line >= len(lines) else
                     f"line {mark.line + 1} cannot continue it")
            problem = f"this {'{' if 'mapping' in context else '['} is never closed ({problem}; {after})"
            mark = opened
        # libyaml reports errors at end of input one line past the last; point at a line that exists
        line = min(mark.line + 1, max(1, len(lines))) if mark is not None else 1
        if "nesting depth" in problem:  # libyaml's own cap (1000) can trip before ours is reached
            return _fail("yaml.too-deep", f"nested more than {MAX_DEPTH} levels deep", self.file, line)
        near = f" near {_brief(lines[line - 1].strip())}" if 0 < line <= len(lines) and lines[line - 1].strip() else ""
        return _fail("yaml.syntax", f"malformed YAML: {problem}{near}", self.file, line)

    def _document(self, event: yaml.Event, stack: list[_Frame], root: list[Any]) -> None:
        self.documents += 1
        if self.documents > 1:
            raise _fail("yaml.syntax", "more than one YAML document (a second '---'); one file is one document",
                        self.file, _line_of(event))

    def _alias(self, event: yaml.AliasEvent, stack: list[_Frame], root: list[Any]) -> None:
        raise _fail("yaml.alias", f"alias '*{event.anchor}' is not allowed; write the value out", self.file,
                    _line_of(event))

    def _end(self, event: yaml.Event, stack: list[_Frame], root: list[Any]) -> None:
        stack.pop()

    def _node(self, event: _NodeEvent, stack: list[_Frame], root: list[Any]) -> None:
        line = _line_of(event)
        self._check_node(event, line, len(stack))
        parent = stack[-1] if stack else None

        if parent is not None and parent.is_map and parent.key is None:
            self._key(event, parent, line)
            return

        kind = type(event)
        if isinstance(event, yaml.ScalarEvent):  # no subclasses: the same test as `kind is`, and mypy narrows it
            value: Any = self._scalar(event, line)
            child: Any = None
        elif kind is yaml.MappingStartEvent:
            value, child = {}, {}
        else:
            value, child = [], []

        if parent is None:
            root[:] = [value, (1, child)]
        elif parent.is_map:
            key = parent.key
            assert key is not None
            parent.value[key] = value
            parent.lines[key] = (parent.key_line, child)
            parent.key = None
        else:
            parent.value.append(value)
            parent.lines.append((line, child))
        if child is not None:
            stack.append(_Frame(value, child, kind is yaml.MappingStartEvent))

    _handlers: dict[type, Any] = {}  # event type -> method, once PyYAML is imported (`_strict`)

    def _check_node(self, event: _NodeEvent, line: int, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _fail("yaml.too-many-nodes", f"more than {MAX_NODES} values in one file", self.file, line)
        if event.anchor is not None:
            raise _fail("yaml.alias", f"anchor '&{event.anchor}' is not allowed; write values out", self.file, line)
        if event.tag is not None:
            raise _fail("yaml.tag", f"tag {_brief(event.tag)} is not allowed; quote the value if it is a string",
                        self.file, line)
        if depth >= MAX_DEPTH and not isinstance(event, yaml.ScalarEvent):
            raise _fail("yaml.too-deep", f"nested more than {MAX_DEPTH} levels deep", self.file, line)

    def _key(self, event: _NodeEvent, parent: _Frame, line: int) -> None:
        if not isinstance(event, yaml.ScalarEvent):
            raise _fail("yaml.bad-key", "a mapping key must be a plain string, not a list or mapping",
                        self.file, line)
        key = self._scalar(event, line)
        if not isinstance(key, str):
            raise _fail("yaml.bad-key", f"key {event.value!r} is not a string; quote it (\"{event.value}\")"
                        if event.value else "empty key; keys must be non-null strings", self.file, line)
        if key in parent.value:
            first = parent.lines[key][0]
            raise _fail("yaml.duplicate-key", f"duplicate key {_brief(key)} (first at line {first})", self.file, line)
        parent.key = key
        parent.key_line = line

    def _scalar(self, event: yaml.ScalarEvent, line: int) -> Any:
        text: str = event.value
        if _BAD_VALUE.search(text):
            raise _fail("yaml.encoding", f"control character in {_brief(text)}", self.file, line)
        if event.style:  # quoted or block scalars are always strings
            return text
        return self._resolve_plain(text, line)

    def _resolve_plain(self, text: str, line: int) -> Any:
        if text in _NULLS:
            return None
        if text == "true":
            return True
        if text == "false":
            return False
        if not text or text[0] not in "-0123456789":
            return text
        try:
            if len(text) > MAX_NUMBER_CHARS and _FLOAT.match(text):
                raise ValueError  # int() is quadratic in the digits before Python 3.11: a cheap DoS otherwise
            if _INT.match(text):
                return int(text)
            if _FLOAT.match(text):
                number = float(text)
                if not math.isfinite(number):
                    raise ValueError
                return number
        except ValueError:  # 1e999, or absurdly many digits
            raise _fail("yaml.syntax", f"number out of range: {_brief(text)}; quote it if it is a string",
                        self.file, line) from None
        return text


# --- The fast reader: pbem's own writing, read without the event stream -------------------------------------------
#
# Nearly every file a verifier reads was written by pbem (formats/writer.py): block mappings of `key: value` lines
# and `- item` lines, values on one line in flow style, strings plain identifiers or double-quoted without escapes.
# `_fast` reads exactly that narrow subset and gives up (None) on anything else, which the strict builder then
# reads (and refuses, where it must). Within the subset the two agree by construction: every token it admits
# means the same to libyaml and to JSON once plain words are quoted; the line numbers come from the strict builder
# when a message first asks for one. Under PBEM_CROSSCHECK (the test suite) every fast read is compared with the
# strict one.

FAST_MAX = 16 * 1024  # larger files (a long report) are read line by line or by the strict builder
_CROSSCHECK = os.environ.get("PBEM_CROSSCHECK") == "1"
# Flow tokens: a double-quoted string without escapes, a plain identifier (what the writer leaves unquoted, and
# no YAML reader takes for anything else but a string or, as written, null/true/false), a JSON integer of at most
# 18 digits, a bracket, and the two separators exactly as the writer spaces them. Nothing else, no other space.
_TOKEN = re.compile(r'"[^"\\\t]{0,1000}"|[A-Za-z_][A-Za-z0-9_./-]{0,999}|-?(?:0|[1-9][0-9]{0,17})(?![0-9A-Za-z_./-])'
                    r'|[{}\[\]]|, |: ')
_LITERALS = frozenset({"true", "false", "null"})
_KEY_LINE = re.compile(r'( *)("[^"\\\t]{0,1000}"|[A-Za-z_][A-Za-z0-9_./-]{0,999}):(?: (.+))?\Z')
_ITEM_LINE = re.compile(r'( *)- (.+)\Z')
# Levels of brackets in one value, and of nested blocks: together well inside MAX_DEPTH (a bracket counts as a level)
_FAST_DEPTH, _FAST_BLOCKS = 16, 12


class _Dropped(Exception):
    """The fast reader gives up: the strict builder reads the file."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Dropped  # a duplicate key: the strict builder names it
    return out


_JSON = json.JSONDecoder(object_pairs_hook=_pairs)
_JSON_PLAIN = json.JSONDecoder()  # when no key is written twice anywhere in the value: no duplicate to catch
# A value that is one token whole (most values of a block line): read without splitting it into tokens
_ONE_TOKEN = re.compile(r'"([^"\\\t]{0,1000})"\Z|([A-Za-z_][A-Za-z0-9_./-]{0,999})\Z|(-?(?:0|[1-9][0-9]{0,17}))\Z')


def _flow_value(text: str) -> Any:
    """One value on one line in the writer's flow style, or _Dropped."""
    one = _ONE_TOKEN.match(text)
    if one is not None:
        quoted, word, number = one.groups()
        if quoted is not None:
            return quoted
        if word is not None:
            return (None if word == "null" else word == "true") if word in _LITERALS else word
        return int(number)
    tokens = _TOKEN.findall(text)
    if sum(map(len, tokens)) != len(text):
        raise _Dropped  # a character no token takes (another space, an escape, a float, a comment …)
    if len(tokens) == 1:
        token = tokens[0]
        if token[0] == '"':
            return token[1:-1]
        if token in _LITERALS:
            return None if token == "null" else token == "true"
        if token[0] == "-" or token[0].isdigit():
            return int(token)
        if token[0] in "{}[]:,":
            raise _Dropped
        return token
    if text.count("{") + text.count("[") > _FAST_DEPTH:  # brackets in strings count too: no harm
        raise _Dropped
    json_text = "".join([t if t[0] in '"{}[],:-0123456789' or t in _LITERALS else f'"{t}"' for t in tokens])
    keys = [tokens[i - 1].strip('"') for i in range(1, len(tokens)) if tokens[i] == ": "]  # `a` and `"a"` alike
    try:
        return (_JSON_PLAIN if len(set(keys)) == len(keys) else _JSON).decode(json_text)
    except ValueError:  # JSONDecodeError; not JSON once quoted: the strict builder decides
        raise _Dropped from None


def _fast(text: str) -> tuple[Any] | None:
    """`text` read as the writer writes (see above), as a 1-tuple of its data; None when it is anything else."""
    if "\r" in text:
        return None
    lines = (text[:-1] if text.endswith("\n") else text).split("\n")
    try:
        if lines[0][:1] in ("{", "["):
            if len(lines) != 1:
                return None
            data = _flow_value(lines[0])
            return (data,) if isinstance(data, (dict, list)) else None
        data, end = _block(lines, 0, 0, 0)
    except _Dropped:
        return None
    return (data,) if end == len(lines) else None


def _block(lines: list[str], at: int, indent: int, depth: int) -> tuple[Any, int]:
    """The block mapping or sequence whose lines start at `lines[at]`, indented by `indent`; and the line after."""
    if depth > _FAST_BLOCKS:
        raise _Dropped
    first = lines[at]
    if first[indent:indent + 2] == "- ":
        items: list[Any] = []
        while at < len(lines):
            m = _ITEM_LINE.match(lines[at])
            if m is None or len(m.group(1)) != indent:
                break
            items.append(_flow_value(m.group(2)))
            at += 1
        return items, at
    mapping: dict[str, Any] = {}
    while at < len(lines):
        m = _KEY_LINE.match(lines[at])
        if m is None or len(m.group(1)) != indent:
            break
        key = m.group(2)
        key = key[1:-1] if key[0] == '"' else key
        if key in mapping or key in _LITERALS:
            raise _Dropped
        if m.group(3) is not None:
            mapping[key] = _flow_value(m.group(3))
            at += 1
            continue
        at += 1
        if at == len(lines) or not lines[at].startswith(" " * (indent + 2)) \
                or lines[at][indent + 2:indent + 3] in ("", " "):
            raise _Dropped  # an empty value, or a nested block indented otherwise than the writer does
        mapping[key], at = _block(lines, at, indent + 2, depth + 1)
    if at < len(lines) and len(lines[at]) - len(lines[at].lstrip(" ")) > indent:
        raise _Dropped  # a line deeper than its place allows (the strict builder names it)
    return mapping, at
