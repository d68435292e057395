"""A part of a sealed secret opened alone (DESIGN §4.7, §6; seed 000 §2.C): the speed plot of a sealed energy
allocation, opened at the turn start while the rest stays in its box until the end of the battle.

The box holds the whole secret; beside it, at sealing, the file carries `part_commit`, a commitment to one
projection of it (the part): `BLAKE2b-256(key=b"pbem-part-v1", data = salt || canonical part)`. The salt is
`BLAKE2b-256(key=b"pbem-part-salt-v1", data = box key)`: 32 bytes nobody can guess (a speed has 32 values, so an
unsalted commitment would show it), which the owner rebuilds from his key file alone (the box key is in
`owner_box`) and which gives nothing of the box key away. Opening the part publishes the part and its salt;
the commitment binds them, so the part cannot be opened to another value. When the box itself is opened at the
end, the part must be what the box holds (the verifier compares them).
"""

from __future__ import annotations

import hashlib
import hmac

PART_KEY = b"pbem-part-v1"
SALT_KEY = b"pbem-part-salt-v1"


def part_salt(box_key: bytes) -> bytes:
    """The salt of a secret's part, derived from its box key (one-way: the salt shows nothing of the key)."""
    return hashlib.blake2b(bytes(box_key), digest_size=32, key=SALT_KEY).digest()


def part_commitment(salt: bytes, part: bytes) -> bytes:
    """`BLAKE2b-256(key=b"pbem-part-v1", data = salt || part)`, `part` being the part's canonical JSON."""
    return hashlib.blake2b(bytes(salt) + bytes(part), digest_size=32, key=PART_KEY).digest()


def opens(commit: bytes, salt: bytes, part: bytes) -> bool:
    """Whether `salt` and `part` open the commitment `commit` (32-byte salt only)."""
    return len(salt) == 32 and hmac.compare_digest(part_commitment(salt, part), bytes(commit))
