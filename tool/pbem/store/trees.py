"""Follow a game's tree from commit to commit, reading only the folders that changed (DESIGN §11).

A commit usually changes three files in two folders. `TreeWalker.advance` reads the raw tree objects of the
folders whose ids changed and parses only the entries between what they share with the listing before (their
common head and tail, compared as bytes), so it costs what changed, not the size of the game. Raw parsing is strict: anything not in git's canonical layout (an unexpected mode, a
name twice, an object of the wrong type, trailing bytes) hands over to the full, strict reader
`GameRepo.tree_files`, which names the problem or reads what libgit2 normalises.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import NamedTuple

from pbem.formats.spans import common_prefix, common_suffix
from pbem.store.repo import MAX_DEPTH, GameRepo

_MODES = {b"100644": 0o100644, b"40000": 0o40000, b"100755": 0o100755, b"120000": 0o120000,
          b"160000": 0o160000}
_ENTRY = re.compile(rb"(100644|40000|100755|120000|160000) ([^\0/]+)\0(.{20})", re.S)
_ALL = re.compile(rb"(?:(?:100644|40000|100755|120000|160000) [^\0/]+\0.{20})*\Z", re.S)
_TREE = b"40000"
# A folder listing longer than this is read in the entries that changed (`_relisted`); a shorter one is parsed
# whole, which costs less than finding what changed (some 40 bytes an entry: the game's root folder is about 300)
RELIST_BYTES = 512
_OBJ_TREE = 2

Files = dict[str, tuple[str, int]]
Listing = dict[bytes, tuple[bytes, bytes]]  # name -> (mode, id)


class _Folder(NamedTuple):
    """A folder as last read: its tree id, its listing, the raw tree object and where each entry starts in it
    (only for a folder read in its changes next time: longer than RELIST_BYTES)."""

    oid: bytes
    listing: Listing
    raw: bytes
    starts: list[int]


class _Irregular(Exception):
    """Not a tree this walker reads; the strict reader decides."""


class TreeWalker:
    """The files of the last tree read, and each folder's listing, to compare the next tree with."""

    def __init__(self, repo: GameRepo) -> None:
        self.repo = repo
        self.files: Files = {}
        self._folders: dict[str, _Folder] = {}

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

    def _folder(self, folders: dict[str, _Folder], prefix: str, oid: bytes, depth: int,
                changes: dict[str, tuple[str, int] | None]) -> None:
        known = folders.get(prefix)
        if known is not None and known.oid == oid:
            return
        folder, gone, came = self._listing(oid, known)
        folders[prefix] = folder
        listing = folder.listing
        if known is None:
            self._forget(folders, prefix, changes)  # a new or re-read folder: whatever was under it may be gone
            old: Listing = {}
        else:
            old = known.listing
        for name in gone:
            self._gone(folders, prefix + _text(name), old[name][0], changes)
        for name, (mode, entry) in came:
            path = prefix + _text(name)
            if name in old and (old[name][0] == _TREE) != (mode == _TREE):
                self._gone(folders, path, old[name][0], changes)
            if mode == _TREE and depth < MAX_DEPTH:
                self._folder(folders, path + "/", entry, depth + 1, changes)
            elif mode == _TREE:
                changes[path + "/"] = (entry.hex(), 0o40000)  # deeper than any game folder: listed, never read
            else:
                changes[path] = (entry.hex(), _MODES[mode])

    def _gone(self, folders: dict[str, _Folder], path: str, mode: bytes,
              changes: dict[str, tuple[str, int] | None]) -> None:
        if mode != _TREE:
            changes[path] = None
            return
        for known in [p for p in folders if p.startswith(path + "/")]:
            del folders[known]
        self._forget(folders, path + "/", changes)
        changes[path + "/"] = None

    def _forget(self, folders: dict[str, _Folder], prefix: str,
                changes: dict[str, tuple[str, int] | None]) -> None:
        for path in self.files:
            if path.startswith(prefix):
                changes.setdefault(path, None)

    def _listing(self, oid: bytes, known: _Folder | None) -> tuple[_Folder, set[bytes], set]:
        """The folder `oid`, the names gone since `known` (its version before) and the (name, (mode, id)) that
        are new or changed."""
        try:
            kind, raw = self.repo.repo.odb.read(oid.hex())
        except (KeyError, ValueError):
            raise _Irregular from None
        if kind != _OBJ_TREE:
            raise _Irregular
        if known is not None and len(known.raw) > RELIST_BYTES:
            return _relisted(oid, known, raw)
        if not _ALL.match(raw):
            raise _Irregular
        found = _ENTRY.findall(raw)
        listing = {name: (mode, entry) for mode, name, entry in found}
        if len(listing) != len(found):
            raise _Irregular  # a name twice: git reads the first, a dict keeps the last
        old = known.listing if known is not None else {}
        folder = _Folder(oid, listing, raw, _starts(found, 0) if len(raw) > RELIST_BYTES else [])
        return folder, old.keys() - listing.keys(), listing.items() - old.items()  # set differences in C


def _starts(found: list[tuple[bytes, bytes, bytes]], at: int) -> list[int]:
    """Where each of the entries `found` (parsed from offset `at`, one after the other) starts."""
    out = []
    for mode, name, _ in found:
        out.append(at)
        at += len(mode) + len(name) + 22  # mode, space, name, NUL, 20 bytes of id
    return out


def _relisted(oid: bytes, known: _Folder, raw: bytes) -> tuple[_Folder, set[bytes], set]:
    """The folder `raw`, read as `known` with the entries between their common head and tail replaced: only
    those are parsed. Parsing a tree is deterministic from an entry's start: the head before the first entry
    that differs and the tail from the first whole entry after the difference parse as they did, so if the
    middle parses as whole entries, the whole is what a full parse gives; anything else is irregular."""
    old, starts = known.raw, known.starts
    head = common_prefix(old, raw)
    first = max(bisect_right(starts, head) - 1, 0)  # the entry the first differing byte belongs to
    begin = starts[first]
    tail = common_suffix(old, raw, min(len(old), len(raw)) - begin)
    last = bisect_left(starts, len(old) - tail)  # the first old entry wholly in the common tail
    end_old = starts[last] if last < len(starts) else len(old)
    end_new = len(raw) - (len(old) - end_old)
    if end_new < begin or not _ALL.match(raw, begin, end_new):
        raise _Irregular
    was = _ENTRY.findall(old, begin, end_old)
    now = _ENTRY.findall(raw, begin, end_new)
    listing = dict(known.listing)
    for _, name, _ in was:
        del listing[name]
    for mode, name, entry in now:
        if name in listing:
            raise _Irregular  # a name twice (see the full parse)
        listing[name] = (mode, entry)
    middle = _starts(now, begin)
    if len(now) == len(was) and middle == starts[first:last] and end_new == end_old:
        moved = starts  # entries changed in place (a blob id): every entry starts where it did
    else:
        shift = end_new - end_old
        moved = starts[:first] + middle + [s + shift for s in starts[last:]]
    before = {name: (mode, entry) for mode, name, entry in was}
    after = {name: (mode, entry) for mode, name, entry in now}
    return (_Folder(oid, listing, raw, moved), before.keys() - after.keys(), after.items() - before.items())


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="surrogateescape")
