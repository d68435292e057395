"""Shared test helpers: keys, repositories and the real `git`/`ssh-keygen` run in a clean, isolated environment.

Everything runs with HOME pointing into the test's temp folder, no system or global git config and no
ssh-agent, so the user's own setup can neither help nor break a test. Use it as:

    box = Sandbox(tmp_path)
    key_path, key = box.new_key("alice")
    repo = box.new_repo("game")
    box.git(repo.workdir, "fsck", "--strict")
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pbem.crypto import sshsig
from pbem.crypto.keys import PrivateKey, PublicKey, allowed_signers_line, write_keypair
from pbem.store.commits import parse_commit, with_signature
from pbem.store.repo import GameRepo

# Fixed seeds make keys (and so signatures and commit ids) reproducible across runs.
SEEDS = {name: bytes([i + 1]) * 32 for i, name in enumerate(["alice", "bob", "carol", "dave", "escrow"])}


# The suite's cross-checks (PBEM_CROSSCHECK, tests/conftest.py: every fast path against the plain one) run in the
# suite's own process, where every command's code runs through typer's runner; the processes it starts (`pbem`
# commands, the hooks behind every push, the watches) run without them, as on a player's machine: they cost some
# quarter of a pushing test's CPU, checking again code paths the suite's own process checks. The hook's own tests
# (tests/test_hook.py) keep them in the hook: with CHILDREN_CROSSCHECK=1 the started processes cross-check too.
CHILDREN_CROSSCHECK = "PBEM_TEST_CHILDREN_CROSSCHECK"


def clean_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """os.environ without git/ssh settings (and without the cross-checks, see CHILDREN_CROSSCHECK), HOME=`home`,
    fixed author and dates-independent locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "SSH_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_AUTHOR_NAME="Test Player",
        GIT_AUTHOR_EMAIL="player@example.org",
        GIT_COMMITTER_NAME="Test Player",
        GIT_COMMITTER_EMAIL="player@example.org",
        LC_ALL="C",
    )
    if os.environ.get(CHILDREN_CROSSCHECK) != "1":
        env.pop("PBEM_CROSSCHECK", None)
    env.update(extra or {})
    return env


def run(
    cmd: Sequence[str | os.PathLike[str]],
    *,
    home: Path,
    cwd: Path | None = None,
    input: bytes | None = None,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run a real tool in the clean environment; on `check` failure the error shows stdout and stderr."""
    done = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, input=input, capture_output=True, env=clean_env(home, env), check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stdout.decode()}\n{done.stderr.decode()}"
        )
    return done


def fixed_key(name: str = "alice") -> PrivateKey:
    """A reproducible key for `name` (one of SEEDS), comment `name@pbem.test`."""
    return PrivateKey.from_seed(SEEDS[name], f"{name}@pbem.test")


def resign(raw: bytes, key: PrivateKey, change: Callable[[bytes], bytes] = lambda b: b) -> bytes:
    """The tamper helper: take a signed commit, change its unsigned payload, sign it again with `key`."""
    payload = change(parse_commit(raw).signed_payload())
    return with_signature(payload, sshsig.sign(key, payload))


@dataclass
class Sandbox:
    """A temp folder with its own HOME, for keys, repos and tool runs."""

    root: Path

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        (self.home / ".ssh").mkdir(parents=True, exist_ok=True)

    def run(
        self,
        *cmd: str | os.PathLike[str],
        cwd: Path | None = None,
        input: bytes | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        return run(cmd, home=self.home, cwd=cwd, input=input, check=check, env=env)

    def git(
        self,
        cwd: Path,
        *args: str | os.PathLike[str],
        input: bytes | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """`git ARGS` in `cwd`."""
        return self.run("git", *args, cwd=cwd, input=input, check=check, env=env)

    def new_key(self, name: str = "alice") -> tuple[Path, PrivateKey]:
        """Write the reproducible key `name` with pbem's own writer; returns (private key path, key)."""
        key = fixed_key(name)
        path = self.root / "keys" / f"{name}_ed25519"
        write_keypair(path, key)
        return path, key

    def ssh_keygen_key(self, name: str, *extra: str, kind: str = "ed25519") -> Path:
        """A key made by `ssh-keygen -t KIND -N ''` (add e.g. `-N pass -a 1` via `extra`)."""
        path = self.root / "keys" / f"{name}_{kind}"
        path.parent.mkdir(parents=True, exist_ok=True)
        args = ["-N", ""] if "-N" not in extra else []
        self.run("ssh-keygen", "-q", "-t", kind, *args, *extra, "-C", f"{name}@ssh-keygen", "-f", path)
        return path

    def new_repo(self, name: str = "game") -> GameRepo:
        """An empty non-bare repository (branch main) made by pbem."""
        return GameRepo.init(self.root / name)

    def git_repo(self, name: str = "plain") -> Path:
        """An empty repository made by `git init -b main`."""
        path = self.root / name
        self.run("git", "init", "-q", "-b", "main", path)
        return path

    def allowed_signers(self, keys: Mapping[str, PublicKey], name: str = "allowed_signers") -> Path:
        """An allowed-signers file for `git -c gpg.ssh.allowedSignersFile=…` and `ssh-keygen -Y verify`."""
        path = self.root / name
        path.write_text("".join(allowed_signers_line(pid, key) + "\n" for pid, key in keys.items()))
        return path

    def ssh_signing_config(self, repo_dir: Path, key_path: Path) -> None:
        """Configure a repository so that plain `git commit -S` signs with `key_path` (gpg.format=ssh)."""
        self.git(repo_dir, "config", "gpg.format", "ssh")
        self.git(repo_dir, "config", "user.signingkey", key_path)
