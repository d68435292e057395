"""The erratum (DESIGN §4.8; seed 000 §3.C "firm to here ... other than potentially to correct errors", §4.A
"Promptly bring up errors with other players"): an agreement of kind `erratum` (protocol.kinds) lists the firm
entries to take out (`removed`) and those to put in (`added`), with a reason. Every active player signs it; the
commit adding the last signature changes the report by exactly its entries (`correction_findings`), and replay
restarts from the earliest corrected step. Pure: no git, files or printing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pbem.errors import Finding
from pbem.protocol.agreements import Agreement
from pbem.protocol.history import changed_entries
from pbem.protocol.model import Entry
from pbem.rulesets.base import Point


@dataclass(frozen=True)
class Erratum:
    """An erratum: the view of an erratum agreement (`of_agreement`); `removed` and `added` are entries parsed as
    report entries (their `file` is the report file they belong in, their `line` the line in the agreement's
    file)."""

    raw: Mapping[str, Any] = field(repr=False)
    file: str
    removed: tuple[Entry, ...]
    added: tuple[Entry, ...]

    @property
    def id(self) -> str:
        return self.raw["id"]

    @property
    def by(self) -> str:
        return self.raw["by"]

    @property
    def reason(self) -> str:
        return self.raw["reason"]

    @property
    def signatures(self) -> Mapping[str, str]:
        return self.raw.get("signatures") or {}

    def corrected_from(self) -> Point | None:
        """The earliest step the erratum changes: replay restarts there (None: it changes nothing)."""
        return min((e.at for e in (*self.removed, *self.added)), default=None)

    def corrected_from_text(self) -> str:
        first = min((*self.removed, *self.added), key=lambda e: e.at, default=None)
        return first.at_text if first is not None else "nowhere"

    def terms(self) -> str:
        """What it corrects, in words (status, log, `pbem agreements`)."""
        return f"-{len(self.removed)} +{len(self.added)} entries from {self.corrected_from_text()}: {self.reason}"


def of_agreement(agreement: Agreement) -> Erratum:
    """An agreement of kind `erratum` seen as an erratum: the same entries, reason and signatures; it is applied
    by the commit that adds its last required signature."""
    raw = {"id": agreement.id, "by": agreement.by, "reason": agreement.content.get("reason", ""),
           "signatures": agreement.signatures}
    return Erratum(raw, agreement.file, *agreement.entries)


def entry_findings(players: Sequence[str], new: Erratum, firm: Point | None) -> list[Finding]:
    """What a proposed erratum may correct: something, only entries of seated players, only
    before the firm marker (`firm`: the next unresolved step), never removing and adding the same entry."""
    f = new.file
    out = []
    if not new.removed and not new.added:
        out.append(Finding("erratum.malformed", f"erratum {new.id} corrects nothing (no removed or added entry)",
                           file=f))
    for entry in (*new.removed, *new.added):
        if entry.by not in players:
            out.append(Finding("erratum.malformed", f"entry by unknown player {entry.by!r}", file=f, line=entry.line))
        elif firm is not None and entry.at >= firm:
            out.append(Finding("erratum.not-firm", f"{entry.by}'s {dict(entry.do)} at {entry.at_text} is not firm "
                               f"yet: its owner changes it in his turn; an erratum corrects only what lies before "
                               f"the firm marker", file=f, line=entry.line))
    removed, added = changed_entries(new.removed, new.added)
    if len(removed) != len(new.removed) or len(added) != len(new.added):
        out.append(Finding("erratum.malformed", f"erratum {new.id} removes and adds the same entry", file=f))
    return out


def correction_findings(removed: Sequence[Entry], added: Sequence[Entry],
                        applied: Sequence[Erratum]) -> list[Finding]:
    """The report must change by exactly the entries of the errata applied in this commit, no more, no less.
    `removed`, `added`: how the report changed (`history.entry_changes`, as `firm.changed` compares them);
    entries are matched by identity and report file."""
    want_removed = Counter((e.identity(), e.file) for x in applied for e in x.removed)
    want_added = Counter((e.identity(), e.file) for x in applied for e in x.added)
    got_removed = Counter((e.identity(), e.file) for e in removed)
    got_added = Counter((e.identity(), e.file) for e in added)
    out = []
    source = ", ".join(x.id for x in applied) or "no erratum applied in this commit"
    for entry in _take(removed, got_removed - want_removed):
        out.append(Finding("erratum.mismatch", f"{entry.by}'s {dict(entry.do)} at {entry.at_text} was removed or "
                           f"edited, but {source} does not remove it", file=entry.file, line=entry.line))
    for entry in _take(added, got_added - want_added):
        out.append(Finding("erratum.mismatch", f"{entry.by}'s {dict(entry.do)} at {entry.at_text} was added, but "
                           f"{source} does not add it", file=entry.file, line=entry.line))
    for x in applied:
        for entry in _take(list(x.removed), want_removed - got_removed):
            out.append(Finding("erratum.mismatch", f"erratum {x.id} removes {entry.by}'s {dict(entry.do)} at "
                               f"{entry.at_text} from {entry.file}, but the report does not lose it (is it there?)",
                               file=x.file, line=entry.line))
        for entry in _take(list(x.added), want_added - got_added):
            out.append(Finding("erratum.mismatch", f"erratum {x.id} adds {entry.by}'s {dict(entry.do)} at "
                               f"{entry.at_text} to {entry.file}, but the report does not gain it", file=x.file,
                               line=entry.line))
    return out


def _take(entries: Sequence[Entry], wanted: Counter) -> list[Entry]:
    left = Counter(wanted)
    out = []
    for entry in entries:
        key = (entry.identity(), entry.file)
        if left[key] > 0:
            left[key] -= 1
            out.append(entry)
    return out
