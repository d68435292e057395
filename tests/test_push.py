"""`pbem push` (DESIGN §4.7, §8; issue 6 part 4): fetch; if another party's out-of-turn commit landed first and
touches other parts of the game, recreate my unpublished commits on top of it (same changes, status.yaml computed
again, signed again with my key, verified), then push; otherwise explain in one line and change nothing.

The race: a duel with a dice escrow. fed's first turn announces two batches, fed-0001 for the escrow to sign and
fed-0002 (commit-reveal) for kli to contribute to, so the escrow and kli may both commit on the same state. Each has
his own clone of a bare server that runs the pre-receive hook.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import TEACHING_DUEL, Table, built_once
from gitutil import Sandbox, clean_env
from pbem.crypto import sshsig
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping, dump_report
from pbem.services import chance, setup, turn
from pbem.services.push import MergeConflict, merge_file, merge_lines
from pbem.services.workspace import Identity, Workspace, load_identity
from pbem.store.commits import parse_commit
from pbem.store.repo import GameRepo


# --- the race --------------------------------------------------------------------------------------------------

def identity(table: Table, who: str) -> Identity:
    return replace(load_identity(str(table.key(who)), table.root), author=(who, f"{who}@pbem.test"))


def clone_for(first: Table, server: Path, name: str) -> Table:
    """Another party's machine: his own clone of the server (same keys folder, his own HOME)."""
    other = Table(first.root.parent / name)
    other.root.mkdir()
    (other.root / "keys").symlink_to(first.root / "keys")
    (other.root / "home").mkdir()
    subprocess.run(["git", "clone", "-q", str(server), str(other.repo_dir)], check=True, env=clean_env(other.home),
                   capture_output=True)
    return other


def new_game(tmp_path: Path, escrow: bool) -> tuple[Table, Path]:
    """fed founds the game in his repository and pushes it to a bare server with the hook installed."""
    fed = Table(tmp_path / "fed")
    box = Sandbox(fed.root)
    for name in ("alice", "bob", "escrow"):
        box.new_key(name)
    ws = setup.init(fed.repo_dir, str(TEACHING_DUEL), "race-1", identity(fed, "fed"))  # speeds as entries
    if escrow:
        files = ws.head_files()
        text = files["game.yaml"].decode()
        line = f'dice: {{mode: commit-reveal, escrow_key: "{identity(fed, "escrow").public.to_line()}"}}'
        files["game.yaml"] = re.sub(r"(?m)^dice: .*$", line, text, count=1).encode()
        ws.commit(files, identity(fed, "fed"), "setup: the dice escrow's key")
    server = tmp_path / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(server)], check=True)
    assert fed.cli("hook", "install", str(server)).exit_code == 0
    fed.git("remote", "add", "origin", server)
    fed.git("push", "-q", "-u", "origin", "main")
    return fed, server


Race = tuple[Table, Table, Table, Path]  # fed, kli, escrow, server


def build_race(tmp_path: Path) -> Race:
    """(fed, kli, escrow, server): after fed's first turn both the escrow (fed-0001) and kli (fed-0002) owe."""
    fed, server = new_game(tmp_path, escrow=True)
    ws = Workspace.open(fed.repo_dir)
    setup.join(ws, "fed", identity(fed, "fed"))
    setup.join(ws, "kli", identity(fed, "kli"))
    for seat in ("fed", "kli"):  # the start by consent: fed proposes, kli signs and starts
        setup.begin(ws, identity(fed, seat), first="fed")
    files = ws.worktree_files()
    files["players/fed.yaml"] = dump_mapping({"through": "1.8.damage", "breaks": [{"range": 8}]}).encode()
    files["report/turn-01.yaml"] = dump_report([{"at": "1.0.alloc", "by": "fed", "unit": "CA",
                                                 "do": {"speed": 12}}]).encode()
    me = identity(fed, "fed")
    chance.announce(files, ws.game_of(files), me, "fed", ["sensor sweep"], [], 6, "escrow")
    chance.announce(files, ws.game_of(files), me, "fed", ["crew morale"], [], 6, "commit-reveal")
    ws.write_files(files)
    _oid, status = turn.yield_turn(ws, me, "two batches")
    assert [b.player for b in status.pending][:2] == ["escrow", "kli"]
    fed.git("push", "-q", "origin", "main")
    return fed, clone_for(fed, server, "kli"), clone_for(fed, server, "escrow"), server


def _build_race_in(root: Path) -> None:
    root.mkdir(parents=True)
    build_race(root)


@pytest.fixture(scope="session")
def base_race(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once per run (`built_once`: six modules use it), only read; each test gets a copy (`race`)."""
    return built_once(tmp_path_factory, "base-race", _build_race_in)


@pytest.fixture
def race(base_race: Path, tmp_path: Path) -> Race:
    root = tmp_path / "race"
    shutil.copytree(base_race, root, symlinks=True)  # the keys links point into base_race: read only
    server = root / "server.git"
    tables = [Table(root / name) for name in ("fed", "kli", "escrow")]
    for table in tables:
        table.git("remote", "set-url", "origin", server)
    return tables[0], tables[1], tables[2], server


def server_main(server: Path) -> str:
    return subprocess.run(["git", "rev-parse", "main"], cwd=server, capture_output=True, text=True).stdout.strip()


def escrow_signs_and_pushes(escrow: Table) -> str:
    me = identity(escrow, "escrow")
    assert turn.commit_escrow(Workspace.open(escrow.repo_dir), me, chance.private_key(me)) == ["signed fed-0001: " +
                                                                                               _results(escrow)]
    escrow.git("push", "-q", "origin", "main")
    return escrow.head()


def _results(table: Table) -> str:
    return str(yamlsafe.load((table.repo_dir / "dice/fed-0001.yaml").read_bytes(), "fed-0001").data["results"])


def signer_of(table: Table, oid: str) -> str | None:
    raw = parse_commit(GameRepo.open(table.repo_dir).raw_commit(oid))
    key = sshsig.verify(raw.signature, raw.signed_payload())
    return next((who for who in ("fed", "kli", "escrow") if identity(table, who).public.same_key(key)), None)


def state(table: Table) -> tuple[str, str, str]:
    """What a refusing `pbem push` must leave alone: the branch, the index and the working tree."""
    status = table.git("status", "--porcelain", "--untracked-files=all").stdout.decode()
    files = table.git("ls-files", "-s").stdout.decode()
    return table.head(), status, files


# --- pushing ---------------------------------------------------------------------------------------------------

def test_push_publishes_my_commit_and_then_has_nothing_to_push(race: Race) -> None:
    _fed, kli, _escrow, server = race
    turn.yield_turn(Workspace.open(kli.repo_dir), identity(kli, "kli"))  # kli's contribution to fed-0002
    done = kli.cli("push", who="kli")
    assert done.exit_code == 0, done.output
    assert f"pushed {kli.head()[:10]} to origin/main" in done.output
    assert server_main(server) == kli.head()
    again = kli.cli("push", who="kli")
    assert again.exit_code == 0 and "nothing to push" in again.output


def test_when_the_escrow_pushed_first_my_contribution_is_rebased_re_signed_and_lands(race: Race) -> None:
    """kli contributed to fed-0002 while the escrow signed fed-0001; the escrow's push landed first. `pbem push`
    recreates kli's commit on the escrow's, with status.yaml computed again and kli's signature, and pushes it
    through the server's hook."""
    _fed, kli, escrow, server = race
    turn.yield_turn(Workspace.open(kli.repo_dir), identity(kli, "kli"))
    mine = kli.head()
    signed = escrow_signs_and_pushes(escrow)
    done = kli.cli("push", who="kli")
    assert done.exit_code == 0, done.output
    assert "rebased and re-signed 1 commit(s)" in done.output
    new = server_main(server)
    assert new == kli.head() and new != mine
    assert kli.git("rev-parse", "HEAD~1").stdout.decode().strip() == signed
    assert signer_of(kli, new) == "kli"
    assert kli.git("status", "--porcelain").stdout == b""
    status = kli.data("status.yaml")
    assert [b["player"] for b in status["pending"]][:1] == ["fed"]  # fed owes his reveal of fed-0002; nothing else
    assert "escrow" not in [b["player"] for b in status["pending"]]
    assert "kli" in kli.data("dice/fed-0002.yaml")["contributions"]
    assert kli.data("dice/fed-0001.yaml")["results"]  # the escrow's signature is kept
    message = kli.git("log", "-1", "--format=%B").stdout.decode()
    assert "next: fed (reveal owed for dice fed-0002)" in message
    assert kli.pbem("verify", who="kli").returncode == 0


def test_when_both_changed_the_same_part_push_explains_in_one_line_and_changes_nothing(race: Race) -> None:
    """kli (illegally) wrote results into the escrow's batch, and the escrow signed it meanwhile: the same lines
    and keys changed on both sides. Nothing is rebased, nothing pushed."""
    _fed, kli, escrow, server = race
    kli.write("dice/fed-0001.yaml", kli.read("dice/fed-0001.yaml") + "results: [6]\n")
    kli.sneak("kli", "kli: results of my own")
    escrow_signs_and_pushes(escrow)
    landed, before = server_main(server), state(kli)
    done = kli.cli("push", who="kli")
    assert done.exit_code == 1
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "[push.conflict]" in lines[0] and "dice/fed-0001.yaml" in lines[0]
    assert "git reset --hard origin/main" in lines[0]
    assert state(kli) == before and server_main(server) == landed


def test_push_re_signs_only_my_own_commits(race: Race) -> None:
    """An unpublished commit signed by another key cannot be re-signed by me: push.not-mine."""
    _fed, kli, escrow, server = race
    turn.yield_turn(Workspace.open(kli.repo_dir), identity(kli, "kli"))
    escrow_signs_and_pushes(escrow)
    before = state(kli)
    done = kli.cli("push", who="fed")  # fed's key in kli's clone
    assert done.exit_code == 1 and "[push.not-mine]" in done.output
    assert state(kli) == before


def test_push_does_not_publish_a_commit_that_fails_verification(race: Race) -> None:
    """A fast-forward is verified before it is pushed: findings are printed and nothing is pushed."""
    _fed, kli, _escrow, server = race
    landed = server_main(server)
    kli.edit("kli", through="1.12.damage")  # kli's turn waits: he only owes a contribution now
    kli.sneak("kli", "kli: too early")
    done = kli.cli("push", who="kli")
    assert done.exit_code == 1
    assert "[signature.not-in-control]" in done.output and "not pushed" in done.output
    assert server_main(server) == landed


def test_two_players_joining_at_once_both_get_their_seat(tmp_path: Path) -> None:
    """The commonest race: fed and kli both claim a seat on the new game. fed's join lands first; kli's join
    (the line of his own seat in game.yaml) is rebased onto it line by line, re-signed and pushed."""
    fed, server = new_game(tmp_path, escrow=False)
    kli = clone_for(fed, server, "kli")
    setup.join(Workspace.open(fed.repo_dir), "fed", identity(fed, "fed"))
    fed.git("push", "-q", "origin", "main")
    setup.join(Workspace.open(kli.repo_dir), "kli", identity(kli, "kli"))
    done = kli.cli("push", who="kli")
    assert done.exit_code == 0, done.output
    seats = {s["id"]: s.get("key") for s in kli.data("game.yaml")["players"]}
    assert seats["fed"] == identity(fed, "fed").public.to_line()
    assert seats["kli"] == identity(kli, "kli").public.to_line()
    assert server_main(server) == kli.head()
    assert "# A two-ship duel" in kli.read("game.yaml")  # merged line by line: the template's comments stay
    assert kli.pbem("verify", who="kli").returncode == 0


def test_push_without_a_remote_is_a_usage_error(played: Table) -> None:
    done = played.cli("push", who="fed")
    assert done.exit_code == 2 and "[push.no-remote]" in done.output


# --- merging one file ------------------------------------------------------------------------------------------

SEATS = b"players:\n  - {id: fed}\n  - {id: kli}\nsetup: {}\n"


def test_changes_to_neighbouring_lines_merge() -> None:
    mine = SEATS.replace(b"{id: kli}", b"{id: kli, key: K}")
    theirs = SEATS.replace(b"{id: fed}", b"{id: fed, key: F}")
    assert merge_lines(SEATS, mine, theirs) == b"players:\n  - {id: fed, key: F}\n  - {id: kli, key: K}\nsetup: {}\n"
    assert merge_file("game.yaml", SEATS, mine, mine) == mine  # the same change on both sides


@pytest.mark.parametrize("mine, theirs", [
    (SEATS.replace(b"{id: kli}", b"{id: kli, key: K}"), SEATS.replace(b"{id: kli}", b"{id: kli, key: X}")),
    (SEATS + b"a: 1\n", SEATS + b"a: 2\n"),  # two insertions at one place, and one key two values
], ids=["same-line", "same-place"])
def test_overlapping_changes_conflict(mine: bytes, theirs: bytes) -> None:
    with pytest.raises(MergeConflict):
        merge_file("game.yaml", SEATS, mine, theirs)


def test_two_contributions_to_one_batch_merge_key_by_key() -> None:
    """With three or more players, two contributions to one batch both add the `contributions:` block: the
    lines clash, the mapping merges."""
    base = dump_mapping({"id": "fed-0001", "roller": "fed", "sides": 6}).encode()
    mine = dump_mapping({"id": "fed-0001", "roller": "fed", "sides": 6, "contributions": {"kli": "aa"}}).encode()
    theirs = dump_mapping({"id": "fed-0001", "roller": "fed", "sides": 6, "contributions": {"rom": "bb"}}).encode()
    merged = yamlsafe.load(merge_file("dice/fed-0001.yaml", base, mine, theirs) or b"", "fed-0001").data
    assert merged["contributions"] == {"kli": "aa", "rom": "bb"} and merged["sides"] == 6
    clash = dump_mapping({"id": "fed-0001", "roller": "fed", "sides": 8}).encode()
    with pytest.raises(MergeConflict):
        merge_file("dice/fed-0001.yaml", base, mine.replace(b"sides: 6", b"sides: 4"), clash)


def test_a_file_removed_on_one_side_and_changed_on_the_other_conflicts() -> None:
    with pytest.raises(MergeConflict):
        merge_file("players/kli.yaml", b"through: x\n", None, b"through: y\n")
    assert merge_file("players/kli.yaml", None, b"a: 1\n", None) == b"a: 1\n"


