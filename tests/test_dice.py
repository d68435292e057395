"""Dice (DESIGN §5, seed 000 §2.D): the derivation contract, its vectors, and an independent re-derivation.

The vectors live in docs/dice.md and are read from there, so the page a player checks against cannot drift from
pbem (`pbem.crypto.dice`) nor from the independent script (`tests/rederive_dice.py`).
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import nacl.signing
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import rederive_dice
from pbem.crypto import dice
from pbem.errors import ILLEGAL, PbemError

DOCS = Path(__file__).resolve().parents[1] / "docs" / "dice.md"
_VECTOR_BLOCK = re.compile(r"^```yaml vector\n(.*?)^```", re.S | re.M)

ROLLER = bytes(range(32))
OTHER = b"\xff" * 32
secrets32 = st.binary(min_size=32, max_size=32)
ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)


def doc_vectors() -> list[dict[str, Any]]:
    return [yaml.safe_load(block) for block in _VECTOR_BLOCK.findall(DOCS.read_text(encoding="utf-8"))]


VECTORS = doc_vectors()


def _sides(name: str) -> int:
    assert name.startswith("d"), name
    return int(name[1:])


def _seed_from(vector: dict[str, Any], impl: Any) -> bytes:
    """The vector's seed computed by `impl` (pbem.crypto.dice or the independent script)."""
    if "signature" in vector:
        return impl.seed_escrow(base64.b64decode(vector["signature"], validate=True))
    contributions = [bytes.fromhex(c) for c in vector["contributions"]]
    return impl.seed_commit_reveal(
        vector["game_id"], vector["batch_id"], bytes.fromhex(vector["roller_secret"]), contributions
    )


# --- DESIGN §5 test vector -------------------------------------------------------------------------------------


def test_design_vector_commitment_seed_and_rolls() -> None:
    assert dice.commitment(ROLLER).hex() == "8c1d431deb3a2693ed9f39402785bf2181d4cddbf51e2fe0e3c944bef8535094"
    seed = dice.seed_commit_reveal("twirling-aces-601", "b0001", ROLLER, [OTHER])
    assert seed.hex() == "8122cad5828da4c5e9b91e787f606cd62c0c8c2facf84d411e70977c9109155b"
    assert dice.rolls(seed, 6, 8) == [3, 4, 6, 2, 3, 4, 4, 2]
    assert dice.rolls(seed, 20, 4) == [15, 8, 4, 16]


def test_design_vector_uses_blake2b_key_parameter_not_a_prefix() -> None:
    keyed = hashlib.blake2b(ROLLER, digest_size=32, key=dice.COMMIT_KEY).digest()
    prefixed = hashlib.blake2b(dice.COMMIT_KEY + ROLLER, digest_size=32).digest()
    assert dice.commitment(ROLLER) == keyed != prefixed


# --- docs/dice.md vectors, against pbem and against the independent script ----------------------------------------


def test_docs_hold_the_vectors_the_contract_promises() -> None:
    names = [v["name"] for v in VECTORS]
    assert len(VECTORS) >= 6 and len(set(names)) == len(names)
    dice_kinds = {name for v in VECTORS for name in v["rolls"]}
    assert {"d6", "d20", "d100", "d2"} <= dice_kinds
    counts = {len(v["contributions"]) for v in VECTORS if "contributions" in v}
    assert {0, 1, 3} <= counts
    assert any("signature" in v for v in VECTORS)
    design = next(v for v in VECTORS if v["name"] == "design")
    assert design["seed"] == "8122cad5828da4c5e9b91e787f606cd62c0c8c2facf84d411e70977c9109155b"


@pytest.mark.parametrize("impl", [dice, rederive_dice], ids=["pbem", "rederive_dice"])
@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_docs_vector(vector: dict[str, Any], impl: Any) -> None:
    seed = _seed_from(vector, impl)
    assert seed.hex() == vector["seed"]
    if "commit" in vector:
        assert impl.commitment(bytes.fromhex(vector["roller_secret"])).hex() == vector["commit"]
    for name, expected in vector["rolls"].items():
        assert impl.rolls(seed, _sides(name), len(expected)) == expected, name
    if "first_player" in vector:
        table = vector["first_player"]
        assert impl.first_player(seed, table["players"]) == table["starts"]


def test_docs_escrow_vector_is_a_real_signature_of_the_announced_batch() -> None:
    vector = next(v for v in VECTORS if "signature" in v)
    key = nacl.signing.SigningKey(bytes.fromhex(vector["escrow_private_seed"]))
    assert bytes(key.verify_key).hex() == vector["escrow_public_key"]
    batch = json.loads(vector["canonical_batch"])
    # The fields the signature produces are left out of what it signs (docs/dice.md, "Escrow mode").
    signed_later = {**batch, "escrow": vector["signature"], "results": vector["rolls"]["d6"]}
    canonical_batch = dice.announced_batch(signed_later)
    assert canonical_batch == vector["canonical_batch"].encode("utf-8")
    message = dice.escrow_message(vector["game_id"], vector["batch_id"], canonical_batch)
    assert message.hex() == vector["message"]
    signature = base64.b64decode(vector["signature"])
    assert bytes(key.sign(message).signature) == signature  # Ed25519 is deterministic
    key.verify_key.verify(message, signature)


# --- rejection sampling: exact, not statistical -----------------------------------------------------------------


@given(st.integers(min_value=2, max_value=1000))
def test_threshold_is_the_largest_multiple_of_sides_in_64_bits(sides: int) -> None:
    t = dice.threshold(sides)
    assert t % sides == 0 and 0 <= 2**64 - t < sides


@given(st.integers(min_value=2, max_value=1000))
def test_draws_just_below_the_threshold_are_accepted_and_at_it_rejected(sides: int) -> None:
    t = dice.threshold(sides)
    assert dice.face(t - 1, sides) == sides  # t - 1 ≡ -1 (mod sides): the highest face
    assert dice.face(0, sides) == 1
    if t < 2**64:
        assert dice.face(t, sides) is None
        assert dice.face(2**64 - 1, sides) is None
    else:  # a power of two divides 2^64: no 64-bit draw is ever thrown away
        assert sides & (sides - 1) == 0


@given(st.integers(min_value=2, max_value=1000), st.integers(min_value=0, max_value=2**64 // 1000 - 3))
def test_every_face_has_the_same_number_of_accepted_values(sides: int, block: int) -> None:
    # Faces repeat with period `sides` below the threshold and nothing at or above it is used: any window of
    # whole periods below t holds each face equally often, and every accepted value lies in such a window.
    start = min(block * sides, dice.threshold(sides) - 2 * sides)
    faces = [dice.face(v, sides) for v in range(start, start + 2 * sides)]
    assert sorted(faces) == sorted(list(range(1, sides + 1)) * 2)


@pytest.mark.parametrize("impl", [dice, rederive_dice], ids=["pbem", "rederive_dice"])
def test_a_rejected_draw_moves_on_to_the_next_k(impl: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sides = 6
    t = dice.threshold(sides)
    forged = {0: t, 1: 2**64 - 1, 2: t - 1}  # rejected, rejected, accepted (face 6)
    seen: list[int] = []

    def fake_draw(seed: bytes, j: int, k: int) -> int:
        seen.append(k)
        return forged[k]

    monkeypatch.setattr(impl, "draw", fake_draw)
    assert impl.roll(bytes(32), sides, 0) == 6
    assert seen == [0, 1, 2]


def test_draw_is_the_unkeyed_hash_of_seed_j_and_k() -> None:
    seed = bytes.fromhex(VECTORS[0]["seed"])
    h = hashlib.blake2b(seed + (3).to_bytes(4, "big") + (0).to_bytes(4, "big"), digest_size=32).digest()
    assert dice.draw(seed, 3, 0) == int.from_bytes(h[:8], "big") == rederive_dice.draw(seed, 3, 0)
    assert dice.roll(seed, 6, 3) == int.from_bytes(h[:8], "big") % 6 + 1  # accepted at k = 0, as nearly always


# --- properties ------------------------------------------------------------------------------------------------


@given(secrets32, st.integers(min_value=2, max_value=1000), st.integers(min_value=0, max_value=12))
def test_rolls_are_in_range_stable_and_prefix_consistent(seed: bytes, sides: int, count: int) -> None:
    first = dice.rolls(seed, sides, count)
    assert all(1 <= r <= sides for r in first)
    assert dice.rolls(seed, sides, count) == first
    assert dice.rolls(seed, sides, count + 1)[:count] == first
    assert first == [dice.roll(seed, sides, j) for j in range(count)]


@settings(max_examples=50)
@given(ids, ids, secrets32, st.lists(secrets32, max_size=4), st.integers(min_value=2, max_value=1000))
def test_the_independent_script_agrees_with_pbem(
    game_id: str, batch_id: str, roller: bytes, others: list[bytes], sides: int
) -> None:
    seed = dice.seed_commit_reveal(game_id, batch_id, roller, others)
    assert seed == rederive_dice.seed_commit_reveal(game_id, batch_id, roller, others)
    assert dice.rolls(seed, sides, 5) == rederive_dice.rolls(seed, sides, 5)
    assert dice.commitment(roller) == rederive_dice.commitment(roller)


def test_rolls_are_uniform_over_many_seeds() -> None:
    # Deterministic seeds, so this either always passes or always fails (no flakes). Bounds are far out:
    # p < 1e-6 for a fair die (chi-square critical values: 5 dof 35.9, 19 dof 58.1), while a mod-bias or an
    # off-by-one face would blow through them.
    for sides, bound in ((6, 36.0), (20, 58.5)):
        counts = [0] * sides
        n = 600 * sides
        for i in range(n // 4):
            seed = hashlib.blake2b(i.to_bytes(4, "big"), digest_size=32, person=b"uniformity").digest()
            for value in dice.rolls(seed, sides, 4):
                counts[value - 1] += 1
        expected = n / sides
        chi2 = sum((c - expected) ** 2 / expected for c in counts)
        assert chi2 < bound, (sides, counts)


@given(secrets32, secrets32, secrets32)
def test_contribution_order_matters(roller: bytes, a: bytes, b: bytes) -> None:
    if a != b:
        assert dice.seed_commit_reveal("g", "b1", roller, [a, b]) != dice.seed_commit_reveal("g", "b1", roller, [b, a])


@given(secrets32, secrets32, secrets32)
def test_never_xor_a_copied_contribution_does_not_cancel(roller: bytes, a: bytes, b: bytes) -> None:
    alone = dice.seed_commit_reveal("g", "b1", roller, [])
    assert dice.seed_commit_reveal("g", "b1", roller, [a, a]) != alone
    if a != b:
        assert dice.seed_commit_reveal("g", "b1", roller, [a, a]) != dice.seed_commit_reveal("g", "b1", roller, [b, b])


@given(ids, ids, ids, secrets32, secrets32)
def test_game_id_and_batch_id_separate_domains(game: str, batch: str, other: str, roller: bytes, s: bytes) -> None:
    seed = dice.seed_commit_reveal(game, batch, roller, [s])
    if other != game:
        assert dice.seed_commit_reveal(other, batch, roller, [s]) != seed
    if other != batch:
        assert dice.seed_commit_reveal(game, other, roller, [s]) != seed


def test_the_zero_separator_keeps_id_boundaries_apart() -> None:
    assert dice.seed_commit_reveal("ab", "c", ROLLER, []) != dice.seed_commit_reveal("a", "bc", ROLLER, [])
    message = dice.escrow_message("ab", "c", b"{}")
    assert message != dice.escrow_message("a", "bc", b"{}")
    assert message == b"pbem-escrow-v1ab\x00c\x00" + hashlib.sha256(b"{}").digest()


def test_escrow_seed_is_the_keyed_hash_of_the_signature() -> None:
    signature = bytes(range(64))
    expected = hashlib.blake2b(signature, digest_size=32, key=b"pbem-dice-v1").digest()
    assert dice.seed_escrow(signature) == expected == rederive_dice.seed_escrow(signature)


def test_fresh_secrets_are_32_fresh_bytes() -> None:
    first, second = dice.fresh_secret(), dice.fresh_secret()
    assert len(first) == len(second) == 32 and first != second


# --- who starts -------------------------------------------------------------------------------------------------


def test_first_player_is_roll_zero_over_the_table() -> None:
    seed = bytes.fromhex(VECTORS[0]["seed"])
    table = ["fed", "kli", "rom", "gor"]
    assert dice.first_player(seed, table) == table[dice.roll(seed, 4, 0) - 1]
    assert dice.first_player(seed, ["solo"]) == "solo"


def test_every_seat_can_start() -> None:
    table = ["fed", "kli", "rom"]
    starters = {dice.first_player(hashlib.sha256(bytes([i])).digest(), table) for i in range(60)}
    assert starters == set(table)


# --- bad input: each names its rule ------------------------------------------------------------------------------


@pytest.mark.parametrize("secret", [b"", bytes(31), bytes(33), "00" * 32])
def test_a_secret_must_be_32_bytes(secret: Any) -> None:
    for call in (
        lambda: dice.commitment(secret),
        lambda: dice.seed_commit_reveal("g", "b", secret, []),
        lambda: dice.seed_commit_reveal("g", "b", ROLLER, [OTHER, secret]),
    ):
        with pytest.raises(PbemError) as caught:
            call()
        assert caught.value.finding.rule == "dice.bad-secret" and caught.value.exit_code == ILLEGAL


@pytest.mark.parametrize("sides", [-6, 0, 1, 1001, True, 6.0, "6"])
def test_a_die_has_2_to_1000_sides(sides: Any) -> None:
    for call in (lambda: dice.roll(bytes(32), sides, 0), lambda: dice.rolls(bytes(32), sides, 1)):
        with pytest.raises(PbemError) as caught:
            call()
        assert caught.value.finding.rule == "dice.bad-sides" and caught.value.exit_code == ILLEGAL


@pytest.mark.parametrize(("game_id", "batch_id"), [("", "b1"), ("g", ""), ("g\x00x", "b1"), ("g", "b\x001")])
def test_ids_are_non_empty_and_free_of_the_separator(game_id: str, batch_id: str) -> None:
    for call in (
        lambda: dice.seed_commit_reveal(game_id, batch_id, ROLLER, []),
        lambda: dice.escrow_message(game_id, batch_id, b"{}"),
    ):
        with pytest.raises(PbemError) as caught:
            call()
        assert caught.value.finding.rule == "dice.bad-id"


def test_bad_seeds_signatures_counts_and_tables() -> None:
    cases = [
        (lambda: dice.roll(bytes(31), 6, 0), "dice.bad-seed"),
        (lambda: dice.seed_escrow(bytes(63)), "dice.bad-escrow"),
        (lambda: dice.rolls(bytes(32), 6, -1), "dice.bad-count"),
        (lambda: dice.roll(bytes(32), 6, 2**32), "dice.bad-count"),
        (lambda: dice.first_player(bytes(32), []), "dice.no-players"),
    ]
    for call, rule in cases:
        with pytest.raises(PbemError) as caught:
            call()
        assert caught.value.finding.rule == rule


# --- the independent re-derivation script on a game folder -------------------------------------------------------


def _game(tmp_path: Path, batches: dict[str, dict[str, Any]], mode: str = "commit-reveal") -> Path:
    game = {
        "format": "pbem/1",
        "id": "twirling-aces-601",
        "ruleset": "tactical/1",
        "players": [{"id": p} for p in ("fed", "kli", "rom", "gor")],
        "dice": {"mode": mode},
    }
    (tmp_path / "dice").mkdir()
    (tmp_path / "game.yaml").write_text(yaml.safe_dump(game), encoding="utf-8")
    for name, batch in batches.items():
        (tmp_path / "dice" / f"{name}.yaml").write_text(yaml.safe_dump(batch), encoding="utf-8")
    return tmp_path


def _three_contributions_batch() -> dict[str, Any]:
    vector = next(v for v in VECTORS if v["name"] == "three-contributions")
    # Roller kli; the others in table order are fed, rom, gor — written in the file in another order on purpose.
    given = dict(zip(["gor", "fed", "rom"], [vector["contributions"][i] for i in (2, 0, 1)]))
    return {
        "id": vector["batch_id"],
        "roller": "kli",
        "mode": "commit-reveal",
        "sides": 6,
        "rolls": [{"for": f"shot {j}", "ref": f"1.4.fire/CA/ph{j}"} for j in range(6)],
        "commit": vector["commit"],
        "contributions": given,
        "reveal": vector["roller_secret"],
        "results": vector["rolls"]["d6"],
    }


def _escrow_batch() -> dict[str, Any]:
    vector = next(v for v in VECTORS if "signature" in v)
    batch = json.loads(vector["canonical_batch"])
    return {**batch, "escrow": vector["signature"], "results": vector["rolls"]["d6"]}


def test_rederive_reads_a_game_folder(tmp_path: Path) -> None:
    pending = {**_three_contributions_batch(), "id": "b0043"}
    del pending["reveal"], pending["results"]  # kli has not revealed yet
    game = _game(tmp_path, {"b0042": _three_contributions_batch(), "b0003": _escrow_batch(), "b0043": pending})
    assert rederive_dice.rederive(game) == {"b0003": [2, 3], "b0042": [1, 2, 4, 5, 6, 4]}
    assert rederive_dice.main([str(game)]) == 0


@pytest.mark.parametrize(
    "tamper",
    [
        lambda b: b.update(results=[1, 2, 4, 5, 6, 5]),
        lambda b: b.update(reveal="00" * 32),
        lambda b: b["contributions"].update(fed=b["contributions"]["rom"], rom=b["contributions"]["fed"]),
    ],
    ids=["results", "reveal", "contribution-order"],
)
def test_rederive_rejects_a_tampered_batch(tmp_path: Path, tamper: Any, capsys: pytest.CaptureFixture[str]) -> None:
    batch = _three_contributions_batch()
    tamper(batch)
    game = _game(tmp_path, {"b0042": batch})
    with pytest.raises(rederive_dice.DiceMismatch):
        rederive_dice.rederive(game)
    assert rederive_dice.main([str(game)]) == 1
    assert "MISMATCH b0042" in capsys.readouterr().err


def test_rederive_script_runs_on_its_own_without_pbem(tmp_path: Path) -> None:
    script = Path(rederive_dice.__file__)
    imported = set()
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "base64", "binascii", "hashlib", "re", "sys", "collections", "pathlib",
                        "typing", "yaml"}
    game = _game(tmp_path, {"b0042": _three_contributions_batch()})
    # Run as a player would, with any import of pbem made to fail.
    runner = (
        "import runpy, sys; sys.modules['pbem'] = None; sys.argv = sys.argv[1:]; "
        "runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", runner, str(script), str(game)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "b0042: 1 2 4 5 6 4\n"
