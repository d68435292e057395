"""Benchmark: `pbem verify` of the 10,000-commit duel against the pygit2 floor run just before and just after it.

    .venv/bin/python bench/verify_pairs.py [--pairs 12] [--before CHECKOUT]

On a machine whose speed wanders from one second to the next, the medians of a few floor runs and a few verify
runs (bench/verify_bench.py) can be far apart in time; here each verification is divided by the mean of the two
floor runs around it (floor, verify, floor, verify, …), in wall and in CPU time. With `--before`, the pbem of
another checkout (its tool/ folder first on PYTHONPATH) is verified in turn with this one, alternated. The game
is the one bench/verify_bench.py builds (run it once first); nothing is kept between runs (.git/pbem removed).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from verify_bench import FLOOR_PYGIT2  # noqa: E402

GAME = HERE / ".games" / "duel-10000"
VERIFY = "import sys; sys.argv = ['pbem', 'verify']; from pbem.cli import main; main()"


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one command in the game, nothing kept from an earlier run."""
    shutil.rmtree(GAME / ".git" / "pbem", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=GAME, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--before", type=Path, help="a checkout whose pbem is verified in turn with this one")
    args = parser.parse_args()
    if not GAME.exists():
        sys.exit(f"{GAME} is missing: run bench/verify_bench.py --commits 10000 once first")
    codes = {"this checkout": {**os.environ, "PYTHONPATH": str(HERE.parent / "tool")}}
    if args.before is not None:
        codes["before"] = {**os.environ, "PYTHONPATH": str(args.before.resolve() / "tool")}
    floor = [sys.executable, "-c", FLOOR_PYGIT2, str(GAME)]
    ratios: dict[str, list[tuple[float, float]]] = {name: [] for name in codes}
    last = run(floor)
    for _ in range(args.pairs):
        for name, env in codes.items():
            verified = run([sys.executable, "-c", VERIFY], env)
            now = run(floor)
            wall, cpu = (last[0] + now[0]) / 2, (last[1] + now[1]) / 2
            ratios[name].append((verified[0] / wall, verified[1] / cpu))
            last = now
    print("| code | × floor wall, median (range) | × floor CPU, median (range) |")
    print("|---|---:|---:|")
    for name, found in ratios.items():
        walls, cpus = sorted(r[0] for r in found), sorted(r[1] for r in found)
        print(f"| {name} | {statistics.median(walls):.2f} ({walls[0]:.2f}–{walls[-1]:.2f}) | "
              f"{statistics.median(cpus):.2f} ({cpus[0]:.2f}–{cpus[-1]:.2f}) |")


if __name__ == "__main__":
    main()
