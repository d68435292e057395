"""The turns of a history (verify.history.turn_sequence) are the same whether libgit2's walker reads the chain in
one pass (store.repo.linear_chain, taken when there is no merge) or the commits are read one by one: vectors of
history shapes, each compared with the commit-by-commit walk, which names what it meets."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable
from unittest import mock

import pytest

from conftest import Table
from pbem.store.repo import GameRepo
from pbem.verify.history import turn_sequence, verify_history

ENV = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
       "GIT_COMMITTER_EMAIL": "a@x", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}


def git(repo: Path, *args: str, date: int = 1_700_000_000) -> str:
    env = {**ENV, "GIT_AUTHOR_DATE": f"{date} +0000", "GIT_COMMITTER_DATE": f"{date} +0000"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env,
                          text=True).stdout.strip()


def commit(repo: Path, name: str, date: int = 1_700_000_000) -> str:
    (repo / name).write_text(name)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", name, date=date)
    return git(repo, "rev-parse", "HEAD")


def linear(repo: Path) -> None:
    for i in range(5):
        commit(repo, f"f{i}")


def dates_backwards(repo: Path) -> None:  # a player may write any commit date (DESIGN §3): order is by parents
    for i in range(6):
        commit(repo, f"f{i}", date=1_800_000_000 - 1000 * i * (-1) ** i)


def transparent_merge(repo: Path) -> None:
    commit(repo, "a")
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, "b")
    git(repo, "checkout", "-q", "-")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge", "side")  # main had not moved: the tree is side's


def merge_changing_content(repo: Path) -> None:
    transparent_merge(repo)
    (repo / "c").write_text("c")
    git(repo, "add", "c")
    git(repo, "commit", "-q", "--amend", "-m", "merge with more")


def octopus(repo: Path) -> None:
    commit(repo, "a")
    for side in ("s1", "s2"):
        git(repo, "checkout", "-q", "-b", side, "HEAD")
        commit(repo, side)
        git(repo, "checkout", "-q", "-")
    git(repo, "merge", "-q", "--no-ff", "-m", "octopus", "s1", "s2")


def bypassing_merge(repo: Path) -> None:  # the first parent is not on the merged branch
    commit(repo, "a")
    git(repo, "checkout", "-q", "-b", "side", "HEAD")
    commit(repo, "b")
    git(repo, "checkout", "-q", "-")
    commit(repo, "c")
    tree = git(repo, "rev-parse", "side^{tree}")
    merge = git(repo, "commit-tree", tree, "-p", "HEAD", "-p", "side", "-m", "merge")
    git(repo, "reset", "-q", "--hard", merge)


def missing_parent(repo: Path) -> None:
    commit(repo, "a")
    lost = commit(repo, "b")
    commit(repo, "c")
    (repo / ".git" / "objects" / lost[:2] / lost[2:]).unlink()


SHAPES: dict[str, Callable[[Path], None]] = {f.__name__: f for f in (
    linear, dates_backwards, transparent_merge, merge_changing_content, octopus, bypassing_merge, missing_parent)}
ONE_PASS = {"linear", "dates_backwards"}  # the shapes the walker reads in one pass


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_turns_are_those_the_commit_by_commit_walk_finds(tmp_path: Path, shape: str) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    SHAPES[shape](tmp_path)
    repo = GameRepo.open(str(tmp_path))
    tip = git(tmp_path, "rev-parse", "HEAD")
    one_by_one = turn_sequence(repo, tip, known=lambda _: False)  # never stops early: reads every commit
    assert turn_sequence(repo, tip) == one_by_one
    chain = repo.linear_chain(tip)
    assert (chain is not None) == (shape in ONE_PASS)
    if chain is not None:
        assert chain[::-1] == one_by_one[0] and not one_by_one[1]
        assert chain == git(tmp_path, "rev-list", "--first-parent", tip).split()


def test_a_shallow_clone_is_walked_commit_by_commit(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    linear(origin)
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{origin}", str(tmp_path / "shallow")],
                   check=True, env=ENV, capture_output=True)
    repo = GameRepo.open(str(tmp_path / "shallow"))
    tip = repo.head_oid()
    assert tip is not None and repo.linear_chain(tip) is None
    assert turn_sequence(repo, tip) == turn_sequence(repo, tip, known=lambda _: False)


def test_a_first_verification_reads_the_chain_in_one_pass(played: Table) -> None:
    """With no state kept yet, the walk does not look for one commit by commit (DESIGN §11: `pbem verify` of a
    long game starts judging after one pass over its history); with one kept, it stops there."""
    repo = GameRepo.open(str(played.repo_dir))
    shutil.rmtree(Path(repo.git_dir) / "pbem", ignore_errors=True)  # what the turns played kept
    one_by_one = mock.patch.object(GameRepo, "parents", side_effect=AssertionError("read commit by commit"))
    with one_by_one:
        first = verify_history(repo, cached=True)
    assert not first.findings() and first.cached_commits == 0
    again = verify_history(repo, cached=True)  # kept now: the walk back stops at it
    assert again.cached_commits == first.total and not again.commits
