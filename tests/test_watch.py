"""`pbem watch` (DESIGN §8; docs/watch.md): each player's autopilot, on his own clone with his own key, against
a bare hub that runs the pre-receive hook. It settles what needs no decision (a dice contribution, a reveal that
is due, the escrow's signature), pushes it, tells each decision once and never takes one; it survives an
unreachable or refusing remote and stops on Ctrl-C.

The table is tests/test_push.py's race: after fed's first turn the escrow owes its signature of fed-0001 and kli
his contribution to fed-0002; once both landed, fed owes the reveal of fed-0002.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import Table
from pbem.errors import PbemError
from pbem.services import watch
from pbem.services.workspace import Workspace
from test_push import Race, base_race, identity, race, server_main, signer_of  # noqa: F401 (fixtures)


def run_watch(table: Table, who: str, *args: str, extra: dict[str, str] | None = None,
              path: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real `pbem watch` in a subprocess, as cron would run it."""
    env = table.env(who, extra)
    if path is not None:
        env["PATH"] = path
    return table.pbem("watch", *args, env=env)


def lines(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


class Lines:
    """A notifier's terminal, remembered."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def __call__(self, line: str) -> None:
        self.said.append(line)


# --- settling and pushing ----------------------------------------------------------------------------------------

def test_watch_once_settles_the_contribution_the_escrow_signature_and_the_reveal_and_pushes_each(race: Race) -> None:
    fed, kli, escrow, server = race
    turned = server_main(server)  # fed's turn: the one human action of this shot
    done = run_watch(kli, "kli", "--once")
    assert done.returncode == 0, lines(done)
    assert "settled:" in done.stdout and "kli" in kli.data("dice/fed-0002.yaml")["contributions"]
    assert server_main(server) == kli.head() and signer_of(kli, kli.head()) == "kli"
    done = run_watch(escrow, "escrow", "--once")
    assert done.returncode == 0, lines(done)
    assert escrow.data("dice/fed-0001.yaml")["results"]
    assert server_main(server) == escrow.head() and signer_of(escrow, escrow.head()) == "escrow"
    assert "rebased" in done.stdout or "pushed" in done.stdout
    done = run_watch(fed, "fed", "--once")
    assert done.returncode == 0, lines(done)
    assert "revealed" in done.stdout or "reveal" in fed.git("log", "-1", "--format=%B").stdout.decode()
    assert server_main(server) == fed.head() and signer_of(fed, fed.head()) == "fed"
    assert "reveal" in fed.data("dice/fed-0002.yaml") or fed.data("dice/fed-0002.yaml").get("results")
    assert fed.pbem("verify", who="fed").returncode == 0
    again = run_watch(fed, "fed", "--once")
    assert again.returncode == 0 and "settled" not in again.stdout
    # measured for docs/tactical.md: after the one human turn, three commits made by the watches, none by hand
    assert fed.git("rev-list", "--count", f"{turned}..HEAD").stdout.decode().strip() == "3"


def test_a_decision_is_told_once_and_not_taken(race: Race) -> None:
    """Once the dice are settled, control is someone's: his watch tells him (terminal line), once, and commits
    nothing for him."""
    fed, kli, escrow, server = race
    said: dict[str, str] = {"fed": "", "kli": ""}
    for table, who in ((kli, "kli"), (escrow, "escrow"), (fed, "fed"), (kli, "kli")):
        done = run_watch(table, who, "--once")
        assert done.returncode == 0, lines(done)
        said[who] = said.get(who, "") + done.stdout
    status = kli.data("status.yaml")
    holder = {"fed": fed, "kli": kli}[status["control"]]
    assert said[status["control"]].count("your decision: you hold control") == 1
    before = server_main(server)
    holder.git("pull", "-q", "--ff-only")
    again = run_watch(holder, status["control"], "--once")
    assert again.returncode == 0, lines(again)
    assert "your decision" not in again.stdout
    assert server_main(server) == before and holder.head() == before
    assert (holder.repo_dir / ".git" / watch.STATE_FILE).is_file()


def test_uncommitted_edits_are_neither_committed_nor_lost(race: Race) -> None:
    _fed, kli, _escrow, server = race
    draft = "# my plan, not decided yet\nthrough: 1.8.damage\n"
    kli.write("players/kli.yaml", draft)
    done = run_watch(kli, "kli", "--once")
    assert done.returncode == 0, lines(done)
    assert "settled:" in done.stdout
    assert kli.read("players/kli.yaml") == draft
    committed = kli.git("show", "HEAD:players/kli.yaml", check=False).stdout.decode()
    assert "my plan" not in committed and server_main(server) == kli.head()


# --- surviving -----------------------------------------------------------------------------------------------------

def test_an_unreachable_remote_is_said_and_once_exits_1(race: Race) -> None:
    _fed, kli, _escrow, _server = race
    kli.git("remote", "set-url", "origin", kli.root / "nowhere.git")
    done = run_watch(kli, "kli", "--once")
    assert done.returncode == 1
    assert "not pulled" in done.stdout and "Traceback" not in lines(done)
    assert "settled:" in done.stdout  # settled locally, pushed when the remote is back


def test_the_loop_survives_a_refused_push_and_retries_with_a_bounded_backoff(race: Race) -> None:
    """The hub refuses every push (its hook says no): the watch says so, waits longer each time (never more
    than MAX_BACKOFF) and pushes once the hub accepts again."""
    _fed, kli, _escrow, server = race
    hook = server / "hooks" / "pre-receive"
    real = hook.read_bytes()
    hook.write_text("#!/bin/sh\necho 'closed for maintenance' >&2\nexit 1\n")
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 3:
            hook.write_bytes(real)

    said = Lines()
    me = identity(kli, "kli")
    code = watch.watch(kli.repo_dir, me, watch.Notifier(said, desktop=False), interval=300, sleep=sleep, rounds=5)
    assert code == 0
    assert any("not pushed" in line for line in said.said)
    assert waits[:3] == [600, 600, 600] and all(w <= watch.MAX_BACKOFF for w in waits)
    assert waits[3] == 300  # a good round: back to the interval
    assert server_main(server) == kli.head()


def test_backoff_doubles_from_a_short_interval(race: Race) -> None:
    _fed, kli, _escrow, _server = race
    kli.git("remote", "set-url", "origin", kli.root / "nowhere.git")
    waits: list[float] = []
    said = Lines()
    watch.watch(kli.repo_dir, identity(kli, "kli"), watch.Notifier(said, desktop=False), interval=10,
                sleep=waits.append, rounds=4)
    assert waits == [20, 40, 80]


def test_ctrl_c_stops_cleanly(race: Race) -> None:
    _fed, kli, _escrow, _server = race

    def interrupted(_seconds: float) -> None:
        raise KeyboardInterrupt

    said = Lines()
    code = watch.watch(kli.repo_dir, identity(kli, "kli"), watch.Notifier(said, desktop=False), sleep=interrupted)
    assert code == 0 and said.said[-1] == "pbem watch stopped"


def test_ctrl_c_on_the_real_command_exits_0_with_one_line(race: Race) -> None:
    _fed, kli, _escrow, _server = race
    from conftest import PBEM

    process = subprocess.Popen([str(PBEM), "watch", "--interval", "3600"], cwd=kli.repo_dir, env=kli.env("kli"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "kli" not in kli.data("dice/fed-0002.yaml").get("contributions", {}):
        time.sleep(0.2)
    process.send_signal(2)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert out.splitlines()[-1] == "pbem watch stopped" and "Traceback" not in err


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_watch_started_with_sigint_ignored_still_stops_on_sigint_and_sigterm(race: Race, stop: int) -> None:
    """A shell's background job (`pbem watch &`, nohup, some service managers) starts with SIGINT ignored, and
    Python then installs no handler of its own: the watch installs its own, for SIGINT and SIGTERM alike."""
    _fed, kli, _escrow, _server = race
    from conftest import PBEM

    def ignore_sigint() -> None:  # what the background shell did before starting the watch
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    process = subprocess.Popen([str(PBEM), "watch", "--interval", "3600"], cwd=kli.repo_dir, env=kli.env("kli"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ignore_sigint)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "kli" not in kli.data("dice/fed-0002.yaml").get("contributions", {}):
            time.sleep(0.2)
        time.sleep(0.5)  # the round ends; the watch sleeps for an hour
        process.send_signal(stop)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert out.splitlines()[-1] == "pbem watch stopped" and "Traceback" not in err


def test_a_stop_asked_during_a_round_lets_the_round_finish(race: Race) -> None:
    """SIGTERM in the middle of a round: the round's commit and push complete, then the watch stops."""
    _fed, kli, _escrow, server = race
    said = Lines()
    real = watch.locked_round

    def round_then_signal(*args, **kwargs):  # type: ignore[no-untyped-def]
        os.kill(os.getpid(), signal.SIGTERM)  # delivered now: the round has not started its work yet
        return real(*args, **kwargs)

    watch.locked_round = round_then_signal  # type: ignore[assignment]
    try:
        code = watch.watch(kli.repo_dir, identity(kli, "kli"), watch.Notifier(said, desktop=False), interval=3600)
    finally:
        watch.locked_round = real  # type: ignore[assignment]
    assert code == 0 and said.said[-1] == "pbem watch stopped"
    assert server_main(server) == kli.head() and "kli" in kli.data("dice/fed-0002.yaml")["contributions"]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the previous handler is back


def test_the_settings_file_is_read_without_tomllib(tmp_path: Path) -> None:
    """Python 3.10 has no tomllib: the watch reads its settings with tomli there (pyproject.toml declares it for
    < 3.11). Run with tomllib absent and tomli standing for it."""
    config = tmp_path / "watch.toml"
    config.write_text('[smtp]\nhost = "mail.example.org"\nto = "me@example.org"\nport = 587\n')
    code = ("import sys, tomllib; sys.modules['tomli'] = tomllib; sys.modules['tomllib'] = None\n"
            "from pbem.services import watch\n"
            f"c = watch.smtp_config({{}}, __import__('pathlib').Path({str(config)!r}))\n"
            "assert 'tomllib' not in sys.modules or sys.modules['tomllib'] is None\n"
            "print(c.host, c.port)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mail.example.org", "587"]
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert "\"tomli>=1.1; python_version < '3.11'\"" in pyproject


# --- telling -------------------------------------------------------------------------------------------------------

def test_no_notify_send_is_no_error_and_a_present_one_is_called(race: Race, tmp_path: Path) -> None:
    fed, kli, escrow, _server = race
    for table, who in ((kli, "kli"), (escrow, "escrow"), (fed, "fed"), (kli, "kli")):
        assert run_watch(table, who, "--once", path=str(tmp_path / "empty") + ":/usr/bin:/bin").returncode == 0
    holder = fed if fed.data("status.yaml")["control"] == "fed" else kli
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "notified"
    script = bin_dir / "notify-send"
    script.write_text(f"#!/bin/sh\necho \"$@\" > {record}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    (holder.repo_dir / ".git" / watch.STATE_FILE).unlink()
    done = run_watch(holder, holder.root.name, "--once", path=f"{bin_dir}:{os.environ['PATH']}")
    assert done.returncode == 0, lines(done)
    assert "you hold control" in record.read_text()


@pytest.fixture
def smtp_server():
    """A local SMTP server (aiosmtpd) on a free port of 127.0.0.1; stopped afterwards."""
    aiosmtpd = pytest.importorskip("aiosmtpd.controller")
    from aiosmtpd.handlers import Message

    received: list = []

    class Keep(Message):
        def handle_message(self, message) -> None:  # type: ignore[no-untyped-def]
            received.append(message)

    with socket.socket() as probe:  # a free port (aiosmtpd cannot be told port 0)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = aiosmtpd.Controller(Keep(), hostname="127.0.0.1", port=port, ready_timeout=10)
    controller.start()
    try:
        yield port, received
    finally:
        controller.stop()


def test_a_decision_is_mailed_through_smtp(race: Race, smtp_server) -> None:  # type: ignore[no-untyped-def]
    port, received = smtp_server
    fed, kli, escrow, _server = race
    for table, who in ((kli, "kli"), (escrow, "escrow"), (fed, "fed"), (kli, "kli")):
        assert run_watch(table, who, "--once").returncode == 0
    holder = fed if fed.data("status.yaml")["control"] == "fed" else kli
    extra = {"PBEM_SMTP_HOST": "127.0.0.1", "PBEM_SMTP_PORT": str(port), "PBEM_SMTP_TO": "player@pbem.test"}
    (holder.repo_dir / ".git" / watch.STATE_FILE).unlink(missing_ok=True)
    done = run_watch(holder, holder.root.name, "--once", extra=extra)
    assert done.returncode == 0, lines(done)
    assert len(received) == 1
    assert received[0]["To"] == "player@pbem.test" and "your decision" in received[0]["Subject"]
    assert "you hold control" in received[0].get_payload()


def test_smtp_settings_come_from_a_file_and_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "watch.toml"
    path.write_text('[smtp]\nhost = "mail.example.org"\nport = 587\nstarttls = true\nuser = "me"\nto = "a@b"\n')
    config = watch.smtp_config({"PBEM_SMTP_PASSWORD": "secret", "PBEM_SMTP_TO": "c@d"}, path)
    assert config == watch.SmtpConfig("mail.example.org", "c@d", 587, "me", "secret", None, True)
    assert watch.smtp_config({}, tmp_path / "absent.toml") is None


@pytest.mark.parametrize("port", ["inf", "-inf", "nan", '"smtp"', "[587]", "{n = 1}", "1979-05-27"])
def test_an_smtp_port_that_is_no_number_is_one_clear_error(tmp_path: Path, port: str) -> None:
    """Whatever TOML value stands for the port (an infinity once escaped as OverflowError), one message."""
    path = tmp_path / "watch.toml"
    path.write_text(f'[smtp]\nhost = "mail.example.org"\nto = "a@b"\nport = {port}\n')
    with pytest.raises(PbemError) as caught:
        watch.smtp_config({}, path)
    assert caught.value.finding.rule == "watch.config" and "is not a number" in caught.value.finding.message


def test_an_unreachable_mail_server_is_one_line_not_a_failure() -> None:
    said = Lines()
    notifier = watch.Notifier(said, watch.SmtpConfig("127.0.0.1", "x@y", port=1), desktop=False)
    notifier.decision("g", "you hold control")
    assert said.said[0] == "your decision: you hold control" and said.said[1].startswith("e-mail not sent")


def test_decisions_are_pure_and_never_include_what_is_settled() -> None:
    """Dice and reveals are settled, never told; a sealed input and control are decisions; the escrow and a
    stranger have none."""
    from pbem.protocol.model import Break, Status

    status = Status("fra", "S1901M", (Break("eng", "S1901M", "dice", "contribution owed for dice eng-0001"),
                                      Break("ger", "S1901M", "secret", "reveal owed"),
                                      Break("fra", "S1901M", "sealed", "orders owed for S1901M")), False)
    assert watch.settleable(status, "eng") and watch.settleable(status, "ger")
    assert not watch.settleable(status, "fra") and not watch.settleable(None, "eng")
    assert watch.decisions(status, "eng") == [] and watch.decisions(status, "ger") == []
    told = [d.text for d in watch.decisions(status, "fra", [], "pbem orders orders.yaml")]
    assert told == ["orders owed for S1901M: seal it: `pbem orders orders.yaml`"]  # first in line, yet no turn
    turn = Status("fra", "S1901M", (Break("fra", "S1901M", "horizon", "needs orders"),), False)
    assert [d.text for d in watch.decisions(turn, "fra")] == ["you hold control (needs orders): `pbem status`, "
                                                              "then `pbem yield`"]
    assert watch.decisions(status, None) == [] and watch.decisions(status, "escrow") == []
    assert watch.decisions(Status(None, None, (), True), "fra") == []
    asked = watch.decisions(Status("eng", "S1901M", (), False), "fra", ["e0001 by eng: typo — to sign: fra"])
    assert [d.key for d in asked] == ["sign:e0001 by eng: typo — to sign: fra"]


# --- Diplomacy: orders are told, reveals are settled once every power has sealed ------------------------------------

from test_dow_flow import POWERS, Dow, base_first_half, base_second_half, second_half  # noqa: E402,F401


def _hub(dow: Dow, root: Path) -> Path:
    """A bare hub for the Diplomacy table's clone (the hook is not needed to see what watch commits)."""
    from gitutil import clean_env

    hub = root / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True)
    env = clean_env(dow.root / "home")
    for args in (["remote", "add", "origin", str(hub)], ["push", "-q", "-u", "origin", "main"]):
        subprocess.run(["git", *args], cwd=dow.repo_dir, env=env, check=True, capture_output=True)
    return hub


def test_diplomacy_orders_are_told_and_reveals_settled_once_every_power_sealed(second_half: Dow,
                                                                                tmp_path: Path) -> None:
    hub = _hub(second_half, tmp_path)
    said = Lines()
    notifier = watch.Notifier(said, desktop=False)
    first = watch.one_round(second_half.ws(), second_half.me("france"), notifier)
    assert not first.refused and first.settled == []
    assert first.told == ["sealed input owed for S1901M (any order, without control): seal it: `pbem orders "
                          "orders.yaml`"]  # this game's way alone, and no "you hold control" to the first in line
    before = second_half.head()
    for power in POWERS:
        second_half.seal(power)  # the one human action per power
    for power in POWERS:
        done = watch.one_round(second_half.ws(), second_half.me(power), notifier)
        assert not done.refused, said.said
        assert done.settled and "revealed" in " ".join(done.settled), done.settled
    assert second_half.status()["firm"] != "S1901M"
    # measured for docs/dow.md: 14 commits in the phase, 7 of them (the reveals) made by the watches
    count = subprocess.run(["git", "rev-list", "--count", f"{before}..HEAD"], cwd=second_half.repo_dir,
                           capture_output=True, text=True).stdout.strip()
    assert count == str(2 * len(POWERS))
    assert subprocess.run(["git", "rev-parse", "main"], cwd=hub, capture_output=True,
                          text=True).stdout.strip() == second_half.head()


# --- before the start: the roll for who starts -------------------------------------------------------------------

def test_the_roll_for_who_starts_is_settled_by_the_watches_alone(tmp_path: Path) -> None:
    """A table of three decides who starts by dice: after the roller announces, every seat's watch settles its
    part (commitments, contributions, the roller's reveal) and pushes; the hub verifies."""
    from pbem.services import setup
    from test_sync import hub_verifies, tactical

    seats, hub = tactical(tmp_path, "tactical-melee", ("fed", "kli", "rom"))
    fed = seats["fed"]
    for who in ("kli", "rom", "fed"):  # every seat consents to start by dice; fed signs last and announces it
        setup.begin(fed.ws(), seats[who].me, None, True)
    assert fed.push().code == 0
    said = Lines()
    for _round in range(5):
        settled = [watch.one_round(seat.ws(), seat.me, watch.Notifier(said, desktop=False)) for seat in
                   seats.values()]
        assert not any(r.refused for r in settled), said.said
        if not any(r.settled for r in settled):
            break
    fed.pull()
    first = setup.begin(fed.ws(), fed.me, None, True)[-1].first
    assert first in ("fed", "kli", "rom")
    assert fed.push().code == 0
    hub_verifies(hub, tmp_path)


@pytest.mark.parametrize("at_once", [True, False])
def test_seven_powers_on_seven_clones_seal_and_their_watches_do_the_rest(second_half: Dow, tmp_path: Path,
                                                                          at_once: bool) -> None:
    """Seven machines, a hooked hub: every power seals its orders (its one action in the phase; on the same
    commit, or each after his watch pulled) and runs its watch; the watches publish the seals (replayed onto
    each other), then reveal once all have sealed. The phase resolves and the hub verifies."""
    from test_sync import clone, hub_head, hub_verifies

    hub = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True)
    from conftest import PBEM
    from gitutil import clean_env

    home = second_half.root / "home"
    assert subprocess.run([str(PBEM), "hook", "install", str(hub)], env=clean_env(home),
                          capture_output=True).returncode == 0
    for args in (["remote", "add", "origin", str(hub)], ["push", "-q", "-u", "origin", "main"]):
        subprocess.run(["git", *args], cwd=second_half.repo_dir, env=clean_env(home), check=True, capture_output=True)
    seats = {power: clone(hub, tmp_path / power, second_half.me(power)) for power in POWERS}
    from pbem.services.dow import orders as dow_orders

    said = Lines()
    for power, seat in seats.items():
        if not at_once:
            watch.one_round(seat.ws(), seat.me, watch.Notifier(said, desktop=False), git=seat.run_git)
        dow_orders.seal_orders(seat.ws(), seat.me, b'{"orders": []}', f"{power}'s orders")
        if not at_once:
            assert not watch.one_round(seat.ws(), seat.me, watch.Notifier(said, desktop=False),
                                       git=seat.run_git).refused, said.said
    for _round in range(4):
        rounds = [watch.one_round(seat.ws(), seat.me, watch.Notifier(said, desktop=False), git=seat.run_git)
                  for seat in seats.values()]
        assert not any(r.refused for r in rounds), said.said
        if not any(r.settled for r in rounds) and all(s.ws().repo.head_oid() == hub_head(hub) for s in
                                                         seats.values()):
            break
    assert any("revealed" in line for line in said.said)
    fresh = clone(hub, tmp_path / "reader", second_half.me("austria"))
    status = fresh.git("show", "HEAD:status.yaml").stdout
    assert "firm: S1901M" not in status, status
    hub_verifies(hub, tmp_path)
