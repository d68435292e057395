"""Self-hosted enforcement: `pbem hook install` and the pre-receive check it installs (DESIGN §9).

git runs REPO.git/hooks/pre-receive once per push, before any ref moves, with one line `OLD NEW REF` per ref
update on stdin. The pushed objects wait in a quarantine directory named by GIT_QUARANTINE_PATH (and
GIT_OBJECT_DIRECTORY); libgit2 does not read those variables unless told, so the check adds the quarantine to
the object database by hand. What the hook prints on stderr the pusher reads as `remote:` lines; exit 1 refuses
the whole push and no ref moves.

The game branch is named at install (`main` unless `pbem hook install --branch NAME`) and kept in the
repository's own config (`pbem.branch`), which a pusher cannot change. It is guarded by that name, whatever the
repository's HEAD says: `git init --bare` without `-b` leaves HEAD naming `master`, and a hook that guarded HEAD's
branch would let a force-push take back the turns landed on `main`.

Per push:
  1. each ref update meets the ref policy first (services.refpolicy: the game branch only moves forward and is
     never deleted, tags never move, other branches are free, other refs are refused); the new tip must be a
     commit (an annotated tag is peeled to its commit);
  2. the commits new to this repository (not reachable from any of its refs) are verified, each against the
     whole history before it, and their findings refuse the push; findings of commits it already holds do not
     (as `pbem verify BASE..HEAD`). Each new commit is judged once for the whole push, whatever the number of
     refs that bring it: 200 refs to one commit cost one verification.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, TextIO

from pbem.store.git import pygit2

import pbem
from pbem.errors import ILLEGAL, USAGE, Finding, PbemError
from pbem import text as escape
from pbem.services.refpolicy import ZERO, policy_finding
from pbem.services.report import findings_text
from pbem.store.repo import GameRepo
from pbem.verify import cache as verified_cache
from pbem.verify.history import HistoryResult, turn_sequence, verify_history

HOOK_MARK = "# pbem pre-receive hook"
BRANCH_KEY = "pbem.branch"  # git config of the guarded repository: the game branch's short name
DEFAULT_BRANCH = "main"


@dataclass(frozen=True)
class RefUpdate:
    """One line of pre-receive's standard input."""

    old: str
    new: str
    ref: str


@dataclass
class RefVerdict:
    """What the check found about one ref update."""

    update: RefUpdate
    new_commits: int = 0
    findings: list[Finding] = field(default_factory=list)
    same_as: str | None = None  # the ref of this push whose identical verdict was printed in full already

    def text(self) -> str:
        """The lines the pusher reads (git prefixes each with `remote: `)."""
        ref, count = escape.terminal(self.update.ref), self.new_commits
        if self.update.new == ZERO and not self.findings:
            return f"pbem: {ref}: deleted\n"
        if not self.findings:
            return f"pbem: {ref}: ok, {count} new commit{'s' if count != 1 else ''} verified\n"
        if self.same_as is not None:
            return (f"pbem: {ref}: REFUSED, the same {len(self.findings)} finding(s) as "
                    f"{escape.terminal(self.same_as)} above; nothing was changed\n")
        body = findings_text(self.findings, self.new_commits).splitlines()[:-1]  # our own closing line instead
        return "\n".join([*body, f"pbem: {ref}: REFUSED, {len(self.findings)} finding(s) in "
                                  f"{self.new_commits} new commit(s); nothing was changed"]) + "\n"


def hook_script(python: str | None = None, package_root: str | None = None, stage: str = "pre-receive") -> str:
    """The pre-receive hook (or, `stage`, the post-receive hook that records the gate's clock: services.gateclock):
    a shell script that runs `pbem hook STAGE` with the interpreter (and the pbem package) that installed it, so
    it works without PATH or a virtualenv being active."""
    python = python or sys.executable
    package_root = package_root or str(Path(pbem.__file__).resolve().parent.parent)
    code = "import sys; from pbem.cli import main; main()"
    return "\n".join([
        "#!/bin/sh",
        f"{HOOK_MARK} {pbem.__version__}: " + ("records when the game branch first held each commit."
                                               if stage == "post-receive" else
                                               "refuses a push whose new commits fail `pbem verify`."),
        "# Written by `pbem hook install`; run that again after moving or upgrading pbem.",
        f"PYTHONPATH={shlex.quote(package_root)}${{PYTHONPATH:+:$PYTHONPATH}}",
        "export PYTHONPATH",
        f"exec {shlex.quote(python)} -c {shlex.quote(code)} hook {stage}",
        "",
    ])


@dataclass(frozen=True)
class Installed:
    """What `install` did: the hook's path, the branch it guards, and warnings for the host."""

    hook: Path
    branch: str
    warnings: tuple[str, ...] = ()


def install(path: Path, force: bool = False, branch: str = DEFAULT_BRANCH) -> Installed:
    """Write the pre-receive hook into the repository at `path` (mode 0755) and record the game branch it guards
    (`pbem.branch` in the repository's config).

    Rules: `hook.no-repo` when `path` is no git repository, `hook.exists` when a pre-receive hook that pbem did
    not write is there (replace it with `force`), `hook.bad-branch` when `branch` is no valid branch name. A hook
    pbem wrote is replaced (an upgrade). Warns when HEAD names another branch that does not exist (clones would
    check out nothing)."""
    try:
        repo = pygit2.Repository(str(path))
    except (pygit2.GitError, KeyError):
        raise PbemError("hook.no-repo", f"{path} is not a git repository",
                        hint="make the shared repository with `git init --bare REPO.git`", exit_code=USAGE) from None
    ref = branch_ref(branch)
    hooks = _hooks_dir(repo)
    target = hooks / "pre-receive"
    if target.exists() and not force:
        current = target.read_text(errors="replace")
        if HOOK_MARK not in current:
            raise PbemError("hook.exists", f"{target} exists and was not written by pbem",
                            hint="move it away, or replace it with `pbem hook install --force`", exit_code=USAGE)
    hooks.mkdir(parents=True, exist_ok=True)
    from pbem.services import gateclock  # the gate's clock: post-receive records what landed, from now on

    gateclock.install(GameRepo.open(repo.path), hooks, hook_script(stage="post-receive"), ref, force, HOOK_MARK)
    temporary = target.with_name(".pre-receive.pbem-new")
    temporary.write_text(hook_script())
    temporary.chmod(0o755)
    short = ref.removeprefix("refs/heads/")
    repo.config[BRANCH_KEY] = short
    os.replace(temporary, target)
    return Installed(target, short, tuple(_head_warnings(repo, path, ref)))


def branch_ref(branch: str) -> str:
    """`refs/heads/NAME` for a branch's short name (rule `hook.bad-branch` when git would refuse the name)."""
    name = branch.removeprefix("refs/heads/")
    ref = f"refs/heads/{name}"
    if not name or not pygit2.reference_is_valid_name(ref):
        raise PbemError("hook.bad-branch", f"`{escape.terminal(branch)}` is no valid branch name",
                        hint="give the game branch's short name, e.g. `--branch main`", exit_code=USAGE)
    return ref


def _head_warnings(repo: pygit2.Repository, path: Path, ref: str) -> list[str]:
    """HEAD naming a branch that does not exist (plain `git init --bare` names `master`): clones of the server
    then check out nothing, and a player may play on a branch nobody guards."""
    head = _head_target(repo)
    if head is None or head == ref or head in repo.references:
        return []
    return [f"{path}: HEAD names {head}, which does not exist; the hook guards {ref}. Clones will check out "
            f"nothing: run `git -C {shlex.quote(str(path))} symbolic-ref HEAD {ref}`"]


def _head_target(repo: pygit2.Repository) -> str | None:
    try:
        head = repo.lookup_reference("HEAD")
    except KeyError:  # pragma: no cover - git always has HEAD
        return None
    return str(head.target) if head.type == pygit2.enums.ReferenceType.SYMBOLIC else None


def guarded_branch(repo: GameRepo) -> str:
    """The ref of the game branch this repository's hook guards (`pbem.branch`, else `main`)."""
    try:
        configured = str(repo.repo.config[BRANCH_KEY])
    except KeyError:
        configured = DEFAULT_BRANCH
    return branch_ref(configured)


def _hooks_dir(repo: pygit2.Repository) -> Path:
    """Where git looks for hooks: core.hooksPath (relative to where hooks run) or GIT_DIR/hooks."""
    git_dir = Path(repo.path)
    try:
        configured = str(repo.config["core.hooksPath"])
    except KeyError:
        return git_dir / "hooks"
    where = Path(os.path.expanduser(configured))
    run_dir = git_dir if repo.is_bare or repo.workdir is None else Path(repo.workdir)
    return where if where.is_absolute() else run_dir / where


def parse_updates(text: str) -> list[RefUpdate]:
    """pre-receive's standard input: `OLD NEW REF` per line (rule `hook.bad-input`)."""
    updates = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3 or not all(len(p) == 40 for p in parts[:2]):
            raise PbemError("hook.bad-input", f"line {number} of the ref updates is not `OLD NEW REF`: {line!r}",
                            hint="git gives these lines to a pre-receive hook on standard input")
        updates.append(RefUpdate(*parts))
    return updates


def open_pushed(git_dir: str | os.PathLike[str], env: Mapping[str, str]) -> GameRepo:
    """The receiving repository, with the pushed objects readable: git keeps them in a quarantine directory
    until every hook agreed, and libgit2 only sees it when added as an alternate."""
    repo = GameRepo.open(git_dir)
    quarantine = env.get("GIT_QUARANTINE_PATH") or env.get("GIT_OBJECT_DIRECTORY")
    if quarantine:
        repo.add_alternate(os.path.abspath(os.path.join(git_dir, quarantine)))
    return repo


def check_updates(repo: GameRepo, updates: list[RefUpdate]) -> list[RefVerdict]:
    """Judge each ref update against the repository as it is before the push (see the module docstring): the
    policy per ref, then the commits new to the server, each verified once for the whole push."""
    game = guarded_branch(repo)
    verdicts = [RefVerdict(update) for update in updates]
    tips = {id(v): _policy(repo, v.update, game, v) for v in verdicts}
    judge = _PushJudge(repo, _ref_tips(repo), [tip for tip in tips.values() if tip is not None])
    for verdict in verdicts:
        tip = tips[id(verdict)]
        if tip is not None:
            verdict.new_commits, findings, verdict.same_as = judge.findings(tip, verdict.update.ref)
            if verdict.update.ref == game:
                # on arrival on the game branch, even of commits another branch brought before (services.gateclock)
                findings = _with_deadlines(repo, findings, verdict.update.old, tip)
            verdict.findings.extend(findings)
    return verdicts


def _policy(repo: GameRepo, update: RefUpdate, game: str, verdict: RefVerdict) -> str | None:
    """The ref policy's refusal of `update` into `verdict` (services.refpolicy); the commit to verify when the
    policy lets it through and it brings one."""
    tip = None
    if update.new != ZERO:
        try:
            tip = repo.resolve(update.new)
        except PbemError:
            verdict.findings.append(Finding("hook.not-a-commit", f"{update.ref} would point at {update.new[:10]}, "
                                            "which is no commit"))
            return None
    refusal = policy_finding(update.ref, update.old, update.new, game,
                             lambda: tip is not None and _contains(repo, tip, update.old))
    if refusal is not None:
        verdict.findings.append(refusal)
        return None
    return tip


class _PushJudge:
    """The verification of one push, shared by its refs: each distinct new tip is verified at most once, the
    tips that bring the most commits first, and a tip that lies on the turns of a tip verified before takes its
    commits' verdicts from there (a commit's verdict depends only on the turns before it, DESIGN §3 History), so
    every new commit is judged once."""

    def __init__(self, repo: GameRepo, existing: list[str], tips: list[str]) -> None:
        self.repo = repo
        self.results: list[tuple[HistoryResult, dict[str, int]]] = []  # verified, with its turns' positions
        self.new = {tip: set(_reachable(repo, tip, existing)) for tip in dict.fromkeys(tips)}  # each walked once
        self.judged = {tip: self._judged(tip, self.new[tip]) if self.new[tip] else []
                       for tip in sorted(self.new, key=lambda t: -len(self.new[t]))}
        self.first: dict[str, str] = {}  # tip -> the first ref that printed its verdict

    def findings(self, tip: str, ref: str) -> tuple[int, list[Finding], str | None]:
        """How many commits `tip` brings that the server lacks, their findings, and the ref an identical
        verdict was printed for already (None for the first)."""
        first = self.first.setdefault(tip, ref)
        return len(self.new[tip]), list(self.judged[tip]), None if first == ref else first

    def _judged(self, tip: str, new: set[str]) -> list[Finding]:
        for result, position in self.results:
            if tip in position and self._same_turns(tip, result, position[tip]):
                return result.findings(new)
        try:
            # the state kept after the last clean push (verify.cache, in the bare repository): a push of one
            # turn on a long game costs one turn
            result = verify_history(self.repo, tip, cached=True, statuses=False)
        except PbemError as exc:
            return [exc.finding]
        self.results.append((result, {oid: i for i, oid in enumerate(result.sequence)}))
        return result.findings(new)

    def _same_turns(self, tip: str, result: HistoryResult, at: int) -> bool:
        """Whether the turns to `tip` are those `result` judged up to it (its own walk back from `tip` reaches
        the same turns, however far back it needs to go)."""
        own, findings = turn_sequence(self.repo, tip, verified_cache.kept(self.repo.git_dir).__contains__)
        return not findings and bool(own) and result.sequence[max(at + 1 - len(own), 0):at + 1] == own[-(at + 1):]


def _with_deadlines(repo: GameRepo, found: list[Finding], old: str, tip: str) -> list[Finding]:
    """The verifier's findings, then the gate's deadline check of what arrives on the game branch (a commit whose
    tree the verifier refused already cannot be read for it, and needs no second refusal)."""
    try:
        return [*found, *_deadlines(repo, old, tip)]
    except PbemError as exc:
        return found or [exc.finding]


def _deadlines(repo: GameRepo, old: str, tip: str) -> list[Finding]:
    """An nmr, forfeit or lost-key seat landing on the game branch before the absent player's deadline, by this
    gate's own record of when it accepted each commit (services.deadlines, services.gateclock); the commits the
    push puts on the game branch count as accepted now, wherever else they were pushed before."""
    from datetime import datetime, timezone

    from pbem.services import gateclock
    from pbem.services.deadlines import nmr_findings

    arriving = gateclock.landed(repo, old, tip)
    clock = gateclock.hook_clock(repo.repo.path, datetime.now(timezone.utc), arriving)
    return nmr_findings(repo, arriving, clock)


def _ref_tips(repo: GameRepo) -> list[str]:
    """The commits the repository's refs point at before the push (tags peeled; other objects skipped)."""
    tips = []
    for name in repo.repo.references:
        try:
            tips.append(str(repo.repo.references[name].peel(pygit2.Commit).id))
        except (pygit2.GitError, ValueError, KeyError):
            continue
    return tips


def _contains(repo: GameRepo, tip: str, old: str) -> bool:
    return tip == old or bool(repo.repo.descendant_of(pygit2.Oid(hex=tip), pygit2.Oid(hex=old)))


def _reachable(repo: GameRepo, tip: str, hidden: list[str]) -> list[str]:
    """Commits reachable from `tip` but from none of `hidden` (git rev-list TIP --not HIDDEN)."""
    walker = repo.repo.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    for oid in hidden:
        walker.hide(pygit2.Oid(hex=oid))
    return [str(c.id) for c in walker]


def pre_receive(stdin: TextIO, stderr: TextIO, env: Mapping[str, str] | None = None) -> int:
    """The hook's body: read the ref updates, judge them, print the verdicts; 0 accepts the push, 1 refuses it."""
    env = os.environ if env is None else env
    updates = parse_updates(stdin.read())
    repo = open_pushed(env.get("GIT_DIR") or ".", env)
    verdicts = check_updates(repo, updates)
    for verdict in verdicts:
        stderr.write(verdict.text())
    refused = any(v.findings for v in verdicts)
    if refused:
        stderr.write("pbem: push refused: fix the commits above (`pbem verify` shows the same), then push again\n")
    return ILLEGAL if refused else 0


def post_receive(stdin: TextIO, stderr: TextIO, env: Mapping[str, str] | None = None) -> int:
    """The post-receive hook's body: record when the game branch first held each commit (services.gateclock)."""
    from datetime import datetime, timezone

    from pbem.services import gateclock

    env = os.environ if env is None else env
    updates = parse_updates(stdin.read())
    repo = GameRepo.open(env.get("GIT_DIR") or ".")
    for line in gateclock.post_receive(repo, repo.repo.path, guarded_branch(repo),
                                       [(u.old, u.new, u.ref) for u in updates], datetime.now(timezone.utc)):
        stderr.write(line + "\n")
    return 0
