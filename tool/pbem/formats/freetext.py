"""Free text a player writes for the others to read is data printed in terminals (DESIGN §9): it is refused
before anything is done when it holds a control character a terminal would obey."""

from __future__ import annotations

from typing import Any

from pbem.errors import PbemError
from pbem.text import first_control, terminal


def check_text(text: str, what: str, *, lines: bool = True) -> str:
    """Free text a player writes for the others to read (a dice purpose, a concern, press, a reason) is data
    printed in terminals (DESIGN §9): a control character (ESC, carriage return, C1, a bidi override, a line
    separator) is refused before anything is done (rule `text.control-character`, a usage error); with `lines`
    newlines and tabs are fine. The schemas refuse the same in a file written by hand. Returns `text`."""
    bad = first_control(text, lines=lines)
    if bad is not None:
        raise PbemError("text.control-character", f"{what} holds the control character U+{ord(bad):04X} "
                        f"at {text.index(bad) + 1}: {terminal(text[:60])}", hint="write plain text")
    return text


def check_texts(value: Any, what: str) -> None:
    """`check_text` on every string inside `value` (a message's mapping, lists, keys too)."""
    if isinstance(value, str):
        check_text(value, what)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_texts(key, what)
            check_texts(item, what)
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_texts(item, what)
