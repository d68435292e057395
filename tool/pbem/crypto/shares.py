"""A sealed set's key shared among the other players (DESIGN §4.7 "withholding must never pay"; docs/dow.md
"A withheld set is opened without its owner").

When a power seals its orders, the 32-byte key of its SecretBox (crypto.seal) is split by Shamir's scheme into one
share per other power, any `threshold` of which rebuild it. pycryptodome's Shamir works on 16-byte secrets over
GF(2^128), so the key is split as two halves with the same indices; a share is the two 16-byte halves, 32 bytes,
sealed (nacl SealedBox) to its recipient's X25519 key like an owner box. Each share is also bound to its set and
recipient by `share_commit = BLAKE2b-256(key=b"pbem-share-v1", data = secret id || 0x00 || recipient || 0x00 ||
index || share)`, published with the seal: a share later shown in the clear is checked against it, so a forged
share, or one taken from another set, is refused before it is combined.
"""

from __future__ import annotations

import hashlib
from typing import Mapping, Sequence

from pbem.crypto.keys import PublicKey
from pbem.crypto.seal import KEY_SIZE, seal_to

SHARE_KEY = b"pbem-share-v1"
HALF = KEY_SIZE // 2


def threshold_for(others: int) -> int:
    """How many of `others` shares rebuild a key: all but one (at least one). One absent power cannot block the
    opening; only a coalition of every other power but one can open a set early (docs/dow.md)."""
    return max(1, others - 1)


def split(key: bytes, recipients: Sequence[str], threshold: int) -> dict[str, tuple[int, bytes]]:
    """recipient -> (index from 1, 32-byte share) for a 32-byte key; any `threshold` shares rebuild it."""
    if len(key) != KEY_SIZE:
        raise ValueError(f"a key is {KEY_SIZE} bytes")
    n = len(recipients)
    if n == 1:  # Shamir needs two shares at least; one recipient holds the key itself
        return {recipients[0]: (1, bytes(key))}
    from Crypto.Protocol.SecretSharing import Shamir  # pycryptodome: only where shares are dealt or used

    low = Shamir.split(threshold, n, bytes(key[:HALF]))
    high = Shamir.split(threshold, n, bytes(key[HALF:]))
    return {who: (i, a + b) for who, (i, a), (_j, b) in zip(recipients, low, high)}


def combine(shares: Sequence[tuple[int, bytes]], total: int) -> bytes:
    """The key rebuilt from (index, share) pairs (as many as the threshold); `total` the number dealt."""
    if total == 1:
        return bytes(shares[0][1])
    from Crypto.Protocol.SecretSharing import Shamir

    low = Shamir.combine([(i, s[:HALF]) for i, s in shares])
    high = Shamir.combine([(i, s[HALF:]) for i, s in shares])
    return low + high


def commitment(secret_id: str, recipient: str, index: int, share: bytes) -> str:
    """The hex commitment binding a share to its set, its recipient and its index."""
    data = f"{secret_id}\x00{recipient}\x00{index}".encode() + b"\x00" + bytes(share)
    return hashlib.blake2b(data, digest_size=32, key=SHARE_KEY).hexdigest()


def deal(secret_id: str, key: bytes, recipients: Mapping[str, PublicKey]) -> dict[str, object]:
    """The fields a sealed set carries for its opening without its owner: `threshold`, and per recipient
    "INDEX.BOX.COMMIT": his share's index, the share sealed to him (base64) and its commitment (one string, so the
    secret file stays small to read and check)."""
    import base64

    names = sorted(recipients)
    threshold = threshold_for(len(names))
    dealt = split(key, names, threshold)
    return {"threshold": threshold,
            "shares": {who: f"{i}.{base64.b64encode(seal_to(share, recipients[who])).decode()}."
                            f"{commitment(secret_id, who, i, share)}" for who, (i, share) in dealt.items()}}


def parse(dealt: str) -> tuple[int, bytes, str]:
    """(index, sealed box, commitment hex) of one dealt share "INDEX.BOX.COMMIT"."""
    import base64

    index, box, commit = dealt.split(".")
    return int(index), base64.b64decode(box), commit
