"""Sealed secrets (DESIGN §6, seed 000 §2.C): a box everyone holds, a key only the owner can recover.

A secret's plaintext (the canonical JSON of an allocation, a target, a power's orders) goes into a nacl SecretBox
under a fresh 32-byte key. The key itself is sealed (nacl SealedBox) to the owner's X25519 key, derived from his
Ed25519 key, so the repository alone plus his key file is enough to reveal later, on any machine. A SecretBox is
not key-committing, so the file also carries `commit = BLAKE2b-256(key=b"pbem-seal-v1", data = key || plaintext)`:
without it a cheater could craft one box that opens to two plaintexts under two keys and choose at reveal time.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field

import nacl.exceptions
import nacl.public
import nacl.secret

from pbem.crypto.keys import PrivateKey, PublicKey
from pbem.errors import ILLEGAL, PbemError

SEAL_KEY = b"pbem-seal-v1"
KEY_SIZE = nacl.secret.SecretBox.KEY_SIZE  # 32


@dataclass(frozen=True)
class Sealed:
    """What `seal` produces: `box`, `commit` and `owner_box` go into the secret's file; `key` is revealed later."""

    box: bytes
    commit: bytes
    owner_box: bytes
    key: bytes = field(repr=False)  # never in logs or tracebacks before the reveal


def seal_commitment(key: bytes, plaintext: bytes) -> bytes:
    """`BLAKE2b-256(key=b"pbem-seal-v1", data = key || plaintext)`, binding the box to one key and one plaintext."""
    return hashlib.blake2b(bytes(key) + bytes(plaintext), digest_size=32, key=SEAL_KEY).digest()


def _check_key(key: bytes) -> None:
    if not isinstance(key, (bytes, bytearray)) or len(key) != KEY_SIZE:
        got = f"{len(key)} bytes" if isinstance(key, (bytes, bytearray)) else type(key).__name__
        raise PbemError("secret.bad-key", f"a secret's key must be {KEY_SIZE} bytes, got {got}", exit_code=ILLEGAL)


def seal(plaintext: bytes, owner: PublicKey, key: bytes | None = None) -> Sealed:
    """Seal `plaintext` for `owner` (DESIGN §6): SecretBox under a fresh key (or `key`), commitment, owner box.

    `box` is nonce || ciphertext with a random nonce, as nacl's SecretBox writes it.
    """
    if key is None:
        key = os.urandom(KEY_SIZE)
    _check_key(key)
    key = bytes(key)
    box = bytes(nacl.secret.SecretBox(key).encrypt(bytes(plaintext)))
    owner_box = seal_to(key, owner)
    return Sealed(box=box, commit=seal_commitment(key, plaintext), owner_box=owner_box, key=key)


def seal_to(secret: bytes, owner: PublicKey) -> bytes:
    """A 32-byte secret sealed (nacl SealedBox) to `owner`'s X25519 key: the dice roller's own secret, kept in
    the repository so that nothing lives outside it (DESIGN §5); `recover_key` opens it."""
    _check_key(secret)
    return bytes(nacl.public.SealedBox(nacl.public.PublicKey(owner.to_curve25519())).encrypt(bytes(secret)))


def open_sealed(box: bytes, key: bytes, commit: bytes) -> bytes:
    """Open a revealed secret and check it against its commitment (DESIGN §6); returns the plaintext.

    Rules: `secret.bad-key` when the key does not open the box, `secret.commit-mismatch` when it does but
    `BLAKE2b-256(key=b"pbem-seal-v1", data = key || plaintext)` is not the `commit` sealed beforehand.
    """
    _check_key(key)
    try:
        plaintext = nacl.secret.SecretBox(bytes(key)).decrypt(bytes(box))
    except nacl.exceptions.CryptoError:  # also a box too short to hold a nonce and a tag
        raise PbemError(
            "secret.bad-key",
            "the revealed key does not open the sealed box",
            hint="reveal the key that `pbem seal` made for this secret (pbem reveal recovers it from owner_box)",
            exit_code=ILLEGAL,
        ) from None
    expected = seal_commitment(key, plaintext)
    if not hmac.compare_digest(expected, bytes(commit)):
        raise PbemError(
            "secret.commit-mismatch",
            f"the box opens, but to a secret other than the one committed: commit {bytes(commit).hex()}, "
            f"key and plaintext hash to {expected.hex()}",
            exit_code=ILLEGAL,
        )
    return plaintext


def recover_key(owner_box: bytes, owner: PrivateKey) -> bytes:
    """The secret's key from its `owner_box`, with only the owner's Ed25519 key file (DESIGN §6).

    Rule `secret.not-owner` when this key cannot open it (another player's secret, or a damaged box).
    """
    private = nacl.public.PrivateKey(owner.to_curve25519_private())
    try:
        key = nacl.public.SealedBox(private).decrypt(bytes(owner_box))
    except nacl.exceptions.CryptoError:
        raise PbemError(
            "secret.not-owner",
            f"the key {owner.public.fingerprint()} cannot open this secret's owner box",
            hint="only the secret's owner can recover its key; use the key file of the seat that sealed it",
        ) from None  # a wrong key file is the caller's environment (exit 2), not an illegal game
    _check_key(key)
    return key
