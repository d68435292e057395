"""Follow a game's tree from commit to commit, reading only the folders that changed (issue 7).

A commit usually changes three files in two folders. `TreeWalker.advance` parses the raw tree objects of the
folders whose ids changed, compares their entries with those of the tree before, and so costs what changed,
not the size of the game. Raw parsing is strict: anything not in git's canonical layout (an unexpected mode, a
name twice, an object of the wrong type, trailing bytes) hands over to the full, strict reader
`GameRepo.tree_files`, which names the problem or reads what libgit2 normalises.
"""

from __future__ import annotations

import re

from pbem.store.repo import MAX_DEPTH, GameRepo

_MODES = {b"100644": 0o100644, b"40000": 0o40000, b"100755": 0o100755, b"120000": 0o120000,
          b"160000": 0o160000}
_ENTRY = re.compile(rb"(100644|40000|100755|120000|160000) ([^\0/]+)\0(.{20})", re.S)
_ALL = re.compile(rb"(?:(?:100644|40000|100755|120000|160000) [^\0/]+\0.{20})*\Z", re.S)
_TREE = b"40000"
_OBJ_TREE = 2

Files = dict[str, tuple[str, int]]
Listing = dict[bytes, tuple[bytes, bytes]]  # name -> (mode, id)


class _Irregular(Exception):
    """Not a tree this walker reads; the strict reader decides."""


class TreeWalker:
    """The files of the last tree read, and each folder's listing, to compare the next tree with."""

    def __init__(self, repo: GameRepo) -> None:
        self.repo = repo
        self.files: Files = {}
        self._folders: dict[str, tuple[bytes, Listing]] = {}

    def advance(self, commit_oid: str, tree_oid: str) -> tuple[Files, set[str]]:
        """The files of the commit's tree (path -> (blob id, mode)) and the paths that differ from the last
        tree read. A PbemError from the strict reader leaves the walker at the last tree read."""
        folders = dict(self._folders)
        changes: dict[str, tuple[str, int] | None] = {}
        try:
            self._folder(folders, "", bytes.fromhex(tree_oid), 0, changes)
        except _Irregular:
            files = self.repo.tree_files(commit_oid)
            changed = {p for p in set(files) | set(self.files) if files.get(p) != self.files.get(p)}
            self.files, self._folders = dict(files), {}  # read every folder afresh next time
            return files, changed
        files = dict(self.files)
        changed = set()
        for path, value in changes.items():
            if files.get(path) == value:
                continue
            changed.add(path)
            if value is None:
                del files[path]
            else:
                files[path] = value
        self.files, self._folders = files, folders
        return files, changed

    def jump(self, files: Files) -> None:
        """Stand at a tree whose files are known without having listed its folders (they are listed afresh,
        against `files`, at the next `advance`)."""
        self.files, self._folders = files, {}

    def _folder(self, folders: dict[str, tuple[bytes, Listing]], prefix: str, oid: bytes, depth: int,
                changes: dict[str, tuple[str, int] | None]) -> None:
        known = folders.get(prefix)
        if known is not None and known[0] == oid:
            return
        listing = self._listing(oid)
        folders[prefix] = (oid, listing)
        if known is None:
            self._forget(folders, prefix, changes)  # a new or re-read folder: whatever was under it may be gone
            old: Listing = {}
        else:
            old = known[1]
        for name in old.keys() - listing.keys():
            self._gone(folders, prefix + _text(name), old[name][0], changes)
        for name, (mode, entry) in listing.items() - old.items():  # only what changed (set difference in C)
            path = prefix + _text(name)
            if name in old and (old[name][0] == _TREE) != (mode == _TREE):
                self._gone(folders, path, old[name][0], changes)
            if mode == _TREE and depth < MAX_DEPTH:
                self._folder(folders, path + "/", entry, depth + 1, changes)
            elif mode == _TREE:
                changes[path + "/"] = (entry.hex(), 0o40000)  # deeper than any game folder: listed, never read
            else:
                changes[path] = (entry.hex(), _MODES[mode])

    def _gone(self, folders: dict[str, tuple[bytes, Listing]], path: str, mode: bytes,
              changes: dict[str, tuple[str, int] | None]) -> None:
        if mode != _TREE:
            changes[path] = None
            return
        for known in [p for p in folders if p.startswith(path + "/")]:
            del folders[known]
        self._forget(folders, path + "/", changes)
        changes[path + "/"] = None

    def _forget(self, folders: dict[str, tuple[bytes, Listing]], prefix: str,
                changes: dict[str, tuple[str, int] | None]) -> None:
        for path in self.files:
            if path.startswith(prefix):
                changes.setdefault(path, None)

    def _listing(self, oid: bytes) -> Listing:
        try:
            kind, raw = self.repo.repo.odb.read(oid.hex())
        except (KeyError, ValueError):
            raise _Irregular from None
        if kind != _OBJ_TREE or not _ALL.match(raw):
            raise _Irregular
        found = _ENTRY.findall(raw)
        listing = {name: (mode, entry) for mode, name, entry in found}
        if len(listing) != len(found):
            raise _Irregular  # a name twice: git reads the first, a dict keeps the last
        return listing


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="surrogateescape")
