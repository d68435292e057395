"""The one serialiser for everything hashed or signed (STYLE 2): canonical JSON bytes.

Sorted keys, no whitespace, UTF-8 without escaping non-ASCII, no NaN or infinities, string keys only. Keys sort
by Python code-point order (not RFC 8785's UTF-16 order); pbem both writes and checks, so only stability matters.
"""

from __future__ import annotations

import json
from typing import Any

_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, check_circular=True
)


def dumps(obj: Any) -> bytes:
    """Canonical JSON of plain data (dict with str keys, list, str, int, float, bool, None).

    Raises ValueError for NaN/infinity or strings that are not valid Unicode, TypeError for other types or
    non-string keys (json would silently turn `1` into `"1"` and could emit a key twice).
    """
    _check_keys(obj)
    return _ENCODER.encode(obj).encode("utf-8")


def _check_keys(obj: Any) -> None:
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if not isinstance(key, str):
                    raise TypeError(f"canonical JSON needs string keys, got {key!r}")
                stack.append(value)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
