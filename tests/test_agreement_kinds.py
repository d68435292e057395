"""The ways out of a stalled game (DESIGN §4.8): amend, seat, resign, nmr and end agreements, through the real
`pbem` with real keys in the duel of tests/conftest.py (fed = alice's key, kli = bob's; carol holds no seat).
Each takes effect in the commit that adds its last required signature; bad input is refused by pbem (exit 1,
one line, nothing changed) and, written by hand with plain git, found by `pbem verify`.
"""

from __future__ import annotations

from pathlib import Path

from conftest import Table
from pbem.crypto.keys import public_path
from test_dice_flow import cli, findings, refused
from test_secrets_flow import base_due, base_sealed, due  # noqa: F401  (fixtures: fed owes an impossible reveal)


def carol_pub(table: Table) -> str:
    return str(public_path(table.key("carol")))


def test_a_forfeit_ends_the_game_with_its_result(started: Table) -> None:
    """fed finds kli caught cheating: in a duel, a forfeit is signed by every active player but kli, so fed's
    proposal ends the game at once; status, log and the listing say so; a second end is refused."""
    out = cli(started, "agree", "end", "--result", "forfeit", "--player", "kli", "--note", "audit", who="fed")
    assert "fed-0002" in out and "in effect" in out
    assert started.data("status.yaml")["over"] is True
    assert findings(started) == []
    listing = cli(started, "agreements", who="kli")
    assert "result: the game ends: forfeit by kli (audit)" in listing
    refused(started, "agree", "end", "--result", "draw", who="kli", rule="agreement.second-end")
    assert "the game is over — the game ends: forfeit by kli (audit)" in cli(started, "log")
    assert "Result: the game ends: forfeit by kli" in cli(started, "log", "--html")
    assert "result:  the game ends: forfeit by kli" in cli(started, "status", "--plain", who="fed")


def test_an_amend_changes_the_deadline_once_both_sign(started: Table) -> None:
    out = cli(started, "agree", "amend", "--deadline", "96h", who="fed")
    assert "waiting for kli" in out
    assert "deadline" not in started.read("game.yaml")
    status = cli(started, "agreements", who="kli")
    assert status.startswith("sign fed-0002")
    cli(started, "sign", "fed-0002", who="kli")
    assert started.data("game.yaml")["deadline"] == "96h"
    assert findings(started) == []


def test_an_amend_of_the_game_id_is_refused(started: Table) -> None:
    refused(started, "agree", "amend", "--set", "id=another-game", who="fed", rule="agreement.frozen",
            where="agreements/draft.yaml")


def test_a_lost_key_is_replaced_by_a_seat_agreement(started: Table) -> None:
    """kli lost his key; fed (every other active player) gives kli's seat to carol's key; carol then plays."""
    cli(started, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(started), "--why", "lost-key",
        who="fed")
    assert started.data("game.yaml")["players"][1]["key"] == Path(carol_pub(started)).read_text().split(" ")[0] \
        + " " + Path(carol_pub(started)).read_text().split()[1]
    assert findings(started) == []


def test_a_seat_that_nobody_left_is_not_vacant(started: Table) -> None:
    refused(started, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(started), "--why", "replacement",
            who="fed", rule="agreement.seat-not-vacant", where="agreements/draft.yaml")


def test_a_resigned_seat_goes_to_a_replacement(tmp_path: Path) -> None:
    from test_errata import _melee

    started = _melee(tmp_path / "melee")  # three sides: one resign does not end the game
    out = cli(started, "resign", "--note", "moving house", who="kli")
    assert "in effect" in out
    cli(started, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(started), "--why", "replacement",
        who="fed")
    assert findings(started) == []
    assert "kli resigns" in cli(started, "agreements", who="fed")


def test_an_nmr_against_a_player_who_owes_nothing_is_refused(started: Table) -> None:
    control = started.data("status.yaml")["control"]
    other = "kli" if control == "fed" else "fed"
    refused(started, "agree", "nmr", "--player", other, who=control, rule="agreement.nmr-owes-nothing",
            where="agreements/draft.yaml")


def test_an_nmr_serves_the_absent_player_s_turn_with_no_new_orders(started: Table) -> None:
    """The player in control is absent; once his deadline ran out the other signs an nmr: replay serves his turn
    as if he had yielded without new orders, and the game moves on."""
    control = started.data("status.yaml")["control"]
    other = "kli" if control == "fed" else "fed"
    before = started.data("status.yaml")
    cli(started, "agree", "nmr", "--player", control, who=other)
    after = started.data("status.yaml")
    assert after != before and after["yielded_by"] == control and after["control"] == other, after
    assert findings(started) == []


# --- deadlines: the gates judge time by their own clock ---------------------------------------------------------

def test_the_hook_refuses_an_nmr_before_the_deadline_and_the_gate_s_clock_accepts_it_after(started: Table) -> None:
    """On a fresh clone of a hooked server, the other player signs an nmr against the player in control right
    away: the pre-receive hook refuses it (agreement.nmr-early) and the server's ref stays; judged by a clock
    eight days on (past the default 7d deadline), the same commit passes; `pbem verify` alone accepts it (it
    cannot judge time)."""
    from datetime import datetime, timedelta, timezone

    from pbem.services import deadlines, gateclock
    from pbem.store.repo import GameRepo
    from test_hook import clone_for, push, refused as hook_refused, serve, server_ref

    server = serve(started)
    control = started.data("status.yaml")["control"]
    other = "kli" if control == "fed" else "fed"
    clone = clone_for(started, server, other)
    tip = server_ref(server)
    cli(clone, "agree", "nmr", "--player", control, who=other)
    assert findings(clone) == []
    hook_refused(push(clone), "agreement.nmr-early")
    assert server_ref(server) == tip
    repo = GameRepo.open(clone.repo_dir)
    head = clone.head()
    now = datetime.now(timezone.utc)
    assert [f.rule for f in deadlines.nmr_findings(repo, [head], gateclock.hook_clock(server, now))] == \
        ["agreement.nmr-early"]
    later = gateclock.hook_clock(server, now + timedelta(days=8))
    assert deadlines.nmr_findings(repo, [head], later) == []
    waits = deadlines.waits(repo, repo.parents(head)[0])
    assert [w.player for w in waits] == [control] and not waits[0].overdue
    assert "left" in waits[0].text()


def test_status_puts_the_missing_signature_first_in_every_form(started: Table) -> None:
    import json

    from pbem.render.status_screen import todos
    from pbem.services import pictures
    from pbem.services.workspace import Workspace

    cli(started, "agree", "amend", "--deadline", "96h", who="fed")
    plain = cli(started, "status", "--plain", who="kli")
    assert plain.splitlines()[0].startswith("sign fed-0002 (amend by fed"), plain
    assert "waits:" in plain and "deadline 7d" in plain
    data = json.loads(cli(started, "status", "--format", "json", who="kli"))
    assert data["sign"][0].startswith("sign fed-0002") and data["waits"]
    view = pictures.status_view(Workspace.open(started.repo_dir), "kli")
    assert todos(view)[0].command == "pbem sign fed-0002"
    assert not cli(started, "status", "--plain", who="fed").startswith("sign")


# --- each stall ended by its agreement --------------------------------------------------------------------------

def test_a_caught_cheater_who_owes_an_impossible_reveal_forfeits(due: Table) -> None:
    """fed swapped a secret's commitment (fed-0002): the reveal he owes can never pass, so the game could never
    go on. kli (every active player but fed) records fed's forfeit: the game is over with that result, the
    unrevealed secret is moot, and the history verifies."""
    assert any(b["player"] == "fed" and b["kind"] == "secret" for b in due.data("status.yaml")["pending"])
    cli(due, "agree", "end", "--result", "forfeit", "--player", "fed", "--note", "commitment swapped", who="kli")
    status = due.data("status.yaml")
    assert status["over"] is True and status["pending"] == []
    assert findings(due) == []
    assert "forfeit by fed" in cli(due, "status", "--plain", who="kli")


def test_a_lost_key_stall_ends_and_the_new_key_plays(started: Table) -> None:
    """fed, in control, lost his key: kli gives fed's seat to carol's key (lost-key; in a duel kli alone signs);
    carol then takes fed's turn with her key, and fed's old key holds no seat any more."""
    from conftest import FED_TURN_1

    control = started.data("status.yaml")["control"]
    assert control == "fed"
    cli(started, "agree", "seat", "--seat", "fed", "--new-key", carol_pub(started), "--why", "lost-key",
        who="kli")
    started.edit("fed", **{k: v for k, v in FED_TURN_1.items() if k != "note"})
    cli(started, "yield", "-m", "carol plays fed", who="carol")
    assert started.data("status.yaml")["control"] == "kli"
    assert findings(started) == []
    old = started.cli("sign", "kli-0001", who="fed")
    assert old.exit_code == 1 and "signature.unknown-key" in old.output


def test_a_resign_and_a_replacement_through_the_hook_on_fresh_clones(tmp_path: Path) -> None:
    """kli resigns from his own clone of a hooked server; fed, on his, seats carol as kli's replacement; both
    pushes land through the pre-receive hook and carol's clone reads her seat (a melee: the game goes on)."""
    from test_errata import _melee
    from test_hook import clone_for, push, serve

    started = _melee(tmp_path / "melee")
    server = serve(started)
    kli = clone_for(started, server, "kli-machine")
    assert "in effect" in cli(kli, "resign", "--note", "moving house", who="kli")
    done = push(kli)
    assert done.returncode == 0, done.stderr
    fed = clone_for(started, server, "fed-machine")
    cli(fed, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(started), "--why", "replacement", who="fed")
    done = push(fed)
    assert done.returncode == 0, done.stderr
    rom = clone_for(started, server, "rom-machine")  # every seat still played signs a seat agreement
    cli(rom, "sign", "fed-0002", who="rom")
    done = push(rom)
    assert done.returncode == 0, done.stderr
    carol = clone_for(started, server, "carol-machine")
    assert "you (kli)" in cli(carol, "status", "--plain", who="carol")
    assert findings(carol) == []


def test_a_resign_in_a_duel_ends_it_his_ship_leaves_the_map(started: Table) -> None:
    """kli resigns from the duel: his ship leaves the map at once (tactical/1: a resigned side has left), so
    only fed is still in play and the game is over, fed the winner."""
    cli(started, "resign", who="kli")
    status = started.data("status.yaml")
    assert status["over"] is True, status
    log = cli(started, "log", who="fed")
    assert "fed wins" in log and "status=resigned" in log, log
    assert findings(started) == []


def test_pbem_deadlines_judges_a_range_by_this_machine_s_clock(started: Table) -> None:
    """The workflow's gate: `pbem deadlines BASE..HEAD` refuses an nmr made before the deadline."""
    control = started.data("status.yaml")["control"]
    other = "kli" if control == "fed" else "fed"
    base = started.head()
    assert f"{control} owes since" in cli(started, "deadlines")
    cli(started, "agree", "nmr", "--player", control, who=other)
    record = started.root / "accepted"
    record.write_text("".join(f"{oid} 2026-01-01T00:00:00Z\n" for oid in
                              started.git("rev-list", base).stdout.decode().split()))
    done = started.cli("deadlines", f"{base}..HEAD", "--clock", str(record), "--now", "2026-01-05T00:00:00Z")
    assert done.exit_code == 1 and "agreement.nmr-early" in done.output
    assert "runs out at 2026-01-08 00:00 UTC" in done.output
    late = started.cli("deadlines", f"{base}..HEAD", "--clock", str(record), "--now", "2026-01-08T00:00:00Z")
    assert late.exit_code == 0, late.output
    alone = started.cli("deadlines", f"{base}..HEAD")  # no gate record: nobody is found absent
    assert alone.exit_code == 1 and "[clock.missing]" in alone.output and "--clock" in alone.output


def test_every_kind_is_signed_as_documented_and_ssh_keygen_agrees(started: Table) -> None:
    """An amend signed by kli: his signature verifies with the real `ssh-keygen -Y verify -n pbem` over the
    message docs/protocol.md gives (the same construction for every kind)."""
    import subprocess

    from conftest import GAME_ID
    from gitutil import clean_env, fixed_key
    from test_agreements import documented_message

    cli(started, "agree", "amend", "--pause-until", "2027-01-10", who="fed")
    cli(started, "sign", "fed-0002", who="kli")
    raw = dict(started.data("agreements/fed-0002.yaml"))
    assert raw["kind"] == "amend" and raw["content"] == {"changes": {"paused_until": "2027-01-10"}}
    signers = started.root / "allowed_signers"
    signers.write_text(f"kli {fixed_key('bob').public.to_line()}\n")
    sig = started.root / "kli.sig"
    sig.write_text(raw["signatures"]["kli"] + "\n")
    done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", "kli", "-n", "pbem", "-s",
                           str(sig)], input=documented_message(raw, GAME_ID), capture_output=True,
                          env=clean_env(started.home))
    assert done.returncode == 0, done.stderr
    assert started.data("game.yaml")["paused_until"] == "2027-01-10"
    assert "2027-01-10" in cli(started, "deadlines")


def test_an_nmr_in_a_sealed_step_counts_the_absent_player_s_input_as_none(tmp_path: Path) -> None:
    """A sealed allocation step: fed sealed, kli never does. fed's nmr against kli makes kli's allocation count
    as none, and the step goes on without waiting for him."""
    from conftest import GAME_ID, _build
    from test_tactical_cli_bad_input import TEMPLATE, seal

    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "game.yaml").write_text(TEMPLATE)
    table = _build(tmp_path / "t", str(tmp_path / "template"), GAME_ID)
    table.turn("fed", through="1.3.damage", breaks=[{"fire": {}}])
    table.turn("kli", through="1.32.final", breaks=[{"fire": {}}])
    seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 0, "weapons": 2}}})
    before = [(b["player"], b["kind"]) for b in table.data("status.yaml")["pending"]]
    assert ("kli", "sealed") in before, before
    cli(table, "agree", "nmr", "--player", "kli", who="fed")
    after = [(b["player"], b["kind"]) for b in table.data("status.yaml")["pending"]]
    assert ("kli", "sealed") not in after, after
    assert findings(table) == []
    assert after[0][0] == "fed", after  # the game went on: fed's turn, and it stays settled in later commits
    table.turn("fed", through="1.32.final")
    assert findings(table) == []
