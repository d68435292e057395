"""Two game years of Diplomacy with seven `pbem watch` processes, longer than the suite plays them
(tests/test_watch_dow_years.py plays 1901).

    .venv/bin/python bench/watch_years.py

Runs that test with PBEM_WATCH_YEARS=2: 1901 and 1902 of games/dow-standard/demo.yaml's orders and the press of
both years (France and Germany make peace in S1902M), every commit published, pulled and revealed by the watches,
then a fresh clone of the hub verifies. Exits as pytest does; prints the wall time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                           "tests/test_watch_dow_years.py"], cwd=ROOT, env={**os.environ, "PBEM_WATCH_YEARS": "2"},
                          check=False)
    print(f"watch_years: two years, exit {done.returncode}, {time.monotonic() - start:.0f} s")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
