"""Press files (DESIGN §2 press/<channel>.yaml): public messages, append-only, each by its author, dated with
the step the game is at when it is sent. Any player may post at any time, without holding control; messages
are publicly recognised in the order they stand (history order)."""

from __future__ import annotations

from typing import Mapping

from pbem.errors import Finding
from pbem.protocol.model import Message


def press_findings(before: Mapping[str, tuple[Message, ...]], after: Mapping[str, tuple[Message, ...]],
                   committer: str, now: str | None) -> list[Finding]:
    """Only appended messages, only by the committer, each dated `now` (the firm point when sent)."""
    out: list[Finding] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path, ()), after.get(path, ())
        if [m.body for m in new[: len(old)]] != [m.body for m in old]:
            out.append(Finding("press.changed", f"{path} is append-only: sent messages cannot change or go",
                               file=path))
            continue
        for message in new[len(old):]:
            if message.by != committer:
                out.append(Finding("press.foreign", f"{committer} posted a message in {message.by}'s name",
                                   file=path, line=message.line))
            if message.at != now:
                out.append(Finding("press.bad-time", f"a message sent now must be dated {now}, got {message.at}",
                                   file=path, line=message.line))
    return out
