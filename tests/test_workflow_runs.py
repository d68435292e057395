"""The game's workflow, run as a GitHub runner runs it (tests/actions_runner.py), for every event it answers:
a push to main, a pull request from a branch of the game repository, one from a fork, and the scheduled
deadline run (DESIGN §9 revised). Every step's exit code, the annotations, the job summary and the commit
statuses posted on the pull request's head are asserted, on real games built with tests/conftest.py.

The workflow that runs is the game's own `.github/workflows/pbem.yml` as main holds it (what GitHub runs for
`push`, `schedule` and `pull_request_target`), never the copy on a pull request's branch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from actions_runner import (ZERO, FakeGitHub, JobResult, Runner, Unsupported, pull_request_event, push_event,
                            schedule_event)
from conftest import KLI_TURN_1, PBEM, Table

WORKFLOW = ".github/workflows/pbem.yml"
CONTEXT = "pbem/verify"  # the commit status branch protection requires (docs/github.md)
ACTIVITY = "repos/players/game/activity?ref=refs/heads/main&per_page=100"
CRON = "23 */6 * * *"


def hub_for(table: Table, tmp_path: Path) -> FakeGitHub:
    return FakeGitHub.hosting(table.repo_dir, tmp_path / "github")


def main_workflow(hub: FakeGitHub) -> str:
    return subprocess.run(["git", "-C", str(hub.bare), "show", f"main:{WORKFLOW}"], capture_output=True,
                          text=True, check=True).stdout


def run(table: Table, hub: FakeGitHub, event, tmp_path: Path) -> JobResult:  # type: ignore[no-untyped-def]
    return Runner(hub, tmp_path / "runner", home=table.home).run(main_workflow(hub), event)


def assert_deadlines_ran_in_the_checkout(job: JobResult, hub: FakeGitHub) -> None:
    """The deadlines step runs inside game/ (never `repo.missing`), after asking GitHub for the activity record
    of main exactly once, with the job's token."""
    step = job.step("deadlines by the times GitHub recorded")
    assert "repo.missing" not in step.stdout + step.stderr
    asked = [c for c in hub.calls() if "activity" in " ".join(c["argv"])]
    assert asked == [{"argv": ["api", "--paginate", ACTIVITY], "token": True}]
    activity = Path(job.env_seen[step.name]["RUNNER_TEMP"]) / "activity.json"
    assert activity.read_text().startswith("[")
    assert step.exit_code == 0, step.stdout + step.stderr


# --- push to main -------------------------------------------------------------------------------------------

def test_a_push_of_a_legal_turn_to_main_runs_green(played: Table, tmp_path: Path) -> None:
    hub = hub_for(played, tmp_path)
    before = hub.tip()
    assert before is not None
    played.turn("fed", through="1.16.damage", note="straight on")
    after = hub.push(played.repo_dir, "HEAD", "refs/heads/main")
    job = run(played, hub, push_event(before, after), tmp_path)
    # pending status, checkout, setup-python, install, range, verify, summary, deadlines, the game page (written,
    # kept as an artifact, linked in the summary), result status
    assert [s.exit_code for s in job.steps] == [None, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, None]
    assert job.step("the commits to judge").outputs == {"range": f"{before}..{after}"}
    assert job.step("verify every commit").stdout == "pbem verify: 9 commits, 0 finding(s)\n"
    assert job.annotations == []
    assert job.summary.startswith("## pbem: 1 commit(s), all legal ✅")
    assert f"{before[:10]}..{after[:10]}" in job.summary and "| fed | fed: straight on |" in job.summary
    assert "**Now:** kli holds control" in job.summary
    # the game page: written from the checkout, kept as the run's artifact, linked at the end of the summary
    assert "**The game page:** [every commit with its map" in job.summary
    assert "(https://github.com/players/game/actions/runs/4242/artifacts/1)" in job.summary
    page = job.workspace.parent.parent / "artifacts" / "game-page"
    assert (page / "index.html").is_file() and (page / "data" / "steps-0000.js").is_file()
    assert "fed: straight on" in (page / "data" / "steps-0000.js").read_text()
    assert_deadlines_ran_in_the_checkout(job, hub)
    assert hub.posted_statuses() == []  # a push lands on main: its check is the run itself
    assert job.status == "success"


def test_the_checkout_holds_the_pushed_commit_with_its_whole_history_and_no_token(played: Table,
                                                                                 tmp_path: Path) -> None:
    hub = hub_for(played, tmp_path)
    head = hub.tip()
    assert head is not None
    job = run(played, hub, push_event(ZERO, head), tmp_path)
    game = job.workspace / "game"
    git = lambda *a: subprocess.run(["git", "-C", str(game), *a], capture_output=True, text=True).stdout.strip()
    assert git("rev-parse", "HEAD") == head and git("symbolic-ref", "-q", "HEAD") == ""  # detached
    assert git("rev-list", "--count", "HEAD") == "8"  # fetch-depth 0: every commit of the game
    assert "extraheader" not in (game / ".git" / "config").read_text()  # persist-credentials: false
    assert "the whole history to" in job.summary  # a new branch (before = zeros) is summarised whole
    assert job.step("the commits to judge").outputs == {"range": head}


def test_a_push_of_an_illegal_turn_fails_with_annotations_at_the_yaml_line(played: Table, tmp_path: Path) -> None:
    hub = hub_for(played, tmp_path)
    before = hub.tip()
    assert before is not None
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml").replace("{speed: 12}", "{speed: 10}", 1))
    played.edit("fed", through="1.16.damage")
    bad = played.sneak("fed")
    hub.push(played.repo_dir, "HEAD", "refs/heads/main")
    job = run(played, hub, push_event(before, bad), tmp_path)
    assert job.status == "failure"
    assert [s.exit_code for s in job.steps] == [None, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, None]
    assert job.step("verify every commit").exit_code == 1
    assert job.step("summary of the new commits").exit_code == 1  # still written, with the findings
    errors = [a for a in job.annotations if a.level == "error"]
    assert errors and all(a.properties == {"file": "report/turn-01.yaml", "line": "2", "title": "firm.changed"}
                          for a in errors)
    assert job.summary.startswith("## pbem: 2 finding(s) in 1 commit(s) ❌")
    assert "`report/turn-01.yaml:2` **firm.changed**" in job.summary
    assert_deadlines_ran_in_the_checkout(job, hub)


def test_a_push_to_another_branch_does_not_run_the_game_workflow(played: Table, tmp_path: Path) -> None:
    hub = hub_for(played, tmp_path)
    head = hub.push(played.repo_dir, "HEAD", "refs/heads/elsewhere")
    with pytest.raises(Unsupported, match="does not run on push refs/heads/elsewhere"):
        run(played, hub, push_event(ZERO, head, ref="refs/heads/elsewhere"), tmp_path)


# --- pull requests ------------------------------------------------------------------------------------------

def open_turn_branch(table: Table) -> str:
    table.git("switch", "-q", "-c", "kli-turn")
    table.turn("kli", **KLI_TURN_1)
    return table.head()


@pytest.mark.parametrize("fork", [None, "mallory/game"], ids=["branch", "fork"])
def test_a_pull_request_is_verified_at_its_head_and_the_status_lands_there(opened: Table, tmp_path: Path,
                                                                           fork: str | None) -> None:
    """The head of a fork's pull request exists in the game repository only as refs/pull/N/head: the checkout
    fetches it by its id. The commit status pbem/verify goes to the head commit (pending, then the result)."""
    hub = hub_for(opened, tmp_path)
    base = hub.tip()
    head = open_turn_branch(opened)
    hub.push(opened.repo_dir, "HEAD", "refs/pull/1/head")
    if fork is None:
        hub.push(opened.repo_dir, "HEAD", "refs/heads/kli-turn")
    job = run(opened, hub, pull_request_event(hub, 1, head, "kli-turn", fork=fork), tmp_path)
    assert [s.exit_code for s in job.steps] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert job.step("fetch the commits").exit_code == 0
    assert job.step("verify every commit").exit_code == 0, job.step("verify every commit").stdout
    assert job.step("the commits to judge").outputs == {"range": f"{base}..{head}"}
    assert job.summary.startswith("## pbem: 1 commit(s), all legal ✅") and "| kli | kli: speed 12 |" in job.summary
    assert_deadlines_ran_in_the_checkout(job, hub)
    statuses = hub.posted_statuses()
    assert [(s["sha"], s["context"], s["state"]) for s in statuses] == [
        (head, CONTEXT, "pending"), (head, CONTEXT, "success")]
    assert statuses[1]["target_url"] == "https://github.com/players/game/actions/runs/4242"
    assert job.step("the result on the").exit_code == 0


def test_a_pull_request_with_an_illegal_turn_gets_a_failure_status_on_its_head(opened: Table,
                                                                                tmp_path: Path) -> None:
    hub = hub_for(opened, tmp_path)
    opened.git("switch", "-q", "-c", "bad")
    opened.write("report/turn-01.yaml", opened.read("report/turn-01.yaml").replace("{speed: 12}", "{speed: 9}", 1))
    opened.edit("kli", through="1.12.damage")
    head = opened.sneak("kli")
    hub.push(opened.repo_dir, "HEAD", "refs/pull/2/head")
    job = run(opened, hub, pull_request_event(hub, 2, head, "bad", fork="mallory/game"), tmp_path)
    assert job.status == "failure" and job.step("verify every commit").exit_code == 1
    assert [a.properties["title"] for a in job.annotations if a.level == "error"]
    assert [s["state"] for s in hub.posted_statuses()] == ["pending", "failure"]
    assert job.step("the result on the").exit_code == 0  # the failure is posted, not a failure to post


def test_a_pull_request_that_edits_the_workflow_runs_main_s_copy_and_fails(opened: Table, tmp_path: Path) -> None:
    """The branch's own edit (`pbem verify || true`) never runs: GitHub runs main's file for
    `pull_request_target`, and that copy finds the edit (protected.changed)."""
    hub = hub_for(opened, tmp_path)
    opened.git("switch", "-q", "-c", "sneaky")
    opened.write(WORKFLOW, opened.read(WORKFLOW).replace("run: pbem verify --format github",
                                                         "run: pbem verify --format github || true"))
    head = opened.git_commit("a friendlier check", signer="kli")
    hub.push(opened.repo_dir, "HEAD", "refs/heads/sneaky")
    job = run(opened, hub, pull_request_event(hub, 3, head, "sneaky"), tmp_path)
    verify = job.step("verify every commit")
    assert verify.exit_code == 1 and "protected.changed" in verify.stdout
    assert [s["state"] for s in hub.posted_statuses()] == ["pending", "failure"]


def test_a_pull_request_that_is_not_up_to_date_fails(opened: Table, tmp_path: Path) -> None:
    hub = hub_for(opened, tmp_path)
    head = open_turn_branch(opened)
    hub.push(opened.repo_dir, "HEAD", "refs/pull/4/head")
    opened.git("switch", "-q", "main")
    opened.git("commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "main moved")
    hub.push(opened.repo_dir, "main", "refs/heads/main")
    job = run(opened, hub, pull_request_event(hub, 4, head, "kli-turn"), tmp_path)
    summary = job.step("summary of the new commits")
    assert summary.exit_code == 1 and "history.not-fast-forward" in job.summary
    assert hub.posted_statuses()[-1]["state"] == "failure"


# --- the scheduled deadline run -----------------------------------------------------------------------------

def test_the_scheduled_run_verifies_main_and_judges_deadlines_without_a_summary_of_commits(
        played: Table, tmp_path: Path) -> None:
    hub = hub_for(played, tmp_path)
    job = run(played, hub, schedule_event(hub, CRON), tmp_path)
    assert [s.exit_code for s in job.steps] == [None, 0, 0, 0, 0, 0, None, 0, None, None, None, None]
    assert job.step("verify every commit").exit_code == 0
    assert job.step("summary of the new commits").outcome == "skipped"
    assert job.step("the commits to judge").outputs == {"range": hub.tip()}
    assert_deadlines_ran_in_the_checkout(job, hub)
    assert hub.posted_statuses() == []
    waits = job.step("deadlines by the times GitHub recorded").stdout
    assert waits.strip() and waits.strip() in job.summary, (waits, job.summary)  # tee -a: the waits, also in the summary


@pytest.mark.parametrize("event", ["push", "pull_request_target", "schedule"])
def test_the_deadlines_step_passes_for_every_event(opened: Table, tmp_path: Path, event: str) -> None:
    hub = hub_for(opened, tmp_path)
    if event == "push":
        before = hub.tip()
        assert before is not None
        opened.turn("kli", **KLI_TURN_1)
        happening = push_event(before, hub.push(opened.repo_dir, "HEAD", "refs/heads/main"))
    elif event == "pull_request_target":
        head = open_turn_branch(opened)
        hub.push(opened.repo_dir, "HEAD", "refs/pull/5/head")
        happening = pull_request_event(hub, 5, head, "kli-turn", fork="mallory/game")
    else:
        happening = schedule_event(hub, CRON)
    job = run(opened, hub, happening, tmp_path)
    assert job.status == "success", [(s.name, s.exit_code, s.stderr) for s in job.steps]
