"""Errata (DESIGN §4.8; seed 000 §3.C "firm to here ... other than potentially to correct errors", §4.A "Promptly
bring up errors with other players"), through the real `pbem` in real game repositories with real keys.

An erratum corrects entries before the firm marker. Any player proposes it (`pbem erratum propose`: his edits of
the firm report become an agreement of kind erratum, agreements/<him>-NNNN.yaml, signed by him), every other
player signs it (`pbem erratum sign` or `pbem sign`), and the last signature applies it: the report changes by
exactly its entries and replay restarts from the corrected step. None of this needs control. An older form, files
under errata/, is no part of a game's layout any more: a tree holding one is refused. The hand-made attacks on
erratum agreements are in tests/test_attacks.py ("erratum agreements"). The games are the duel of tests/conftest.py (fed = alice's key, kli = bob's; carol holds no seat) and the three-player
melee (rom = dave's key).

Bad inputs are tried both ways: through pbem (refused: exit 1, one line naming file and rule, nothing changed)
and written by hand, as a player with plain git could (`pbem verify` names the rule, the file and the commit).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Table, built_from, copy_table
from gitutil import Sandbox, clean_env, fixed_key
from pbem.crypto import sshsig
from pbem.crypto.keys import write_keypair
from pbem.formats.writer import dump_mapping
from test_dice_flow import ANYWHERE, cli, findings, found, ok, refused, sneak_as

CA_SPEED = 'unit: CA, do: {speed: 12}'  # fed's firm 1.0.alloc entry in report/turn-01.yaml
TURN_1 = "report/turn-01.yaml"
A1 = "agreements/fed-0002.yaml"  # an erratum agreement
CA_12 = {"at": "1.0.alloc", "by": "fed", "unit": "CA", "do": {"speed": 12}}
CA_10 = {"at": "1.0.alloc", "by": "fed", "unit": "CA", "do": {"speed": 10}}


# --- helpers ---------------------------------------------------------------------------------------------------

def correct(table: Table, old: str, new: str, path: str = TURN_1) -> None:
    """Edit a report file by hand as the correction should read."""
    text = table.read(path)
    assert old in text, text
    table.write(path, text.replace(old, new, 1))


def propose(table: Table, who: str, old: str, new: str, reason: str = "a slip of the pen") -> str:
    correct(table, old, new)
    return cli(table, "erratum", "propose", "--reason", reason, who=who)


def erratum(table: Table, path: str) -> dict[str, Any]:
    return dict(table.data(path))


def agreement_message(raw: dict[str, Any], game_id: str) -> bytes:
    """What each player signs on an erratum agreement, written out from docs/protocol.md (not from pbem): the
    agreement without `signatures` as canonical JSON, hashed with SHA-256, behind the domain and the game id."""
    content = {k: v for k, v in raw.items() if k != "signatures"}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return b"pbem-agreement-v1" + game_id.encode() + b"\0" + hashlib.sha256(canonical).digest()


def status(table: Table) -> dict[str, Any]:
    return dict(table.data("status.yaml"))


def head_rules(table: Table) -> set[str]:
    return {f["rule"] for f in findings(table)}


# --- bases -----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def base_agreed(base_played: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """In `played` (fed holds control at 1.9.move), fed proposes that CA's speed at 1.0.alloc was 10, not 12."""

    def build(table: Table) -> None:
        out = propose(table, "fed", CA_SPEED, "unit: CA, do: {speed: 10}", "CA was allocated speed 10")
        assert "to sign: kli" in out

    return built_from(tmp_path_factory, "errata-base_agreed", base_played, build)


@pytest.fixture
def agreed(base_agreed: Table, tmp_path: Path) -> Table:
    return copy_table(base_agreed, tmp_path / "table")


@pytest.fixture(scope="session")
def base_close(base_played: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Both go straight on until range 8 meets both their break conditions at 1.14.move (firm 1.14.activity)."""

    def build(table: Table) -> None:
        table.turn("fed", through="1.16.damage", note="straight on")
        table.turn("kli", through="1.24.damage", note="straight on")
        assert status(table)["firm"] == "1.14.activity"
        assert [(b["player"], b["at"]) for b in status(table)["pending"]] == [("fed", "1.14.move"), ("kli", "1.14.move")]

    return built_from(tmp_path_factory, "errata-base_close", base_played, build)


@pytest.fixture(scope="session")
def base_turned(base_close: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Both served their range-8 break by turning at 1.16.move (keeping that condition: it would meet 1.14.move
    again); kli holds control for the turn breaks there."""

    def build(table: Table) -> None:
        table.turn("fed", through="1.20.damage", breaks=[{"range": 8}, {"range": 4}, {"turn": {"within": 10}}],
                   entries=[{"at": "1.16.move", "unit": "CA", "do": {"move": "TR"}}])
        table.turn("kli", breaks=[{"range": 8}, {"range": 4}, {"turn": {"within": 10}}],
                   entries=[{"at": "1.16.move", "unit": "D7", "do": {"move": "TL"}}])
        table.turn("fed", through="1.24.damage")
        assert status(table)["firm"] == "1.16.activity"

    return built_from(tmp_path_factory, "errata-base_turned", base_close, build)


# --- the whole flow --------------------------------------------------------------------------------------------

def test_a_proposal_is_signed_by_its_proposer_and_leaves_the_report_as_it_is(base_agreed: Table) -> None:
    """The erratum is an agreement of kind erratum: it lists the firm entry removed and the one added, with the
    reason; fed's signature verifies with the real `ssh-keygen -Y verify` (namespace pbem) over the documented
    agreement message; the report still reads speed 12 and the game's breaks are as they were (fed holds
    control at 1.9.move); no errata/ file is written any more."""
    table = base_agreed
    raw = erratum(table, A1)
    assert raw["id"] == "fed-0002" and raw["kind"] == "erratum" and raw["by"] == "fed"
    assert raw["content"] == {"reason": "CA was allocated speed 10", "removed": [CA_12], "added": [CA_10]}
    assert set(raw["signatures"]) == {"fed"} and not (table.root / "repo" / "errata").exists()
    assert CA_SPEED in table.read(TURN_1)
    assert status(table)["control"] == "fed" and status(table)["firm"] == "1.9.move"
    signers = table.root / "allowed_signers"
    signers.write_text(f"fed {fixed_key('alice').public.to_line()}\n")
    sig = table.root / "fed.sig"
    sig.write_text(raw["signatures"]["fed"] + "\n")
    done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", "fed", "-n", "pbem", "-s",
                           str(sig)], input=agreement_message(raw, "duel-e2e"), capture_output=True,
                          env=clean_env(table.home))
    assert done.returncode == 0, done.stderr
    assert findings(table) == []


def test_status_and_log_say_who_still_has_to_sign(base_agreed: Table) -> None:
    """`pbem status` puts "sign fed-0002" first for kli; `pbem agreements`, the log and `pbem erratum show` say
    who still has to sign."""
    out = cli(base_agreed, "status", "--plain", who="kli")
    assert out.startswith("sign fed-0002 (erratum by fed: -1 +1 entries from 1.0.alloc: CA was allocated speed 10)")
    assert "erratum: fed-0002 by fed" in out and "to sign: kli" in out
    assert not cli(base_agreed, "status", "--plain", who="fed").startswith("sign ")
    assert "to sign: kli (pbem sign fed-0002)" in cli(base_agreed, "log")
    assert "to sign: kli (pbem sign fed-0002)" in cli(base_agreed, "erratum", "show", "fed-0002")
    assert "fed-0002 by fed (erratum: -1 +1 entries" in cli(base_agreed, "agreements", who="kli")
    data = json.loads(cli(base_agreed, "status", "--format", "json", who="kli"))
    assert data["errata"] and "to sign: kli" in data["errata"][0] and data["sign"][0].startswith("sign fed-0002")
    screen = " ".join(cli(base_agreed, "status", "--rich", who="kli").split())  # the terminal screen
    assert "pbem sign fed-0002" in screen


@pytest.mark.parametrize("how", [("erratum", "sign"), ("sign",)])
def test_the_last_signature_applies_the_correction_and_replay_restarts(agreed: Table, tmp_path: Path,
                                                                       how: tuple[str, ...]) -> None:
    """kli signs out of turn (fed holds control), with `pbem erratum sign` or `pbem sign`; his commit applies
    fed-0002: the report reads speed 10, the state at the firm point is rebuilt with it, and a fresh clone
    verifies the whole history."""
    out = cli(agreed, *how, "fed-0002", who="kli")
    assert ("erratum fed-0002 applied" if how[0] == "erratum" else "every signer has signed") in out
    raw = erratum(agreed, A1)
    assert "applied" not in raw and set(raw["signatures"]) == {"fed", "kli"}
    text = agreed.read(TURN_1)
    assert CA_SPEED not in text and "unit: CA, do: {speed: 10}" in text
    assert status(agreed)["control"] == "fed" and status(agreed)["firm"] == "1.9.move"
    assert "speed=10" in next(line for line in cli(agreed, "log").splitlines() if "id=CA" in line)
    assert "fed-0002 by fed (erratum: -1 +1 entries from 1.0.alloc: CA was allocated speed 10) — signed by all, " \
           "in effect" in cli(agreed, "log")
    assert "erratum:" not in cli(agreed, "status", "--plain", who="fed")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(agreed.repo_dir), str(clone)], check=True,
                   env=clean_env(agreed.home))
    done = agreed.pbem("verify", cwd=clone)
    assert done.returncode == 0 and "ok: 10 commits verified" in done.stdout, done.stdout + done.stderr
    agreed.turn("fed", through="1.16.damage", note="the game goes on")  # and the game goes on


def test_replay_restarts_from_the_corrected_step_and_the_firm_point_moves_back(base_close: Table,
                                                                                tmp_path: Path) -> None:
    """DESIGN §4.8 "Replay then restarts from the corrected point": a faster D7 meets range 8 earlier, so the
    firm point moves back from 1.14.activity. D7's own move closes the range now, so only fed's condition is met
    (DESIGN §4.2: nothing triggers on a player's own events)."""
    table = copy_table(base_close, tmp_path / "table")
    propose(table, "kli", "unit: D7, do: {speed: 12}", "unit: D7, do: {speed: 16}", "D7 allocated speed 16")
    cli(table, "erratum", "sign", "kli-0001", who="fed")
    now = status(table)
    assert now["firm"] == "1.12.activity", now
    assert [(b["player"], b["at"], b["kind"]) for b in now["pending"]] == [("fed", "1.12.move", "condition")]
    assert findings(table) == []


def test_breaks_served_before_the_corrected_step_are_not_served_again(base_turned: Table, tmp_path: Path) -> None:
    """The range-8 breaks at 1.14.move were served; the correction is CA's turn at 1.16.move (port, not
    starboard). Replay resolves 1.14.move again without serving it; the turn breaks at 1.16.move, which the
    corrected move changes, are served again (with the new reason)."""
    table = copy_table(base_turned, tmp_path / "table")
    propose(table, "fed", "unit: CA, do: {move: TR}", "unit: CA, do: {move: TL}", "CA turned to port")
    cli(table, "sign", "fed-0002", who="kli")
    now = status(table)
    assert now["firm"] == "1.16.activity"
    assert all(b["at"] == "1.16.move" for b in now["pending"]), now
    assert any("CA turned left B to A" in b["why"] for b in now["pending"]), now
    assert findings(table) == []
    table.turn(now["control"], note="noted")  # the player served first goes on as usual


def test_three_players_each_sign_before_it_applies(tmp_path: Path) -> None:
    """In the three-player melee the erratum is applied only with the third signature; the second alone does
    not apply it (`pbem erratum apply` is refused: an erratum takes effect with its last signature), and the
    hook-free verify of the whole history passes."""
    table = _melee(tmp_path / "melee")
    first = status(table)["control"]
    assert first == "fed"
    table.turn("fed", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}])
    table.turn("kli", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 12}}])
    table.turn("rom", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "KR", "do": {"speed": 12}}])
    out = propose(table, "rom", "unit: KR, do: {speed: 12}", "unit: KR, do: {speed: 8}", "KR meant speed 8")
    assert "to sign: fed, kli" in out
    assert "to sign: fed" in cli(table, "erratum", "sign", "rom-0001", who="kli")
    refused(table, "erratum", "apply", "rom-0001", who="rom", rule="erratum.unsigned", where="agreements/rom-0001.yaml")
    assert "applied" in cli(table, "erratum", "sign", "rom-0001", who="fed")
    assert "unit: KR, do: {speed: 8}" in table.read(TURN_1)
    assert findings(table) == []


def _melee(root: Path) -> Table:
    """games/tactical-melee started, with allocations open so that the speeds written at 1.0.alloc are firm
    once all three have given orders: fed (alice), kli (bob), rom (dave's key, as keys/rom_ed25519)."""
    template = root.parent / "melee-template"
    template.mkdir()
    text = (Path(__file__).resolve().parents[1] / "games" / "tactical-melee" / "game.yaml").read_text()
    assert "allocation: sealed" in text
    # speeds sealed need a sealed allocation: both open here
    (template / "game.yaml").write_text(text.replace("allocation: sealed", "allocation: open")
                                        .replace("speeds: sealed", "speeds: open"))
    box = Sandbox(root)
    shutil.rmtree(box.home / ".ssh")
    for name in ("alice", "bob", "carol"):
        box.new_key(name)
    write_keypair(root / "keys" / "rom_ed25519", fixed_key("dave"))
    table = Table(root)
    ok(table, "init", str(table.repo_dir), "--template", str(template), "--id", "melee-e2e", who="fed", cwd=root,
       real=True)
    for seat in ("fed", "kli", "rom"):
        ok(table, "join", "--as", seat, who=seat)
    for seat in ("fed", "kli", "rom"):  # fed proposes the start, the others sign; the last run starts
        ok(table, "start", "--first", "fed", who=seat)
    return table


OLD_FILE = {"id": "e0001", "by": "fed", "reason": "CA was allocated speed 10", "removed": [CA_12], "added": [CA_10],
            "signatures": {}}  # an erratum as the older pbem wrote it under errata/


def test_a_tree_holding_errata_is_refused_with_a_hint_to_propose_an_agreement(played: Table) -> None:
    """errata/e0001.yaml, the older form, committed with plain git: `pbem verify` refuses the commit, first of all
    for that file (tree.unexpected-path) with a hint to propose the correction as an erratum agreement, and the
    correction it holds never reaches the report."""
    played.write("errata/e0001.yaml", dump_mapping(OLD_FILE))
    oid = played.git_commit("fed: proposes e0001", signer="fed")
    got = findings(played)
    assert {f["commit"] for f in got} == {oid}, got
    assert (got[0]["rule"], got[0]["file"]) == ("tree.unexpected-path", "errata/e0001.yaml"), got
    assert "pbem agree erratum" in got[0]["hint"] and "errata are agreements" in got[0]["message"]
    done = played.pbem("verify")
    assert done.returncode == 1 and "errata/e0001.yaml: [tree.unexpected-path]" in done.stdout, done.stdout
    assert "hint: remove errata/" in done.stdout and "Traceback" not in done.stderr
    assert CA_SPEED in played.read(TURN_1)


def test_an_old_erratum_id_is_a_usage_error_naming_the_agreement_way(played: Table) -> None:
    """`pbem erratum sign e0001` and `pbem erratum apply e0001`: an id of the older form is a usage error that
    says how a correction is proposed now, and changes nothing."""
    for command in ("sign", "apply"):
        line = refused(played, "erratum", command, "e0001", who="kli", rule="usage.erratum", code=2)
        assert "older errata/ files" in line


def test_changing_firm_entries_without_an_erratum_stays_firm_changed(base_played: Table, tmp_path: Path) -> None:
    table = copy_table(base_played, tmp_path / "table")
    correct(table, CA_SPEED, "unit: CA, do: {speed: 10}")
    table.edit("fed", through="1.16.damage")
    refused(table, "yield", who="fed", rule="firm.changed", where=f"{TURN_1}:2")


def test_an_erratum_of_entries_after_the_firm_marker_is_refused(base_turned: Table, tmp_path: Path) -> None:
    """An entry after the firm marker is its owner's to change in his turn: `pbem erratum propose` refuses it
    naming the report line (erratum.not-firm; by hand: tests/test_attacks.py)."""
    table = copy_table(base_turned, tmp_path / "table")
    table.edit("fed", entries=[{"at": "1.20.move", "unit": "CA", "do": {"move": "TL"}}])
    refused(table, "erratum", "propose", "--reason", "later", who="fed", rule="erratum.not-firm", where=ANYWHERE)


def test_propose_needs_a_correction_and_keeps_other_edits_out(base_played: Table, tmp_path: Path) -> None:
    table = copy_table(base_played, tmp_path / "table")
    refused(table, "erratum", "propose", "--reason", "nothing", who="kli", rule="usage.erratum", code=2)
    correct(table, CA_SPEED, "unit: CA, do: {speed: 10}")
    table.edit("fed", through="1.12.damage")
    refused(table, "erratum", "propose", "--reason", "mixed", who="fed", rule="usage.uncommitted", code=2)


# --- errata and the agreements that took effect at a game point -------------------------------------------------

def _units(table: Table) -> dict[str, Any]:
    """The units where replay stopped at HEAD, by id (the tactical state, read in-process)."""
    from pbem.services.workspace import Workspace

    head = Workspace.open(table.repo_dir).head()
    assert head is not None and head.stop is not None
    return {u.id: u for u in head.stop.checkpoint.state.units}


def test_a_resignation_keeps_its_game_point_when_an_erratum_replays_from_before_it(tmp_path: Path) -> None:
    """kli resigns at the firm point 1.9.move of the melee; then rom's erratum corrects KR's speed at 1.0.alloc
    and fed (the other active player) signs it: replay restarts from the game start, and kli's D7 leaves the
    map again at 1.9.move, not before (it moved through 1.1-1.8 as he ordered, and left as it did before the
    erratum), and not never (the erratum does not undo the resignation)."""
    table = _melee(tmp_path / "melee")
    table.turn("fed", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}])
    table.turn("kli", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 12}}])
    table.turn("rom", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "KR", "do": {"speed": 12}}])
    firm = status(table)["firm"]
    moved = _units(table)["D7"]
    assert moved.status == "active" and moved.hex is not None
    cli(table, "resign", "--note", "called away", who="kli")
    resigned = _units(table)["D7"]
    assert resigned.status == "resigned" and resigned.hex is None and resigned.left_at is not None
    kr = _units(table)["KR"]
    out = propose(table, "rom", "unit: KR, do: {speed: 12}", "unit: KR, do: {speed: 8}", "KR meant speed 8")
    assert "to sign: fed" in out and "kli" not in out.split("to sign:")[1]  # kli resigned: no signer any more
    assert "every signer has signed (in effect: the report is corrected" in cli(table, "sign", "rom-0001", who="fed")
    assert "unit: KR, do: {speed: 8}" in table.read(TURN_1)
    after = _units(table)
    assert status(table)["firm"] == firm
    assert after["D7"] == resigned, (after["D7"], resigned)  # gone at the same point, in the same place
    assert after["KR"] != kr  # the correction itself took effect
    assert findings(table) == []


def test_an_nmr_keeps_its_game_point_when_an_erratum_replays_from_before_it(base_played: Table,
                                                                            tmp_path: Path) -> None:
    """fed (in control at 1.9.move) is absent; kli's nmr serves his turn there with no new orders. Then kli's
    erratum corrects D7's speed at 1.0.alloc and fed, back, signs it: replay restarts from the game start and
    does not wait for fed at 1.9.move again (the nmr covered him up to his next decision, 2.0.alloc): the firm
    point and what is pending are as the nmr left them."""
    table = copy_table(base_played, tmp_path / "table")
    assert status(table)["control"] == "fed" and status(table)["firm"] == "1.9.move"
    cli(table, "agree", "nmr", "--player", "fed", who="kli")
    settled = status(table)
    assert settled["yielded_by"] == "fed" and settled["firm"] == "1.13.move", settled  # kli's orders end there
    propose(table, "kli", "unit: D7, do: {speed: 12}", "unit: D7, do: {speed: 11}", "D7 allocated speed 11")
    cli(table, "sign", "kli-0002", who="fed")
    now = status(table)
    assert (now["firm"], now["control"], now["pending"]) == (settled["firm"], settled["control"],
                                                           settled["pending"]), (now, settled)
    assert findings(table) == []


def test_pbem_watch_tells_the_player_an_erratum_waits_for_his_signature(base_agreed: Table) -> None:
    """The status lines of pending errata end in "to sign: WHO", which `pbem watch` reads to tell each signer."""
    from pbem.services import turn, watch
    from pbem.services.workspace import Workspace

    ws = Workspace.open(base_agreed.repo_dir)
    lines = turn.errata_lines(ws)
    assert lines and lines[0].endswith("to sign: kli"), lines
    head = ws.head()
    assert head is not None
    waiting = [line for line in lines if "kli" in line.rpartition("to sign: ")[2].split(", ")]  # as watch.tell
    assert [d.text for d in watch.decisions(head.status, "kli", waiting)] == lines


def test_pbem_agree_erratum_proposes_the_same_agreement(played: Table) -> None:
    """`pbem agree erratum --reason TEXT` is `pbem erratum propose --reason TEXT`: the same agreement, the same
    output; without a reason it is a usage error that writes nothing."""
    correct(played, CA_SPEED, "unit: CA, do: {speed: 10}")
    refused(played, "agree", "erratum", who="fed", rule="usage.erratum", code=2)
    out = cli(played, "agree", "erratum", "--reason", "CA was allocated speed 10", who="fed")
    assert "erratum fed-0002: to sign: kli (pbem erratum sign fed-0002, or pbem sign fed-0002)" in out
    assert erratum(played, A1)["content"] == {"reason": "CA was allocated speed 10", "removed": [CA_12],
                                              "added": [CA_10]}
    assert CA_SPEED in played.read(TURN_1) and findings(played) == []
