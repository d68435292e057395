"""Errata: correcting the firm part of the report with every player's signature (DESIGN §4.8; seed 000 §3.C
"firm to here ... other than potentially to correct errors", §4.A "Promptly bring up errors with other players").

An erratum is now an agreement of kind `erratum` (protocol.agreements): proposed, signed and in effect with its
last signature like every agreement; the commit adding that signature changes the report by exactly its entries
(`correction_findings`, `of_agreement`). What follows is the older form, still valid in any game:

An erratum (errata/<id>.yaml) lists the firm entries to take out (`removed`) and those to put in (`added`), with a
reason. Every player signs its content hash (an SSH signature, namespace `pbem`, as a dice void's co-signature).
Its life, one commit each, by any player and without holding control (like a dice contribution):

1. proposed: a new file carrying the proposer's own signature only; every entry it touches is firm;
2. signed: a player adds his own signature, and nothing else;
3. applied: with every signature present, a commit sets `applied: true` and changes the report by exactly the
   erratum's entries (they are exempt from `firm.changed` and ownership: everybody signed them). Replay then
   restarts from the earliest corrected step (`corrected_from`).

An erratum is never changed in substance, removed, or applied twice. Pure: no git, files or printing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pbem.crypto.keys import PublicKey
from pbem.errors import Finding
from pbem.formats.canonical import dumps as canonical
# NAMESPACE is re-exported: errata are signed in the agreements' namespace
from pbem.protocol.agreements import NAMESPACE, Agreement, consent_message, signed_by  # noqa: F401
from pbem.protocol.history import changed_entries
from pbem.protocol.model import Entry
from pbem.rulesets.base import Point

DOMAIN = b"pbem-erratum-v1\0"
UNSIGNED_FIELDS = ("signatures", "applied")  # what the signatures cannot cover: they are added after signing


@dataclass(frozen=True)
class Erratum:
    """One erratum as read from errata/<id>.yaml; `removed` and `added` are entries parsed as report entries
    (their `file` is the report file they belong in, their `line` the line in the erratum file)."""

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

    @property
    def applied(self) -> bool:
        return bool(self.raw.get("applied"))

    def content(self) -> bytes:
        """The canonical bytes every player signs the hash of: all but the signatures and the applied mark."""
        return canonical({k: v for k, v in self.raw.items() if k not in UNSIGNED_FIELDS})

    def unsigned(self, players: Sequence[str]) -> list[str]:
        """The players whose signature is still missing, in table order."""
        return [p for p in players if p not in self.signatures]

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
    by the commit that adds its last required signature (so `applied` is never written into it)."""
    raw = {"id": agreement.id, "by": agreement.by, "reason": agreement.content.get("reason", ""),
           "signatures": agreement.signatures}
    return Erratum(raw, agreement.file, *agreement.entries)


def message(game_id: str, erratum: Erratum) -> bytes:
    """What each player signs: the domain, the game id (no signature carries over to another game) and the
    SHA-256 of the erratum's content (its id included, so no signature carries over to another erratum); the
    same construction as every agreement's (protocol.agreements), with its own domain."""
    return consent_message(DOMAIN, game_id, erratum.content())


def signature_valid(game_id: str, erratum: Erratum, player: str, keys: Mapping[str, PublicKey]) -> bool:
    """Whether `player`'s signature on `erratum` verifies under his key in game.yaml."""
    return signed_by(erratum.signatures.get(player), message(game_id, erratum), keys.get(player))


def pending(errata: Mapping[str, Erratum]) -> list[Erratum]:
    """The errata not applied yet, by id."""
    return [e for _, e in sorted(errata.items()) if not e.applied]


def applied_now(before: Mapping[str, Erratum], after: Mapping[str, Erratum]) -> list[Erratum]:
    """The errata this commit applies (marked applied now, not before), by id."""
    return [e for i, e in sorted(after.items()) if e.applied and not (i in before and before[i].applied)]


def corrected_from(before: Mapping[str, Erratum], after: Mapping[str, Erratum]) -> Point | None:
    """Where replay must restart after this commit: the earliest step an erratum applied by it changes."""
    points = [p for p in (e.corrected_from() for e in applied_now(before, after)) if p is not None]
    return min(points, default=None)


def errata_findings(game_id: str, players: Sequence[str], keys: Mapping[str, PublicKey],
                    before: Mapping[str, Erratum], after: Mapping[str, Erratum], committer: str,
                    firm: Point | None) -> list[Finding]:
    """Every rule a commit's changes to errata/ must keep: a proposal touches only firm entries and carries only
    its proposer's signature; a player adds only his own signature; nothing signed ever changes; an erratum is
    applied once, and only with every player's valid signature."""
    out: list[Finding] = []
    for erratum_id in sorted(set(before) | set(after)):
        old, new = before.get(erratum_id), after.get(erratum_id)
        if new is None:
            assert old is not None
            out.append(Finding("erratum.changed", f"erratum {erratum_id} was removed: errata stay in the report",
                               file=old.file))
            continue
        if old is not None and old.raw == new.raw:
            continue
        out.extend(_one(game_id, players, keys, old, new, committer, firm))
    return out


def _one(game_id: str, players: Sequence[str], keys: Mapping[str, PublicKey], old: Erratum | None, new: Erratum,
         committer: str, firm: Point | None) -> list[Finding]:
    f = new.file
    out: list[Finding] = []
    if f != f"errata/{new.id}.yaml":
        out.append(Finding("erratum.malformed", f"erratum {new.id} must live in errata/{new.id}.yaml", file=f))
    if old is None:
        out.extend(_proposal(players, new, committer, firm))
    else:
        if old.content() != new.content():
            out.append(Finding("erratum.changed", f"erratum {new.id}: what was signed cannot change (propose a "
                               "new erratum instead)", file=f))
        if old.applied and not new.applied:
            out.append(Finding("erratum.changed", f"erratum {new.id} was applied; that cannot be undone", file=f))
    for player, armored in sorted(new.signatures.items()):
        if old is not None and old.signatures.get(player) == armored:
            continue
        if player != committer:
            out.append(Finding("erratum.foreign-signature", f"{committer} wrote a signature in {player}'s name "
                               f"on erratum {new.id}: each player adds his own (pbem erratum sign {new.id})", file=f))
        elif old is not None and player in old.signatures:
            out.append(Finding("erratum.changed", f"{player} signed erratum {new.id} twice", file=f))
        elif not signature_valid(game_id, new, player, keys):
            out.append(Finding("erratum.signature", f"{player}'s signature on erratum {new.id} does not verify "
                               "under his key in game.yaml over this erratum's content", file=f))
    if old is not None:
        for player in sorted(set(old.signatures) - set(new.signatures)):
            out.append(Finding("erratum.changed", f"{player}'s signature on erratum {new.id} was removed", file=f))
    for player in sorted(set(new.signatures) - set(players)):
        out.append(Finding("erratum.foreign-signature", f"{player!r} holds no seat, yet signed erratum {new.id}",
                           file=f))
    if new.applied and not (old is not None and old.applied):
        missing = [p for p in new.unsigned(players)]
        bad = [p for p in players if p in new.signatures and not signature_valid(game_id, new, p, keys)]
        if missing or bad:
            who = ", ".join(missing + bad)
            out.append(Finding("erratum.unsigned", f"erratum {new.id} cannot be applied: it lacks a valid signature "
                               f"of {who} (every player signs an erratum, DESIGN §4.8)", file=f,
                               hint=f"{who} runs `pbem erratum sign {new.id}`"))
    return out


def _proposal(players: Sequence[str], new: Erratum, proposer: str, firm: Point | None) -> list[Finding]:
    f = new.file
    out = []
    if new.by != proposer:
        out.append(Finding("erratum.malformed", f"{proposer} proposed erratum {new.id} in {new.by}'s name", file=f))
    if set(new.signatures) - {proposer}:
        out.append(Finding("erratum.foreign-signature", "a new erratum carries only its proposer's signature; "
                           "the others sign it in commits of their own", file=f))
    if len(players) > 1 and new.applied:
        out.append(Finding("erratum.unsigned", f"erratum {new.id} cannot be applied as it is proposed: the other "
                           "players sign it first", file=f))
    return out + entry_findings(players, new, firm)


def entry_findings(players: Sequence[str], new: Erratum, firm: Point | None) -> list[Finding]:
    """What a proposed erratum may correct, in either form: something, only entries of seated players, only
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
