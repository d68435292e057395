"""Output is data (DESIGN §9): every string that comes from a repository (a path, a note, a commit message, a
unit's name) is made inert before pbem prints it.

Two dangers, two escapers:

* a terminal obeys control characters: ESC starts a sequence that moves the cursor or paints colours, `\\r`
  returns to the line's start, C1 codes (U+0080–U+009F) act as ESC sequences on some terminals, and the bidi
  overrides (U+202E …) reorder what a reader sees. `terminal` shows each of them as a visible escape (`\\x1b`,
  `\\u202e`) instead, so a forged green "ok" cannot paint over a real FAILED, and the attempt stays visible;
* GitHub reads lines of a job's output that start with `::` as workflow commands. A newline inside
  `::error file=…` would start a new command of the attacker's (`::stop-commands::` hides every later
  annotation). `annotation` escapes the property values and the message as GitHub's runner unescapes them.
  The runner also still reads the legacy form `##[command]` anywhere in a line, and `::` at a line's start
  after blanks: `terminal` breaks both up too, so no text pbem prints can hold a command it did not write.

JSON output needs neither: `json_dumps` keeps JSON (json.dumps escapes the rest; DEL is escaped here too).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

# C0 but tab and newline, DEL, C1; the bidi embeddings, overrides, isolates and marks; line/paragraph separators
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_UNSAFE_LINES = re.compile(f"[{_CONTROL}]")  # a multi-line text: newline and tab kept
_UNSAFE_LINE = re.compile(f"[{_CONTROL}\t\n]")  # one line: newline (and tab) shown escaped too

_COMMAND_START = re.compile(r"(?m)^(\s*):(?=:)")  # the runner trims a line's leading blanks, then looks for ::
# what GitHub's runner unescapes (ActionCommand.cs): in a property value, and in the message (the "data")
_PROPERTY = {"%": "%25", "\r": "%0D", "\n": "%0A", ":": "%3A", ",": "%2C"}
_DATA = {"%": "%25", "\r": "%0D", "\n": "%0A"}
_PROPERTY_RE = re.compile("[%\r\n:,]")
_DATA_RE = re.compile("[%\r\n]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: str, *, lines: bool = False) -> str:
    """`text` with every control character a terminal would obey shown as a visible escape (`\\x1b`), and no
    workflow command GitHub's runner would obey (`::` opening a line, `##[` anywhere: the bracket or colon shown
    as `\\x5b`, `\\x3a`). With `lines`, newlines and tabs are kept (a multi-line text); otherwise they are
    escaped too (one line)."""
    pattern = _UNSAFE_LINES if lines else _UNSAFE_LINE
    if pattern.search(text):
        text = pattern.sub(_visible, text)
    if "##[" in text:
        text = text.replace("##[", "##\\x5b")
    if "::" in text:
        text = _COMMAND_START.sub("\\1\\\\x3a", text)
    return text


def first_control(text: str, *, lines: bool = False) -> str | None:
    """The first character of `text` that `terminal` would escape (with `lines`, newline and tab are allowed),
    or None."""
    found = (_UNSAFE_LINES if lines else _UNSAFE_LINE).search(text)
    return found.group() if found else None


def workflow_property(value: str) -> str:
    """A property value of a GitHub workflow command (`file=`, `title=`), escaped as the runner unescapes it."""
    return _PROPERTY_RE.sub(lambda m: _PROPERTY[m.group()], value)


def workflow_data(value: str) -> str:
    """The message of a GitHub workflow command (after `::`), escaped as the runner unescapes it."""
    return _DATA_RE.sub(lambda m: _DATA[m.group()], value)


def annotation(command: str, properties: Iterable[tuple[str, str]], message: str) -> str:
    """One workflow command line, `::error file=F,line=L,title=T::message`, every value from the repository made
    inert twice over: terminal controls shown escaped (the log viewer paints ANSI colours), then GitHub's
    escaping (no value can end the line or the property list)."""
    props = ",".join(f"{name}={workflow_property(terminal(value))}" for name, value in properties)
    return f"::{command}{' ' + props if props else ''}::{workflow_data(terminal(message))}"


JSON_FORMAT = "pbem-json/1"  # the version every `--format json` output carries first (schemas/output/)


def json_dumps(data: Any, **options: Any) -> str:
    """json.dumps with every non-ASCII and control character escaped, DEL included (json.dumps leaves it)."""
    return json.dumps(data, ensure_ascii=True, **options).replace("\x7f", "\\u007f")


_MARKUP = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
_MARKUP_RE = re.compile("[&<>\"']")
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")  # no XML document may hold them, not even as references


def markup(text: str) -> str:
    """`text` inert inside XML or HTML, in element content and in quoted attribute values alike (an SVG drawn
    from a game: an order, a name, a title): markup shown as text, and every control character an XML document
    cannot hold (or a reader would be fooled by: the bidi overrides) shown as a visible escape, as `terminal`
    shows it, so the picture stays a well-formed document whatever a player wrote."""
    if _UNSAFE_LINE.search(text):
        text = _UNSAFE_LINE.sub(_visible, text)
    if _NOT_XML.search(text):
        text = _NOT_XML.sub(_visible, text)
    return _MARKUP_RE.sub(lambda m: _MARKUP[m.group()], text)
