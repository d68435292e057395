"""Benchmark: repositories built to make the verifier slow or fat (DESIGN §9 "Cost is bounded").

    .venv/bin/python bench/adversarial.py [--cases swap horizon rewrite] [--rebuild] [--no-hook]

DESIGN §9 promises that no repository under 1 MB makes `pbem verify` or the pre-receive hook take more than 10 s
or 500 MB. Each case here is one a hostile player could push, built in-process (pygit2, keys signed with PyNaCl,
deterministic keys, contents and timestamps) and kept under bench/.adversarial/ (git-ignored):

* swap:     a duel in which fed writes a report of 5,000 entries (just under the 1 MiB file limit), then 30
            commits each swap two lines of it (the file is no longer "the old one plus appended lines");
* horizon:  a legal duel with as many turns and units at speed 0 as game.yaml allows, both horizons set at the
            last step: replay must walk every step of every turn, for every unit (7 commits). The game the attack
            review used (`turns: 999`, 198 units) is refused by the schema now; its verdict is measured too;
* rewrite:  a duel with four 1 MiB reports, then 40 commits each touching game.yaml and 20 lines of every
            report (a changed game.yaml made the verifier read every file again);
* shift:    the swap game's report, then 300 commits each putting a new line first and dropping the last, so
            that every line moves at every commit.

For each, in fresh processes: `pbem verify` of the whole history (wall time, peak resident memory), the
packed repository's size, and, unless --no-hook, a push of the attack into a bare repository with pbem's
pre-receive hook whose main already holds the game's honest start (wall time and peak memory of the push,
hook and verifier included). Printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tool"))

from pbem.crypto.keys import PrivateKey  # noqa: E402
from pbem.errors import PbemError  # noqa: E402
from pbem.formats.writer import dump_mapping  # noqa: E402
from pbem.store.repo import GameRepo  # noqa: E402
from pbem.store.signer import KeySigner  # noqa: E402
from pbem.files.game import read_files  # noqa: E402
from pbem.files.parsecache import ParseCache  # noqa: E402
from pbem.protocol.control import expected_after, expected_start  # noqa: E402
from pbem.protocol.verified import Verified  # noqa: E402
from pbem.verify.commit import judge  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verify_bench import consent  # noqa: E402  (the start by consent, as the long game makes it)

# Runs one command and reports its wall time, the CPU time of everything it waited for (what a loaded machine
# changes least) and the peak resident memory of the largest of those processes.
PEAK = ("import resource, subprocess, sys, time; t = time.perf_counter(); done = subprocess.run(sys.argv[1:]); "
        "t = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(t, u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr); sys.exit(done.returncode)")

GAMES = HERE / ".adversarial"

GAME = """format: pbem/1
id: adversarial-{name}
title: "{title}"
ruleset: tactical/1
pbem: "0.1.0"
players:
  - {{id: fed, name: Alice, key: "{fed}"}}
  - {{id: kli, name: Bob, key: "{kli}"}}
dice: {{mode: commit-reveal}}
setup:
  map: {{columns: 42, rows: 30}}
  turns: {turns}
  units:
{units}"""

TWO_UNITS = ('    - {id: CA, owner: fed, hex: "1015", facing: B, speed: 0, turn_mode: 2}\n'
             '    - {id: D7, owner: kli, hex: "2815", facing: F, speed: 0, turn_mode: 2}\n')


def key(seed: int) -> PrivateKey:
    return PrivateKey.from_seed(bytes([seed]) * 32, f"adversary{seed}")


class Builder:
    """A game repository built commit by commit, each commit signed in-process; the honest commits' statuses
    are computed with the verifier's own code (as bench/verify_bench.py does)."""

    def __init__(self, path: Path, name: str, turns: int, units: str, title: str = "an adversarial duel") -> None:
        self.keys = {"fed": key(1), "kli": key(2)}
        self.signers = {p: KeySigner(k) for p, k in self.keys.items()}
        self.repo = GameRepo.init(path)
        self.path = path
        self.files: dict[str, bytes] = {"game.yaml": GAME.format(
            name=name, title=title, turns=turns, units=units, fed=self.keys["fed"].public.to_line(),
            kli=self.keys["kli"].public.to_line()).encode()}
        self.cache = ParseCache()
        self.when = 1_700_000_000
        self.head: str | None = None
        self.honest: str | None = None  # the last commit that is a legal turn
        try:
            game = read_files(self.files, self.cache)
        except PbemError:  # a game.yaml pbem refuses: every commit is a finding, no status can be computed
            self.prev = None
            self.commit("fed", "new game")
            return
        _, self.prev = judge(None, game, set(self.files), self.keys["fed"].public)
        self.commit("fed", "new game")
        self.head, self.prev = consent(self.files, self.cache, self.prev, self.keys,
                                       lambda who, what, parent: self.commit(who, what), self.head)
        _, status = expected_start(game, "fed")
        self.files["status.yaml"] = dump_mapping(status.to_data()).encode()
        self.judged("fed", {"status.yaml"})
        self.start = self.honest = self.commit("fed", "start")

    def commit(self, player: str, message: str) -> str:
        self.when += 60
        self.head = self.repo.commit_tree(self.files, [self.head] if self.head else [], message,
                                          self.signers[player], (player, f"{player}@bench.invalid"), self.when)
        return self.head

    def judged(self, player: str, changed: set[str]) -> Verified:
        findings, self.prev = judge(self.prev, read_files(self.files, self.cache), changed,
                                    self.keys[player].public)
        assert not findings, findings
        return self.prev

    def turn(self, player: str, changed: set[str], message: str, legal: bool = True) -> str:
        """A legal turn: the files of `changed` as set by the caller, status.yaml as replay computes it (just
        the files, when the game cannot be read). `legal=False`: a turn the verifier refuses (thousands of
        entries in one file are more than a unit's one action per step), committed all the same."""
        if self.prev is None:
            return self.commit(player, message)
        game = read_files(self.files, self.cache)
        _, status = expected_after(self.prev, game, player, message)
        self.files["status.yaml"] = dump_mapping(status.to_data()).encode()
        if not legal:
            _, self.prev = judge(self.prev, read_files(self.files, self.cache), changed | {"status.yaml"},
                                 self.keys[player].public)
            return self.commit(player, message)
        self.judged(player, changed | {"status.yaml"})
        self.honest = self.commit(player, message)
        return self.honest

    def finish(self) -> None:
        self.repo.repo.references.create("refs/heads/main", self.head, force=True)
        self.repo.repo.set_head("refs/heads/main")
        if self.honest:
            self.repo.repo.references.create("refs/heads/honest", self.honest, force=True)
        subprocess.run(["git", "-C", str(self.path), "reset", "-q", "--hard"], check=True)
        subprocess.run(["git", "-C", str(self.path), "gc", "-q"], check=True)


def report_lines(count: int, turn: int, seed: int = 0) -> list[str]:
    """`count` distinct entry lines of fed's, all in turn `turn`, some 200 bytes each (a note in an x- field):
    5,000 of them, the most a report file may hold, make a file of just under 1 MiB, the most any file may be."""
    times = [f"{turn}.{i}.{s}" for i in range(1, 33) for s in ("move", "activity", "fire", "damage")]
    words = ("port", "starboard", "closing", "opening", "range", "arc", "shields", "phasers", "drones", "hold")
    return [f"  - {{at: {times[(i * 7 + seed) % len(times)]}, by: fed, do: {{pass: true}}, x-n: {i}, x-why: "
            + '"' + " ".join(words[(i * k + seed) % len(words)] for k in range(1, 21))[:140] + '"}'
            for i in range(count)]


def as_report(lines: list[str]) -> bytes:
    return ("entries:\n" + "".join(line + "\n" for line in lines)).encode()


def build_swap(path: Path) -> None:
    """5,000 entries (just under 1 MiB) in one legal turn of fed's, then 30 commits each swapping two lines."""
    game = Builder(path, "swap", 4, TWO_UNITS)
    lines = report_lines(5_000, 1)
    game.files["report/turn-01.yaml"] = as_report(lines)
    assert len(game.files["report/turn-01.yaml"]) < 1024 * 1024
    game.files["players/fed.yaml"] = dump_mapping({"through": "1.32.final"}).encode()
    game.turn("fed", {"report/turn-01.yaml", "players/fed.yaml"}, "fed: orders for turn 1", legal=False)
    for i in range(30):
        a, b = (i * 997) % len(lines), (i * 7919 + 2500) % len(lines)
        lines[a], lines[b] = lines[b], lines[a]
        game.files["report/turn-01.yaml"] = as_report(lines)
        game.commit("kli", f"swap {i}")
    game.finish()


def build_shift(path: Path) -> None:
    """The same 5,000 entries, then 300 commits each putting a new line first and dropping the last: every line
    of the file moves, so no comparison by position helps (the worst edit for reading only what changed)."""
    game = Builder(path, "shift", 4, TWO_UNITS)
    lines = report_lines(5_000, 1)
    game.files["report/turn-01.yaml"] = as_report(lines)
    game.files["players/fed.yaml"] = dump_mapping({"through": "1.32.final"}).encode()
    game.turn("fed", {"report/turn-01.yaml", "players/fed.yaml"}, "fed: orders for turn 1", legal=False)
    fresh = report_lines(300, 1, seed=3)
    for i in range(300):
        lines = [fresh[i].replace("x-n: ", "x-m: ")] + lines[:-1]
        game.files["report/turn-01.yaml"] = as_report(lines)
        game.commit("kli", f"shift {i}")
    game.finish()


def units(count: int) -> str:
    """`count` units at speed 0, half fed's and half kli's, on distinct hexes of a 42 x 30 map."""
    out = []
    for i in range(count):
        owner = "fed" if i % 2 == 0 else "kli"
        hex_ = f"{1 + i % 42:02d}{1 + i // 42:02d}"
        out.append(f'    - {{id: U{i}, owner: {owner}, hex: "{hex_}", facing: A, speed: 0, turn_mode: 2}}\n')
    return "".join(out)


def build_horizon(path: Path, turns: int, count: int) -> None:
    """The attack review's legal game: both players' horizons at the last step of the last turn. With a setup
    the schema refuses (turns: 999), every commit is a finding and nothing is replayed."""
    game = Builder(path, "horizon", turns, units(count))
    for player in ("fed", "kli"):
        game.files[f"players/{player}.yaml"] = dump_mapping({"through": f"{turns}.32.final"}).encode()
        game.turn(player, {f"players/{player}.yaml"}, f"{player}: orders to the end")
    game.honest = getattr(game, "start", None)  # the attack is the whole game after its start
    game.finish()


def build_rewrite(path: Path) -> None:
    """Four 1 MiB reports in one turn, then 40 commits each changing game.yaml and 20 lines of every report."""
    game = Builder(path, "rewrite", 4, TWO_UNITS)
    reports = {t: report_lines(5_000, t, seed=t) for t in range(1, 5)}
    for t, lines in reports.items():
        game.files[f"report/turn-0{t}.yaml"] = as_report(lines)
    game.files["players/fed.yaml"] = dump_mapping({"through": "4.32.final"}).encode()
    game.turn("fed", {f"report/turn-0{t}.yaml" for t in reports} | {"players/fed.yaml"}, "fed: all my orders",
              legal=False)
    base = game.files["game.yaml"]
    for i in range(40):
        game.files["game.yaml"] = base.replace(b"an adversarial duel", f"an adversarial duel, take {i}".encode())
        for t, lines in reports.items():
            for k in range(20):
                n = (i * 389 + t * 1000 + k * 211) % len(lines)
                lines[n] = lines[n][:-1] + f", x-t{k}: {i}}}"
            game.files[f"report/turn-0{t}.yaml"] = as_report(lines)
        game.commit("kli", f"rewrite {i}")
    game.finish()


CASES: dict[str, Callable[[Path], None]] = {
    "swap": build_swap,
    "horizon": lambda p: build_horizon(p, 100, 60),
    "horizon-999": lambda p: build_horizon(p, 999, 198),
    "rewrite": build_rewrite,
    "shift": build_shift,
}


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int, int, str]:
    """Wall time, CPU time, peak resident memory (kB) of the command and what it waited for, exit code, output."""
    done = subprocess.run([sys.executable, "-c", PEAK, *cmd], cwd=cwd, capture_output=True, text=True, env=env)
    *rest, last = done.stderr.strip().splitlines()
    elapsed, cpu, peak = last.split()
    return float(elapsed), float(cpu), int(peak), done.returncode, done.stdout + "\n".join(rest)


def pack_kib(path: Path) -> int:
    packs = path / ".git" / "objects" / "pack"
    return sum(p.stat().st_size for p in packs.glob("*.pack")) // 1024


def hook_push(path: Path, pbem: str) -> tuple[float, float, int, int, str]:
    """A bare repository with pbem's hook, main at the honest start of the game; then push the attack."""
    server = path.parent / f"{path.name}.server.git"
    shutil.rmtree(server, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(server)], check=True, env=env)
    subprocess.run([pbem, "hook", "install", str(server)], check=True, env=env, capture_output=True)
    base = "honest" if subprocess.run(["git", "-C", str(path), "rev-parse", "-q", "--verify", "honest"],
                                      capture_output=True).returncode == 0 else "main~1"
    # (a game.yaml pbem refuses has no honest start: the server then receives the whole attack at once)
    subprocess.run(["git", "-C", str(path), "push", "-q", str(server), f"{base}:refs/heads/main"], env=env,
                   capture_output=True)
    return timed(["git", "-C", str(path), "push", str(server), "main:main"], path, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--no-hook", action="store_true")
    parser.add_argument("--games", type=Path, default=GAMES, help="where the repositories are built and kept")
    args = parser.parse_args()
    pbem = shutil.which("pbem") or str(Path(sys.executable).parent / "pbem")
    print("| case | commits | pack KiB | verify s | verify CPU s | verify MB | exit | push s | push CPU s | push MB "
          "| push |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in args.cases:
        path = args.games / name
        if args.rebuild or not (path / ".git").exists():
            shutil.rmtree(path, ignore_errors=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            began = time.perf_counter()
            CASES[name](path)
            print(f"<!-- built {name} in {time.perf_counter() - began:.1f} s -->", file=sys.stderr)
        shutil.rmtree(path / ".git" / "pbem", ignore_errors=True)
        commits = int(subprocess.run(["git", "-C", str(path), "rev-list", "--count", "HEAD"], capture_output=True,
                                     text=True, check=True).stdout)
        seconds, cpu, peak, code, output = timed([pbem, "verify"], path)
        if "Traceback" in output:
            raise SystemExit(f"{name}: pbem verify crashed:\n{output[-2000:]}")
        row = f"| {name} | {commits} | {pack_kib(path)} | {seconds:.2f} | {cpu:.2f} | {peak // 1024} | {code} |"
        if args.no_hook:
            row += " – | – | – | – |"
        else:
            push_s, push_cpu, push_peak, push_code, push_out = hook_push(path, pbem)
            if "Traceback" in push_out:
                raise SystemExit(f"{name}: the hook crashed:\n{push_out[-2000:]}")
            row += (f" {push_s:.2f} | {push_cpu:.2f} | {push_peak // 1024} | "
                    f"{'refused' if push_code else 'accepted'} |")
        print(row, flush=True)


if __name__ == "__main__":
    main()
