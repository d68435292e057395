"""What the verifier knows after a commit, kept under .git/pbem/ so that verifying one new commit on top of a
long game costs one commit, not the whole history (DESIGN §11).

Only a state reached by a history with no finding is kept, keyed by its commit id, and the key folds in
everything that could change a verdict: the pbem version, and the size and modification time of every shipped
schema and of pbem's own code (so a changed checkout never trusts an old verdict). Anything
unreadable, from another version, or not matching is ignored, and the verifier falls back to the full walk.
The folder holds at most a few entries; a new one pushes the oldest out. verify.history renews the kept state
only once judging on top of it took longer than keeping one (SAVE_AFTER_SECONDS).
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import pbem
from pbem.formats import resources

KEEP = 4  # entries kept: the tips a player or a server verified last
FREEZE_BYTES = 1 << 20  # a kept state this large (a game of some thousand commits) is frozen once loaded (`load`)


@lru_cache(maxsize=1)
def _fingerprint() -> str:
    """pbem's version, and the name, size and modification time of every shipped schema and of pbem's own code:
    any checkout or install that changes one of them rewrites it (a stat each, not a read: some 8 ms of one new
    commit)."""
    digest = hashlib.sha256(pbem.__version__.encode())
    resources.fold_file_stats(digest, resources.schemas_dir(), ".json")
    resources.fold_file_stats(digest, Path(pbem.__file__).parent, ".py")
    return digest.hexdigest()[:20]


def _folder(git_dir: str | os.PathLike[str]) -> Path:
    return Path(git_dir) / "pbem" / "verified" / _fingerprint()


def load(git_dir: str | os.PathLike[str], oid: str) -> tuple[Any, Mapping[str, tuple[str, int]], Any, int] | None:
    """(Verified, tree files, the game as read, turns from the root) after commit `oid`, if a clean
    verification of it was kept."""
    path = _folder(git_dir) / f"{oid}.pickle"
    try:
        with path.open("rb") as handle:
            # A long game's state is some hundred thousand objects that live as long as the command: once loaded
            # they are left out of the garbage collector's passes (gc.freeze), some 20 ms of one new commit.
            # What is garbage before it goes first, so that freezing keeps none of it.
            long = os.fstat(handle.fileno()).st_size >= FREEZE_BYTES
            if long:
                gc.collect()
            enabled = gc.isenabled()
            gc.disable()  # tens of thousands of new objects, none of them garbage: a third faster
            try:
                stored_oid, verified, files, read, count = pickle.load(handle)  # noqa: S301 - our own file
            finally:
                if long:
                    gc.freeze()
                if enabled:
                    gc.enable()
    except Exception:  # noqa: BLE001 - a missing or broken cache is no cache
        return None
    return (verified, files, read, count) if stored_oid == oid else None


def has(git_dir: str | os.PathLike[str], oid: str) -> bool:
    return oid in kept(git_dir)


def kept(git_dir: str | os.PathLike[str]) -> frozenset[str]:
    """The commits with a kept state (a few at most): looked up once per walk, not once per commit."""
    try:
        return frozenset(name[:-len(".pickle")] for name in os.listdir(_folder(git_dir)) if name.endswith(".pickle"))
    except OSError:
        return frozenset()


def save(git_dir: str | os.PathLike[str], oid: str, verified: Any, files: Mapping[str, tuple[str, int]],
         read: Any, count: int) -> None:
    """Keep the state after a clean `oid`; best effort (a read-only repository simply keeps nothing)."""
    folder = _folder(git_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temp = folder / f".{oid}.{os.getpid()}.tmp"
        with temp.open("wb") as handle:
            # the entries' repeated strings are one object each (files/lines.py `_shared`): pickle's memo writes
            # each once, and loading makes them once
            pickle.dump((oid, verified, dict(files), read, count), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, folder / f"{oid}.pickle")
        kept = sorted(folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            old.unlink(missing_ok=True)
    except (OSError, pickle.PicklingError, RecursionError, TypeError, AttributeError):
        return
