"""SSHSIG (DESIGN §3): we sign exactly like `ssh-keygen -Y sign`, and verify only that one canonical shape."""

from __future__ import annotations

import base64
import contextlib
import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitutil import Sandbox, fixed_key
from pbem.crypto import sshsig, wire
from pbem.crypto.keys import PrivateKey, load_private_key
from pbem.errors import PbemError

MESSAGE = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> 1 +0000\n\nturn 1\n"


def ssh_keygen_sign(box: Sandbox, key_path: Path, message: bytes, namespace: str = "git") -> str:
    out = box.run("ssh-keygen", "-Y", "sign", "-n", namespace, "-f", key_path, input=message).stdout.decode()
    assert out.endswith("-----\n")
    return out[:-1]


def build(
    key: PrivateKey,
    message: bytes = MESSAGE,
    *,
    magic: bytes = b"SSHSIG",
    version: int = 1,
    key_blob: bytes | None = None,
    namespace: str = "git",
    reserved: bytes = b"",
    hash_name: str = "sha512",
    sig_type: str = "ssh-ed25519",
    sig: bytes | None = None,
    trailing: bytes = b"",
    inner_trailing: bytes = b"",
    width: int = 70,
) -> str:
    """Re-encode an SSHSIG blob field by field, with a real signature over the fields given."""
    digest = hashlib.new(hash_name, message).digest() if hash_name in ("sha256", "sha512") else b"x"
    signed = (
        magic
        + wire.string(namespace.encode())
        + wire.string(reserved)
        + wire.string(hash_name.encode())
        + wire.string(digest)
    )
    signature = wire.string(sig_type.encode()) + wire.string(sig if sig is not None else key.sign_raw(signed))
    blob = (
        magic
        + wire.u32(version)
        + wire.string(key_blob if key_blob is not None else key.public.blob())
        + wire.string(namespace.encode())
        + wire.string(reserved)
        + wire.string(hash_name.encode())
        + wire.string(signature + inner_trailing)
        + trailing
    )
    text = base64.b64encode(blob).decode()
    lines = [text[i : i + width] for i in range(0, len(text), width)]
    return "\n".join(["-----BEGIN SSH SIGNATURE-----", *lines, "-----END SSH SIGNATURE-----"])


def rule(armored: str, message: bytes = MESSAGE) -> str:
    with pytest.raises(PbemError) as exc:
        sshsig.verify(armored, message)
    assert exc.value.exit_code == 1
    return exc.value.finding.rule


# -- agreement with ssh-keygen ------------------------------------------------------------------------------


def test_our_signature_is_byte_identical_to_ssh_keygen(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path, key = box.new_key("alice")
    assert sshsig.sign(key, MESSAGE) == ssh_keygen_sign(box, path, MESSAGE)  # Ed25519 is deterministic


def test_builder_reproduces_sign() -> None:
    key = fixed_key()
    assert build(key) == sshsig.sign(key, MESSAGE)


def test_ssh_keygen_verify_accepts_our_signature(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    key = fixed_key("bob")
    allowed = box.allowed_signers({"kli": key.public})
    sig = tmp_path / "msg.sig"
    sig.write_text(sshsig.sign(key, MESSAGE) + "\n")
    done = box.run("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "kli", "-n", "git", "-s", sig, input=MESSAGE)
    assert b'Good "git" signature for kli' in done.stdout
    bad = box.run(
        "ssh-keygen",
        "-Y",
        "verify",
        "-f",
        allowed,
        "-I",
        "kli",
        "-n",
        "git",
        "-s",
        sig,
        input=MESSAGE + b"x",
        check=False,
    )
    assert bad.returncode != 0


def test_we_verify_ssh_keygen_signatures(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path = box.ssh_keygen_key("carol")
    armored = ssh_keygen_sign(box, path, MESSAGE)
    signer = sshsig.verify(armored, MESSAGE)
    assert signer.same_key(load_private_key(path).public)
    assert rule(armored, MESSAGE + b"\n") == "signature.invalid"


def test_file_namespace_from_ssh_keygen_is_refused(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path = box.ssh_keygen_key("dave")
    assert rule(ssh_keygen_sign(box, path, MESSAGE, namespace="file")) == "signature.namespace"


# -- one canonical shape --------------------------------------------------------------------------------------

KEY = fixed_key("alice")
OTHER = fixed_key("bob")
GOOD = sshsig.sign(KEY, MESSAGE)


def _ecdsa_blob() -> bytes:
    return wire.string(b"ecdsa-sha2-nistp256") + wire.string(b"nistp256") + wire.string(b"\x04" + b"\x01" * 64)


@pytest.mark.parametrize(
    ("armored", "expected"),
    [
        pytest.param(build(KEY, namespace="file"), "signature.namespace", id="namespace-file"),
        pytest.param(build(KEY, namespace="gitx"), "signature.namespace", id="namespace-near"),
        pytest.param(build(KEY, hash_name="sha256"), "signature.hash", id="hash-sha256"),
        pytest.param(build(KEY, hash_name="sha1"), "signature.hash", id="hash-sha1"),
        pytest.param(build(KEY, key_blob=_ecdsa_blob()), "signature.key-type", id="key-ecdsa"),
        pytest.param(build(KEY, sig_type="rsa-sha2-512"), "signature.key-type", id="inner-sig-type"),
        pytest.param(build(KEY, magic=b"SSHSIH"), "signature.malformed", id="magic"),
        pytest.param(build(KEY, version=2), "signature.malformed", id="version-2"),
        pytest.param(build(KEY, reserved=b"tag"), "signature.malformed", id="reserved-not-empty"),
        pytest.param(build(KEY, trailing=b"\x00"), "signature.malformed", id="blob-trailing-bytes"),
        pytest.param(build(KEY, inner_trailing=b"\x00"), "signature.malformed", id="sig-trailing-bytes"),
        pytest.param(build(KEY, sig=b"\x00" * 63), "signature.malformed", id="sig-63-bytes"),
        pytest.param(build(KEY, key_blob=KEY.public.blob() + b"\x00"), "signature.malformed", id="key-trailing"),
        pytest.param(build(KEY, width=76), "signature.malformed", id="wrapped-at-76"),
        pytest.param(build(KEY, width=64), "signature.malformed", id="wrapped-at-64"),
        pytest.param(GOOD + "\n", "signature.malformed", id="final-newline"),
        pytest.param("\n" + GOOD, "signature.malformed", id="leading-newline"),
        pytest.param(GOOD + "\nextra", "signature.malformed", id="trailing-garbage"),
        pytest.param(GOOD.replace("\n", "\r\n"), "signature.malformed", id="crlf"),
        pytest.param(GOOD.replace("SSH SIGNATURE", "PGP SIGNATURE"), "signature.malformed", id="pgp-armor"),
        pytest.param(GOOD.replace("-----END SSH SIGNATURE-----", ""), "signature.malformed", id="no-footer"),
        pytest.param("", "signature.malformed", id="empty"),
        pytest.param(build(OTHER, key_blob=KEY.public.blob()), "signature.invalid", id="key-swapped"),
        pytest.param(build(KEY, sig=bytes(64)), "signature.invalid", id="zero-signature"),
    ],
)
def test_variants_are_refused_with_their_rule(armored: str, expected: str) -> None:
    assert rule(armored) == expected


def test_good_signature_verifies_and_names_its_key() -> None:
    assert sshsig.verify(GOOD, MESSAGE).same_key(KEY.public)


def test_tampered_message_is_invalid() -> None:
    assert rule(GOOD, MESSAGE.replace(b"turn 1", b"turn 2")) == "signature.invalid"


def test_non_canonical_base64_is_malformed() -> None:
    # The blob length leaves unused bits in the last base64 character; setting one decodes the same bytes.
    lines = GOOD.split("\n")
    last = lines[-2].rstrip("=")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    twisted = last[:-1] + alphabet[alphabet.index(last[-1]) + 1]
    lines[-2] = twisted + "=" * (len(lines[-2]) - len(last))
    variant = "\n".join(lines)
    assert base64.b64decode("".join(variant.split("\n")[1:-1])) == base64.b64decode("".join(lines[1:-1]))
    assert rule(variant) == "signature.malformed"


def test_flipped_signature_bit_is_invalid() -> None:
    blob = wire.unarmor_strict(GOOD, "SSH SIGNATURE")
    flipped = blob[:-1] + bytes([blob[-1] ^ 1])
    assert rule(wire.armor("SSH SIGNATURE", flipped)) == "signature.invalid"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_verify_on_arbitrary_text_raises_only_pbem_errors(text: str) -> None:
    with contextlib.suppress(PbemError):
        sshsig.verify(text, MESSAGE)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(GOOD) - 1), st.characters(codec="ascii"))
def test_one_character_changed_never_verifies(position: int, char: str) -> None:
    variant = GOOD[:position] + char + GOOD[position + 1 :]
    if variant == GOOD:
        return
    with pytest.raises(PbemError):
        sshsig.verify(variant, MESSAGE)


def outcome(armored: str, namespace: str = "git") -> tuple[str, str, str | None]:
    """What `verify` says: the key's raw bytes or the finding's rule, message and hint."""
    try:
        return "key", sshsig.verify(armored, MESSAGE, namespace).raw.hex(), None
    except PbemError as exc:
        return exc.finding.rule, exc.finding.message, exc.finding.hint


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 200), st.integers(0, 255), st.sampled_from(["git", "file", "pbem-agreement"]))
def test_sliced_reading_says_what_the_field_by_field_reading_says(position: int, value: int, namespace: str) -> None:
    """A signature of the one accepted shape is read by slicing (`_canonical`); any blob, changed in one byte
    or not, gets the same key or the same finding as when read field by field (`decode`)."""
    assert sshsig._canonical(GOOD, "git") is not None
    blob = wire.unarmor_strict(GOOD, "SSH SIGNATURE")
    if position < len(blob):
        blob = blob[:position] + bytes([value]) + blob[position + 1:]
    armored = wire.armor("SSH SIGNATURE", blob)
    sliced = outcome(armored, namespace)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sshsig, "_canonical", lambda *_args: None)
        assert outcome(armored, namespace) == sliced
