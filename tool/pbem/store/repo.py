"""A thin wrapper around one game repository (pygit2): raw objects in, signed commits out (DESIGN §3, §10).

Nothing here knows the rules. Ids cross this boundary as 40-hex strings, file contents as bytes.
`commit_tree` writes a commit and moves no ref; moving refs and the working tree is a separate, explicit step.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pbem.store.git import pygit2
from pygit2.enums import FileMode, ObjectType, ReferenceType, ResetMode

from pbem.errors import ILLEGAL, USAGE, PbemError
from pbem.store.commits import commit_payload, format_ident, with_signature
from pbem.store.signer import Signer

# libgit2's object cache keeps every object looked up (up to 256 MB): pbem reads each object about once per
# verification and keeps what it needs itself, so the cache only costs memory (peak memory, DESIGN §11).
pygit2.settings.enable_caching(False)

_TREE_CACHE_LIMIT = 4096  # flattened subtrees kept; unchanged directories share ids across commits
_BAD_NAMES = {"", ".", "..", ".git"}

FileList = tuple[tuple[str, str, int], ...]


MAX_DEPTH = 3  # folders deeper than .github/workflows/ hold nothing a game may have


# How git itself writes the modes of a tree's entries. Any other spelling is read differently by git and by
# libgit2: mode 150000 is a regular file to libgit2 and a submodule to git (git's canon_mode), so a game file
# could vanish for git and GitHub while pbem reads it unchanged; 100664 and a zero-padded 040000 are the same to
# both, but git fsck flags them and no honest tool writes them (DESIGN §3 Trees: never more lenient than git).
CANONICAL_MODES = (b"100644", b"40000", b"100755", b"120000", b"160000")
_RAW_ENTRY = re.compile(rb"([0-9]*) ([^\0]*)\0.{20}", re.S)


def _canonical_modes(raw: bytes, names: Sequence[str], where: str) -> None:
    """Rule `tree.bad-mode` for an entry whose mode git never writes, read from the tree's own bytes (libgit2
    hands out its normalised reading only); `tree.malformed` when those bytes list other names than libgit2."""
    found = [(mode, name.decode("utf-8", errors="surrogateescape")) for mode, name in _RAW_ENTRY.findall(raw)]
    if [name for _, name in found] != list(names):
        raise PbemError("tree.malformed", f"the tree of {where or 'the top folder'} cannot be read: its entries "
                        "do not parse as git writes them", file=where or None, exit_code=ILLEGAL)
    for mode, name in found:
        if mode not in CANONICAL_MODES:
            shown = mode.decode("ascii", errors="replace")
            raise PbemError("tree.bad-mode", f"{where}{name} has mode {shown}, which git does not write (only "
                            "regular files, 100644, and folders, 040000, belong in a game; git and pbem would "
                            "read this entry differently)", file=f"{where}{name}", exit_code=ILLEGAL)


class GameRepo:
    """One git repository holding one game."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self._trees: dict[tuple[str, int], FileList] = {}
        self._alternates: list[str] = []

    def add_alternate(self, objects: str) -> None:
        """Read objects from another object folder too (a pre-receive hook's quarantine)."""
        self.repo.odb.add_disk_alternate(objects)
        self._alternates.append(objects)

    def reopen(self) -> GameRepo:
        """A new handle on the same repository and object folders, for another thread or process (libgit2
        handles are not shared between them)."""
        again = GameRepo(pygit2.Repository(self.repo.path))
        for objects in self._alternates:
            again.add_alternate(objects)
        return again

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> GameRepo:
        """The repository at `path` or in a folder above it (rule `repo.missing`)."""
        found = pygit2.discover_repository(str(path))
        if found is None:
            raise PbemError(
                "repo.missing",
                f"no git repository at or above {path}",
                hint="cd into the game repository, or make one with `pbem init DIR`",
                exit_code=USAGE,
            )
        try:
            return cls(pygit2.Repository(found))
        except pygit2.GitError as exc:
            # e.g. libgit2's safe.directory check when the checkout belongs to another user (CI containers)
            raise PbemError(
                "repo.unreadable", f"cannot open the repository at {found}: {exc}", exit_code=USAGE
            ) from None

    @classmethod
    def init(cls, path: str | os.PathLike[str]) -> GameRepo:
        """A new non-bare repository with default branch `main` (rule `repo.exists` if there is one already)."""
        if (Path(path) / ".git").exists():
            raise PbemError("repo.exists", f"{path} is already a git repository", exit_code=USAGE)
        return cls(pygit2.init_repository(str(path), bare=False, initial_head="main"))

    # -- where things are -----------------------------------------------------------------------------------

    @property
    def is_bare(self) -> bool:
        return bool(self.repo.is_bare)

    @property
    def workdir(self) -> Path:
        """The working tree (rule `repo.bare` when there is none, e.g. inside a pre-receive hook)."""
        if self.repo.workdir is None:
            raise PbemError(
                "repo.bare", f"{self.repo.path} is a bare repository, it has no working tree", exit_code=USAGE
            )
        return Path(self.repo.workdir)

    def config_value(self, name: str) -> str | None:
        """A git config value as git would see it here (repo, global, system), or None."""
        try:
            return str(self.repo.config[name])
        except KeyError:
            return None

    # -- reading --------------------------------------------------------------------------------------------

    def head_oid(self) -> str | None:
        """The commit HEAD points at; None on a branch with no commits yet."""
        if self.repo.head_is_unborn:
            return None
        return str(self.repo.head.target)

    def head_branch(self) -> str | None:
        """The full branch name HEAD points at (`refs/heads/main`), or None when HEAD is detached."""
        head = self.repo.lookup_reference("HEAD")
        return str(head.target) if head.type == ReferenceType.SYMBOLIC else None

    def _read(self, oid: str, kind: ObjectType) -> bytes:
        try:
            found, data = self.repo.odb.read(oid)
        except (KeyError, ValueError):
            raise PbemError(
                "repo.object-missing",
                f"object {oid} is not in the repository",
                hint="fetch the full history (actions/checkout: fetch-depth: 0)",
                exit_code=USAGE,
            ) from None
        if found != kind:
            raise PbemError(
                "repo.wrong-type",
                f"object {oid} is a {ObjectType(found).name.lower()}, expected a {kind.name.lower()}",
                exit_code=ILLEGAL,
            )
        return bytes(data)

    def raw_commit(self, oid: str) -> bytes:
        """The commit object's bytes exactly as stored (for `commits.parse_commit`)."""
        return self._read(oid, ObjectType.COMMIT)

    def read_blob(self, oid: str) -> bytes:
        """A blob's content."""
        return self._read(oid, ObjectType.BLOB)

    def _commit(self, oid: str) -> pygit2.Commit:
        raw = self._read(oid, ObjectType.COMMIT)  # the precise error for a missing or non-commit id
        try:
            commit = self.repo[oid]
        except (pygit2.GitError, ValueError) as exc:
            # libgit2 refuses what git fsck would (a date it cannot represent, …): a finding, not a crash
            from pbem.store.commits import parse_commit

            parse_commit(raw, oid)  # names the problem when our strict parser sees it too
            raise PbemError("commit.malformed", f"commit {oid[:10]} cannot be read: {exc}", commit=oid,
                            exit_code=ILLEGAL) from None
        assert isinstance(commit, pygit2.Commit)
        return commit

    def parents(self, oid: str) -> list[str]:
        """The parent ids of a commit, in order (first parent first)."""
        return [str(p) for p in self._commit(oid).parent_ids]

    @property
    def git_dir(self) -> str:
        """The repository's git folder (.git, or the bare repository itself)."""
        return str(self.repo.path)

    def tree_id(self, oid: str) -> str:
        """The id of a commit's tree."""
        return str(self._commit(oid).tree_id)

    def resolve(self, revision: str) -> str:
        """A revision (branch, tag, `HEAD~2`, id) as a commit id (rule `repo.bad-revision`)."""
        try:
            obj = self.repo.revparse_single(revision)
            return str(obj.peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError):
            raise PbemError("repo.bad-revision", f"no commit {revision!r} in this repository",
                            exit_code=USAGE) from None

    def reachable(self, tip: str) -> list[str]:
        """Every commit reachable from `tip` (all parents), newest first."""
        return [str(c.id) for c in self.repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL)]

    def first_parent_chain(self, tip: str) -> list[str]:
        """Commits from the root to `tip` along first parents, root first (rule `repo.shallow`)."""
        if self.repo.is_shallow:
            # A shallow clone hides the real root; verifying from a fake root would prove nothing.
            raise PbemError(
                "repo.shallow",
                "the repository is a shallow clone, the game history is incomplete",
                hint="fetch the full history (`git fetch --unshallow`, or fetch-depth: 0)",
                exit_code=USAGE,
            )
        chain = [tip]
        while parents := self.parents(chain[-1]):
            chain.append(parents[0])
        chain.reverse()
        return chain

    def linear_chain(self, tip: str) -> list[str] | None:
        """The commits from `tip` back to the root, newest first, read by libgit2's walker in one pass, when
        there is no merge among them; None when there is one, when any commit does not read or the clone is
        shallow: the caller then walks commit by commit and names what it meets (`parents`)."""
        if self.repo.is_shallow:
            return None
        chain: list[str] = []
        try:
            walker = self.repo.walk(tip, pygit2.enums.SortMode.NONE)
            walker.simplify_first_parent()
            expected: pygit2.Oid | None = pygit2.Oid(hex=tip)
            for commit in walker:
                parents = commit.parent_ids
                if commit.id != expected or len(parents) > 1:
                    return None
                chain.append(str(commit.id))
                expected = parents[0] if parents else None
        except (pygit2.GitError, KeyError, ValueError):
            return None
        return chain if expected is None else None  # else the walk stopped short of the root

    def tree_files(self, commit_oid: str) -> dict[str, tuple[str, int]]:
        """Every non-tree entry of the commit's tree, recursively: `path -> (oid, filemode)`.

        Links (0o120000) and submodules (0o160000) are listed with their mode so the verifier can refuse them.
        Paths use `/`; bytes that are not UTF-8 are kept as surrogate escapes.
        """
        files: dict[str, tuple[str, int]] = {}
        try:
            listed = self._flatten(str(self._commit(commit_oid).tree_id))
        except PbemError as exc:
            raise PbemError.from_finding(exc.finding.at(commit=commit_oid), exc.exit_code) from None
        for path, oid, mode in listed:
            if path in files:
                # git reads the first of two same-named entries, a dict would keep the last (git fsck
                # duplicateEntries): never judge a file other than the one players see
                raise PbemError("tree.duplicate-entry", f"the tree holds {path} twice", file=path,
                                commit=commit_oid, exit_code=ILLEGAL)
            files[path] = (oid, mode)
        return files

    def _flatten(self, tree_oid: str, depth: int = 0, where: str = "") -> FileList:
        cached = self._trees.get((tree_oid, depth))
        if cached is not None:
            return cached
        raw = self._read(tree_oid, ObjectType.TREE)  # repo.wrong-type / repo.object-missing, not an assertion
        try:
            tree = self.repo[tree_oid]
            assert isinstance(tree, pygit2.Tree)  # `_read` refused any other type of object
            listing = [((entry.raw_name or b"").decode("utf-8", errors="surrogateescape"), entry.filemode,
                        str(entry.id)) for entry in tree]
        except (pygit2.GitError, ValueError) as exc:
            # only a hostile repository holds a tree git itself would not write (an empty name, mode 999999, an
            # entry cut short, bytes after the last one): a finding naming the folder, never a crash (DESIGN §3)
            raise PbemError("tree.malformed", f"the tree of {where or 'the top folder'} cannot be read: {exc}",
                            file=where or None, exit_code=ILLEGAL) from None
        _canonical_modes(raw, [name for name, _, _ in listing], where)
        entries: list[tuple[str, str, int]] = []
        for name, filemode, oid in listing:
            if filemode == FileMode.TREE and depth >= MAX_DEPTH:
                # deeper than any game layout folder: listed as the folder itself (a finding), never read
                entries.append((f"{name}/", oid, int(filemode)))
            elif filemode == FileMode.TREE:
                entries.extend((f"{name}/{path}", sub, mode)
                               for path, sub, mode in self._flatten(oid, depth + 1, f"{where}{name}/"))
            else:
                entries.append((name, oid, int(filemode)))
        result = tuple(entries)
        if len(self._trees) >= _TREE_CACHE_LIMIT:
            self._trees.clear()
        self._trees[(tree_oid, depth)] = result
        return result

    def worktree_files(self, allowed: Callable[[str], bool]) -> dict[str, bytes]:
        """Regular files of the working tree whose `/`-path `allowed` accepts, sorted; `.git` and links skipped."""
        root = self.workdir
        found: dict[str, bytes] = {}
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != ".git" and not os.path.islink(os.path.join(folder, d)))
            for name in sorted(names):
                full = Path(folder) / name
                rel = full.relative_to(root).as_posix()
                if full.is_symlink() or not full.is_file() or not allowed(rel):
                    continue
                found[rel] = full.read_bytes()
        return dict(sorted(found.items()))

    # -- writing --------------------------------------------------------------------------------------------

    def commit_tree(
        self,
        files: Mapping[str, bytes],
        parents: Sequence[str],
        message: str,
        signer: Signer,
        author: tuple[str, str],
        when: int | None = None,
    ) -> str:
        """Write `files` as a fresh tree (all mode 100644) and a commit signed by `signer`; return its id.

        Author and committer are both `author` at `when` (default now) in UTC. The message gets a final
        newline if it lacks one, as `git commit` does. No ref moves.
        """
        for parent in parents:
            self._commit(parent)
        tree = self._write_tree(files)
        stamp = int(time.time()) if when is None else int(when)
        ident = format_ident(author[0], author[1], stamp)
        text = message if message.endswith("\n") else message + "\n"
        payload = commit_payload(tree, list(parents), ident, ident, text)
        signature = signer.sign(payload)
        oid = str(self.repo.create_commit_with_signature(payload.decode("utf-8"), signature))
        # with_signature() refuses a final newline; libgit2 would have written an extra " " line for it.
        if self.raw_commit(oid) != with_signature(payload, signature):
            raise RuntimeError(f"libgit2 wrote commit {oid} differently from git's layout")
        return oid

    def _write_tree(self, files: Mapping[str, bytes]) -> str:
        root: dict[str, object] = {}
        for path, data in files.items():
            parts = path.split("/")
            if any(part in _BAD_NAMES or "\x00" in part or part.lower() == ".git" for part in parts):
                raise PbemError("tree.path", f"cannot store a file at {path!r}", exit_code=USAGE)
            node = root
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    raise PbemError(
                        "tree.path", f"{path!r} needs {part!r} to be a folder, but it is a file", exit_code=USAGE
                    )
                node = child
            if parts[-1] in node:
                raise PbemError("tree.path", f"{path!r} is both a file and a folder", exit_code=USAGE)
            node[parts[-1]] = bytes(data)
        return self._write_node(root)

    def _write_node(self, node: Mapping[str, object]) -> str:
        builder = self.repo.TreeBuilder()
        for name, value in node.items():
            if isinstance(value, bytes):
                builder.insert(name, self.repo.create_blob(value), FileMode.BLOB)
            else:
                assert isinstance(value, dict)
                builder.insert(name, pygit2.Oid(hex=self._write_node(value)), FileMode.TREE)
        return str(builder.write())

    def update_ref(self, name: str, oid: str) -> None:
        """Point ref `name` (`refs/…`) at `oid`, creating or overwriting it."""
        if not name.startswith("refs/"):
            raise ValueError(f"not a full ref name: {name!r}")
        self.repo.references.create(name, pygit2.Oid(hex=oid), force=True)

    def update_branch_and_worktree(self, oid: str) -> None:
        """Move HEAD's branch to `oid` and make index and working tree match it (a `git reset --hard`).

        Rule `repo.detached` when HEAD is not on a branch: pbem never moves a detached HEAD.
        """
        if self.head_branch() is None:
            raise PbemError(
                "repo.detached",
                "HEAD is detached; check out the game branch first",
                hint="git switch main",
                exit_code=USAGE,
            )
        self._commit(oid)
        self.repo.reset(pygit2.Oid(hex=oid), ResetMode.HARD)
