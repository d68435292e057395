"""`pbem summary [RANGE]`: what a range of commits did, for a pull request's description or a workflow's job
summary (DESIGN §8, §9): who acted, what changed (files, entries added and withdrawn per player, dice and secrets),
who holds control after each commit and now, and the findings.

The whole history to the range's tip is verified, as `pbem verify BASE..HEAD` does: each commit in the range is
judged against the full state before it, and only the range's commits are reported. Works in a bare repository.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pbem.crypto import sshsig
from pbem.errors import Finding, PbemError
from pbem.text import terminal
from pbem.protocol.dice import Batch
from pbem.protocol.model import Status
from pbem.protocol.secrets import Secret
from pbem.store.commits import parse_commit
from pbem.store.repo import GameRepo
from pbem.files.game import read_game
from pbem.files.parsecache import ParseCache
from pbem.protocol.game import Game
from pbem.verify.history import CommitResult, verify_history
from pbem.protocol.control import who
from pbem.services import results

MAX_ROWS = 300  # a job summary is capped at 1 MiB; a whole long game is shown by its newest commits


@dataclass(frozen=True)
class CommitSummary:
    """One commit of the range, as a reader of the pull request wants it."""

    oid: str
    actor: str  # the seat (or the escrow) that signed, "founder", or what is wrong with the signature
    message: str
    files: tuple[str, ...] = ()
    entries: tuple[str, ...] = ()  # "fed 1.4.fire CA fire weapon=ph1 target=D7", "withdrew fed …"
    events: tuple[str, ...] = ()  # dice and secrets
    then: str = ""  # who holds control after it, and why
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Summary:
    """A range of commits, the state after them, and the findings of the range's commits."""

    title: str
    base: str | None
    tip: str
    commits: tuple[CommitSummary, ...]
    status: Status | None
    started: bool
    findings: tuple[Finding, ...] = ()
    merges: int = 0
    hidden: int = 0  # commits of the range left out (MAX_ROWS)
    shots: tuple[str, ...] = ()  # every scored shot of the game so far (services/results.py)
    outcome: str | None = None  # who won, once the game is over

    @property
    def ok(self) -> bool:
        return not self.findings


def resolve_range(repo: GameRepo, spec: str | None) -> tuple[str | None, str, set[str] | None]:
    """(base, tip, commits reachable from the tip but not from the base) for `BASE..TIP`, a single revision (its
    whole history) or None (HEAD's whole history); the set is None for a whole history."""
    if not spec:
        tip = repo.head_oid()
        if tip is None:
            raise PbemError("repo.empty", "this repository has no commits yet")
        return None, tip, None
    base_rev, sep, tip_rev = spec.partition("..")
    if not sep:
        return None, repo.resolve(spec), None
    tip = repo.resolve(tip_rev or "HEAD")
    base = repo.resolve(base_rev) if base_rev else None
    if base is None:
        return None, tip, None
    return base, tip, set(repo.reachable(tip)) - set(repo.reachable(base))


def summarize(repo: GameRepo, spec: str | None = None) -> Summary:
    """Verify the history to the range's tip and describe the range's commits (see the module docstring)."""
    base, tip, only = resolve_range(repo, spec)
    result = verify_history(repo, tip)
    findings = list(result.findings(only))
    if base is not None and base != tip and base not in set(repo.reachable(tip)):
        findings.insert(0, Finding(
            "history.not-fast-forward", f"{tip[:10]} does not contain {base[:10]}: merging it would not be a "
            "transparent merge, and pushing it would take back turns",
            hint="bring the branch up to date first: fetch, then `pbem push` rebases your own commits"))
    cache = ParseCache()
    rows: list[CommitSummary] = []
    before: Game | None = None
    before_files: Mapping[str, tuple[str, int]] = {}
    for commit in result.commits:
        files = repo.tree_files(commit.oid)
        after = _game(repo, files, cache)
        if only is None or commit.oid in only:
            rows.append(_row(commit, _signer(repo, commit, before or after), before, after, before_files, files))
        before, before_files = after or before, files
    merges = 0 if only is None else len(only) - sum(1 for c in result.commits if c.oid in only)
    last = result.last
    status = last.game.status if last is not None else None
    title = ""
    if last is not None:
        manifest = last.game.manifest
        title = f"{manifest.title} ({manifest.id}, {manifest.ruleset_name})"
    hidden = max(0, len(rows) - MAX_ROWS)
    return Summary(title, base, tip, tuple(rows[hidden:]), status, bool(last and last.started), tuple(findings),
                   merges, hidden, tuple(results.shots(last)), results.outcome(last))


def _game(repo: GameRepo, files: Mapping[str, tuple[str, int]], cache: ParseCache) -> Game | None:
    try:
        return read_game(files, repo.read_blob, cache)
    except PbemError:
        return None  # the commit's finding says why


def _signer(repo: GameRepo, commit: CommitResult, game: Game | None) -> str:
    """Who signed: the seat the verifier credited, else the seat of the signing key (also for a commit with
    findings), else what is wrong with the signature."""
    if commit.actor is not None:
        return commit.actor
    try:
        raw = parse_commit(repo.raw_commit(commit.oid))
        if raw.signature is None:
            return "(unsigned)"
        key = sshsig.verify(raw.signature, raw.signed_payload())
    except PbemError:
        return "(bad signature)"
    seat = who(game, key) if game is not None else None
    if seat is not None:
        return seat
    return "founder" if game is None or game.status is None else "(unknown key)"


def _row(commit: CommitResult, actor: str, before: Game | None, after: Game | None,
         before_files: Mapping[str, tuple[str, int]], files: Mapping[str, tuple[str, int]]) -> CommitSummary:
    changed = tuple(sorted(p for p in set(files) | set(before_files) if files.get(p) != before_files.get(p)))
    then = ""
    if commit.status is not None:
        then = _control(commit.status)
    entries: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    if after is not None:
        entries = _entries(before, after)
        events = _dice(before, after) + _secrets(before, after)
    return CommitSummary(commit.oid, actor, commit.summary, changed, entries, events, then,
                         tuple(commit.findings))


def _control(status: Status) -> str:
    if status.over:
        return "game over"
    why = f" ({status.pending[0].why})" if status.pending else ""
    return f"{status.control}{why}"


def _entries(before: Game | None, after: Game) -> tuple[str, ...]:
    """Each entry the commit added ("fed 1.4.fire CA fire weapon=ph1 target=D7") or withdrew ("fed withdrew
    …"), in game-time order: the orders themselves, not only how many."""
    old = Counter(e.identity() for e in before.inputs.entries) if before else Counter()
    new = Counter(e.identity() for e in after.inputs.entries)
    added, withdrawn = new - old, old - new
    out = []
    for entry in sorted(after.inputs.entries, key=lambda e: e.at):
        if added[entry.identity()] > 0:
            added[entry.identity()] -= 1
            out.append(_entry_text(entry))
    for entry in sorted(before.inputs.entries if before else (), key=lambda e: e.at):
        if withdrawn[entry.identity()] > 0:
            withdrawn[entry.identity()] -= 1
            out.append("withdrew " + _entry_text(entry))
    return tuple(out)


def _entry_text(entry: Any) -> str:
    what = " ".join(f"{k} " + (" ".join(f"{a}={b}" for a, b in v.items()) if isinstance(v, Mapping) else str(v))
                    for k, v in entry.do.items())
    return f"{entry.by} {entry.at_text} {entry.unit or ''} {what}".replace("  ", " ")


def _dice(before: Game | None, after: Game) -> tuple[str, ...]:
    old_batches: Mapping[str, Batch] = before.batches if before else {}
    out: list[str] = []
    for batch_id in sorted(after.batches):
        new, old = after.batches[batch_id], old_batches.get(batch_id)
        if old is None:
            out.append(f"{new.roller} announced dice {batch_id} ({len(new.raw['rolls'])}d{new.sides}, {new.mode})")
        for player in new.contribution_commits:
            if old is None or player not in old.contribution_commits:
                out.append(f"{player} committed a contribution to {batch_id}")
        for player in new.contributions:
            if old is None or player not in old.contributions:
                out.append(f"{player} contributed to {batch_id}")
        if "reveal" in new.raw and (old is None or "reveal" not in old.raw):
            out.append(f"{new.roller} revealed {batch_id}")
        if "escrow" in new.raw and (old is None or "escrow" not in old.raw):
            out.append(f"the escrow signed {batch_id}")
        if new.voided and (old is None or not old.voided):
            out.append(f"dice {batch_id} voided: {new.raw['void'].get('reason', '')}")
        if new.results is not None and (old is None or old.results is None):
            purposes = [str(r.get("for", "")) for r in new.raw["rolls"]]
            rolled = "; ".join(f"{p}: {r}" if p else str(r) for p, r in zip(purposes, new.results))
            out.append(f"dice {batch_id} results: {rolled}")
    return tuple(out)


def _secrets(before: Game | None, after: Game) -> tuple[str, ...]:
    old_secrets: Mapping[str, Secret] = before.secrets if before else {}
    out: list[str] = []
    for secret_id in sorted(after.secrets):
        new, old = after.secrets[secret_id], old_secrets.get(secret_id)
        if old is None:
            concerns = new.raw.get("concerns")
            out.append(f"{new.owner} sealed secret {secret_id} ({new.raw['kind']}"
                       f"{', ' + concerns if concerns else ''}; due {new.raw.get('end', 'end')})")
        if new.revealed and (old is None or not old.revealed):
            try:
                value = json.dumps(new.value(), ensure_ascii=False)
            except PbemError:
                value = "(does not open: see the findings)"
            out.append(f"{new.owner} revealed secret {secret_id}: {_clip(value, 120)}")
    return tuple(out)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# --- rendering -----------------------------------------------------------------------------------------------

def _range_text(summary: Summary) -> str:
    return f"{summary.base[:10]}..{summary.tip[:10]}" if summary.base else f"the whole history to {summary.tip[:10]}"


def _now(summary: Summary) -> tuple[str, list[str]]:
    """The state after the range: one line, and the other pending breaks."""
    status = summary.status
    if status is None:
        return "setting up: seats are being claimed (`pbem join --as ID`, then `pbem start`)", []
    if status.over:
        return "the game is over", []
    from pbem.render.status_screen import simultaneous

    owing = simultaneous(status)
    head = status.pending[0].why if status.pending else ""
    line = (f"nobody holds control: all at once, {', '.join(owing)} still to act" if owing else
            f"{status.control} holds control" + (f" ({head})" if head else "")) + f"; firm to {status.firm}"
    more = [f"{b.player} at {b.at}: {b.why}" for b in status.pending[1:]]
    return line, more


def text(summary: Summary) -> str:
    """The summary as plain text, for a terminal."""
    count = len(summary.commits) + summary.hidden
    verdict = "no findings" if summary.ok else f"{len(summary.findings)} finding(s)"
    out = [f"{summary.title}: {count} commit(s) in {_range_text(summary)}, {verdict}"]
    if summary.hidden:
        out.append(f"  ({summary.hidden} older commit(s) not shown)")
    for row in summary.commits:
        mark = " !" if row.findings else ""
        out.append(f"{row.oid[:10]}{mark} {row.actor:<8} {row.message}")
        if row.files:
            out.append(f"    files:   {', '.join(row.files)}")
        for entry in row.entries:
            out.append(f"    entry:   {entry}")
        for event in row.events:
            out.append(f"    {event}")
        if row.then:
            out.append(f"    then:    {row.then}")
    if summary.merges:
        out.append(f"({summary.merges} transparent merge(s) not listed)")
    if summary.shots:
        out.append("shots (die, damage, and which shield or internals took it):")
        out.extend(f"  {shot}" for shot in summary.shots)
    if summary.outcome:
        out.append(f"outcome: {summary.outcome}")
    line, more = _now(summary)
    out.append(f"now: {line}")
    out.extend(f"  also pending: {m}" for m in more)
    # each line is ours, its values the repository's (a note, a commit message, a path): a newline or an ESC
    # sequence from the data is shown escaped, never obeyed (DESIGN §9); Finding.text escapes its own
    out = [terminal(line) for line in out]
    for finding in summary.findings:
        out.append(finding.text())
    return "\n".join(out) + "\n"


def markdown(summary: Summary) -> str:
    """The summary as GitHub-flavoured Markdown: a pull request's description or a workflow's job summary."""
    count = len(summary.commits) + summary.hidden
    if summary.ok:
        head = f"## pbem: {count} commit(s), all legal ✅"
    else:
        head = f"## pbem: {len(summary.findings)} finding(s) in {count} commit(s) ❌"
    out = [head, "", f"{_md(summary.title)}, {_md(_range_text(summary))}.", ""]
    if summary.hidden:
        out += [f"The {summary.hidden} oldest commit(s) of the range are not shown.", ""]
    out += ["| commit | by | note | files | entries | dice and secrets | then |", "|---|---|---|---|---|---|---|"]
    for row in summary.commits:
        mark = "❌ " if row.findings else ""
        cells = [f"{mark}{_code(row.oid[:10])}", _md(row.actor), _md(row.message),
                 "<br>".join(_code(f) for f in row.files), "<br>".join(_md(e) for e in row.entries),
                 "<br>".join(_md(e) for e in row.events), _md(row.then)]
        out.append("| " + " | ".join(cells) + " |")
    if not summary.commits:
        out.append("| | | (no commits) | | | | |")
    if summary.merges:
        out += ["", f"{summary.merges} transparent merge(s) not listed."]
    if summary.shots:
        out += ["", "**Shots** (die, damage, and which shield or internals took it):", ""]
        out += [f"* {_md(shot)}" for shot in summary.shots]
    if summary.outcome:
        out += ["", f"**Outcome:** {_md(summary.outcome)}"]
    line, more = _now(summary)
    out += ["", f"**Now:** {_md(line)}"]
    out += [f"* also pending: {_md(m)}" for m in more]
    if summary.findings:
        out += ["", "### Findings", ""]
        for f in summary.findings:
            where = f"{_code(f.location())} " if f.location() else ""
            commit = f" (commit {_code(f.commit[:10])})" if f.commit else ""
            hint = f" — {_md(f.hint)}" if f.hint else ""
            out.append(f"* {where}**{_md(f.rule)}** {_md(f.message)}{commit}{hint}")
    return "\n".join(terminal(line) for line in out) + "\n"


_MD_SPECIAL = "\\`*_[]<>|#!~"


def _md(value: str) -> str:
    """Player-written text as inert Markdown on one line (no links, images, HTML or table breaks)."""
    out = " ".join(value.split())
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in out)


def _code(value: str) -> str:
    return "`" + " ".join(value.split()).replace("`", "'").replace("|", "\\|") + "`"
