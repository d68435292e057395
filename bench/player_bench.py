"""CPU time of a player's commands (`pbem status`, `check`, `yield`), which must cost what the turn changed, not
what the game holds (bench/README.md "Player commands").

    .venv/bin/python bench/player_bench.py [--runs 5]

Measures, each in a fresh process, CPU seconds (user + system, git subprocesses included, the median of --runs):

* the whole `pbem demo --game twirling-aces` (72 commits, built in one process);
* at its end: `pbem status`, `pbem check` and `pbem yield` of kli's last turn with orders (the demo's commit
  "kli: my left front shield is battered", replayed on its parent in a fresh clone);
* at the tip of the 1,000- and 10,000-commit duels of bench/verify_bench.py (built there if missing, cloned
  here): `pbem status`, and `pbem check` with one entry appended to the last report file.

Before each measured command `pbem verify` has kept HEAD's state under .git/pbem/, as after any earlier command.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PBEM = [sys.executable, "-c", "import sys; from pbem.cli import main; sys.argv[0] = 'pbem'; main()"]
YIELD_SUBJECT = "kli: my left front shield is battered"


def cpu(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds of one process and its children."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def clone(source: Path, dest: Path, rev: str | None = None) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    git(source.parent, "clone", "-q", str(source), str(dest))
    git(dest, "remote", "remove", "origin")
    if rev:
        git(dest, "reset", "-q", "--hard", rev)
    return dest


def demo(work: Path, env: dict[str, str], runs: int) -> list[tuple[str, float]]:
    times = [cpu([*PBEM, "demo", "--game", "twirling-aces", str(work / f"demo{i}")], work, env) for i in range(runs)]
    game = work / "demo0" / "game"
    turn = git(game, "log", "--format=%H", "--grep", YIELD_SUBJECT, "-F")
    keys = {**env, "PBEM_KEY": str(work / "demo0" / "keys" / "kli_ed25519")}

    def fresh() -> Path:  # the parent of kli's turn, with kli's edits (not status.yaml) in the working tree
        repo = clone(game, work / "turn", f"{turn}~1")
        git(repo, "checkout", "-q", turn, "--", "players/kli.yaml", "report")
        git(repo, "reset", "-q")
        subprocess.run([*PBEM, "verify"], cwd=repo, env=keys, check=True, capture_output=True)
        return repo

    repo = fresh()
    out = [("twirling-aces demo, whole", statistics.median(times))]
    for command in (["status"], ["check"]):
        out.append((f"demo end: {command[0]}", statistics.median(cpu([*PBEM, *command], repo, keys)
                                                                 for _ in range(runs))))
    out.append(("demo end: yield", statistics.median(cpu([*PBEM, "yield", "-m", "off"], fresh(), keys)
                                                      for _ in range(runs))))
    return out


def duel(commits: int, games: Path, work: Path, env: dict[str, str], runs: int) -> list[tuple[str, float]]:
    source = games / f"duel-{commits}"
    if not source.exists():
        subprocess.run([sys.executable, str(HERE / "verify_bench.py"), "--commits", str(commits)], check=True)
    repo = clone(source, work / f"duel-{commits}")
    sys.path.insert(0, str(HERE.parent / "tool"))
    from pbem.crypto.keys import PrivateKey

    key = work / "fed_bench"
    key.write_text(PrivateKey.from_seed(bytes([1]) * 32, "bench1").to_openssh())
    key.chmod(0o600)
    keys = {**env, "PBEM_KEY": str(key)}
    subprocess.run([*PBEM, "verify"], cwd=repo, env=keys, check=True, capture_output=True)
    out = [(f"duel {commits:,}: status", statistics.median(cpu([*PBEM, "status"], repo, keys) for _ in range(runs)))]
    last = sorted((repo / "report").iterdir())[-1]
    with last.open("a") as handle:
        handle.write('  - {at: "99.0.alloc", by: fed, unit: CA, do: {speed: 12}}\n')
    out.append((f"duel {commits:,}: check", statistics.median(cpu([*PBEM, "check"], repo, keys) for _ in range(runs))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commits", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--games", type=Path, default=HERE / ".games", help="where verify_bench.py keeps its games")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache")}
        env.pop("PBEM_CROSSCHECK", None)
        rows = demo(work, env, args.runs)
        for commits in args.commits:
            rows += duel(commits, args.games, work, env, args.runs)
    for name, seconds in rows:
        print(f"{name:<32} {seconds:6.2f} s CPU")


if __name__ == "__main__":
    main()
