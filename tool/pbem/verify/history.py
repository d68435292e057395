"""Walk a game's history and judge every commit (DESIGN §3 History; STYLE: a state machine fed commits in
a fixed order, collecting findings across the whole history instead of stopping at the first).

The turns are the first-parent chain from the root. A merge is accepted only when transparent (the
pull-request merge button): its tree equals its second parent's tree and its first parent lies on the second
parent's chain; the turns are then the commits on the second-parent side, and the merge itself is no turn.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

from pbem.errors import Finding, PbemError
from pbem.protocol.model import Status
from pbem.store.repo import GameRepo
from pbem.verify import cache as verified_cache
from pbem.store.trees import TreeWalker
from pbem.verify.fetch import (PIPELINE_MIN, Fetched, Signed, can_fetch_ahead, check_signature, fetched_ahead,
                               signatures_ahead)
from pbem.files.game import read_changes, read_game, seed_cache
from pbem.files.layout import layout_findings
from pbem.files.lines import keep_entries
from pbem.files.parsecache import ParseCache, whole_files
from pbem.protocol.game import Game
from pbem.protocol.verified import Verified
from pbem.verify.commit import judge


@dataclass
class CommitResult:
    oid: str
    actor: str | None
    summary: str
    findings: list[Finding] = field(default_factory=list)
    status: Status | None = None


@dataclass
class HistoryResult:
    commits: list[CommitResult]
    history_findings: list[Finding]
    last: Verified | None
    last_files: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    cached_commits: int = 0  # commits before `commits` whose clean verification was kept (verify.cache)
    sequence: list[str] = field(default_factory=list)  # every turn from the root, oldest first
    fetched: int = 0  # commits whose signature, tree changes and blobs a second process fetched (verify.fetch)
    last_game: Game | None = None  # the game as read at `last_files` (a player's commands parse only what differs)

    @property
    def total(self) -> int:
        return self.cached_commits + len(self.commits)

    def findings(self, only: set[str] | None = None) -> list[Finding]:
        """All findings, or those of the commits in `only` (history-level ones included when they name a
        commit in `only`, or no commit at all)."""
        out = [f for f in self.history_findings if only is None or f.commit is None or f.commit in only]
        for c in self.commits:
            if only is None or c.oid in only:
                out.extend(c.findings)
        return out


def turn_sequence(repo: GameRepo, tip: str,
                  known: Callable[[str], bool] | None = None) -> tuple[list[str], list[Finding]]:
    """The turns from the root to `tip`, root first, and any finding about the shape of history.

    With `known`, the walk back stops at the first turn `known` accepts with no merge waiting for its first
    parent further back: the sequence then starts at that turn (a clean state kept for it, verify.cache)."""
    if known is None:
        linear = repo.linear_chain(tip)  # most games: one pass of libgit2's, not two reads of each commit here
        if linear is not None:
            linear.reverse()
            return linear, []
    sequence: list[str] = []
    findings: list[Finding] = []
    awaited: dict[str, str] = {}  # first parent of a merge -> the merge: must show up further back
    oid: str | None = tip
    while oid is not None:
        awaited.pop(oid, None)
        if known is not None and not awaited and known(oid):
            sequence.append(oid)
            break
        try:
            parents = repo.parents(oid)
        except PbemError as exc:  # a commit not even git can read: nothing after it can be judged
            return [], [exc.finding.at(commit=oid)]
        if len(parents) <= 1:
            sequence.append(oid)
            oid = parents[0] if parents else None
            continue
        if len(parents) > 2:
            findings.append(Finding("history.bad-merge", "a merge of more than two branches", commit=oid))
        elif repo.tree_id(oid) != repo.tree_id(parents[1]):
            findings.append(Finding("history.bad-merge", "a merge that changes content: its tree differs from "
                                    "its second parent's (only the pull-request merge button's transparent "
                                    "merge is accepted)", commit=oid))
        awaited[parents[0]] = oid
        oid = parents[1]
    for first, merge in awaited.items():
        findings.append(Finding("history.bad-merge", f"merge's first parent {first[:10]} is not on the "
                                "merged branch: the branch rewrote or bypassed history", commit=merge))
    sequence.reverse()
    return sequence, findings


class Verifier:
    """The per-commit step of the verifier, fed the turns in order (STYLE: a state machine fed commits).

    It carries what is known after the last commit judged (`verified`), that commit's files, the game as read
    there, and the tree walker, so each commit costs what it changed (DESIGN §11): the folders whose ids changed
    are listed, the files that changed are read, a report file that had lines appended is read in those
    lines. A commit whose files cannot be read or whose signature fails leaves all of it as it was."""

    def __init__(self, repo: GameRepo,
                 kept: tuple[Verified, Mapping[str, tuple[str, int]], Game] | None = None) -> None:
        self.repo = repo
        self.cache = ParseCache()
        self.trees = TreeWalker(repo)
        self.verified: Verified | None = None
        self.files: Mapping[str, tuple[str, int]] = {}
        self.read: Game | None = None  # the game as read at `files` (the judged one may keep an old manifest)
        if kept is not None:
            self.verified, self.files, self.read = kept
            self.trees.files = dict(self.files)
            seed_cache(self.cache, self.read, self.files)

    def step(self, oid: str, signed: Signed | None = None, fetched: Fetched | None = None) -> CommitResult:
        """Judge one commit on top of the last one judged. `signed`: its `check_signature`, or `fetched`: all
        that `fetch` gets, if worked out already (verify.fetch)."""
        if fetched is not None:
            signed = fetched.signed
        summary, tree, signer, problem = signed if signed is not None else check_signature(self.repo, oid)
        result = CommitResult(oid, None, summary)
        if problem is not None:
            result.findings.append(problem)
        walked = self.trees.files
        try:
            files, changed = self._walk(oid, tree, fetched)
        except PbemError as exc:
            result.findings.append(exc.finding.at(commit=oid))
            return result
        blob = self.repo.read_blob if fetched is None else _fetched_first(self._fetched_blobs(fetched),
                                                                           self.repo.read_blob)
        statuses = fetched.statuses if fetched is not None else None
        players = fetched.players if fetched is not None else None
        if fetched is not None and fetched.lines:
            keep_entries(self.cache.lines, fetched.lines)
        if walked is not self.files:  # the walker moved past a commit not judged: compare with the last judged
            changed = {p for p in set(files) | set(self.files) if files.get(p) != self.files.get(p)}
        added = {p for p in changed if p not in self.files}
        result.findings.extend(f.at(commit=oid) for f in layout_findings(files, changed, added))
        try:
            if self.read is None:
                game = read_game(files, blob, self.cache)
            else:
                game = read_changes(self.read, files, changed, blob, self.cache, statuses, players)
            if _CROSSCHECK:
                _agree(self.repo, oid, files, game)
        except PbemError as exc:
            result.findings.append(exc.finding.at(commit=oid))
            return result
        if signer is None:
            return result
        findings, verified = judge(self.verified, game, changed, signer)
        result.findings.extend(f.at(commit=oid) for f in findings)
        result.actor = verified.actor
        result.status = game.status
        self.verified, self.files, self.read = verified, files, game
        return result

    def _fetched_blobs(self, fetched: Fetched) -> Mapping[str, bytes]:
        """The blobs the fetching process sent, report files that grew put together again from their version
        in the game as read (the content of the blob id they grew from), where that is the version at hand."""
        if not fetched.grown:
            return fetched.blobs
        blobs = dict(fetched.blobs)
        for blob, (path, earlier, more) in fetched.grown.items():
            base = self.files.get(path)
            report = self.read.inputs.files.get(path) if self.read is not None else None
            if base is not None and base[0] == earlier and report is not None and report.source:
                blobs[blob] = report.source + more
        return blobs

    def _walk(self, oid: str, tree: str | None,
              fetched: Fetched | None) -> tuple[dict[str, tuple[str, int]], set[str]]:
        """The commit's files and the paths that differ from the last tree walked: listed here, or applied
        from what the fetching process listed."""
        if fetched is None:
            return self.trees.advance(oid, tree or self.repo.tree_id(oid))
        if fetched.problem is not None or fetched.changes is None:
            raise PbemError.from_finding(fetched.problem or Finding("tree.unreadable", "the tree cannot be read"))
        files = dict(self.trees.files)
        for path, value in fetched.changes.items():
            if value is None:
                files.pop(path, None)
            else:
                files[path] = value
        self.trees.jump(files)
        return files, set(fetched.changes)


def _fetched_first(blobs: Mapping[str, bytes], read: Callable[[str], bytes]) -> Callable[[str], bytes]:
    def blob(oid: str) -> bytes:
        found = blobs.get(oid)
        return found if found is not None else read(oid)
    return blob


# A kept state is renewed once judging on top of it took longer than keeping a new one would (pickling the
# game and writing a few MB: some 30 ms on a long game), not after every commit: each run then spends at most
# about that again. Only time is at stake; what is kept is the same either way.
SAVE_AFTER_SECONDS = 0.03

_CROSSCHECK = os.environ.get("PBEM_CROSSCHECK") == "1"  # the test suite's: every fast path against the plain one


def _agree(repo: GameRepo, oid: str, files: Mapping[str, tuple[str, int]], game: Game) -> None:
    """The tree walker and the incremental reader give what the full, plain readers give (tests only)."""
    plain = repo.tree_files(oid)
    assert dict(files) == plain, f"tree walker disagrees at {oid}"
    full = read_game(plain, repo.read_blob, whole_files())
    assert full.manifest.raw == game.manifest.raw and full.status == game.status, f"reader disagrees at {oid}"
    assert full.inputs.files == game.inputs.files and list(full.inputs.files) == list(game.inputs.files), oid
    assert full.inputs.per_player == game.inputs.per_player, oid
    for name in ("dice", "sealed", "targets"):
        assert getattr(full.inputs, name) == getattr(game.inputs, name), f"{name} disagree at {oid}"
    # the same messages per step; their order is history's (DESIGN §7.2), which a tree read alone cannot know
    assert {at: sorted((m.file, m.line) for m in ms) for at, ms in full.inputs.press.items()} == {
        at: sorted((m.file, m.line) for m in ms) for at, ms in game.inputs.press.items()}, f"press disagree at {oid}"
    assert {k: v.raw for k, v in full.batches.items()} == {k: v.raw for k, v in game.batches.items()}, oid
    assert {k: v.raw for k, v in full.secrets.items()} == {k: v.raw for k, v in game.secrets.items()}, oid
    assert full.press == game.press, oid
    assert full.agreements == dict(game.agreements), f"agreements disagree at {oid}"


def verify_history(repo: GameRepo, tip: str | None = None, on_commit: Callable[[int], None] | None = None,
                   cached: bool = False, whole_sequence: bool = False, statuses: bool = True,
                   pipeline: bool | None = None) -> HistoryResult:
    """Judge every turn from the root to `tip` (default HEAD); `on_commit(i)` after each (benchmarks).

    With `cached`, start after the latest turn whose clean verification was kept under .git/pbem/
    (verify.cache), walking history back only that far unless `whole_sequence` is asked for, and keep the
    result when the whole history is clean: `commits` then holds only the commits judged now,
    `cached_commits` counts the others. Without `statuses`, commits keep their findings but not the status
    they wrote (`pbem verify` needs none of them, and at 10,000 commits they weigh some 15 MB). `pipeline`:
    fetch commits in a second process (verify.fetch); by default when there are PIPELINE_MIN or more."""
    tip = tip or repo.head_oid()
    if tip is None:
        raise PbemError("repo.empty", "this repository has no commits yet", exit_code=2)
    # Judging allocates millions of short-lived objects and few cycles: a 10,000-commit tactical walk leaves some
    # 40 objects in cycles, a fifteen-year Diplomacy game some 35,000 (3 MB: the engine's games). Collections
    # during the walk find next to nothing and cost 5 to 8 % of it at Python's default, still some 4 % with the
    # youngest generation 50,000 objects deep (each pass then looks through the game's newest containers): so
    # there are none until the walk is over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _verify_history(repo, tip, on_commit, cached, whole_sequence, statuses, pipeline)
    finally:
        if collecting:
            gc.enable()



def _verify_history(repo: GameRepo, tip: str, on_commit: Callable[[int], None] | None, cached: bool,
                    whole_sequence: bool, statuses: bool, pipeline: bool | None) -> HistoryResult:
    kept, start = None, 0
    listed = verified_cache.kept(repo.git_dir) if cached and not whole_sequence else frozenset()
    if listed:
        sequence, history_findings = turn_sequence(repo, tip, listed.__contains__)
        if not history_findings:
            kept, start = _latest_kept(repo, sequence)
        if kept is None and sequence and sequence[0] in listed:  # the walk stopped early, in vain: walk it all
            sequence, history_findings = turn_sequence(repo, tip)
    else:
        sequence, history_findings = turn_sequence(repo, tip)
        if cached and not history_findings:
            kept, start = _latest_kept(repo, sequence)
    verifier = Verifier(repo, kept[:3] if kept is not None else None)
    before = kept[3] - start if kept is not None else 0  # turns older than `sequence[0]`, judged before
    results: list[CommitResult] = []

    began: float | None = None  # when the first commit was judged (see `renew`)

    def judged(oid: str, signed: Signed | None = None, fetched: Fetched | None = None) -> None:
        nonlocal began
        results.append(verifier.step(oid, signed, fetched))
        if began is None:
            began = time.perf_counter()
        if not statuses:
            results[-1].status = None
        if on_commit is not None:
            on_commit(before + start + len(results) - 1)

    todo = sequence[start:]
    fetched = 0
    if pipeline or (pipeline is None and len(todo) >= PIPELINE_MIN and can_fetch_ahead()):
        for oid, item in zip(todo, fetched_ahead(repo, todo, verifier.trees.files)):
            judged(oid, fetched=item)
        verifier.trees.jump(verifier.trees.files)  # if the helper stopped early: list every folder afresh
        fetched = len(results)
        todo = todo[fetched:]
    for oid, signed in zip(todo, signatures_ahead(repo, todo)):
        judged(oid, signed)
    done = HistoryResult(results, history_findings, verifier.verified, verifier.files, before + start, sequence,
                         fetched, verifier.read)
    # The first commit judged carries what any run pays once (schemas' validators loaded, the ruleset's modules
    # imported, the caches filled), which a state kept now would not spare the next run: only the commits after
    # it count. One new commit on top of a kept state is never kept itself; the next run judges it again in
    # about a millisecond, where keeping it costs some 50 ms on a long game.
    renew = kept is None or (began is not None and time.perf_counter() - began >= SAVE_AFTER_SECONDS)
    if cached and renew and verifier.verified is not None and results and not done.findings():
        verified_cache.save(repo.git_dir, sequence[-1], verifier.verified, verifier.files, verifier.read,
                            done.total)
    return done


def _latest_kept(repo: GameRepo, sequence: list[str]) -> tuple[tuple | None, int]:
    """The state kept for the latest turn of `sequence` that has one, and the index after that turn."""
    listed = verified_cache.kept(repo.git_dir)  # listed once, not once per turn
    for i in range(len(sequence) - 1, -1, -1):
        if sequence[i] in listed:
            kept = verified_cache.load(repo.git_dir, sequence[i])
            return (kept, i + 1) if kept is not None else (None, 0)
    return None, 0
