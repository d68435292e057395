"""The engine properties on many random positions (tests/dow_random_play.py), with counts.

    .venv/bin/python bench/dow_properties.py [--positions 2000] [--seed 1] [--engine-alone]

Each position: a random legal board, a random order for every unit among those the engine offers, the movement
phase adjudicated, its retreats played, the next phase built. Prints how many positions, dislodged units (and
how many by a convoyed army), armies a route of convoy orders could carry (and how many of those convoys
failed), the findings (a property broken) and the CPU seconds. `--engine-alone` takes the corrections inside
the engine's steps away (rulesets/dow/corrections.py), to count what the engine alone gets wrong.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from dow_random_play import play  # noqa: E402
from pbem.rulesets.dow import corrections  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine-alone", action="store_true")
    args = parser.parse_args()
    if args.engine_alone:
        for name in ("_strengths", "_check_disruptions", "_resolve_moves", "_move_results"):
            delattr(corrections.Corrected, name)
    rng = random.Random(args.seed)
    totals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    examples: list[str] = []
    start = time.process_time()
    for _ in range(args.positions):
        played = play(rng)
        totals.update(dislodged=played.dislodged, after_convoy=played.after_convoy, convoys=played.convoys,
                      disrupted=played.disrupted, findings=len(played.findings),
                      broken=bool(played.findings))
        for finding in played.findings:
            kinds[finding.split(" (")[0].split(" may retreat to ")[-1].split()[0] if " may retreat " in finding
                  else finding.split(":")[0][:40]] += 1
            if len(examples) < 5:
                examples.append(finding)
    seconds = time.process_time() - start
    print(f"positions {args.positions} (seed {args.seed}{', engine alone' if args.engine_alone else ''}): "
          f"{totals['dislodged']} dislodged ({totals['after_convoy']} by a convoyed army), "
          f"{totals['convoys']} convoyed armies ({totals['disrupted']} convoys failed); "
          f"{totals['findings']} findings in {totals['broken']} positions; {seconds:.1f} s CPU")
    for finding in examples:
        print("  e.g.", finding[:300])


if __name__ == "__main__":
    main()
