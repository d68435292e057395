"""Game years of Diplomacy played by seven `pbem watch` processes and a script that only writes orders and press
(docs/watch.md, docs/dow.md "Round trips per phase"). The suite plays 1901, which holds every kind of phase (press
only, movement, retreat, adjustment) and a war declared by press; `bench/watch_years.py` plays 1901 and 1902
(PBEM_WATCH_YEARS=2), the second year's press making peace.

Seven machines: each power has its own clone of one hooked bare hub, its own key and its own `pbem watch`
(a real subprocess, a short `--interval`). The script plays games/dow-standard/demo.yaml's orders, phase by
phase, through the `pbem` commands a player types in his clone (`pbem orders FILE`, `pbem ready`, `pbem say`,
`propose`, `accept`, `declare`); it never pushes, pulls or reveals: the watches publish every commit, bring every
clone up to date and reveal each power's orders once all have sealed. A power that owes nothing in a phase (a
retreat or adjustment phase where it has nothing to do) writes nothing. At the next spring the watches are
stopped with Ctrl-C (SIGINT, exit 0) and a fresh clone of the hub verifies.

Counted per phase and asserted: what the script did (orders sealed, press posted: the human actions) and the
commits on the hub (those the script did not make are the watches' reveals).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

import pygit2

from conftest import PBEM
from gitutil import clean_env
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping
from test_sync import POWERS, Seat, clone, dow_game, dow_keys, hub_for, hub_verifies

ROOT = Path(__file__).resolve().parents[1]
INTERVAL = "0.5"  # seconds between a watch's rounds
PATIENCE = 300.0  # seconds the script waits for the watches before it gives up (never reached when all is well)

# Public press, in the order it is posted (each message waits until its poster's clone holds the one before):
# the war France declares in the first half is in force for the moves, so France may attack Burgundy in F1901M
# and Germany has a retreat to give in F1901R.
PRESS: dict[str, list[tuple[str, ...]]] = {
    "S1901P": [("england", "say", "England seeks friends on both sides of the North Sea."),
               ("england", "propose", "france", "ALLIED"),
               ("france", "accept", "england", "ALLIED"),
               ("france", "declare", "germany", "WAR")],
    "F1901M": [("russia", "propose", "turkey", "FRIENDLY"),
               ("turkey", "accept", "russia", "FRIENDLY")],
    "S1902M": [("germany", "propose", "france", "NEUTRAL"),
               ("france", "accept", "germany", "NEUTRAL"),
               ("germany", "say", "Peace in the west.")],
}
PLAYED = 2 if os.environ.get("PBEM_WATCH_YEARS") == "2" else 1  # game years played (the bench plays two)
ALL_YEARS = ("S1901P", "S1901M", "S1901R", "F1901M", "F1901R", "W1901A",
             "S1902M", "S1902R", "F1902M", "F1902R", "W1902A")
YEARS = ALL_YEARS[:6 + 5 * (PLAYED - 1)]
NEXT_SPRING = f"S{1901 + PLAYED}M"
MOVEMENT = [p for p in YEARS if p.endswith("M")]


def demo_orders() -> dict[str, dict[str, list[str]]]:
    """games/dow-standard/demo.yaml's orders, phase -> power -> orders."""
    path = ROOT / "games" / "dow-standard" / "demo.yaml"
    data = yamlsafe.load(path.read_bytes(), str(path)).data
    return {row["phase"]: dict(row.get("orders", {})) for row in data["phases"]}


def status_at(repo_dir: Path, ref: str = "HEAD") -> dict[str, Any]:
    """status.yaml of `ref` (HEAD of a clone, or `main` of the hub), read from git, never from a working tree
    a watch may be writing."""
    repo = pygit2.Repository(str(repo_dir))
    commit = repo.revparse_single(ref)
    return yamlsafe.load(repo[commit.tree["status.yaml"].id].data, "status.yaml").data


def head_of(repo_dir: Path, ref: str = "HEAD") -> str:
    return str(pygit2.Repository(str(repo_dir)).revparse_single(ref).id)


def contains(repo_dir: Path, ancestor: str) -> bool:
    """Whether the clone's HEAD holds commit `ancestor` (False while it has not even fetched it)."""
    repo = pygit2.Repository(str(repo_dir))
    tip, wanted = repo.head.target, pygit2.Oid(hex=ancestor)
    try:
        return tip == wanted or repo.descendant_of(tip, wanted)
    except (KeyError, pygit2.GitError):
        return False


def wait_for(what: str, ready: Callable[[], bool], watches: dict[str, "Watch"]) -> None:
    deadline = time.monotonic() + PATIENCE
    while not ready():
        for watch in watches.values():
            assert watch.process.poll() is None, f"{watch.power}'s watch ended:\n{watch.output()}"
        assert time.monotonic() < deadline, f"waited {PATIENCE:.0f} s for {what}:\n" + "\n".join(
            w.output()[-3000:] for w in watches.values())
        time.sleep(0.05)


def player_env(seat: Seat) -> dict[str, str]:
    """The player's environment on his machine: his HOME and key. Without the suite's PBEM_CROSSCHECK (every
    fast path checked against the plain one, tests/conftest.py): the watches, the hub's hook and the commands
    here run the code a player runs, and the suite checks the fast paths elsewhere."""
    env = clean_env(seat.home, {"PBEM_KEY": str(seat.me.path)})
    env.pop("PBEM_CROSSCHECK", None)
    return env


def pbem(seat: Seat, *args: str) -> subprocess.CompletedProcess[str]:
    """A command the player types in his clone."""
    return subprocess.run([str(PBEM), *args], cwd=seat.repo_dir, capture_output=True, text=True, check=False,
                          env=player_env(seat))


class Watch:
    """One power's `pbem watch`, its output kept in a file."""

    def __init__(self, power: str, seat: Seat) -> None:
        self.power, self.seat = power, seat
        self.log = seat.root / "watch.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen([str(PBEM), "watch", "--interval", INTERVAL], cwd=seat.repo_dir,
                                            env=player_env(seat),
                                            stdout=out, stderr=subprocess.STDOUT, text=True,
                                            preexec_fn=ctrl_c_stops)

    def output(self) -> str:
        return f"--- {self.power}'s watch\n" + self.log.read_text()

    def interrupt(self) -> None:
        """Ctrl-C, as the player stops it."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)

    def wait(self) -> int:
        try:
            return self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


def ctrl_c_stops() -> None:
    """In the watch's process before it starts: Ctrl-C (SIGINT) does what it does in a terminal, even where the
    test runs in the background of a shell, which starts its jobs with SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop_all(watches: dict[str, Watch]) -> dict[str, int]:
    """Ctrl-C to every watch at once, then each one's exit code (a watch that does not stop is killed)."""
    for watch in watches.values():
        watch.interrupt()
    codes: dict[str, int] = {}
    for power, watch in watches.items():
        try:
            codes[power] = watch.wait()
        except subprocess.TimeoutExpired:
            codes[power] = -1
    return codes


def commits_by_phase(hub: Path, since: str) -> Counter[str]:
    """The hub's commits after `since`, counted by the phase that was open when each was made (its parent's)."""
    repo = pygit2.Repository(str(hub))
    counted: Counter[str] = Counter()
    commit = repo.revparse_single("main")
    while str(commit.id) != since:
        parent = commit.parents[0]
        firm = yamlsafe.load(repo[parent.tree["status.yaml"].id].data, "status.yaml").data["firm"]
        counted[firm] += 1
        commit = parent
    return counted


def test_game_years_with_seven_watches_the_script_writes_only_orders_and_press(tmp_path: Path) -> None:
    keys = dow_keys(tmp_path)
    founder = Seat(tmp_path / "austria", keys["austria"])
    dow_game(founder, "dow-watch", keys, ready=False)
    hub = hub_for(founder, tmp_path)
    seats = {"austria": founder, **{p: clone(hub, tmp_path / p, keys[p]) for p in POWERS[1:]}}
    start = founder.head()
    assert status_at(hub, "main")["firm"] == "S1901P"
    orders = demo_orders()
    actions: dict[str, Counter[str]] = defaultdict(Counter)  # phase -> {"orders": n, "press": n}
    watches = {p: Watch(p, seat) for p, seat in seats.items()}
    try:
        for phase in YEARS:
            if status_at(hub, "main")["firm"] != phase:
                continue  # a phase in which nobody owed anything resolved by itself (a retreat with none)
            wait_for(f"every clone at {phase}", lambda: all(status_at(s.repo_dir)["firm"] == phase
                                                            for s in seats.values()), watches)
            posted = ""
            for power, *command in PRESS.get(phase, []):
                seat = seats[power]
                if posted:
                    wait_for(f"{power} to see the press before his", lambda: contains(seat.repo_dir, posted),
                             watches)
                done = pbem(seat, *command)
                assert done.returncode == 0, done.stdout + done.stderr
                wait_for(f"{power}'s press on the hub", lambda: head_of(seat.repo_dir) == head_of(hub, "main"),
                         watches)
                posted = head_of(hub, "main")
                actions[phase]["press"] += 1
            owing = [b["player"] for b in status_at(hub, "main").get("pending", []) if b.get("at") == phase]
            for power in POWERS:
                seat = seats[power]
                if phase.endswith("P"):
                    done = pbem(seat, "ready")
                    actions[phase]["press"] += 1
                elif power in owing:
                    written = seat.root / f"orders-{phase}.yaml"
                    written.write_text(dump_mapping({"orders": orders.get(phase, {}).get(power, [])}))
                    done = pbem(seat, "orders", str(written), "--anyway")  # the demo gives void orders
                    actions[phase]["orders"] += 1
                else:
                    continue
                assert done.returncode == 0, done.stdout + done.stderr
            wait_for(f"{phase} to resolve", lambda: status_at(hub, "main")["firm"] != phase, watches)
        assert status_at(hub, "main")["firm"] == NEXT_SPRING
    finally:
        codes = stop_all(watches)
    for power, watch in watches.items():
        assert codes[power] == 0, watch.output()
        text = watch.output()
        assert text.splitlines()[-1] == "pbem watch stopped" and "Traceback" not in text, text
    hub_verifies(hub, tmp_path)
    commits = commits_by_phase(hub, start)
    # the human actions: no orders in the press-only first half, one set of orders per power in each movement
    # phase, orders only from the powers with a retreat or an adjustment to make; the watches made every other
    # commit: one reveal for each set of orders sealed, nothing else
    assert actions["S1901P"] == {"press": len(PRESS["S1901P"]) + len(POWERS)}
    for phase in MOVEMENT:
        assert actions[phase]["orders"] == len(POWERS), (phase, actions[phase])
    assert actions["F1901R"]["orders"] >= 1 and actions["W1901A"]["orders"] >= 1  # a retreat and builds
    for phase in YEARS:
        human = actions[phase]["orders"] + actions[phase]["press"]
        assert commits[phase] == human + actions[phase]["orders"], (phase, actions[phase], commits[phase])
    assert sum(commits.values()) == sum(commits[p] for p in YEARS)  # no commit outside the years played
