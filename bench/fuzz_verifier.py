"""The verifier's fuzz properties, run longer than the suite does (tests/test_fuzz_verifier.py).

    .venv/bin/python bench/fuzz_verifier.py [--scale 10] [--explore]

Runs the two properties of tests/test_fuzz_verifier.py (a corrupted history gets findings or one PbemError, never
another exception; the fetching process changes no verdict) with `--scale` times the suite's examples (the suite:
20 and 8). Derandomized like a CI run unless `--explore` asks hypothesis for new examples. Exits as pytest does:
0 when every example passed, 1 with the falsifying example printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROPERTIES = "test_fuzz_verify_history_on_a_corrupted_game or test_the_fetching_process_changes_no_verdict"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=10, help="times the suite's examples per property")
    parser.add_argument("--explore", action="store_true", help="new random examples (default: derandomized)")
    args = parser.parse_args()
    env = {**os.environ, "PBEM_FUZZ_SCALE": str(args.scale)}
    if args.explore:
        env.pop("CI", None)
    else:
        env["CI"] = "true"
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                           "tests/test_fuzz_verifier.py", "-k", PROPERTIES], cwd=ROOT, env=env, check=False)
    print(f"fuzz_verifier: scale {args.scale}, exit {done.returncode}, {time.monotonic() - start:.0f} s")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
