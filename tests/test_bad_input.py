"""Every bad input of issue 2, one test per rule id (DESIGN §2-§4, §8, §11: "every bad input gets one clear
message naming file, line and rule, and changes nothing").

Each bad turn is tried both ways where that makes sense:
* through `pbem yield` (a real subprocess): exit 1, one line `pbem: FILE:LINE: [rule] …`, and NOTHING changed
  (HEAD, refs, index, every file of the working tree and of .git);
* written directly, as a player with plain git could (a commit signed with a player's key via
  GameRepo.commit_tree, `git commit -S` with gpg.format=ssh, or the `resign` tamper helper), then
  `pbem verify`: exit 1 and a finding with the rule id, the file and line, naming the bad commit.

The game (tests/conftest.py): fed and kli fight a tactical duel; in `played` fed holds control at 1.9.move
(his horizon ended), the 1.0.alloc speed entries are firm and kli's orders reach 1.12.damage.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from conftest import Snapshot, Table
from gitutil import fixed_key, resign

WORKFLOW = ".github/workflows/pbem.yml"
FED_GOES_ON = dict(through="1.16.damage")  # what makes fed's turn legal in `played` (progress past 1.9.move)


# --- helpers ------------------------------------------------------------------------------------------------

def assert_refused(table: Table, before: Snapshot, done: subprocess.CompletedProcess[str], rule: str,
                   where: str | None = None, code: int = 1) -> None:
    """Exit `code`, one error line `pbem: WHERE: [rule] …` (a `hint:` line may follow), no traceback, and
    nothing changed in the repository or its working tree."""
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if not line.startswith("  hint: ")]
    assert len(errors) == 1, done.stderr
    prefix = f"pbem: {where}: [{rule}] " if where else f"pbem: [{rule}] "
    assert errors[0].startswith(prefix), errors[0]
    assert table.snapshot() == before


def yield_refused(table: Table, who: str, rule: str, where: str | None = None) -> str:
    """`pbem yield` as `who` on the current working tree must be refused with `rule` at `where`."""
    before = table.snapshot()
    done = table.pbem("yield", "-m", "an illegal turn", who=who)
    assert_refused(table, before, done, rule, where)
    return done.stderr


def verify_findings(table: Table, *revisions: str) -> list[dict[str, Any]]:
    """`pbem verify --format json [RANGE]`; the exit code must agree (1 with findings, else 0)."""
    done = table.cli("verify", "--format", "json", *revisions)
    data = json.loads(done.stdout)
    assert done.exit_code == (1 if data["findings"] else 0)
    assert data["ok"] is (not data["findings"])
    return data["findings"]


def assert_found(table: Table, commit: str, rules: set[str], rule: str, file: str | None = None,
                 line: int | None = None) -> dict[str, Any]:
    """`pbem verify` finds exactly `rules`, all in `commit`; the one with `rule` names `file` and `line`."""
    found = verify_findings(table)
    assert {f["rule"] for f in found} == rules, found
    assert {f.get("commit") for f in found} == {commit}
    hit = next(f for f in found if f["rule"] == rule)
    assert (hit.get("file"), hit.get("line")) == (file, line), hit
    return hit


def replace_in(table: Table, rel: str, old: str, new: str) -> None:
    text = table.read(rel)
    assert old in text, text
    table.write(rel, text.replace(old, new, 1))


# --- 1. signature.unknown-key ---------------------------------------------------------------------------------

def test_signature_unknown_key__yield_with_a_key_that_holds_no_seat_is_refused(played: Table) -> None:
    """DESIGN §3: identity is the key in game.yaml; carol's key holds no seat."""
    played.edit("fed", **FED_GOES_ON)
    yield_refused(played, "carol", "signature.unknown-key")


def test_signature_unknown_key__a_git_commit_signed_by_a_stranger_is_found(played: Table) -> None:
    """A turn committed with plain `git commit -S` by a key not in game.yaml (DESIGN §3: identity is the key,
    never the author name)."""
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed", "signed by carol")
    bad = played.git_commit("fed: straight on", signer="carol")
    shown = played.git("cat-file", "commit", bad).stdout.decode()
    assert "gpgsig -----BEGIN SSH SIGNATURE-----" in shown
    assert_found(played, bad, {"signature.unknown-key"}, "signature.unknown-key")


# --- 2. signature.not-in-control ------------------------------------------------------------------------------

def test_signature_not_in_control__yield_out_of_turn_is_refused(played: Table) -> None:
    """Seed 000 §3: only the player in control commits; fed holds control, kli may not yield."""
    played.edit("kli", through="1.24.damage")
    yield_refused(played, "kli", "signature.not-in-control", "status.yaml")


def test_signature_not_in_control__fed_s_turn_re_signed_by_kli_is_found(played: Table) -> None:
    """The tamper helper: fed's legal turn, re-signed with kli's key, is a turn by kli out of turn."""
    played.turn("fed", note="straight on", **FED_GOES_ON)
    raw = played.git("cat-file", "commit", "HEAD").stdout
    forged = resign(raw, fixed_key("bob"))
    bad = played.git("hash-object", "-t", "commit", "-w", "--stdin", input=forged).stdout.decode().strip()
    played.git("update-ref", "refs/heads/main", bad)
    assert_found(played, bad, {"signature.not-in-control"}, "signature.not-in-control", "status.yaml")


# --- 3. signature.missing -------------------------------------------------------------------------------------

def test_signature_missing__a_plain_unsigned_git_commit_is_found(played: Table) -> None:
    """DESIGN §3: every commit is signed; a plain `git commit` without -S is a finding naming the commit."""
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed", "unsigned")
    bad = played.git_commit("fed: straight on", signer=None)
    assert "gpgsig" not in played.git("cat-file", "commit", bad).stdout.decode()
    assert_found(played, bad, {"signature.missing"}, "signature.missing")
    text = played.pbem("verify")
    assert text.returncode == 1 and f"[signature.missing] the commit is not signed (commit {bad[:10]})" in text.stdout
    github = played.cli("verify", "--format", "github").stdout.splitlines()
    assert github[0] == f"::error title=signature.missing::the commit is not signed (commit {bad[:10]})"


# --- 4. firm.changed ------------------------------------------------------------------------------------------

def edit_firm_entry(table: Table) -> None:
    """fed changes his own 1.0.alloc speed entry (line 2 of report/turn-01.yaml), which is firm."""
    replace_in(table, "report/turn-01.yaml", "unit: CA, do: {speed: 12}", "unit: CA, do: {speed: 10}")
    table.edit("fed", **FED_GOES_ON)


def test_firm_changed__yield_refuses_an_edit_before_the_firm_marker(played: Table) -> None:
    """Seed 000 §3.C, DESIGN §4.4: entries before the firm marker cannot change."""
    edit_firm_entry(played)
    yield_refused(played, "fed", "firm.changed", "report/turn-01.yaml:2")


def test_firm_changed__verify_finds_an_edit_before_the_firm_marker(played: Table) -> None:
    edit_firm_entry(played)
    bad = played.sneak("fed")
    hit = assert_found(played, bad, {"firm.changed"}, "firm.changed", "report/turn-01.yaml", 2)
    assert "before the firm marker" in hit["message"]


# --- 5. ownership.foreign-entry, ownership.foreign-file -------------------------------------------------------

def write_in_kli_s_name(table: Table) -> None:
    """fed adds an entry by kli after the firm marker (line 4 of report/turn-01.yaml)."""
    table.edit("fed", **FED_GOES_ON,
               entries=[{"at": "1.11.move", "by": "kli", "unit": "D7", "do": {"move": "F"}}])


def test_ownership_foreign_entry__yield_refuses_an_entry_in_another_player_s_name(played: Table) -> None:
    """DESIGN §2: a player changes only his own entries."""
    write_in_kli_s_name(played)
    yield_refused(played, "fed", "ownership.foreign-entry", "report/turn-01.yaml:4")


def test_ownership_foreign_entry__verify_finds_an_entry_in_another_player_s_name(played: Table) -> None:
    write_in_kli_s_name(played)
    bad = played.sneak("fed")
    assert_found(played, bad, {"ownership.foreign-entry"}, "ownership.foreign-entry", "report/turn-01.yaml", 4)


def test_ownership_foreign_entry__verify_finds_an_edit_of_another_player_s_entry(played: Table) -> None:
    """kli's 1.0.alloc entry edited by fed: someone else's entry, and a firm one too."""
    replace_in(played, "report/turn-01.yaml", "unit: D7, do: {speed: 12}", "unit: D7, do: {speed: 4}")
    played.edit("fed", **FED_GOES_ON)
    bad = played.sneak("fed")
    found = verify_findings(played)
    assert {(f["rule"], f["file"], f["line"], f["commit"]) for f in found} >= {
        ("ownership.foreign-entry", "report/turn-01.yaml", 3, bad), ("firm.changed", "report/turn-01.yaml", 3, bad)}


def shorten_kli_s_orders(table: Table) -> None:
    table.edit("fed", **FED_GOES_ON)
    replace_in(table, "players/kli.yaml", '"1.12.damage"', '"1.10.damage"')


def test_ownership_foreign_file__yield_refuses_an_edit_of_another_player_s_file(played: Table) -> None:
    """DESIGN §2: a player changes only his own players/<id>.yaml."""
    shorten_kli_s_orders(played)
    yield_refused(played, "fed", "ownership.foreign-file", "players/kli.yaml")


def test_ownership_foreign_file__verify_finds_an_edit_of_another_player_s_file(played: Table) -> None:
    shorten_kli_s_orders(played)
    bad = played.sneak("fed")
    assert_found(played, bad, {"ownership.foreign-file"}, "ownership.foreign-file", "players/kli.yaml")


# --- 6. status.mismatch ---------------------------------------------------------------------------------------

def test_status_mismatch__verify_finds_a_status_that_is_not_what_replay_computes(played: Table) -> None:
    """DESIGN §2: status.yaml must equal replay. fed's legal turn, but status.yaml left saying fed holds
    control at 1.9.move."""
    played.edit("fed", **FED_GOES_ON)
    bad = played.sneak("fed", status="keep")
    hit = assert_found(played, bad, {"status.mismatch"}, "status.mismatch", "status.yaml")
    assert "control: expected 'kli', got 'fed'" in hit["message"]


def test_status_mismatch__yield_writes_the_computed_status_over_a_hand_edited_one(played: Table) -> None:
    """A player cannot yield a status of his own making: `pbem yield` writes what replay computes."""
    played.edit("fed", **FED_GOES_ON)
    replace_in(played, "status.yaml", "control: fed", "control: kli")
    replace_in(played, "status.yaml", 'firm: "1.9.move"', 'firm: "1.30.move"')
    played.turn("fed", note="straight on", in_subprocess=True)
    assert (played.data("status.yaml")["control"], played.data("status.yaml")["firm"]) == ("kli", "1.13.move")
    assert verify_findings(played) == []


# --- 7. progress.none -----------------------------------------------------------------------------------------

def test_progress_none__yield_refuses_a_turn_that_does_not_reach_the_firm_point(played: Table) -> None:
    """Seed 000 §4.C: the player in control must act or forfeit at least one step."""
    yield_refused(played, "fed", "progress.none", "players/fed.yaml")


def test_progress_none__verify_finds_a_turn_that_makes_no_progress(played: Table) -> None:
    played.edit("fed", breaks=[{"range": 6}])  # a change, but his orders still end at 1.8.damage
    bad = played.sneak("fed")
    hit = assert_found(played, bad, {"progress.none"}, "progress.none", "players/fed.yaml")
    assert "1.9.move" in hit["message"]


# --- 8. rules.illegal-action ----------------------------------------------------------------------------------

def break_turn_mode(table: Table) -> None:
    """kli (in control at 1.0.alloc; fed's orders reach 1.8.damage) turns left at 1.3.move and right at
    1.6.move: turn mode 2 needs two hexes between turns. The TR entry is line 5 of report/turn-01.yaml."""
    table.edit("kli", through="1.12.damage", entries=[
        {"at": "1.0.alloc", "unit": "D7", "do": {"speed": 12}},
        {"at": "1.3.move", "unit": "D7", "do": {"move": "TL"}},
        {"at": "1.6.move", "unit": "D7", "do": {"move": "TR"}},
    ])
    assert "1.6.move" in table.read("report/turn-01.yaml").splitlines()[4]


def test_rules_illegal_action__yield_refuses_a_move_that_breaks_turn_mode(opened: Table) -> None:
    """DESIGN §7.1: TL/TR only after `turn_mode` hexes since the last turn."""
    break_turn_mode(opened)
    err = yield_refused(opened, "kli", "rules.illegal-action", "report/turn-01.yaml:5")
    assert "turn mode 2" in err


def test_rules_illegal_action__check_lists_it_and_exits_1(opened: Table) -> None:
    """`pbem check` on an illegal working tree: exit 1, the finding with file and line, nothing changed."""
    break_turn_mode(opened)
    before = opened.snapshot()
    done = opened.pbem("check", who="kli")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "report/turn-01.yaml:5: [rules.illegal-action]" in done.stdout
    assert opened.snapshot() == before


def test_rules_illegal_action__verify_finds_a_move_that_breaks_turn_mode(opened: Table) -> None:
    break_turn_mode(opened)
    bad = opened.sneak("kli")
    hit = assert_found(opened, bad, {"rules.illegal-action"}, "rules.illegal-action", "report/turn-01.yaml", 5)
    assert "turn mode 2" in hit["message"]


# --- 9. strict YAML and schemas -------------------------------------------------------------------------------

BAD_FILES = {  # players/fed.yaml: text, rule, line (DESIGN §2: strict loader, schemas; errors name file and line)
    "yaml.syntax": ('through: "1.16.damage"\nbreaks: [{range: 8}\n', 2),
    "yaml.alias": ('through: &far "1.16.damage"\nbreaks:\n  - {at: *far}\n', 1),
    "yaml.duplicate-key": ('through: "1.16.damage"\nbreaks: []\nthrough: "1.20.damage"\n', 3),
    "schema.invalid": ('through: "1.16.damage"\nbreaks: {range: 8}\n', 2),
}


@pytest.mark.parametrize("rule", sorted(BAD_FILES))
def test_bad_file__yield_refuses_it_naming_file_and_line(played: Table, rule: str) -> None:
    text, line = BAD_FILES[rule]
    played.write("players/fed.yaml", text)
    yield_refused(played, "fed", rule, f"players/fed.yaml:{line}")


@pytest.mark.parametrize("rule", sorted(BAD_FILES))
def test_bad_file__verify_finds_it_naming_file_line_and_commit(played: Table, rule: str) -> None:
    text, line = BAD_FILES[rule]
    played.write("players/fed.yaml", text)
    bad = played.sneak("fed", status="keep")
    assert_found(played, bad, {rule}, rule, "players/fed.yaml", line)


def test_bad_file__check_reports_it_with_exit_1(played: Table) -> None:
    played.write("players/fed.yaml", BAD_FILES["yaml.duplicate-key"][0])
    before = played.snapshot()
    done = played.pbem("check", who="fed")
    assert_refused(played, before, done, "yaml.duplicate-key", "players/fed.yaml:3")


def test_bad_report_entry__a_wrong_type_in_a_report_is_schema_invalid(played: Table) -> None:
    """A report entry whose `at` is a number, not a game time string."""
    played.edit("fed", **FED_GOES_ON)
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml") + "  - {at: 1.11, by: fed, unit: CA, "
                 "do: {move: F}}\n")
    yield_refused(played, "fed", "schema.invalid", "report/turn-01.yaml:4")


# --- 10. protected.changed, tree.unexpected-path ---------------------------------------------------------------

PROTECTED_EDITS = {
    "game.yaml": ("two cruisers close in", "two cruisers part ways"),
    WORKFLOW: ("pbem verify", "true || pbem verify"),
}


@pytest.mark.parametrize("path", sorted(PROTECTED_EDITS))
def test_protected_changed__yield_refuses_a_change_to_a_frozen_file(played: Table, path: str) -> None:
    """DESIGN §3 Trees: game.yaml and the workflow are frozen after the start (a turn must not be able to
    disable its own check)."""
    played.edit("fed", **FED_GOES_ON)
    replace_in(played, path, *PROTECTED_EDITS[path])
    yield_refused(played, "fed", "protected.changed", path)


@pytest.mark.parametrize("path", sorted(PROTECTED_EDITS))
def test_protected_changed__verify_finds_a_change_to_a_frozen_file(played: Table, path: str) -> None:
    played.edit("fed", **FED_GOES_ON)
    replace_in(played, path, *PROTECTED_EDITS[path])
    bad = played.sneak("fed")
    assert_found(played, bad, {"protected.changed"}, "protected.changed", path)


def test_tree_unexpected_path__verify_finds_a_committed_stray_file(played: Table) -> None:
    """DESIGN §3 Trees: only the game layout's paths (§2)."""
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed", "with notes")
    played.write("notes.txt", "my secret plan\n")
    bad = played.git_commit("fed: straight on", signer="fed")
    assert "notes.txt" in played.git("ls-tree", "--name-only", "HEAD").stdout.decode()
    assert_found(played, bad, {"tree.unexpected-path"}, "tree.unexpected-path", "notes.txt")


def test_tree_unexpected_path__yield_never_commits_a_stray_file(played: Table) -> None:
    """`pbem yield` commits only game files; a stray file stays untracked in the working tree."""
    played.edit("fed", **FED_GOES_ON)
    played.write("notes.txt", "my secret plan\n")
    played.turn("fed", note="straight on")
    assert "notes.txt" not in played.git("ls-tree", "-r", "--name-only", "HEAD").stdout.decode()
    assert played.read("notes.txt") == "my secret plan\n"
    assert verify_findings(played) == []


# --- 11. no repository, no key --------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["status"], ["verify"], ["log"], ["check"], ["yield", "-m", "x"]])
def test_repo_missing__outside_a_git_repository_is_one_line_and_exit_2(played: Table, outside: Any,
                                                                        command: list[str]) -> None:
    """DESIGN §8: usage or environment errors exit 2 with one clear line; never a traceback."""
    done = played.pbem(*command, who="fed", cwd=outside)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if not line.startswith("  hint: ")]
    assert len(errors) == 1 and errors[0].startswith("pbem: [repo.missing] no git repository at or above ")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("command", [["yield", "-m", "x"], ["check"]])
def test_key_missing__no_key_anywhere_is_one_line_and_exit_2(played: Table, command: list[str]) -> None:
    """DESIGN §8 key order: --key, PBEM_KEY, git user.signingkey, ~/.ssh/id_ed25519; none here."""
    assert not (played.home / ".ssh").exists()
    played.edit("fed", **FED_GOES_ON)
    before = played.snapshot()
    done = played.pbem(*command, who=None)
    assert_refused(played, before, done, "key.missing", code=2)


def test_key_missing__pbem_key_naming_no_file_is_refused_not_replaced(played: Table) -> None:
    """An explicit key that does not exist is an error, never a silent fallback to another key."""
    played.edit("fed", **FED_GOES_ON)
    before = played.snapshot()
    done = played.pbem("yield", env=played.env(extra={"PBEM_KEY": str(played.root / "no-such-key")}))
    assert_refused(played, before, done, "key.missing", code=2)


def test_repo_detached__yield_on_a_detached_head_is_exit_2_and_writes_nothing(played: Table) -> None:
    """pbem never moves a detached HEAD; refusing, it writes no commit object either."""
    played.edit("fed", **FED_GOES_ON)
    played.git("switch", "-q", "--detach")
    before = played.snapshot()
    done = played.pbem("yield", who="fed")
    assert_refused(played, before, done, "repo.detached", code=2)


def test_history_findings_stop_the_player_commands_with_what_to_do(played: Table) -> None:
    """A player cannot build on a history that does not verify. An unsigned commit of his own on top (plain
    `git commit`): `pbem status` and `pbem yield` say how to undo it and sign it, never "run pbem verify"."""
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed", "unsigned")
    bad = played.git_commit("fed: straight on", signer=None)
    for command in (["status"], ["yield", "-m", "next"]):
        before = played.snapshot()
        done = played.pbem(*command, who="kli")
        assert_refused(played, before, done, "signature.missing")
        assert f"(commit {bad[:10]})" in done.stderr
        assert done.stderr.splitlines()[1] == ("  hint: undo it, keeping your edits: `git reset --soft HEAD~1`, "
                                               "then `pbem yield` (it signs)")
    played.git("reset", "-q", "--soft", "HEAD~1")  # what the hint says: the same edits, signed by pbem
    assert played.pbem("yield", "-m", "straight on", who="fed").returncode == 0


def test_repo_bad_revision__verify_of_an_unknown_range_is_exit_2(played: Table) -> None:
    done = played.pbem("verify", "no-such-branch..HEAD")
    assert done.returncode == 2 and "[repo.bad-revision]" in done.stderr and "Traceback" not in done.stderr


# --- 12. merges and ranges ------------------------------------------------------------------------------------

def turn_on_a_branch(table: Table) -> str:
    """fed's legal turn on branch `turn`, the way a pull request brings it; back on main afterwards."""
    table.git("switch", "-q", "-c", "turn")
    table.turn("fed", note="straight on", **FED_GOES_ON)
    table.git("switch", "-q", "main")
    return table.git("rev-parse", "turn").stdout.decode().strip()


def test_history_transparent_merge__a_no_ff_merge_of_a_turn_branch_is_accepted(played: Table) -> None:
    """DESIGN §3 History: the pull-request merge button's merge (tree = the branch's) is no turn and legal;
    the game goes on from it."""
    branch = turn_on_a_branch(played)
    played.git("merge", "-q", "--no-ff", "-m", "Merge pull request #1 from fed/turn", "turn")
    merge = played.head()
    assert played.git("rev-parse", "HEAD^2").stdout.decode().strip() == branch
    assert played.git("rev-parse", "HEAD^{tree}").stdout == played.git("rev-parse", "turn^{tree}").stdout
    done = played.pbem("verify")
    assert (done.returncode, done.stdout) == (0, "ok: 9 commits verified\n"), done.stdout + done.stderr
    played.turn("kli", note="straight on", through="1.24.damage")
    assert played.git("rev-parse", "HEAD~1").stdout.decode().strip() == merge
    assert verify_findings(played) == []


def change_while_merging(table: Table) -> str:
    turn_on_a_branch(table)
    table.git("merge", "-q", "--no-ff", "--no-commit", "turn")
    replace_in(table, "players/kli.yaml", '"1.12.damage"', '"1.10.damage"')
    table.git("add", "players/kli.yaml")
    table.git("commit", "-q", "--no-gpg-sign", "-m", "Merge branch 'turn' (and a little extra)")
    return table.head()


def test_history_bad_merge__a_merge_that_changes_content_is_found(played: Table) -> None:
    """DESIGN §3 History: a merge whose tree differs from its second parent's smuggles in an unchecked
    change (here: kli's orders shortened by whoever merged)."""
    merge = change_while_merging(played)
    found = verify_findings(played)
    assert [(f["rule"], f["commit"]) for f in found] == [("history.bad-merge", merge)]
    text = played.pbem("verify")
    assert text.returncode == 1 and "[history.bad-merge]" in text.stdout and merge[:10] in text.stdout


def test_history_bad_merge__a_merge_that_drops_turns_from_main_is_found(played: Table) -> None:
    """A branch started before kli's last turn, merged with the branch's tree: kli's turn would vanish from
    the game (the merge's first parent is not on the branch)."""
    played.git("switch", "-q", "-c", "stale", "HEAD~1")
    played.turn("kli", note="another first turn", through="1.16.damage")
    played.git("switch", "-q", "main")
    merge = played.git("commit-tree", "stale^{tree}", "-p", "main", "-p", "stale", "-m",
                       "Merge branch 'stale'").stdout.decode().strip()
    played.git("merge", "-q", "--ff-only", merge)
    found = verify_findings(played)
    assert [(f["rule"], f["commit"]) for f in found] == [("history.bad-merge", merge)]
    assert "is not on the merged branch" in found[0]["message"]


def test_verify_range__reports_only_on_the_range_s_commits(played: Table) -> None:
    """`pbem verify BASE..HEAD` (a pull request's commits) checks each against the full history before it,
    but reports only the range's commits. Here fed's turn also committed a stray file; kli's next turn is
    legal."""
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed", "with notes")
    played.write("notes.txt", "my secret plan\n")
    stray = played.git_commit("fed: straight on (and notes)", signer="fed")
    played.edit("kli", through="1.24.damage")
    played.sneak("kli", "kli: straight on")  # commits the game files only: notes.txt leaves the tree
    assert played.git("rev-parse", "HEAD~1").stdout.decode().strip() == stray
    assert [(f["rule"], f["commit"]) for f in verify_findings(played)] == [("tree.unexpected-path", stray)]
    assert verify_findings(played, "HEAD~1..HEAD") == []
    done = played.pbem("verify", "HEAD~1..HEAD")
    assert (done.returncode, done.stdout) == (0, "ok: 1 commits verified\n"), done.stdout
    assert [(f["rule"], f["commit"]) for f in verify_findings(played, "HEAD~2..HEAD")] == [
        ("tree.unexpected-path", stray)]
    assert verify_findings(played, "HEAD~3..HEAD~2") == []


def test_verify_range__a_bad_merge_before_the_range_is_not_reported(played: Table) -> None:
    """A bad merge that is already on the base branch is not the pull request's fault."""
    merge = change_while_merging(played)
    played.edit("kli", through="1.24.damage")
    played.sneak("kli", "kli: straight on")
    assert [f["rule"] for f in verify_findings(played)] == ["history.bad-merge"]
    assert [f["commit"] for f in verify_findings(played, "HEAD~2..HEAD")] == [merge]
    assert verify_findings(played, f"{merge}..HEAD") == []
