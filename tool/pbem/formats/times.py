"""Times and durations in pbem's files, read strictly (DESIGN §4.8): a real calendar time or a finding, never a
crash later.

The schemas check the shape (`pbem/common/1#/$defs/pause`, `.../duration`); a pattern cannot know that February
has no 30th day or that 2027 is no leap year, so every reader of a time goes through these functions, which
refuse what the calendar does not have with rule `time.invalid`. RFC 3339 is the reference: `T24:00` and a
leap second `:60` are refused too (Python's calendar has neither, and no deadline needs them).

Pure: no clock, no files.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from pbem.errors import ILLEGAL, PbemError

# game.yaml's `paused_until`: a UTC date (its midnight) or a UTC minute
PAUSE_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})Z)?\Z")
# an RFC 3339 date-time (the gate's record, GitHub's timestamps, --now): seconds, optional fraction, Z or offset
INSTANT_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?"
                        r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))\Z")
# game.yaml's `deadline`: whole hours or days
DURATION_RE = re.compile(r"([1-9][0-9]{0,4})([hd])\Z")


def _bad(what: str, text: object, file: str | None, line: int | None, expected: str) -> PbemError:
    shown = repr(text)[:60]
    return PbemError("time.invalid", f"{what} {shown} is no real time: {expected}", file=file, line=line,
                     exit_code=ILLEGAL)


def _calendar(parts: tuple[str, ...], what: str, text: object, file: str | None, line: int | None,
              expected: str) -> datetime:
    try:
        return datetime(*(int(p) for p in parts), tzinfo=timezone.utc)  # type: ignore[arg-type, misc]
    except ValueError as exc:  # February 30, month 13, hour 24, year 0
        raise _bad(what, text, file, line, f"{exc}; {expected}") from None


def parse_pause(text: object, *, file: str | None = None, line: int | None = None,
                what: str = "paused_until") -> datetime:
    """`2027-01-10` (that day's midnight, UTC) or `2027-01-10T18:00Z` as an aware UTC datetime."""
    expected = "write YYYY-MM-DD or YYYY-MM-DDTHH:MMZ (UTC), a day the calendar has"
    m = PAUSE_RE.match(text) if isinstance(text, str) else None
    if m is None:
        raise _bad(what, text, file, line, expected)
    return _calendar(tuple(p for p in m.groups() if p is not None), what, text, file, line, expected)


def parse_instant(text: object, *, file: str | None = None, line: int | None = None,
                  what: str = "time") -> datetime:
    """An RFC 3339 date-time (`2026-12-01T21:05:07Z`, `…+02:00`, with or without fraction) as aware UTC."""
    expected = "write an RFC 3339 time such as 2026-12-01T21:05:07Z"
    m = INSTANT_RE.match(text) if isinstance(text, str) else None
    if m is None:
        raise _bad(what, text, file, line, expected)
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = m.groups()
    when = _calendar((year, month, day, hour, minute, second), what, text, file, line, expected)
    if fraction:
        when += timedelta(microseconds=int(fraction[1:].ljust(6, "0")[:6]))
    if not zulu:
        if int(off_h) > 23 or int(off_m) > 59:
            raise _bad(what, text, file, line, expected)
        offset = timedelta(hours=int(off_h), minutes=int(off_m))
        when = when - offset if sign == "+" else when + offset
    return when


def format_instant(when: datetime) -> str:
    """The gate record's spelling: RFC 3339 in UTC to the second, `2026-12-01T21:05:07Z`."""
    u = when.astimezone(timezone.utc)  # by hand: strftime's %Y does not pad years before 1000
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


def parse_duration(text: object, *, file: str | None = None, line: int | None = None,
                   what: str = "deadline") -> timedelta:
    """`72h` or `3d` (at most five digits) as a timedelta."""
    m = DURATION_RE.match(text) if isinstance(text, str) else None
    if m is None:
        raise _bad(what, text, file, line, "write whole hours or days, e.g. 72h or 3d")
    n = int(m.group(1))
    return timedelta(hours=n) if m.group(2) == "h" else timedelta(days=n)


def later(when: datetime, span: timedelta) -> datetime:
    """`when + span`, or the last representable time where the sum leaves the calendar (a pause in year 9999)."""
    try:
        return when + span
    except OverflowError:
        return datetime.max.replace(tzinfo=timezone.utc)
