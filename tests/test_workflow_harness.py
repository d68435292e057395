"""The runner emulation itself (tests/actions_runner.py): it does what a GitHub runner does where our workflows
depend on it, and refuses loudly what it does not emulate, so no workflow test passes by the harness's luck.
The last test runs the workflow as it was before the deadlines step got `working-directory: game`, and the
harness finds the step's failure (`repo.missing`) that every game's check had."""

from __future__ import annotations

from pathlib import Path

import pytest

from actions_expr import Unsupported, condition, evaluate, interpolate, read_commands
from actions_runner import FakeGitHub, Runner, push_event
from conftest import Table
from pbem.services.setup import workflow_text

CONTEXT = {"github": {"event_name": "push", "sha": "abc", "event": {"before": "", "pull_request": None}},
           "job": {"status": "success"}, "steps": {"range": {"outputs": {"range": "a..b"}}}}


@pytest.mark.parametrize("expression, value", [
    ("github.event.pull_request.head.sha || github.sha", "abc"),
    ("github.event_name == 'PUSH'", True),  # GitHub compares strings ignoring case
    ("!cancelled() && github.event_name != 'schedule'", True),
    ("job.status == 'success' && 'success' || 'failure'", "success"),
    ("steps.range.outputs.range", "a..b"),
    ("github.nothing.here", None),
    ("(1 == 2) || 'x'", "x"),
])
def test_expressions_evaluate_as_github_does(expression: str, value: object) -> None:
    assert evaluate(expression, CONTEXT) == value


@pytest.mark.parametrize("expression", ["secrets.TOKEN", "matrix.os", "contains(github.ref, 'x')",
                                        "github.event['x']", "github.sha >", "fromJSON('1')"])
def test_what_is_not_emulated_is_refused_loudly(expression: str) -> None:
    with pytest.raises(Unsupported):
        evaluate(expression, CONTEXT)


def test_interpolation_and_if_semantics() -> None:
    assert interpolate("${{ github.sha }}/x/${{ github.event_name }}", CONTEXT) == "abc/x/push"
    assert condition(None, CONTEXT, "success") and not condition(None, CONTEXT, "failure")
    assert not condition("${{ github.event_name == 'push' }}", CONTEXT, "failure")  # an implied success()
    assert condition("${{ !cancelled() }}", CONTEXT, "failure")


def test_workflow_commands_are_read_and_stop_commands_is_honoured() -> None:
    out = "\n".join(["::error file=a.yaml,line=2,title=x.y::bad%0Athing", "::stop-commands::tok",
                     "::error::hidden", "::tok::", "::warning::seen"])
    found = read_commands(out)
    assert [(a.level, a.message) for a in found] == [("error", "bad\nthing"), ("warning", "seen")]
    assert found[0].properties == {"file": "a.yaml", "line": "2", "title": "x.y"}


def _one_step_workflow(step: str) -> str:
    return ("name: t\non:\n  push:\n    branches: [main]\njobs:\n  verify:\n    runs-on: ubuntu-latest\n"
            f"    steps:\n{step}")


def test_an_action_that_is_not_emulated_fails_the_run(played: Table, tmp_path: Path) -> None:
    hub = FakeGitHub.hosting(played.repo_dir, tmp_path / "hub")
    runner = Runner(hub, tmp_path / "run", home=played.home)
    with pytest.raises(Unsupported, match="not emulated"):
        runner.run(_one_step_workflow("      - uses: actions/cache@v4\n"), push_event("0" * 40, hub.tip() or ""))
    for unknown in ("defaults:\n  run:\n    shell: sh\n", ):  # a key that would change how steps run
        with pytest.raises(Unsupported, match="workflow key 'defaults'"):
            runner.run(unknown + _one_step_workflow("      - run: exit 0\n"), push_event("0" * 40, hub.tip() or ""))
    with pytest.raises(Unsupported, match="job key 'if'"):
        runner.run(_one_step_workflow("      - run: exit 0\n").replace("    runs-on", "    if: false\n    runs-on"),
                   push_event("0" * 40, hub.tip() or ""))
    with pytest.raises(Unsupported, match="shell 'pwsh'"):
        runner.run(_one_step_workflow("      - run: exit 0\n        shell: pwsh\n"), push_event("0" * 40, hub.tip() or ""))


def test_checkout_by_default_leaves_the_token_in_the_git_config_and_fetches_one_commit(played: Table,
                                                                                       tmp_path: Path) -> None:
    hub = FakeGitHub.hosting(played.repo_dir, tmp_path / "hub")
    job = Runner(hub, tmp_path / "run", home=played.home).run(
        _one_step_workflow("      - uses: actions/checkout@8e8c483db84b4bee98b60c0593521ed34d9990e8\n"
                           "      - run: git rev-list --count HEAD; set -o | grep pipefail\n"),
        push_event("0" * 40, hub.tip() or ""))
    assert "extraheader" in (job.workspace / ".git" / "config").read_text()
    script = job.steps[1]
    assert script.exit_code == 0 and script.stdout.split()[:3] == ["1", "pipefail", "on"]


def test_the_old_deadlines_step_outside_the_checkout_fails_and_the_harness_sees_it(played: Table,
                                                                                  tmp_path: Path) -> None:
    """The workflow as it was: its deadlines step ran in the workspace, not in game/, and exited 2 on every
    event. Run by the harness, that step fails and the job fails."""
    text = workflow_text()
    fixed = "        if: ${{ !cancelled() }}\n        working-directory: game\n        env:\n          GH_TOKEN"
    assert fixed in text
    old = text.replace(fixed, "        if: ${{ !cancelled() }}\n        env:\n          GH_TOKEN")
    old = old.replace(' --clock "$RUNNER_TEMP/activity.json"', "")  # as it was, too
    hub = FakeGitHub.hosting(played.repo_dir, tmp_path / "hub")
    job = Runner(hub, tmp_path / "run", home=played.home).run(old, push_event("0" * 40, hub.tip() or ""))
    step = job.step("deadlines")
    assert step.exit_code == 2 and job.status == "failure"
    assert "repo.missing" in step.stdout + step.stderr
