"""How `pbem push` lands a player's commits on the shared branch, and what it says when a remote refuses
(docs/github.md, The one flow; DESIGN §9).

Two ways, one command:

* **Straight onto the branch**: a plain remote (a bare repository with the pbem hook, a Gitea) takes the push
  and its hook judges it.
* **Through a pull request GitHub merges itself**: `main` is protected on GitHub (a required check, no direct
  pushes, branches up to date). The clone says so in `git config pbem.flow pull-request`, or GitHub's refusal of
  a direct push (`GH006: Protected branch update failed`) says it once and the clone remembers it. The commits go
  to the player's own branch `pbem/<seat>`, pbem opens (or finds) the pull request into `main` and asks GitHub to
  merge it with a merge commit once `pbem/verify` passed on its head (auto-merge). With the branch up to date, the
  merge commit's tree is the head's: a transparent merge (DESIGN §3). `--review` opens it without auto-merge.

A refusal never leaves the clone claiming a state the shared game does not have. When the gate judged the
commits and said no (the pbem hook's findings, `pbem/verify` failing on the pull request), they are kept on a
`pbem-saved-<id>` branch and the game branch goes back to the remote's tip. When the refusal says nothing about
the commits (no permission, a protected branch without a token, another hook's refusal), they stay as they are,
unpublished, and one line says what to do; `pbem pull` and `pbem status` say "unpublished" meanwhile.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Callable, Mapping

from pbem.errors import ILLEGAL, USAGE, PbemError
from pbem.services import github, gitstate
from pbem.services.gitstate import Git, Upstream
from pbem.services.workspace import Workspace

FLOW_CONFIG = "pbem.flow"
PULL_REQUEST = "pull-request"
BRANCH_PREFIX = "pbem/"
WAIT = 600.0  # seconds `pbem push` waits for GitHub to merge (the check takes a minute or two on GitHub)
POLL = (1.0, 2.0, 3.0, 5.0)  # seconds between looks at the pull request (then the last, repeated)

_PROTECTED = re.compile(r"GH006|protected branch hook declined|protected branch update failed", re.I)
_PERMISSION = re.compile(r"permission to \S+ denied|permission denied|returned error: 403|not allowed to push|"
                         r"authentication failed|could not read from remote|access denied", re.I)
_VERDICT = re.compile(r"pbem: \S+: REFUSED")


@dataclass
class Landed:
    """What a landing did: one line, the exit code, and whether the shared branch moved under an unmerged pull
    request (the caller replays onto it and tries again)."""

    message: str
    code: int = 0
    moved: bool = False
    merged: bool = False


def pull_request_flow(ws: Workspace) -> bool:
    return (ws.repo.config_value(FLOW_CONFIG) or "").strip() == PULL_REQUEST


def remember_pull_request_flow(ws: Workspace) -> None:
    ws.repo.repo.config[FLOW_CONFIG] = PULL_REQUEST


def refusal(said: str) -> str:
    """What kind of refusal git's output shows: protected (GitHub), permission, verdict (the pbem hook judged
    the commits), hook (another hook), other."""
    if _PROTECTED.search(said):
        return "protected"
    if _VERDICT.search(said):
        return "verdict"
    if _PERMISSION.search(said):
        return "permission"
    if "hook declined" in said:
        return "hook"
    return "other"


def refused(ws: Workspace, up: Upstream, kind: str, said: str, tip: str, theirs: str | None) -> Landed:
    """The one line for a refused push (see the module docstring); for a verdict, the clone goes back to the
    remote's tip and the commits are kept on a branch."""
    if kind == "verdict":
        return Landed(f"not pushed: {up.remote}'s pbem hook refused your commits (its findings below); "
                      f"{set_aside(ws, up, tip, theirs)}\n{said}", ILLEGAL)
    if kind == "permission":
        return Landed(f"not pushed: {up.remote} does not let your account push to it (no write access): ask the "
                      "host to add you (GitHub: Settings → Collaborators and teams, role Write); your commits stay "
                      f"here, unpublished, until `pbem push` works\n{said}", USAGE)
    if kind == "protected":
        return Landed(f"not pushed: {up.where} is a protected branch on GitHub and pbem cannot tell which "
                      f"GitHub repository {up.remote} is: `git config {github.REPO_CONFIG} OWNER/NAME`, then "
                      f"`pbem push` (it opens the pull request)\n{said}", USAGE)
    what = "its hook refused the push" if kind == "hook" else "it refused the push"
    return Landed(f"not pushed: {up.remote} says no ({what}; its lines below): nothing changed here and your "
                  f"commits stay unpublished; tell the host, then `pbem push` again\n{said}", ILLEGAL)


def save(ws: Workspace, oid: str) -> str:
    """Keep my unpublished commits on a branch of their own, `pbem-saved-<id>`, before telling the player to
    reset: a refusal never loses work. Returns the branch name."""
    name = f"pbem-saved-{oid[:10]}"
    ws.repo.update_ref(f"refs/heads/{name}", oid)
    return name


def set_aside(ws: Workspace, up: Upstream, tip: str, theirs: str | None) -> str:
    """Keep `tip` on a `pbem-saved-<id>` branch and put the game branch back at the remote's tip (when the working
    tree holds no uncommitted edits, which a reset would lose). Returns the sentence that says so."""
    saved = save(ws, tip)
    keep = (f"your commits are kept on branch {saved} (`git log -p {up.where}..{saved}`; `git checkout {saved} -- "
            "FILE` takes a file back)")
    if theirs is None:
        return keep
    if ws.worktree_files() != ws.head_files():
        return (f"{keep}; your clone still holds them, because you have uncommitted edits: set those aside "
                f"(`git stash`), then `git reset --hard {up.where}`")
    ws.repo.update_branch_and_worktree(theirs)
    return f"your clone is back at {up.where} ({theirs[:10]}), as the shared game is; {keep}"


def seat_branch(seat: str | None, fingerprint: str) -> str:
    return BRANCH_PREFIX + (seat or f"key-{fingerprint}")


def via_pull_request(ws: Workspace, up: Upstream, tip: str, theirs: str | None, branch: str, title: str, *,
                     review: bool = False, wait: float = 0.0, git: Git = gitstate.run_git,
                     pause: Callable[[float], None] = time.sleep,
                     environ: Mapping[str, str] = os.environ) -> Landed:
    """Push `tip` to the player's own branch, open or find its pull request into the upstream branch, ask GitHub
    to merge it once the check passed (not with `review`), and wait up to `wait` seconds for the merge."""
    remote_url = ws.repo.config_value(f"remote.{up.remote}.url")
    repo = github.repository(remote_url, ws.repo.config_value(github.REPO_CONFIG), environ)
    if repo is None and not review:
        return refused(ws, up, "protected", "", tip, theirs)
    token = github.token(environ, repo.host) if repo is not None else None
    if repo is not None and token is None:
        raise github.no_token(repo, f"{up.where} takes no direct pushes" if not review else "--review")
    pushed = git(["push", "--porcelain", "--force", up.remote, f"{tip}:refs/heads/{branch}"], ws.root)
    if pushed.returncode != 0:
        said = _said(pushed.stdout + pushed.stderr)
        return refused(ws, up, refusal(said), said, tip, theirs)
    if repo is None or token is None:  # a plain remote: the branch is the pull request
        return Landed(f"pushed {tip[:10]} to {up.remote}/{branch} for review: the others read it "
                      f"(`git log -p {up.where}..{up.remote}/{branch}`) and one of them merges it with "
                      f"`git merge --no-ff {up.remote}/{branch}` and `git push` (a transparent merge)")
    client = github.Client(repo, token)
    pull = client.open_pull(branch, up.target) or client.create_pull(
        branch, up.target, title, f"Commits of `{branch}`, landed by `pbem push`: GitHub merges them once the "
        f"check `{github.CHECK}` passed.")
    number, where = int(pull["number"]), f"pull request #{pull['number']} ({pull.get('html_url', repo.slug)})"
    if review:
        return Landed(f"pushed {tip[:10]} to {up.remote}/{branch}: {where} is open for review; it lands when a "
                      f"player merges it with a merge commit once {github.CHECK} passed")
    if not client.auto_merge(pull) and client.merge(number, tip):
        return Landed(f"pushed {tip[:10]} through {where}, merged", merged=True)
    said = f"pushed {tip[:10]} to {up.remote}/{branch}: GitHub merges {where} once {github.CHECK} passes"
    if wait <= 0:
        return Landed(f"{said}; `pbem pull` then brings you up to date")
    return _await(ws, up, client, number, tip, theirs, said, wait, git, pause)


def _await(ws: Workspace, up: Upstream, client: github.Client, number: int, tip: str, theirs: str | None,
           said: str, wait: float, git: Git, pause: Callable[[float], None]) -> Landed:
    """Look at the pull request until GitHub merged it, the check failed, the shared branch moved under it, or
    `wait` seconds passed."""
    deadline = time.monotonic() + wait
    merged = Landed(f"pushed {tip[:10]} through pull request #{number}, merged by GitHub", merged=True)
    for look in range(10_000):
        state = client.pull(number)
        if state.get("merged"):
            return merged
        if state.get("state") == "closed":
            return Landed(f"not pushed: pull request #{number} was closed without a merge; your commits stay "
                          "here, unpublished: `pbem push` opens a new one", ILLEGAL)
        head = (state.get("head") or {}).get("sha")
        if head and head != tip:
            return Landed(f"someone else pushed to {up.remote}'s branch of yours ({head[:10]})", moved=True)
        check = client.check(tip)
        if check is not None and check[0] in ("failure", "error"):
            return Landed(f"not merged: {github.CHECK} failed on pull request #{number} ({check[1] or check[0]}); "
                          f"{set_aside(ws, up, tip, theirs)}", ILLEGAL)
        if gitstate.remote_tip(ws.root, up, git) != theirs:
            if client.pull(number).get("merged"):  # it moved by this very merge, made since the look above
                return merged
            return Landed(f"{up.where} moved while pull request #{number} waited", moved=True)
        if time.monotonic() >= deadline:
            break
        pause(POLL[min(look, len(POLL) - 1)])
    return Landed(f"{said}; it has not yet: `pbem pull` later brings you up to date")


def _said(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.strip())
