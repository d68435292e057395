"""The file-kind table (pbem.files.kinds) drives every way a game's files are read (DESIGN §2): a whole tree, one
commit's changes on top of the game at its parent, and a cache seeded from a kept state. Each row is held to the
same promises here, on one valid file of every kind: a change read on top of the parent gives what reading the
whole tree gives (added, edited, appended to, removed), and a seeded cache serves every file without reading it.
"""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from pbem.errors import PbemError
from pbem.files import layout
from pbem.files.game import blob_id, read_changes, read_game, seed_cache
from pbem.files.kinds import KINDS, FileKind, kind_of
from pbem.files.parsecache import ParseCache
from pbem.protocol.game import Game
from test_fuzz_loaders import (AGREEMENT, DICE, DICE_ESCROW, ERRATUM, PLAYERS_TACTICAL, PRESS_TACTICAL,
                               REPORT_TACTICAL, SECRET, STATUS, _seated)

TREE = {
    "game.yaml": _seated("tactical-duel"),
    "status.yaml": STATUS,
    "players/fed.yaml": PLAYERS_TACTICAL,
    "report/turn-01.yaml": REPORT_TACTICAL,
    "report/turn-02.yaml": b'entries:\n  - {at: "2.0.alloc", by: kli, unit: D7, do: {speed: 10}}\n',
    "dice/fed-0001.yaml": DICE,
    "dice/kli-0001.yaml": DICE_ESCROW,
    "secrets/fed-0001.yaml": SECRET,
    "press/global.yaml": PRESS_TACTICAL,
    "agreements/fed-0002.yaml": ERRATUM,
    "agreements/fed-0001.yaml": AGREEMENT,
    "agreements/kli-0001.yaml": AGREEMENT.replace(b"fed-0001", b"kli-0001").replace(b"by: fed", b"by: kli"),
}
# a line in pbem's own layout appended to the files read line by line
APPENDED = {
    "report/turn-01.yaml": b'  - {at: "1.5.move", by: kli, unit: D7, do: {move: TL}}\n',
    "press/global.yaml": b'  - {by: kli, at: "1.9.move", say: "Again!"}\n',
}


def tree(files: Mapping[str, bytes]) -> tuple[dict[str, tuple[str, int]], dict[str, bytes]]:
    """A tree as the verifier sees it (path -> (blob id, mode)) and its blobs by id."""
    return ({p: (blob_id(d), layout.BLOB_MODE) for p, d in files.items()}, {blob_id(d): d for d in files.values()})


def read(files: Mapping[str, bytes], cache: ParseCache | None = None) -> Game:
    entries, blobs = tree(files)
    return read_game(entries, blobs.__getitem__, cache)


def changed(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> Game:
    """`after` read on top of `before` as a commit is: only the paths that differ."""
    entries, blobs = tree(after)
    paths = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    return read_changes(read(before), entries, paths, blobs.__getitem__, ParseCache())


def assert_same(got: Game, want: Game) -> None:
    """The same game, its report files and agreements in path order (the order replay and the judge read)."""
    assert got == want
    assert list(got.inputs.files) == list(want.inputs.files) == sorted(want.inputs.files)
    assert list(got.agreements) == list(want.agreements) == sorted(want.agreements)


def collection(game: Game, kind: FileKind) -> Mapping[str, Any]:
    held: Mapping[str, Any] = getattr(game.inputs if kind.field in ("files", "per_player") else game, kind.field)
    return held


def of_kind(kind: FileKind) -> list[str]:
    return [p for p in TREE if kind.pattern.match(p)]


def test_the_samples_fill_every_kind() -> None:
    game = read(TREE)
    assert all(collection(game, kind) for kind in KINDS), [k.name for k in KINDS if not collection(game, k)]


def test_the_layout_knows_every_kind_and_nothing_else() -> None:
    assert layout.KIND_PATHS == tuple(kind.pattern for kind in KINDS)
    for path in TREE:
        found = kind_of(path)
        assert layout.is_game_path(path)
        assert (found is None) == (path in layout.FIXED_PATHS), path
    assert kind_of("notes/plan.yaml") is None and not layout.is_game_path("notes/plan.yaml")


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_commit_that_adds_a_file_reads_as_the_whole_tree(kind: FileKind) -> None:
    for path in of_kind(kind):
        before = {p: d for p, d in TREE.items() if p != path}
        assert_same(changed(before, TREE), read(TREE))


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_commit_that_removes_a_file_reads_as_the_whole_tree(kind: FileKind) -> None:
    for path in of_kind(kind):
        after = {p: d for p, d in TREE.items() if p != path}
        assert_same(changed(TREE, after), read(after))


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_commit_that_edits_a_file_reads_as_the_whole_tree(kind: FileKind) -> None:
    for path in of_kind(kind):
        edits = [TREE[path] + b"# edited by hand\n"] + ([TREE[path] + APPENDED[path]] if path in APPENDED else [])
        for data in edits:
            after = dict(TREE, **{path: data})
            assert_same(changed(TREE, after), read(after))


@pytest.mark.parametrize("path, data", [
    ("players/rom.yaml", PLAYERS_TACTICAL),
    ("report/turn-01.yaml", REPORT_TACTICAL + b'  - {at: "1.5.move", by: rom, unit: D7, do: {move: TL}}\n'),
])
def test_a_file_naming_nobody_seated_is_refused_on_either_path(path: str, data: bytes) -> None:
    after = dict(TREE, **{path: data})
    for reading in (lambda: read(after), lambda: changed(TREE, after)):
        with pytest.raises(PbemError) as err:
            reading()
        assert err.value.finding.rule == "players.unknown" and err.value.finding.file == path


def test_a_seeded_cache_serves_every_kind_without_reading_a_blob() -> None:
    """seed_cache puts each value under the key read_game looks it up by, for every row of the table."""
    game = read(TREE)
    entries, _ = tree(TREE)
    cache = ParseCache()
    seed_cache(cache, game, entries)

    def no_blob(oid: str) -> bytes:
        raise AssertionError(f"blob {oid} read although the cache holds it")

    again = read_game(entries, no_blob, cache)
    assert_same(again, game)
    for kind in KINDS:
        assert all(a is b for a, b in zip(collection(again, kind).values(), collection(game, kind).values()))
