"""Self-hosted enforcement (DESIGN §9, issue 6 part 2): `pbem hook install` puts the verifier in a bare
repository's pre-receive hook, and real `git push`es of legal and illegal turns show what lands.

Every test pushes over the file path with the `git` binary into a bare repository made by `git init --bare`; the
pushed objects sit in git's quarantine while the hook runs, so a turn that lands proves the hook reads them.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from conftest import KLI_TURN_1, Table
from gitutil import CHILDREN_CROSSCHECK, clean_env
from pbem.services import gateclock, hook

ZERO = "0" * 40


# --- helpers ---------------------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _hook_cross_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook's own tests keep the suite's cross-checks in the hook's process (tests/gitutil.py)."""
    monkeypatch.setenv(CHILDREN_CROSSCHECK, "1")


def serve(table: Table) -> Path:
    """A bare repository with the hook installed (through the CLI), holding the table's game as `origin`."""
    server = table.root / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(server)], check=True,
                   env=clean_env(table.home))
    installed = table.cli("hook", "install", str(server))
    assert installed.exit_code == 0, installed.output
    table.git("remote", "add", "origin", server)
    first = push(table)
    assert first.returncode == 0, first.stderr
    assert "pbem: refs/heads/main: ok" in first.stderr
    table.git("branch", "--set-upstream-to=origin/main")
    return server


def age_record(server: Path, days: float) -> None:
    """Days pass at the gate: every line of its record of accepted commits (services.gateclock) moves `days`
    into the past. This stands for the gate's own clock moving on, never for anything a pusher can do."""
    from datetime import datetime, timedelta, timezone

    record = gateclock.record_path(server)
    lines = []
    for line in record.read_text().splitlines():
        oid, when = line.split(" ")
        old = datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        lines.append(gateclock.record_line(oid, old - timedelta(days=days)))
    record.write_text("".join(lines))


def push(table: Table, *args: str) -> subprocess.CompletedProcess[str]:
    """`git push origin [ARGS | main]` from the table's repository; stderr has the hook's `remote:` lines."""
    done = table.git("push", "origin", *(args or ("main",)), check=False)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def server_ref(server: Path, ref: str = "refs/heads/main") -> str | None:
    done = subprocess.run(["git", "rev-parse", "--verify", "-q", ref], cwd=server, capture_output=True, text=True)
    return done.stdout.strip() or None


def clone_for(table: Table, server: Path, name: str) -> Table:
    """Another player's machine: his own clone of the server (same keys folder, his own HOME)."""
    other = Table(table.root / name)
    other.root.mkdir()
    (other.root / "keys").symlink_to(table.root / "keys")
    (other.root / "home").mkdir()
    subprocess.run(["git", "clone", "-q", str(server), str(other.repo_dir)], check=True,
                   env=clean_env(other.home), capture_output=True)
    return other


def refused(done: subprocess.CompletedProcess[str], rule: str) -> None:
    """git says the hook declined, and the pusher reads the rule id on a `remote:` line."""
    assert done.returncode != 0, done.stderr
    assert "pre-receive hook declined" in done.stderr
    assert any(line.startswith("remote: ") and f"[{rule}]" in line for line in done.stderr.splitlines()), done.stderr
    assert "REFUSED" in done.stderr


# --- installing ------------------------------------------------------------------------------------------------

def test_hook_install_writes_an_executable_script_that_runs_this_pbem(base_started: Table, tmp_path: Path) -> None:
    """The hook is REPO.git/hooks/pre-receive, mode 0755, and calls this interpreter by absolute path (no PATH
    needed). Installing again replaces pbem's own hook."""
    server = tmp_path / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", str(server)], check=True)
    table = Table(base_started.root)
    done = table.cli("hook", "install", str(server))
    assert done.exit_code == 0 and "installed" in done.output
    script = server / "hooks" / "pre-receive"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    text = script.read_text()
    assert text.startswith("#!/bin/sh\n") and hook.HOOK_MARK in text
    assert os.path.realpath(text.split("exec ")[1].split()[0].strip("'")) == os.path.realpath(sys.executable)
    assert "hook pre-receive" in text
    assert table.cli("hook", "install", str(server)).exit_code == 0  # an upgrade
    assert script.read_text() == text
    subprocess.run(["git", "config", "core.hooksPath", "guard"], cwd=server, check=True)
    assert table.cli("hook", "install", str(server)).exit_code == 0  # where git will look (relative: GIT_DIR)
    assert (server / "guard" / "pre-receive").read_text() == text


def test_hook_install_refuses_a_foreign_hook_and_a_folder_without_a_repository(base_started: Table,
                                                                               tmp_path: Path) -> None:
    """A pre-receive hook pbem did not write stays unless --force; a folder that is no repository is a usage
    error (exit 2), one line."""
    table = Table(base_started.root)
    server = tmp_path / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", str(server)], check=True)
    theirs = server / "hooks" / "pre-receive"
    theirs.write_text("#!/bin/sh\nexit 0\n")
    done = table.cli("hook", "install", str(server))
    assert done.exit_code == 2 and "[hook.exists]" in done.output and "--force" in done.output
    assert theirs.read_text() == "#!/bin/sh\nexit 0\n"
    assert table.cli("hook", "install", "--force", str(server)).exit_code == 0
    assert hook.HOOK_MARK in theirs.read_text()
    (tmp_path / "empty").mkdir()
    nowhere = table.cli("hook", "install", str(tmp_path / "empty"))
    assert nowhere.exit_code == 2 and "[hook.no-repo]" in nowhere.output


def test_pre_receive_reads_only_git_s_update_lines(base_started: Table) -> None:
    """The hook's input is `OLD NEW REF` lines; anything else is a usage error, not a traceback."""
    assert hook.parse_updates(f"{ZERO} {'a' * 40} refs/heads/main\n\n") == [
        hook.RefUpdate(ZERO, "a" * 40, "refs/heads/main")]
    with pytest.raises(hook.PbemError) as err:
        hook.parse_updates("main main\n")
    assert err.value.finding.rule == "hook.bad-input"


# --- pushing turns ---------------------------------------------------------------------------------------------

def test_legal_turns_pushed_from_two_clones_land(started: Table) -> None:
    """fed's turn lands; kli clones the server, takes his turn and pushes; each push verifies only the new
    commits against the whole history, and the server's main follows."""
    server = serve(started)
    started.turn("fed", through="1.8.damage", breaks=[{"range": 8}],
                 entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}], note="speed 12")
    done = push(started)
    assert done.returncode == 0, done.stderr
    assert "remote: pbem: refs/heads/main: ok, 1 new commit verified" in done.stderr
    assert server_ref(server) == started.head()
    assert list((server / "pbem" / "verified").rglob("*.pickle"))  # the server keeps its verified state
    kli = clone_for(started, server, "kli")
    kli.turn("kli", **KLI_TURN_1)
    done = push(kli)
    assert done.returncode == 0, done.stderr
    assert server_ref(server) == kli.head()
    assert kli.pbem("verify", who="kli").returncode == 0


def _not_in_control(table: Table) -> str:
    table.edit("fed", through="1.16.damage")  # fed plays on, but kli holds control
    return "signature.not-in-control"


def _unsigned(table: Table) -> str:
    table.edit("kli", **{k: v for k, v in KLI_TURN_1.items() if k != "note"})
    table.write_status("kli", "unsigned")
    table.git_commit("kli, unsigned", signer=None)
    return "signature.missing"


@pytest.mark.parametrize("make_bad", [_not_in_control, _unsigned], ids=["not-in-control", "unsigned"])
def test_an_illegal_turn_is_refused_and_the_server_s_ref_does_not_move(opened: Table,
                                                                       make_bad: Callable[[Table], str]) -> None:
    """kli holds control: a turn by fed, or an unsigned commit, is refused; the pusher reads the rule id in git's
    `remote:` output; main on the server stays where it was."""
    server = serve(opened)
    before = server_ref(server)
    rule = make_bad(opened)
    if rule != "signature.missing":
        opened.sneak("fed")
    refused(push(opened), rule)
    assert server_ref(server) == before


def test_a_firm_entry_edited_and_re_signed_is_refused(played: Table) -> None:
    """Seed 000 §3.C: fed rewrites his firm 1.0.alloc entry and signs it; the server refuses it (firm.changed)."""
    server = serve(played)
    before = server_ref(server)
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml").replace("{speed: 12}", "{speed: 10}", 1))
    played.edit("fed", through="1.16.damage")
    played.sneak("fed")
    done = push(played)
    refused(done, "firm.changed")
    assert "report/turn-01.yaml:2: [firm.changed]" in done.stderr
    assert server_ref(server) == before


def test_a_turn_on_a_branch_merged_with_a_merge_commit_lands_and_a_merge_that_changes_content_does_not(
        opened: Table) -> None:
    """DESIGN §3, §9 pull requests: kli pushes his turn to a branch (a new branch whose history verifies is
    accepted), main takes it with `git merge --no-ff` (a transparent merge) and lands; a merge that changes
    content is refused (history.bad-merge)."""
    server = serve(opened)
    opened.git("switch", "-q", "-c", "kli-turn")
    opened.turn("kli", **KLI_TURN_1)
    done = push(opened, "kli-turn")
    assert done.returncode == 0 and "refs/heads/kli-turn: ok, 1 new commit verified" in done.stderr
    opened.git("switch", "-q", "main")
    opened.git("merge", "-q", "--no-ff", "--no-edit", "kli-turn")
    done = push(opened)
    assert done.returncode == 0, done.stderr
    assert server_ref(server) == opened.head()
    assert len(opened.git("rev-list", "--parents", "-n1", "HEAD").stdout.split()) == 3  # a merge landed
    # fed's next turn on a branch, merged with an extra edit in the merge commit
    opened.git("switch", "-q", "-c", "fed-turn")
    opened.turn("fed", through="1.12.damage", note="on")
    opened.git("switch", "-q", "main")
    opened.git("merge", "-q", "--no-ff", "--no-commit", "fed-turn")
    opened.write("players/fed.yaml", opened.read("players/fed.yaml").replace("1.12.damage", "1.16.damage"))
    opened.git("commit", "-qam", "merge, and a little more")
    before = server_ref(server)
    refused(push(opened), "history.bad-merge")
    assert server_ref(server) == before


def test_main_only_moves_forward_and_is_never_deleted_but_other_branches_may_be(opened: Table) -> None:
    """A force-push that takes back a landed turn is refused (history.rewritten), and so is deleting main;
    deleting another branch is allowed."""
    server = serve(opened)
    opened.turn("kli", **KLI_TURN_1)
    assert push(opened).returncode == 0
    landed = server_ref(server)
    opened.git("reset", "-q", "--hard", "HEAD~1")
    refused(push(opened, "+main"), "history.rewritten")
    assert server_ref(server) == landed
    refused(push(opened, ":main"), "history.rewritten")
    assert server_ref(server) == landed
    assert push(opened, "HEAD:refs/heads/old").returncode == 0
    done = push(opened, ":old")
    assert done.returncode == 0 and "refs/heads/old: deleted" in done.stderr
    assert server_ref(server, "refs/heads/old") is None


def test_findings_of_commits_already_on_the_server_do_not_block_a_push(opened: Table) -> None:
    """Only the new commits are judged (as `pbem verify BASE..HEAD`): a bad commit that reached the server before
    the hook was installed does not block later pushes of other branches."""
    opened.edit("fed", through="1.16.damage")
    opened.sneak("fed")  # not in control: illegal
    server = opened.root / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(server)], check=True,
                   env=clean_env(opened.home))
    opened.git("push", "-q", str(server), "main")  # no hook yet
    assert opened.cli("hook", "install", str(server)).exit_code == 0
    opened.git("remote", "add", "origin", server)
    done = push(opened, "main:refs/heads/copy")  # a new branch, no new commits
    assert done.returncode == 0 and "refs/heads/copy: ok, 0 new commits verified" in done.stderr


def test_the_hook_s_helper_process_reads_the_quarantined_objects(started: Table) -> None:
    """verify.fetch: the process that fetches commits ahead opens its own handle on the repository, and must see
    the pushed objects still in git's quarantine, as the hook itself does (PBEM_PIPELINE_MIN=1 makes even a
    short history use it)."""
    server = serve(started)
    started.turn("fed", through="1.8.damage", breaks=[{"range": 8}],
                 entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}], note="speed 12")
    done = started.git("push", "origin", "main", check=False, env={"PBEM_PIPELINE_MIN": "1"})
    assert done.returncode == 0, done.stderr.decode()
    assert server_ref(server) == started.head()


# --- the game branch by name (DESIGN §9), whatever HEAD says -----------------------------------------------------

def plain_server(table: Table, *install_args: str) -> tuple[Path, object]:
    """A server made with plain `git init --bare` (HEAD names master), the hook installed through the CLI with
    `install_args`, the table's main pushed; returns the server and the install's output."""
    server = table.root / "server.git"
    subprocess.run(["git", "-c", "init.defaultBranch=master", "init", "-q", "--bare", str(server)], check=True,
                   env=clean_env(table.home))
    installed = table.cli("hook", "install", *install_args, str(server))
    assert installed.exit_code == 0, installed.output
    table.git("remote", "add", "origin", server)
    return server, installed


def test_on_a_server_whose_head_names_master_main_is_still_guarded(opened: Table) -> None:
    """`git init --bare` leaves HEAD naming master: install warns (with the command that fixes it), and a
    force-push that takes back a landed turn on main is refused all the same (history.rewritten), as is deleting
    main."""
    server, installed = plain_server(opened)
    assert "HEAD names refs/heads/master, which does not exist" in installed.output
    assert "symbolic-ref HEAD refs/heads/main" in installed.output
    assert subprocess.run(["git", "config", "pbem.branch"], cwd=server, capture_output=True,
                          text=True).stdout.strip() == "main"
    assert push(opened).returncode == 0
    opened.turn("kli", **KLI_TURN_1)
    assert push(opened).returncode == 0
    landed = server_ref(server)
    opened.git("reset", "-q", "--hard", "HEAD~1")
    refused(push(opened, "+main"), "history.rewritten")
    refused(push(opened, ":main"), "history.rewritten")
    assert server_ref(server) == landed
    # HEAD's own branch is no game branch: it may be rewound
    assert push(opened, "HEAD:refs/heads/master").returncode == 0
    assert push(opened, "+HEAD~1:refs/heads/master").returncode == 0


def test_hook_install_branch_names_another_game_branch(opened: Table) -> None:
    """`--branch game`: that branch only moves forward; main is then an ordinary branch. No warning once HEAD
    names the game branch."""
    server, _ = plain_server(opened, "--branch", "game")
    assert push(opened, "main:refs/heads/game").returncode == 0
    opened.turn("kli", **KLI_TURN_1)
    assert push(opened, "main:refs/heads/game").returncode == 0
    landed = server_ref(server, "refs/heads/game")
    opened.git("reset", "-q", "--hard", "HEAD~1")
    refused(push(opened, "+main:refs/heads/game"), "history.rewritten")
    assert server_ref(server, "refs/heads/game") == landed
    assert push(opened, "main").returncode == 0 and push(opened, "+main").returncode == 0  # not the game branch
    subprocess.run(["git", "symbolic-ref", "HEAD", "refs/heads/game"], cwd=server, check=True)
    again = opened.cli("hook", "install", "--branch", "game", str(server))
    assert again.exit_code == 0 and "warning" not in again.output


def test_hook_install_refuses_a_branch_name_git_would_refuse(base_started: Table, tmp_path: Path) -> None:
    table = Table(base_started.root)
    server = tmp_path / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", str(server)], check=True)
    for bad in ("two words", "a..b", "", "x\x1b[32m"):
        done = table.cli("hook", "install", "--branch", bad, str(server))
        assert done.exit_code == 2 and "[hook.bad-branch]" in done.output, done.output
        assert "\x1b" not in done.output
        assert not (server / "hooks" / "pre-receive").exists()


# --- one verification per push, whatever the number of refs ------------------------------------------------------

def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every tip the hook hands to the verifier, in order (the real verifier still runs)."""
    calls: list[str] = []
    real = hook.verify_history

    def counted(repo, tip, **options):  # type: ignore[no-untyped-def]
        calls.append(tip)
        return real(repo, tip, **options)

    monkeypatch.setattr(hook, "verify_history", counted)
    return calls


def test_a_push_of_200_refs_to_one_bad_commit_verifies_it_once_and_prints_its_findings_once(opened: Table) -> None:
    """200 refs to one commit fed signed out of turn: all refused (no ref appears on the server), the finding
    printed once, each other ref one line naming the first."""
    server = serve(opened)
    before = server_ref(server)
    opened.edit("fed", through="1.16.damage")
    bad = opened.sneak("fed")
    specs = ["main", *(f"HEAD:refs/heads/b{i:03d}" for i in range(1, 200))]
    done = push(opened, *specs)
    refused(done, "signature.not-in-control")
    assert server_ref(server) == before
    assert subprocess.run(["git", "for-each-ref", "refs/heads/b*"], cwd=server, capture_output=True,
                          text=True).stdout == ""
    lines = done.stderr.splitlines()
    assert sum("[signature.not-in-control]" in line for line in lines) == 1, done.stderr
    same = [line for line in lines if "REFUSED, the same 1 finding(s) as refs/heads/main above" in line]
    assert len(same) == 199 and any("refs/heads/b199:" in line for line in same)
    assert bad not in subprocess.run(["git", "rev-list", "--all"], cwd=server, capture_output=True,
                                     text=True).stdout


def test_one_verification_per_push_for_many_refs_and_for_a_chain_of_new_tips(opened: Table,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: 200 updates to one new commit call the verifier once; three refs to three new commits of one
    line of play (each the parent of the next) call it once too, for the longest, and each ref gets the verdicts
    of its own commits: the clean ones pass, the refs that bring the bad commit are refused."""
    from pbem.store.repo import GameRepo

    main = opened.head()
    opened.turn("kli", **KLI_TURN_1)
    good = opened.head()
    opened.edit("kli", through="1.16.damage")  # kli again, but fed holds control now
    bad = opened.sneak("kli")
    opened.edit("kli", through="1.20.damage")
    after = opened.sneak("kli")
    opened.git("update-ref", "refs/heads/main", main)  # the new commits are on no ref: new to this "server"
    repo = GameRepo.open(opened.repo_dir)
    calls = _counting(monkeypatch)
    walks: list[str] = []
    real_walk = hook._reachable
    monkeypatch.setattr(hook, "_reachable", lambda repo, tip, hidden: walks.append(tip) or real_walk(repo, tip,
                                                                                                     hidden))
    verdicts = hook.check_updates(repo, [hook.RefUpdate(ZERO, bad, f"refs/heads/b{i}") for i in range(200)])
    assert calls == [bad] and walks == [bad]  # one verification, one walk of what is new
    assert all(v.findings and v.findings[0].rule == "signature.not-in-control" for v in verdicts)
    assert all(v.findings[0].commit == bad and v.new_commits == 2 for v in verdicts)
    calls.clear()
    chain = [hook.RefUpdate(main, good, "refs/heads/main"), hook.RefUpdate(ZERO, bad, "refs/heads/two"),
             hook.RefUpdate(ZERO, after, "refs/heads/three")]
    verdicts = hook.check_updates(repo, chain)
    assert calls == [after]
    assert [v.new_commits for v in verdicts] == [1, 2, 3]
    assert verdicts[0].findings == [] and "ok, 1 new commit verified" in verdicts[0].text()
    assert {f.commit for f in verdicts[1].findings} == {bad}
    assert {f.commit for f in verdicts[2].findings} >= {bad}


# --- the ref policy (services/refpolicy.py, docs/github.md "The hook's policy"): one test per kind ---------------

def _landed_and_bad(table: Table) -> tuple[str, str]:
    """kli's legal turn pushed to main (the server has two commits on main), then fed's out-of-turn commit on
    top, not pushed; returns (landed, bad) and leaves main at `landed`."""
    table.turn("kli", **KLI_TURN_1)
    assert push(table).returncode == 0
    landed = table.head()
    table.edit("kli", through="1.16.damage")
    bad = table.sneak("kli")
    table.git("reset", "-q", "--hard", landed)
    return landed, bad


def test_policy_game_branch_created_verified_moved_forward_only(started: Table, tmp_path: Path) -> None:
    """The game branch: created by a push whose history verifies (serve), moved forward by a legal turn; a
    forward move to a bad commit is refused by its finding, a move that drops a landed turn by history.rewritten."""
    server = serve(started)
    started.turn("fed", **{**KLI_TURN_1, "through": "1.8.damage", "entries": [
        {"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}]})
    assert push(started).returncode == 0
    landed = server_ref(server)
    started.edit("fed", through="1.16.damage")
    started.sneak("fed")
    refused(push(started), "signature.not-in-control")
    started.git("reset", "-q", "--hard", "HEAD~2")
    refused(push(started, "+main"), "history.rewritten")
    assert server_ref(server) == landed


def test_policy_other_branches_take_verified_commits_move_freely_and_may_be_deleted(opened: Table) -> None:
    """Other branches: created and moved (also backwards, a force push) when what they bring verifies; a bad
    commit on one is refused all the same; deleting one is allowed."""
    server = serve(opened)
    landed, bad = _landed_and_bad(opened)
    done = push(opened, f"{landed}:refs/heads/turns")
    assert done.returncode == 0 and "refs/heads/turns: ok, 0 new commits verified" in done.stderr
    refused(push(opened, f"{bad}:refs/heads/turns"), "signature.not-in-control")
    assert server_ref(server, "refs/heads/turns") == landed
    done = push(opened, f"+{landed}~1:refs/heads/turns")  # backwards: allowed on a branch that is no game branch
    assert done.returncode == 0 and server_ref(server, "refs/heads/turns") == server_ref(server, "main~1")
    done = push(opened, ":turns")
    assert done.returncode == 0 and server_ref(server, "refs/heads/turns") is None


def test_policy_tags_are_created_verified_and_never_move(opened: Table) -> None:
    """Tags: a lightweight or annotated tag at a verified commit is created; a tag at a bad commit is refused by
    its finding; moving a tag is ref.tag-moved, deleting one ref.tag-deleted; an annotated tag of a tree is
    hook.not-a-commit."""
    server = serve(opened)
    landed, bad = _landed_and_bad(opened)
    opened.git("tag", "turn-1", landed)
    opened.git("tag", "-a", "-m", "after kli's first turn", "annotated", landed)
    done = push(opened, "refs/tags/turn-1", "refs/tags/annotated")
    assert done.returncode == 0, done.stderr
    assert server_ref(server, "refs/tags/turn-1") == landed
    opened.git("tag", "bad", bad)
    refused(push(opened, "refs/tags/bad"), "signature.not-in-control")
    assert server_ref(server, "refs/tags/bad") is None
    opened.git("tag", "-f", "turn-1", f"{landed}~1")
    refused(push(opened, "+refs/tags/turn-1"), "ref.tag-moved")
    refused(push(opened, ":refs/tags/turn-1"), "ref.tag-deleted")
    assert server_ref(server, "refs/tags/turn-1") == landed
    tree = opened.git("rev-parse", f"{landed}^{{tree}}").stdout.decode().strip()
    opened.git("tag", "-a", "-m", "a tree", "tree-tag", tree)
    refused(push(opened, "refs/tags/tree-tag"), "hook.not-a-commit")


def test_policy_other_refs_are_refused(opened: Table) -> None:
    """Any ref that is neither a branch nor a tag (notes, refs/pbem/…, refs/pull/…): ref.not-allowed, even at
    a commit the server holds."""
    server = serve(opened)
    opened.git("notes", "add", "-m", "a note", "HEAD")
    refused(push(opened, "refs/notes/commits"), "ref.not-allowed")
    for ref in ("refs/pbem/clock", "refs/pull/1/head", "refs/meta/config"):
        refused(push(opened, f"HEAD:{ref}"), "ref.not-allowed")
        assert server_ref(server, ref) is None


@pytest.mark.parametrize("ref, rule", [("main", "history.rewritten"), ("turns", None),
                                       ("refs/tags/turn-1", "ref.tag-deleted")], ids=["game", "branch", "tag"])
def test_policy_deletions(opened: Table, ref: str, rule: str | None) -> None:
    """Deleting: the game branch never (history.rewritten), another branch always, a tag never
    (ref.tag-deleted)."""
    server = serve(opened)
    full = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
    if ref != "main":
        assert push(opened, f"HEAD:{full}").returncode == 0
    held = server_ref(server, full)
    assert held is not None
    done = push(opened, f":{full}")
    if rule is None:
        assert done.returncode == 0 and f"{full}: deleted" in done.stderr
        assert server_ref(server, full) is None
    else:
        refused(done, rule)
        assert server_ref(server, full) == held


@pytest.mark.parametrize("ref, rule", [("main", "history.rewritten"), ("turns", None),
                                       ("refs/tags/turn-1", "ref.tag-moved")], ids=["game", "branch", "tag"])
def test_policy_force_pushes(opened: Table, ref: str, rule: str | None) -> None:
    """A non-fast-forward move: refused for the game branch (history.rewritten) and for a tag (ref.tag-moved),
    allowed for another branch when what it points at verifies."""
    server = serve(opened)
    full = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
    opened.turn("kli", **KLI_TURN_1)
    assert push(opened, f"HEAD:{full}", *(["main"] if ref != "main" else [])).returncode == 0
    held = server_ref(server, full)
    done = push(opened, f"+HEAD~1:{full}")
    if rule is None:
        assert done.returncode == 0, done.stderr
        assert server_ref(server, full) == server_ref(server, "main~1")
    else:
        refused(done, rule)
        assert server_ref(server, full) == held
