"""What one commit may change in the players' inputs (DESIGN §4.4 firm marker, §2 ownership; seed §3.C, §4.B).

Entries are compared as multisets of their identity (at, by, unit, do and their `x-` fields), so moving an
entry to another line or reordering a file is not a change; adding, removing or editing one is.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from pbem.errors import Finding
from pbem.protocol.model import Entry, Inputs
from pbem.rulesets.base import Point


def changed_entries(before: Iterable[Entry], after: Iterable[Entry]) -> tuple[list[Entry], list[Entry]]:
    """(removed, added): entries of `before` missing from `after`, and entries of `after` new to it."""
    before = list(before)
    after = list(after)
    old = Counter(e.identity() for e in before)
    new = Counter(e.identity() for e in after)
    removed_ids = old - new
    added_ids = new - old
    removed = _take(before, removed_ids)
    added = _take(after, added_ids)
    return removed, added


def entry_changes(before: Inputs, after: Inputs, files: set[str] | None) -> tuple[list[Entry], list[Entry]]:
    """(removed, added) over the given report files (None: all). A file read on top of its earlier version
    costs what changed (appended lines, or the lines edited); any other change is compared whole. Either way
    as multisets (`changed_entries`): an entry that only moved is no change."""
    names = sorted(set(before.files) | set(after.files)) if files is None else sorted(files)
    removed: list[Entry] = []
    added: list[Entry] = []
    for name in names:
        old, new = before.files.get(name), after.files.get(name)
        changes = new.changes_since(old) if new is not None else None
        if changes is not None and not changes[0]:
            added.extend(changes[1])
            continue
        if changes is not None:
            gone, came = changed_entries(*changes)
        else:
            gone, came = changed_entries(old.entries if old else (), new.entries if new else ())
        removed.extend(gone)
        added.extend(came)
    return removed, added


def _take(entries: list[Entry], wanted: Counter) -> list[Entry]:
    left = Counter(wanted)
    out = []
    for entry in entries:
        key = entry.identity()
        if left[key] > 0:
            left[key] -= 1
            out.append(entry)
    return out


def firm_findings(before: Inputs, after: Inputs, firm: Point | None,
                  files: set[str] | None = None, committed: frozenset[bytes] = frozenset()) -> list[Finding]:
    """Entries strictly before the firm point may not be added, removed or edited (seed §3.C, §4.B);
    nor may a player pull his horizon back behind it. `files`: the report files that changed (None: all).
    `committed`: entries at the firm step already declared in an action auction: they may be added to, never
    withdrawn (DESIGN §4.4, seed §7.B)."""
    removed, added = entry_changes(before, after, files)
    findings = []
    for entry in removed:
        if entry.key in committed:
            findings.append(Finding("firm.changed", f"{entry.by}'s {dict(entry.do)} at {entry.at_text} was "
                                    "declared in an action auction: it may be added to, not withdrawn",
                                    file=entry.file, line=entry.line))
        elif firm is None or entry.at < firm:
            findings.append(Finding("firm.changed", f"firm entry removed or edited: {entry.by} {entry.unit or ''} "
                                    f"{dict(entry.do)} at {entry.at_text} (before the firm marker)",
                                    file=entry.file, line=entry.line))
    for entry in added:
        if firm is None or entry.at < firm:
            findings.append(Finding("firm.changed", f"entry added before the firm marker: {entry.by} "
                                    f"{entry.unit or ''} {dict(entry.do)} at {entry.at_text}",
                                    file=entry.file, line=entry.line))
    for player in after.players:
        old, new = before.of(player), after.of(player)
        if firm is not None and old.through is not None and old.through >= firm and (
            new.through is None or new.through < firm
        ):
            findings.append(Finding("firm.changed", f"{player}'s horizon moved back from {old.through_text} to "
                                    f"{new.through_text}, behind the firm marker", file=new.file or old.file))
    return findings


def ownership_findings(before: Inputs, after: Inputs, committer: str,
                       files: set[str] | None = None) -> list[Finding]:
    """A player adds, edits or removes only his own entries (DESIGN §2 rules of ownership)."""
    removed, added = entry_changes(before, after, files)
    findings = []
    for entry in removed:
        if entry.by != committer:
            findings.append(Finding("ownership.foreign-entry", f"{committer} removed or edited {entry.by}'s entry "
                                    f"at {entry.at_text}", file=entry.file, line=entry.line))
    for entry in added:
        if entry.by != committer:
            findings.append(Finding("ownership.foreign-entry", f"{committer} wrote an entry in {entry.by}'s name "
                                    f"at {entry.at_text}", file=entry.file, line=entry.line))
    return findings
