"""The fetching helper (verify.fetch) reads status.yaml ahead of the judge, once per version: most commits rewrite
it into a version a commit shortly before had, and the judge keeps what it was sent by blob id (files.game), so a
version already sent is not read nor sent again (DESIGN §11: a commit costs what it changed)."""

from __future__ import annotations

from conftest import Table
from pbem.files.layout import STATUS
from pbem.files.parsecache import ParseCache
from pbem.files.readers import read_status
from pbem.store.repo import GameRepo
from pbem.store.trees import TreeWalker
from pbem.verify.fetch import SENT, fetch


def commits(repo: GameRepo, table: Table) -> list[str]:
    return table.git("rev-list", "--reverse", "HEAD").stdout.decode().split()


def test_a_status_version_already_sent_is_not_read_again(played: Table) -> None:
    repo = GameRepo.open(played.repo_dir)
    last = commits(repo, played)[-1]
    sent: dict[str, None] = {}
    first = fetch(repo, TreeWalker(repo), last, sent=sent)
    blob = first.changes[STATUS][0]  # type: ignore[index]
    assert first.statuses == {blob: read_status(repo.read_blob(blob))} and blob in sent
    # the same tree once more, from nothing: status.yaml "changes" into the version just sent
    again = fetch(repo, TreeWalker(repo), last, sent=sent)
    assert STATUS in (again.changes or {}) and again.statuses == {}
    assert fetch(repo, TreeWalker(repo), last).statuses == first.statuses  # without the memory: read as before


def test_every_status_version_reaches_the_judge_once_on_a_whole_walk(played: Table) -> None:
    repo = GameRepo.open(played.repo_dir)
    walker, sent = TreeWalker(repo), dict[str, None]()
    received: dict[str, object] = {}
    for oid in commits(repo, played):
        got = fetch(repo, walker, oid, sent=sent)
        assert not set(got.statuses) & set(received), "a version sent twice"
        received.update(got.statuses)
        change = (got.changes or {}).get(STATUS)
        if change is not None:
            assert change[0] in received  # sent now or before: the judge has it
    assert len(sent) <= SENT


def test_the_judge_keeps_a_sent_status_under_the_key_read_game_uses(played: Table) -> None:
    """files.game.read_changes takes a status from the helper into its parse cache, so the next commit that
    rewrites status.yaml into that version finds it there."""
    from pbem.files.game import _status

    repo = GameRepo.open(played.repo_dir)
    oid = repo.tree_files(commits(repo, played)[-1])[STATUS][0]
    status = read_status(repo.read_blob(oid))
    cache = ParseCache()

    def no_blob(_: str) -> bytes:
        raise AssertionError("read although it was sent")

    assert _status(oid, no_blob, cache, {oid: status}) is status
    assert _status(oid, no_blob, cache, {}) is status
