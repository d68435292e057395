"""Benchmark: the game page of a long game, `pbem site`, opened in a real browser.

    .venv/bin/python bench/site_bench.py --commits 2000

The game is bench/verify_bench.py's synthetic duel (every commit a signed, legal turn, control alternating;
built once and kept under bench/.games/). For it the script measures:

* write:   `pbem site` of the whole game (wall clock, in a fresh process, Python's start included);
* files:   how many files the site has, its total size and its largest file (no file may pass 5 MB);
* load:    in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright), from navigation start of
           `index.html` from disk (file://) to the last commit's details and map shown (`body[data-ready=yes]`),
           median of `--runs` loads, each in a fresh browser context;
* step:    the median time from a key press (←, PageUp) to the commit shown, map included;
* for comparison, the size of the one-file `pbem log --html` page of the same game, and its load time when
  `--old` is given (slow: it was 24.8 s at 2,000 commits).

Numbers are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from verify_bench import make_game  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def load_times(page: Path, runs: int, ready: str) -> tuple[list[float], list[float]]:
    from playwright.sync_api import sync_playwright

    loads, steps = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            tab = context.new_page()
            start = time.perf_counter()
            tab.goto(page.as_uri(), timeout=120_000)
            tab.wait_for_selector(ready, timeout=120_000)
            loads.append(time.perf_counter() - start)
            if ready != "body":
                for key in ("ArrowLeft", "PageUp", "ArrowLeft", "PageUp"):
                    begin = time.perf_counter()
                    tab.keyboard.press(key)
                    tab.wait_for_selector('body[data-ready="yes"]', timeout=60_000)
                    steps.append(time.perf_counter() - begin)
            context.close()
        browser.close()
    return loads, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--old", action="store_true", help="also time the one-file page in the browser")
    args = parser.parse_args()
    pbem = shutil.which("pbem") or str(Path(sys.executable).parent / "pbem")
    game = HERE / ".games" / f"duel-{args.commits}"
    if not game.exists():
        make_game(game, args.commits)
    out = HERE / ".games" / f"site-{args.commits}"
    shutil.rmtree(out, ignore_errors=True)
    write = timed([pbem, "site", str(out)], game)
    sizes = {p: p.stat().st_size for p in out.rglob("*") if p.is_file()}
    largest = max(sizes, key=sizes.__getitem__)
    loads, steps = load_times(out / "index.html", args.runs, 'body[data-ready="yes"]')
    old = HERE / ".games" / f"page-{args.commits}.html"
    old_write = timed([pbem, "log", "--html", "--out", str(old)], game)
    print(f"| {args.commits:,}-commit game | value |\n|---|---|")
    print(f"| `pbem site` writes | {write:.1f} s |")
    print(f"| site files | {len(sizes)}, {sum(sizes.values()) / 1e6:.1f} MB in all |")
    print(f"| largest file | {largest.relative_to(out)}: {sizes[largest] / 1e3:.0f} kB |")
    print(f"| index.html + site.js + data/index.js | "
          f"{sum(sizes[out / f] for f in ('index.html', 'site.js', 'data/index.js')) / 1e3:.0f} kB |")
    print(f"| load to the last commit shown (median of {args.runs}) | {statistics.median(loads):.2f} s "
          f"(min {min(loads):.2f}, max {max(loads):.2f}) |")
    print(f"| one step (key to commit shown, median of {len(steps)}) | {statistics.median(steps) * 1000:.0f} ms |")
    print(f"| one-file `pbem log --html` | {os.path.getsize(old) / 1e6:.1f} MB, written in {old_write:.1f} s |")
    if args.old:
        old_loads, _ = load_times(old, 1, "body")
        print(f"| one-file page load | {old_loads[0]:.1f} s |")


if __name__ == "__main__":
    main()
