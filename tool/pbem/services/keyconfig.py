"""Day one: make the key `pbem keygen` just wrote the one pbem and git find (DESIGN §3, §8 key lookup order).

pbem looks for the key in this order: `--key`, `PBEM_KEY`, git config `user.signingkey` (when
`gpg.format=ssh`), `~/.ssh/id_ed25519`. A key written anywhere else is found only once git knows it, so, with
the user's consent, `configure` sets in his global git config:

* `gpg.format=ssh` and `user.signingkey=PATH`: pbem finds the key, and `git commit -S` signs with it too;
* `gpg.ssh.allowedSignersFile` (kept if already set, else `~/.ssh/allowed_signers`) holding his own key, so
  plain `git log --show-signature` and `git verify-commit` say "Good" for his commits (the other players'
  keys are added with `pbem allowed-signers >> FILE`).

Nothing is changed without consent (the CLI asks on a terminal, or `--configure` says yes).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from pbem.crypto.keys import PublicKey
from pbem.errors import USAGE, PbemError


def _git(*args: str) -> "subprocess.CompletedProcess[str]":
    try:
        return subprocess.run(["git", "config", "--global", *args], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise PbemError("key.no-git", f"cannot run git to record the key: {exc}", hint="install git, or use "
                        "--key PATH / PBEM_KEY", exit_code=USAGE) from None


def _get(name: str) -> str | None:
    done = _git("--get", name)
    return done.stdout.strip() or None if done.returncode == 0 else None


def _set(name: str, value: str) -> None:
    done = _git(name, value)
    if done.returncode != 0:
        raise PbemError("key.config-failed", f"git config --global {name}: {done.stderr.strip() or 'failed'}",
                        hint="use --key PATH or PBEM_KEY instead", exit_code=USAGE)


def configure(path: Path, public: PublicKey, home: Path | None = None) -> list[str]:
    """Record the key in the global git config (see the module docstring); returns what was set, one line
    each, for the user to read. Idempotent: the allowed-signers line is added once."""
    home = home or Path.home()
    key_path = Path(os.path.abspath(path))
    done = []
    for name, value in (("gpg.format", "ssh"), ("user.signingkey", str(key_path))):
        if _get(name) != value:
            _set(name, value)
        done.append(f"git config --global {name} {value}")
    signers_value = _get("gpg.ssh.allowedSignersFile")
    signers = Path(os.path.expanduser(signers_value)) if signers_value else home / ".ssh" / "allowed_signers"
    if signers_value is None:
        _set("gpg.ssh.allowedSignersFile", str(signers))
    done.append(f"git config --global gpg.ssh.allowedSignersFile {signers}")
    line = f'{_principal(public)} namespaces="git" {public.to_line()}'
    old = signers.read_text(encoding="utf-8") if signers.is_file() else ""
    key_fields = " ".join(public.to_line().split()[:2])
    if key_fields not in old:
        signers.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with signers.open("a", encoding="utf-8") as out:
            out.write(("" if not old or old.endswith("\n") else "\n") + line + "\n")
        done.append(f"added your key to {signers}")
    return done


def _principal(public: PublicKey) -> str:
    """Who the allowed-signers line names: git's user.email, else the key's comment, as one word."""
    name = _get("user.email") or public.comment or "pbem-player"
    return re.sub(r"[\s,\"]+", "-", name) or "pbem-player"


def found_without_config(path: Path, home: Path | None = None) -> bool:
    """Whether pbem finds this key without any configuration (it is ~/.ssh/id_ed25519, the last place looked)."""
    home = home or Path.home()
    return os.path.abspath(path) == os.path.abspath(home / ".ssh" / "id_ed25519")
