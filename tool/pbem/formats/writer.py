"""The YAML pbem writes: deterministic, human-readable, and read back unchanged by the strict loader (DESIGN §2).

Report files get one entry per line as a flow mapping (`- {at: "1.3.move", by: fed, unit: CA, do: {move: TL}}`),
so a commit's change to a report is a set of whole lines. Other files get block style in the given key order.
A string is written plain only when it is an identifier that no YAML reader (ours, or a YAML 1.1 one a player
might use) could take for anything but that string; every other string is double-quoted with JSON escapes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pbem.errors import PbemError

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*\Z")  # no YAML reader resolves these to non-strings
# Words some YAML reader turns into null or a bool (YAML 1.1, any case): quoted so that every reader agrees.
_RESERVED = frozenset({"null", "true", "false", "yes", "no", "on", "off", "y", "n"})
# What the loader refuses even when escaped (see yamlsafe._BAD_VALUE): refuse to write it instead.
_UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# Characters JSON leaves raw but the loader refuses raw (line separators, BOM, non-characters).
_ESCAPE_RAW = re.compile("[\u2028\u2029\ufeff\ufffe\uffff]")
_REPORT_ORDER = ("at", "by", "unit", "do")
_FLOW_WIDTH = 100  # a flow item longer than this is written in block style
_MAX_KEY = 1000  # YAML implicit keys must be shorter than 1024 characters


class UnwritableText(PbemError, ValueError):
    """Text the strict loader would refuse (a control character): a usage error with rule
    `text.control-character`, raised before any file is written, so no command crashes on a player's text."""


def dump_report(entries: list[dict[str, Any]]) -> str:
    """A report file: `entries:` then one flow-mapping line per entry, keys ordered at, by, unit, do, others."""
    if not entries:
        return "entries: []\n"
    lines = ["entries:"]
    for entry in entries:
        if not isinstance(entry, dict):
            raise TypeError(f"a report entry must be a mapping, got {entry!r}")
        ordered = [k for k in _REPORT_ORDER if k in entry] + [k for k in entry if k not in _REPORT_ORDER]
        items = ", ".join(f"{_key(k)}: {_entry_value(k, entry[k])}" for k in ordered)
        lines.append(f"  - {{{items}}}")
    return "\n".join(lines) + "\n"


def _entry_value(key: str, value: Any) -> str:
    # times are always quoted: "1.3.move" must not look like a number to any reader, and all look alike
    if key == "at" and isinstance(value, str):
        return _string(value, force=True)
    return _flow(value)


def dump_mapping(data: dict[str, Any]) -> str:
    """A block-style YAML document for `data`, keys in the given order; small mappings in lists on one line."""
    if not isinstance(data, dict):
        raise TypeError(f"dump_mapping needs a mapping, got {type(data).__name__}")
    if not data:
        return "{}\n"
    return "\n".join(_block_mapping(data, 0)) + "\n"


def dump_flow(value: Any) -> str:
    """One value as a one-line YAML flow node (`{id: fed, key: "ssh-ed25519 …"}`), as in report lines."""
    return _flow(value)


def _block_mapping(data: dict[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for key, value in data.items():
        head = f"{pad}{_key(key)}:"
        if isinstance(value, dict) and value:
            lines.append(head)
            lines.extend(_block_mapping(value, indent + 2))
        elif isinstance(value, list) and value:
            flat = _flow(value)
            if not any(isinstance(v, (dict, list)) for v in value) and len(head) + 1 + len(flat) <= _FLOW_WIDTH:
                lines.append(f"{head} {flat}")
            else:
                lines.append(head)
                lines.extend(_block_sequence(value, indent + 2))
        else:
            lines.append(f"{head} {_flow(value)}")
    return lines


def _block_sequence(items: list[Any], indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for item in items:
        if isinstance(item, (dict, list)) and item:
            flat = _flow(item)
            if len(flat) <= _FLOW_WIDTH:
                lines.append(f"{pad}- {flat}")
                continue
            # YAML's compact form: the first line of the nested block goes right after "- "
            nested = _block_mapping(item, indent + 2) if isinstance(item, dict) else _block_sequence(item, indent + 2)
            lines.append(f"{pad}- {nested[0][indent + 2:]}")
            lines.extend(nested[1:])
        else:
            lines.append(f"{pad}- {_flow(item)}")
    return lines


def _flow(value: Any) -> str:
    """One value on one line, in flow style."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write {value!r}: only finite numbers are allowed")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as YAML")


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"mapping keys must be strings, got {key!r}")
    text = _string(key)
    if len(text) > _MAX_KEY:
        raise ValueError(f"mapping key too long to write ({len(key)} characters)")
    return text


def _string(text: str, force: bool = False) -> str:
    """`text` plain if that is unambiguous, else double-quoted with JSON escapes (valid YAML escapes)."""
    if not force and _PLAIN.match(text) and text.lower() not in _RESERVED:
        return text
    bad = _UNWRITABLE.search(text)
    if bad:
        raise UnwritableText("text.control-character", f"cannot write the control character "
                             f"U+{ord(bad.group()):04X} in {text[:40]!r}", hint="write plain text")
    quoted = json.dumps(text, ensure_ascii=False)
    return _ESCAPE_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
