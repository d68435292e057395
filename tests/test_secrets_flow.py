"""Sealed secrets (DESIGN §6, seed 000 §2.C "secret information"), through the real `pbem` in real game
repositories with real keys: `pbem seal KIND FILE [--reveal end|TIME]`, what is due stops the game for its owner,
`pbem yield` and `pbem reveal ID` reveal it, the verifier opens the box, checks the key-committing hash and the
kind's schema; a player who lost every file but his key reveals from a fresh clone; at the end every secret must
be revealed. Then every secret bad input of issue 3, each with its rule id, built as a cheater would (a hand-made
file or commit signed with his own key) and, where pbem could be asked to do it, refused with nothing changed.

The duel of tests/conftest.py. Flow, built once per module and copied per test:
* `sealed`: in his first turn fed sealed fed-0001 (a note, due at 1.4.move) with `pbem seal`, and two cheats by hand,
  both due at the end: fed-0002, whose `commit` is not the hash of its key and plaintext (the box still opens), and
  fed-0009, a box holding something that is no note; kli holds control;
* `due`: kli took his turn; replay reached 1.9.move, past 1.4.move: fed owes the reveal of fed-0001;
* `revealed`: fed revealed it with a bare `pbem yield` and holds control for his turn.
`ending`: a short game: fed sealed a note due at the end and both gave orders to the last step; fed owes its reveal.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FED_TURN_1, KLI_TURN_1, TEACHING_DUEL, Table, built_from, copy_table
from gitutil import clean_env
from pbem.crypto import seal
from pbem.crypto.keys import PrivateKey, load_private_key
from pbem.errors import PbemError
from pbem.formats.writer import dump_mapping
from test_dice_flow import (changed_paths, cli, commit_count, findings, found, ok, pending, private, refused,
                            sneak_as, verify_text)

PLAN = "I turn to starboard as soon as we are in range 8"
CONCERNS = "fed's plan for turn 1"
S1, S2, S3 = "secrets/fed-0001.yaml", "secrets/fed-0002.yaml", "secrets/fed-0009.yaml"


def key_of(table: Table, who: str) -> PrivateKey:
    return load_private_key(table.key(who))


def secret(table: Table, path: str) -> dict[str, Any]:
    return dict(table.data(path))


def write_secret(table: Table, path: str, raw: dict[str, Any]) -> None:
    table.write(path, dump_mapping(raw))


def recovered(table: Table, raw: dict[str, Any], who: str = "fed") -> bytes:
    """The secret's key from its owner_box, with `who`'s key file (DESIGN §6: nothing kept outside the repo)."""
    return seal.recover_key(base64.b64decode(raw["owner_box"]), key_of(table, who))


def opened(raw: dict[str, Any], key: bytes) -> bytes:
    """Open the box with nacl directly and check the key-committing hash with hashlib: not pbem's reveal code."""
    import hashlib

    import nacl.secret

    plaintext = nacl.secret.SecretBox(key).decrypt(base64.b64decode(raw["box"]))
    assert hashlib.blake2b(key + plaintext, digest_size=32, key=b"pbem-seal-v1").hexdigest() == raw["commit"]
    return plaintext


# --- module bases -------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def base_sealed(base_started: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        plan = table.root / "plan.yaml"
        plan.write_text(f"text: {PLAN}\n")
        out = ok(table, "seal", "note", str(plan), "--reveal", "1.4.move", "--concerns", CONCERNS, who="fed", real=True)
        assert out.strip() == "sealed secret fed-0001 (note); due at 1.4.move: now `pbem yield`"
        # fed-0002: sealed by pbem, then its commitment swapped for that of another plaintext (the box still opens)
        other = table.root / "other.yaml"
        other.write_text("text: I hold my course\n")
        ok(table, "seal", "note", str(other), who="fed")
        s2 = secret(table, S2)
        s2["commit"] = seal.seal_commitment(recovered(table, s2), b'{"text":"I turn to port"}').hex()
        write_secret(table, S2, s2)
        # fed-0009: a box that is no note (`pbem seal` would refuse it: it checks the kind's schema first)
        bogus = seal.seal(b'{"orders":"fire everything"}', key_of(table, "fed").public)
        write_secret(table, S3, {"id": "fed-0009", "owner": "fed", "kind": "note", "end": "end",
                                 "box": base64.b64encode(bogus.box).decode(), "commit": bogus.commit.hex(),
                                 "owner_box": base64.b64encode(bogus.owner_box).decode()})
        table.edit("fed", **{k: v for k, v in FED_TURN_1.items() if k != "note"})
        cli(table, "yield", "-m", "speed 12, and my plan sealed", who="fed")

    return built_from(tmp_path_factory, "secrets_flow-base_sealed", base_started, build)


@pytest.fixture(scope="session")
def base_due(base_sealed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        table.turn("kli", **KLI_TURN_1)

    return built_from(tmp_path_factory, "secrets_flow-base_due", base_sealed, build)


@pytest.fixture(scope="session")
def base_revealed(base_due: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        cli(table, "yield", who="fed")
        assert pending(table) == [("fed", "horizon", "needs orders from 1.9.move")]

    return built_from(tmp_path_factory, "secrets_flow-base_revealed", base_due, build)


@pytest.fixture(scope="session")
def base_ending(base_started: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        note = table.root / "note.yaml"
        note.write_text("text: the D7 never saw my second torpedo\n")
        cli(table, "seal", "note", str(note), "--reveal", "end", who="fed")
        table.turn("fed", through="4.32.final")
        table.turn("kli", through="4.32.final")

    return built_from(tmp_path_factory, "secrets_flow-base_ending", base_started, build)


@pytest.fixture
def sealed(base_sealed: Table, tmp_path: Path) -> Table:
    return private(base_sealed, tmp_path)


@pytest.fixture
def due(base_due: Table, tmp_path: Path) -> Table:
    return private(base_due, tmp_path)


@pytest.fixture
def revealed(base_revealed: Table, tmp_path: Path) -> Table:
    return private(base_revealed, tmp_path)


@pytest.fixture
def ending(base_ending: Table, tmp_path: Path) -> Table:
    return private(base_ending, tmp_path)


# --- sealing -------------------------------------------------------------------------------------------------------

def test_seal_writes_a_box_a_key_committing_hash_and_the_key_sealed_to_its_owner(base_sealed: Table) -> None:
    """DESIGN §6: owner, kind, what it concerns, when it is due, the box, commit = BLAKE2b(key || plaintext) and
    owner_box; no key yet. The plaintext is the canonical JSON of the secret; only fed's key opens owner_box."""
    raw = secret(base_sealed, S1)
    assert set(raw) == {"id", "owner", "kind", "concerns", "end", "box", "commit", "owner_box"}
    assert (raw["id"], raw["owner"], raw["kind"], raw["concerns"], raw["end"]) == (
        "fed-0001", "fed", "note", CONCERNS, "1.4.move")
    assert opened(raw, recovered(base_sealed, raw)) == json.dumps({"text": PLAN}, separators=(",", ":")).encode()
    assert PLAN.encode() not in base64.b64decode(raw["box"])
    with pytest.raises(PbemError) as kli_tries:
        recovered(base_sealed, raw, "kli")
    assert kli_tries.value.finding.rule == "secret.not-owner"
    assert {S1, S2, S3} <= changed_paths(base_sealed)
    assert "ok:" in ok(base_sealed, "verify")  # a seal cannot be checked before its reveal: even the cheats pass


def test_seal_refuses_what_is_not_of_its_kind_and_writes_nothing(sealed: Table, tmp_path: Path) -> None:
    """`pbem seal` checks the secret against its kind's schema before sealing it; a kind this game does not offer
    is a usage error that names the kinds it does (here only `note`: the duel seals no allocations, and its
    weapons do not seek)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("orders: fire everything\n")
    refused(sealed, "seal", "note", str(bad), who="kli", rule="schema.invalid", where=str(bad))  # named by its file
    line = refused(sealed, "seal", who="kli", rule="usage.secret-kind", code=2)
    assert "Which kind of secret? You can seal: note (free text" in line, line
    for kind in ("no_such_kind", "allocation", "target"):
        line = refused(sealed, "seal", kind, str(bad), who="kli", rule="usage.secret-kind", code=2)
        assert f"no secret kind {kind!r} in this game. You can seal: note (free text" in line, line


# --- what is due stops the game, and is revealed ----------------------------------------------------------------

def test_a_secret_due_stops_the_game_for_its_owner(due: Table) -> None:
    """DESIGN §6: due at 1.4.move; replay has passed it, so the reveal is owed before anything else and kli
    cannot take a turn."""
    assert pending(due) == [("fed", "secret", f"reveal owed for secret fed-0001 (note, {CONCERNS})"),
                            ("fed", "horizon", "needs orders from 1.9.move")]
    assert "reveal owed for secret fed-0001" in ok(due, "status", who="fed")
    due.edit("kli", through="1.24.damage")
    refused(due, "yield", who="kli", rule="signature.not-in-control", where="status.yaml")


def test_yield_reveals_what_is_due_in_a_commit_of_its_own_then_the_turn(due: Table) -> None:
    """`pbem yield` adds the key of what is due (recovered from owner_box) and commits that alone; fed's turn
    follows in the next commit. The verifier opened the box, checked the hash and the schema (verify is ok)."""
    before = commit_count(due)
    due.edit("fed", through="1.16.damage")
    ok(due, "yield", "-m", "straight on", who="fed", real=True)
    assert commit_count(due) == before + 2
    assert changed_paths(due, "HEAD~1") == {S1, "status.yaml"}
    raw = secret(due, S1)
    assert opened(raw, bytes.fromhex(raw["key"])) == b'{"text":"' + PLAN.encode() + b'"}'
    assert "key" not in secret(due, S2) and "key" not in secret(due, S3)  # due at the end, not now
    assert "ok:" in ok(due, "verify")


def test_reveal_id_adds_the_key_then_yield_commits_it(due: Table) -> None:
    out = ok(due, "reveal", "fed-0001", who="fed", real=True)
    assert out.strip() == f"revealed fed-0001: {json.dumps({'text': PLAN})}"
    assert secret(due, S1)["key"] == recovered(due, secret(due, S1)).hex()
    ok(due, "yield", who="fed")
    assert "ok:" in ok(due, "verify")


def test_a_player_who_lost_every_file_but_his_key_reveals_from_a_fresh_clone(due: Table, tmp_path: Path) -> None:
    """DESIGN §6 "nothing must be kept outside the repo": a new machine (empty HOME), `git clone`, and only
    fed's key file: `pbem reveal fed-0001` recovers the key from owner_box; `pbem yield` commits it."""
    machine = tmp_path / "new-machine"
    (machine / "home").mkdir(parents=True)
    key = machine / "the_only_file_i_kept"
    key.write_bytes(due.key("fed").read_bytes())
    key.chmod(0o600)
    clone = machine / "game"
    subprocess.run(["git", "clone", "-q", str(due.repo_dir), str(clone)], env=clean_env(machine / "home"),
                   check=True, capture_output=True)
    env = clean_env(machine / "home", {"PBEM_KEY": str(key)})
    out = ok(due, "reveal", "fed-0001", cwd=clone, env=env)
    assert out.strip() == f"revealed fed-0001: {json.dumps({'text': PLAN})}"
    assert "committed" in ok(due, "yield", cwd=clone, env=env)
    there = Table(machine)
    raw = secret(there, S1)
    assert opened(raw, bytes.fromhex(raw["key"])) == b'{"text":"' + PLAN.encode() + b'"}'
    assert "ok:" in ok(there, "verify", env=env)


def test_reveal_of_an_unknown_secret_is_a_usage_error(due: Table) -> None:
    refused(due, "reveal", "s0099", who="fed", rule="usage.no-secret", code=2)


# --- the end of the game --------------------------------------------------------------------------------------------

def test_the_game_is_not_over_until_every_secret_is_revealed(ending: Table) -> None:
    """DESIGN §6: replay has reached the end, but fed's note (due at `end`) is unrevealed: he owes it and the
    game is not over; his `pbem yield` reveals it and ends the game."""
    status = ending.data("status.yaml")
    assert status["over"] is False and status["control"] == "fed"
    assert [(p, k) for p, k, _ in pending(ending)] == [("fed", "secret")]
    ok(ending, "yield", who="fed")
    assert ending.data("status.yaml")["over"] is True
    assert "key" in secret(ending, S1)
    assert "the game is over" in ok(ending, "status", who="kli")
    assert "ok:" in ok(ending, "verify")


def test_secret_unrevealed__a_game_declared_finished_with_a_secret_unrevealed(ending: Table) -> None:
    """A commit writing `over: true` while fed's note is still sealed is found (and its status is not what
    replay computes)."""
    ending.write("status.yaml", dump_mapping({"control": None, "firm": None, "pending": [], "over": True,
                                              "yielded_by": "fed", "note": "all done"}))
    bad = ending.sneak("fed", "fed: game over", status="keep")
    assert {"secret.unrevealed", "status.mismatch"} <= found(ending, bad, "secret.unrevealed", "status.yaml")
    assert "fed-0001" in next(f["message"] for f in findings(ending) if f["rule"] == "secret.unrevealed")


# --- bad input ------------------------------------------------------------------------------------------------------

def test_secret_not_owner__reveal_of_another_player_s_secret_is_refused(sealed: Table) -> None:
    """Only the owner reveals (DESIGN §6): kli's `pbem reveal fed-0001` is refused and changes nothing."""
    assert "is fed's, not yours" in refused(sealed, "reveal", "fed-0001", who="kli", rule="secret.not-owner")


def test_secret_not_owner__a_key_added_by_another_player_is_found(sealed: Table) -> None:
    """kli, in his turn, adds the key of fed's secret (suppose he learnt it): a reveal by someone other than
    its owner."""
    raw = secret(sealed, S1)
    write_secret(sealed, S1, {**raw, "key": recovered(sealed, raw).hex()})
    sealed.edit("kli", **{k: v for k, v in KLI_TURN_1.items() if k != "note"})
    bad = sneak_as(sealed, "kli", "kli: fed's plan, revealed")
    assert found(sealed, bad, "secret.not-owner", S1) == {"secret.not-owner"}


@pytest.mark.parametrize("path, field, value", [
    (S1, "box", None), (S1, "end", "end"), (S1, "concerns", "nothing much"),
], ids=["box", "end", "concerns"])
def test_secret_changed__a_sealed_file_changed_while_revealing_it(due: Table, path: str, field: str,
                                                                 value: Any) -> None:
    """A sealed secret never changes except that its owner adds the key (DESIGN §6): fed reveals fed-0001 and
    swaps its box for another plaintext's, postpones it, or rewrites what it concerns."""
    raw = secret(due, path)
    key = recovered(due, raw)
    if field == "box":
        value = base64.b64encode(seal.seal(b'{"text":"I turn to port"}', key_of(due, "fed").public, key).box).decode()
    write_secret(due, path, {**raw, field: value, "key": key.hex()})
    bad = sneak_as(due, "fed", "fed: revealed fed-0001")
    assert "secret.changed" in found(due, bad, "secret.changed", path)


@pytest.mark.parametrize("path, field", [(S1, "concerns"), (S2, "end")], ids=["revealed", "unrevealed"])
def test_secret_changed__yield_refuses_a_sealed_file_changed_after_sealing(revealed: Table, path: str,
                                                                          field: str) -> None:
    raw = secret(revealed, path)
    write_secret(revealed, path, {**raw, field: "2.32.final" if field == "end" else "nothing much"})
    revealed.edit("fed", through="1.16.damage")
    assert "changed after it was sealed" in refused(revealed, "yield", who="fed", rule="secret.changed", where=path)


def test_secret_changed__yield_refuses_a_sealed_file_changed_while_the_reveal_is_owed(due: Table) -> None:
    """Through pbem while the reveal is owed: refused whole with secret.changed; not even the reveal is committed."""
    write_secret(due, S1, {**secret(due, S1), "concerns": "nothing much"})
    refused(due, "yield", who="fed", rule="secret.changed", where=S1, real=False)


def test_secret_commit_mismatch__reveal_refuses_a_key_that_opens_the_box_but_fails_the_hash(revealed: Table) -> None:
    """fed-0002's box opens under its key, but key || plaintext does not hash to the `commit` sealed beforehand
    (a SecretBox is not key-committing: DESIGN §6). `pbem reveal` refuses it and changes nothing."""
    refused(revealed, "reveal", "fed-0002", who="fed", rule="secret.commit-mismatch", where=S2)


def test_secret_commit_mismatch__a_reveal_that_fails_the_hash_is_found(revealed: Table) -> None:
    raw = secret(revealed, S2)
    write_secret(revealed, S2, {**raw, "key": recovered(revealed, raw).hex()})
    revealed.edit("fed", through="1.16.damage")
    bad = sneak_as(revealed, "fed")
    assert found(revealed, bad, "secret.commit-mismatch", S2) == {"secret.commit-mismatch"}
    done = verify_text(revealed)
    assert done.returncode == 1 and f"{S2}: [secret.commit-mismatch] the box opens" in done.stdout
    assert f"(commit {bad[:10]})" in done.stdout


def test_secret_bad_key__a_key_that_does_not_open_the_box_is_found(revealed: Table) -> None:
    write_secret(revealed, S2, {**secret(revealed, S2), "key": "42" * 32})
    revealed.edit("fed", through="1.16.damage")
    bad = sneak_as(revealed, "fed")
    assert found(revealed, bad, "secret.bad-key", S2) == {"secret.bad-key"}


def test_schema_invalid__a_revealed_secret_that_is_not_of_its_kind(revealed: Table) -> None:
    """The verifier validates the plaintext against the kind's schema (pbem/secret/note/1): `pbem reveal`
    shows what is in the box, `pbem yield` refuses to commit it, and a hand-made commit is found."""
    assert '"orders": "fire everything"' in ok(revealed, "reveal", "fed-0009", who="fed")
    revealed.edit("fed", through="1.16.damage")
    refused(revealed, "yield", who="fed", rule="schema.invalid", where=S3)
    bad = sneak_as(revealed, "fed")
    assert found(revealed, bad, "schema.invalid", S3) == {"schema.invalid"}


# --- which kinds a game offers (`pbem seal` with no or a wrong KIND) ---------------------------------------------

@pytest.mark.parametrize(("template", "kinds"), [
    ("tactical-duel", ["note", "allocation"]),  # allocations sealed, no seeking weapon
    ("teaching-duel", ["note"]),  # the same duel with allocations open (tests/templates/tactical-duel)
    ("twirling-aces", ["note", "allocation", "target"]),
    ("tactical-melee", ["note", "allocation", "target"]),
    ("dow-standard", ["note", "orders"]),
])
def test_seal_offers_the_kinds_the_game_s_rules_ask_for(template: str, kinds: list[str]) -> None:
    """DESIGN §6: a note everywhere; a tactical allocation only where allocations are sealed, a target only where
    a weapon type seeks; Diplomacy orders. Each listed with its file by example, which its kind's schema accepts."""
    from types import SimpleNamespace

    from pbem.formats import schemas, yamlsafe
    from pbem.services import secret_kinds
    from pbem.files.readers import read_manifest

    games = Path(__file__).resolve().parents[1] / "games"
    folder = TEACHING_DUEL if template == "teaching-duel" else games / template
    path = folder / "game.yaml"
    game = SimpleNamespace(manifest=read_manifest(path.read_bytes()))
    offered = secret_kinds.secret_kinds(game)  # type: ignore[arg-type]
    assert [k.name for k in offered] == kinds
    for kind in offered:
        schemas.validate(f"pbem/secret/{kind.name}/1", yamlsafe.load(kind.example.encode(), "example").data,
                         file="example")
