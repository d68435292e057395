"""The file kinds of a game repository (DESIGN §2), one row each: the path it is found at, how it is read, the
key its parsed value is cached under, the collection of the game it fills and what it weighs in the cache.
`files.game` reads a tree, a commit's changes and a working tree by looping over this table; game.yaml and
status.yaml, which every other file is read against, are read by name before it.

Adding a file kind: its path pattern in `files.layout.KIND_PATHS`, its row here, and its tests."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from pbem.errors import PbemError
from pbem.files import layout, lines, readers
from pbem.files.parsecache import ParseCache
from pbem.protocol.game import Manifest
from pbem.protocol.model import Entry, ReportFile
from pbem.rulesets.base import Ruleset

# what a changed file's value does in its collection: keeps its place, goes last, or the collection is put back
# into path order (the order `read_game` gives)
IN_PLACE, LAST, PATH_ORDER = "in place", "last", "path order"


@dataclass(frozen=True)
class FileKind:
    """One file kind. `read(data, path, ruleset, line cache, value before)`: the value one commit back is what
    the line reader reads on top of (report and press files); the others ignore it. `key(match, value)`: the
    value's key in its collection, from its path (`by_path`) or from the value (a dice batch's or secret's own
    id). `admit`: raises when the path itself is not allowed by game.yaml (a players file of nobody seated);
    `seated`: raises when the value names somebody not seated (only a kind whose files name players)."""

    name: str  # the word of its cache key
    pattern: re.Pattern[str]
    field: str  # the collection of `Game` (or of its `Inputs`) the files fill
    read: Callable[[bytes, str, Ruleset, ParseCache | None, Any], Any]
    key: Callable[[re.Match[str], Any], str]
    file_of: Callable[[str, Any], str]  # the path a value of the collection (under its key) was read from
    by_path: bool = True
    order: str = IN_PLACE
    by_ruleset: bool = True  # the parsed value depends on the ruleset: the cache key holds its name
    weight: Callable[[Any], int] = lambda value: 4096  # bytes a kept value was read from, when not known
    admit: Callable[[re.Match[str], Manifest], None] | None = None
    seated: Callable[[Any, Any, tuple[str, ...], bool], None] | None = None

    def cache_key(self, oid: str, ruleset: str, path: str) -> tuple[str, ...]:
        return (oid, self.name, ruleset, path) if self.by_ruleset else (oid, self.name, path)


def _seat_named(match: re.Match[str], manifest: Manifest) -> None:
    if match.group(1) not in manifest.players:
        raise PbemError("players.unknown", f"{match.string}: no player {match.group(1)!r} in game.yaml",
                        file=match.string, exit_code=1)


def known_players(report: ReportFile | tuple[Entry, ...], players: tuple[str, ...]) -> bool:
    """Every entry is by a seated player (players.unknown)."""
    for entry in report.entries if isinstance(report, ReportFile) else report:
        if entry.by not in players:
            raise PbemError("players.unknown", f"entry by unknown player {entry.by!r}", file=entry.file,
                            line=entry.line, exit_code=1)
    return True


def _entries_seated(report: ReportFile, before: ReportFile | None, players: tuple[str, ...], since: bool) -> None:
    """The entries of `report` name seated players; with `since`, only those it changed on top of `before` are
    looked at where it was read on top of it (the rest passed at an earlier commit)."""
    changes = report.changes_since(before) if since else None
    known_players(changes[1] if changes is not None else report, players)


def _path(key: str, value: Any) -> str:
    return key


def _file(key: str, value: Any) -> str:
    return value.file  # type: ignore[no-any-return]


KINDS: tuple[FileKind, ...] = (
    FileKind("players", layout.PLAYERS_RE, "per_player",
             lambda data, path, ruleset, _lines, _before: readers.read_players(data, path, ruleset),
             lambda m, _v: m.group(1), lambda key, _v: f"players/{key}.yaml", admit=_seat_named),
    FileKind("report", layout.REPORT_RE, "files", lines.read_report, lambda m, _v: m.string, _path,
             order=PATH_ORDER, weight=lambda report: len(report.source) or 64 * len(report.entries),
             seated=_entries_seated),
    FileKind("dice", layout.DICE_RE, "batches", lambda data, path, *_: readers.read_batch(data, path),
             lambda _m, batch: batch.id, _file, by_path=False, order=LAST, by_ruleset=False),
    FileKind("secret", layout.SECRET_RE, "secrets", lambda data, path, *_: readers.read_secret(data, path),
             lambda _m, secret: secret.id, _file, by_path=False, order=LAST, by_ruleset=False),
    FileKind("press", layout.PRESS_RE, "press",
             lambda data, path, ruleset, _lines, before: lines.read_press(data, path, ruleset, before),
             lambda m, _v: m.string, _path, order=LAST),
    # keyed by its file: a file whose id differs is judged, not hidden
    FileKind("agreement", layout.AGREEMENT_RE, "agreements",
             lambda data, path, ruleset, *_: readers.read_agreement(data, path, ruleset),
             lambda m, _v: m.string, _path, order=PATH_ORDER),
)


def kind_of(path: str) -> tuple[FileKind, re.Match[str]] | None:
    """The kind of the file at `path` and its pattern's match, or None (game.yaml, status.yaml, README.md,
    the workflow, or no game path at all)."""
    for kind in KINDS:
        found = kind.pattern.match(path)
        if found:
            return kind, found
    return None
