"""The verification cache under .git/pbem/ (issue 7): one new commit on top of a verified game costs one commit,
and a missing, broken or stale cache only ever costs time, never a verdict."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pbem.store.repo import GameRepo
from pbem.verify import cache
from pbem.verify.history import verify_history


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pbem.services.demo import run_demo

    root = tmp_path_factory.mktemp("cached")
    assert run_demo(root, "tactical-duel", lambda _line: None) == 0
    return root / "game"


@pytest.fixture
def repo(game: Path, tmp_path: Path) -> GameRepo:
    copy = tmp_path / "game"
    shutil.copytree(game, copy, symlinks=True)
    shutil.rmtree(copy / ".git" / "pbem", ignore_errors=True)
    return GameRepo.open(copy)


def test_a_clean_history_is_kept_and_the_next_run_starts_from_it(repo: GameRepo) -> None:
    first = verify_history(repo, cached=True)
    assert first.cached_commits == 0 and not first.findings()
    again = verify_history(repo, cached=True)
    assert again.cached_commits == first.total and again.commits == []
    assert again.last is not None and again.last.status == first.last.status  # the same state, from the cache


def test_one_new_commit_costs_one_commit(repo: GameRepo) -> None:
    tip = repo.head_oid()
    parent = repo.parents(tip)[0]
    verify_history(repo, parent, cached=True)
    step = verify_history(repo, tip, cached=True)
    assert [c.oid for c in step.commits] == [tip] and step.cached_commits == step.total - 1
    assert not step.findings()


def test_a_broken_cache_is_no_cache(repo: GameRepo) -> None:
    verify_history(repo, cached=True)
    for kept in (Path(repo.git_dir) / "pbem").rglob("*.pickle"):
        kept.write_bytes(b"not a pickle")
    full = verify_history(repo, cached=True)
    assert full.cached_commits == 0 and not full.findings()


def test_a_cache_for_another_commit_id_is_not_trusted(repo: GameRepo) -> None:
    tip = repo.head_oid()
    parent = repo.parents(tip)[0]
    verify_history(repo, parent, cached=True)
    folder = next((Path(repo.git_dir) / "pbem" / "verified").iterdir())
    (folder / f"{parent}.pickle").rename(folder / f"{tip}.pickle")  # the state of another commit under tip's id
    full = verify_history(repo, tip, cached=True)
    assert full.cached_commits == 0 and not full.findings()


def test_a_history_with_findings_is_never_kept(repo: GameRepo, tmp_path: Path) -> None:
    from pbem.crypto.keys import PrivateKey
    from pbem.store.signer import KeySigner

    files = {p: repo.read_blob(b) for p, (b, _m) in repo.tree_files(repo.head_oid()).items()}
    files["notes.txt"] = b"a stray file\n"
    stranger = KeySigner(PrivateKey.generate("stranger"))
    bad = repo.commit_tree(files, [repo.head_oid()], "stray", stranger, ("x", "x@example.invalid"))
    result = verify_history(repo, bad, cached=True)
    assert result.findings()
    assert not cache.has(repo.git_dir, bad)
    assert verify_history(repo, bad, cached=True).findings()  # reported again, every time


def test_a_kept_state_is_renewed_only_when_judging_took_longer_than_keeping_one(
        repo: GameRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeping a state costs some 30 ms on a long game: commits judged on top of the kept state are not kept
    themselves until judging them took that long; then the tip's state is kept. Only time is at stake."""
    from pbem.verify import history
    from pbem.verify.history import turn_sequence

    sequence, _ = turn_sequence(repo, repo.head_oid())
    old, one_more = sequence[-4], sequence[-3]
    verify_history(repo, old, cached=True)
    assert cache.has(repo.git_dir, old)
    monkeypatch.setattr(history, "SAVE_AFTER_SECONDS", float("inf"))  # judging is never slow enough
    step = verify_history(repo, one_more, cached=True)
    assert [c.oid for c in step.commits] == [one_more] and not cache.has(repo.git_dir, one_more)
    monkeypatch.setattr(history, "SAVE_AFTER_SECONDS", 0.0)  # always
    later = verify_history(repo, cached=True)
    assert len(later.commits) == 3 and later.cached_commits == step.cached_commits
    assert cache.has(repo.git_dir, repo.head_oid()) and not later.findings()


def test_the_first_commit_judged_does_not_count_towards_keeping_a_new_state(
        repo: GameRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first commit judged on top of a kept state carries a run's one-off warm-up (validators loaded,
    modules imported), which keeping a new state would not spare the next run: one new commit is never kept,
    however long it took; the commits after it count. A clock that moves one second per commit judged."""
    from pbem.verify import history
    from pbem.verify.history import Verifier, turn_sequence

    clock = [0.0]
    step = Verifier.step

    def slow(self: Verifier, *args: object, **kwargs: object) -> object:
        clock[0] += 1.0
        return step(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Verifier, "step", slow)
    monkeypatch.setattr(history.time, "perf_counter", lambda: clock[0])
    sequence, _ = turn_sequence(repo, repo.head_oid())
    old, one_more = sequence[-4], sequence[-3]
    verify_history(repo, old, cached=True)
    assert verify_history(repo, one_more, cached=True).commits and not cache.has(repo.git_dir, one_more)
    later = verify_history(repo, cached=True)  # three commits: two seconds after the first
    assert len(later.commits) == 3 and cache.has(repo.git_dir, repo.head_oid()) and not later.findings()


def test_a_long_games_kept_state_is_frozen_once_loaded_and_verifies_the_same(
        repo: GameRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept state of FREEZE_BYTES or more is left out of the garbage collector's passes once loaded (time
    only): the next commit is judged on it as on one never frozen."""
    import gc

    tip = repo.head_oid()
    parent = repo.parents(tip)[0]
    verify_history(repo, parent, cached=True)
    plain = verify_history(repo, tip, cached=True)
    for kept in (Path(repo.git_dir) / "pbem").rglob(f"{tip}.pickle"):
        kept.unlink()
    monkeypatch.setattr(cache, "FREEZE_BYTES", 0)
    before = gc.get_freeze_count()
    try:
        frozen = verify_history(repo, tip, cached=True)
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
    assert [c.oid for c in frozen.commits] == [tip] and frozen.cached_commits == plain.cached_commits
    assert frozen.findings() == plain.findings() == [] and frozen.last is not None and plain.last is not None
    assert frozen.last.status == plain.last.status


def test_the_kept_state_is_the_state_with_the_entries_strings_written_once(repo: GameRepo) -> None:
    """What `save` writes loads back equal to the state kept, field by field, with each `do` mapping shared as
    before, and the equal strings of the report entries one object each, as the reader made them
    (files/lines.py `_shared`), so that pickle writes each once."""
    from pbem.protocol.model import Entry

    result = verify_history(repo, cached=True)
    kept_state = cache.load(repo.git_dir, repo.head_oid())
    assert kept_state is not None and result.last is not None
    verified = kept_state[0]
    assert verified == result.last and verified.status == result.last.status

    def entries(root: object) -> list[Entry]:
        found, seen, stack = [], set(), [root]
        while stack:
            item = stack.pop()
            if id(item) in seen or isinstance(item, (str, bytes, int, float, type(None))):
                continue
            seen.add(id(item))
            if isinstance(item, Entry):
                found.append(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, (list, tuple, set, frozenset)):
                stack.extend(item)
            elif hasattr(item, "__dict__"):
                stack.extend(vars(item).values())
        return found

    kept, live = entries(verified), entries(result.last)
    assert len(kept) == len(live) > 5
    for mine, theirs in zip(kept, live):
        assert vars(mine) == vars(theirs) and mine is not theirs
    assert len({id(e.by) for e in kept}) == len({e.by for e in kept}) < len(kept)
    assert len({id(k) for e in kept for k in e.do}) == len({k for e in kept for k in e.do})
    assert len({id(e.by) for e in live}) == len({e.by for e in live})
    assert len({id(e.file) for e in live}) == len({e.file for e in live}) < len(live)
