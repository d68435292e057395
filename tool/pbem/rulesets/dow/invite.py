"""The invite code of a `dow/1` game (seed 001: 'The invite code is "IReadTheGameDescription"'), kept in
game.yaml only as a salted hash, so the public repository does not give the code away.

Format: "sha256:" + salt (16 bytes, 32 lower-case hex digits) + ":" + SHA-256(salt || UTF-8 code) (64 hex digits).
`pbem join --code CODE` checks a code with `matches`.
"""

from __future__ import annotations

import hashlib
import hmac
import re

_SHAPE = re.compile(r"sha256:([0-9a-f]{32}):([0-9a-f]{64})\Z", re.ASCII)


def well_formed(text: object) -> bool:
    """Whether `text` is an invite hash of the form above."""
    return isinstance(text, str) and _SHAPE.match(text) is not None


def hash_code(code: str, salt_hex: str) -> str:
    """The invite hash of `code` with a given salt (the salt comes from the caller: no randomness here)."""
    salt = bytes.fromhex(salt_hex)
    if len(salt) != 16:
        raise ValueError("the salt must be 16 bytes (32 hex digits)")
    return f"sha256:{salt.hex()}:{hashlib.sha256(salt + code.encode('utf-8')).hexdigest()}"


def matches(invite_hash: str, code: str) -> bool:
    """Whether `code` is the invite code hashed in `invite_hash` (constant-time comparison)."""
    match = _SHAPE.match(invite_hash) if isinstance(invite_hash, str) else None
    if match is None:
        return False
    expected = hash_code(code, match[1])
    return hmac.compare_digest(expected, invite_hash)
