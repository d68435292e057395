"""`pbem push`: publish my unpublished commits, first rebasing them when another player's commit landed first
(DESIGN §4.7, §8).

Out of turn, several players may commit on the same state: each settling what he owes (a dice contribution, a
reveal, the escrow's signature, a sealed input, a press message). The first push wins; the others' commits no
longer sit on the remote's tip. `push` then recreates each of my commits on top of the remote's: the same
changes (merged file by file, line by line, and key by key for YAML mappings), status.yaml computed again as
`pbem yield` would (never merged), signed again with my key, judged as the verifier will, and only then pushed
with git. Files made out of turn carry their author in their path (DESIGN §2, §4.9), so two players' work lands
side by side. If the changes overlap, if a commit is not mine, or if anything would not verify, it explains what
to do and changes neither branch nor working tree; a commit it cannot replay is kept on a `pbem-saved-<id>`
branch the message names, so following its advice (`git reset --hard origin/main`) loses nothing.

Where the shared branch takes no direct pushes (GitHub's protected `main`), the commits land through the player's
own branch and a pull request GitHub merges (services/landing.py); a refusal is said as what it is there too.

Never a forced push to the shared branch: when someone pushed between our fetch and our push, git refuses and we
fetch and replay again (MAX_TRIES), after a short pause of random length: when every player's `pbem watch`
reveals at the same moment, the pushes that lost the race spread out instead of colliding again. A remote that no longer contains
what this clone had fetched was rewritten: refused (`push.rewritten`, services/gitstate.py).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import random
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from pbem.store.git import pygit2

from pbem.crypto import sshsig
from pbem.errors import ILLEGAL, Finding, PbemError
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping
from pbem.protocol.model import Status
from pbem.services import gitstate, landing, left_out
from pbem.services.landing import save
from pbem.services.gitstate import Git, run_git
from pbem.services.workspace import Identity, Workspace
from pbem.store.commits import parse_commit
from pbem.files.layout import STATUS
from pbem.files.readers import read_status
from pbem.verify.history import verify_history
from pbem.protocol.control import expected_after, expected_start, who
from pbem.protocol.verified import Verified
from pbem.verify.commit import judge

Files = dict[str, bytes]


@dataclass
class PushOutcome:
    """What happened: one line for the player, the findings that stopped the push, and the exit code."""

    message: str
    findings: list[Finding] = field(default_factory=list)
    code: int = 0
    rebased: int = 0  # how many of my commits were recreated on top of the remote's


MAX_TRIES = 8  # another player may push between our fetch and our push: fetch and replay again, a few times
RETRY_PAUSE = 0.25  # seconds: the pause before try n is random, up to RETRY_PAUSE * 2**n (at most MAX_PAUSE)
MAX_PAUSE = 4.0


def push(ws: Workspace, me: Identity | Callable[[], Identity], remote: str | None = None,
         git: Git = run_git, pause: Callable[[float], None] = time.sleep, *, review: bool = False,
         wait: float = 0.0, environ: Mapping[str, str] = os.environ) -> PushOutcome:
    """Fetch the remote branch; push my commits, replayed onto it when it moved (see the module docstring),
    straight onto it or through a pull request GitHub merges (services/landing.py; `review`: opened for review,
    not merged by GitHub; `wait`: seconds to wait for GitHub's merge). `me` may be a loader: the key is needed
    only to re-sign and to name my branch. Never a forced push to the shared branch: git refuses a push that is
    not a fast-forward of the remote, and then this pauses, fetches and replays again (at most MAX_TRIES
    times)."""
    repo = ws.repo
    up = gitstate.upstream(repo, remote)
    assert up is not None
    where = up.where
    local = repo.head_oid()
    assert local is not None
    identity: Identity | None = me if isinstance(me, Identity) else None

    def mine() -> Identity:
        nonlocal identity
        if identity is None:
            identity = me() if callable(me) else me
        return identity

    dropped = ""  # commits left out by a replay that went on through a pull request
    for attempt in range(MAX_TRIES):
        if attempt:
            pause(random.uniform(0, min(MAX_PAUSE, RETRY_PAUSE * 2 ** attempt)))
        theirs = gitstate.fetch(repo, up, git)
        old = gitstate.rewritten(repo, up, theirs)
        if old is not None:
            raise gitstate.refuse_rewrite(up, old, "push.rewritten")
        if theirs is not None:
            gitstate.accept(repo, up, theirs)
        if theirs == local:
            return PushOutcome(f"nothing to push: {where} is at your HEAD {local[:10]}")
        if theirs is not None and gitstate.contains(repo, theirs, local):
            return PushOutcome(f"nothing to push: {where} is ahead of you; `pbem pull` brings you up to date")
        tip, rebased, race = local, 0, left_out.Race()
        if theirs is not None and not gitstate.contains(repo, local, theirs):
            tip, rebased, race = rebase(ws, mine(), local, theirs, where)
        unsent = "\n".join(filter(None, (dropped, _unsent(ws, mine, local, race))))
        if unsent and tip == theirs:  # every commit of mine was left out: nothing left to push
            repo.update_branch_and_worktree(tip)
            return _said(unsent, PushOutcome(f"your clone is at {where} ({tip[:10]}), as the shared game is"))
        findings = _new_findings(ws, tip, theirs)
        if findings:
            return PushOutcome(f"not pushed: your commits do not verify; fix them (`pbem verify {where}..HEAD`) "
                               "and push again", findings, ILLEGAL)
        if not (review or landing.pull_request_flow(ws)):
            done = git(["push", "--porcelain", up.remote, f"{tip}:refs/heads/{up.target}"], ws.root)
            if done.returncode == 0:
                repo.update_ref(up.tracking, tip)
                if rebased or unsent:
                    repo.update_branch_and_worktree(tip)
                    return _said(unsent, PushOutcome(f"{where} had moved: rebased and re-signed {rebased} commit(s) "
                                                     f"of yours onto it, pushed {tip[:10]}"
                                                     f"{left_out.redated_line(race)}{_now(ws)}", rebased=rebased))
                return PushOutcome(f"pushed {tip[:10]} to {where}")
            if gitstate.remote_tip(ws.root, up, git) != theirs:
                continue  # someone pushed between our fetch and our push: replay onto it
            said = "\n".join(line for line in (done.stderr + done.stdout).splitlines() if line.strip())
            kind = landing.refusal(said)
            if kind != "protected":
                landed = landing.refused(ws, up, kind, said, tip, theirs)
                return _said(unsent, PushOutcome(landed.message, code=landed.code))
            landing.remember_pull_request_flow(ws)  # GitHub's protected main: from now on, pull requests
        if rebased or unsent:
            repo.update_branch_and_worktree(tip)
            local, dropped = tip, unsent
        branch = _branch(ws, mine(), tip)
        landed = landing.via_pull_request(ws, up, tip, theirs, branch, f"{branch[len('pbem/'):]}: "
                                          f"{_subject(ws, tip)}", review=review, wait=wait, git=git, pause=pause,
                                          environ=environ)
        if landed.moved:
            continue
        if landed.merged:
            from pbem.services.pull import pull

            return _said(unsent, PushOutcome(f"{landed.message}; {pull(Workspace.open(ws.root), remote, git).message}",
                                             rebased=rebased))
        return _said(unsent, PushOutcome(landed.message, code=landed.code, rebased=rebased))
    return PushOutcome(f"not pushed: {where} kept moving while pbem replayed your commits onto it ({MAX_TRIES} "
                       "tries); nothing changed here: `pbem push` again", [], ILLEGAL)


def _said(unsent: str, outcome: PushOutcome) -> PushOutcome:
    """`outcome` told after the lines of my press not sent, if any: then the push did not do all it was asked
    (exit 1), though what could land did."""
    if not unsent:
        return outcome
    return replace(outcome, message=f"{unsent}\n{outcome.message}", code=outcome.code or ILLEGAL)


def _now(ws: Workspace) -> str:
    """The game as it stands after a replay onto the remote (what `pbem yield` printed came before it)."""
    from pbem.render.status_screen import control_text

    try:
        head = Workspace.open(ws.root).head()
    except PbemError:
        return ""
    status = head.status if head is not None else None
    if status is None:
        return ""
    if status.over:
        return "; now the game is over"
    return f"; now control: {control_text(status, None)}, firm: {status.firm} (`pbem status` for the rest)"


def _branch(ws: Workspace, me: Identity, tip: str) -> str:
    """My own branch on the remote: `pbem/<seat>`, or before I hold a seat `pbem/key-<12 hex digits>`."""
    last = verify_history(ws.repo, tip, cached=True).last
    seat = who(last.game, me.public) if last is not None else None
    return landing.seat_branch(seat, hashlib.sha256(me.public.blob()).hexdigest()[:12])


def _new_findings(ws: Workspace, tip: str, published: str | None) -> list[Finding]:
    """The findings of the commits I would publish, each judged against the whole history before it (from the
    verification kept for the published part: a push costs the new commits, not the whole game)."""
    hidden = set(ws.repo.reachable(published)) if published else set()
    new = set(ws.repo.reachable(tip)) - hidden
    return verify_history(ws.repo, tip, cached=True).findings(new)


# --- rebasing ------------------------------------------------------------------------------------------------

def rebase(ws: Workspace, me: Identity, local: str, onto: str, where: str) -> tuple[str, int, left_out.Race]:
    """Recreate my commits since the fork point on top of `onto`, re-signed; returns (new tip, how many, what
    became of what could not land as it was: press dated again with the step open now, commits left out,
    services/left_out.py).

    Refuses (rule `push.*`, exit 1, nothing changed) when a commit is not mine or is a merge, when the working
    tree holds uncommitted edits, when the remote does not verify, or when the changes overlap."""
    repo = ws.repo
    base = repo.repo.merge_base(pygit2.Oid(hex=local), pygit2.Oid(hex=onto))
    if base is None:
        raise _refuse("push.unrelated", f"{where} and your branch share no history: they are different games")
    mine = _own_commits(ws, me, local, str(base))
    if ws.worktree_files() != ws.head_files():
        raise _refuse("push.dirty", f"{where} moved and your commits must be rebased, but you have edits not "
                      "committed: commit them (`pbem yield`) or set them aside (`git stash`), then `pbem push`")
    published = verify_history(repo, onto, cached=True)
    if published.findings():
        first = published.findings()[0]
        raise _refuse("push.remote-invalid", f"{where} does not verify ({first.rule}: {first.message}); tell the "
                      "other players before building on it")
    head = published.last
    assert head is not None
    parent, parent_files = onto, _files(ws, onto)
    planned: list[tuple[Files, str, tuple[str, str]]] = []
    race = left_out.Race()
    for oid in mine:
        old_parent = _files(ws, repo.parents(oid)[0])
        old = _files(ws, oid)
        firm = head.status.firm if head.status is not None else None  # press is dated with the step open now
        try:
            files = _apply(old_parent, old, parent_files, oid, where)
            files, written, messages = left_out.redate(parent_files, files, firm)
        except PbemError as exc:
            saved = save(ws, local)
            exc.finding = replace(exc.finding, message=exc.finding.message + f" (your work is kept on branch "
                                  f"{saved})")
            raise
        files, status, effect = _with_status(ws, head, files, old, me, parent_files)
        changed = {p for p in set(files) | set(parent_files) if files.get(p) != parent_files.get(p)}
        findings, judged = judge(head, ws.game_of(files), changed, me.public)
        unsent = left_out.leave_out(oid, old_parent, old, findings, messages, written, firm)
        if unsent is not None:  # not sent, kept, said (services/left_out.py)
            race.unsent.append(unsent)
            continue
        head = judged
        if written is not None and firm is not None:
            race.redated.append(left_out.Redated(written, firm, len(messages)))
        if findings:
            first = findings[0]
            saved = save(ws, local)
            raise _refuse("push.rebase-illegal", f"your commit {oid[:10]} ({_subject(ws, oid)}) is no longer "
                          f"legal on top of {where}, which moved on meanwhile ({first.rule}: {first.message}); "
                          f"your work is kept on branch {saved} (`git show {saved}`): `git reset --hard {where}`, "
                          f"then `pbem status` says what you owe now (your files: `git checkout {saved} -- "
                          f"{' '.join(sorted(_changed(old_parent, old)))}`)")
        raw = parse_commit(repo.raw_commit(oid))
        ident = raw.author_ident
        message = _with_effect(raw.message.decode("utf-8", "replace"), effect)
        planned.append((files, _message(message, status), (ident.name, ident.email)))
        parent_files = files
    now = int(time.time())
    for files, message, author in planned:
        parent = repo.commit_tree(files, [parent], message, me.signer, author, now)
    return parent, len(planned), race


def _unsent(ws: Workspace, me: Callable[[], Identity], local: str, race: left_out.Race) -> str:
    """The lines for my commits the replay left out ("" when none), each kept on a branch it names."""
    if not race.unsent:
        return ""
    saved = save(ws, local)
    return "\n".join(left_out.unsent_line(u, saved, me()) for u in race.unsent)


def _subject(ws: Workspace, oid: str) -> str:
    message = parse_commit(ws.repo.raw_commit(oid)).message.decode("utf-8", "replace").strip()
    return message.splitlines()[0] if message else "no message"


def _changed(before: Files, after: Files) -> set[str]:
    return {p for p in set(before) | set(after) if p != STATUS and before.get(p) != after.get(p)}


def _refuse(rule: str, message: str) -> PbemError:
    return PbemError(rule, message, exit_code=ILLEGAL)


def _own_commits(ws: Workspace, me: Identity, local: str, base: str) -> list[str]:
    """My unpublished commits, oldest first; each must be a plain commit signed by my key."""
    chain: list[str] = []
    oid = local
    while oid != base:
        parents = ws.repo.parents(oid)
        if len(parents) != 1:
            raise _refuse("push.merge", f"your unpublished commit {oid[:10]} is a merge or a root: rebase by hand "
                          "(git rebase), then `pbem push`")
        raw = parse_commit(ws.repo.raw_commit(oid))
        signer = None
        if raw.signature is not None:
            try:
                signer = sshsig.verify(raw.signature, raw.signed_payload())
            except PbemError:
                signer = None
        if signer is None or not signer.same_key(me.public):
            raise _refuse("push.not-mine", f"your unpublished commit {oid[:10]} is not signed by your key, so "
                          "pbem cannot re-sign it: ask its signer to push it, or drop it (git reset)")
        chain.append(oid)
        oid = parents[0]
    chain.reverse()
    return chain


def _files(ws: Workspace, oid: str) -> Files:
    return {path: ws.repo.read_blob(blob) for path, (blob, _mode) in ws.repo.tree_files(oid).items()}


def _apply(base: Files, mine: Files, theirs: Files, oid: str, where: str) -> Files:
    """`theirs` with my commit's changes (base -> mine) merged in; status.yaml is computed afterwards."""
    out = dict(theirs)
    for path in sorted(set(base) | set(mine)):
        if path == STATUS or base.get(path) == mine.get(path):
            continue
        try:
            merged = merge_file(path, base.get(path), mine.get(path), theirs.get(path))
        except MergeConflict:
            raise _refuse("push.conflict", f"{where} changed {path} where your commit {oid[:10]} changes it too: "
                          f"look at their commits (`git log -p HEAD..{where}`), then `git reset --hard {where}` "
                          "and redo your part (`pbem status` says what you owe)") from None
        if merged is None:
            out.pop(path, None)
        else:
            out[path] = merged
    return out


def _with_status(ws: Workspace, head: Verified, files: Files, old: Files,
                 me: Identity, parent: Files | None = None) -> tuple[Files, Status | None, str]:
    """status.yaml as `pbem yield` (or `pbem start`) would write it on the new parent, keeping my note; and the
    words `pbem sign` puts in its message for what the commit's last signatures do now (empty when none)."""
    effect = ""
    if STATUS not in old:
        files.pop(STATUS, None)
        return files, None, effect
    try:
        written = read_status(old[STATUS])
    except PbemError:
        written = None
    game = ws.game_of(files)
    if head.started:
        player = who(head.game, me.public) or ""
        signed = {p for p in files if p.startswith("agreements/") and files.get(p) != (parent or {}).get(p)}
        if signed:  # my signature may be the last one now, on top of another signer's (DESIGN §4.8, §4.9)
            from pbem.services.agreements import completion

            effect = completion(ws, head, files, player, signed)
            game = ws.game_of(files)
        status = expected_after(head, game, player, written.note if written else "")[1]
    else:
        if written is None or written.control is None:
            return files, None, effect  # the judge names what is wrong with it
        status = expected_start(game, written.control)[1]
    files[STATUS] = dump_mapping(status.to_data()).encode()
    return files, status, effect


def _with_effect(message: str, effect: str) -> str:
    """My commit message with what it now completes after its subject, as `pbem sign` writes it there: a signature
    that became the last one when replayed onto another signer's says that it takes effect, and only once."""
    if not effect or effect in message:
        return message
    subject = message.split("\n", 1)[0]
    return subject + effect + message[len(subject):]


def _message(message: str, status: Status | None) -> str:
    """My commit message, with the `next:` line `pbem yield` writes brought up to date."""
    if status is None:
        return message
    nxt = f"next: {status.control or 'game over'}" + (f" ({status.pending[0].why})" if status.pending else "")
    return re.sub(r"(?m)^next: .*$", lambda _m: nxt, message, count=1)


# --- merging one file ----------------------------------------------------------------------------------------

class MergeConflict(Exception):
    """Both sides changed the same part of a file differently."""


def merge_file(path: str, base: bytes | None, mine: bytes | None, theirs: bytes | None) -> bytes | None:
    """A three-way merge of one file (None = absent). Line by line first; where lines clash, a YAML mapping
    merged key by key (two players' contributions to one dice batch). Raises MergeConflict."""
    if mine == theirs or theirs == base:
        return mine
    if mine == base:
        return theirs
    if base is None or mine is None or theirs is None:
        raise MergeConflict(path)
    try:
        return merge_lines(base, mine, theirs)
    except MergeConflict:
        pass
    try:
        docs = [yamlsafe.load(data, path).data for data in (base, mine, theirs)]
    except PbemError:
        raise MergeConflict(path) from None
    if not all(isinstance(d, dict) for d in docs):
        raise MergeConflict(path)
    return dump_mapping(_merge_value(*docs)).encode()


def merge_lines(base: bytes, mine: bytes, theirs: bytes) -> bytes:
    """diff3 on lines: changes to different lines merge, also when they touch; overlapping changes, or two
    insertions at the same place, conflict."""
    old = base.splitlines(keepends=True)
    hunks = sorted(_hunks(old, mine.splitlines(keepends=True)) + _hunks(old, theirs.splitlines(keepends=True)),
                   key=lambda h: (h[0], h[1]))
    out: list[bytes] = []
    at = 0
    previous: tuple[int, int, list[bytes]] | None = None
    for hunk in hunks:
        lo, hi, new = hunk
        if previous is not None and _clash(previous, hunk):
            if previous == hunk:
                continue  # both sides made the same change
            raise MergeConflict()
        out.extend(old[at:lo])
        out.extend(new)
        at = hi
        previous = hunk
    out.extend(old[at:])
    return b"".join(out)


def _hunks(old: list[bytes], new: list[bytes]) -> list[tuple[int, int, list[bytes]]]:
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [(i1, i2, new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _clash(a: tuple[int, int, list[bytes]], b: tuple[int, int, list[bytes]]) -> bool:
    """Whether hunk `b` (starting at or after `a`) touches what `a` changed."""
    if b[0] < a[1]:
        return True  # overlapping lines
    return a[0] == a[1] == b[0]  # an insertion where the other side also inserts or replaces


_ABSENT: Any = object()


def _merge_value(base: Any, mine: Any, theirs: Any) -> Any:
    if mine == theirs or theirs == base:
        return mine
    if mine == base:
        return theirs
    if isinstance(mine, dict) and isinstance(theirs, dict):
        base_map = base if isinstance(base, dict) else {}
        merged: dict[str, Any] = {}
        for key in [*mine, *(k for k in theirs if k not in mine)]:
            value = _merge_value(base_map.get(key, _ABSENT), mine.get(key, _ABSENT), theirs.get(key, _ABSENT))
            if value is not _ABSENT:
                merged[key] = value
        return merged
    raise MergeConflict()
