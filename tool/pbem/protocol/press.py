"""Press files (DESIGN §2 press/<author>.yaml): public messages, append-only, each seat's in a file of its own, each
message dated with the step the game is at when it is sent. Any seat may post at any time, without holding
control; messages are publicly recognised in the order of the commits that added them (§7.2), never by file name.
Games from before per-author press kept every author's messages in press/global.yaml: it stays valid, each
message appended there by its own author."""

from __future__ import annotations

from typing import Collection, Mapping

from pbem.errors import Finding
from pbem.protocol.ids import press_author
from pbem.protocol.model import PressFile

LEGACY = "press/global.yaml"


def press_findings(before: Mapping[str, PressFile], after: Mapping[str, PressFile], committer: str,
                   now: str | None, seats: Collection[str]) -> list[Finding]:
    """DESIGN §2: a press file is press/<seat>.yaml of a seat in game.yaml (else tree.unexpected-path), changed
    only by that seat's key (ownership.foreign-press; the dice escrow holds no seat and posts nothing), only by appending (press.changed); each appended message
    is in the committer's own name (press.foreign) and dated `now`, the firm point when sent (press.bad-time)."""
    out: list[Finding] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        added = new.added_since(old) if new is not None else (None if old is not None and old.messages else ())
        if new is old or added == ():
            continue  # no message added, changed or removed
        author = press_author(path)
        if committer not in seats:  # the dice escrow may settle dice out of turn, never talk
            out.append(Finding("ownership.foreign-press", f"{committer} holds no seat: only seats post press",
                               file=path))
            continue
        if author not in seats and path != LEGACY:
            out.append(Finding("tree.unexpected-path", f"{path} is no press file of this game: each seat posts in "
                               f"press/<seat>.yaml, and no seat is called {author!r}", file=path))
            continue
        if author in seats and author != committer:
            out.append(Finding("ownership.foreign-press", f"{committer} changed {path}, which only {author} "
                               "writes (post in your own press file)", file=path))
            continue
        if added is None:
            out.append(Finding("press.changed", f"{path} is append-only: sent messages cannot change or go",
                               file=path))
            continue
        for message in added:
            if message.by != committer:
                out.append(Finding("press.foreign", f"{committer} posted a message in {message.by}'s name",
                                   file=path, line=message.line))
            if message.at != now:
                out.append(Finding("press.bad-time", f"a message sent now must be dated {now}, got {message.at}",
                                   file=path, line=message.line))
    return out
