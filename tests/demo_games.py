"""The three demo games as states to read messages at (tests/test_messages.py, tests/test_message_net.py).

Each demo is played once per run (conftest.DemoGames, the `demo_games` fixture); `clone_at` gives a player's clone
of it at any of its commits: a bare repository holding the game up to that commit stands for the shared one
(origin), and the clone is fresh from it, so it is neither behind nor ahead, as a player's clone is after `pbem
pull`. The demo's keys sign for each seat (keys/<seat>_ed25519).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from conftest import PBEM, DemoGames
from gitutil import clean_env

DEMOS = ("tactical-duel", "twirling-aces", "dow")


def demo(game: str, games: DemoGames) -> Path:
    """The folder of demo `game` (game/, keys/, demo.out: what the demo printed), played once per run; only read."""
    return games.folder(game)


def commit_of(folder: Path, subject: str) -> str:
    """The first commit of the demo whose subject starts with `subject`."""
    lines = git(folder / "game", "log", "--reverse", "--format=%H %s").splitlines()
    return next(line.split()[0] for line in lines if line.split(" ", 1)[1].startswith(subject))


def commits(folder: Path) -> list[str]:
    """Every commit of the demo, oldest first."""
    return git(folder / "game", "log", "--reverse", "--format=%H").split()


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=clean_env(cwd), check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@dataclass
class Clone:
    """A player's clone of a demo at one of its commits, with `shared` (bare) as its origin."""

    root: Path
    keys: Path

    @property
    def game(self) -> Path:
        return self.root / "game"

    @property
    def shared(self) -> Path:
        return self.root / "shared.git"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def env(self, who: str | None) -> dict[str, str]:
        return clean_env(self.home, {"PBEM_KEY": str(self.keys / f"{who}_ed25519")} if who else {})

    def pbem(self, *args: str, who: str | None = None, cwd: Path | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """The real `pbem` in a subprocess."""
        return subprocess.run([str(PBEM), *args], cwd=cwd or self.game, env=self.env(who), capture_output=True,
                              text=True, check=False, timeout=timeout)

    def cli(self, *args: str, who: str | None = None, cwd: Path | None = None) -> Any:
        """`pbem ARGS` in this process (typer's CliRunner): the same code, no interpreter start-up."""
        from pbem.cli import app

        env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("GIT_", "SSH_", "PBEM_"))}
        env.update(self.env(who))
        old = Path.cwd()
        os.chdir(cwd or self.game)
        try:
            return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(old)

    def second(self, name: str) -> "Clone":
        """Another player's clone of the same shared repository."""
        other = Clone(self.root / name, self.keys)
        other.home.mkdir(parents=True)
        git(other.root, "clone", "-q", str(self.shared), "game")
        return other


def clone_at(folder: Path, oid: str, dest: Path) -> Clone:
    """A player's clone of the demo in `folder` at commit `oid` (see the module docstring)."""
    dest.mkdir(parents=True)
    git(dest, "clone", "-q", "--bare", str(folder / "game"), "shared.git")
    git(dest / "shared.git", "update-ref", "refs/heads/main", oid)
    clone = Clone(dest, folder / "keys")
    clone.home.mkdir()
    git(dest, "clone", "-q", str(clone.shared), "game")
    return clone
