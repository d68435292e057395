"""The `${{ }}` expressions and the workflow commands of GitHub Actions, as far as tests/actions_runner.py
emulates them: the subset our workflows use, and a loud `Unsupported` for anything else."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping


class Unsupported(Exception):
    """The workflow uses something this harness does not emulate: the test must fail, not pass by luck."""


@dataclass(frozen=True)
class Annotation:
    level: str  # error, warning, notice
    message: str
    properties: Mapping[str, str]


# --- expressions -----------------------------------------------------------------------------------------------

TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?[0-9]+(?:\.[0-9]+)?)|(?P<op>&&|\|\||==|!=|!|\(|\)|\.|,)"
                   r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")
STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")
CONTEXTS = ("github", "env", "job", "steps", "runner")


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and value == value  # NaN is falsy


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()  # GitHub compares strings ignoring case
    return bool(a == b)


class Expression:
    """One `${{ }}` body, parsed by recursive descent (or > and > equality > not > primary)."""

    def __init__(self, text: str, context: Mapping[str, Any], status: str) -> None:
        self.text, self.context, self.status = text, context, status
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = TOKEN.match(text, pos)
            if m is None:
                raise Unsupported(f"expression {text!r}: cannot read {text[pos:]!r}")
            kind = m.lastgroup
            assert kind is not None
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.pos = 0

    def value(self) -> Any:
        result = self._or()
        if self.pos != len(self.tokens):
            raise Unsupported(f"expression {self.text!r}: unexpected {self.tokens[self.pos][1]!r}")
        return result

    def _peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise Unsupported(f"expression {self.text!r} ends early")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if _truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._equality()
        while self._peek() == "&&":
            self._take()
            right = self._equality()
            left = right if _truthy(left) else left
        return left

    def _equality(self) -> Any:
        left = self._not()
        while self._peek() in ("==", "!="):
            op = self._take()[1]
            right = self._not()
            left = _equal(left, right) if op == "==" else not _equal(left, right)
        return left

    def _not(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not _truthy(self._not())
        return self._primary()

    def _primary(self) -> Any:
        kind, tok = self._take()
        if tok == "(" and kind == "op":
            inner = self._or()
            if self._take()[1] != ")":
                raise Unsupported(f"expression {self.text!r}: ( without )")
            return inner
        if kind == "str":
            return tok[1:-1].replace("''", "'")
        if kind == "num":
            return float(tok) if "." in tok else int(tok)
        if kind != "name":
            raise Unsupported(f"expression {self.text!r}: unexpected {tok!r}")
        if tok in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[tok]
        if self._peek() == "(":
            if tok not in STATUS_FUNCTIONS:
                raise Unsupported(f"expression {self.text!r}: function {tok}() is not emulated")
            self._take()
            if self._take()[1] != ")":
                raise Unsupported(f"expression {self.text!r}: {tok}() takes no arguments here")
            return {"success": self.status == "success", "failure": self.status == "failure",
                    "always": True, "cancelled": self.status == "cancelled"}[tok]
        if tok not in CONTEXTS:
            raise Unsupported(f"expression {self.text!r}: context {tok!r} is not emulated")
        value: Any = self.context.get(tok)
        while self._peek() == ".":
            self._take()
            kind, part = self._take()
            if kind != "name":
                raise Unsupported(f"expression {self.text!r}: property {part!r}")
            value = value.get(part) if isinstance(value, Mapping) else None
        if self._peek() == "[":
            raise Unsupported(f"expression {self.text!r}: index access is not emulated")
        return value


EMBEDDED = re.compile(r"\$\{\{((?:(?!\}\}).)*)\}\}", re.S)


def evaluate(body: str, context: Mapping[str, Any], status: str = "success") -> Any:
    return Expression(body, context, status).value()


def interpolate(text: Any, context: Mapping[str, Any], status: str = "success") -> str:
    """A YAML value with `${{ }}` parts, as GitHub substitutes them into text."""
    if not isinstance(text, str):
        return _text(text)
    whole = EMBEDDED.fullmatch(text.strip())
    if whole:
        return _text(evaluate(whole.group(1), context, status))
    return EMBEDDED.sub(lambda m: _text(evaluate(m.group(1), context, status)), text)


def condition(text: Any, context: Mapping[str, Any], status: str) -> bool:
    """A step's `if:`: a bare expression or one `${{ }}`; status functions see the job's status so far."""
    if text is None:
        return status == "success"
    source = str(text).strip()
    whole = EMBEDDED.fullmatch(source)
    body = whole.group(1) if whole else source
    uses_status = any(re.search(rf"\b{f}\s*\(", body) for f in STATUS_FUNCTIONS)
    result = _truthy(evaluate(body, context, status))
    return result if uses_status else (result and status == "success")  # GitHub adds `success() &&`


# --- workflow commands on stdout -------------------------------------------------------------------------------

COMMAND = re.compile(r"::(?P<cmd>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<msg>.*)")


def _unescape(text: str, prop: bool) -> str:
    text = text.replace("%0D", "\r").replace("%0A", "\n")
    if prop:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%25", "%")


def read_commands(stdout: str) -> list[Annotation]:
    """The annotations a step's stdout makes, honouring `::stop-commands::TOKEN` … `::TOKEN::`."""
    found: list[Annotation] = []
    stopped: str | None = None
    for line in stdout.splitlines():
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            continue
        m = COMMAND.fullmatch(line)
        if m is None:
            continue
        cmd = m.group("cmd")
        if cmd == "stop-commands":
            stopped = m.group("msg")
        elif cmd in ("error", "warning", "notice"):
            props = {}
            for part in (m.group("props") or "").split(","):
                if "=" in part:
                    key, _, val = part.partition("=")
                    props[key.strip()] = _unescape(val, True)
            found.append(Annotation(cmd, _unescape(m.group("msg"), False), props))
    return found


def read_env_file(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT / GITHUB_ENV: `K=V` lines and `K<<DELIM` … `DELIM` blocks."""
    values: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, _, delim = line.partition("<<")
            end = lines.index(delim, i + 1)
            values[key] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        if line.strip():
            key, eq, val = line.partition("=")
            if not eq:
                raise Unsupported(f"{path.name}: line {line!r} is neither K=V nor K<<DELIM")
            values[key] = val
        i += 1
    return values


