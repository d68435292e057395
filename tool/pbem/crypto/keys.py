"""Ed25519 keys in the OpenSSH formats (DESIGN §3, §8): public key lines, `openssh-key-v1` private key files.

Pure apart from the three small file helpers at the end (`write_keypair`, `load_private_key`, `find_key`).
Only `ssh-ed25519` is accepted anywhere (rule `key.unsupported`); anything that does not parse is
`key.malformed`. Formats follow OpenSSH's PROTOCOL.key and RFC 8709, byte for byte as ssh-keygen writes them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nacl.bindings
import nacl.exceptions
import nacl.signing

from pbem.crypto import wire
from pbem.errors import USAGE, PbemError

KEY_TYPE = "ssh-ed25519"
PRIVATE_LABEL = "OPENSSH PRIVATE KEY"
_AUTH_MAGIC = b"openssh-key-v1\x00"
_BLOCK_SIZE = 8  # cipher "none" pads the private section to 8 bytes (PROTOCOL.key §3)
_KNOWN_OTHER_TYPES = re.compile(r"\A(ssh-|ecdsa-|sk-|rsa-)")
_PRINCIPAL = re.compile(r"\A[A-Za-z0-9._@+-]+\Z")


def _malformed(what: str, detail: str) -> PbemError:
    return PbemError("key.malformed", f"{what}: {detail}", hint="expected an OpenSSH Ed25519 key")


def _unsupported(got: str) -> PbemError:
    return PbemError(
        "key.unsupported",
        f"key type {got!r} is not supported, expected {KEY_TYPE!r}",
        hint="make an Ed25519 key with `pbem keygen` or `ssh-keygen -t ed25519`",
    )


@dataclass(frozen=True)
class PublicKey:
    """An Ed25519 public key (32 raw bytes) with the comment of its OpenSSH line."""

    raw: bytes
    comment: str = ""

    def __post_init__(self) -> None:
        if len(self.raw) != 32:
            raise _malformed("public key", f"expected 32 bytes, got {len(self.raw)}")

    @classmethod
    def from_line(cls, line: str) -> PublicKey:
        """Parse `ssh-ed25519 BASE64 [comment]` (an authorized_keys/.pub line, without options)."""
        if "\n" in line.strip() or "\r" in line.strip():
            raise _malformed("public key line", "expected one line, got several")
        parts = line.strip().split(None, 2)
        if len(parts) < 2:
            raise _malformed("public key line", f"expected 'ssh-ed25519 BASE64 [comment]', got {line[:60]!r}")
        kind, b64 = parts[0], parts[1]
        comment = parts[2].strip() if len(parts) == 3 else ""
        if kind != KEY_TYPE:
            if _KNOWN_OTHER_TYPES.match(kind):
                raise _unsupported(kind)
            raise _malformed("public key line", f"expected 'ssh-ed25519 BASE64 [comment]', got {line[:60]!r}")
        try:
            blob = base64.b64decode(b64.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise _malformed("public key line", "the key is not valid base64") from None
        return cls(cls._raw_from_blob(blob), comment)

    @classmethod
    def from_blob(cls, blob: bytes) -> PublicKey:
        """Parse the SSH wire blob `string "ssh-ed25519", string key[32]`."""
        return cls(cls._raw_from_blob(blob))

    @staticmethod
    def _raw_from_blob(blob: bytes) -> bytes:
        try:
            reader = wire.Reader(blob)
            kind = reader.text()
            if kind != KEY_TYPE:
                raise _unsupported(kind)
            raw = reader.string()
            reader.finish()
        except wire.WireError as exc:
            raise _malformed("public key blob", str(exc)) from None
        if len(raw) != 32:
            raise _malformed("public key blob", f"expected 32 key bytes, got {len(raw)}")
        return raw

    def blob(self) -> bytes:
        """The SSH wire blob (what the base64 of a .pub line encodes)."""
        return wire.string(KEY_TYPE.encode()) + wire.string(self.raw)

    def to_line(self) -> str:
        """`ssh-ed25519 BASE64` plus ` comment` when there is one."""
        line = f"{KEY_TYPE} {base64.b64encode(self.blob()).decode('ascii')}"
        return f"{line} {self.comment}" if self.comment else line

    def fingerprint(self) -> str:
        """`SHA256:…` exactly as `ssh-keygen -l` prints it (unpadded base64 of the blob's SHA-256)."""
        digest = hashlib.sha256(self.blob()).digest()
        return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")

    def same_key(self, other: PublicKey) -> bool:
        """Same key material; comments do not matter for identity (DESIGN §3: identity is the key)."""
        return self.raw == other.raw

    def to_curve25519(self) -> bytes:
        """The X25519 public key of the same key pair, for sealed boxes (DESIGN §6)."""
        try:
            return bytes(nacl.bindings.crypto_sign_ed25519_pk_to_curve25519(self.raw))
        except nacl.exceptions.CryptoError:
            raise _malformed("public key", "not a valid Ed25519 point") from None


@dataclass(frozen=True)
class PrivateKey:
    """An Ed25519 private key (its 32-byte seed) with the public key and comment.

    `checkint` is the random check value of the openssh-key-v1 file; it is kept so that reading and writing a
    key file gives back the same bytes. The seed is left out of `repr` so it does not end up in logs.
    """

    seed: bytes = field(repr=False)
    public: PublicKey
    checkint: int = field(default=0, repr=False, compare=False)

    @classmethod
    def generate(cls, comment: str = "") -> PrivateKey:
        """A fresh key from the OS random source."""
        import secrets  # here and below, not at the top: `pbem verify` reads public keys only (random, hmac)

        return cls.from_seed(secrets.token_bytes(32), comment)

    @classmethod
    def from_seed(cls, seed: bytes, comment: str = "") -> PrivateKey:
        """The key for a given 32-byte seed (tests and derived keys)."""
        if len(seed) != 32:
            raise _malformed("private key", f"expected a 32-byte seed, got {len(seed)}")
        import secrets

        raw = bytes(nacl.signing.SigningKey(seed).verify_key)
        return cls(seed, PublicKey(raw, comment), secrets.randbits(32))

    @property
    def comment(self) -> str:
        return self.public.comment

    @classmethod
    def from_openssh(cls, text: str | bytes) -> PrivateKey:
        """Read an unencrypted `openssh-key-v1` Ed25519 key (PROTOCOL.key).

        An encrypted key raises `key.encrypted`: pbem does not ask for passphrases itself.
        """
        if isinstance(text, bytes):
            text = text.decode("ascii", errors="replace")
        stripped = text.strip()
        if stripped.startswith("ssh-"):
            raise _malformed("private key", "this is a public key line; give the private key file (without .pub)")
        if not stripped.startswith(f"-----BEGIN {PRIVATE_LABEL}-----"):
            first = stripped.splitlines()[0][:60] if stripped else "an empty file"
            raise _unsupported_format(first)
        try:
            return cls._parse(wire.unarmor_lenient(text, PRIVATE_LABEL))
        except wire.WireError as exc:
            raise _malformed("private key", str(exc)) from None

    @classmethod
    def _parse(cls, data: bytes) -> PrivateKey:
        if not data.startswith(_AUTH_MAGIC):
            raise wire.WireError("not an openssh-key-v1 key")
        outer = wire.Reader(data[len(_AUTH_MAGIC) :])
        cipher, kdf, _kdf_options = outer.text(), outer.text(), outer.string()
        if cipher != "none" or kdf != "none":
            raise PbemError(
                "key.encrypted",
                f"the key is protected by a passphrase (cipher {cipher}), pbem cannot read it",
                hint="load it into ssh-agent (`ssh-add`) so pbem signs through `ssh-keygen -Y sign`, "
                "or pass its .pub file with --key",
            )
        if outer.u32() != 1:
            raise wire.WireError("expected exactly one key in the file")
        outer_public = PublicKey.from_blob(outer.string())
        section = outer.string()
        outer.finish()
        if len(section) % _BLOCK_SIZE:
            raise wire.WireError("private section is not padded to the block size")
        inner = wire.Reader(section)
        check1, check2 = inner.u32(), inner.u32()
        if check1 != check2:
            raise wire.WireError("check values differ (corrupt key)")
        kind = inner.text()
        if kind != KEY_TYPE:
            raise _unsupported(kind)
        raw = inner.string()
        secret = inner.string()
        comment = inner.string().decode("utf-8", errors="replace")
        padding = inner.rest()
        if padding != bytes(range(1, len(padding) + 1)):
            raise wire.WireError("bad padding")
        if len(raw) != 32 or len(secret) != 64 or secret[32:] != raw or raw != outer_public.raw:
            raise wire.WireError("inconsistent Ed25519 key fields")
        key = cls(secret[:32], PublicKey(raw, comment), check1)
        if bytes(nacl.signing.SigningKey(key.seed).verify_key) != raw:
            raise wire.WireError("the private key does not match its public key")
        return key

    def to_openssh(self) -> str:
        """The key file text exactly as `ssh-keygen -t ed25519 -N ''` writes it (with final newline)."""
        blob = self.public.blob()
        section = (
            wire.u32(self.checkint)
            + wire.u32(self.checkint)
            + wire.string(KEY_TYPE.encode())
            + wire.string(self.public.raw)
            + wire.string(self.seed + self.public.raw)
            + wire.string(self.comment.encode("utf-8"))
        )
        pad = -len(section) % _BLOCK_SIZE
        section += bytes(range(1, pad + 1))
        data = (
            _AUTH_MAGIC
            + wire.string(b"none")
            + wire.string(b"none")
            + wire.string(b"")
            + wire.u32(1)
            + wire.string(blob)
            + wire.string(section)
        )
        return wire.armor(PRIVATE_LABEL, data) + "\n"

    def sign_raw(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of `data`."""
        return bytes(nacl.signing.SigningKey(self.seed).sign(data).signature)

    def to_curve25519_private(self) -> bytes:
        """The X25519 private key of the same key pair, for opening sealed boxes (DESIGN §6)."""
        return bytes(nacl.bindings.crypto_sign_ed25519_sk_to_curve25519(self.seed + self.public.raw))


def _unsupported_format(first_line: str) -> PbemError:
    return PbemError(
        "key.unsupported",
        f"not an OpenSSH private key file (starts with {first_line!r})",
        hint="use an Ed25519 key made by `pbem keygen` or `ssh-keygen -t ed25519`",
    )


def allowed_signers_line(player_id: str, key: PublicKey) -> str:
    """One line of a git/ssh-keygen allowed-signers file: `id namespaces="git" ssh-ed25519 AAAA…`."""
    if not _PRINCIPAL.match(player_id):
        # Commas and wildcards would turn the id into a principal pattern matching other names.
        raise PbemError("key.principal", f"player id {player_id!r} cannot be an allowed-signers principal")
    return f'{player_id} namespaces="git" {PublicKey(key.raw).to_line()}'


def public_path(path: Path) -> Path:
    """Where ssh-keygen puts the public half of `path`: the same name plus `.pub`."""
    return path.with_name(path.name + ".pub")


def write_keypair(path: Path, key: PrivateKey) -> None:
    """Write `path` (mode 0600) and `path.pub`, as ssh-keygen does; never overwrite (rule `key.exists`)."""
    pub = public_path(path)
    for target in (path, pub):
        if target.exists() or target.is_symlink():
            raise PbemError("key.exists", f"{target} already exists, not overwriting it", hint="choose another --out")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # O_EXCL + mode at creation: the secret is never readable by others, not even for a moment.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(key.to_openssh())
    fd = os.open(pub, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(key.public.to_line() + "\n")


def load_private_key(path: Path) -> PrivateKey:
    """Read an unencrypted OpenSSH Ed25519 key file (rules `key.missing`, `key.unreadable`, `key.encrypted`…)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise PbemError(
            "key.missing", f"key file {path} does not exist", hint="run `pbem keygen` or pass --key PATH"
        ) from None
    except OSError as exc:
        raise PbemError("key.unreadable", f"cannot read key file {path}: {exc.strerror}") from None
    try:
        return PrivateKey.from_openssh(data)
    except PbemError as exc:
        raise PbemError.from_finding(exc.finding.at(file=str(path)), exit_code=USAGE) from None


def _literal_key(value: str) -> str | None:
    """git's rule (gpg-interface.c): `key::…` or a value starting with `ssh-` is a key, not a path."""
    if value.startswith("key::"):
        return value[len("key::") :]
    if value.startswith("ssh-"):
        return value
    return None


def _expand(value: str, home: Path) -> Path:
    """`~` and `~/…` relative to `home` (so callers and tests choose the home), other paths as given."""
    if value == "~" or value.startswith("~/"):
        return home / value[2:]
    return Path(value).expanduser()


def _from_git_config(value: str, home: Path) -> Path:
    literal = _literal_key(value)
    if literal is not None:
        wanted = PublicKey.from_line(literal)
        ssh_dir = home / ".ssh"
        for pub in sorted(ssh_dir.glob("*.pub")) if ssh_dir.is_dir() else []:
            try:
                found = PublicKey.from_line(pub.read_text(encoding="utf-8"))
            except (PbemError, OSError, UnicodeDecodeError):
                continue
            if found.same_key(wanted) and pub.with_suffix("").is_file():
                return pub.with_suffix("")
        raise PbemError(
            "key.missing",
            "git config user.signingkey is a literal key and no matching key file is in ~/.ssh",
            hint="pass --key PATH (a .pub file works when the key is in ssh-agent)",
            exit_code=USAGE,
        )
    path = _expand(value, home)
    if path.name.endswith(".pub"):
        private = path.with_name(path.name[: -len(".pub")])
        # Without the private half next to it the key lives in ssh-agent; ssh-keygen signs with the .pub.
        return private if private.is_file() else path
    return path


def find_key(
    explicit: str | None,
    env: Mapping[str, str],
    git_config: Callable[[str], str | None],
    home: Path,
) -> Path:
    """The signing key file, in the order of DESIGN §8.

    `--key`, then `PBEM_KEY`, then git config `user.signingkey` when `gpg.format` is `ssh` (a path, `~/…`,
    a `.pub` path meaning the private key beside it, or a literal `key::ssh-ed25519 …` found in ~/.ssh),
    then `~/.ssh/id_ed25519`. An explicit choice that does not exist is an error, never a silent fallback:
    signing with another key would sign as another player.
    """
    for origin, value in (("--key", explicit), ("PBEM_KEY", env.get("PBEM_KEY") or None)):
        if value:
            path = _expand(value, home)
            if not path.exists():
                raise PbemError("key.missing", f"{origin} {value}: no such file", exit_code=USAGE)
            return path
    signing_key = git_config("user.signingkey")
    if signing_key and (git_config("gpg.format") or "").lower() == "ssh":
        path = _from_git_config(signing_key.strip(), home)
        if not path.exists():
            raise PbemError("key.missing", f"git config user.signingkey {signing_key}: no such file", exit_code=USAGE)
        return path
    default = home / ".ssh" / "id_ed25519"
    if default.exists():
        return default
    raise PbemError(
        "key.missing",
        "no signing key found (looked at --key, $PBEM_KEY, git config user.signingkey with gpg.format=ssh, "
        "~/.ssh/id_ed25519)",
        hint="run `pbem keygen` or pass --key PATH",
        exit_code=USAGE,
    )
