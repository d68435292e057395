"""Dice no player can bias (DESIGN §5, seed 000 §2.D): commitments, batch seeds and unbiased rolls.

Every function here is a byte-exact contract (docs/dice.md): a player must be able to re-derive each roll of a
game with a short script of his own. BLAKE2b is always used with a 32-byte digest, and "key=" is BLAKE2b's own
key parameter (RFC 7693), not a prefix of the data. Pure: apart from `fresh_secret`, nothing here reads the
clock, the repository or a random source, and nothing derived ever includes a commit id, message or timestamp
(a roller could grind those until the dice suit him).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import Any

from pbem.errors import ILLEGAL, PbemError
from pbem.formats import canonical

COMMIT_KEY = b"pbem-commit-v1"
CONTRIB_KEY = b"pbem-contrib-v1"
DICE_KEY = b"pbem-dice-v1"
ESCROW_PREFIX = b"pbem-escrow-v1"

# The escrow signs the batch as announced: everything but the fields its own signature produces (docs/dice.md).
ESCROW_UNSIGNED_FIELDS = ("escrow", "results")

SECRET_SIZE = 32
SEED_SIZE = 32
SIGNATURE_SIZE = 64
MIN_SIDES = 2
MAX_SIDES = 1000
_U32 = 1 << 32
_U64 = 1 << 64


def blake2b_256(data: bytes, key: bytes = b"") -> bytes:
    """BLAKE2b with a 32-byte digest and BLAKE2b's own (optional) key parameter."""
    return hashlib.blake2b(data, digest_size=32, key=key).digest()


def fresh_secret() -> bytes:
    """32 fresh random bytes from the OS: a roller's `s_roller` or a player's contribution `s_i` (DESIGN §5).

    The one place pbem draws dice randomness; everything else is derived from what the players committed.
    """
    return os.urandom(SECRET_SIZE)


def _check_secret(secret: bytes, what: str) -> None:
    if not isinstance(secret, (bytes, bytearray)) or len(secret) != SECRET_SIZE:
        got = f"{len(secret)} bytes" if isinstance(secret, (bytes, bytearray)) else type(secret).__name__
        raise PbemError(
            "dice.bad-secret",
            f"{what} must be exactly {SECRET_SIZE} bytes, got {got}",
            hint="a dice secret is 64 lower-case hex digits",
            exit_code=ILLEGAL,
        )


def _check_seed(seed: bytes) -> None:
    if not isinstance(seed, (bytes, bytearray)) or len(seed) != SEED_SIZE:
        got = f"{len(seed)} bytes" if isinstance(seed, (bytes, bytearray)) else type(seed).__name__
        raise PbemError("dice.bad-seed", f"a batch seed must be {SEED_SIZE} bytes, got {got}", exit_code=ILLEGAL)


def _id_bytes(value: str, what: str) -> bytes:
    # The ids are joined with 0x00 separators: an id that is empty or holds a NUL would make two different
    # (game, batch) pairs give the same bytes, so domain separation would be lost.
    if not isinstance(value, str) or not value or "\x00" in value:
        raise PbemError(
            "dice.bad-id", f"{what} must be a non-empty string without NUL, got {value!r}", exit_code=ILLEGAL
        )
    return value.encode("utf-8")


def commitment(secret: bytes) -> bytes:
    """The roller's commitment `c = BLAKE2b-256(key=b"pbem-commit-v1", data=s_roller)` (DESIGN §5)."""
    _check_secret(secret, "the roller's secret")
    return blake2b_256(bytes(secret), key=COMMIT_KEY)


def contribution_commitment(secret: bytes) -> bytes:
    """A contributor's commitment `BLAKE2b-256(key=b"pbem-contrib-v1", data=s_i)` (DESIGN §5 binding: at a table
    of three or more, every contribution is committed before any is revealed; docs/dice.md)."""
    _check_secret(secret, "a contribution")
    return blake2b_256(bytes(secret), key=CONTRIB_KEY)


def seed_commit_reveal(game_id: str, batch_id: str, roller_secret: bytes, contributions: Sequence[bytes]) -> bytes:
    """The batch seed in commit-reveal mode (DESIGN §5).

    `S = BLAKE2b-256(key=b"pbem-dice-v1", data = game_id || 0x00 || batch_id || 0x00 || s_roller || s_1 || … || s_n)`
    with the ids in UTF-8 and `contributions` already in table order (every other player, roller left out).
    Concatenated, never XORed: a player who copies another's contribution cannot cancel it out.
    """
    parts = [_id_bytes(game_id, "the game id"), b"\x00", _id_bytes(batch_id, "the batch id"), b"\x00"]
    _check_secret(roller_secret, "the roller's secret")
    parts.append(bytes(roller_secret))
    for index, contribution in enumerate(contributions):
        _check_secret(contribution, f"contribution {index + 1}")
        parts.append(bytes(contribution))
    return blake2b_256(b"".join(parts), key=DICE_KEY)


def escrow_message(game_id: str, batch_id: str, canonical_batch: bytes) -> bytes:
    """What the escrow key signs: `b"pbem-escrow-v1" || game_id || 0x00 || batch_id || 0x00 || sha256(batch)`.

    `canonical_batch` is `announced_batch(batch)`: the batch as announced, as canonical JSON (DESIGN §5, escrow).
    """
    game, batch = _id_bytes(game_id, "the game id"), _id_bytes(batch_id, "the batch id")
    digest = hashlib.sha256(bytes(canonical_batch)).digest()
    return ESCROW_PREFIX + game + b"\x00" + batch + b"\x00" + digest


def announced_batch(batch: Mapping[str, Any]) -> bytes:
    """The canonical batch the escrow signs: the batch file's mapping as canonical JSON, without the fields the
    signature itself produces (`escrow`, `results`), so the signed bytes are fixed once the batch is announced."""
    return canonical.dumps({name: value for name, value in batch.items() if name not in ESCROW_UNSIGNED_FIELDS})


def seed_escrow(signature: bytes) -> bytes:
    """The batch seed in escrow mode: `S = BLAKE2b-256(key=b"pbem-dice-v1", data=signature)` (DESIGN §5).

    Ed25519 signatures are deterministic, so the seed is fixed by the batch yet unknown until the escrow signs.
    """
    if not isinstance(signature, (bytes, bytearray)) or len(signature) != SIGNATURE_SIZE:
        got = f"{len(signature)} bytes" if isinstance(signature, (bytes, bytearray)) else type(signature).__name__
        raise PbemError(
            "dice.bad-escrow", f"an escrow signature must be {SIGNATURE_SIZE} bytes, got {got}", exit_code=ILLEGAL
        )
    return blake2b_256(bytes(signature), key=DICE_KEY)


def _check_sides(sides: int) -> None:
    if isinstance(sides, bool) or not isinstance(sides, int) or not MIN_SIDES <= sides <= MAX_SIDES:
        raise PbemError(
            "dice.bad-sides",
            f"a die has {MIN_SIDES} to {MAX_SIDES} sides, got {sides!r}",
            exit_code=ILLEGAL,
        )


def _check_index(j: int, what: str) -> None:
    if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < _U32:
        raise PbemError("dice.bad-count", f"{what} must be an integer from 0 to 2^32-1, got {j!r}", exit_code=ILLEGAL)


def threshold(sides: int) -> int:
    """`floor(2^64 / sides) * sides`: the largest multiple of `sides` not above 2^64; draws at or over it are
    rejected so that every face keeps exactly `floor(2^64 / sides)` of the accepted values."""
    _check_sides(sides)
    return (_U64 // sides) * sides


def draw(seed: bytes, j: int, k: int) -> int:
    """Draw k of roll j: `uint64_be(BLAKE2b-256(data = S || uint32_be(j) || uint32_be(k))[0:8])` (no key)."""
    _check_seed(seed)
    _check_index(j, "the roll index j")
    _check_index(k, "the draw index k")
    h = blake2b_256(bytes(seed) + j.to_bytes(4, "big") + k.to_bytes(4, "big"))
    return int.from_bytes(h[:8], "big")


def face(value: int, sides: int) -> int | None:
    """The face (1..sides) a 64-bit draw gives, or None when rejection sampling throws the draw away."""
    return value % sides + 1 if value < threshold(sides) else None


def roll(seed: bytes, sides: int, j: int) -> int:
    """Roll j (0-based) of a batch with seed S and `sides` faces, without modulo bias (DESIGN §5).

    For k = 0, 1, …: take draw(S, j, k) and accept the first below `threshold(sides)`; the roll is `v mod sides + 1`.
    A draw is rejected with probability below sides / 2^64 (under 2^-54 for a d1000), so k > 0 is rare.
    """
    _check_sides(sides)
    for k in range(_U32):
        result = face(draw(seed, j, k), sides)
        if result is not None:
            return result
    raise AssertionError("unreachable: 2^32 draws in a row were rejected")  # pragma: no cover


def rolls(seed: bytes, sides: int, count: int) -> list[int]:
    """Rolls 0 … count-1 of a batch: the batch's `results` in the order of its `rolls` list."""
    _check_sides(sides)
    _check_index(count, "the number of rolls")
    return [roll(seed, sides, j) for j in range(count)]


def first_player(seed: bytes, players: Sequence[str]) -> str:
    """Who starts (`pbem start --roll`, DESIGN §5): `players[roll(S, len(players), 0) - 1]`, table order.

    A one-seat table needs no roll (the formula would give 1 anyway; a 1-sided die is not a valid batch).
    """
    if not players:
        raise PbemError("dice.no-players", "cannot choose who starts: the table is empty", exit_code=ILLEGAL)
    if len(players) == 1:
        _check_seed(seed)
        return players[0]
    return players[roll(seed, len(players), 0) - 1]
