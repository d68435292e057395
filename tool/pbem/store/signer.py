"""Who signs a commit payload (DESIGN §3): in-process with a key file, or through `ssh-keygen -Y sign`.

Either way the result is the armored SSHSIG without its final newline, ready for the gpgsig header.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pbem.crypto import sshsig
from pbem.crypto.keys import PrivateKey, PublicKey, load_private_key, public_path
from pbem.errors import PbemError

_PRIVATE_BEGIN = b"-----BEGIN OPENSSH PRIVATE KEY-----"


class Signer(Protocol):
    """Signs commit payloads; `public` is the key a verifier will see in the signature."""

    @property
    def public(self) -> PublicKey: ...

    def sign(self, payload: bytes, namespace: str = sshsig.NAMESPACE) -> str:
        """The armored SSHSIG of `payload` (namespace git unless told: pbem's own statements use "pbem"),
        without final newline."""
        ...


class KeySigner:
    """Signs in-process with an unencrypted Ed25519 key (pynacl)."""

    def __init__(self, key: PrivateKey) -> None:
        self._key = key

    @property
    def public(self) -> PublicKey:
        return self._key.public

    def sign(self, payload: bytes, namespace: str = sshsig.NAMESPACE) -> str:
        return sshsig.sign(self._key, payload, namespace)

    def __repr__(self) -> str:
        return f"KeySigner({self._key.public.fingerprint()})"


class SshKeygenSigner:
    """Signs with `ssh-keygen -Y sign -n git -f PATH`: keys with a passphrase (ssh-keygen asks on the
    terminal) or held by ssh-agent (PATH may then be the .pub file)."""

    def __init__(self, path: Path, program: str = "ssh-keygen") -> None:
        self.path = Path(path)
        self.program = program

    @property
    def public(self) -> PublicKey:
        """Read from the .pub file: asking ssh-keygen would prompt for the passphrase once more."""
        pub = self.path if _is_public_file(self.path) else public_path(self.path)
        try:
            return PublicKey.from_line(pub.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PbemError(
                "key.missing",
                f"public key file {pub} does not exist",
                hint=f"recreate it with `ssh-keygen -y -f {self.path} > {pub}`",
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise PbemError("key.unreadable", f"cannot read {pub}: {exc}") from None

    def sign(self, payload: bytes, namespace: str = sshsig.NAMESPACE) -> str:
        import subprocess  # here, not at the top: `pbem verify` and the hooks sign nothing

        command = [self.program, "-Y", "sign", "-n", namespace, "-f", str(self.path)]
        try:
            # stdin carries the payload; a passphrase prompt goes to the terminal, not to these pipes.
            done = subprocess.run(command, input=payload, capture_output=True, check=False)
        except OSError as exc:
            raise PbemError(
                "key.sign-failed",
                f"cannot run {self.program}: {exc.strerror}",
                hint="install OpenSSH (ssh-keygen 8.2 or later)",
            ) from None
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
            raise PbemError(
                "key.sign-failed",
                f"ssh-keygen could not sign with {self.path}: "
                f"{detail[-1] if detail else 'exit code ' + str(done.returncode)}",
            )
        text = done.stdout.decode("ascii", errors="replace")
        armored = text[:-1] if text.endswith("\n") else text
        try:
            # Check now what the verifier will check later, so a wrong key type fails at signing time.
            sshsig.verify(armored, payload, namespace)
        except PbemError as exc:
            raise PbemError(
                "key.unsupported",
                f"ssh-keygen made a signature pbem does not accept: {exc.finding.message}",
                hint="use an Ed25519 key (ssh-keygen -t ed25519)",
            ) from None
        return armored

    def __repr__(self) -> str:
        return f"SshKeygenSigner({str(self.path)!r})"


def _is_public_file(path: Path) -> bool:
    """A .pub path or a file holding a public key line: the private half is elsewhere (ssh-agent)."""
    if path.name.endswith(".pub"):
        return True
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"ssh-"
    except OSError:
        return False


def signer_for(path: Path) -> Signer:
    """A `KeySigner` when `path` is an unencrypted OpenSSH Ed25519 key, else an `SshKeygenSigner`
    (passphrase-protected key, or a .pub file whose key is in ssh-agent)."""
    path = Path(path)
    try:
        head = path.read_bytes()[:200]
    except FileNotFoundError:
        raise PbemError(
            "key.missing", f"key file {path} does not exist", hint="run `pbem keygen` or pass --key PATH"
        ) from None
    except OSError as exc:
        raise PbemError("key.unreadable", f"cannot read key file {path}: {exc.strerror}") from None
    if head.lstrip().startswith(_PRIVATE_BEGIN):
        try:
            return KeySigner(load_private_key(path))
        except PbemError as exc:
            if exc.finding.rule != "key.encrypted":
                raise
        return SshKeygenSigner(path)
    if _is_public_file(path):
        return SshKeygenSigner(path)
    return KeySigner(load_private_key(path))  # raises the precise key.unsupported / key.malformed
