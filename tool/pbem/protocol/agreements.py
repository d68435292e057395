"""Agreements: documents every required player signs (DESIGN §4.8; seed 000 §2.A "by mutual consent").

An agreement (agreements/<author>-NNNN.yaml) has an `id` naming its author, a `kind`, its proposer `by`, the
`content` the kind defines, and `signatures`: each player's SSH signature (namespace `pbem`) over

    b"pbem-agreement-v1" + game_id + b"\\x00" + sha256(canonical agreement without its signatures)

so a signature covers the kind, the content and the id, and carries over neither to another agreement nor to
another game. Its life, one commit each, made out of turn:

1. proposed: a new file carrying its proposer's own signature only (its id names him: `ownership.id-author`);
2. signed: a player adds his own signature, and nothing else (`agreement.foreign-signature`,
   `agreement.signature`); nothing signed ever changes, and nothing is ever removed (`agreement.changed`).

What each kind of agreement does (who signs, what its content says, when it is open, its effect) is its row in
protocol.kinds; this module is the document and its signing. Pure: no git, files or printing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pbem.crypto import sshsig
from pbem.crypto.keys import PublicKey
from pbem.errors import PbemError
from pbem.formats.canonical import dumps as canonical
from pbem.protocol.model import Entry

NAMESPACE = "pbem"  # as dice voids and errata: never `git`, so no agreement signature can pass for a commit's
DOMAIN = b"pbem-agreement-v1"
UNSIGNED_FIELDS = ("signatures",)  # what the signatures cannot cover: they are added after signing


# --- signing, shared by every document players sign together (agreements, errata) ------------------------------

def consent_message(domain: bytes, game_id: str, body: bytes) -> bytes:
    """What a player signs: a domain, the game id (no signature carries over to another game) and the SHA-256
    of the document's canonical bytes (`body`, everything but the signatures)."""
    return domain + game_id.encode() + b"\0" + hashlib.sha256(body).digest()


def signed_by(armored: str | None, message: bytes, key: PublicKey | None) -> bool:
    """Whether `armored` is a valid SSHSIG (namespace pbem) of `message` by `key`."""
    if armored is None or key is None:
        return False
    try:
        signer = sshsig.verify(armored, message, NAMESPACE)
    except PbemError:
        return False
    return signer.same_key(key)


# --- the agreement ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Agreement:
    """One agreement as read from agreements/<id>.yaml (validated against pbem/agreement/1)."""

    raw: Mapping[str, Any] = field(repr=False)
    file: str
    lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)  # top-level field -> line
    # an erratum's `removed` and `added` entries, read as report entries (files.readers); else empty
    entries: tuple[tuple[Entry, ...], tuple[Entry, ...]] = field(default=((), ()), repr=False, compare=False)

    @property
    def id(self) -> str:
        return self.raw["id"]

    @property
    def kind(self) -> str:
        return self.raw["kind"]

    @property
    def by(self) -> str:
        return self.raw["by"]

    @property
    def content(self) -> Mapping[str, Any]:
        return self.raw["content"]

    @property
    def signatures(self) -> Mapping[str, str]:
        return self.raw.get("signatures") or {}

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)

    def body(self) -> bytes:
        """The canonical bytes every signer signs the hash of: everything but the signatures."""
        return canonical({k: v for k, v in self.raw.items() if k not in UNSIGNED_FIELDS})

    def unsigned(self, signers: Sequence[str]) -> list[str]:
        """The players among `signers` whose signature is still missing, in table order."""
        return [p for p in signers if p not in self.signatures]


def message(game_id: str, agreement: Agreement) -> bytes:
    """What each signer signs (module docstring)."""
    return consent_message(DOMAIN, game_id, agreement.body())


def signature_valid(game_id: str, agreement: Agreement, player: str, keys: Mapping[str, PublicKey]) -> bool:
    """Whether `player`'s signature on `agreement` verifies under his key in game.yaml."""
    return signed_by(agreement.signatures.get(player), message(game_id, agreement), keys.get(player))


def valid_signers(game_id: str, agreement: Agreement, keys: Mapping[str, PublicKey]) -> set[str]:
    """The players whose signature on `agreement` verifies."""
    return {p for p in agreement.signatures if signature_valid(game_id, agreement, p, keys)}
