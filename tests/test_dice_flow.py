"""Dice in play (DESIGN §5, seed 000 §2.D "the email dice server"), driven through the real `pbem` in real game
repositories with real keys: announce, contribute, reveal, results; escrow mode; who starts by dice; voids and
re-rolls; `pbem dice show`; what is owed blocks the game (DESIGN §4.2 point 4).

The games are the duel of tests/conftest.py (fed = alice's key, kli = bob's). Two flows are built once per
module and copied per test:

* flow A, from `base_started`: fed announces two rolls in his first turn (`announced`: kli owes his
  contribution, and then his orders), kli contributes (`contributed`: fed owes the reveal, kli waits), fed
  reveals (`revealed`: kli holds control for his turn);
* flow B, from `base_played`: fed announces a roll in a turn that leaves control with himself (`owed_out_of_turn`:
  kli owes a contribution although the game is fed's), kli contributes, fed reveals (`rolled`: fed holds control
  for a turn and fed-0001 has results).

The helpers at the top are shared by tests/test_dice_bad_input.py and tests/test_secrets_flow.py.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

import nacl.signing
import pytest

from conftest import FED_TURN_1, GAME_ID, Table, built_from, built_once, copy_table
from gitutil import clean_env, fixed_key
from pbem.crypto import dice as dice_crypto
from pbem.crypto import seal
from pbem.crypto.keys import load_private_key, write_keypair
from pbem.errors import PbemError
from pbem.formats.writer import dump_mapping
from pbem.protocol import dice as dice_protocol
from pbem.protocol.dice import Batch

TESTS = Path(__file__).resolve().parent
REDERIVE = TESTS / "rederive_dice.py"
PLAYERS = ["fed", "kli"]  # table order of the duel (game.yaml)
ESCROW = "escrow"  # the dice escrow's seat name, and its key file keys/escrow_ed25519 (gitutil SEEDS)
ANYWHERE = "*"  # refused(where=ANYWHERE): the rule, whichever file the message names
A_LINE = ":LINE"  # refused(where=FILE + A_LINE): that file and a line in it, e.g. a field pbem itself wrote
# Table dice: no --ref, so no shot of the rules needs them (a ref binds a batch to a declared shot at the step
# being resolved, DESIGN §5 "Binding"; those are tested in tests/test_attacks.py and test_dice_binding.py).
TWO_ROLLS = ("--for", "CA ph1 at D7, range 3", "--for", "CA ph2 at D7, range 3")


# --- helpers (also used by test_dice_bad_input.py and test_secrets_flow.py) -----------------------------------

def ok(table: Table, *args: str, who: str | None = None, cwd: Path | None = None,
       env: Mapping[str, str] | None = None, real: bool = False) -> str:
    """`pbem ARGS` must succeed; returns stdout. In-process (typer's runner, the same code) unless `real` or a
    custom `env` asks for the real `pbem` in a subprocess."""
    if env is None and not real:
        result = table.cli(*args, who=who, cwd=cwd)
        assert result.exit_code == 0, f"pbem {' '.join(args)}: {result.output}"
        return result.stdout
    done = table.pbem(*args, who=who, cwd=cwd, env=env)
    assert done.returncode == 0, f"pbem {' '.join(args)}: {done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr
    return done.stdout


def cli(table: Table, *args: str, who: str | None = None) -> str:
    """`pbem ARGS` in-process; it must succeed. Returns stdout."""
    return ok(table, *args, who=who)


def refused(table: Table, *args: str, who: str | None, rule: str, where: str | None = None, code: int = 1,
            real: bool = True) -> str:
    """`pbem ARGS` (the real one in a subprocess, unless `real` is False) must exit `code` with one line
    `pbem: WHERE: [RULE] …` (a hint line may follow), no traceback, and change nothing: HEAD, refs, index, .git
    and the working tree (DESIGN §11). Returns that line."""
    before = table.snapshot()
    if real:
        done = table.pbem(*args, who=who)
        exit_code, stdout, stderr = done.returncode, done.stdout, done.stderr
    else:
        result = table.cli(*args, who=who)
        exit_code, stdout, stderr = result.exit_code, result.stdout, result.stderr
    assert exit_code == code, stdout + stderr
    assert "Traceback" not in stdout + stderr
    errors = [line for line in stderr.splitlines() if not line.startswith("  hint: ")]
    assert len(errors) == 1, stderr
    if where == ANYWHERE:
        assert re.match(rf"pbem: (\S+: )?\[{re.escape(rule)}\] ", errors[0]), errors[0]
    elif where is not None and where.endswith(A_LINE):
        file = where[:-len(A_LINE)]
        assert re.match(rf"pbem: {re.escape(file)}:\d+: \[{re.escape(rule)}\] ", errors[0]), errors[0]
    else:
        prefix = f"pbem: {where}: [{rule}] " if where else f"pbem: [{rule}] "
        assert errors[0].startswith(prefix), errors[0]
    assert table.snapshot() == before, "a refused command changed the repository"
    return errors[0]


def findings(table: Table) -> list[dict[str, Any]]:
    """`pbem verify --format json` (in-process); its exit code must agree: 1 with findings, else 0."""
    done = table.cli("verify", "--format", "json")
    data = json.loads(done.stdout)
    assert done.exit_code == (1 if data["findings"] else 0), done.output
    return data["findings"]


def found(table: Table, commit: str, rule: str, file: str | None) -> set[str]:
    """`pbem verify` fails, every finding is in `commit`, one of them is `rule` naming `file`. Returns the
    rules found, for tests that pin the whole set."""
    got = findings(table)
    assert got, "pbem verify found nothing"
    assert {f.get("commit") for f in got} == {commit}, got
    assert any(f["rule"] == rule and f.get("file") == file for f in got), got
    return {f["rule"] for f in got}


def verify_text(table: Table) -> subprocess.CompletedProcess[str]:
    """`pbem verify` as CI runs it (a subprocess, text output)."""
    return table.pbem("verify")


def sneak_as(table: Table, who: str, message: str = "a hand-made commit") -> str:
    """Commit the working tree signed by `who`'s key (a seat, or the escrow) WITHOUT pbem judging it, as a
    player with plain git could (GameRepo.commit_tree with his KeySigner), with status.yaml as `pbem yield`
    would compute it for `who`. Checks the commit out and returns its id."""
    from pbem.services import turn
    from pbem.services.workspace import Workspace, load_identity

    ws = Workspace.open(table.repo_dir)
    head = ws.history().last  # not ws.head(): that refuses to build on a history with findings
    assert head is not None and head.started
    me = load_identity(str(table.key(who)), table.repo_dir)
    status = turn._computed(ws, head, ws.worktree_files(), me, who, message)
    assert status is not None
    table.write("status.yaml", dump_mapping(status.to_data()))
    return table.sneak(who, message, status="keep")


def batch(table: Table, batch_id: str = "fed-0001") -> dict[str, Any]:
    """A batch file of the working tree, read with pbem's strict loader."""
    return dict(table.data(f"dice/{batch_id}.yaml"))


def write_batch(table: Table, raw: Mapping[str, Any], batch_id: str | None = None) -> None:
    """Write a batch file by hand, one field per line as pbem does (a cheater's editor would do the same)."""
    table.write(f"dice/{batch_id or raw['id']}.yaml", dump_mapping(dict(raw)))


def derived(raw: Mapping[str, Any], game_id: str = GAME_ID, players: list[str] = PLAYERS) -> list[int]:
    """The batch's rolls as DESIGN §5 defines them, computed here from the file's fields with the derivation
    primitives (pbem.crypto.dice, checked against the documented vectors in test_dice.py)."""
    if raw["mode"] == "escrow":
        seed = dice_crypto.seed_escrow(base64.b64decode(raw["escrow"]))
    else:
        others = [p for p in players if p != raw["roller"]]
        seed = dice_crypto.seed_commit_reveal(game_id, raw["id"], bytes.fromhex(raw["reveal"]),
                                              [bytes.fromhex(raw["contributions"][p]) for p in others])
    return dice_crypto.rolls(seed, raw["sides"], len(raw["rolls"]))


def pending(table: Table) -> list[tuple[str, str, str]]:
    """status.yaml's pending breaks as (player, kind, why), in serving order."""
    return [(b["player"], b["kind"], b["why"]) for b in table.data("status.yaml")["pending"]]


def changed_paths(table: Table, rev: str = "HEAD") -> set[str]:
    """The paths commit `rev` changed."""
    out = table.git("diff-tree", "--no-commit-id", "--name-only", "-r", f"{rev}~1", rev).stdout.decode()
    return set(out.split())


def commit_count(table: Table) -> int:
    return int(table.git("rev-list", "--count", "HEAD").stdout.decode())


def rederive(folder: Path) -> subprocess.CompletedProcess[str]:
    """tests/rederive_dice.py on a game folder, run as a player would, with every import of pbem made to fail:
    it checks pbem from the documented contract alone (docs/dice.md)."""
    runner = ("import runpy, sys; sys.modules['pbem'] = None; sys.argv = sys.argv[1:]; "
              "runpy.run_path(sys.argv[0], run_name='__main__')")
    return subprocess.run([sys.executable, "-I", "-c", runner, str(REDERIVE), str(folder)],
                          capture_output=True, text=True, check=False, cwd=folder)


def joined(base_started: Table, dest: Path) -> Table:
    """A copy of the duel before its start: both seats claimed, no status.yaml yet (the start and the consent
    to it undone: the commits init, join, join)."""
    table = copy_table(base_started, dest)
    commits = table.git("rev-list", "--first-parent", "--reverse", "HEAD").stdout.decode().split()
    table.git("reset", "-q", "--hard", commits[2])
    assert not (table.repo_dir / "status.yaml").exists() and not (table.repo_dir / "agreements").exists()
    return table


def start_by_consent(table: Table, *options: str, last: str = "fed") -> str:
    """Every seat runs `pbem start OPTIONS`, `last` last (DESIGN §2 Setup, the start by consent): the first run
    proposes the start agreement, the others sign it, and the last one also starts (with --roll: announces the
    die, so `last` rolls). Returns the last run's output."""
    for who in PLAYERS:
        if who != last:
            ok(table, "start", *options, who=who)
    return ok(table, "start", *options, who=last)


def add_escrow(table: Table, mode: str = "escrow") -> None:
    """Before the start, the founder (fed) names the neutral dice escrow's key in game.yaml with plain
    `git commit -S` (DESIGN §5 escrow mode); the escrow's private key goes to keys/escrow_ed25519."""
    key = fixed_key(ESCROW)
    write_keypair(table.key(ESCROW), key)
    text = table.read("game.yaml")
    line = f'dice: {{mode: {mode}, escrow_key: "{key.public.to_line()}"}}'
    text, n = re.subn(r"(?m)^dice: .*$", line, text, count=1)
    assert n == 1
    table.write("game.yaml", text)
    table.git_commit("setup: the dice escrow's key", signer="fed")


def escrow_message(raw: Mapping[str, Any], game_id: str = GAME_ID) -> bytes:
    """What the escrow signs, written out from docs/dice.md (not from pbem): the batch without `escrow` and
    `results` as canonical JSON, hashed with SHA-256, behind the prefix, the game id and the batch id."""
    import hashlib

    announced = {k: v for k, v in raw.items() if k not in ("escrow", "results")}
    canonical = json.dumps(announced, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return (b"pbem-escrow-v1" + game_id.encode() + b"\0" + raw["id"].encode() + b"\0"
            + hashlib.sha256(canonical).digest())


# --- module bases -------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def base_announced(base_started: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Flow A: fed's first turn announces fed-0001 (two d6 for his phasers); kli owes his contribution."""

    def build(table: Table) -> None:
        table.edit("fed", **{k: v for k, v in FED_TURN_1.items() if k != "note"})
        out = ok(table, "roll", *TWO_ROLLS, who="fed", real=True)
        assert "announced dice fed-0001 (d6 x2)" in out
        ok(table, "yield", "-m", "firing at the D7", who="fed", real=True)

    return built_from(tmp_path_factory, "dice_flow-base_announced", base_started, build)


@pytest.fixture(scope="session")
def base_contributed(base_announced: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Flow A: kli contributed with `pbem yield`; fed owes the reveal."""

    def build(table: Table) -> None:
        cli(table, "yield", who="kli")

    return built_from(tmp_path_factory, "dice_flow-base_contributed", base_announced, build)


@pytest.fixture(scope="session")
def base_revealed(base_contributed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Flow A: fed revealed with `pbem yield`; pbem wrote the results; kli holds control for his turn."""

    def build(table: Table) -> None:
        cli(table, "yield", who="fed")

    return built_from(tmp_path_factory, "dice_flow-base_revealed", base_contributed, build)


def announce_out_of_turn(base_played: Table, dest: Path) -> Table:
    """Flow B: in `played` fed holds control at 1.9.move; he announces fed-0001 (one d6) and gives orders only to
    1.10.damage, so the game's next break is his own again: kli owes a contribution out of turn."""
    table = copy_table(base_played, dest)
    table.edit("fed", through="1.10.damage")
    cli(table, "roll", "--for", "CA ph1 at D7, range 9", who="fed")
    cli(table, "yield", "-m", "one phaser", who="fed")
    assert [(p, k) for p, k, _ in pending(table)] == [("kli", "dice"), ("fed", "horizon")]
    return table


def roll_to_results(base_played: Table, dest: Path) -> Table:
    """Flow B to the end: kli contributed, fed revealed with a bare `pbem yield`; fed holds control for a turn
    (needs orders from 1.11.move) and fed-0001 has its result."""
    table = announce_out_of_turn(base_played, dest)
    cli(table, "yield", who="kli")
    cli(table, "yield", who="fed")
    assert [(p, k) for p, k, _ in pending(table)] == [("fed", "horizon")]
    assert batch(table)["results"]
    return table


@pytest.fixture(scope="module")
def base_owed_out_of_turn(base_played: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    return announce_out_of_turn(base_played, tmp_path_factory.mktemp("dice") / "owed")


@pytest.fixture(scope="module")
def base_rolled(base_played: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    return roll_to_results(base_played, tmp_path_factory.mktemp("dice") / "rolled")


@pytest.fixture(scope="session")
def base_joined(base_started: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """The duel before its start (seats claimed), commit-reveal dice."""
    return Table(built_once(tmp_path_factory, "dice_flow-base_joined", lambda into: joined(base_started, into)))


@pytest.fixture(scope="session")
def base_joined_escrow(base_joined: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """The duel before its start with a dice escrow key and escrow mode as the game's default."""

    def build(table: Table) -> None:
        add_escrow(table)

    return built_from(tmp_path_factory, "dice_flow-base_joined_escrow", base_joined, build)


def private(base: Table, tmp_path: Path) -> Table:
    return copy_table(base, tmp_path / "table")


# --- 1. announce before anything is known --------------------------------------------------------------------

def test_roll_announces_the_batch_with_the_roller_s_secret_sealed_to_his_own_key(base_announced: Table) -> None:
    """DESIGN §5: purposes in order, sides, roller, commitment; the roller's secret is in the repo, sealed
    to his own key (owner_box); nothing about the rolls (no contribution, reveal or result) exists yet."""
    raw = batch(base_announced)
    assert set(raw) == {"id", "roller", "mode", "sides", "rolls", "commit", "owner_box"}
    assert (raw["id"], raw["roller"], raw["mode"], raw["sides"]) == ("fed-0001", "fed", "commit-reveal", 6)
    assert raw["rolls"] == [{"for": "CA ph1 at D7, range 3"}, {"for": "CA ph2 at D7, range 3"}]
    secret = seal.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(base_announced.key("fed")))
    assert dice_crypto.commitment(secret).hex() == raw["commit"]
    with pytest.raises(PbemError) as kli_tries:
        seal.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(base_announced.key("kli")))
    assert kli_tries.value.finding.rule == "secret.not-owner"
    # announced in fed's own turn, in the same signed commit as his orders
    assert changed_paths(base_announced) == {"dice/fed-0001.yaml", "players/fed.yaml", "report/turn-01.yaml",
                                             "status.yaml"}
    assert "ok:" in ok(base_announced, "verify")


def test_replay_stops_with_a_break_for_whoever_owes_a_contribution(base_announced: Table) -> None:
    """DESIGN §4.2 point 4: what is owed comes before the game's own breaks; kli owes his contribution."""
    assert pending(base_announced) == [
        ("kli", "dice", "contribution owed to dice fed-0001 of fed"),
        ("kli", "horizon", "needs orders from 1.0.alloc")]
    assert base_announced.data("status.yaml")["control"] == "kli"
    shown = ok(base_announced, "status", who="kli")
    assert "control: kli (you)" in shown and "contribution owed to dice fed-0001 of fed" in shown


def test_yield_adds_the_contribution_owed_and_nothing_else(base_contributed: Table) -> None:
    """`pbem yield` settles what kli owes: one fresh 32-byte contribution, in a commit of its own signed by
    kli; then the roller owes his reveal."""
    raw = batch(base_contributed)
    assert set(raw["contributions"]) == {"kli"}
    assert re.fullmatch(r"[0-9a-f]{64}", raw["contributions"]["kli"])
    assert raw["contributions"]["kli"] != raw["commit"]
    assert "reveal" not in raw and "results" not in raw
    assert changed_paths(base_contributed) == {"dice/fed-0001.yaml", "status.yaml"}
    assert base_contributed.git("log", "-1", "--format=%s").stdout.decode().strip() == "kli: contributed to fed-0001"
    assert pending(base_contributed) == [("fed", "dice", "reveal owed for dice fed-0001"),
                                        ("kli", "horizon", "needs orders from 1.0.alloc")]
    assert "ok:" in ok(base_contributed, "verify")


def test_a_batch_whose_reveal_is_owed_blocks_the_game_until_revealed(base_contributed: Table, tmp_path: Path) -> None:
    """DESIGN §5 "a roller who does not reveal owes it: replay stops with his break until he does": control is
    the roller's (kind dice); kli cannot take his turn, neither with pbem nor with a hand-made commit."""
    table = private(base_contributed, tmp_path)
    status = table.data("status.yaml")
    assert (status["control"], status["pending"][0]["kind"]) == ("fed", "dice")
    table.edit("kli", through="1.12.damage", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 12}}])
    line = refused(table, "yield", "-m", "my turn", who="kli", rule="signature.not-in-control", where="status.yaml")
    assert "fed holds control (reveal owed for dice fed-0001)" in line
    bad = sneak_as(table, "kli", "kli: my turn anyway")
    assert found(table, bad, "signature.not-in-control", "status.yaml") == {"signature.not-in-control"}
    # once fed has revealed, kli's turn goes through
    after = copy_table(base_contributed, tmp_path / "after")
    cli(after, "yield", who="fed")
    after.turn("kli", through="1.12.damage", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 12}}])
    assert after.data("status.yaml")["yielded_by"] == "kli"
    assert "ok:" in ok(after, "verify")


def test_the_roller_reveals_with_yield_and_pbem_writes_the_results(base_revealed: Table) -> None:
    """The reveal opens the commitment; pbem writes the results, which equal the derivation of DESIGN §5 from
    the file's own fields (game id, batch id, reveal, contributions in table order); the verifier agrees."""
    raw = batch(base_revealed)
    assert dice_crypto.commitment(bytes.fromhex(raw["reveal"])).hex() == raw["commit"]
    assert raw["results"] == derived(raw)
    assert len(raw["results"]) == 2 and all(1 <= r <= 6 for r in raw["results"])
    assert changed_paths(base_revealed) == {"dice/fed-0001.yaml", "status.yaml"}
    subject = base_revealed.git("log", "-1", "--format=%s").stdout.decode().strip()
    assert subject == f"fed: revealed fed-0001: {raw['results']}"
    assert pending(base_revealed) == [("kli", "horizon", "needs orders from 1.0.alloc")]
    assert "ok:" in ok(base_revealed, "verify")


def test_dice_show_prints_purposes_and_results_in_the_order_announced(base_announced: Table,
                                                                      base_revealed: Table) -> None:
    """`pbem dice show BATCH`: one line per purpose, in the order announced, with its result (or `?`)."""
    waiting = ok(base_announced, "dice", "show", "fed-0001").splitlines()
    assert waiting[0] == "dice fed-0001: d6, commit-reveal, rolled by fed"
    assert re.fullmatch(r"\s+1\.\s+\?\s+CA ph1 at D7, range 3", waiting[1])
    assert re.fullmatch(r"\s+2\.\s+\?\s+CA ph2 at D7, range 3", waiting[2])
    assert waiting[3].strip() == "waiting for: kli (contribution owed to dice fed-0001 of fed)"
    results = batch(base_revealed)["results"]
    shown = ok(base_revealed, "dice", "show", "fed-0001").splitlines()
    assert re.fullmatch(rf"\s+1\.\s+{results[0]}\s+CA ph1 at D7, range 3", shown[1])
    assert re.fullmatch(rf"\s+2\.\s+{results[1]}\s+CA ph2 at D7, range 3", shown[2])
    assert len(shown) == 3
    refused(base_revealed, "dice", "show", "b0009", who=None, rule="usage.no-batch", code=2)


def test_the_independent_script_rederives_the_batch_from_the_files(base_announced: Table,
                                                                   base_revealed: Table) -> None:
    """tests/rederive_dice.py (no pbem) agrees with every recorded result, and lists a waiting batch as such."""
    done = rederive(base_revealed.repo_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"fed-0001: {' '.join(map(str, batch(base_revealed)['results']))}\n"
    waiting = rederive(base_announced.repo_dir)
    assert (waiting.returncode, waiting.stdout) == (0, "fed-0001: pending\n")


def test_the_roller_reveals_from_a_fresh_clone_with_only_his_key_file(base_contributed: Table,
                                                                      tmp_path: Path) -> None:
    """DESIGN §5: nothing is kept outside the repository. On a new machine (empty HOME) with a fresh clone and
    only his key file, fed reveals with `pbem yield`; the results are the derivation's."""
    table = private(base_contributed, tmp_path)
    elsewhere = tmp_path / "new-machine"
    (elsewhere / "home").mkdir(parents=True)
    key = elsewhere / "only_my_key"
    key.write_bytes(table.key("fed").read_bytes())
    key.chmod(0o600)
    clone = elsewhere / "game"
    subprocess.run(["git", "clone", "-q", str(table.repo_dir), str(clone)], env=clean_env(elsewhere / "home"),
                   check=True, capture_output=True)
    env = clean_env(elsewhere / "home", {"PBEM_KEY": str(key)})
    out = ok(table, "yield", cwd=clone, env=env)
    assert "committed" in out
    clone_table = Table(elsewhere)  # game/ and home/ as a Table expects
    raw = batch(clone_table)
    assert raw["results"] == derived(raw)
    assert "ok:" in ok(clone_table, "verify", env=env)


# --- 2. out of turn ------------------------------------------------------------------------------------------

def test_a_contribution_made_out_of_turn_is_accepted(base_owed_out_of_turn: Table, tmp_path: Path) -> None:
    """DESIGN §3: a player may act out of turn to settle dice owed to him. The game is fed's (his horizon
    ended), yet kli's contribution is a legal commit of its own; fed then owes the reveal before his turn."""
    table = private(base_owed_out_of_turn, tmp_path)
    assert "kli" not in [p for p, kind, _ in pending(table) if kind != "dice"]
    out = ok(table, "yield", who="kli", real=True)
    assert "committed" in out
    assert changed_paths(table) == {"dice/fed-0001.yaml", "status.yaml"}
    assert [(p, k) for p, k, _ in pending(table)] == [("fed", "dice"), ("fed", "horizon")]
    assert "ok:" in ok(table, "verify")


def test_signature_not_in_control__a_players_file_edit_in_an_out_of_turn_contribution(
        base_owed_out_of_turn: Table, tmp_path: Path) -> None:
    """The out-of-turn commit may settle dice only: kli's contribution with an edit of his own players file
    in the same commit is found, naming that file."""
    table = private(base_owed_out_of_turn, tmp_path)
    raw = batch(table)
    write_batch(table, {**raw, "contributions": {"kli": "5a" * 32}})
    table.edit("kli", through="1.24.damage")
    bad = sneak_as(table, "kli", "kli: contribution, and my orders too")
    assert found(table, bad, "signature.not-in-control", "players/kli.yaml") == {"signature.not-in-control"}


def test_yield_settles_what_kli_owes_and_keeps_his_orders_that_must_wait(
        base_owed_out_of_turn: Table, tmp_path: Path) -> None:
    """Through pbem the same mix follows the one rule of docs/protocol.md: what kli owes (his contribution) is
    committed on its own; his players file edit waits for his turn (fed must reveal first), so it stays in the
    working tree, uncommitted, and yield says so. `pbem check` says the same beforehand, and exits 0."""
    table = private(base_owed_out_of_turn, tmp_path)
    table.edit("kli", through="1.24.damage")
    edited = table.read("players/kli.yaml")
    before = commit_count(table)
    said = ok(table, "check", who="kli")
    bid = only_batch(table)
    assert f"commit 1: kli: contributed to {bid}" in said and "players/kli.yaml" in said
    out = ok(table, "yield", who="kli")
    assert commit_count(table) == before + 1
    assert changed_paths(table) == {f"dice/{bid}.yaml", "status.yaml"}
    assert table.read("players/kli.yaml") == edited and "players/kli.yaml" in out
    assert "ok:" in ok(table, "verify")


def only_batch(table: Table) -> str:
    """The id of the one dice batch of the game (its file name)."""
    (path,) = (table.repo_dir / "dice").glob("*.yaml")
    return path.stem


def test_check_on_a_clean_tree_says_what_yield_settles_so_check_and_yield_goes_through(
        base_owed_out_of_turn: Table, tmp_path: Path) -> None:
    """Status's own advice, `pbem check && pbem yield`, on a clean tree when kli owes a contribution: check
    simulates the settlement yield makes (exit 0, the commit it would make), then yield makes exactly it. Status
    names it with a command to paste, in plain text and JSON."""
    table = private(base_owed_out_of_turn, tmp_path)
    bid = only_batch(table)
    plain = ok(table, "status", "--plain", who="kli")
    assert f"you (kli) owe: contribution owed to dice {bid} of fed" in plain and "$ pbem yield" in plain
    todo = json.loads(ok(table, "status", "--format", "json", who="kli"))["todo"]
    assert todo[0] == {"do": f"contribution owed to dice {bid} of fed: pbem yield settles it (no need to hold "
                             "control)", "command": "pbem yield"}
    said = ok(table, "check", who="kli")
    assert f"commit 1: kli: contributed to {bid}" in said
    before = commit_count(table)
    ok(table, "yield", who="kli")
    assert commit_count(table) == before + 1 and changed_paths(table) == {f"dice/{bid}.yaml", "status.yaml"}


def test_what_fed_owes_is_committed_first_then_his_turn_follows(base_owed_out_of_turn: Table, tmp_path: Path) -> None:
    """`pbem yield` by a player who owes a reveal and also holds the game's break: the reveal goes in a commit
    of its own (on HEAD's files), then his turn in the next one."""
    table = private(base_owed_out_of_turn, tmp_path)
    cli(table, "yield", who="kli")
    before = commit_count(table)
    table.edit("fed", through="1.16.damage")
    ok(table, "yield", "-m", "straight on", who="fed")
    assert commit_count(table) == before + 2
    assert changed_paths(table, "HEAD~1") == {"dice/fed-0001.yaml", "status.yaml"}
    assert changed_paths(table, "HEAD") == {"players/fed.yaml", "status.yaml"}
    assert batch(table)["results"] == derived(batch(table))
    assert "ok:" in ok(table, "verify")


# --- 3. escrow mode --------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def base_escrow_owed(base_joined_escrow: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """The escrow duel started with fed in control; fed announces three d20 (escrow mode, the game's default);
    the escrow owes its signature."""

    def build(table: Table) -> None:
        start_by_consent(table, "--first", "fed")
        table.edit("fed", **{k: v for k, v in FED_TURN_1.items() if k != "note"})
        cli(table, "roll", "--for", "boarding party 1", "--for", "boarding party 2", "--for", "boarding party 3",
            "--sides", "20", who="fed")
        cli(table, "yield", "-m", "boarding", who="fed")

    return built_from(tmp_path_factory, "dice_flow-base_escrow_owed", base_joined_escrow, build)


def test_escrow_mode_the_escrow_owes_its_signature_and_blocks_the_game(base_escrow_owed: Table,
                                                                       tmp_path: Path) -> None:
    """DESIGN §5 escrow: no commitment, nothing sealed; replay stops for the escrow; kli must wait."""
    table = private(base_escrow_owed, tmp_path)
    raw = batch(table)
    assert set(raw) == {"id", "roller", "mode", "sides", "rolls"}
    assert (raw["mode"], raw["sides"], len(raw["rolls"])) == ("escrow", 20, 3)
    assert pending(table)[0] == ("escrow", "dice", "escrow signature owed for dice fed-0001")
    assert table.data("status.yaml")["control"] == "escrow"
    table.edit("kli", through="1.12.damage")
    refused(table, "yield", who="kli", rule="signature.not-in-control", where="status.yaml")


def test_escrow_sign_writes_a_real_signature_and_the_results_once(base_escrow_owed: Table, tmp_path: Path) -> None:
    """`pbem escrow sign --key ESCROW`: the escrow's Ed25519 signature of the announced batch (checked here
    with PyNaCl against game.yaml's escrow key, the message built from docs/dice.md), results derived from it;
    a second run finds nothing to sign and changes nothing; a player's key is not the escrow's (exit 2)."""
    table = private(base_escrow_owed, tmp_path)
    out = ok(table, "escrow", "sign", "--key", str(table.key(ESCROW)), real=True)
    raw = batch(table)
    assert out.strip() == f"signed fed-0001: {raw['results']}"
    escrow_line = table.data("game.yaml")["dice"]["escrow_key"]
    verify_key = nacl.signing.VerifyKey(base64.b64decode(escrow_line.split()[1])[-32:])
    verify_key.verify(escrow_message(raw), base64.b64decode(raw["escrow"]))
    assert raw["results"] == derived(raw) and all(1 <= r <= 20 for r in raw["results"])
    assert changed_paths(table) == {"dice/fed-0001.yaml", "status.yaml"}
    assert pending(table) == [("kli", "horizon", "needs orders from 1.0.alloc")]
    before = table.snapshot()
    assert ok(table, "escrow", "sign", "--key", str(table.key(ESCROW))).strip() == "no open escrow batches"
    assert table.snapshot() == before
    refused(table, "escrow", "sign", who="kli", rule="key.not-escrow", code=2)
    assert "ok:" in ok(table, "verify")
    done = rederive(table.repo_dir)
    assert (done.returncode, done.stdout) == (0, f"fed-0001: {' '.join(map(str, raw['results']))}\n")


def test_both_modes_in_one_game(base_escrow_owed: Table, tmp_path: Path) -> None:
    """A game whose default is escrow may still roll commit-reveal (`pbem roll --mode commit-reveal`)."""
    table = private(base_escrow_owed, tmp_path)
    cli(table, "escrow", "sign", "--key", str(table.key(ESCROW)))
    table.edit("kli", through="1.12.damage", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 12}}])
    ok(table, "roll", "--for", "D7 disruptor at CA", "--mode", "commit-reveal", who="kli")
    cli(table, "yield", who="kli")
    assert pending(table)[0] == ("fed", "dice", "contribution owed to dice kli-0001 of kli")
    cli(table, "yield", who="fed")
    cli(table, "yield", who="kli")
    modes = {b: batch(table, b)["mode"] for b in ("fed-0001", "kli-0001")}
    assert modes == {"fed-0001": "escrow", "kli-0001": "commit-reveal"}
    assert batch(table, "kli-0001")["results"] == derived(batch(table, "kli-0001"))
    assert "ok:" in ok(table, "verify")
    assert rederive(table.repo_dir).returncode == 0


# --- 4. who starts: pbem start --roll -----------------------------------------------------------------------

def test_start_roll_in_commit_reveal_mode_starts_with_the_player_the_die_names(base_joined: Table,
                                                                              tmp_path: Path) -> None:
    """DESIGN §5 "the same derivation decides who starts": a die with as many sides as players; kli
    contributes and fed reveals with `pbem yield`; then `pbem start --roll` starts with
    players[roll(S, 2, 0) - 1] (docs/dice.md "Who starts"). Starting with anyone else is refused."""
    table = private(base_joined, tmp_path)
    out = start_by_consent(table, "--roll")
    assert "dice for who starts announced" in out
    raw = batch(table)
    assert (raw["roller"], raw["sides"], raw["rolls"]) == ("fed", 2, [{"for": "who starts", "ref": "start"}])
    line = refused(table, "start", "--roll", who="fed", rule="dice.owed", code=2)
    assert "kli: contribution owed to dice fed-0001 of fed" in line
    assert "settled your dice for who starts" in ok(table, "yield", who="kli")
    refused(table, "start", "--roll", who="fed", rule="dice.owed", code=2)
    ok(table, "yield", who="fed")
    raw = batch(table)
    seed = dice_crypto.seed_commit_reveal(GAME_ID, "fed-0001", bytes.fromhex(raw["reveal"]),
                                          [bytes.fromhex(raw["contributions"]["kli"])])
    first = dice_crypto.first_player(seed, PLAYERS)
    assert first == PLAYERS[raw["results"][0] - 1]
    other = next(p for p in PLAYERS if p != first)
    refused(table, "start", "--first", other, who="fed", rule="dice.start-mismatch", where="status.yaml")
    out = ok(table, "start", "--roll", who="kli", real=True)
    assert out.strip() == f"started: the dice chose {first}, who has control" + starters(first, "kli")
    assert table.data("status.yaml")["control"] == first
    assert "ok:" in ok(table, "verify")


def test_start_roll_in_escrow_mode_the_escrow_signs(base_joined_escrow: Table, tmp_path: Path) -> None:
    """`pbem start --roll` in a game whose dice mode is escrow: `pbem escrow sign --key ESCROW` rolls the die,
    then `pbem start --roll` starts with the player it names."""
    table = private(base_joined_escrow, tmp_path)
    start_by_consent(table, "--roll", last="kli")
    raw = batch(table, "kli-0001")
    assert (raw["mode"], raw["roller"], raw["sides"]) == ("escrow", "kli", 2)
    line = refused(table, "start", "--roll", who="kli", rule="dice.owed", code=2)
    assert "escrow signature owed" in line
    ok(table, "escrow", "sign", "--key", str(table.key(ESCROW)))
    raw = batch(table, "kli-0001")
    first = dice_crypto.first_player(dice_crypto.seed_escrow(base64.b64decode(raw["escrow"])), PLAYERS)
    assert first == PLAYERS[raw["results"][0] - 1]
    out = ok(table, "start", "--roll", who="fed")
    assert out.strip() == f"started: the dice chose {first}, who has control" + starters(first, "fed")
    assert table.data("status.yaml")["control"] == first
    assert "ok:" in ok(table, "verify")


# --- 5. void and re-roll -----------------------------------------------------------------------------------------

def test_the_roller_alone_voids_before_results_then_re_rolls_whole(base_joined: Table, tmp_path: Path) -> None:
    """Seed §2.D: an invalid batch is voided whole, with a reason, and re-rolled whole. Before anybody could
    know its results (kli has not contributed), the roller alone may void it. Here: the dice for who starts,
    voided with `pbem dice void` and committed with plain `git commit -S`; the re-roll names the batch it
    `replaces`; the start follows the re-roll, the voided batch counts for nothing."""
    from pbem.services import chance
    from pbem.services.workspace import Workspace, load_identity

    table = private(base_joined, tmp_path)
    start_by_consent(table, "--roll")
    ok(table, "dice", "void", "fed-0001", "--reason", "announced before kli's seat was confirmed", who="fed")
    assert batch(table)["void"] == {"reason": "announced before kli's seat was confirmed"}
    table.git_commit("fed: void fed-0001", signer="fed")
    assert "ok:" in ok(table, "verify")
    assert "VOID: announced before kli's seat was confirmed" in ok(table, "dice", "show", "fed-0001")
    ws = Workspace.open(table.repo_dir)
    me = load_identity(str(table.key("fed")), table.repo_dir)
    files = ws.head_files()
    new = chance.announce(files, ws.game_of(files), me, "fed", ["who starts"], ["start"], 2, replaces="fed-0001")
    ws.commit(files, me, "fed: re-roll of fed-0001")
    assert new == "fed-0002" and batch(table, "fed-0002")["replaces"] == "fed-0001"
    assert "(re-rolls fed-0001)" in ok(table, "dice", "show", "fed-0002")
    ok(table, "yield", who="kli")
    ok(table, "yield", who="fed")
    first = PLAYERS[batch(table, "fed-0002")["results"][0] - 1]
    assert ok(table, "start", "--roll", who="fed").strip() == (f"started: the dice chose {first}, who has control"
                                                               + starters(first, "fed"))
    assert "ok:" in ok(table, "verify")
    assert rederive(table.repo_dir).stdout == f"fed-0002: {batch(table, 'fed-0002')['results'][0]}\n"


def test_yield_commits_a_void_before_the_start(base_joined: Table, tmp_path: Path) -> None:
    """`pbem dice void` says "now `pbem yield`": before the start too, yield commits the roller's void."""
    table = private(base_joined, tmp_path)
    start_by_consent(table, "--roll")
    ok(table, "dice", "void", "fed-0001", "--reason", "wrong table", who="fed")
    ok(table, "yield", who="fed")
    assert "void" in table.data("dice/fed-0001.yaml") and "ok:" in ok(table, "verify")


def test_a_void_after_results_with_every_co_signature_is_accepted_and_re_rolled(base_rolled: Table,
                                                                               tmp_path: Path) -> None:
    """Seed §2.D, DESIGN §5: once results were knowable the roller may void only with every other player's
    co-signature: kli signs the void with `pbem dice cosign`, fed voids with `pbem dice void --cosign` and
    announces the re-roll (`replaces`) in his turn; then the re-roll is rolled like any batch."""
    from pbem.services import chance
    from pbem.services.workspace import Workspace, load_identity

    table = private(base_rolled, tmp_path)
    reason = "the D7 was cloaked: ph1 could not fire"
    signature = ok(table, "dice", "cosign", "fed-0001", "--reason", reason, who="kli")
    assert signature.startswith("-----BEGIN SSH SIGNATURE-----")
    (tmp_path / "kli.sig").write_text(signature)
    ok(table, "dice", "void", "fed-0001", "--reason", reason, "--cosign", f"kli={tmp_path / 'kli.sig'}", who="fed")
    ws = Workspace.open(table.repo_dir)
    files = ws.worktree_files()
    chance.announce(files, ws.game_of(files), load_identity(str(table.key("fed")), table.repo_dir), "fed",
                    ["CA ph1 at D7, range 9 (again)"], [], 6, replaces="fed-0001")
    ws.write_files(files)
    table.edit("fed", through="1.16.damage")
    ok(table, "yield", "-m", "re-rolling ph1", who="fed")
    voided = batch(table)
    assert voided["void"]["reason"] == reason and set(voided["void"]["cosign"]) == {"kli"}
    assert voided["results"]  # the results stay, and count for nothing
    assert batch(table, "fed-0002")["replaces"] == "fed-0001"
    assert pending(table)[0] == ("kli", "dice", "contribution owed to dice fed-0002 of fed")
    assert f"VOID: {reason}" in ok(table, "dice", "show", "fed-0001")
    cli(table, "yield", who="kli")
    cli(table, "yield", who="fed")
    assert batch(table, "fed-0002")["results"] == derived(batch(table, "fed-0002"))
    assert "ok:" in ok(table, "verify")
    assert rederive(table.repo_dir).returncode == 0


def test_the_roller_who_owes_the_reveal_may_void_with_every_co_signature_instead(
        base_owed_out_of_turn: Table, tmp_path: Path) -> None:
    """Instead of revealing, the roller voids with kli's co-signature: `pbem yield` commits the void and does not
    reveal the batch first."""
    table = private(base_owed_out_of_turn, tmp_path)
    cli(table, "yield", who="kli")
    reason = "the D7 was cloaked"
    (tmp_path / "kli.sig").write_text(ok(table, "dice", "cosign", "fed-0001", "--reason", reason, who="kli"))
    ok(table, "dice", "void", "fed-0001", "--reason", reason, "--cosign", f"kli={tmp_path / 'kli.sig'}", who="fed")
    ok(table, "yield", who="fed")
    assert "reveal" not in batch(table) and batch(table)["void"]["reason"] == reason


# --- 6. the protocol's rules, pure -------------------------------------------------------------------------------

def _batch_findings(old: dict[str, Any] | None, new: dict[str, Any], committer: str) -> list[str]:
    before = {old["id"]: Batch(old, f"dice/{old['id']}.yaml")} if old else {}
    after = {new["id"]: Batch(new, f"dice/{new['id']}.yaml")}
    got = dice_protocol.batch_findings(GAME_ID, PLAYERS, {}, None, before, after, committer)
    return [f.rule for f in got]


ANNOUNCED = {"id": "fed-0001", "roller": "fed", "mode": "commit-reveal", "sides": 6,
             "rolls": [{"for": "CA ph1"}], "commit": dice_crypto.commitment(bytes(32)).hex(), "owner_box": "AAAA"}


def test_before_any_contribution_the_roller_alone_may_correct_or_void_his_batch() -> None:
    """protocol.dice: before results are knowable the roller alone may change his announcement or void it
    (no co-signature); another player may do neither."""
    corrected = {**ANNOUNCED, "rolls": [{"for": "CA ph2"}]}
    assert _batch_findings(ANNOUNCED, corrected, "fed") == []
    assert _batch_findings(ANNOUNCED, {**ANNOUNCED, "void": {"reason": "wrong arc"}}, "fed") == []
    assert _batch_findings(ANNOUNCED, {**ANNOUNCED, "void": {"reason": "wrong arc"}}, "kli") == ["dice.bad-void"]
    assert _batch_findings(ANNOUNCED, corrected, "kli") == ["dice.changed"]


def test_after_a_contribution_the_announcement_is_fixed_and_a_void_needs_co_signatures() -> None:
    contributed = {**ANNOUNCED, "contributions": {"kli": "11" * 32}}
    assert _batch_findings(contributed, {**contributed, "rolls": [{"for": "CA ph2"}]}, "fed") == ["dice.changed"]
    assert _batch_findings(contributed, {**contributed, "void": {"reason": "wrong arc"}}, "fed") == ["dice.bad-void"]


def starters(first: str, starter: str) -> str:
    """What `pbem start` adds when the player it starts with is the one who ran it: his turn's starter files."""
    return (f"; wrote players/{first}.yaml and report/turn-01.yaml for your turn (with comments: edit them, then "
            "`pbem check && pbem yield`)") if first == starter else ""
