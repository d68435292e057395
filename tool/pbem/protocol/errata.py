"""The errata/ form, older than the erratum agreement (protocol.erratum) and never released; what judges and reads
it stays until the verifier's readers no longer read errata/ (pbem writes it no more):

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

from typing import Mapping, Sequence

from pbem.crypto.keys import PublicKey
from pbem.errors import Finding
# NAMESPACE is re-exported: errata are signed in the agreements' namespace
from pbem.protocol.agreements import NAMESPACE, Agreement, consent_message, signed_by  # noqa: F401
from pbem.protocol.erratum import Erratum, entry_findings
from pbem.rulesets.base import Point

DOMAIN = b"pbem-erratum-v1\0"


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


