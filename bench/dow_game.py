"""Benchmark: a whole Diplomacy game (`dow/1`), verified cold and one new commit at a time.

    .venv/bin/python bench/dow_game.py [--until 1915] [--runs 3] [--rebuild]

Builds once (kept in bench/.games/dow-full-UNTIL/, git-ignored) a scripted game of seven powers from Spring 1901 to a
solo victory or the end of `--until` (Winter adjustments included), through the same services players use
(`pbem join`, `start`, `say`, `declare`, `orders FILE`, `orders --reveal`), each commit signed in process with a
fixed key per power:

* S1901P, the press-only first half: every pair of powers declares WAR (so every order the engine accepts is
  also allowed by the relationship table), every power speaks, then every power says it is `ready`;
* every later phase: each power that owes orders first posts one message, then all seal, then all reveal;
* the orders are chosen by a fixed-seed random generator among the orders the engine offers (moves first,
  supports and holds now and then; retreats, builds and the disbands due), each checked by pbem as
  `pbem orders` checks it.

Then, each in a fresh process, the median of `--runs` runs:

* cold verify: `pbem verify` of the whole history with nothing kept from an earlier run (.git/pbem/ removed);
* one new commit, of each kind: the last press message, the last sealed orders, the last reveal of the last
  movement phase and the last reveal of the game (each resolves its phase, the latter Winter adjustments):
  `pbem verify` in the game checked out at that commit (as a player has it after pulling it), after
  `pbem verify COMMIT~1` kept its parent's state;
* peak MB: the maximum resident memory of the `pbem verify` process.

Times are wall-clock and CPU (user + system) seconds and include starting Python; the machine may be shared,
hence the medians and the CPU time. `--code DIR` verifies with another checkout's pbem (e.g. the code before a
change), put first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tool"))
sys.path.insert(0, str(HERE))

from pbem.crypto.keys import PrivateKey, write_keypair  # noqa: E402
from pbem.protocol.model import SEALED  # noqa: E402
from pbem.rulesets.dow import engine, resolve  # noqa: E402
from pbem.rulesets.dow.state import POWERS  # noqa: E402
from pbem.services import setup  # noqa: E402
from pbem.services.dow import orders as dow_orders, press as dow_press, seat as dow_seat  # noqa: E402
from pbem.services.workspace import Identity, Workspace  # noqa: E402
from pbem.store.signer import KeySigner  # noqa: E402

CODE = "IReadTheGameDescription"  # the template's invite code
NAMES = {"austria": "Anna", "england": "Edward", "france": "Francine", "germany": "Gerhard", "italy": "Isabella",
         "russia": "Ruslan", "turkey": "Tarik"}


def identity(power: str, keys: Path) -> Identity:
    """A fixed key per power, signing in process; also written to `keys` (revealing sealed orders reads it)."""
    key = PrivateKey.from_seed(bytes([POWERS.index(power) + 11]) * 32, f"{power}@bench")
    path = keys / f"{power}_ed25519"
    if not path.exists():
        write_keypair(path, key)
    return Identity(path, KeySigner(key), key.public, (NAMES[power], f"{power}@bench.invalid"))


def choose(state: Any, phase: str, power: str, rng: random.Random) -> list[str]:
    """Orders for one power: for each of its units (or each adjustment due) one of the orders the engine
    offers, kept only if pbem judges it ok (as `pbem orders` would before sealing)."""
    board = state.board
    game = engine._game(board, phase)  # the bench's own look at what the engine offers; pbem never does this
    possible = game.get_all_possible_orders()
    orderable = game.get_orderable_locations(power.upper())
    chosen: list[str] = []
    if phase.endswith("A"):
        due = engine.adjustment_due(board, power)
        wanted = " B" if due > 0 else " D"
        options = sorted({o for loc in orderable for o in possible.get(loc, ()) if o.endswith(wanted)})
        rng.shuffle(options)
        used: set[str] = set()
        for order in options:
            where = order.split()[1][:3]
            if where not in used and len(chosen) < abs(due):
                used.add(where)
                chosen.append(order)
    else:
        for loc in sorted(orderable):
            options = sorted(possible.get(loc, ()))
            if not options:
                continue
            moves = [o for o in options if " - " in o and " VIA" not in o and (" S " not in o and " C " not in o)]
            retreats = [o for o in options if " R " in o]
            supports = [o for o in options if " S " in o]
            roll = rng.random()
            pool = (retreats or options) if phase.endswith("R") else (
                moves if moves and roll < 0.7 else supports if supports and roll < 0.85 else options)
            chosen.append(rng.choice(pool))
    return [order for order, _, verdict, _ in resolve.judge(state, power, chosen) if verdict == "ok"]


def make_game(path: Path, until: int, seed: int = 15) -> int:
    """The scripted game; returns its number of commits."""
    keys = path.with_name(path.name + "-keys")
    keys.mkdir(parents=True, exist_ok=True)
    players = {p: identity(p, keys) for p in POWERS}
    ws = setup.init(path, "dow-standard", "dow-bench", players["austria"])
    for power in POWERS:
        setup.join(ws, power, players[power], CODE)
    for power in POWERS:  # the start by consent: austria proposes, the others sign, the last run starts
        setup.begin(ws, players[power], first="austria")
    rng = random.Random(seed)
    while True:
        verified = ws.head()
        assert verified is not None and verified.status is not None
        status = verified.status
        if status.over:
            break
        when = status.firm
        year = int(when[1:5])
        if year > until:
            break
        owing = [b.player for b in status.pending if b.kind == SEALED and b.at == when]
        speakers = POWERS if when == "S1901P" else owing or [POWERS[year % 7]]
        if when == "S1901P":
            for i, a in enumerate(POWERS):
                for b in POWERS[i + 1:]:
                    dow_press.post(ws, players[a], {"declare": {"to": b, "state": "WAR"}})
        for power in speakers:
            dow_press.post(ws, players[power], {"say": f"{NAMES[power]} of {power.title()} at {when}: no quarter."})
        if when == "S1901P":  # the press-only first half ends when every power is ready
            for power in POWERS:
                dow_press.post(ws, players[power], {"ready": True})
            continue
        state = dow_seat.current_state(ws.head())
        phase = when if not when.endswith("P") else ""
        for power in owing:
            orders = choose(state, phase, power, rng) if phase else []
            dow_orders.seal_orders(ws, players[power], json.dumps({"orders": orders}).encode(), f"bench {when}")
        for power in owing:
            dow_orders.reveal_orders(ws, players[power])
        if when.endswith("A"):
            print(f"  {when} done", file=sys.stderr)
    count = int(subprocess.run(["git", "-C", str(path), "rev-list", "--count", "HEAD"], capture_output=True,
                               text=True, check=True).stdout)
    subprocess.run(["git", "-C", str(path), "gc", "-q"], check=True)  # packed, as a clone would be
    return count


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


# Runs one command as its only child: its wall time, its CPU time (user + system, less sensitive than wall time
# to a busy machine) and its peak resident memory (RUSAGE_CHILDREN of a process with a single child).
RUN = ("import resource, subprocess, sys, time; t = time.perf_counter(); done = subprocess.run(sys.argv[1:]); "
       "t = time.perf_counter() - t; r = resource.getrusage(resource.RUSAGE_CHILDREN); "
       "print(t, r.ru_utime + r.ru_stime, r.ru_maxrss, file=sys.stderr); sys.exit(done.returncode)")


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int, str]:
    done = subprocess.run([sys.executable, "-c", RUN, *cmd], cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {done.stderr}")
    wall, cpu, peak = done.stderr.strip().splitlines()[-1].split()
    return float(wall), float(cpu), int(peak), done.stdout


def commit_of(path: Path, grep: str) -> str:
    """The newest commit whose subject matches `grep`."""
    return subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%H", f"--grep={grep}"],
                          capture_output=True, text=True, check=True).stdout.strip()


def measure(path: Path, runs: int, code: Path | None) -> dict[str, Any]:
    """Cold verification, and one new commit of each kind (press, sealed orders, the reveal that resolves a
    phase): the median of `runs` runs of each, wall and CPU seconds; and the peak memory of a cold run."""
    pbem = shutil.which("pbem") or str(Path(sys.executable).parent / "pbem")
    env = dict(os.environ)
    if code is not None:  # another checkout's pbem, e.g. the code before a change
        env["PYTHONPATH"] = str(code / "tool")
    out: dict[str, Any] = {}
    cold = []
    for _ in range(runs):
        shutil.rmtree(path / ".git" / "pbem", ignore_errors=True)  # a cold, full verification
        wall, cpu, peak, text = run([pbem, "verify"], path, env)
        assert text.startswith("ok:"), text[:500]
        cold.append((wall, cpu, peak))
    out["cold"] = {"wall_s": round(median([c[0] for c in cold]), 2), "cpu_s": round(median([c[1] for c in cold]), 2),
                   "peak_mb": round(max(c[2] for c in cold) / 1024), "walls": [round(c[0], 2) for c in cold],
                   "cpus": [round(c[1], 2) for c in cold]}
    head = commit_of(path, ".")
    kinds = {"press": commit_of(path, "press:"), "sealed": commit_of(path, "sealed ("),
             # the last reveal of a phase adjudicates it: of the last movement phase, and the game's last commit
             "resolving reveal, movement": commit_of(path, "M revealed ("), "resolving reveal": head}
    branch = subprocess.run(["git", "-C", str(path), "symbolic-ref", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    try:
        for kind, oid in kinds.items():
            # the checkout at the new commit, as a player has it after pulling it: `pbem verify` verifies HEAD
            git(path, "checkout", "-q", "--detach", oid)
            shutil.rmtree(path / ".git" / "pbem", ignore_errors=True)
            run([pbem, "verify", f"{oid}~1"], path, env)  # keeps the clean state of the parent (verify/cache.py)
            ones = []
            for _ in range(runs):
                wall, cpu, peak, text = run([pbem, "verify"], path, env)
                assert text.startswith("ok:"), text[:500]
                ones.append((wall, cpu, peak))
                for kept in (path / ".git" / "pbem").rglob(f"{oid}.pickle"):
                    kept.unlink()  # the commit's own state would make the next run verify nothing
            out[kind] = {"wall_s": round(median([o[0] for o in ones]), 2),
                         "cpu_s": round(median([o[1] for o in ones]), 2),
                         "peak_mb": round(max(o[2] for o in ones) / 1024), "walls": [round(o[0], 2) for o in ones],
                         "cpus": [round(o[1], 2) for o in ones]}
    finally:
        git(path, "checkout", "-q", branch)  # back on the branch the game was built on
    return out


def git(path: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--until", type=int, default=1915, help="the last game year played (default 1915)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--code", type=Path, help="verify with the pbem of this checkout (its tool/ folder)")
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "tool" / "pbem"), quiet=1)
    if args.code is not None:
        compileall.compile_dir(str(args.code / "tool" / "pbem"), quiet=1)
    path = HERE / ".games" / f"dow-full-{args.until}"
    if args.rebuild and path.exists():
        shutil.rmtree(path)
    if not path.exists():
        start = time.perf_counter()
        commits = make_game(path, args.until)
        print(f"built {commits} commits in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    if args.build_only:
        return
    commits = int(subprocess.run(["git", "-C", str(path), "rev-list", "--count", "HEAD"], capture_output=True,
                                 text=True, check=True).stdout)
    load = os.getloadavg()[0]
    row = {"commits": commits, "load_before": round(load, 1), **measure(path, args.runs, args.code),
           "load_after": round(os.getloadavg()[0], 1)}
    print(json.dumps(row))


if __name__ == "__main__":
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    main()
