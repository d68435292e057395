"""A game repository's files, read strictly into the protocol's data (DESIGN §2): a whole tree (`read_game`),
what one commit changed on top of the game at its parent (`read_changes`), files given by content (`read_files`).
Each loops over the file-kind table (files.kinds); parsed files are cached by blob id in a small bounded cache
(files.parsecache): most files do not change from one commit to the next, and a changed file has a new id (no
unbounded cache, DESIGN §11)."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable, Iterable, Iterator, Mapping

from pbem.errors import PbemError
from pbem.files.kinds import IN_PLACE, KINDS, PATH_ORDER, FileKind, kind_of, known_players
from pbem.files.layout import BLOB_MODE, GAME, STATUS, WORKFLOW
from pbem.files.parsecache import FILE_BYTES, ParseCache
from pbem.files.readers import read_manifest, read_status
from pbem.protocol.books import dice_book, in_commit_order, press_after, press_book, sealed_book, table_order, \
    target_book
from pbem.protocol.game import Game, Manifest
from pbem.protocol.model import Inputs, PlayerInputs, Status

_INPUTS = ("files", "per_player")  # the collections of `Inputs`; the others are `Game`'s


def _collection(game: Game, field: str) -> Mapping[str, Any]:
    return getattr(game.inputs if field in _INPUTS else game, field)  # type: ignore[no-any-return]


def seed_cache(cache: ParseCache, game: Game, files: Mapping[str, tuple[str, int]]) -> None:
    """Fill `cache` with `game`'s files as already read, under the keys `read_game` looks up, so a commit on
    top of a kept state reads only what it changed (verify.cache)."""
    manifest = game.manifest
    name = manifest.ruleset_name
    seeds: list[tuple[str, tuple[str, ...], Any, int, bool]] = [(GAME, ("game",), manifest, 4096, False)]
    if game.status is not None:
        seeds.append((STATUS, ("status",), game.status, 4096, False))
    for kind in KINDS:
        for key, value in _collection(game, kind.field).items():
            path = kind.file_of(key, value)
            seeds.append((path, kind.cache_key("", name, path)[1:], value, kind.weight(value), kind.seated is not None))
    for path, suffix, value, size, seated in seeds:
        if path in files:
            oid = files[path][0]
            cache.get((oid,) + suffix, lambda: value, FILE_BYTES * size)  # made at once, in this turn of the loop
            if seated:  # its entries were found seated when it was read
                cache.get((oid, "report-players", path) + manifest.players, lambda: True)


def read_game(
    files: Mapping[str, tuple[str, int]],
    blob: Callable[[str], bytes],
    cache: ParseCache | None = None,
) -> Game:
    """Read every game file of a tree (path -> (blob id, mode)); raises PbemError for the first bad file."""
    cache = cache or ParseCache()
    if GAME not in files:
        raise PbemError("tree.no-game", "no game.yaml here: not a game repository", file=GAME, exit_code=1)
    sizes: dict[str, int] = {}

    def read(oid: str) -> bytes:  # the blob, its size noted: what the cache weighs the parsed file by
        data = blob(oid)
        sizes[oid] = len(data)
        return data

    def parsed(key: tuple[str, ...], make: Callable[[], Any]) -> Any:
        return cache.get(key, make, lambda: FILE_BYTES * sizes.get(key[0], 0))  # type: ignore[union-attr]

    manifest = parsed((files[GAME][0], "game"), lambda: read_manifest(read(files[GAME][0])))
    ruleset = manifest.ruleset
    status = None
    if STATUS in files:
        status = parsed((files[STATUS][0], "status"), lambda: read_status(read(files[STATUS][0])))
    found: dict[str, dict[str, Any]] = {kind.field: {} for kind in KINDS}
    for path, kind, match in _admitted(sorted(files), manifest):
        oid = files[path][0]
        value = parsed(kind.cache_key(oid, manifest.ruleset_name, path),
                       lambda: kind.read(read(oid), path, ruleset, cache.lines, None))  # type: ignore[union-attr]
        found[kind.field][kind.key(match, value)] = value
        if kind.seated is not None:
            cache.get((oid, "report-players", path) + manifest.players,
                      lambda: known_players(value, manifest.players))
    book = dice_book(found["batches"], found["agreements"])
    table = table_order(manifest, found["agreements"], book)
    inputs = Inputs(table or manifest.players, found["files"], found["per_player"], book,
                    sealed_book(found["secrets"]), press_book(found["press"]), target_book(found["secrets"]),
                    ruleset.period_of, ordered_by_dice=table is not None)
    return Game(manifest, inputs, status, found["batches"], found["secrets"], found["press"], found["agreements"],
                files[WORKFLOW][0] if WORKFLOW in files else None)


def read_changes(
    base: Game,
    files: Mapping[str, tuple[str, int]],
    changed: set[str],
    blob: Callable[[str], bytes],
    cache: ParseCache | None = None,
    statuses: Mapping[str, Status] | None = None,
    players: Mapping[tuple[str, str, str], PlayerInputs] | None = None,
) -> Game:
    """The game after a commit that changed `changed`, read on top of `base`, the game as read at its parent:
    only the changed files are read, a report file in pbem's layout only in the lines that changed, and a
    changed game.yaml with the same ruleset only checked against the files read (who sits may change).
    Gives what `read_game(files)` gives, and raises what it raises for the changed files. `statuses`:
    status.yaml files read already, by blob id; `players`: players files read already, by blob id, path and
    the name of the ruleset they were read by (verify.fetch)."""
    if GAME not in files:
        return in_commit_order(base, read_game(files, blob, cache))
    manifest = base.manifest
    if GAME in changed:
        oid = files[GAME][0]
        manifest = (cache or ParseCache()).get((oid, "game"), lambda: read_manifest(blob(oid)))
        if manifest.ruleset_name != base.manifest.ruleset_name:  # other rules: every file is read against them anew
            return in_commit_order(base, read_game(files, blob, cache))
    reseated = manifest.players != base.manifest.players
    if reseated:
        _seated(manifest, files, changed, base)  # the same rules read the same files; only who sits changed
    ruleset = manifest.ruleset
    status = base.status
    if STATUS in changed:
        status = _status(files[STATUS][0], blob, cache, statuses or {}) if STATUS in files else None
    lines = cache.lines if cache else None
    found: dict[str, dict[str, Any]] = {}  # the collections a change touched, copied on first touch
    unsorted: set[str] = set()  # those of them kept in path order that gained a path
    for path in sorted(changed):
        of = kind_of(path)
        if of is None:
            continue
        kind, match = of
        if kind.field not in found:
            found[kind.field] = dict(_collection(base, kind.field))
        held = found[kind.field]
        new = files[path][0] if path in files else None
        before = None
        if not kind.by_path:  # keyed by the value's own id: whatever this file held goes
            found[kind.field] = held = {k: v for k, v in held.items() if v.file != path}
        elif (kind.order == IN_PLACE or kind.order == PATH_ORDER) and new is not None:
            before = held.get(kind.key(match, None))  # a path read again keeps its place: no sorting again
            if before is None and kind.order == PATH_ORDER:
                unsorted.add(kind.field)
        else:
            before = held.pop(kind.key(match, None), None)
        if new is None:
            continue
        if kind.admit is not None:
            kind.admit(match, manifest)
        value = players.get((new, path, manifest.ruleset_name)) if players and kind.field == "per_player" else None
        if value is None:
            value = kind.read(blob(new), path, ruleset, lines, before)
        if kind.seated is not None:
            kind.seated(value, before, manifest.players, not reseated)
        held[kind.key(match, value)] = value
    for kind in KINDS:
        if kind.order == PATH_ORDER and kind.field in unsorted:
            found[kind.field] = dict(sorted(found[kind.field].items()))  # in path order, as read_game gives them
    return _changed_game(base, manifest, status, found, reseated, files)


def _status(oid: str, blob: Callable[[str], bytes], cache: ParseCache | None,
            statuses: Mapping[str, Status]) -> Status:
    """status.yaml by its blob id: read by the fetching helper already (`statuses`), or kept in `cache`, or read
    now. Most commits rewrite it into a version an earlier commit had (only `yielded_by` moved), so it is kept
    under the key `read_game` keeps it under, and read once per version."""
    def read() -> Status:
        known = statuses.get(oid)
        if known is not None:
            return known
        data = blob(oid)
        sizes.append(len(data))
        return read_status(data)

    sizes: list[int] = []
    if cache is None:
        return read()
    kept: Status = cache.get((oid, "status"), read, lambda: FILE_BYTES * (sizes[0] if sizes else 4096))
    return kept


def _changed_game(base: Game, manifest: Manifest, status: Status | None, found: Mapping[str, Mapping[str, Any]],
                  reseated: bool, files: Mapping[str, tuple[str, int]]) -> Game:
    """The game after a commit: the collections it touched as read now, the others as at `base`; the books
    made again only from the collections they come from."""
    def now(field: str) -> Any:
        return found[field] if field in found else _collection(base, field)

    old = base.inputs
    book = dice_book(now("batches"), now("agreements")) if "batches" in found else old.dice
    if base.status is not None and not reseated:  # started: the table order was fixed at the start
        table, by_dice = old.players, old.ordered_by_dice
    else:
        rolled = table_order(manifest, now("agreements"), book)
        table, by_dice = rolled or manifest.players, rolled is not None
    secrets = "secrets" in found
    inputs = Inputs(table, now("files"), now("per_player"), book,
                    sealed_book(now("secrets")) if secrets else old.sealed,
                    press_after(base.press, old.press, now("press")) if "press" in found else old.press,
                    target_book(now("secrets")) if secrets else old.targets, manifest.ruleset.period_of,
                    ordered_by_dice=by_dice)
    return Game(manifest, inputs, status, now("batches"), now("secrets"), now("press"), now("agreements"),
                files[WORKFLOW][0] if WORKFLOW in files else None)


def _seated(manifest: Manifest, files: Mapping[str, tuple[str, int]], changed: set[str], base: Game) -> None:
    """The files read at `base` and not changed now, against a game.yaml that seats other players: every
    players file and every entry must still name a seated player (players.unknown)."""
    for path, kind, match in _admitted(sorted(p for p in files if p not in changed), manifest):
        if kind.seated is not None:
            value = _collection(base, kind.field).get(kind.key(match, None))
            if value is not None:
                kind.seated(value, None, manifest.players, False)


def _admitted(paths: Iterable[str], manifest: Manifest) -> Iterator[tuple[str, FileKind, re.Match[str]]]:
    """Each of `paths` that is a game file, with its kind and its pattern's match, once game.yaml admits the
    path itself (FileKind.admit raises for a players file of nobody seated)."""
    for path in paths:
        of = kind_of(path)
        if of is None:
            continue
        kind, match = of
        if kind.admit is not None:
            kind.admit(match, manifest)
        yield path, kind, match


def read_files(files: Mapping[str, bytes], cache: ParseCache | None = None) -> Game:
    """Read game files given by content (a working tree, or a tree not committed yet), keyed by their git blob
    ids so the parse cache serves them as it serves committed files."""
    ids = {path: blob_id(data) for path, data in files.items()}
    by_id = {ids[p]: data for p, data in files.items()}
    return read_game({p: (ids[p], BLOB_MODE) for p in files}, by_id.__getitem__, cache)


def blob_id(data: bytes) -> str:
    """The id git gives a blob with this content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
