"""Private press (DESIGN §7.2 "private press is sealed to its recipients", §6 sealing): one message, many readers.

The plaintext (canonical JSON `{"game", "id", "text"}`) goes into a nacl SecretBox under a fresh 32-byte key; the
key is sealed (nacl SealedBox) to each recipient's X25519 key, derived from his Ed25519 key as for a secret's
owner box, and to the sender's own, so the sender can read what he sent on any machine. As for secrets, a
SecretBox is not key-committing, so the message carries `commit = BLAKE2b-256(key=b"pbem-whisper-v1",
data = key || plaintext)`: a disclosed key opens the box to the one text committed, never to a second one.

The sender signs the message (all of it but `sig`) with an SSHSIG in namespace `pbem` over
`b"pbem-whisper-v1" || game_id || 0x00 || sha256(canonical message)`, so a disclosure proves who sent the text
also away from the game's history (within it, the sender's commit signature covers his press file too). The
signature is stored as the base64 of the SSHSIG blob, without its armor, so a message stays one line.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

import nacl.exceptions
import nacl.public
import nacl.secret

from pbem.crypto import wire
from pbem.crypto.keys import PrivateKey, PublicKey
from pbem.crypto.sshsig import LABEL
from pbem.formats.canonical import dumps as canonical

DOMAIN = b"pbem-whisper-v1"
NAMESPACE = "pbem"
KEY_SIZE = nacl.secret.SecretBox.KEY_SIZE


class WhisperError(ValueError):
    """A whisper or a disclosure that does not hold; the message says what."""


@dataclass(frozen=True)
class Sealed:
    """A whisper as stored, less its signature: box, commit and the key sealed per reader (base64 / hex)."""

    box: str
    commit: str
    keys: dict[str, str]
    key: bytes = field(repr=False)


def plaintext(game_id: str, whisper_id: str, text: str) -> bytes:
    """What is sealed: the text bound to its game and its id."""
    return canonical({"game": game_id, "id": whisper_id, "text": text})


def commitment(key: bytes, data: bytes) -> str:
    """`BLAKE2b-256(key=b"pbem-whisper-v1", data = key || plaintext)`, hex."""
    return hashlib.blake2b(bytes(key) + bytes(data), digest_size=32, key=DOMAIN).hexdigest()


def seal(data: bytes, readers: Mapping[str, PublicKey], key: bytes | None = None) -> Sealed:
    """Seal `data` under a fresh key (or `key`), the key sealed to each reader (recipients and sender)."""
    key = bytes(key) if key is not None else os.urandom(KEY_SIZE)
    if len(key) != KEY_SIZE:
        raise WhisperError(f"a whisper's key is {KEY_SIZE} bytes, got {len(key)}")
    box = bytes(nacl.secret.SecretBox(key).encrypt(bytes(data)))
    sealed = {who: _b64(nacl.public.SealedBox(nacl.public.PublicKey(pub.to_curve25519())).encrypt(key))
              for who, pub in readers.items()}
    return Sealed(_b64(box), commitment(key, data), sealed, key)


def signed_data(game_id: str, whisper: Mapping[str, Any]) -> bytes:
    """What the sender signs: the domain, the game id and the hash of the canonical whisper without `sig`."""
    body = {k: v for k, v in whisper.items() if k != "sig"}
    return DOMAIN + game_id.encode() + b"\x00" + hashlib.sha256(canonical(body)).digest()


def compact(armored: str) -> str:
    """An armored SSHSIG as one base64 line (the armor's lines joined)."""
    return "".join(armored.strip().splitlines()[1:-1])


def armored(sig: str) -> str:
    """The canonical armor of a signature stored by `compact`; WhisperError when it is not base64."""
    return wire.armor(LABEL, _unb64(sig, "sig"))


def recover_key(sealed_key: str, me: PrivateKey) -> bytes | None:
    """The message key from the copy sealed to me, or None when it is not mine to open."""
    try:
        key = nacl.public.SealedBox(nacl.public.PrivateKey(me.to_curve25519_private())).decrypt(
            _unb64(sealed_key, "keys"))
    except (nacl.exceptions.CryptoError, WhisperError):
        return None
    return bytes(key) if len(key) == KEY_SIZE else None


def open_box(box: str, key: bytes, commit: str) -> bytes:
    """The plaintext of a whisper under `key`, checked against its commitment (§6); WhisperError otherwise."""
    if len(key) != KEY_SIZE:
        raise WhisperError(f"a whisper's key is {KEY_SIZE} bytes, got {len(key)}")
    try:
        data = nacl.secret.SecretBox(bytes(key)).decrypt(_unb64(box, "box"))
    except nacl.exceptions.CryptoError:
        raise WhisperError("the key does not open the whisper's box") from None
    if not hmac.compare_digest(commitment(key, data), str(commit)):
        raise WhisperError("the box opens, but to a text other than the one committed (commit mismatch)")
    return bytes(data)


def _b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _unb64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(str(text).encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise WhisperError(f"{what} is not base64") from None
