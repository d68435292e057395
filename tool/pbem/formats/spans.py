"""Where two versions of a file differ: their common head and tail, found by halving, each comparison a memcmp.

A commit usually changes a few lines of a report, or one entry of a tree listing: what lies between the common
head and tail is all that needs reading again (files/lines.py, store/trees.py; DESIGN §9).
"""

from __future__ import annotations


def common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of `a` and `b`, by halving (each comparison a memcmp)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 32:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    while low < high and a[low] == b[low]:
        low += 1
    return low


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """The length of the longest common suffix of `a` and `b`, at most `limit`."""
    low, high = 0, limit
    if high == 0 or a[len(a) - high:] == b[len(b) - high:]:
        return high
    while high - low > 32:
        middle = (low + high) // 2
        if a[len(a) - middle:len(a) - low] == b[len(b) - middle:len(b) - low]:
            low = middle
        else:
            high = middle
    while low < high and a[len(a) - low - 1] == b[len(b) - low - 1]:
        low += 1
    return low
