"""`pbem status` as the screen a player reads first (issue 6 point 6; DESIGN §8): who holds control and why, the
firm point, the other pending breaks, what *you* must do next with the exact command, your horizon and breaks,
the last note — with rich on a terminal or `--rich`, plain lines otherwise. And shell completion through typer.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import PBEM, Table
from pbem.protocol.model import Break, Status
from pbem.render.status_screen import StatusView, Todo, todos

YIELD = "pbem check && pbem yield -m NOTE"


def view(status: Status | None, me: str | None = "kli", **more: Any) -> StatusView:
    return StatusView("Duel", "duel-1", "tactical/1", status, me, players=("fed", "kli"),
                      report_file="report/turn-01.yaml", **more)


def status(control: str, *pending: Break, firm: str = "1.9.move", over: bool = False) -> Status:
    return Status(control, firm, tuple(pending), over, yielded_by="fed", note="closing")


HORIZON_KLI = Break("kli", "1.9.move", "horizon", "needs orders from 1.9.move")
RANGE_KLI = Break("kli", "1.14.move", "condition", "range 8: CA at range 8 from D7 (1.14.move)")
RANGE_FED = Break("fed", "1.14.move", "condition", "range 8: D7 at range 8 from CA (1.14.move)")
DICE_KLI = Break("kli", "2.1.move", "dice", "contribution owed to dice b0002 of fed")


# --- what to do next, and the command ----------------------------------------------------------------------------

@pytest.mark.parametrize("given, expected", [
    (status("kli", HORIZON_KLI),
     [Todo("your orders ran out — needs orders from 1.9.move: edit players/kli.yaml (through, breaks) and your "
           "entries in report/turn-01.yaml from 1.9.move on", YIELD)]),
    (status("kli", RANGE_KLI, RANGE_FED, firm="1.14.activity"),
     [Todo("your break condition was met — range 8: CA at range 8 from D7 (1.14.move): edit players/kli.yaml "
           "(through, breaks) and your entries in report/turn-01.yaml from 1.14.activity on", YIELD)]),
    (status("fed", RANGE_FED, RANGE_KLI, firm="1.14.activity"),  # served after fed (seed 000 §3.B)
     [Todo("nothing yet: after fed you get control (range 8: CA at range 8 from D7 (1.14.move))",
           "pbem pull && pbem status")]),
    (status("kli", DICE_KLI, Break("fed", "2.1.move", "horizon", "needs orders from 2.1.move"), firm="2.1.move"),
     [Todo("contribution owed to dice b0002 of fed: pbem yield settles it (no need to hold control)",
           "pbem yield")]),
    (status("fed", Break("fed", "1.9.move", "horizon", "needs orders from 1.9.move")),
     [Todo("nothing: fed holds control (needs orders from 1.9.move)", "pbem pull && pbem status")]),
    (status("kli", Break("kli", "2.0.alloc", "secret", "reveal owed for secret s0002 (note)"), firm="2.0.alloc"),
     [Todo("reveal owed for secret s0002 (note): reveal it (no need to hold control)", "pbem yield")]),
    (status("kli", Break("kli", "1.7.move", "clarify", "plan of D7 is ambiguous at 1.7.move",
                         ({"move": "SL"}, {"move": "SR"}), "D7")),
     [Todo("answer the special break at 1.7.move: add an entry for D7 with one of: move: SL, move: SR", YIELD)]),
    (Status(None, None, (), True), [Todo("nothing: the game is over — read it whole",
                                          "pbem log --html --out game.html")]),
])
def test_what_i_do_next_and_the_exact_command(given: Status, expected: list[Todo]) -> None:
    assert todos(view(given)) == expected


def test_sealed_input_uses_the_rulesets_commands() -> None:
    """DESIGN §4.7: a sealed step is served without control; Diplomacy orders are sealed and revealed with
    `pbem orders`."""
    sealed = Break("kli", "S1901M", "sealed", "sealed input owed for S1901M (any order, without control)")
    reveal = Break("kli", "S1901M", "secret", "reveal owed for s0009: everyone has sealed for S1901M")
    dow = dict(sealed_command="pbem orders ORDERS.yaml", reveal_command="pbem orders --reveal")
    assert todos(view(status("fed", sealed, firm="S1901M"), **dow)) == [
        Todo("sealed input owed for S1901M (any order, without control): seal it (no need to hold control)",
             "pbem orders ORDERS.yaml")]
    assert todos(view(status("fed", reveal, firm="S1901M"), **dow)) == [
        Todo("reveal owed for s0009: everyone has sealed for S1901M: reveal it (no need to hold control)",
             "pbem orders --reveal")]
    assert todos(view(status("fed", sealed, firm="S1901M")))[0].command == "pbem seal note FILE && pbem yield"


def test_status_names_everything_i_owe_each_with_a_command_to_paste() -> None:
    """Every obligation of mine, not only the first: a contribution AND a roll owed at once, and a clone behind
    its remote first; the roll's command carries the real refs (no `--ref REF`), the sealed one the real kind."""
    contribution = Break("kli", "1.4.fire", "dice", "contribution owed to dice b0002 of fed")
    roll = Break("kli", "1.4.fire", "roll", "dice owed for 1.4.fire/D7/ph1, 1.4.fire/D7/ph2 (pbem roll --for … "
                 "--ref …)")
    got = todos(view(status("kli", contribution, roll, firm="1.4.fire"), behind="origin has 2 new commits: pbem pull"))
    assert [t.command for t in got] == [
        "pbem pull", "pbem yield",
        'pbem roll --for "1.4.fire/D7/ph1" --ref 1.4.fire/D7/ph1 --for "1.4.fire/D7/ph2" --ref 1.4.fire/D7/ph2 '
        "&& pbem yield"]
    assert "origin has 2 new commits" in got[0].text
    sealed = Break("kli", "2.0.alloc", "sealed", "sealed input owed for 2.0.alloc (any order, without control)")
    tactical = dict(sealed_command="pbem seal allocation allocation.yaml && pbem yield",
                    sealed_what="your energy allocation")
    (only,) = todos(view(status("fed", sealed, firm="2.0.alloc"), **tactical))
    assert only.command == "pbem seal allocation allocation.yaml && pbem yield"
    assert "your energy allocation" in only.text
    for todo in [*got, only]:
        assert "REF" not in todo.command and "KIND" not in todo.command


def test_no_seat_escrow_and_setting_up() -> None:
    assert todos(view(status("fed", RANGE_FED), me=None)) == [
        Todo("your key holds no seat in this game: name the right one", "pbem status --key PATH")]
    escrow = Break("escrow", "2.1.move", "dice", "escrow signature owed for dice b0002")
    assert todos(view(status("escrow", escrow), me="escrow")) == [
        Todo("sign the open escrow dice batches", "pbem escrow sign")]
    assert todos(view(None, me=None, open_seats=("kli",))) == [Todo("claim a seat (kli open)", "pbem join --as kli")]
    assert todos(view(None, me="fed", open_seats=())) == [
        Todo("start the game: all seats are taken", "pbem start --first fed")]


# --- the screen, through the real CLI -------------------------------------------------------------------------

def rich_status(table: Table, who: str, *args: str) -> str:
    """`pbem status --rich` in-process, on a wide console (so phrases are not wrapped)."""
    from pbem.cli import app

    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("GIT_", "SSH_", "PBEM_"))}
    env.update(table.env(who, {"COLUMNS": "160"}))
    old = Path.cwd()
    os.chdir(table.repo_dir)
    try:
        done = CliRunner().invoke(app, ["status", "--rich", *args], env=env, catch_exceptions=False)
    finally:
        os.chdir(old)
    assert done.exit_code == 0, done.output
    return done.output


def test_the_screen_for_the_player_in_control(played: Table) -> None:
    """fed's orders ran out at 1.9.move: the screen says so, where to write, and the command."""
    out = rich_status(played, "fed")
    assert re.search(r"CONTROL\s+fed \(you\) — needs orders from 1\.9\.move", out)
    assert re.search(r"FIRM\s+1\.9\.move", out)
    assert "What you (fed) do next" in out
    assert ("your orders ran out — needs orders from 1.9.move: edit players/fed.yaml (through, breaks) and your "
            "entries in report/turn-01.yaml from 1.9.move on") in out
    assert "$ pbem check && pbem yield -m NOTE" in out
    assert "your orders reach 1.8.damage; your breaks: {range: 8}" in out
    assert "last note, from kli: “speed 12”" in out
    assert re.search(r"CA\s+fed\s+\d{4}\s+[A-F]", out) and re.search(r"D7\s+kli\s+\d{4}\s+[A-F]", out)
    assert len(out.splitlines()) <= 30  # one screen


def test_the_screen_for_the_player_waiting(played: Table) -> None:
    out = rich_status(played, "kli")
    assert re.search(r"CONTROL\s+fed — needs orders from 1\.9\.move", out)
    assert "What you (kli) do next" in out
    assert "nothing: fed holds control (needs orders from 1.9.move)" in out
    assert "$ pbem pull && pbem status" in out
    assert "your orders reach 1.12.damage" in out


def test_the_screen_lists_the_other_pending_breaks(played: Table) -> None:
    """Both ships come to range 8 at once: fed is served first, kli's break waits (seed 000 §3.B)."""
    played.turn("fed", through="1.16.damage", note="on")
    played.turn("kli", through="1.16.damage", note="on")
    data = played.data("status.yaml")
    assert [b["player"] for b in data["pending"]] == ["fed", "kli"], data
    out = rich_status(played, "kli")
    assert "Pending breaks, in the order they are served" in out
    assert re.search(r"2\s+kli \(you\)\s+1\.14\.move\s+condition\s+range 8", out)
    assert "nothing yet: after fed you get control (range 8" in out


def test_plain_output_stays_for_scripts(played: Table) -> None:
    """Not a terminal and no --rich: the plain lines other tools parse; --plain forces them."""
    for args in (("status",), ("status", "--plain")):
        done = played.cli(*args, who="fed")
        assert done.exit_code == 0
        assert done.output.splitlines()[0] == "control: fed (you)" and "╭" not in done.output


def test_a_terminal_gets_the_screen(played: Table) -> None:
    """The real `pbem status` with its stdout on a pseudo-terminal draws the rich screen by itself."""
    leader, follower = pty.openpty()
    env = played.env("fed", {"COLUMNS": "120", "TERM": "xterm"})
    proc = subprocess.Popen([str(PBEM), "status"], cwd=played.repo_dir, env=env, stdout=follower,
                            stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""
    os.close(leader)
    text = re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode("utf-8", "replace"))
    assert "What you (fed) do next" in text and "pbem check && pbem yield -m NOTE" in text


# --- shell completion (typer) ---------------------------------------------------------------------------------

def test_show_completion_prints_a_bash_script(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("_PBEM")}
    env.update(SHELL="/bin/bash", HOME=str(tmp_path))
    # typer finds the shell among pbem's parent processes (shellingham): run it under bash, which stays its parent
    # (`; true` keeps bash from exec-ing pbem), so the test does not depend on how pytest itself was started
    done = subprocess.run(["bash", "-c", f'"{PBEM}" --show-completion; true'], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "complete -o default -F _pbem_completion pbem" in done.stdout
    assert "_PBEM_COMPLETE=complete_bash" in done.stdout
    # and the script's callback completes command names
    env.update(_PBEM_COMPLETE="complete_bash", COMP_WORDS="pbem ren", COMP_CWORD="1")
    words = subprocess.run([str(PBEM)], env=env, capture_output=True, text=True, check=False).stdout.split()
    assert words == ["render"]


def test_an_erratum_waiting_for_my_signature_comes_first() -> None:
    """DESIGN §4.8: a correction before the firm marker is an agreement of kind erratum that needs every
    signature; the screen asks for mine first (as for every agreement), then goes on with what the game asks of
    me."""
    waiting = status("fed", Break("fed", "1.9.move", "horizon", "needs orders from 1.9.move"))
    terms = "erratum by kli: -1 +1 entries from 1.0.alloc: D7 was slower"
    assert todos(view(waiting, agreements=(("kli-0001", terms),))) == [
        Todo(f"sign kli-0001: {terms} (review it; it waits for your signature)", "pbem sign kli-0001"),
        Todo("nothing: fed holds control (needs orders from 1.9.move)", "pbem pull && pbem status")]
