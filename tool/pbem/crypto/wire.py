"""SSH wire-format helpers (RFC 4251 §5): `uint32` and length-prefixed `string`, and OpenSSH base64 armor.

Pure and strict: a `Reader` refuses short reads and `finish()` refuses trailing bytes, so every parser built on
it accepts exactly one encoding. Errors here are `WireError`, an internal exception that the callers (keys,
sshsig) turn into a `PbemError` with their own rule id; it never reaches a user.
"""

from __future__ import annotations

import base64
import binascii
import struct

ARMOR_WIDTH = 70  # ssh-keygen wraps both private keys and signatures at 70 columns (sshbuf_dtob64 with wrap)


class WireError(ValueError):
    """Bytes that do not follow the SSH wire format; callers re-raise it as a PbemError with a rule id."""


def u32(value: int) -> bytes:
    """Encode a big-endian uint32."""
    return struct.pack(">I", value)


def string(data: bytes) -> bytes:
    """Encode an SSH `string`: uint32 length, then the bytes."""
    return u32(len(data)) + data


class Reader:
    """Read SSH wire fields from a byte string, front to back, with no slack."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def raw(self, n: int) -> bytes:
        """Exactly `n` bytes."""
        end = self._pos + n
        if end > len(self._data):
            raise WireError(f"truncated: wanted {n} bytes at offset {self._pos}, {len(self._data) - self._pos} left")
        out = self._data[self._pos : end]
        self._pos = end
        return out

    def u32(self) -> int:
        """A big-endian uint32."""
        return int(struct.unpack(">I", self.raw(4))[0])

    def string(self) -> bytes:
        """An SSH `string`."""
        return self.raw(self.u32())

    def text(self) -> str:
        """An SSH `string` that must be ASCII (algorithm names, namespaces)."""
        value = self.string()
        try:
            return value.decode("ascii")
        except UnicodeDecodeError:
            raise WireError(f"expected an ASCII name, got {value[:40]!r}") from None

    def rest(self) -> bytes:
        """Everything not read yet."""
        out = self._data[self._pos :]
        self._pos = len(self._data)
        return out

    def remaining(self) -> int:
        return len(self._data) - self._pos

    def finish(self) -> None:
        """Refuse trailing bytes: one blob, one reading."""
        if self._pos != len(self._data):
            raise WireError(f"{len(self._data) - self._pos} unexpected trailing bytes")


def wrap_base64(data: bytes, width: int = ARMOR_WIDTH) -> list[str]:
    """Base64 of `data` cut into lines of `width` characters, as ssh-keygen writes it."""
    text = base64.b64encode(data).decode("ascii")
    return [text[i : i + width] for i in range(0, len(text), width)]


def armor(label: str, data: bytes) -> str:
    """`-----BEGIN label-----`, wrapped base64, `-----END label-----`; no final newline."""
    return "\n".join([f"-----BEGIN {label}-----", *wrap_base64(data), f"-----END {label}-----"])


def unarmor_strict(text: str, label: str, width: int = ARMOR_WIDTH) -> bytes:
    """Decode armor that must be byte-for-byte what `armor()` writes (no final newline, no CR, no slack).

    Strict because a signature has to have one encoding only: every line but the last exactly `width`
    characters, the last 1..`width`, canonical base64 (padding and unused bits as the encoder writes them).
    """
    begin, end = f"-----BEGIN {label}-----", f"-----END {label}-----"
    lines = text.split("\n")
    if len(lines) < 3 or lines[0] != begin or lines[-1] != end:
        raise WireError(f"expected {begin!r} … {end!r} with nothing before or after")
    body = lines[1:-1]
    if any(len(line) != width for line in body[:-1]) or not 0 < len(body[-1]) <= width:
        raise WireError(f"base64 must be wrapped at exactly {width} columns")
    joined = "".join(body)
    try:
        data = base64.b64decode(joined.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise WireError("invalid base64") from None
    if base64.b64encode(data).decode("ascii") != joined:
        raise WireError("non-canonical base64")
    return data


def unarmor_lenient(text: str, label: str) -> bytes:
    """Decode armor from a file a person may have touched (CRLF, surrounding blank lines); for key files only."""
    begin, end = f"-----BEGIN {label}-----", f"-----END {label}-----"
    lines = [line.strip() for line in text.strip().splitlines()]
    if len(lines) < 3 or lines[0] != begin or lines[-1] != end:
        raise WireError(f"expected {begin!r} … {end!r}")
    try:
        return base64.b64decode("".join(lines[1:-1]).encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise WireError("invalid base64") from None
