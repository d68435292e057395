"""Sealed secrets (DESIGN §6, seed 000 §2.C): seal, recover the key with only the key file, reveal and check."""

from __future__ import annotations

import hashlib

import nacl.secret
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.crypto import seal as sealing
from pbem.crypto.keys import PrivateKey
from pbem.errors import ILLEGAL, PbemError

ALICE = PrivateKey.from_seed(bytes(range(32)), "alice")
BOB = PrivateKey.from_seed(bytes(range(32, 64)), "bob")
ALLOCATION = b'{"CA":{"shields":6,"speed":12}}'


def _rule(call) -> PbemError:  # type: ignore[no-untyped-def]
    with pytest.raises(PbemError) as caught:
        call()
    return caught.value


def test_seal_round_trip_and_layout() -> None:
    sealed = sealing.seal(ALLOCATION, ALICE.public)
    assert len(sealed.key) == 32
    # nacl SecretBox: 24-byte nonce || ciphertext with its 16-byte tag; SealedBox: 32-byte ephemeral key + tag.
    assert len(sealed.box) == 24 + len(ALLOCATION) + 16
    assert len(sealed.owner_box) == 32 + 16 + 32
    expected = hashlib.blake2b(sealed.key + ALLOCATION, digest_size=32, key=b"pbem-seal-v1").digest()
    assert sealed.commit == expected
    assert sealing.open_sealed(sealed.box, sealed.key, sealed.commit) == ALLOCATION
    assert sealed.key.hex() not in repr(sealed)


@settings(max_examples=25)
@given(st.binary(max_size=300))
def test_any_plaintext_round_trips(plaintext: bytes) -> None:
    sealed = sealing.seal(plaintext, BOB.public)
    key = sealing.recover_key(sealed.owner_box, BOB)
    assert key == sealed.key
    assert sealing.open_sealed(sealed.box, key, sealed.commit) == plaintext


def test_a_given_key_fixes_the_commitment_not_the_box() -> None:
    key = bytes([7]) * 32
    first, second = sealing.seal(ALLOCATION, ALICE.public, key), sealing.seal(ALLOCATION, ALICE.public, key)
    assert first.commit == second.commit and first.key == second.key == key
    assert first.box != second.box  # a fresh random nonce each time
    assert first.owner_box != second.owner_box  # a fresh ephemeral key each time


def test_the_owner_with_only_his_key_file_recovers_the_key_and_reveals() -> None:
    sealed = sealing.seal(ALLOCATION, ALICE.public)
    key_file_text = ALICE.to_openssh()  # all a player on a new machine has
    owner = PrivateKey.from_openssh(key_file_text)
    key = sealing.recover_key(sealed.owner_box, owner)
    assert sealing.open_sealed(sealed.box, key, sealed.commit) == ALLOCATION


def test_another_player_cannot_recover_the_key() -> None:
    sealed = sealing.seal(ALLOCATION, ALICE.public)
    err = _rule(lambda: sealing.recover_key(sealed.owner_box, BOB))
    assert err.finding.rule == "secret.not-owner"
    assert _rule(lambda: sealing.recover_key(sealed.owner_box[:-1], ALICE)).finding.rule == "secret.not-owner"


@pytest.mark.parametrize(
    "damage",
    [lambda s: (s.box, bytes(32)), lambda s: (s.box[:-1], s.key), lambda s: (s.box[:10], s.key)],
    ids=["wrong-key", "truncated-box", "no-room-for-nonce"],
)
def test_a_key_that_does_not_open_the_box_is_bad_key(damage) -> None:  # type: ignore[no-untyped-def]
    sealed = sealing.seal(ALLOCATION, ALICE.public)
    box, key = damage(sealed)
    err = _rule(lambda: sealing.open_sealed(box, key, sealed.commit))
    assert err.finding.rule == "secret.bad-key" and err.exit_code == ILLEGAL


@pytest.mark.parametrize("key", [b"", bytes(31), bytes(33)])
def test_keys_are_32_bytes(key: bytes) -> None:
    assert _rule(lambda: sealing.seal(ALLOCATION, ALICE.public, key)).finding.rule == "secret.bad-key"
    assert _rule(lambda: sealing.open_sealed(bytes(60), key, bytes(32))).finding.rule == "secret.bad-key"


def test_the_commitment_catches_a_box_swapped_after_sealing() -> None:
    """Why `commit` exists (DESIGN §6): a box is just bytes; a cheater can swap it for another one that his key
    opens. The SecretBox alone says "authentic"; only the commitment made at sealing time says "not the secret you
    sealed". (A SecretBox is not key-committing either: one box can even be crafted to open under two keys.)"""
    key = bytes([9]) * 32
    honest = sealing.seal(b'{"target":"D7"}', ALICE.public, key)
    # Later, the same key re-used on the plaintext he now wishes he had sealed.
    swapped = bytes(nacl.secret.SecretBox(key).encrypt(b'{"target":"F5"}'))
    assert nacl.secret.SecretBox(key).decrypt(swapped) == b'{"target":"F5"}'  # the box itself is fine
    err = _rule(lambda: sealing.open_sealed(swapped, key, honest.commit))
    assert err.finding.rule == "secret.commit-mismatch" and err.exit_code == ILLEGAL
    # And under another key: a second sealing that opens, but again not to what was committed.
    other = sealing.seal(b'{"target":"F5"}', ALICE.public)
    assert _rule(lambda: sealing.open_sealed(other.box, other.key, honest.commit)).finding.rule == (
        "secret.commit-mismatch"
    )
    assert sealing.open_sealed(honest.box, key, honest.commit) == b'{"target":"D7"}'
