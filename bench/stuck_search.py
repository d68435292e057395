"""The machine that looks for stuck games, run longer than the suite does (tests/test_stuck_search.py).

    .venv/bin/python bench/stuck_search.py [--examples 200] [--steps 60] [--seed 1]

Plays `--examples` random honest tactical games of 2-4 players (up to `--steps` steps each) through the pure
judge, asserting after every commit that each player who holds control or owes something has a legal commit
that moves the game on (DESIGN §4.2, §4.8). Prints the games, commits and agreement commits played, the break
kinds met and the stuck states found; exits 1 when it found one (hypothesis prints the shortest way there).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tool")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200, help="games to play")
    parser.add_argument("--steps", type=int, default=60, help="steps at most per game")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis' seed (default: a derandomized run)")
    parser.add_argument("--shrink", action="store_true", help="shrink a stuck game to its shortest way there")
    args = parser.parse_args()
    import conftest  # noqa: F401  (the suite's hypothesis profile and PBEM_CROSSCHECK)
    from hypothesis import seed as hypothesis_seed

    import test_stuck_search as search

    search.ROOT[:] = [Path(tempfile.mkdtemp(prefix="stuck-search-"))]
    machine = search.StuckSearch if args.seed is None else hypothesis_seed(args.seed)(search.StuckSearch)
    start = time.monotonic()
    try:
        search.search(args.examples, args.steps, args.seed, machine, args.shrink)
    except AssertionError as exc:
        print(f"{search.FIGURES.line()} in {time.monotonic() - start:.0f} s")
        print(f"stuck: {exc}")
        return 1
    print(f"{search.FIGURES.line()} in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
