"""One pbem at a time in a clone: `pbem watch` and the commands a player types share one working tree.

Every pbem command reads HEAD, builds a commit on it and moves the branch and the working tree to it (a `git
reset --hard`); `pbem watch` fetches and fast-forwards, commits reveals and replays commits when it pushes.
Two of them interleaved lose work: a `pbem orders` made on the HEAD the watch is just moving away from reads
one commit's files and judges them against another's (another power's press "changed by me"), or its commit is
replaced by the watch's reset. So each takes an advisory lock on `.git/pbem/lock` (flock: released by the
kernel when the process ends, however it ends): a command for as long as it runs, the watch for one round at
a time. The other one waits; after WAIT seconds it gives up with one line (rule `clone.busy`, exit 2).

Plain git commands do not take it: a player who runs `git` by hand while his watch runs takes that risk.
Where the platform has no flock (Windows), nothing is locked.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from pbem.errors import USAGE, PbemError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, nothing is serialised
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = os.path.join("pbem", "lock")  # beside the kept states: pbem's own corner of .git
WAIT = 120.0  # seconds a command waits for a watch round (or another command) before it gives up
POLL = 0.05  # seconds between tries while waiting

_held: dict[str, list[int]] = {}  # git dir -> [file descriptor, depth]: re-entrant within one process


def acquire(git_dir: str | Path, wait: float = WAIT) -> None:
    """Take the clone's lock, waiting up to `wait` seconds; re-entrant within one process. Rule `clone.busy`
    (exit 2) when another process kept it that long."""
    key = os.path.realpath(git_dir)
    if fcntl is None:
        return
    if key in _held:
        _held[key][1] += 1
        return
    try:
        os.makedirs(os.path.join(key, os.path.dirname(LOCK_FILE)), exist_ok=True)
        fd = os.open(os.path.join(key, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return  # a clone we may not write to (read-only): nothing here can commit, nothing to serialise
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise PbemError("clone.busy", f"another pbem (your `pbem watch`?) has been working in this clone "
                                f"for {wait:.0f} s; try again when it is done", exit_code=USAGE) from None
            time.sleep(POLL)
    _held[key] = [fd, 1]


def release(git_dir: str | Path) -> None:
    """Give back one level of the lock; the last one unlocks."""
    key = os.path.realpath(git_dir)
    entry = _held.get(key)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] <= 0:
        del _held[key]
        os.close(entry[0])  # closing the descriptor releases the flock


def release_all() -> None:
    """Give back every lock this process holds (a command's end)."""
    for key in list(_held):
        os.close(_held.pop(key)[0])


@contextmanager
def held(git_dir: str | Path, wait: float = WAIT) -> Iterator[None]:
    acquire(git_dir, wait)
    try:
        yield
    finally:
        release(git_dir)
