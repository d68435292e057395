"""The invite code of a `dow/1` game (seed 001: 'The invite code is "IReadTheGameDescription"'), kept in
game.yaml only salted and hashed, so the public repository does not give the code away (DESIGN §7.2).

Two forms of `setup.invite_hash`:

* "ed25519:" + salt (16 bytes, 32 hex digits) + ":" + an Ed25519 public key (64 hex digits) whose seed is
  SHA-256("pbem-invite-v1" || salt || UTF-8 code): a salted hash of the code that can also check a signature.
  `pbem join --code CODE` signs the seat it claims with the key the code gives (`proof`), and writes the
  signature in the seat (`invite:`); every verifier checks it (`proves`), so a join by plain git with a wrong
  code, or with none, is refused (`setup.bad-invite-code`), and the code itself never enters the repository.
  The signature covers the game id, the seat and the key claiming it: it cannot be copied to another seat.
* "sha256:" + salt + ":" + SHA-256(salt || UTF-8 code): the older form, checked by the joining player's pbem
  only (a plain hash cannot check anything without the code itself).
"""

from __future__ import annotations

import hashlib
import hmac
import re

import nacl.exceptions
import nacl.signing

_SHAPE = re.compile(r"sha256:([0-9a-f]{32}):([0-9a-f]{64})\Z", re.ASCII)
_KEY_SHAPE = re.compile(r"ed25519:([0-9a-f]{32}):([0-9a-f]{64})\Z", re.ASCII)
PROOF = re.compile(r"[0-9a-f]{128}\Z", re.ASCII)
DOMAIN = b"pbem-invite-v1"


def well_formed(text: object) -> bool:
    """Whether `text` is an invite hash of one of the forms above."""
    return isinstance(text, str) and (_SHAPE.match(text) is not None or _KEY_SHAPE.match(text) is not None)


def checkable(text: object) -> bool:
    """Whether the verifier checks joins against this invite hash (the ed25519 form)."""
    return isinstance(text, str) and _KEY_SHAPE.match(text) is not None


def _salt(salt_hex: str) -> bytes:
    salt = bytes.fromhex(salt_hex)
    if len(salt) != 16:
        raise ValueError("the salt must be 16 bytes (32 hex digits)")
    return salt


def hash_code(code: str, salt_hex: str) -> str:
    """The older invite hash of `code` with a given salt (the salt comes from the caller: no randomness here)."""
    salt = _salt(salt_hex)
    return f"sha256:{salt.hex()}:{hashlib.sha256(salt + code.encode('utf-8')).hexdigest()}"


def _signing_key(code: str, salt_hex: str) -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey(hashlib.sha256(DOMAIN + _salt(salt_hex) + code.encode("utf-8")).digest())


def key_code(code: str, salt_hex: str) -> str:
    """The invite hash of `code` the verifier checks joins against: "ed25519:SALT:PUBLIC KEY"."""
    return f"ed25519:{salt_hex}:{bytes(_signing_key(code, salt_hex).verify_key).hex()}"


def matches(invite_hash: str, code: str) -> bool:
    """Whether `code` is the invite code hashed in `invite_hash` (constant-time comparison)."""
    if not isinstance(invite_hash, str):
        return False
    for shape, make in ((_SHAPE, hash_code), (_KEY_SHAPE, key_code)):
        match = shape.match(invite_hash)
        if match is not None:
            return hmac.compare_digest(make(code, match[1]), invite_hash)
    return False


def _claim(game_id: str, seat: str, key_line: str) -> bytes:
    return DOMAIN + b"\x00" + b"\x00".join(s.encode("utf-8") for s in (game_id, seat, key_line))


def proof(invite_hash: str, code: str, game_id: str, seat: str, key_line: str) -> str | None:
    """The seat's `invite:` value: the code's signature over (game id, seat, key line), 128 hex digits; None
    when the hash is not of the checkable form or `code` is not its code."""
    match = _KEY_SHAPE.match(invite_hash) if isinstance(invite_hash, str) else None
    if match is None or not matches(invite_hash, code):
        return None
    return _signing_key(code, match[1]).sign(_claim(game_id, seat, key_line)).signature.hex()


def proves(invite_hash: str, value: object, game_id: str, seat: str, key_line: str) -> bool:
    """Whether `value` (a seat's `invite:`) is the signature of this game's code over this claim."""
    match = _KEY_SHAPE.match(invite_hash) if isinstance(invite_hash, str) else None
    if match is None or not isinstance(value, str) or PROOF.match(value) is None:
        return False
    try:
        nacl.signing.VerifyKey(bytes.fromhex(match[2])).verify(_claim(game_id, seat, key_line), bytes.fromhex(value))
    except (nacl.exceptions.BadSignatureError, ValueError):
        return False
    return True
