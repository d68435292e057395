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
from typing import Mapping

from pbem.crypto.keys import PublicKey, find_key
from pbem.errors import ILLEGAL, Finding, PbemError
from pbem.services import gitstate
from pbem.store.repo import GameRepo
from pbem.store.signer import Signer, signer_for
from pbem.verify.gamefiles import Game, is_game_path, read_files
from pbem.verify.history import HistoryResult, verify_history
from pbem.verify.turns import Verified, judge


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
    me: "Identity | None" = None


class Workspace:
    """A game repository checked out on a player's machine."""

    def __init__(self, repo: GameRepo) -> None:
        self.repo = repo
        self._history: HistoryResult | None = None
        self._head: HistoryResult | None = None  # HEAD's state, from the verification cache where it can

    @property
    def root(self) -> Path:
        """The working tree (a bare repository has none: verifying it needs only its objects)."""
        return Path(self.repo.workdir)

    @classmethod
    def open(cls, path: Path | None = None) -> "Workspace":
        """The clone at `path`; refuses one where git has a merge or rebase half done (gitstate.guard): every
        command's entry goes through here."""
        repo = GameRepo.open(path or Path.cwd())
        gitstate.guard(repo)
        return cls(repo)

    # --- reading ---------------------------------------------------------------------------------------
    def worktree_files(self) -> dict[str, bytes]:
        """Every game file of the working tree (other files are ignored and never committed)."""
        files: dict[str, bytes] = {}
        root = str(self.root)
        for folder, dirs, names in os.walk(root):
            if folder == root and ".git" in dirs:
                dirs.remove(".git")  # git's own folder holds every object: never walked (it grows with history)
            for name in names:
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if is_game_path(rel) and not os.path.islink(path) and os.path.isfile(path):
                    with open(path, "rb") as handle:
                        files[rel] = handle.read()
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
        return read_files(files)

    def head_files(self) -> dict[str, bytes]:
        oid = self.repo.head_oid()
        if oid is None:
            return {}
        return {p: self.repo.read_blob(b) for p, (b, _m) in self.repo.tree_files(oid).items()}

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
