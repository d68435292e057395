#!/usr/bin/env python3
"""Re-derive every dice roll of a pbem game from its files, without pbem (docs/dice.md, DESIGN §5).

Written from the documented contract alone, standard library and PyYAML only, so that it checks pbem rather than
repeating it. Give it a game repository's folder (a checkout, or any folder holding `game.yaml` and `dice/`):

    python tests/rederive_dice.py path/to/game

It prints one line per batch and exits 0 when every recorded `results` list equals the re-derived rolls, 1 when
some batch disagrees (or its reveal does not match its commitment), 2 when the files cannot be read.
Batches still waiting for contributions, a reveal or the escrow signature are listed as pending.
The escrow's Ed25519 signature is not verified here (the standard library has no Ed25519); see docs/dice.md.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

COMMIT_KEY = b"pbem-commit-v1"
CONTRIB_KEY = b"pbem-contrib-v1"
DICE_KEY = b"pbem-dice-v1"
HEX32 = re.compile(r"\A[0-9a-f]{64}\Z")  # DESIGN §5: lower-case hex, 64 digits for 32 bytes


class DiceMismatch(Exception):
    """Some batch's recorded results (or its reveal) disagree with the re-derivation."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class BadGame(Exception):
    """A file the script needs is missing or not in the documented layout."""


# --- the derivation, step by step as docs/dice.md writes it ---------------------------------------------------


def blake2b_256(data: bytes, key: bytes = b"") -> bytes:
    return hashlib.blake2b(data, digest_size=32, key=key).digest()


def commitment(secret: bytes) -> bytes:
    return blake2b_256(secret, key=COMMIT_KEY)


def seed_commit_reveal(game_id: str, batch_id: str, roller_secret: bytes, contributions: Sequence[bytes]) -> bytes:
    data = game_id.encode() + b"\x00" + batch_id.encode() + b"\x00" + roller_secret + b"".join(contributions)
    return blake2b_256(data, key=DICE_KEY)


def seed_escrow(signature: bytes) -> bytes:
    return blake2b_256(signature, key=DICE_KEY)


def draw(seed: bytes, j: int, k: int) -> int:
    h = blake2b_256(seed + j.to_bytes(4, "big") + k.to_bytes(4, "big"))
    return int.from_bytes(h[:8], "big")


def roll(seed: bytes, sides: int, j: int) -> int:
    limit = (2**64 // sides) * sides
    k = 0
    while True:
        v = draw(seed, j, k)
        if v < limit:
            return v % sides + 1
        k += 1


def rolls(seed: bytes, sides: int, count: int) -> list[int]:
    return [roll(seed, sides, j) for j in range(count)]


def first_player(seed: bytes, players: Sequence[str]) -> str:
    return players[0] if len(players) == 1 else players[roll(seed, len(players), 0) - 1]


# --- reading the game's files ------------------------------------------------------------------------------------


def _load(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BadGame(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise BadGame(f"{path}: expected a mapping")
    return data


def _hex32(value: Any, where: str) -> bytes:
    if not isinstance(value, str) or not HEX32.match(value):
        raise BadGame(f"{where}: expected 64 lower-case hex digits, got {value!r}")
    return bytes.fromhex(value)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadGame(f"{where}: expected a string, got {value!r}")
    return value


def _batch_seed(game_id: str, table: list[str], default_mode: str, batch: dict[str, Any], where: str) -> bytes | None:
    """The batch's seed S, or None while the batch is still waiting for something."""
    batch_id = _text(batch.get("id"), f"{where}: id")
    mode = batch.get("mode", default_mode)
    if mode == "escrow":
        signature = batch.get("escrow")
        if signature is None:
            return None
        try:
            raw = base64.b64decode(_text(signature, f"{where}: escrow"), validate=True)
        except binascii.Error:
            raise BadGame(f"{where}: escrow: not base64") from None
        if len(raw) != 64:
            raise BadGame(f"{where}: escrow: expected a 64-byte signature, got {len(raw)} bytes")
        return seed_escrow(raw)
    if mode != "commit-reveal":
        raise BadGame(f"{where}: unknown mode {mode!r}")
    roller = _text(batch.get("roller"), f"{where}: roller")
    if roller not in table:
        raise BadGame(f"{where}: roller {roller!r} is not a player of game.yaml")
    given = batch.get("contributions") or {}
    if not isinstance(given, dict):
        raise BadGame(f"{where}: contributions: expected a mapping of player id to hex")
    strangers = sorted(str(player) for player in given if player not in table or player == roller)
    if strangers:
        raise BadGame(f"{where}: contributions from {strangers} (only the other players contribute)")
    others = [player for player in table if player != roller]  # table order, roller left out
    if batch.get("reveal") is None or any(player not in given for player in others):
        return None
    secret = _hex32(batch["reveal"], f"{where}: reveal")
    committed = _hex32(batch.get("commit"), f"{where}: commit")
    if commitment(secret) != committed:
        raise DiceMismatch([f"{batch_id}: the reveal does not match the roller's commitment"])
    contributions = [_hex32(given[player], f"{where}: contributions.{player}") for player in others]
    commits = batch.get("contribution_commits")
    if commits:  # three or more players: each contribution opens the commitment made before any reveal
        if not isinstance(commits, dict):
            raise BadGame(f"{where}: contribution_commits: expected a mapping of player id to hex")
        for player, value in zip(others, contributions):
            if player not in commits or blake2b_256(value, key=CONTRIB_KEY) != _hex32(
                    commits[player], f"{where}: contribution_commits.{player}"):
                raise DiceMismatch([f"{batch_id}: {player}'s contribution does not open his commitment"])
    return seed_commit_reveal(game_id, batch_id, secret, contributions)


def survey(game_dir: Path) -> tuple[dict[str, list[int]], list[str], list[str]]:
    """(rolls by batch id, problems found, ids of batches still pending) for the game in `game_dir`."""
    game_dir = Path(game_dir)
    game = _load(game_dir / "game.yaml")
    game_id = _text(game.get("id"), "game.yaml: id")
    players = game.get("players")
    if not isinstance(players, list) or not players:
        raise BadGame("game.yaml: players: expected a list")
    table = [_text(p.get("id") if isinstance(p, dict) else None, "game.yaml: players[].id") for p in players]
    default_mode = (game.get("dice") or {}).get("mode", "commit-reveal")
    derived: dict[str, list[int]] = {}
    problems: list[str] = []
    pending: list[str] = []
    for path in sorted((game_dir / "dice").glob("*.yaml")):
        where = f"dice/{path.name}"
        batch = _load(path)
        try:
            seed = _batch_seed(game_id, table, default_mode, batch, where)
        except DiceMismatch as exc:
            problems.extend(exc.problems)
            continue
        batch_id = batch["id"]
        recorded = batch.get("results")
        if seed is None:
            if "void" not in batch:  # a batch voided before it could be rolled never will be
                pending.append(batch_id)
            if recorded is not None:
                problems.append(f"{batch_id}: results recorded before the batch could be rolled")
            continue
        sides = batch.get("sides", 6)
        purposes = batch.get("rolls")
        if isinstance(sides, bool) or not isinstance(sides, int) or not 2 <= sides <= 1000:
            raise BadGame(f"{where}: sides: expected 2 to 1000, got {sides!r}")
        if not isinstance(purposes, list):
            raise BadGame(f"{where}: rolls: expected a list of purposes")
        derived[batch_id] = rolls(seed, sides, len(purposes))
        if recorded is not None and recorded != derived[batch_id]:
            problems.append(f"{batch_id}: recorded {recorded}, re-derived {derived[batch_id]}")
    return derived, problems, pending


def rederive(game_dir: Path, *, check: bool = True) -> dict[str, list[int]]:
    """Every rollable batch's rolls, by batch id; with `check`, raise DiceMismatch when a batch disagrees."""
    derived, problems, _pending = survey(game_dir)
    if check and problems:
        raise DiceMismatch(problems)
    return derived


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: rederive_dice.py GAME_DIR", file=sys.stderr)
        return 2
    try:
        derived, problems, pending = survey(Path(argv[0]))
    except BadGame as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for batch_id, values in derived.items():
        print(f"{batch_id}: {' '.join(map(str, values))}")
    for batch_id in pending:
        print(f"{batch_id}: pending")
    for problem in problems:
        print(f"MISMATCH {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
