"""Property test (issue 7, "no way in"): the verifier on randomly corrupted game repositories never crashes.

A real game is built once (the tactical duel of `pbem demo`: joins, a start, dice in both modes, sealed secrets,
40-odd signed commits). Each example corrupts one commit of its history the way a cheater or a broken tool
could, commits the corruption signed, replays the later commits on top of it (each re-signed by its own
player, so the corruption sits inside an otherwise well-signed history) and runs `verify_history` on the new
tip. The verifier must return findings (or none); a `PbemError` may end it (DESIGN §8: the CLI turns it into
one line and exit 1 or 2); any other exception is a bug a player would see as a traceback.

Corruptions: flip bytes in a blob; rewrite a file with random YAML; drop or duplicate a line; swap two commits
by re-committing them; re-sign a commit as the wrong player (or a stranger); add a stray file; remove a file;
change a file's mode (executable, symbolic link, submodule, folder).

The CLI is run on a few fixed corruptions of each kind too: `pbem verify` exits 0 or 1 and prints no traceback.
"""

from __future__ import annotations

import os
import random
import subprocess
from unittest import mock
from pathlib import Path
from typing import Any, Callable

import pygit2
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.enums import ObjectType

from conftest import PBEM
from gitutil import clean_env, fixed_key
from pbem.crypto import sshsig
from pbem.crypto.keys import PrivateKey, load_private_key
from pbem.errors import PbemError
from pbem.store.commits import parse_commit, with_signature
from pbem.store.repo import GameRepo
from pbem.verify import fetch
from pbem.verify.history import verify_history

Files = dict[str, tuple[str, int]]  # path -> (blob id, mode)
KINDS = ["flip-bytes", "random-yaml", "drop-line", "duplicate-line", "swap-commits", "wrong-signer", "stray-file",
         "remove-file", "change-mode"]
STRAY_PATHS = ["notes.txt", "players/carol.yaml", "report/turn-09.yaml", "dice/fed-0099.yaml", "secrets/kli-0099.yaml",
               "press/global.yaml", ".gitattributes", "players/FED.yaml", "report/x/../y.yaml", "game.yaml.orig",
               ".github/workflows/evil.yml", "status.yaml\u200b", "README.md"]
MODES = [0o100755, 0o120000, 0o160000, 0o40000]
# Examples per property: the suite runs a short search (each example verifies a 40-commit history twice over, with
# PBEM_CROSSCHECK); `bench/fuzz_verifier.py` runs these properties with PBEM_FUZZ_SCALE times as many.
SCALE = int(os.environ.get("PBEM_FUZZ_SCALE") or 1)


# --- the game, built once ----------------------------------------------------------------------------------------

class Game:
    """The demo game's repository, its first-parent history (root first) and every key that signed it."""

    def __init__(self, path: Path, repo: pygit2.Repository, chain: list[str], keys: dict[bytes, PrivateKey]) -> None:
        self.path, self.repo, self.chain = path, repo, chain
        self.keys = keys  # raw public key -> private key

    def __repr__(self) -> str:  # hypothesis prints its arguments: never the private keys
        return f"Game({str(self.path)!r}, {len(self.chain)} commits)"

    def signer(self, oid: str) -> PrivateKey:
        commit = parse_commit(self.raw(oid))
        assert commit.signature is not None
        return self.keys[sshsig.verify(commit.signature, commit.signed_payload()).raw]

    def raw(self, oid: str) -> bytes:
        return bytes(self.repo.odb.read(oid)[1])

    def files(self, oid: str) -> Files:
        return GameRepo.open(self.path).tree_files(oid)

    def blob(self, oid: str) -> bytes:
        return bytes(self.repo.odb.read(oid)[1])

    def write(self, kind: ObjectType, data: bytes) -> str:
        return str(self.repo.odb.write(kind, data))


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Game:
    from pbem.services.demo import run_demo

    root = tmp_path_factory.mktemp("fuzz") / "demo"
    assert run_demo(root, "tactical-duel", lambda *_: None) == 0
    path = root / "game"
    keys = {k.public.raw: k for k in (load_private_key(p) for p in sorted((root / "keys").glob("*_ed25519")))}
    repo = pygit2.Repository(str(path))
    chain = GameRepo.open(path).first_parent_chain(str(repo.head.target))
    return Game(path, repo, chain, keys)


STRANGER = fixed_key("carol")


# --- writing corrupted history -------------------------------------------------------------------------------------

def write_tree(g: Game, files: Files) -> str:
    """Raw tree objects for `files`, any mode on any object (no checks: what a cheater's tool could write)."""
    leaves: list[tuple[bytes, int, str]] = []
    folders: dict[bytes, Files] = {}
    for path, (oid, mode) in files.items():
        head, _, rest = path.encode("utf-8", "surrogateescape").partition(b"/")
        if rest:
            folders.setdefault(head, {})[rest.decode("utf-8", "surrogateescape")] = (oid, mode)
        else:
            leaves.append((head, mode, oid))
    leaves += [(name, 0o40000, write_tree(g, sub)) for name, sub in folders.items()]
    leaves.sort(key=lambda e: e[0] + (b"/" if e[1] == 0o40000 else b""))
    data = b"".join(f"{mode:o}".encode() + b" " + name + b"\0" + bytes.fromhex(oid) for name, mode, oid in leaves)
    return g.write(ObjectType.TREE, data)


def recommit(g: Game, oid: str, parent: str | None, files: Files | None = None,
             signer: PrivateKey | None = None) -> str:
    """Commit `oid` again on `parent`, with its own tree or `files`, author and message, signed by its own player
    (or `signer`)."""
    commit = parse_commit(g.raw(oid))
    tree = write_tree(g, files) if files is not None else commit.tree
    head, _, message = commit.signed_payload().partition(b"\n\n")
    lines = [line for line in head.split(b"\n") if not line.startswith((b"tree ", b"parent "))]
    payload = b"\n".join([b"tree " + tree.encode(), *([b"parent " + parent.encode()] if parent else []), *lines])
    payload += b"\n\n" + message
    key = signer or g.signer(oid)
    return g.write(ObjectType.COMMIT, with_signature(payload, sshsig.sign(key, payload)))


def _edit_file(g: Game, files: Files, rng: random.Random, edit: Callable[[bytes], bytes]) -> Files:
    path = rng.choice(sorted(files))
    oid, mode = files[path]
    return {**files, path: (g.write(ObjectType.BLOB, edit(g.blob(oid))), mode)}


def _lines(data: bytes, rng: random.Random, drop: bool) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    if drop:
        del lines[i]
    else:
        lines.insert(i, lines[i])
    return b"\n".join(lines)


def _flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data or b"\0")
    for _ in range(rng.randint(1, 3)):
        out[rng.randrange(len(out))] ^= rng.randint(1, 255)
    return bytes(out)


def corrupt(g: Game, kind: str, position: int, rng: random.Random, payload: Any) -> str:
    """The game's history with commit `position` corrupted as `kind`, later commits replayed on top; the tip."""
    chain = g.chain
    old = chain[position]
    parent = chain[position - 1] if position else None
    files = g.files(old)
    rest = chain[position + 1:]
    if kind == "swap-commits" and rest:
        first = recommit(g, rest[0], parent)  # the later commit first, then the earlier one on top
        tip = recommit(g, old, first)
        rest = rest[1:]
    else:
        signer = None
        if kind == "flip-bytes":
            files = _edit_file(g, files, rng, lambda b: _flip(b, rng))
        elif kind == "random-yaml":
            text = yaml.safe_dump(payload, allow_unicode=True).encode()
            files = _edit_file(g, files, rng, lambda _: text)
        elif kind in ("drop-line", "duplicate-line"):
            files = _edit_file(g, files, rng, lambda b: _lines(b, rng, kind == "drop-line"))
        elif kind == "wrong-signer":
            signer = rng.choice([k for k in [*g.keys.values(), STRANGER] if k.public.raw != g.signer(old).public.raw])
        elif kind == "stray-file":
            content = yaml.safe_dump(payload, allow_unicode=True).encode()
            files = {**files, rng.choice(STRAY_PATHS): (g.write(ObjectType.BLOB, content), 0o100644)}
        elif kind == "remove-file":
            gone = rng.choice(sorted(files))
            files = {p: v for p, v in files.items() if p != gone}
        elif kind == "change-mode":
            path = rng.choice(sorted(files))
            mode = rng.choice(MODES)
            target = {0o160000: chain[0]}.get(mode, files[path][0])  # a submodule names a commit
            files = {**files, path: (target, mode)}
        tip = recommit(g, old, parent, files, signer)
    for oid in rest:
        tip = recommit(g, oid, tip)
    return tip


def verify_or_pbem_error(g: Game, tip: str, pipeline: bool | None = None) -> list[str]:
    """verify_history on `tip`: the rules it found, or the one PbemError that ended it."""
    try:
        result = verify_history(GameRepo.open(g.path), tip, pipeline=pipeline)
    except PbemError as exc:
        assert exc.exit_code in (1, 2)
        return [exc.finding.rule]
    rules = [f.rule for f in result.findings()]
    assert all(isinstance(r, str) and "." in r for r in rules), rules
    return rules


def every_finding(g: Game, tip: str, pipeline: bool) -> list[tuple] | str:
    try:
        result = verify_history(GameRepo.open(g.path), tip, pipeline=pipeline)
    except PbemError as exc:
        return exc.finding.text()
    assert result.fetched == (len(result.commits) if pipeline else 0)  # the helper did fetch every commit
    return [(c.oid, c.actor, c.summary, tuple(f.text() for f in c.findings)) for c in result.commits]


# --- the properties ------------------------------------------------------------------------------------------------

YAML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.sampled_from(
        ["fed", "kli", "escrow", "1.9.move", "end", "note", "b0001", "s0001", "ab" * 32, "2.32.final"])
    | st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "through", "breaks", "entries", "at", "by", "do", "control", "firm", "pending",
                         "over", "roller", "mode", "sides", "rolls", "results", "owner", "key", "messages"]),
        inner, max_size=4),
    max_leaves=8)


@settings(max_examples=20 * SCALE, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), depth=st.integers(0, 12), seed=st.integers(0, 2**32 - 1), payload=YAML_VALUES)
def test_fuzz_verify_history_on_a_corrupted_game(game: Game, kind: str, depth: int, seed: int, payload: Any) -> None:
    """Any corruption, anywhere in the last dozen commits: findings or a PbemError, never another exception."""
    position = len(game.chain) - 1 - depth
    tip = corrupt(game, kind, position, random.Random(seed), payload)
    verify_or_pbem_error(game, tip)


@settings(max_examples=8 * SCALE, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), depth=st.integers(0, 30), seed=st.integers(0, 2**32 - 1), payload=YAML_VALUES,
       lead=st.sampled_from([-1, fetch.LEAD]))
def test_the_fetching_process_changes_no_verdict(game: Game, kind: str, depth: int, seed: int, payload: Any,
                                                 lead: int) -> None:
    """verify.fetch: with commits fetched by a second process the verifier finds exactly what it finds alone,
    commit by commit, on corrupted histories too (bad signatures, unreadable trees, stray files), whether the
    helper also reads status.yaml and the appended report lines (it does while ahead of the judge by more than
    its lead: -1, always) or leaves them to the judge (a game this short never lets it get that far ahead)."""
    position = len(game.chain) - 1 - depth
    tip = corrupt(game, kind, position, random.Random(seed), payload)
    with mock.patch.object(fetch, "LEAD", lead):  # the helper is forked: it sees the parent's value
        assert every_finding(game, tip, pipeline=True) == every_finding(game, tip, pipeline=False)


def test_the_uncorrupted_game_verifies(game: Game) -> None:
    """The base the corruptions start from is a clean game, and replaying it unchanged changes nothing."""
    assert verify_or_pbem_error(game, game.chain[-1]) == []
    tip = game.chain[0]
    tip = recommit(game, tip, None)
    for oid in game.chain[1:]:
        tip = recommit(game, oid, tip)
    assert verify_or_pbem_error(game, tip) == []


@pytest.mark.parametrize("kind", KINDS)
def test_cli_verify_on_a_corrupted_game_exits_0_or_1_without_a_traceback(game: Game, kind: str) -> None:
    """The real `pbem verify TIP` on a fixed corruption of each kind in the middle of the history (text or JSON
    output, in turn): exit 0 or 1, never a traceback."""
    rng = random.Random(kind)
    position = len(game.chain) - 1 - rng.randrange(12)
    tip = corrupt(game, kind, position, rng, {"through": "1.9.move", "breaks": [{"range": 3}]})
    fmt = "json" if KINDS.index(kind) % 2 else "text"
    done = subprocess.run([str(PBEM), "verify", "--format", fmt, tip], cwd=game.path, capture_output=True,
                          text=True, env=clean_env(game.path.parent), check=False)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-800:]
    assert done.returncode in (0, 1), done.stdout + done.stderr
