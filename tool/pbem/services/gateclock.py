"""The gate's clock (DESIGN §4.8, revised): when a gate first accepted each commit on the game branch.

A commit's dates are its signer's claim, so no wait a gate judges may start from one. Waits start from when
the gate itself first had the commit on the game branch, as recorded where no pusher can write:

* the self-hosted gate (`pbem hook install`): the append-only file `$GIT_DIR/pbem/accepted`, one line
  `<commit-oid> <UTC time, RFC 3339>` per commit that landed on the game branch, the first line for an oid
  winning. It lives in the bare repository's own storage, never in a ref, so no push can write it. The
  post-receive hook writes it, after git moved the refs: it sees only what really landed (a pre-receive hook
  would record pushes that a later hook, a lost ref lock or a concurrent push then refused, and such a line,
  met again when the commit lands for real, would backdate it);
* the GitHub gate: the repository's activity record (`GET /repos/{owner}/{repo}/activity`), in which GitHub
  stamps each push or merge to a branch with its own time; the commits in `before..after` of an activity on the
  game branch were accepted at its `timestamp`;
* a player's clone (`pbem status`): its reflogs, when this clone first saw each commit on a remote-tracking
  branch (or, without a remote, on its own branch). That is a display, never a gate's verdict.

A gate without a readable record finds nobody absent (rules `clock.missing`, `clock.corrupt`, and
`clock.unknown` for a commit the record does not know), never a guess.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from pbem.store.git import pygit2

from pbem import text as escape
from pbem.errors import USAGE, Finding, PbemError
from pbem.formats import times
from pbem.store.repo import GameRepo

RECORD = Path("pbem") / "accepted"  # under GIT_DIR
ZERO = "0" * 40
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Clock:
    """When each commit was first accepted, by one source, at the gate's own time `now`.

    `pushed`: commits arriving now (the push or pull request being judged): accepted at `now`. `unknown_is_now`:
    a commit the source does not know counts as arriving now (a clone's display: it never overstates a wait);
    a gate's clock leaves it unknown. `problem`: why this clock cannot judge absence at all (the record is
    missing or corrupt)."""

    source: str
    now: datetime
    times: Mapping[str, datetime] = field(default_factory=dict)
    pushed: frozenset[str] = frozenset()
    unknown_is_now: bool = False
    problem: Finding | None = None

    def accepted(self, oid: str) -> datetime | None:
        """When the gate first had `oid` on the game branch (None: it does not know)."""
        if oid in self.times:
            return self.times[oid]
        if oid in self.pushed or self.unknown_is_now:
            return self.now
        return None

    def with_pushed(self, pushed: Iterable[str]) -> "Clock":
        return Clock(self.source, self.now, self.times, frozenset(pushed), self.unknown_is_now, self.problem)


def broken(source: str, now: datetime, problem: Finding, pushed: Iterable[str] = ()) -> Clock:
    """A clock that cannot judge absence, with the reason."""
    return Clock(source, now, {}, frozenset(pushed), False, problem)


# --- the hook's record ----------------------------------------------------------------------------------------

def record_path(git_dir: str | os.PathLike[str]) -> Path:
    return Path(git_dir) / RECORD


def record_line(oid: str, when: datetime) -> str:
    return f"{oid} {times.format_instant(when)}\n"


def parse_record(text: str, file: str) -> dict[str, datetime]:
    """The record's lines (first line for an oid wins); rule `clock.corrupt` names the first bad line."""
    out: dict[str, datetime] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:  # a last line without its newline: a write cut short
        return _corrupt(file, len(lines), "the last line is cut short (no newline)")
    for number, line in enumerate(lines, 1):
        oid, space, when = line.partition(" ")
        if not space or len(oid) not in (40, 64) or not set(oid) <= _HEX:
            _corrupt(file, number, "not `<commit-oid> <RFC 3339 UTC time>`")
        try:
            stamp = times.parse_instant(when, file=file, line=number)
        except PbemError as exc:
            _corrupt(file, number, exc.finding.message)
        out.setdefault(oid, stamp)
    return out


def _corrupt(file: str, line: int, why: str) -> Any:
    raise PbemError("clock.corrupt", f"the gate's time record is corrupt: {why}; the gate finds nobody absent "
                    "until it is repaired", file=file, line=line, exit_code=USAGE,
                    hint="a host restores it from a backup, or removes it and runs `pbem hook install` again "
                         "(every wait then restarts from now)")


def read_record(git_dir: str | os.PathLike[str]) -> dict[str, datetime]:
    """The hook's record (`clock.missing` when there is none, `clock.corrupt` when a line is bad)."""
    path = record_path(git_dir)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PbemError("clock.missing", f"the gate's time record {path} is missing: the gate finds nobody absent "
                        "until it is restored", file=str(path), exit_code=USAGE,
                        hint="a host restores it from a backup, or runs `pbem hook install` again (every wait "
                             "then restarts from now)") from None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return _corrupt(str(path), data[:_first_non_ascii(data)].count(b"\n") + 1, "a byte that is no ASCII")
    return parse_record(text, str(path))


def _first_non_ascii(data: bytes) -> int:
    return next(i for i, b in enumerate(data) if b > 127)


def hook_clock(git_dir: str | os.PathLike[str], now: datetime, pushed: Iterable[str] = ()) -> Clock:
    """The self-hosted gate's clock: the record, with the commits being pushed counted as accepted `now`."""
    source = f"the gate's record {record_path(git_dir)}"
    try:
        return Clock(source, now, read_record(git_dir), frozenset(pushed))
    except PbemError as exc:
        return broken(source, now, exc.finding, pushed)


def append(git_dir: str | os.PathLike[str], oids: Iterable[str], when: datetime, *, create: bool = False) -> int:
    """Add a line for each of `oids` the record does not hold yet (under a lock: concurrent pushes each append
    whole lines). A missing record stays missing unless `create` (pbem hook install): a deleted record must be
    seen, not silently restarted by the next push. Returns how many lines were added."""
    path = record_path(git_dir)
    if not path.exists() and not create:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        known = {line.split(" ", 1)[0] for line in path.read_text(errors="replace").splitlines()}
        lines = [record_line(oid, when) for oid in dict.fromkeys(oids) if oid not in known]
        if lines:
            os.write(fd, "".join(lines).encode("ascii"))
            os.fsync(fd)
        return len(lines)
    finally:
        os.close(fd)


def landed(repo: GameRepo, old: str, new: str) -> list[str]:
    """The commits a move of the game branch from `old` to `new` put on it (git rev-list NEW ^OLD), oldest first."""
    if new == ZERO:
        return []
    walker = repo.repo.walk(pygit2.Oid(hex=new), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    if old != ZERO and pygit2.Oid(hex=old) in repo.repo:
        walker.hide(pygit2.Oid(hex=old))
    return [str(c.id) for c in walker]


def post_receive(repo: GameRepo, git_dir: str | os.PathLike[str], game_ref: str, updates: Iterable[tuple[str, str, str]],
                 now: datetime) -> list[str]:
    """The post-receive hook's work: record what landed on the game branch at `now`. Returns warnings for the
    pusher (a missing record)."""
    oids = [oid for old, new, ref in updates if ref == game_ref for oid in landed(repo, old, new)]
    if not oids:
        return []
    if not record_path(git_dir).exists():
        return [f"pbem: the gate's time record {record_path(git_dir)} is missing: nobody can be found absent "
                "until the host runs `pbem hook install` again"]
    append(git_dir, oids, now)
    return []


def seed(repo: GameRepo, git_dir: str | os.PathLike[str], game_ref: str, now: datetime) -> int:
    """At install: every commit already on the game branch counts as accepted now (the gate cannot know
    earlier); a record that holds them keeps its lines."""
    try:
        tip = str(repo.repo.references[game_ref].peel(pygit2.Commit).id)
    except (KeyError, pygit2.GitError, ValueError):
        tip = ZERO
    path = record_path(git_dir)
    if path.exists():
        try:
            read_record(git_dir)
        except PbemError:
            return 0  # a corrupt record is the host's to repair, never papered over
    return append(git_dir, landed(repo, ZERO, tip), now, create=True)


# --- GitHub's activity record ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Activity:
    before: str
    after: str
    when: datetime


def parse_activity(text: str, file: str, game_ref: str) -> list[Activity]:
    """GitHub's repository activity (`gh api --paginate …/activity`: one JSON array per page, concatenated),
    the entries on `game_ref`, oldest first. Rule `clock.corrupt` for anything else."""
    decoder = json.JSONDecoder()
    items: list[Any] = []
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        try:
            page, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            _corrupt(file, exc.lineno, f"not GitHub's activity JSON ({exc.msg})")
        items.extend(page if isinstance(page, list) else [page])
    out = []
    for number, item in enumerate(items, 1):
        fields: list[Any] = [item.get(k) if isinstance(item, dict) else None for k in ("before", "after", "ref", "timestamp")]
        if not all(isinstance(v, str) for v in fields) or not all(len(v) in (40, 64) and set(v) <= _HEX
                                                                  for v in fields[:2]):
            _corrupt(file, 1, f"activity {number} is no object with before, after, ref and timestamp")
        if fields[2] != game_ref:
            continue
        try:
            when = times.parse_instant(fields[3], file=file, what=f"activity {number}'s timestamp")
        except PbemError as exc:
            _corrupt(file, 1, exc.finding.message)
        out.append(Activity(fields[0], fields[1], when))
    return sorted(out, key=lambda a: a.when)


def activity_times(repo: GameRepo, activities: list[Activity]) -> dict[str, datetime]:
    """When each commit first came onto the game branch by GitHub's record: the commits an activity added
    (reachable from its `after`, from none of the earlier activities' tips) at its timestamp."""
    out: dict[str, datetime] = {}
    seen: list[pygit2.Oid] = []
    for activity in activities:
        if activity.after == ZERO or pygit2.Oid(hex=activity.after) not in repo.repo:
            continue  # a deletion, or a tip this checkout never had (force-pushed away)
        walker = repo.repo.walk(pygit2.Oid(hex=activity.after), pygit2.enums.SortMode.TOPOLOGICAL)
        for oid in [*seen, *([pygit2.Oid(hex=activity.before)] if activity.before != ZERO
                             and pygit2.Oid(hex=activity.before) in repo.repo else [])]:
            walker.hide(oid)
        for commit in walker:
            out.setdefault(str(commit.id), activity.when)
        seen.append(pygit2.Oid(hex=activity.after))
    return out


def file_clock(path: Path, repo: GameRepo, game_ref: str, now: datetime) -> Clock:
    """`pbem deadlines --clock FILE`: the hook's record format, or GitHub's activity JSON (told apart by the first
    character: JSON starts with `[` or `{`)."""
    source = f"the record {escape.terminal(str(path))}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return broken(source, now, Finding("clock.missing", f"the time record {path} does not exist: the gate "
                                           "finds nobody absent without it", file=str(path)))
    except (OSError, UnicodeDecodeError) as exc:
        return broken(source, now, Finding("clock.corrupt", f"the time record {path} cannot be read ({exc})",
                                           file=str(path)))
    try:
        if text.lstrip()[:1] in ("[", "{"):
            found = activity_times(repo, parse_activity(text, str(path), game_ref))
            return Clock("GitHub's activity record", now, found)
        return Clock(source, now, parse_record(text, str(path)))
    except PbemError as exc:
        return broken(source, now, exc.finding)


# --- a clone's own knowledge ----------------------------------------------------------------------------------

def clone_clock(repo: GameRepo, now: datetime) -> Clock:
    """When this clone first saw each commit, from its reflogs: of the remote-tracking branches (when a fetch,
    pull or push showed the shared repository holding it), or, in a clone without a remote, of its branches.
    What none of them holds counts as new now: a clone's display never overstates a wait."""
    names = [n for n in repo.repo.references if n.startswith("refs/remotes/")]
    source = "this clone's reflog of the remote"  # when a fetch, pull or push first showed it there
    if not names:
        names = [n for n in repo.repo.references if n.startswith("refs/heads/")]
        source = "this clone's own reflog"  # no remote: when this clone first had it
    entries: list[tuple[int, str, str]] = []
    for name in names:
        try:
            entries.extend((e.committer.time, str(e.oid_old), str(e.oid_new)) for e in repo.repo.references[name].log())
        except (pygit2.GitError, KeyError, ValueError):
            continue
    found: dict[str, datetime] = {}
    for stamp, old, new in sorted(entries):
        if new == ZERO or pygit2.Oid(hex=new) not in repo.repo:
            continue
        when = datetime.fromtimestamp(stamp, now.tzinfo)
        walker = repo.repo.walk(pygit2.Oid(hex=new), pygit2.enums.SortMode.NONE)
        if old != ZERO and pygit2.Oid(hex=old) in repo.repo:
            walker.hide(pygit2.Oid(hex=old))
        for commit in walker:
            found.setdefault(str(commit.id), when)
    return Clock(source, now, found, unknown_is_now=True)


# --- installing -------------------------------------------------------------------------------------------------

def install(repo: GameRepo, hooks: Path, script: str, game_ref: str, force: bool, mark: str) -> Path:
    """Write the post-receive hook that keeps the record (rule `hook.exists` for one pbem did not write, unless
    `force`) and seed the record with what the game branch already holds (`seed`)."""
    target = hooks / "post-receive"
    if target.exists() and not force and mark not in target.read_text(errors="replace"):
        raise PbemError("hook.exists", f"{target} exists and was not written by pbem: pbem's post-receive hook "
                        "keeps the gate's clock", hint="move it away (or chain it from a post-receive.d), or "
                        "replace it with `pbem hook install --force`", exit_code=USAGE)
    temporary = target.with_name(".post-receive.pbem-new")
    temporary.write_text(script)
    temporary.chmod(0o755)
    os.replace(temporary, target)
    seed(repo, repo.repo.path, game_ref, datetime.now(timezone.utc))
    return target
