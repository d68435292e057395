"""`pbem pull`: fetch the shared branch and fast-forward to it, or say exactly what to do (DESIGN §8).

pbem never merges: what two players did at once lands by `pbem push` replaying the later one's own commits onto
the tip (status.yaml computed, never merged). So `pull` only fast-forwards, and only over a history that
verifies and that did not rewrite what this clone had already fetched. Every other case is one line saying
what to do:

* nothing new: "up to date";
* only my commits are new: `pbem push`;
* both moved: `pbem push` (it replays mine on top of theirs);
* my uncommitted edits touch a file the new commits change: set them aside (`git stash`), pull, take them back;
* the remote rewrote history (a forced push): refused, rule `pull.rewritten`, nothing moved;
* the remote's new commits do not verify: refused, rule `pull.remote-invalid`, nothing moved.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbem.errors import ILLEGAL, PbemError
from pbem.services import gitstate
from pbem.services.gitstate import Git, run_git
from pbem.services.workspace import Workspace
from pbem.files.layout import is_game_path
from pbem.verify.history import verify_history


@dataclass
class PullOutcome:
    """One line for the player and how many commits came in."""

    message: str
    new: int = 0


def pull(ws: Workspace, remote: str | None = None, git: Git = run_git) -> PullOutcome:
    """Fetch the branch's upstream and fast-forward to it (see the module docstring). Refusals raise
    PbemError (exit 1, or 2 for environment errors) and leave branch, tracking ref and working tree as they
    were."""
    repo = ws.repo
    up = gitstate.upstream(repo, remote)
    assert up is not None
    local = repo.head_oid()
    assert local is not None
    theirs = gitstate.fetch(repo, up, git)
    old = gitstate.rewritten(repo, up, theirs)
    if old is not None:
        raise gitstate.refuse_rewrite(up, old, "pull.rewritten")
    if theirs is None:
        return PullOutcome(f"{up.where} does not exist yet: `pbem push` publishes your branch")
    gitstate.accept(repo, up, theirs)
    if theirs == local:
        return PullOutcome(f"up to date with {up.where} ({local[:10]})")
    if gitstate.contains(repo, local, theirs):
        count = _count(ws, local, theirs)
        return PullOutcome(f"nothing new on {up.where}; you have {count} unpublished commit{_s(count)}: "
                           "`pbem push`")
    if not gitstate.contains(repo, theirs, local):
        mine, new = _count(ws, local, theirs), _count(ws, theirs, local)
        return PullOutcome(f"{up.where} has {new} new commit{_s(new)} and you have {mine} unpublished: "
                           "`pbem push` replays yours on top of them, re-signed (nothing to merge by hand)")
    new = _count(ws, theirs, local)
    published = verify_history(repo, theirs, cached=True)
    findings = published.findings()
    if findings:
        first = findings[0]
        raise PbemError.from_finding(replace(first, rule="pull.remote-invalid", message=(
            f"{up.where} does not verify ({first.rule}: {first.message}); not pulled: tell the other players "
            "and the host"), hint=None), exit_code=ILLEGAL)
    clash = _overwritten(ws, local, theirs)
    if clash:
        raise PbemError("pull.dirty", f"your uncommitted edits to {', '.join(clash)} would be overwritten by "
                        f"{up.where}: `git stash`, `pbem pull`, then `git stash pop`", exit_code=ILLEGAL)
    done = git(["merge", "--ff-only", "--quiet", theirs], ws.root)
    if done.returncode != 0:
        raise PbemError("pull.failed", f"git could not fast-forward to {up.where}: "
                        f"{gitstate._first_line(done.stderr + done.stdout)}", exit_code=ILLEGAL)
    return PullOutcome(f"pulled {new} new commit{_s(new)} from {up.where}: now at {theirs[:10]} "
                       "(`pbem status` says what you owe)", new)


def _count(ws: Workspace, tip: str, hidden: str) -> int:
    """Commits reachable from `tip` and not from `hidden` (git's own count, no walk of the whole history)."""
    from pbem.store.git import pygit2

    return int(ws.repo.repo.ahead_behind(pygit2.Oid(hex=tip), pygit2.Oid(hex=hidden))[0])


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _overwritten(ws: Workspace, local: str, theirs: str) -> list[str]:
    """Game files I edited (not committed) that the incoming commits change too."""
    head = ws.head_files()
    edited = {p for p, data in ws.worktree_files().items() if head.get(p) != data}
    edited |= {p for p in head if is_game_path(p) and not (ws.root / p).exists()}
    if not edited:
        return []
    incoming = ws.repo.tree_files(theirs)
    current = ws.repo.tree_files(local)
    return sorted(p for p in edited if incoming.get(p, (None,))[0] != current.get(p, (None,))[0])
