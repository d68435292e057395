"""Self-hosting over real ssh (DESIGN §9, docs/github.md "Hosting a game yourself"): an OpenSSH server on
localhost serves a bare repository guarded by `pbem hook install`, and two players, each with his own login key,
set up, start and play a game through it with plain `git clone`, `git pull` and `git push` over ssh; an illegal
push is refused and the hook's lines reach the pusher.

The server is Debian's openssh-server (`.ci/run` installs it when it runs as root), started by the test on a free
high port of 127.0.0.1 with its own host key, config and authorized_keys in the test's temp folder, for the user
running the tests. The test skips, saying why, where sshd is missing or cannot start.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import FED_TURN_1, GAME_ID, KLI_TURN_1, TEACHING_DUEL, Table
from gitutil import Sandbox, clean_env
from test_hook import refused

SSHD = shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.path.exists(p)),
                                    None)
CONFIG = """\
ListenAddress 127.0.0.1
Port {port}
HostKey {root}/host_ed25519
PidFile {root}/sshd.pid
AuthorizedKeysFile {root}/authorized_keys
AllowUsers {user}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
LogLevel VERBOSE
"""


@dataclass
class SshServer:
    """A running sshd and what a client needs to reach it."""

    root: Path
    port: int
    user: str
    process: subprocess.Popen[bytes]

    def url(self, repository: Path) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{repository}"

    def ssh_command(self, login_key: Path) -> str:
        """GIT_SSH_COMMAND for a player: his own key only, this server's host key only, no user config."""
        return (f"ssh -F /dev/null -i {login_key} -o IdentitiesOnly=yes -o BatchMode=yes "
                f"-o UserKnownHostsFile={self.root / 'known_hosts'} -o StrictHostKeyChecking=yes "
                f"-o IdentityAgent=none")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            return conn.recv(4).startswith(b"SSH-")
    except OSError:
        return False


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[SshServer]:
    """sshd on a free port of 127.0.0.1 for the current user, keys and config in a temp folder; stopped after."""
    if SSHD is None:
        pytest.skip("no sshd: install Debian's openssh-server (`.ci/run` does, as root)")
    root = tmp_path / "sshd"
    root.mkdir()
    box = Sandbox(root)
    box.run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", root / "host_ed25519")
    (root / "authorized_keys").write_text("")
    (root / "authorized_keys").chmod(0o600)
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation folder
    user = getpass.getuser()
    why = ""
    for _attempt in range(3):
        port = _free_port()
        (root / "sshd_config").write_text(CONFIG.format(port=port, root=root, user=user))
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(root / "sshd_config")], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and process.poll() is None and not _listening(port):
            time.sleep(0.1)
        if process.poll() is None and _listening(port):
            break
        process.kill()
        why = process.communicate()[0].decode(errors="replace").strip()[-500:]
    else:
        pytest.skip(f"sshd cannot start here: {why or 'it did not listen'}")
    host = (root / "host_ed25519.pub").read_text().split()
    (root / "known_hosts").write_text(f"[127.0.0.1]:{port} {host[0]} {host[1]}\n")
    try:
        yield SshServer(root, port, user, process)
    finally:
        process.terminate()
        try:
            process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


@dataclass
class Player:
    """One player's machine: his table (keys, HOME, clone) and his ssh login key, allowed on the server."""

    table: Table
    login: Path
    server: SshServer

    @property
    def ssh_env(self) -> dict[str, str]:
        return {"GIT_SSH_COMMAND": self.server.ssh_command(self.login)}

    def git(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = self.table.git(*args, check=False, env=self.ssh_env)
        return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())

    def ok(self, *args: str) -> None:
        done = self.git(*args)
        assert done.returncode == 0, done.stderr

    def pbem(self, *args: str, who: str, cwd: Path | None = None) -> None:
        done = self.table.pbem(*args, who=who, cwd=cwd)
        assert done.returncode == 0, done.stdout + done.stderr


def player(tmp_path: Path, server: SshServer, name: str, key_name: str) -> Player:
    """A machine with the reproducible signing key `key_name` and a login key made by ssh-keygen, added to the
    server's authorized_keys."""
    root = tmp_path / name
    box = Sandbox(root)
    box.new_key(key_name)
    login = box.ssh_keygen_key(f"{name}-login")
    with (server.root / "authorized_keys").open("a") as keys:
        keys.write(Path(f"{login}.pub").read_text())
    return Player(Table(root), login, server)


def test_two_players_set_up_start_and_play_a_game_over_ssh(sshd: SshServer, tmp_path: Path) -> None:
    """alice hosts nothing but plays: the host made the bare repository and installed the hook; alice creates
    the game and pushes it over ssh; bob clones over ssh and joins; the start by consent travels both ways;
    each plays a turn; bob's turn out of control is refused, the hook's finding on his `remote:` lines, and the
    server keeps the game as it was. A client without an allowed key is turned away by sshd."""
    server_repo = tmp_path / "srv" / "duel.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(server_repo)], check=True,
                   env=clean_env(tmp_path))
    host = Table(tmp_path / "srv")
    installed = host.cli("hook", "install", str(server_repo), cwd=tmp_path)
    assert installed.exit_code == 0, installed.output
    url = sshd.url(server_repo)
    alice, bob = player(tmp_path, sshd, "alice", "alice"), player(tmp_path, sshd, "bob", "bob")

    alice.pbem("init", str(alice.table.repo_dir), "--template", str(TEACHING_DUEL), "--id", GAME_ID, who="fed",
               cwd=alice.table.root)
    alice.pbem("join", "--as", "fed", who="fed")
    alice.ok("remote", "add", "origin", url)
    done = alice.git("push", "-u", "origin", "main")
    assert done.returncode == 0 and "remote: pbem: refs/heads/main: ok" in done.stderr, done.stderr

    clone = subprocess.run(["git", "clone", "-q", url, str(bob.table.repo_dir)], capture_output=True, text=True,
                           env=clean_env(bob.table.home, bob.ssh_env))
    assert clone.returncode == 0, clone.stderr
    bob.pbem("join", "--as", "kli", who="kli")
    bob.ok("push", "origin", "main")

    alice.ok("pull", "-q", "--ff-only")
    alice.pbem("start", "--first", "fed", who="fed")
    alice.ok("push", "origin", "main")
    bob.ok("pull", "-q", "--ff-only")
    bob.pbem("sign", "fed-0001", who="kli")
    bob.ok("push", "origin", "main")
    alice.ok("pull", "-q", "--ff-only")
    alice.pbem("start", "--first", "fed", who="fed")
    alice.table.turn("fed", **FED_TURN_1)
    done = alice.git("push", "origin", "main")
    assert done.returncode == 0 and "ok, 2 new commits verified" in done.stderr, done.stderr

    bob.ok("pull", "-q", "--ff-only")
    bob.table.turn("kli", **KLI_TURN_1)
    bob.ok("push", "origin", "main")
    landed = bob.table.head()
    bob.table.edit("kli", through="1.20.damage")  # fed holds control now
    bob.table.sneak("kli", "kli: again, out of turn")
    done = bob.git("push", "origin", "main")
    refused(done, "signature.not-in-control")
    assert "pre-receive hook declined" in done.stderr
    served = subprocess.run(["git", "rev-parse", "main"], cwd=server_repo, capture_output=True, text=True)
    assert served.stdout.strip() == landed

    alice.ok("pull", "-q", "--ff-only")
    assert alice.table.head() == landed
    assert alice.table.pbem("verify", who="fed").returncode == 0

    stranger = Sandbox(tmp_path / "carol").ssh_keygen_key("carol-login")
    denied = subprocess.run(["git", "ls-remote", url], capture_output=True, text=True,
                            env=clean_env(tmp_path / "carol" / "home",
                                          {"GIT_SSH_COMMAND": sshd.ssh_command(stranger)}))
    assert denied.returncode != 0 and "Permission denied" in denied.stderr
