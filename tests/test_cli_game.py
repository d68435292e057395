"""The player commands end to end (DESIGN §8, README walkthrough): the real `pbem` in real git repositories with
real keys. A game is set up with init/join/start, turns are taken by editing files and `pbem yield`, and what
players rely on is checked: status, check, log, verify in its three formats, plain `git verify-commit`, and
control changing hands on horizon and range breaks (seed 000 §3, DESIGN §4.2).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import GAME_ID, Table
from pbem.formats import yamlsafe


def status_history(table: Table) -> list[tuple[str, str, Any]]:
    """(commit, first line of its message, its status.yaml or None) for every commit, oldest first."""
    out = []
    for line in table.git("log", "--reverse", "--format=%H %s").stdout.decode().splitlines():
        oid, _, subject = line.partition(" ")
        shown = table.git("show", f"{oid}:status.yaml", check=False)
        status = yamlsafe.load(shown.stdout, "status.yaml").data if shown.returncode == 0 else None
        out.append((oid, subject, status))
    return out


def handoffs(table: Table) -> list[tuple[str | None, str | None, str | None, str]]:
    """Each turn's handoff as (yielded_by, control, kind, why) read from status.yaml history."""
    out = []
    for _oid, _subject, status in status_history(table):
        if status is not None:
            first = status["pending"][0] if status["pending"] else {"kind": None, "why": ""}
            out.append((status["yielded_by"], status["control"], first["kind"], first["why"]))
    return out


# --- setting up: init, join, start ----------------------------------------------------------------------------

def test_init_join_start_set_up_a_game_that_fed_controls(base_started: Table, tmp_path: Path) -> None:
    """DESIGN §8: init makes the repo (game.yaml, README, workflow), each join claims a seat with the joiner's
    key, start freezes game.yaml and hands control to the first player. Each step is one signed commit."""
    table = Table(tmp_path / "fresh")
    (tmp_path / "fresh").mkdir()
    for name in ("keys", "home"):
        (table.root / name).symlink_to(base_started.root / name)  # the keys and the clean HOME, read only
    done = table.pbem("init", str(table.repo_dir), "--template", "tactical-duel", "--id", "duel-7", who="fed",
                      cwd=table.root)
    assert done.returncode == 0, done.stderr
    assert "created" in done.stdout and "duel-7" in done.stdout
    for path in ("game.yaml", "README.md", ".github/workflows/pbem.yml"):
        assert (table.repo_dir / path).is_file(), path
    assert table.data("game.yaml")["id"] == "duel-7"
    status = table.pbem("status", who="fed")
    assert status.returncode == 0 and "setting up" in status.stdout
    for seat in ("fed", "kli"):
        done = table.pbem("join", "--as", seat, who=seat)
        assert done.returncode == 0 and f"you hold seat {seat}" in done.stdout, done.stderr
    done = table.pbem("start", "--first", "fed", who="kli")
    assert done.returncode == 0 and "proposed start agreement kli-0001" in done.stdout, done.stderr
    done = table.pbem("start", "--first", "fed", who="fed")
    assert done.returncode == 0 and "fed has control" in done.stdout, done.stderr
    seats = {s["id"]: s["key"] for s in table.data("game.yaml")["players"]}
    for seat in ("fed", "kli"):  # the seat holds the joiner's public key
        assert seats[seat].split()[:2] == table.key(seat).with_suffix(".pub").read_text().split()[:2]
    assert table.data("status.yaml")["control"] == "fed"
    subjects = [s for _o, s, _st in status_history(table)]
    assert subjects == ["duel-7: new game from template tactical-duel", "join: fed takes a seat",
                        "join: kli takes a seat", "kli: proposes kli-0001: start, fed starts",
                        "fed: signs kli-0001", "start: fed has control"]
    again = table.pbem("start", "--first", "kli", who="fed")
    assert again.returncode == 1 and "[setup.started]" in again.stderr


# --- a turn: status, check, yield ---------------------------------------------------------------------------

def test_status_tells_each_player_who_holds_control_and_what_he_owes(played: Table) -> None:
    """`pbem status`: control, firm point, the pending break, and what *you* owe (DESIGN §8)."""
    mine = played.pbem("status", who="fed")
    assert mine.returncode == 0, mine.stderr
    assert "control: fed (you)" in mine.stdout
    assert "firm:    1.9.move" in mine.stdout
    assert "break:   fed at 1.9.move — needs orders from 1.9.move" in mine.stdout
    assert "you (fed) owe: your orders ran out — needs orders from 1.9.move" in mine.stdout
    assert "$ pbem check && pbem yield" in mine.stdout
    theirs = played.cli("status", who="kli")
    assert theirs.exit_code == 0 and "you (kli) owe: nothing: fed holds control" in theirs.stdout
    data = json.loads(played.cli("status", "--format", "json", who="kli").stdout)
    assert data["me"] == "kli"
    assert data["status"]["control"] == "fed" and data["status"]["firm"] == "1.9.move"
    assert data["status"]["pending"] == [{"player": "fed", "at": "1.9.move", "kind": "horizon",
                                          "why": "needs orders from 1.9.move", "options": []}]


def test_check_on_a_legal_tree_exits_0_names_who_would_get_control_and_changes_nothing(played: Table) -> None:
    """`pbem check` judges the working tree as if committed now (DESIGN §8) and commits nothing."""
    played.edit("fed", through="1.16.damage")
    before = played.snapshot()
    done = played.pbem("check", who="fed")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "if you yield now:" in done.stdout
    assert "control: kli" in done.stdout and "firm:    1.13.move" in done.stdout
    assert played.snapshot() == before


def test_yield_commits_one_signed_turn_with_the_status_replay_computes(played: Table) -> None:
    """`pbem yield -m NOTE` writes status.yaml (DESIGN §4.2) and commits the turn signed, on the branch,
    with a clean working tree; plain git verifies the signature against `pbem allowed-signers`."""
    head = played.head()
    played.edit("fed", through="1.16.damage", entries=[{"at": "1.11.move", "unit": "CA", "do": {"move": "TL"}}])
    done = played.pbem("yield", "-m", "turning to port", who="fed")
    assert done.returncode == 0, done.stderr
    assert re.match(r"committed [0-9a-f]{10}\n", done.stdout)
    new = played.head()
    assert new.startswith(done.stdout.split()[1])
    assert played.git("rev-parse", "HEAD~1").stdout.decode().strip() == head
    assert played.git("symbolic-ref", "HEAD").stdout.decode().strip() == "refs/heads/main"
    assert played.git("status", "--porcelain").stdout == b""
    status = played.data("status.yaml")
    assert status == {"control": "kli", "firm": "1.13.move",
                      "pending": [{"player": "kli", "at": "1.13.move", "kind": "horizon",
                                   "why": "needs orders from 1.13.move"}],
                      "over": False, "yielded_by": "fed", "note": "turning to port"}
    assert played.git("show", "-s", "--format=%B", "HEAD").stdout.decode().startswith("fed: turning to port\n")
    signers = played.root / "allowed_signers"
    listed = played.pbem("allowed-signers")
    assert listed.returncode == 0
    signers.write_text(listed.stdout)
    assert [line.split()[0] for line in listed.stdout.splitlines()] == ["fed", "kli"]
    verified = played.git("-c", f"gpg.ssh.allowedSignersFile={signers}", "verify-commit", "HEAD")
    assert 'Good "git" signature for fed with ED25519 key' in verified.stderr.decode()


def test_log_prints_the_report_with_the_firm_marker_and_every_handoff(played: Table) -> None:
    """`pbem log`: the classic text report, `<-- firm to here -->` at the firm point (seed 000 §3.C)."""
    done = played.pbem("log")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"Tactical duel: two cruisers close in ({GAME_ID}, tactical/1)"
    marker = lines.index("<-- firm to here -->")
    entries = [i for i, line in enumerate(lines) if re.match(r"\s+1\.0\.alloc\s+(fed|kli)", line)]
    assert len(entries) == 2 and max(entries) < marker  # both speed entries are firm
    assert any(re.search(r"kli\s+kli: speed 12 -> fed \(needs orders from 1\.9\.move\)", l) for l in lines)
    assert "Status: fed in control; firm to 1.9.move" in lines


def test_a_turn_committed_with_plain_git_commit_S_is_a_turn_like_any_other(played: Table) -> None:
    """README "Plain git works too" / DESIGN §3: a player may commit his turn with `git commit -S`
    (gpg.format=ssh, signed by ssh-keygen) instead of `pbem yield`."""
    played.edit("fed", through="1.16.damage")
    played.write_status("fed", "committed by hand")
    oid = played.git_commit("fed: straight on", signer="fed")
    done = played.pbem("verify")
    assert (done.returncode, done.stdout) == (0, "ok: 9 commits verified\n"), done.stdout + done.stderr
    status = played.cli("status", who="kli")
    assert "control: kli (you)" in status.stdout
    assert played.cli("log").stdout.count(oid[:10]) == 1


# --- verify in its three formats ------------------------------------------------------------------------------

def test_verify_a_legal_history_in_text_json_and_github_formats(played: Table) -> None:
    """`pbem verify` exits 0 on a legal history, in each output format (DESIGN §8, §9)."""
    text = played.pbem("verify")
    assert (text.returncode, text.stdout, text.stderr) == (0, "ok: 8 commits verified\n", "")
    data = json.loads(played.cli("verify", "--format", "json").stdout)
    assert data == {"format": "pbem-json/1", "ok": True, "commits": 8, "findings": []}
    github = played.cli("verify", "--format", "github")
    assert github.exit_code == 0
    assert github.stdout == "pbem verify: 8 commits, 0 finding(s)\n"


def test_verify_reports_a_bad_turn_in_text_json_and_github_formats(played: Table) -> None:
    """A finding carries rule id, file, line and commit in every format; github gives `::error` annotations."""
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml").replace("{speed: 12}", "{speed: 10}", 1))
    played.edit("fed", through="1.16.damage")
    bad = played.sneak("fed")
    text = played.pbem("verify")
    assert text.returncode == 1
    assert "report/turn-01.yaml:2: [firm.changed] firm entry removed or edited" in text.stdout
    assert f"(commit {bad[:10]})" in text.stdout and "FAILED" in text.stdout
    data = json.loads(played.cli("verify", "--format", "json").stdout)
    assert data["ok"] is False and data["commits"] == 9
    assert {(f["rule"], f["file"], f["line"], f["commit"]) for f in data["findings"]} == {
        ("firm.changed", "report/turn-01.yaml", 2, bad)}
    github = played.cli("verify", "--format", "github")
    assert github.exit_code == 1
    annotations = [l for l in github.stdout.splitlines() if l.startswith("::error ")]
    assert len(annotations) == 2
    assert all(l.startswith("::error file=report/turn-01.yaml,line=2,title=firm.changed::") for l in annotations)
    assert all(f"(commit {bad[:10]})" in l for l in annotations)


# --- control changes hands ------------------------------------------------------------------------------------

def test_control_changes_hands_on_a_horizon_break_then_on_a_range_break(played: Table) -> None:
    """Seed 000 §3.B / DESIGN §4.2: when a player's horizon ends he needs orders (kind `horizon`); when the
    ships come within 8 hexes, a `range: 8` condition gives control back (kind `condition`)."""
    played.turn("fed", through="1.16.damage", note="straight on")
    played.turn("kli", through="1.24.damage", note="straight on")
    seen = handoffs(played)
    assert seen[0] == (None, "fed", "horizon", "needs orders from 1.0.alloc")  # the start
    assert seen[1] == ("fed", "kli", "horizon", "needs orders from 1.0.alloc")
    assert seen[2] == ("kli", "fed", "horizon", "needs orders from 1.9.move")
    assert seen[3] == ("fed", "kli", "horizon", "needs orders from 1.13.move")
    yielded_by, control, kind, why = seen[4]
    assert (yielded_by, control, kind) == ("kli", "fed", "condition")
    assert why.startswith("range 8")
    status = played.data("status.yaml")
    turn, impulse, _step = status["firm"].split(".")
    assert (int(turn), int(impulse)) <= (1, 24) and status["pending"][0]["player"] == "fed"
    log = played.cli("log").stdout
    assert re.search(r"kli\s+kli: straight on -> fed \(range 8", log)
    assert re.search(r"fed\s+fed: straight on -> kli \(needs orders from 1\.13\.move\)", log)


# --- the demo game --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Table, subprocess.CompletedProcess[str]]:
    """`pbem demo DIR`, run once: the scripted tactical duel (games/tactical-duel/demo.yaml). DIR/game and
    DIR/home make it a Table (its keys are DIR/keys/<seat>_ed25519)."""
    table = Table(tmp_path_factory.mktemp("demo"))
    table.home.mkdir()
    done = table.pbem("demo", str(table.root), cwd=table.root)
    return table, done


def test_demo_plays_a_whole_game_of_at_least_30_signed_commits(demo: tuple[Table, Any]) -> None:
    """README quick start: `pbem demo DIR` plays, verifies and prints a complete game; exit 0."""
    table, done = demo
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "Traceback" not in done.stderr
    verified = re.search(r"ok: (\d+) commits verified", done.stdout)
    assert verified and int(verified.group(1)) >= 30
    commits = table.git("rev-list", "HEAD").stdout.decode().split()
    assert len(commits) == int(verified.group(1))
    for oid in commits:
        raw = table.git("cat-file", "commit", oid).stdout.decode()
        assert "\ngpgsig -----BEGIN SSH SIGNATURE-----\n" in raw, oid


def test_every_demo_commit_passes_git_verify_commit_with_pbem_allowed_signers(demo: tuple[Table, Any]) -> None:
    """DESIGN §3: pbem's commits are ordinary SSH-signed git commits; `pbem allowed-signers` feeds git."""
    table, done = demo
    assert done.returncode == 0
    listed = table.pbem("allowed-signers")
    assert listed.returncode == 0
    principals = {line.split()[0] for line in listed.stdout.splitlines()}
    assert {"fed", "kli"} <= principals  # and whoever else the demo seats (a dice escrow)
    signers = table.root / "allowed_signers"
    signers.write_text(listed.stdout)
    commits = table.git("rev-list", "HEAD").stdout.decode().split()
    checked = table.git("-c", f"gpg.ssh.allowedSignersFile={signers}", "verify-commit", *commits).stderr.decode()
    good = re.findall(r'Good "git" signature for (\S+) with ED25519 key', checked)
    assert len(good) == len(commits) and set(good) <= principals
    marks = table.git("-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "--format=%G? %GS").stdout.decode()
    assert {mark.split()[0] for mark in marks.splitlines()} == {"G"}
    assert {"fed", "kli"} <= {mark.split()[1] for mark in marks.splitlines()}


def test_demo_hands_control_over_on_horizon_and_range_breaks(demo: tuple[Table, Any]) -> None:
    """The demo's status.yaml history shows control passing to the other player on `horizon` and on `range`
    breaks, to the end of the game."""
    table, done = demo
    assert done.returncode == 0
    seen = handoffs(table)
    assert any(kind == "horizon" and by and to != by for by, to, kind, _why in seen)
    assert any(kind == "condition" and why.startswith("range") and by and to != by for by, to, kind, why in seen)
    assert seen[-1][1] is None  # the game is over
    log = table.pbem("log").stdout
    assert re.search(r"-> (fed|kli) \(range \d", log) and re.search(r"-> (fed|kli) \(needs orders", log)
    assert "Status: the game is over" in log
