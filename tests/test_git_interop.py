"""pbem commits and plain-git commits are the same thing (DESIGN §3): real git, real ssh-keygen, no mocks."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import ObjectType

from gitutil import Sandbox, fixed_key, resign
from pbem.crypto import sshsig
from pbem.crypto.keys import load_private_key
from pbem.errors import PbemError
from pbem.store.commits import parse_commit
from pbem.store.repo import GameRepo
from pbem.store.signer import KeySigner, SshKeygenSigner, signer_for

FILES = {
    "game.yaml": b"format: pbem/1\nid: duel\n",
    "players/fed.yaml": b"through: '1.8.damage'\n",
    "report/turn-01.yaml": b"entries: []\n",
}
ALICE = ("Alice", "alice@example.org")


def first_turns(box: Sandbox) -> tuple[GameRepo, str, str]:
    """Two signed commits by alice on main: the start, then a turn that edits one file and removes another."""
    repo = box.new_repo()
    signer = KeySigner(fixed_key("alice"))
    c1 = repo.commit_tree(FILES, [], "start", signer, ALICE, when=1700000000)
    assert repo.head_oid() is None  # commit_tree moves no ref
    repo.update_branch_and_worktree(c1)
    turn = {k: v for k, v in FILES.items() if k != "players/fed.yaml"}
    turn["report/turn-01.yaml"] = b"entries:\n  - {at: '1.3.move', by: fed, unit: CA, do: {move: TL}}\n"
    c2 = repo.commit_tree(turn, [c1], "fed: turn 1\n", signer, ALICE, when=1700000060)
    repo.update_branch_and_worktree(c2)
    return repo, c1, c2


def test_pbem_commits_satisfy_git_fsck_verify_commit_and_log(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, c1, c2 = first_turns(box)
    work = repo.workdir
    allowed = box.allowed_signers({"fed": fixed_key("alice").public})
    box.git(work, "fsck", "--strict", "--no-dangling")
    shown = box.git(work, "cat-file", "-p", c2).stdout.decode()
    assert f"parent {c1}\n" in shown and "gpgsig -----BEGIN SSH SIGNATURE-----\n" in shown
    for oid in (c1, c2):
        done = box.git(work, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", oid)
        assert 'Good "git" signature for fed with ED25519 key' in done.stderr.decode()
    log = box.git(work, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "log", "--show-signature", "-2").stdout.decode()
    assert log.count('Good "git" signature for fed') == 2
    # And git computes the same object ids from the same bytes.
    for oid in (c1, c2):
        hashed = box.git(work, "hash-object", "-t", "commit", "--stdin", input=repo.raw_commit(oid))
        assert hashed.stdout.decode().strip() == oid


def test_verify_commit_rejects_a_stranger(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, _, c2 = first_turns(box)
    allowed = box.allowed_signers({"kli": fixed_key("bob").public})
    done = box.git(repo.workdir, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", c2, check=False)
    assert done.returncode != 0


def test_repo_reading(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, c1, c2 = first_turns(box)
    assert repo.head_oid() == c2 and repo.head_branch() == "refs/heads/main"
    assert repo.first_parent_chain(c2) == [c1, c2]
    assert repo.parents(c2) == [c1] and repo.parents(c1) == []
    files = repo.tree_files(c1)
    assert sorted(files) == sorted(FILES)
    assert {mode for _, mode in files.values()} == {stat.S_IFREG | 0o644}
    assert {path: repo.read_blob(oid) for path, (oid, _) in files.items()} == FILES
    commit = parse_commit(repo.raw_commit(c2), oid=c2)
    assert commit.parents == (c1,) and commit.message == b"fed: turn 1\n"
    assert commit.author == "Alice <alice@example.org> 1700000060 +0000" == commit.committer
    assert sshsig.verify(commit.signature or "", commit.signed_payload()).same_key(fixed_key("alice").public)


def test_update_branch_and_worktree_makes_worktree_and_index_match(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, _, c2 = first_turns(box)
    work = repo.workdir
    assert not (work / "players" / "fed.yaml").exists()
    assert (work / "report" / "turn-01.yaml").read_bytes().startswith(b"entries:\n  - ")
    assert box.git(work, "status", "--porcelain").stdout == b""
    assert box.git(work, "rev-parse", "HEAD").stdout.decode().strip() == c2


def test_worktree_files_reads_allowed_regular_files(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, _, _ = first_turns(box)
    (repo.workdir / "notes.txt").write_text("private")
    os.symlink("game.yaml", repo.workdir / "link.yaml")
    found = repo.worktree_files(lambda path: path.endswith(".yaml"))
    assert list(found) == ["game.yaml", "report/turn-01.yaml"]
    assert found["game.yaml"] == FILES["game.yaml"]


def test_update_ref_moves_only_that_ref(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, c1, c2 = first_turns(box)
    repo.update_ref("refs/heads/turn", c1)
    assert box.git(repo.workdir, "rev-parse", "turn", "HEAD").stdout.decode().split() == [c1, c2]


def test_open_discovers_upwards_and_reports_a_missing_repo(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, _, c2 = first_turns(box)
    assert GameRepo.open(repo.workdir / "report").head_oid() == c2
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    with pytest.raises(PbemError) as exc:
        GameRepo.open(lonely)
    assert exc.value.finding.rule == "repo.missing" and exc.value.exit_code == 2
    with pytest.raises(PbemError) as exc:
        GameRepo.init(repo.workdir)
    assert exc.value.finding.rule == "repo.exists"


def test_wrong_or_missing_objects(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, c1, _ = first_turns(box)
    blob = repo.tree_files(c1)["game.yaml"][0]
    for oid, expected in [(blob, "repo.wrong-type"), ("0" * 40, "repo.object-missing")]:
        with pytest.raises(PbemError) as exc:
            repo.raw_commit(oid)
        assert exc.value.finding.rule == expected


def test_tree_paths_are_checked(tmp_path: Path) -> None:
    repo = Sandbox(tmp_path).new_repo()
    signer = KeySigner(fixed_key())
    for files in [{"../x": b""}, {".git/config": b""}, {"a//b": b""}, {"a": b"", "a/b": b""}, {"a/b": b"", "a": b""}]:
        with pytest.raises(PbemError) as exc:
            repo.commit_tree(files, [], "m", signer, ALICE)
        assert exc.value.finding.rule == "tree.path"


def test_a_trailing_newline_on_the_signature_changes_the_commit_id(tmp_path: Path) -> None:
    """Why DESIGN §3 insists on no final newline: libgit2 then writes an extra ' ' line git would not."""
    repo, c1, _ = first_turns(Sandbox(tmp_path))
    commit = parse_commit(repo.raw_commit(c1))
    payload = commit.signed_payload().decode()
    assert str(repo.repo.create_commit_with_signature(payload, commit.signature or "")) == c1
    assert str(repo.repo.create_commit_with_signature(payload, (commit.signature or "") + "\n")) != c1


# -- plain git commit -S (DESIGN §3: a player may use plain git) --------------------------------------------


@pytest.mark.parametrize("made_by", ["pbem", "ssh-keygen"])
def test_plain_git_commit_is_parsed_and_verified(tmp_path: Path, made_by: str) -> None:
    box = Sandbox(tmp_path)
    path = box.new_key("bob")[0] if made_by == "pbem" else box.ssh_keygen_key("bob")
    work = box.git_repo()
    box.ssh_signing_config(work, path)
    (work / "report").mkdir()
    (work / "report" / "turn-01.yaml").write_text("entries: []\n")
    box.git(work, "add", "-A")
    box.git(work, "commit", "-q", "-S", "-m", "kli: turn 1")
    (work / "game.yaml").write_text("id: duel\n")
    box.git(work, "add", "-A")
    box.git(work, "commit", "-q", "-S", "-m", "kli: turn 2", "-m", "with a body")
    repo = GameRepo.open(work / "report")
    tip = repo.head_oid()
    assert tip is not None
    for oid in repo.first_parent_chain(tip):
        commit = parse_commit(repo.raw_commit(oid), oid=oid)
        assert commit.signature is not None
        assert sshsig.verify(commit.signature, commit.signed_payload()).same_key(load_private_key(path).public)
        git_commit = repo.repo[oid]
        assert isinstance(git_commit, pygit2.Commit)
        signature, payload = git_commit.gpg_signature
        assert (signature.decode(), payload) == (commit.signature, commit.signed_payload())


def test_unsigned_plain_git_commit_is_reported(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    work = box.git_repo()
    box.git(work, "commit", "-q", "--allow-empty", "-m", "unsigned")
    repo = GameRepo.open(work)
    with pytest.raises(PbemError) as exc:
        parse_commit(repo.raw_commit(repo.head_oid() or ""))
    assert exc.value.finding.rule == "signature.missing"


# -- signers ------------------------------------------------------------------------------------------------


def test_ssh_keygen_signer_makes_commits_git_accepts(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path = box.ssh_keygen_key("carol")
    signer = signer_for(path)
    assert isinstance(signer, KeySigner)  # an unencrypted file is signed in-process ...
    via_tool = SshKeygenSigner(path)  # ... but ssh-keygen must give the very same signature
    assert via_tool.sign(b"payload\n") == signer.sign(b"payload\n")
    assert via_tool.public.same_key(signer.public)
    repo = box.new_repo()
    oid = repo.commit_tree(FILES, [], "start", via_tool, ALICE, when=1700000000)
    allowed = box.allowed_signers({"fed": signer.public})
    box.git(repo.workdir, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", oid)


def test_signer_for_encrypted_and_public_files(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    encrypted = box.ssh_keygen_key("dave", "-N", "secret", "-a", "1")
    assert isinstance(signer_for(encrypted), SshKeygenSigner)
    assert isinstance(signer_for(Path(f"{encrypted}.pub")), SshKeygenSigner)
    assert signer_for(encrypted).public.same_key(signer_for(Path(f"{encrypted}.pub")).public)
    with pytest.raises(PbemError) as exc:
        signer_for(tmp_path / "nope")
    assert exc.value.finding.rule == "key.missing"


def test_ssh_keygen_signer_reports_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    pub = tmp_path / "orphan.pub"
    pub.write_text(fixed_key("dave").public.to_line() + "\n")
    with pytest.raises(PbemError) as exc:
        SshKeygenSigner(pub).sign(b"payload")
    assert exc.value.finding.rule == "key.sign-failed"


@pytest.mark.skipif(shutil.which("ssh-agent") is None, reason="needs ssh-agent")
def test_signing_through_ssh_agent_with_only_the_pub_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = Sandbox(tmp_path)
    path = box.ssh_keygen_key("erin")
    sock = tmp_path / "agent.sock"
    started = box.run("ssh-agent", "-s", "-a", sock).stdout.decode()
    pid = int(re.search(r"SSH_AGENT_PID=(\d+)", started).group(1))  # type: ignore[union-attr]
    try:
        box.run("ssh-add", "-q", path, env={"SSH_AUTH_SOCK": str(sock)})
        path.unlink()  # from now on only the agent holds the private key
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        signer = signer_for(Path(f"{path}.pub"))
        assert isinstance(signer, SshKeygenSigner)
        armored = signer.sign(b"turn\n")
        assert sshsig.verify(armored, b"turn\n").same_key(signer.public)
    finally:
        os.kill(pid, signal.SIGTERM)


# -- the tamper helper other tests use ----------------------------------------------------------------------


def test_resign_helper_makes_a_valid_commit_with_changed_content(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repo, c1, c2 = first_turns(box)
    evil = resign(repo.raw_commit(c2), fixed_key("bob"), lambda p: p.replace(b"fed: turn 1", b"fed: turn 9"))
    oid = str(repo.repo.odb.write(ObjectType.COMMIT, evil))
    commit = parse_commit(repo.raw_commit(oid))
    assert commit.message == b"fed: turn 9\n" and commit.parents == (c1,)
    assert sshsig.verify(commit.signature or "", commit.signed_payload()).same_key(fixed_key("bob").public)
    box.git(repo.workdir, "fsck", "--strict", "--no-dangling")
    assert isinstance(repo.repo[oid], pygit2.Commit)
