"""Private press, the construction alone (pbem.crypto.whisper; DESIGN §7.2, §6): one box, a key sealed per reader,
a key-committing hash, the sender's signature in one base64 line."""

from __future__ import annotations

import pytest

from pbem.crypto import sshsig
from pbem.crypto import whisper as crypto
from pbem.crypto.keys import PrivateKey

ALICE, BOB, EVE = (PrivateKey.from_seed(bytes([n]) * 32, name) for n, name in ((1, "alice"), (2, "bob"), (3, "eve")))


def test_every_reader_opens_it_and_no_one_else() -> None:
    data = crypto.plaintext("g", "alice-0001", "hello")
    sealed = crypto.seal(data, {"alice": ALICE.public, "bob": BOB.public})
    for who, key in (("alice", ALICE), ("bob", BOB)):
        opened = crypto.recover_key(sealed.keys[who], key)
        assert opened == sealed.key and crypto.open_box(sealed.box, opened, sealed.commit) == data
    assert all(crypto.recover_key(k, EVE) is None for k in sealed.keys.values())
    assert crypto.recover_key("not base64!", BOB) is None


def test_a_wrong_key_or_another_commitment_is_refused() -> None:
    data = crypto.plaintext("g", "alice-0001", "hello")
    sealed = crypto.seal(data, {"bob": BOB.public}, key=bytes(range(32)))
    assert sealed.commit == crypto.commitment(bytes(range(32)), data)
    with pytest.raises(crypto.WhisperError, match="does not open"):
        crypto.open_box(sealed.box, bytes(32), sealed.commit)
    other = crypto.commitment(sealed.key, crypto.plaintext("g", "alice-0001", "goodbye"))
    with pytest.raises(crypto.WhisperError, match="commit mismatch"):
        crypto.open_box(sealed.box, sealed.key, other)


def test_the_signature_is_one_line_and_covers_the_game_and_the_message() -> None:
    body = {"id": "alice-0001", "to": ["bob"], "box": "AA==", "commit": "00" * 32, "keys": {"alice": "AA=="}}
    sig = crypto.compact(sshsig.sign(ALICE, crypto.signed_data("g", body), crypto.NAMESPACE))
    assert "\n" not in sig
    assert sshsig.verify(crypto.armored(sig), crypto.signed_data("g", {**body, "sig": sig}),
                         crypto.NAMESPACE).same_key(ALICE.public)
    for changed in (crypto.signed_data("h", body), crypto.signed_data("g", {**body, "to": ["eve"]})):
        with pytest.raises(Exception, match="does not match"):
            sshsig.verify(crypto.armored(sig), changed, crypto.NAMESPACE)
