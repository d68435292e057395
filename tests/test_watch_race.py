"""What seven `pbem watch` processes playing Diplomacy on one hub uncovered (tests/test_watch_dow_years.py), each
pinned down on the small table of tests/test_push.py (a duel with a dice escrow: after fed's turn, kli owes his
contribution and the escrow its signature, so both commit on the same state):

* a command the player types and his watch's round interleaved in one clone: the command read one HEAD and
  committed on another (another power's press "changed by me"), or the round's reset replaced its commit. Now
  each holds the clone's lock (services/clonelock.py) for as long as it works there;
* seven watches revealing at the same moment: a push that lost the race at the hub (the ref moved while the hook
  verified it) was given up after three tries. Now it pauses a random while and tries again, up to MAX_TRIES;
* every round fetched, and every push verified the whole game again: a round that finds nothing new costs one
  `git ls-remote`, a push verifies only the commits it publishes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest

from conftest import PBEM
from pbem.errors import PbemError
from pbem.services import clonelock, turn, watch
from pbem.services.gitstate import run_git
from pbem.services.push import MAX_TRIES, push
from pbem.services.workspace import Workspace
from test_push import Race, base_race, escrow_signs_and_pushes, identity, race, server_main  # noqa: F401
from test_watch import Lines


class Recorded:
    """The git binary, with every call remembered (and an optional action before a given command)."""

    def __init__(self, before: dict[str, Any] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.before = dict(before or {})

    def __call__(self, args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(args))
        action = self.before.pop(args[0], None)
        if action is not None:
            action()
        return run_git(args, cwd)

    def commands(self) -> list[str]:
        return [call[0] for call in self.calls]


HOLDER = """
import fcntl, os, sys, time
os.makedirs(os.path.join(sys.argv[1], "pbem"), exist_ok=True)
fd = os.open(os.path.join(sys.argv[1], "pbem", "lock"), os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
"""


def hold_lock(git_dir: Path, release: Path) -> subprocess.Popen[str]:
    """Another process (a watch in the middle of its round) holding the clone's lock until `release` exists."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(git_dir), str(release)], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


# --- one pbem at a time in a clone ----------------------------------------------------------------------------

def test_a_command_waits_for_the_watch_round_in_its_clone_then_runs(race: Race, tmp_path: Path) -> None:
    _fed, kli, _escrow, _server = race
    release = tmp_path / "round-done"
    holder = hold_lock(kli.repo_dir / ".git", release)
    try:
        command = subprocess.Popen([str(PBEM), "yield"], cwd=kli.repo_dir, env=kli.env("kli"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with pytest.raises(subprocess.TimeoutExpired):
            command.wait(timeout=3)  # still waiting for the lock: nothing committed meanwhile
        before = kli.head()
        release.touch()
        out, err = command.communicate(timeout=120)
    finally:
        release.touch()
        holder.wait(timeout=30)
    assert command.returncode == 0, out + err
    assert kli.head() != before and "kli" in kli.data("dice/fed-0002.yaml")["contributions"]


def test_a_clone_that_stays_busy_is_one_line_and_exit_2(race: Race, tmp_path: Path) -> None:
    _fed, kli, _escrow, _server = race
    release = tmp_path / "never"
    holder = hold_lock(kli.repo_dir / ".git", release)
    try:
        with pytest.raises(PbemError) as busy:
            clonelock.acquire(kli.repo_dir / ".git", wait=0.2)
        assert busy.value.finding.rule == "clone.busy" and busy.value.exit_code == 2
        said = Lines()
        done = watch.locked_round(kli.repo_dir, identity(kli, "kli"), watch.Notifier(said, desktop=False),
                                  wait=0.2)
        assert done.refused and said.said[-1].startswith("round skipped: ") and "clone.busy" in said.said[-1]
    finally:
        release.touch()
        holder.wait(timeout=30)
    clonelock.acquire(kli.repo_dir / ".git", wait=1)  # free again: taken at once, re-entrant, given back
    clonelock.acquire(kli.repo_dir / ".git", wait=1)
    clonelock.release_all()


# --- a push that lost the race ----------------------------------------------------------------------------------

def test_a_push_that_lost_the_race_pauses_and_tries_again(race: Race) -> None:
    """The escrow's signature lands on the hub after kli fetched and before his push reaches it: git refuses
    kli's push (not a fast-forward); `push` pauses, fetches, replays his contribution onto the escrow's commit
    and lands it."""
    _fed, kli, escrow, server = race
    turn.yield_turn(Workspace.open(kli.repo_dir), identity(kli, "kli"))
    git = Recorded({"push": lambda: escrow_signs_and_pushes(escrow)})
    pauses: list[float] = []
    done = push(Workspace.open(kli.repo_dir), identity(kli, "kli"), git=git, pause=pauses.append)
    assert done.code == 0 and done.rebased == 1, done.message
    assert git.commands().count("push") == 2 and len(pauses) == 1 and 0 <= pauses[0] <= 1
    assert server_main(server) == kli.head()
    assert kli.data("dice/fed-0001.yaml")["results"] and "kli" in kli.data("dice/fed-0002.yaml")["contributions"]


def test_a_push_that_keeps_losing_gives_up_after_max_tries_with_nothing_changed(race: Race) -> None:
    """Every push of kli's loses the race (git: "failed to update ref", and the hub's tip has moved by the time
    he looks): he tries MAX_TRIES times, each after a random pause no longer than MAX_PAUSE, then says so once;
    his branch is as it was."""
    from pbem.services.push import MAX_PAUSE

    _fed, kli, _escrow, server = race
    turn.yield_turn(Workspace.open(kli.repo_dir), identity(kli, "kli"))
    mine, landed = kli.head(), server_main(server)

    class Losing(Recorded):
        lost = False

        def __call__(self, args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
            self.calls.append(list(args))
            if args[0] == "push":
                self.lost = True
                return subprocess.CompletedProcess(list(args), 1, "", "! [remote rejected] main (failed to update "
                                                   "ref)")
            if args[0] == "ls-remote" and self.lost:  # looked at right after losing: someone else's tip
                self.lost = False
                return subprocess.CompletedProcess(list(args), 0, "1" * 40 + "\trefs/heads/main\n", "")
            return run_git(args, cwd)

    git = Losing()
    pauses: list[float] = []
    done = push(Workspace.open(kli.repo_dir), identity(kli, "kli"), git=git, pause=pauses.append)
    assert done.code == 1 and done.message.startswith("not pushed: origin/main kept moving while pbem replayed")
    assert git.commands().count("push") == MAX_TRIES and len(pauses) == MAX_TRIES - 1
    assert all(0 <= p <= MAX_PAUSE for p in pauses)
    assert kli.head() == mine and server_main(server) == landed


# --- rounds that find nothing new are cheap -------------------------------------------------------------------

def test_nothing_new_is_one_ls_remote_no_fetch(race: Race) -> None:
    _fed, kli, _escrow, _server = race
    me, said = identity(kli, "kli"), Lines()
    seen = watch.Seen()
    first = Recorded()
    assert watch.one_round(Workspace.open(kli.repo_dir), me, watch.Notifier(said, desktop=False), git=first,
                           seen=seen).settled  # kli's contribution, pushed
    quiet = Recorded()
    for _round in range(3):
        done = watch.one_round(Workspace.open(kli.repo_dir), me, watch.Notifier(said, desktop=False), git=quiet,
                               seen=seen)
        assert not done.refused and not done.settled and not done.lines
    assert quiet.commands() == ["ls-remote"] * 3


def test_a_fetch_of_a_tip_already_here_runs_no_git_fetch(race: Race) -> None:
    """pull after push: the hub's tip is this clone's HEAD, nothing to download."""
    from pbem.services.pull import pull

    _fed, kli, _escrow, _server = race
    turn.yield_turn(Workspace.open(kli.repo_dir), identity(kli, "kli"))
    assert push(Workspace.open(kli.repo_dir), identity(kli, "kli")).code == 0
    git = Recorded()
    assert pull(Workspace.open(kli.repo_dir), git=git).message.startswith("up to date")
    assert git.commands() == ["ls-remote"]


def test_a_round_after_the_remote_moved_pulls_it(race: Race) -> None:
    """The memory of the last round never hides news: once the hub moved, the next round fetches and pulls."""
    _fed, kli, escrow, _server = race
    me, said = identity(kli, "kli"), Lines()
    seen = watch.Seen()
    watch.one_round(Workspace.open(kli.repo_dir), me, watch.Notifier(said, desktop=False), seen=seen)
    escrow.git("pull", "-q", "--ff-only")
    escrow_signs_and_pushes(escrow)
    git = Recorded()
    done = watch.one_round(Workspace.open(kli.repo_dir), me, watch.Notifier(said, desktop=False), git=git,
                           seen=seen)
    assert "fetch" in git.commands() and any(line.startswith("pulled") for line in done.lines), done.lines
    assert kli.head() == escrow.head()
