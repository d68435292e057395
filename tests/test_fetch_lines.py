"""The fetching helper (verify.fetch) reads the lines a commit appends to a report file and the players files it
changes ahead of the judge, by the ruleset game.yaml names, and the judge takes them from it instead of reading them
again: each line is the entry the whole-file reader reads at that line, and a line that does not read is left to
the judge, who names its finding."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

from conftest import DemoGames
from demo_games import DEMOS, commits, demo
from pbem.files import lines, readers
from pbem.files.layout import GAME
from pbem.files.lines import ENTRY_LINE, entries_ahead, read_report
from pbem.files.readers import read_manifest
from pbem.store.repo import GameRepo
from pbem.store.trees import TreeWalker
from pbem.verify.fetch import Fetched, fetch, ruleset_of
from pbem.verify.history import Verifier


def fetched_all(repo: GameRepo, oids: list[str]) -> list[Fetched]:
    walker, reports, rules = TreeWalker(repo), dict[str, tuple[str, bytes]](), ruleset_of(repo)
    return [fetch(repo, walker, oid, reports, rules=rules) for oid in oids]


@pytest.mark.parametrize("game", ["tactical-duel", "twirling-aces"])  # the demos with report files (not dow's)
def test_every_line_read_ahead_is_the_entry_the_whole_file_reader_reads(demo_games: DemoGames, game: str) -> None:
    repo = GameRepo.open(str(demo(game, demo_games) / "game"))
    oids = commits(demo(game, demo_games))
    appended = read = 0
    for oid, got in zip(oids, fetched_all(repo, oids)):
        files = repo.tree_files(oid)
        ruleset = read_manifest(repo.read_blob(files[GAME][0])).ruleset
        for blob, (path, _, more) in got.grown.items():
            appended += sum(1 for row in more.decode().splitlines() if ENTRY_LINE.match(row))
            whole = read_report(repo.read_blob(blob), path, ruleset)  # no line cache: read whole by the loader
            for (row, name, file), entry in got.lines.items():
                if file == path:
                    assert name == ruleset.name and whole.entries[entry.line - 2] == entry, (oid, row)
                    read += 1
    assert read == appended > 0  # every appended line of a clean game, and a game that appends some


@pytest.mark.parametrize("game", DEMOS)
def test_the_judge_reads_nothing_read_ahead_and_finds_the_same(demo_games: DemoGames, game: str) -> None:
    """Neither the report lines nor the players files the helper read (each commit of a tactical game moves a
    horizon in one) are read again by the judge, and what it finds is what it finds alone."""
    repo = GameRepo.open(str(demo(game, demo_games) / "game"))
    oids = commits(demo(game, demo_games))
    alone, helped = Verifier(repo), Verifier(repo)
    rows: list[str] = []
    paths: list[str] = []
    real_line, real_players = lines._read_entry_line, readers.read_players

    def line_read(row: str, *args: Any) -> Any:
        rows.append(row)
        return real_line(row, *args)

    def players_read(data: bytes, path: str, ruleset: Any) -> Any:
        paths.append(path)
        return real_players(data, path, ruleset)

    ahead = 0
    for oid, got in zip(oids, fetched_all(repo, oids)):
        expected = alone.step(oid)
        rows.clear()
        paths.clear()
        with mock.patch.object(lines, "_read_entry_line", line_read), \
                mock.patch.object(readers, "read_players", players_read):
            result = helped.step(oid, fetched=got)
        assert not set(rows) & {row for row, _, _ in got.lines}, oid
        assert not set(paths) & {path for _, path, _ in got.players}, oid
        ahead += len(got.players)
        assert (result.actor, result.status, [f.text() for f in result.findings]) == \
            (expected.actor, expected.status, [f.text() for f in expected.findings])
    assert ahead > 0 or game == "dow"  # dow's game has no players files


def test_a_line_that_does_not_read_is_left_to_the_judge(demo_games: DemoGames) -> None:
    repo = GameRepo.open(str(demo("tactical-duel", demo_games) / "game"))
    files = repo.tree_files(commits(demo("tactical-duel", demo_games))[-1])
    ruleset = read_manifest(repo.read_blob(files[GAME][0])).ruleset
    path = next(p for p in files if p.startswith("report/"))
    data = repo.read_blob(files[path][0])
    good = data.decode().splitlines()[-1]
    more = f"  - {{at: nonsense, by: fed, do: {{}}}}\n{good}\n  - [not, an, entry]\n".encode()
    got = entries_ahead(path, data, more, ruleset)
    number = data.count(b"\n") + 2  # the good line: after the file and the bad line
    assert [(row, entry.line) for (row, _, _), entry in got.items()] == [(good, number)]
    assert entries_ahead(path, data.rstrip(b"\n"), more, ruleset) == {}  # no whole last line: read whole
