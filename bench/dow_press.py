"""Benchmark: many press messages in one Diplomacy phase, verified cold.

    .venv/bin/python bench/dow_press.py [--messages 2000] [--runs 3] [--rebuild]

Builds once (bench/.games/dow-press-N/, git-ignored) a `dow/1` game of seven powers that stays in the press-only
first half of Spring 1901 while the powers post N one-word `say` messages, one signed commit each, in turn
(through the services players use: `pbem join`, `start`, `say`). Then, each in a fresh process, the median of
`--runs` runs of `pbem verify` over the whole history with nothing kept from an earlier run (.git/pbem/
removed): wall-clock and CPU (user + system) seconds, starting Python included. Recognising a phase's press is
linear in its messages: each commit recognises only the messages it adds, after the state the commit before
it left.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dow_game import CODE, identity, median, run  # noqa: E402
from pbem.rulesets.dow.state import POWERS  # noqa: E402
from pbem.services import setup  # noqa: E402
from pbem.services.dow import press as dow_press  # noqa: E402

GAMES = Path(__file__).resolve().parent / ".games"


def make_game(path: Path, messages: int) -> None:
    keys = path.with_name(path.name + "-keys")
    keys.mkdir(parents=True, exist_ok=True)
    players = {p: identity(p, keys) for p in POWERS}
    ws = setup.init(path, "dow-standard", "dow-press-bench", players["austria"])
    for power in POWERS:
        setup.join(ws, power, players[power], CODE)
    for power in POWERS:
        setup.begin(ws, players[power], first="austria")
    for number in range(messages):
        power = POWERS[number % len(POWERS)]
        dow_press.post(ws, players[power], {"say": f"w{number}"})
    subprocess.run(["git", "-C", str(path), "gc", "-q"], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    path = GAMES / f"dow-press-{args.messages}"
    if args.rebuild or not path.exists():
        shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(path.with_name(path.name + "-keys"), ignore_errors=True)
        started = time.perf_counter()
        make_game(path, args.messages)
        print(f"built {path} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    pbem = str(Path(sys.executable).with_name("pbem"))
    walls, cpus = [], []
    for _ in range(args.runs):
        shutil.rmtree(path / ".git" / "pbem", ignore_errors=True)
        wall, cpu, _, out = run([pbem, "verify"], path, dict(os.environ))
        walls.append(wall)
        cpus.append(cpu)
    print(f"{args.messages} messages in one phase: pbem verify (cold) {median(walls):.2f} s wall, "
          f"{median(cpus):.2f} s CPU (median of {args.runs})")


if __name__ == "__main__":
    main()
