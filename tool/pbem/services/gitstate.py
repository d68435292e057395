"""What git is in the middle of, in one place (DESIGN §8 `pbem pull`): every pbem command that opens a player's
clone goes through `guard` (via `Workspace.open`), and `status`/`check` show `behind_line`.

* A merge, rebase, cherry-pick or revert left half done: the way out is git's own `--abort`, then `pbem pull`
  (pbem settles what git would have had to merge: `pbem push` replays a player's own commits, status.yaml is
  computed, never merged). Rule `git.in-progress`.
* A commit made with plain git and no signature on top of the branch: undo it keeping the edits
  (`git reset --soft HEAD~1`), then let `pbem yield` sign it. Rule `signature.missing` (the verifier's rule).
* A clone behind its remote-tracking branch: "origin has 2 new commits: pbem pull". Read from the refs git
  already has (status never touches the network; `pbem pull` and `pbem push` fetch, so does `pbem status
  --fetch`). A clone that has not fetched for a while (STALE_AFTER: the newest of FETCH_HEAD's age, pbem's own
  mark of its last fetch and the remote-tracking ref's last move) is told it may be behind without knowing it.

The upstream of the branch and fetching it are here too, shared by `pbem pull` and `pbem push`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from pbem.store.git import pygit2

from pbem.errors import ILLEGAL, USAGE, PbemError
from pbem.store.repo import GameRepo

if TYPE_CHECKING:  # imported where git is run: `pbem verify` runs none (signal, threading and selectors with it)
    import subprocess

Git = Callable[[Sequence[str], Path], "subprocess.CompletedProcess[str]"]

# git's own marks of an operation left half done (in the git dir), and the command that abandons each
_IN_PROGRESS = (
    ("rebase-merge", "rebase", "git rebase --abort"),
    ("rebase-apply", "rebase", "git rebase --abort"),  # also `git am`; `git rebase --abort` is the common case
    ("MERGE_HEAD", "merge", "git merge --abort"),
    ("CHERRY_PICK_HEAD", "cherry-pick", "git cherry-pick --abort"),
    ("REVERT_HEAD", "revert", "git revert --abort"),
)


def run_git(args: Sequence[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    """The git binary (network, credentials and the remote's hooks are git's business, not ours)."""
    import subprocess

    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise PbemError("push.no-git", f"cannot run git: {exc}", hint="install git") from None


def in_progress(repo: GameRepo) -> tuple[str, str] | None:
    """(operation, the command that aborts it) when git is in the middle of one, else None."""
    if repo.is_bare:
        return None
    git_dir = repo.git_dir
    for mark, operation, abort in _IN_PROGRESS:
        if os.path.exists(os.path.join(git_dir, mark)):
            return operation, abort
    return None


def guard(repo: GameRepo) -> None:
    """Refuse (rule `git.in-progress`, exit 2) to work on a clone where git has a merge or rebase half done:
    say how to leave it. Nothing else is looked at here (cheap: a few file tests)."""
    found = in_progress(repo)
    if found is not None:
        operation, abort = found
        raise PbemError("git.in-progress", f"git is in the middle of a {operation}: run `{abort}`, then "
                        "`pbem pull` (pbem lands your own out-of-turn commits with `pbem push`, never by a "
                        "merge)", exit_code=USAGE)


def unsigned_top(repo: GameRepo) -> str | None:
    """HEAD's id when HEAD is a commit without a signature that is not published yet (not on any
    remote-tracking branch): what `git commit` without `-S` makes. None otherwise."""
    head = repo.head_oid()
    if head is None:
        return None
    if b"\ngpgsig " in repo.raw_commit(head).split(b"\n\n", 1)[0]:
        return None
    for ref in repo.repo.references:
        if ref.startswith("refs/remotes/"):
            target = repo.resolve(ref)
            if target == head or repo.repo.descendant_of(pygit2.Oid(hex=target), pygit2.Oid(hex=head)):
                return None
    return head


UNSIGNED_HINT = "undo it, keeping your edits: `git reset --soft HEAD~1`, then `pbem yield` (it signs)"


# --- the upstream ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Upstream:
    """Where this branch is published: `remote`/`target`, tracked locally as `tracking`."""

    branch: str  # refs/heads/NAME
    remote: str
    target: str  # the branch's name on the remote

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.target}"

    @property
    def where(self) -> str:
        return f"{self.remote}/{self.target}"


def upstream(repo: GameRepo, remote: str | None = None, *, required: bool = True) -> Upstream | None:
    """The branch's upstream from git config (branch.NAME.remote/merge), else `origin` and the same name.
    With `required`, a detached HEAD, an empty repository or a missing remote is an error (exit 2)."""
    branch = repo.head_branch()
    if branch is None or repo.head_oid() is None:
        if not required:
            return None
        raise PbemError("repo.detached" if branch is None else "repo.empty",
                        "HEAD is detached: check out the game branch first (git switch main)" if branch is None
                        else "this repository has no commits yet")
    name = branch[len("refs/heads/"):]
    remote = remote or repo.config_value(f"branch.{name}.remote") or "origin"
    if repo.config_value(f"remote.{remote}.url") is None:
        if not required:
            return None
        raise PbemError("push.no-remote", f"no git remote named {remote!r}: add the shared repository with "
                        f"`git remote add {remote} URL`, or name it with --remote")
    merge = repo.config_value(f"branch.{name}.merge") or branch
    target = merge[len("refs/heads/"):] if merge.startswith("refs/heads/") else merge
    return Upstream(branch, remote, target)


def contains(repo: GameRepo, tip: str, ancestor: str) -> bool:
    """Whether `ancestor` is `tip` or one of its ancestors."""
    return tip == ancestor or bool(repo.repo.descendant_of(pygit2.Oid(hex=tip), pygit2.Oid(hex=ancestor)))


def fetch(repo: GameRepo, up: Upstream, git: Git = run_git) -> str | None:
    """Fetch the remote branch WITHOUT moving the remote-tracking ref (into `refs/pbem/fetched/…`), so the
    caller can first see whether the remote rewrote what was known of it. None when the remote has no such
    branch. Rule `push.fetch-failed` (exit 2) when git cannot reach it."""
    root = Path(repo.workdir)
    listed = _list_remote(up, root, git)
    if listed.returncode != 0:
        raise PbemError("push.fetch-failed", f"cannot reach {up.remote}: {_first_line(listed.stderr)}")
    if not listed.stdout.strip():
        return None
    scratch = f"refs/pbem/fetched/{up.remote}/{up.target}"
    tip = listed.stdout.split()[0]
    _mark_fetched(repo)
    if tip in _local_tips(repo, up, scratch):
        repo.update_ref(scratch, tip)  # nothing new: no fetch (`pbem watch` asks every few seconds)
        return tip
    # --refmap= : no opportunistic update of the remote-tracking ref (it is what the rewrite is judged against)
    fetched = git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--refmap=", up.remote,
                   f"+refs/heads/{up.target}:{scratch}"], root)
    if fetched.returncode != 0:
        raise PbemError("push.fetch-failed", f"cannot fetch {up.where}: {_first_line(fetched.stderr)}")
    return repo.resolve(scratch)


def remote_tip(root: Path, up: Upstream, git: Git = run_git) -> str | None:
    """The remote branch's tip as the remote says it now (`git ls-remote`: no objects fetched); None when it
    has no such branch or cannot be reached."""
    listed = _list_remote(up, root, git)
    fields = listed.stdout.split()
    return fields[0] if listed.returncode == 0 and fields else None


def _list_remote(up: Upstream, root: Path, git: Git) -> subprocess.CompletedProcess[str]:
    return git(["ls-remote", "--heads", up.remote, f"refs/heads/{up.target}"], root)


def _local_tips(repo: GameRepo, up: Upstream, scratch: str) -> set[str]:
    """The commits this clone holds with their whole history for sure: HEAD, the tracking ref, the last fetch."""
    tips = {repo.head_oid()}
    for ref in (up.tracking, scratch):
        try:
            tips.add(repo.resolve(ref))
        except PbemError:
            pass
    return {t for t in tips if t}


def known(repo: GameRepo, up: Upstream) -> str | None:
    """The remote-tracking ref as this clone last knew it (None: never fetched)."""
    try:
        return repo.resolve(up.tracking)
    except PbemError:
        return None


def rewritten(repo: GameRepo, up: Upstream, new: str | None) -> str | None:
    """The commit this clone knew on the remote that the remote's new tip no longer contains (history was
    rewritten: a force push), else None."""
    old = known(repo, up)
    if old is None:
        return None
    if new is None or not contains(repo, new, old):
        return old
    return None


def refuse_rewrite(up: Upstream, old: str, rule: str) -> PbemError:
    """The refusal when the remote rewrote history (rule `pull.rewritten` / `push.rewritten`, exit 1)."""
    return PbemError(rule, f"{up.where} was rewritten: it no longer contains {old[:10]}, which it had before "
                     "(a forced push); pbem builds on no rewritten history: tell the other players and the host "
                     f"(the rewritten branch is at refs/pbem/fetched/{up.remote}/{up.target}: `git log "
                     f"{old[:10]}..refs/pbem/fetched/{up.remote}/{up.target}`)", exit_code=ILLEGAL)


def accept(repo: GameRepo, up: Upstream, new: str) -> None:
    """Record the fetched tip as the remote-tracking ref (after `rewritten` said no)."""
    repo.update_ref(up.tracking, new)


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0].strip() if lines else "git failed"


# --- behind and ahead ------------------------------------------------------------------------------------------

def behind_ahead(repo: GameRepo) -> tuple[Upstream, int, int] | None:
    """(upstream, commits it has that HEAD lacks, commits HEAD has that it lacks), from the refs git already
    has; None without an upstream or a remote-tracking ref."""
    up = upstream(repo, required=False)
    if up is None:
        return None
    theirs = known(repo, up)
    head = repo.head_oid()
    if theirs is None or head is None:
        return None
    ahead, behind = repo.repo.ahead_behind(pygit2.Oid(hex=head), pygit2.Oid(hex=theirs))
    return up, behind, ahead


STALE_AFTER = 3600.0  # seconds without a fetch after which `pbem status` says the remote may have moved
FETCHED_MARK = "pbem/fetched-at"  # in the git dir: touched at every fetch pbem makes (beside the verifier's cache)


def _mark_fetched(repo: GameRepo) -> None:
    path = os.path.join(repo.git_dir, FETCHED_MARK)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a"):
            pass
        os.utime(path)
    except OSError:
        pass  # a read-only git dir: the age is judged from git's own files


def last_fetch(repo: GameRepo, up: Upstream) -> float | None:
    """When this clone last heard from `up`'s remote (seconds since the epoch), as far as its files tell: pbem's
    mark, FETCH_HEAD (a plain `git fetch`), the newest entry of the reflogs of the remote-tracking ref (a fetch
    that moved it) and of the remote's HEAD (`git clone`). None: never."""
    times = []
    for rel in (FETCHED_MARK, "FETCH_HEAD"):
        try:
            times.append(os.path.getmtime(os.path.join(repo.git_dir, rel)))
        except OSError:
            pass
    for ref in (up.tracking, f"refs/remotes/{up.remote}/HEAD"):  # a clone logs only the second
        try:
            times += [float(entry.committer.time) for entry in repo.repo.references[ref].log()]
        except (KeyError, ValueError, pygit2.GitError):
            pass
    return max(times) if times else None


def stale_line(repo: GameRepo, now: float | None = None) -> str | None:
    """"origin was last fetched 3 h ago and may have moved since: pbem pull" when this clone has a remote and
    has not fetched it for STALE_AFTER seconds (or never, once it is the branch's upstream), else None. No
    network."""
    up = upstream(repo, required=False)
    if up is None:
        return None
    when = last_fetch(repo, up)
    if when is None or known(repo, up) is None:
        if repo.config_value(f"branch.{up.branch[len('refs/heads/'):]}.remote") is None:
            return None  # a remote added but never set as the branch's upstream: the game is not published there yet
        return f"{up.remote} was never fetched into this clone and may hold more: pbem pull (or pbem status --fetch)"
    age = (time.time() if now is None else now) - when
    if age < STALE_AFTER:
        return None
    return (f"{up.remote} was last fetched {_age(age)} ago and may have moved since: pbem pull (or pbem status "
            "--fetch)")


def _age(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.0f} h" if hours < 48 else f"{hours / 24:.0f} days"


def refresh(repo: GameRepo, git: Git = run_git) -> str | None:
    """`pbem status --fetch`: fetch the upstream and record it as the remote-tracking ref (as `pbem pull` does,
    refusing a rewritten remote), without touching the branch or the working tree. A line when it could not."""
    up = upstream(repo, required=False)
    if up is None:
        return "no git remote to fetch: the game is only in this clone"
    try:
        theirs = fetch(repo, up, git)
        old = rewritten(repo, up, theirs)
        if old is not None:
            raise refuse_rewrite(up, old, "pull.rewritten")
    except PbemError as exc:
        return f"not fetched: {exc.finding.message}"
    if theirs is not None:
        accept(repo, up, theirs)
    return None


def behind_line(repo: GameRepo, now: float | None = None) -> str | None:
    """"origin has 2 new commits: pbem pull" when this clone is behind what it last fetched; else, when it has
    not fetched for a while, that it may be behind (`stale_line`); else None."""
    found = behind_ahead(repo)
    if found is None or found[1] == 0:
        return stale_line(repo, now)
    up, behind, ahead = found
    what = f"{up.remote} has {behind} new commit{'s' if behind != 1 else ''}"
    if ahead:
        return f"{what} and you have {ahead} unpublished: pbem push (it replays yours on top)"
    return f"{what}: pbem pull"
