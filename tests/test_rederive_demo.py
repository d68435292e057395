"""Issue 3, "done when": a demo game rolls dice in both modes and reveals secrets, and an independent script in
tests/ re-derives every roll of it from the repo files alone and agrees.

`pbem demo DIR` (games/tactical-duel/demo.yaml) is run once. tests/rederive_dice.py then runs as a player would
run it (a subprocess in which any import of pbem fails) on the final checkout and on the files of every commit
that touched dice/, and must agree with every recorded result. The escrow's signature and the secrets are
checked here too, with PyNaCl and hashlib directly, from docs/dice.md and DESIGN §6 rather than pbem's code.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
import tarfile
from pathlib import Path
from typing import Any

import nacl.secret
import nacl.signing
import pytest
import yaml

from conftest import Table
from test_dice_flow import escrow_message, ok, rederive

DEMO_SCRIPT = Path(__file__).resolve().parents[1] / "games" / "tactical-duel" / "demo.yaml"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """`pbem demo DIR`, once: DIR/game is the game, DIR/keys the generated keys (DIR/home a clean HOME)."""
    table = Table(tmp_path_factory.mktemp("demo"))
    table.home.mkdir()
    done = table.pbem("demo", str(table.root), cwd=table.root)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    return table


def files_of(folder: Path, kind: str) -> dict[str, dict[str, Any]]:
    """The YAML files of dice/ or secrets/ in `folder`, by id (read with PyYAML, as a player's script would)."""
    return {path.stem: yaml.safe_load(path.read_text()) for path in sorted((folder / kind).glob("*.yaml"))}


def script_rolls(stdout: str) -> tuple[dict[str, list[int]], list[str]]:
    """rederive_dice.py's output: `bNNNN: 3 4` per rolled batch, `bNNNN: pending` per waiting one."""
    rolled: dict[str, list[int]] = {}
    waiting = []
    for line in stdout.splitlines():
        batch_id, _, rest = line.partition(": ")
        if rest == "pending":
            waiting.append(batch_id)
        else:
            rolled[batch_id] = [int(v) for v in rest.split()]
    return rolled, waiting


def test_the_demo_rolls_dice_in_both_modes_and_reveals_its_secrets(demo: Table) -> None:
    batches = files_of(demo.repo_dir, "dice")
    assert {b["mode"] for b in batches.values()} == {"commit-reveal", "escrow"}
    assert all(b.get("results") and "void" not in b for b in batches.values())
    secrets = files_of(demo.repo_dir, "secrets")
    assert len(secrets) >= 2 and all("key" in s for s in secrets.values())
    assert demo.data("status.yaml")["over"] is True
    assert "ok:" in ok(demo, "verify")


def test_the_independent_script_rederives_every_roll_of_the_demo_and_agrees(demo: Table) -> None:
    """rederive_dice.py, which cannot import pbem, re-derives each batch from game.yaml and dice/ alone; its
    rolls are the recorded results of every batch, in both modes."""
    done = rederive(demo.repo_dir)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    rolled, waiting = script_rolls(done.stdout)
    assert waiting == []
    assert rolled == {batch_id: b["results"] for batch_id, b in files_of(demo.repo_dir, "dice").items()}


def test_every_commit_that_touched_dice_rederives_from_its_own_files(demo: Table, tmp_path: Path) -> None:
    """The files of each commit that changed dice/ (announced, contributed, revealed, signed by the escrow),
    re-derived by the script: every result recorded at that commit agrees, and each batch is first pending,
    then rolled."""
    commits = demo.git("log", "--reverse", "--format=%H", "--", "dice").stdout.decode().split()
    assert len(commits) >= 4
    seen: dict[str, list[str]] = {}
    for number, oid in enumerate(commits):
        folder = tmp_path / f"{number:02d}-{oid[:10]}"
        archive = demo.git("archive", "--format=tar", oid).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:  # the commit's files, as a checkout would have them
            for member in tar.getmembers():
                if member.isfile():
                    target = folder / member.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(member).read())  # type: ignore[union-attr]
        done = rederive(folder)
        assert done.returncode == 0, f"{oid}: {done.stderr}"
        rolled, waiting = script_rolls(done.stdout)
        recorded = {i: b["results"] for i, b in files_of(folder, "dice").items() if "results" in b}
        assert rolled == recorded, oid
        for batch_id in waiting:
            seen.setdefault(batch_id, []).append("pending")
        for batch_id in rolled:
            seen.setdefault(batch_id, []).append("rolled")
    for batch_id, states in seen.items():
        assert states[0] == "pending" and states[-1] == "rolled", (batch_id, states)


def test_the_escrow_signed_each_escrow_batch_with_the_key_named_in_game_yaml(demo: Table) -> None:
    """docs/dice.md: the escrow signs prefix || game id || 0 || batch id || 0 || sha256(canonical batch); any
    Ed25519 library checks it against game.yaml's `dice.escrow_key`."""
    game = demo.data("game.yaml")
    line = game["dice"]["escrow_key"]
    verify_key = nacl.signing.VerifyKey(base64.b64decode(line.split()[1])[-32:])
    escrow_batches = [b for b in files_of(demo.repo_dir, "dice").values() if b["mode"] == "escrow"]
    assert escrow_batches
    for raw in escrow_batches:
        verify_key.verify(escrow_message(raw, game["id"]), base64.b64decode(raw["escrow"]))


def test_pbem_dice_show_prints_the_same_results(demo: Table) -> None:
    for batch_id, raw in files_of(demo.repo_dir, "dice").items():
        shown = ok(demo, "dice", "show", batch_id).splitlines()
        assert shown[0].startswith(f"dice {batch_id}: d{raw['sides']}, {raw['mode']}, rolled by {raw['roller']}")
        got = [int(re.match(r"\s+\d+\.\s+(\d+)\s", line).group(1)) for line in shown[1:]]  # type: ignore[union-attr]
        assert got == raw["results"]


def test_the_demo_secrets_open_under_their_keys_and_match_their_commitments(demo: Table) -> None:
    """DESIGN §6, checked with nacl and hashlib directly: each revealed key opens its box, key || plaintext
    hashes to the commitment sealed beforehand, and the plaintexts are the notes and energy allocations demo.yaml
    sealed. Each allocation's speeds part, opened at its turn start, is the speeds in its box, and its salt and
    commitment are those docs/tactical.md gives (the salt from the box key, the part's canonical JSON)."""
    script = yaml.safe_load(DEMO_SCRIPT.read_text())
    seals = [turn["seal"] for turn in script["turns"] if "seal" in turn]
    sealed = sorted(json.dumps({"text": s["text"]} if s["kind"] == "note" else s["value"], sort_keys=True)
                    for s in seals)
    opened = []
    for raw in files_of(demo.repo_dir, "secrets").values():
        key = bytes.fromhex(raw["key"])
        plaintext = nacl.secret.SecretBox(key).decrypt(base64.b64decode(raw["box"]))
        assert hashlib.blake2b(key + plaintext, digest_size=32, key=b"pbem-seal-v1").hexdigest() == raw["commit"]
        value = json.loads(plaintext)
        opened.append(json.dumps(value, sort_keys=True))
        if raw["kind"] == "allocation":
            assert raw["part"] == {"units": {u: {"speed": line["speed"]} for u, line in value["units"].items()}}
            salt = hashlib.blake2b(key, digest_size=32, key=b"pbem-part-salt-v1").digest()
            assert raw["part_salt"] == salt.hex()
            canonical = json.dumps(raw["part"], sort_keys=True, separators=(",", ":")).encode()
            part_commit = hashlib.blake2b(salt + canonical, digest_size=32, key=b"pbem-part-v1").hexdigest()
            assert part_commit == raw["part_commit"]
    assert sorted(opened) == sealed
    assert sum(s["kind"] == "allocation" for s in seals) == 6  # three turns, two captains


def test_the_script_names_a_batch_whose_result_was_changed(demo: Table, tmp_path: Path) -> None:
    copy = tmp_path / "game"
    shutil.copytree(demo.repo_dir, copy, ignore=shutil.ignore_patterns(".git"))
    path = copy / "dice" / "fed-0001.yaml"
    raw = yaml.safe_load(path.read_text())
    changed = [raw["results"][0] % raw["sides"] + 1, *raw["results"][1:]]
    path.write_text(re.sub(r"(?m)^results: .*$", f"results: {changed}", path.read_text()))
    done = rederive(copy)
    assert done.returncode == 1
    assert f"MISMATCH fed-0001: recorded {changed}, re-derived {raw['results']}" in done.stderr
