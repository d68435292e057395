"""SSHSIG signatures (OpenSSH PROTOCOL.sshsig) as `git commit -S` with `gpg.format=ssh` stores them (DESIGN §3).

`sign` writes exactly what `ssh-keygen -Y sign -n git` writes (minus its final newline); `verify` accepts only
that one shape: armor wrapped at 70 columns, version 1, namespace `git`, hash `sha512`, an `ssh-ed25519` key
and signature, empty reserved field, no trailing bytes. Stricter than ssh-keygen on purpose: a history must
have one encoding per signature, so nothing can be re-encoded into a different commit id that still verifies.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import nacl.exceptions
import nacl.signing

from pbem.crypto import wire
from pbem.crypto.keys import KEY_TYPE, PrivateKey, PublicKey
from pbem.errors import ILLEGAL, PbemError

LABEL = "SSH SIGNATURE"
MAGIC = b"SSHSIG"
VERSION = 1
HASH = "sha512"
NAMESPACE = "git"


def _signed_data(namespace: str, message: bytes) -> bytes:
    """What the key actually signs (PROTOCOL.sshsig §3): preamble, namespace, reserved, hash name, H(message)."""
    return (
        MAGIC
        + wire.string(namespace.encode("ascii"))
        + wire.string(b"")
        + wire.string(HASH.encode())
        + wire.string(hashlib.sha512(message).digest())
    )


def sign(key: PrivateKey, message: bytes, namespace: str = NAMESPACE) -> str:
    """The armored SSHSIG of `message`, as `ssh-keygen -Y sign -n NAMESPACE` prints it, without final newline."""
    signature = wire.string(KEY_TYPE.encode()) + wire.string(key.sign_raw(_signed_data(namespace, message)))
    blob = (
        MAGIC
        + wire.u32(VERSION)
        + wire.string(key.public.blob())
        + wire.string(namespace.encode("ascii"))
        + wire.string(b"")
        + wire.string(HASH.encode())
        + wire.string(signature)
    )
    return wire.armor(LABEL, blob)


@dataclass(frozen=True)
class Sshsig:
    """The fields of a decoded SSHSIG blob, before any policy or cryptographic check."""

    key_type: str
    key_blob: bytes
    namespace: str
    reserved: bytes
    hash_algorithm: str
    sig_type: str
    sig: bytes


def _fail(rule: str, message: str, hint: str | None = None) -> PbemError:
    return PbemError(rule, message, hint=hint, exit_code=ILLEGAL)


def decode(armored: str) -> Sshsig:
    """Parse armor and blob strictly (rule `signature.malformed`); no policy and no crypto yet."""
    if not isinstance(armored, str):
        raise _fail("signature.malformed", f"expected signature text, got {type(armored).__name__}")
    try:
        blob = wire.unarmor_strict(armored, LABEL)
        if not blob.startswith(MAGIC):
            raise wire.WireError(f"expected the SSHSIG preamble, got {blob[:6]!r}")
        reader = wire.Reader(blob[len(MAGIC) :])
        version = reader.u32()
        if version != VERSION:
            raise wire.WireError(f"expected version {VERSION}, got {version}")
        key_blob = reader.string()
        namespace, reserved, hash_algorithm = reader.text(), reader.string(), reader.text()
        signature = reader.string()
        reader.finish()
        key_type = wire.Reader(key_blob).text()
        inner = wire.Reader(signature)
        sig_type, sig = inner.text(), inner.string()
        inner.finish()
    except wire.WireError as exc:
        raise _fail("signature.malformed", f"not a canonical SSH signature: {exc}") from None
    if reserved:
        raise _fail("signature.malformed", f"reserved field must be empty, got {len(reserved)} bytes")
    return Sshsig(key_type, key_blob, namespace, reserved, hash_algorithm, sig_type, sig)


# Every byte of a signature `verify` accepts is fixed but for the key and the signature, so a blob of that
# shape is read by slicing; anything else goes through `decode`, whose findings word what is wrong.
_KEY_HEAD = wire.string(KEY_TYPE.encode())
_HEAD = MAGIC + wire.u32(VERSION) + wire.u32(len(_KEY_HEAD) + 4 + 32) + _KEY_HEAD + wire.u32(32)
_SIG_HEAD = wire.u32(len(_KEY_HEAD) + 4 + 64) + _KEY_HEAD + wire.u32(64)


def _middle(namespace: str) -> bytes:
    """The bytes between the key and the signature: namespace, empty reserved field, hash name, sig header."""
    return wire.string(namespace.encode("ascii")) + wire.string(b"") + wire.string(HASH.encode()) + _SIG_HEAD


def _canonical(armored: str, namespace: str) -> tuple[bytes, bytes] | None:
    """The raw key and signature of a blob in the one accepted shape for `namespace`, else None."""
    if not isinstance(armored, str) or not namespace.isascii():
        return None
    middle = _middle(namespace)
    try:
        blob = wire.unarmor_strict(armored, LABEL)
    except wire.WireError:
        return None
    key_end = len(_HEAD) + 32
    if len(blob) != key_end + len(middle) + 64 or not blob.startswith(_HEAD) or \
            blob[key_end:key_end + len(middle)] != middle:
        return None
    return blob[len(_HEAD):key_end], blob[-64:]


def verify(armored: str, message: bytes, namespace: str = NAMESPACE) -> PublicKey:
    """Check `armored` over `message`; return the signer's key. Cryptographically valid is not yet trusted:
    whether that key may act is the verifier's question (DESIGN §3).

    Rules: `signature.malformed`, `signature.key-type`, `signature.namespace`, `signature.hash`,
    `signature.invalid`.
    """
    canonical = _canonical(armored, namespace)
    if canonical is not None:
        raw, sig = canonical
        key = PublicKey(raw)
        _check(key, namespace, message, sig)
        return key
    parsed = decode(armored)
    for what, got in (("key", parsed.key_type), ("signature", parsed.sig_type)):
        if got != KEY_TYPE:
            raise _fail("signature.key-type", f"{what} type is {got!r}, expected {KEY_TYPE!r}")
    try:
        key = PublicKey.from_blob(parsed.key_blob)
    except PbemError as exc:
        raise _fail("signature.malformed", f"bad public key in signature: {exc.finding.message}") from None
    if parsed.namespace != namespace:
        raise _fail("signature.namespace", f"namespace is {parsed.namespace!r}, expected {namespace!r}")
    if parsed.hash_algorithm != HASH:
        raise _fail("signature.hash", f"hash algorithm is {parsed.hash_algorithm!r}, expected {HASH!r}")
    if len(parsed.sig) != 64:
        raise _fail("signature.malformed", f"Ed25519 signature must be 64 bytes, got {len(parsed.sig)}")
    _check(key, namespace, message, parsed.sig)
    return key


def _check(key: PublicKey, namespace: str, message: bytes, sig: bytes) -> None:
    try:
        nacl.signing.VerifyKey(key.raw).verify(_signed_data(namespace, message), sig)
    except (nacl.exceptions.BadSignatureError, nacl.exceptions.CryptoError, ValueError):
        raise _fail(
            "signature.invalid",
            f"signature by {key.fingerprint()} does not match the signed data",
            hint="the commit or the signature was changed after signing",
        ) from None
