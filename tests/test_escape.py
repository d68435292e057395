"""Output is data (DESIGN §9): pbem.text makes every string from a repository inert before it is
printed, for a terminal and for GitHub's workflow commands. Property tests: the terminal escaper's output never
holds a control character a terminal obeys nor a workflow command, and GitHub's escaping is lossless (the
runner's unescaping, as in actions/runner ActionCommand.cs, gives the value back).
"""

from __future__ import annotations

import json
import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from pbem import text as escape

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
DANGEROUS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + BIDI + "]")

# text that leans on what matters: control characters, bidi, GitHub's specials, any other character
nasty = st.lists(st.one_of(st.characters(codec="utf-8"),
                           st.sampled_from(list("\x1b\r\n\t\x00\x7f\x85\x9b%:,;#[] ") + list(BIDI)
                                           + ["::", "##[", " ::", "\n::"]))).map("".join)


def runner_unescape_property(value: str) -> str:
    """actions/runner `UnescapeProperty`: replacements in its table's order, `%25` last."""
    for token, replacement in (("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25")):
        value = value.replace(replacement, token)
    return value


def runner_unescape_data(value: str) -> str:
    """actions/runner `UnescapeData`."""
    for token, replacement in (("\r", "%0D"), ("\n", "%0A"), ("%", "%25")):
        value = value.replace(replacement, token)
    return value


def runner_parse(line: str) -> tuple[str, dict[str, str], str] | None:
    """actions/runner `TryParseV2`: `::command key=value,key=value::data` after leading blanks."""
    line = line.lstrip()
    if not line.startswith("::"):
        return None
    end = line.find("::", 2)
    if end < 0:
        return None
    info = line[2:end]
    name, _, props = info.partition(" ")
    properties = {}
    for pair in filter(None, props.strip().split(",")):
        key, sep, value = pair.partition("=")
        if sep and key and value:
            properties[key] = runner_unescape_property(value)
    return name, properties, runner_unescape_data(line[end + 2:])


@given(nasty, st.booleans())
def test_terminal_output_holds_no_control_character_and_no_workflow_command(text: str, lines: bool) -> None:
    out = escape.terminal(text, lines=lines)
    assert DANGEROUS.search(out) is None
    assert "\t" not in out and "\n" not in out if not lines else True
    assert "##[" not in out
    assert all(not line.lstrip().startswith("::") for line in out.split("\n"))
    assert not any(unicodedata.category(ch) == "Cc" and ch not in "\n\t" for ch in out)


@given(st.text())
def test_terminal_leaves_plain_text_alone(text: str) -> None:
    """Text without anything to escape is printed as it is (names in any script, punctuation, emoji)."""
    if escape.first_control(text) is None and "##[" not in text and not text.lstrip().startswith("::"):
        assert escape.terminal(text) == text


@given(nasty)
def test_workflow_escaping_is_lossless(value: str) -> None:
    """GitHub's runner unescapes a property value and a message back to exactly what was escaped."""
    assert runner_unescape_property(escape.workflow_property(value)) == value
    assert runner_unescape_data(escape.workflow_data(value)) == value
    assert not re.search("[\r\n:,]", escape.workflow_property(value))
    assert not re.search("[\r\n]", escape.workflow_data(value))


@given(nasty, nasty, nasty)
def test_an_annotation_is_one_command_whatever_its_values(path: str, rule: str, message: str) -> None:
    """One line, parsed by the runner as exactly the `error` command with our three properties, whose values
    are the terminal-escaped originals (the title, last, is a rule id: never blank at its end)."""
    line = escape.annotation("error", [("file", path), ("line", "3"), ("title", rule)], message)
    assert "\n" not in line and "\r" not in line and DANGEROUS.search(line) is None
    parsed = runner_parse(line)
    assert parsed is not None
    name, properties, data = parsed
    assert name == "error"
    # the runner trims the property list's end (the last value's trailing blanks) and drops empty values
    expected = {"file": escape.terminal(path), "line": "3", "title": escape.terminal(rule).rstrip()}
    assert properties == {k: v for k, v in expected.items() if v}
    assert data == escape.terminal(message)


def test_the_injection_of_the_issue_stays_one_annotation() -> None:
    """A file name with a newline and `::stop-commands::` (which would hide every later annotation)."""
    name = "report/x\n::stop-commands::pbem\n::error::fake.yaml"
    line = escape.annotation("error", [("file", name), ("line", "1"), ("title", "tree.unexpected-path")], "m")
    assert line.count("::") == 2 and "\n" not in line
    assert line.startswith("::error file=report/x\\x0a%3A%3Astop-commands%3A%3Apbem\\x0a%3A%3Aerror%3A%3A")


def test_json_stays_json_with_every_control_character_escaped() -> None:
    data = {"note": "\x1b[32mok\x7f\x85\u202e\n", "path": "a\nb"}
    text = escape.json_dumps(data)
    assert json.loads(text) == data
    assert DANGEROUS.search(text) is None and "\n" not in text
