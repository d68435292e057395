"""Agreements (DESIGN §4.8) and the start by mutual consent (DESIGN §2 Setup, seed 000 §2.A): the pure core, the
file format and its signatures checked with the real `ssh-keygen -Y verify`, and the services that propose and
sign. The duel of tests/conftest.py: seats fed (alice's key) and kli (bob's key); carol holds no seat.
"""

from __future__ import annotations

from pbem.protocol import ids
import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import GAME_ID, Table, copy_table
from gitutil import clean_env, fixed_key
from pbem.crypto import sshsig
from pbem.protocol import agreements
from pbem.protocol.agreements import Agreement
from pbem.services import agreements as agreement_service
from pbem.services import setup
from pbem.services.workspace import Workspace, load_identity


def joined(base_started: Table, dest: Path) -> Table:
    """The duel before its start: both seats claimed, no agreement, no status.yaml (init, join, join)."""
    table = copy_table(base_started, dest)
    commits = table.git("rev-list", "--first-parent", "--reverse", "HEAD").stdout.decode().split()
    table.git("reset", "-q", "--hard", commits[2])
    assert not (table.repo_dir / "status.yaml").exists() and not (table.repo_dir / "agreements").exists()
    return table


def me(table: Table, who: str):  # type: ignore[no-untyped-def]
    return load_identity(str(table.key(who)), table.repo_dir)


def documented_message(raw: dict[str, Any], game_id: str) -> bytes:
    """What each signer signs, written out from docs/protocol.md (not from pbem): the agreement without
    `signatures` as canonical JSON, hashed with SHA-256, behind the domain, the game id and a zero byte."""
    content = {k: v for k, v in raw.items() if k != "signatures"}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return b"pbem-agreement-v1" + game_id.encode() + b"\0" + hashlib.sha256(canonical).digest()


@pytest.fixture
def before(base_started: Table, tmp_path: Path) -> Table:
    return joined(base_started, tmp_path / "table")


# --- the core ---------------------------------------------------------------------------------------------------

def test_an_id_names_its_author_up_to_its_last_dash() -> None:
    assert ids.author_of("rom-0001") == "rom"
    assert ids.author_of("great-britain-0012") == "great-britain"


def test_the_signatures_are_not_signed_and_everything_else_is() -> None:
    raw = {"id": "fed-0001", "kind": "start", "by": "fed", "content": {"game": "0" * 64, "first": "fed"},
           "signatures": {}}
    bare = Agreement(raw, "agreements/fed-0001.yaml")
    signed = Agreement({**raw, "signatures": {"fed": "x"}}, "agreements/fed-0001.yaml")
    other = Agreement({**raw, "content": {"game": "0" * 64, "first": "kli"}}, "agreements/fed-0001.yaml")
    assert bare.body() == signed.body() != other.body()
    assert agreements.message("g1", bare) != agreements.message("g2", bare)


# --- proposing and signing ----------------------------------------------------------------------------------

def test_a_start_proposal_is_signed_by_its_proposer_over_the_documented_message(before: Table) -> None:
    """`setup.begin` by fed writes agreements/fed-0001.yaml: kind start, by fed, content = sha256 of game.yaml's
    bytes and `first`; fed's signature verifies with the real `ssh-keygen -Y verify -n pbem` over the message
    docs/protocol.md gives."""
    ws = Workspace.open(before.repo_dir)
    steps = setup.begin(ws, me(before, "fed"), first="fed")
    assert [s.step for s in steps] == ["proposed"] and "kli" in steps[0].message
    raw = dict(before.data("agreements/fed-0001.yaml"))
    game_hash = hashlib.sha256((before.repo_dir / "game.yaml").read_bytes()).hexdigest()
    assert raw["id"] == "fed-0001" and raw["kind"] == "start" and raw["by"] == "fed"
    assert raw["content"] == {"game": game_hash, "first": "fed"} and set(raw["signatures"]) == {"fed"}
    signers = before.root / "allowed_signers"
    signers.write_text(f"fed {fixed_key('alice').public.to_line()}\n")
    sig = before.root / "fed.sig"
    sig.write_text(raw["signatures"]["fed"] + "\n")
    done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", "fed", "-n", "pbem", "-s",
                           str(sig)], input=documented_message(raw, GAME_ID), capture_output=True,
                          env=clean_env(before.home))
    assert done.returncode == 0, done.stderr
    pbem_sig = sshsig.sign(fixed_key("alice"), documented_message(raw, GAME_ID), "pbem")
    assert pbem_sig == raw["signatures"]["fed"]  # Ed25519 is deterministic: the same bytes as pbem wrote


def test_kli_signs_only_his_own_key_and_each_id_is_numbered_per_author(before: Table) -> None:
    ws = Workspace.open(before.repo_dir)
    setup.begin(ws, me(before, "fed"), first="fed")
    first = dict(before.data("agreements/fed-0001.yaml"))
    done = agreement_service.sign(ws, me(before, "kli"), "fed-0001")
    assert done.unsigned == () and done.kind == "start"
    after = dict(before.data("agreements/fed-0001.yaml"))
    assert {k: v for k, v in after.items() if k != "signatures"} == {k: v for k, v in first.items()
                                                                      if k != "signatures"}
    assert after["signatures"]["fed"] == first["signatures"]["fed"] and set(after["signatures"]) == {"fed", "kli"}
    assert agreement_service.next_id(ws.head().game, "fed") == "fed-0002"
    assert agreement_service.next_id(ws.head().game, "kli") == "kli-0001"


# --- the start through the CLI ----------------------------------------------------------------------------------

def test_pbem_status_before_the_start_says_whose_signature_is_missing_and_the_command(before: Table) -> None:
    """`pbem status` before the start: nobody proposed yet -> how to propose; fed proposed -> kli is asked to
    review game.yaml and `pbem sign fed-0001`, fed is told he waits for kli; all signed -> `pbem start`."""
    nobody = before.cli("status", "--plain", who="kli").stdout
    assert "`pbem start --first ID`" in nobody and "`pbem start --roll`" in nobody
    assert "proposed start agreement fed-0001" in before.cli("start", "--first", "fed", who="fed").stdout
    kli = before.cli("status", "--plain", who="kli").stdout
    assert "you (kli) owe: your signature on start agreement fed-0001 by fed (fed starts" in kli
    assert "review game.yaml, then sign it: `pbem sign fed-0001`" in kli
    assert "waits for kli: `pbem sign fed-0001`" in before.cli("status", "--plain", who="fed").stdout
    owed = json.loads(before.cli("status", "--format", "json", who="kli").stdout)["you_owe"]
    assert "`pbem sign fed-0001`" in owed
    from pbem.render.status_screen import todos
    from pbem.services.pictures import status_view

    screen = todos(status_view(Workspace.open(before.repo_dir), "kli"))  # what a terminal shows
    assert screen[0].command == "pbem sign fed-0001" and "review game.yaml" in screen[0].text
    assert "every signer has signed" in before.cli("sign", "fed-0001", who="kli").stdout
    assert "`pbem start --first fed`" in before.cli("status", "--plain", who="fed").stdout
    assert before.cli("start", "--first", "fed", who="kli").stdout.strip() == "started: fed has control"
    assert before.data("status.yaml")["control"] == "fed"
    assert "ok:" in before.cli("verify").stdout


def test_both_propose_at_once_and_the_next_start_signs_the_other_s(before: Table) -> None:
    """Two players who propose the same start at the same time write two files (fed-0001, kli-0001), never the
    same one (DESIGN §4.9); once both have landed, the next `pbem start --first fed` signs the proposal its
    runner has not signed yet, finds every signature and starts."""
    ws = Workspace.open(before.repo_dir)
    before.cli("start", "--first", "fed", who="fed")
    game_hash = hashlib.sha256((before.repo_dir / "game.yaml").read_bytes()).hexdigest()
    agreement_service.propose(ws, me(before, "kli"), "start", {"game": game_hash, "first": "fed"}, "start, fed")
    assert sorted(p.name for p in (before.repo_dir / "agreements").iterdir()) == ["fed-0001.yaml", "kli-0001.yaml"]
    done = before.cli("start", "--first", "fed", who="fed").stdout
    assert "signed start agreement kli-0001: every seat has signed" in done and "started: fed has control" in done
    assert set(before.data("agreements/kli-0001.yaml")["signatures"]) == {"fed", "kli"}
    assert "ok:" in before.cli("verify").stdout


def test_a_change_to_game_yaml_makes_the_start_agreements_stale(before: Table) -> None:
    """Proposed, then game.yaml changes: the old agreement is stale (`pbem status` says so; `pbem sign` refuses
    it with agreement.stale) and the next `pbem start` proposes anew over the new game.yaml."""
    from test_dice_flow import refused

    before.cli("start", "--first", "fed", who="fed")
    text = before.read("game.yaml")
    longer = re.sub(r"(?m)^(\s*turns: )(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)) + 1}", text, count=1)
    assert longer != text
    before.write("game.yaml", longer)
    before.git_commit("setup: one more turn", signer="kli")
    assert "fed-0001 are stale" in before.cli("status", "--plain", who="kli").stdout
    refused(before, "sign", "fed-0001", who="kli", rule="agreement.stale", where="*")
    assert "proposed start agreement kli-0001" in before.cli("start", "--first", "fed", who="kli").stdout


def test_sign_needs_a_known_agreement_and_a_seat(before: Table) -> None:
    from test_dice_flow import refused

    before.cli("start", "--first", "fed", who="fed")
    refused(before, "sign", "fed-0009", who="kli", rule="usage.no-agreement", code=2)
    refused(before, "sign", "fed-0001", who="carol", rule="signature.unknown-key")
    refused(before, "sign", "fed-0001", who="fed", rule="usage.signed", code=2)
