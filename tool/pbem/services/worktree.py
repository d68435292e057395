"""The game files of a player's working tree, read at the cost of what changed since HEAD.

A player's command (`pbem yield`, `check`, `status`, …) needs the working tree as a file map. Reading every file
of it costs what the game holds; git already knows which files may differ from HEAD: those its status lists
(edited, new, deleted, staged; ignored files too, which pbem commits all the same). Only those are read from
disk; every other game file is HEAD's blob. `plain_files` is the reference reader (every file, read), and the
test suite checks the fast one against it on every use (PBEM_CROSSCHECK=1).

git trusts a file whose stat (size, times, inode) is what its index noted. A file written in the same second
as the index, or after it, may hold an edit that stat does not show (git's "racily clean" files); such files
are read too, whatever git says. A file edited later with its size and mtime kept still changes its ctime,
which git compares (core.trustctime, on by default).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from pbem.store.git import pygit2

from pbem.store.repo import GameRepo
from pbem.files.layout import is_game_path

RACY_NS = 2_000_000_000  # files this close to the index's own write time are read whatever their stat says


def plain_files(root: Path) -> dict[str, bytes]:
    """Every game file of the working tree, read (other files are ignored and never committed): the reference."""
    files: dict[str, bytes] = {}
    top = str(root)
    for folder, dirs, names in os.walk(top):
        if folder == top and ".git" in dirs:
            dirs.remove(".git")  # git's own folder holds every object: never walked (it grows with history)
        for name in names:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, top).replace(os.sep, "/")
            if is_game_path(rel) and not os.path.islink(path) and os.path.isfile(path):
                with open(path, "rb") as handle:
                    files[rel] = handle.read()
    return files


def changed_files(repo: GameRepo, root: Path, head: Mapping[str, bytes]) -> dict[str, bytes]:
    """The same map as `plain_files`, reading from disk only the files git's status lists and the racily clean
    ones; every other game file of `head` (HEAD's files) is taken as it is there."""
    suspects = _suspects(repo, root, head)
    if suspects is None:
        return plain_files(root)
    files = {path: data for path, data in head.items() if path not in suspects and is_game_path(path)}
    for path in sorted(suspects):
        data = _regular_file(root, path) if is_game_path(path) else None
        if data is not None:
            files[path] = data
    return files


def _suspects(repo: GameRepo, root: Path, head: Mapping[str, bytes]) -> set[str] | None:
    """The paths that may differ from `head`: git's status, folders it lists whole walked; None when git cannot
    tell (then everything is read)."""
    try:
        status = repo.repo.status(untracked_files="all", ignored=True)
        index_ns = os.stat(os.path.join(repo.repo.path, "index")).st_mtime_ns
    except (pygit2.GitError, OSError, UnicodeError, ValueError):
        return None
    suspects: set[str] = set()
    for path, flags in status.items():
        if path.endswith("/"):  # an ignored folder, listed whole: whatever game files it holds
            suspects.update(_walk(root, path))
        elif flags != pygit2.enums.FileStatus.CURRENT:
            suspects.add(path)
    for path in head:
        if path in suspects:
            continue
        try:
            mtime = os.lstat(root / path).st_mtime_ns
        except OSError:
            suspects.add(path)
            continue
        if mtime >= index_ns - RACY_NS:
            suspects.add(path)
    return suspects


def _walk(root: Path, folder: str) -> set[str]:
    return {rel for rel in (p.relative_to(root).as_posix() for p in (root / folder).rglob("*")) if is_game_path(rel)}


def _regular_file(root: Path, rel: str) -> bytes | None:
    """The bytes of a regular file at `rel`, or None when there is none, it is a link, or a folder on its way is
    one (the plain reader never follows links either)."""
    path = root / rel
    parent = path.parent
    while parent != root:
        if parent.is_symlink():
            return None
        parent = parent.parent
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None
