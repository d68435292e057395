"""The player's side of a game repository: his key, the working tree, the verified HEAD, and signed commits.

Every command that changes a game goes through `Workspace.commit`, which judges the new tree exactly as the
verifier will (so a player can never push what CI would reject) and only then writes a commit and moves the
branch. Nothing is changed when judging fails.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

from pbem.crypto.keys import PublicKey, find_key
from pbem.errors import ILLEGAL, Finding, PbemError
from pbem.services import gitstate, worktree
from pbem.store.repo import GameRepo
from pbem.store.signer import Signer, signer_for
from pbem.files.game import blob_id, read_files, seed_cache
from pbem.files.layout import GAME, REPORT_RE, STATUS
from pbem.formats.writer import dump_mapping
from pbem.protocol.control import expected_after
from pbem.protocol.model import Status, Stop
from pbem.files.lines import read_report
from pbem.files.parsecache import FILE_BYTES, ParseCache, whole_files
from pbem.protocol.game import Game
from pbem.verify import cache as verified_cache
from pbem.verify.history import HistoryResult, verify_history
from pbem.protocol.verified import Verified
from pbem.verify.commit import judge


@dataclass(frozen=True)
class Identity:
    """Whoever runs pbem: the key that signs, and its public half (which decides the seat)."""

    path: Path
    signer: Signer
    public: PublicKey
    author: tuple[str, str] | None = None  # commit author; default: git config user.name/email


def load_identity(explicit: str | None = None, cwd: Path | None = None) -> Identity:
    """Find the key in DESIGN §8 order: --key, PBEM_KEY, git config user.signingkey (gpg.format=ssh),
    ~/.ssh/id_ed25519."""
    path = find_key(explicit, os.environ, lambda name: _git_config(name, cwd), Path.home())
    signer = signer_for(path)
    public = signer.public
    return Identity(path, signer, public)


def _git_config(name: str, cwd: Path | None) -> str | None:
    try:
        out = subprocess.run(["git", "config", "--get", name], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


@dataclass(frozen=True)
class PlannedCommit:
    """A commit judged and ready to be written."""

    files: Mapping[str, bytes]
    message: str
    me: Identity  # who signs it


class Workspace:
    """A game repository checked out on a player's machine."""

    def __init__(self, repo: GameRepo) -> None:
        self.repo = repo
        self._history: HistoryResult | None = None
        self._head: HistoryResult | None = None  # HEAD's state, from the verification cache where it can
        self._root: Path | None = None
        self._head_blobs: tuple[str | None, dict[str, bytes]] | None = None  # (HEAD, its files), read once
        # parsed files by blob id, for every game read in this command; seeded with HEAD's game as verified
        # (`_base`: its files and game, `_seeded`: the HEAD looked up), so a working tree costs what it changed
        self._cache = ParseCache()
        self._seeded: str | None = None
        self._base: tuple[Mapping[str, tuple[str, int]], Game] | None = None

    @property
    def root(self) -> Path:
        """The working tree (a bare repository has none: verifying it needs only its objects)."""
        if self._root is None:
            self._root = self.repo.workdir
        return self._root

    @classmethod
    def open(cls, path: Path | None = None) -> "Workspace":
        """The clone at `path`; refuses one where git has a merge or rebase half done (gitstate.guard): every
        command's entry goes through here."""
        repo = GameRepo.open(path or Path.cwd())
        gitstate.guard(repo)
        return cls(repo)

    # --- reading ---------------------------------------------------------------------------------------
    def worktree_files(self) -> dict[str, bytes]:
        """Every game file of the working tree (other files are ignored and never committed): those git lists
        as changed read from disk, the others taken from HEAD (services.worktree)."""
        files = worktree.changed_files(self.repo, self.root, self._head_files())
        if _CROSSCHECK:
            assert files == worktree.plain_files(self.root), "the working tree reader disagrees with the plain one"
        return files

    def write_files(self, files: Mapping[str, bytes]) -> list[str]:
        """Write game files into the working tree (those that differ); returns the paths written."""
        current = self.worktree_files()
        written = []
        for path, data in sorted(files.items()):
            if current.get(path) != data:
                target = self.root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                written.append(path)
        return written

    def history(self) -> HistoryResult:
        """The verified history up to HEAD (computed once per command)."""
        if self._history is None:
            self._history = verify_history(self.repo)
        return self._history

    def head(self) -> Verified | None:
        """What is known at HEAD (None in an empty repository); refuses to build on a history that does
        not verify."""
        if self.repo.head_oid() is None:
            return None
        if self._history is None and self._head is None:
            self._head = verify_history(self.repo, cached=True)
        result = self._history or self._head
        assert result is not None
        self._seed(result)
        findings = result.findings()
        if findings:
            unsigned = gitstate.unsigned_top(self.repo)
            if unsigned is not None:
                raise PbemError("signature.missing", f"your last commit {unsigned[:10]} is not signed (plain "
                                "`git commit`), so nobody can accept it", commit=unsigned,
                                hint=gitstate.UNSIGNED_HINT, exit_code=ILLEGAL)
            # replace, not .at(): the finding's own hint ("sign with pbem yield", …) is not what to do here
            hint = "the history does not verify: run `pbem verify`"
            raise PbemError.from_finding(replace(findings[0], hint=hint))
        assert result.last is not None
        return result.last

    def game_of(self, files: Mapping[str, bytes]) -> Game:
        """The game `files` hold, read as `read_files` reads it; the files HEAD's game holds already are not
        parsed again, and a report file that differs from HEAD's only in some lines is read in those lines."""
        self._seed_from_kept()
        if self._base is not None:
            self._read_edited_reports(files, *self._base)
        try:
            game = read_files(files, self._cache)
        except PbemError as exc:
            if _CROSSCHECK:
                _refused_alike(files, exc)
            raise
        if _CROSSCHECK:
            _agree(read_files(files, whole_files()), game)
        return game

    def head_files(self) -> dict[str, bytes]:
        """HEAD's files (a copy: callers edit it)."""
        return dict(self._head_files())

    def _head_files(self) -> dict[str, bytes]:
        oid = self.repo.head_oid()
        if self._head_blobs is None or self._head_blobs[0] != oid:
            files = {} if oid is None else {p: self.repo.read_blob(b)
                                            for p, (b, _m) in self.repo.tree_files(oid).items()}
            self._head_blobs = (oid, files)
        return self._head_blobs[1]

    def _seed(self, result: HistoryResult) -> None:
        """Put HEAD's game, as verified, into the parse cache (once per HEAD)."""
        oid = self.repo.head_oid()
        if self._base is not None and self._seeded == oid:
            return
        if result.last_game is not None and result.sequence and result.sequence[-1] == oid:
            self._seed_with(oid, result.last_files, result.last_game)

    def _seed_from_kept(self) -> None:
        """Seed the parse cache before anything verified HEAD in this command (`pbem roll`, `seal`, …): from the
        state `pbem verify` kept for HEAD, if it kept one (verify.cache); else files are parsed as read."""
        oid = self.repo.head_oid()
        if oid is None or self._seeded == oid:
            return
        result = self._history or self._head
        if result is not None:
            self._seed(result)
        elif verified_cache.has(self.repo.git_dir, oid):
            kept = verified_cache.load(self.repo.git_dir, oid)
            if kept is not None:
                self._seed_with(oid, kept[1], kept[2])
        self._seeded = oid  # looked up once per HEAD, found or not

    def _seed_with(self, oid: str, files: Mapping[str, tuple[str, int]], game: Game) -> None:
        seed_cache(self._cache, game, files)
        self._base = (files, game)
        self._seeded = oid

    def _read_edited_reports(self, files: Mapping[str, bytes], head: Mapping[str, tuple[str, int]],
                             game: Game) -> None:
        """Report files that differ from HEAD's, read on top of HEAD's version (only the lines that changed)
        into the parse cache, under the key `read_files` looks up. A file that cannot be read so is left to
        `read_files`, which reads it whole and says what is wrong with it."""
        if GAME not in files or blob_id(files[GAME]) != head.get(GAME, ("",))[0]:
            return  # another game.yaml may bring other rules: read everything against them
        ruleset = game.manifest.ruleset
        for path, data in files.items():
            previous = game.inputs.files.get(path)
            if previous is None or not REPORT_RE.match(path):
                continue
            oid = blob_id(data)
            if oid == head.get(path, ("",))[0]:
                continue
            try:
                self._cache.get((oid, "report", game.manifest.ruleset_name, path),
                                lambda: read_report(data, path, ruleset, self._cache.lines, previous),
                                FILE_BYTES * len(data))
            except PbemError:
                continue

    # --- judging and committing ------------------------------------------------------------------------
    def judge(self, files: Mapping[str, bytes], me: Identity) -> tuple[list[Finding], Verified]:
        """Judge `files` as if `me` committed them on top of HEAD, exactly as the verifier will."""
        prev = self.head()
        head = self.head_files()
        game = self.game_of(files)
        changed = {p for p in set(files) | set(head) if files.get(p) != head.get(p)}
        return judge(prev, game, changed, me.public)

    def judge_after(self, prev: Verified | None, prev_files: Mapping[str, bytes], files: Mapping[str, bytes],
                    me: Identity) -> tuple[list[Finding], Verified]:
        """Judge `files` as a commit by `me` on top of a commit not written yet (`prev`, `prev_files`)."""
        game = self.game_of(files)
        changed = {p for p in set(files) | set(prev_files) if files.get(p) != prev_files.get(p)}
        return judge(prev, game, changed, me.public)

    def write_commits(self, plan: list["PlannedCommit"]) -> str:
        """Write already judged commits one on top of the other, then check out the last. Returns its id."""
        oid = ""
        for planned in plan:
            oid = self._write(planned.files, planned.me, planned.message)
        return oid

    def commit(self, files: Mapping[str, bytes], me: Identity, message: str) -> str:
        """Judge, then write a signed commit of `files` on top of HEAD and check it out. Returns its id."""
        findings, _ = self.judge(files, me)
        if findings:
            raise PbemError.from_finding(findings[0], exit_code=ILLEGAL)
        return self._write(files, me, message)

    def commit_out_of_turn(self, head: Verified, player: str, files: dict[str, bytes], me: Identity, summary: str,
                           details: Sequence[str] = (), keep_edits: bool = True) -> tuple[Stop, Status, str]:
        """Write the status replay computes after `player`'s change into `files` (HEAD's files plus the change),
        commit it signed through the judging path with the usual `next:` line (nothing is written when it is
        refused), and, with `keep_edits`, put back the player's other edits in his working tree: refused first
        (usage.uncommitted) when the command writes a file he has edited. Returns where replay stops, the status
        and the commit id."""
        stop, status = expected_after(head, self.game_of(files), player)
        files[STATUS] = dump_mapping(status.to_data()).encode()
        head_files, working = self.head_files(), self.worktree_files()
        edits = {p: d for p, d in working.items() if p != STATUS and head_files.get(p) != d} if keep_edits else {}
        removed = [p for p in head_files if p != STATUS and p not in working] if keep_edits else []
        clash = sorted(p for p in (*edits, *removed) if files.get(p) != head_files.get(p))
        if clash:
            raise PbemError("usage.uncommitted", f"you have uncommitted edits to {', '.join(clash)}, which this "
                            "command writes too",
                            hint=f"discard them (git checkout -- {' '.join(clash)}) or commit them first")
        nxt = status.control or "game over"
        if status.pending:
            nxt += f" ({status.pending[0].why})"
        oid = self.commit(files, me, f"{player}: {summary}\n\nnext: {nxt}" + "".join(f"\n{line}" for line in details))
        if edits or removed:
            self.write_files(edits)
            for path in removed:
                (self.root / path).unlink(missing_ok=True)
        return stop, status, oid

    def _write(self, files: Mapping[str, bytes], me: Identity, message: str) -> str:
        if self.repo.head_oid() is not None and self.repo.head_branch() is None:
            # refuse before writing any object: a refused command leaves the repository as it was
            raise PbemError("repo.detached", "HEAD is detached; check out the game branch first",
                            hint="git switch main")
        head = self.repo.head_oid()
        author = me.author or (_git_config("user.name", self.root) or me.public.comment or "pbem player",
                               _git_config("user.email", self.root) or "player@pbem.invalid")
        oid = self.repo.commit_tree(dict(files), [head] if head else [], message, me.signer, author)
        self.repo.update_branch_and_worktree(oid)
        self._history = None
        self._head = None
        return oid


_CROSSCHECK = os.environ.get("PBEM_CROSSCHECK") == "1"  # the test suite's: every fast path against the plain one


def _refused_alike(files: Mapping[str, bytes], fast: PbemError) -> None:
    """Files the cached read refuses are refused by a fresh read with the same finding (tests only)."""
    try:
        read_files(files)
    except PbemError as plain:
        assert plain.finding == fast.finding, f"{plain.finding} != {fast.finding}"
    else:
        raise AssertionError(f"only the cached read refuses: {fast.finding}")


def _agree(plain: Game, fast: Game) -> None:
    """A game read with HEAD's parsed files is the game read afresh (tests only)."""
    assert plain.manifest.raw == fast.manifest.raw and plain.status == fast.status, "game.yaml/status.yaml"
    assert plain.inputs == fast.inputs and list(plain.inputs.files) == list(fast.inputs.files), "inputs disagree"
    assert {k: v.raw for k, v in plain.batches.items()} == {k: v.raw for k, v in fast.batches.items()}, "dice"
    assert {k: v.raw for k, v in plain.secrets.items()} == {k: v.raw for k, v in fast.secrets.items()}, "secrets"
    assert list(plain.batches) == list(fast.batches) and list(plain.secrets) == list(fast.secrets), "order"
    assert plain.press == fast.press and plain.agreements == fast.agreements
