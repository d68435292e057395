"""Run a GitHub Actions workflow file here, the way a GitHub-hosted runner would, without GitHub (DESIGN §9).

What it does as the runner does:

* the workspace: GITHUB_WORKSPACE is an empty folder; `actions/checkout` clones the repository into it (or into
  its `path:`), fetches every branch and tag (`fetch-depth: 0`) or only the one commit (the default, depth 1),
  fetches the commit by its id when no branch holds it (a fork's pull-request head lives only under
  refs/pull/N/head), checks it out detached, and leaves the token in `.git/config` unless
  `persist-credentials: false`;
* `run:` steps run under `bash --noprofile --norc -eo pipefail {0}` (or `sh -e {0}`), in `working-directory`
  (relative to the workspace, which must exist), with the workflow's, the job's and the step's `env:`;
* `${{ … }}` over the contexts `github` (the event payload included), `env`, `job`, `steps`, `runner`, with the
  operators `! && || == != ( )`, literals and the status functions `success() failure() always() cancelled()`;
  anything else (another function, `secrets`, `matrix`, an index) is refused loudly, never guessed;
* `if:` (a bare expression or `${{ }}`; a step without one runs only while the job succeeds);
* the files GITHUB_OUTPUT (a step's outputs, `steps.<id>.outputs.*`), GITHUB_ENV, GITHUB_PATH and
  GITHUB_STEP_SUMMARY (every step's part joined into the job summary), and the workflow commands
  `::error …::`, `::warning …::`, `::notice …::` (annotations) and `::stop-commands::TOKEN` on stdout.

`uses:` steps are small local stand-ins: `actions/checkout` (a clone of the local bare repository that plays
GitHub) and `actions/setup-python` (the suite's own Python, with a private site folder for what a step
installs, or a fresh venv with pip when asked). Any other action fails the run. A fake `gh` on PATH answers the
API calls a workflow makes (the repository's activity record, commit statuses) from `FakeGitHub`'s data and
records each call.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from actions_expr import (Annotation, Unsupported, _text, condition, evaluate, interpolate,  # noqa: F401
                          read_commands, read_env_file)

ZERO = "0" * 40
REPOSITORY = "players/game"  # owner/name of the repository the fake GitHub hosts
SERVER = "https://github.com"


# --- the repository GitHub hosts -------------------------------------------------------------------------------

@dataclass
class FakeGitHub:
    """A bare repository playing the GitHub repository, its activity record and the commit statuses posted."""

    root: Path
    activity: list[dict[str, Any]] = field(default_factory=list)  # newest first, as the API answers
    statuses: list[dict[str, Any]] = field(default_factory=list)
    page_size: int = 100  # the activity record is answered in pages of this many entries

    @property
    def bare(self) -> Path:
        return self.root / "origin.git"

    @classmethod
    def hosting(cls, clone: Path, root: Path) -> FakeGitHub:
        """GitHub holding a copy of `clone`'s branches (its main pushed once, recorded in the activity)."""
        root.mkdir(parents=True, exist_ok=True)
        hub = cls(root)
        _git("init", "-q", "--bare", "-b", "main", str(hub.bare))
        _git("-C", str(hub.bare), "config", "uploadpack.allowAnySHA1InWant", "true")  # as GitHub: any object
        hub.push(clone, "main", "refs/heads/main")
        return hub

    def tip(self, ref: str = "refs/heads/main") -> str | None:
        done = subprocess.run(["git", "-C", str(self.bare), "rev-parse", "-q", "--verify", ref + "^{commit}"],
                              capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    def push(self, clone: Path, source: str, ref: str, *, at: datetime | None = None, actor: str = "alice") -> str:
        """Push `source` of `clone` to `ref` here; a move of a branch is written to the activity record at `at`
        (GitHub's own time of the push, now by default)."""
        before = self.tip(ref) or ZERO
        _git("-C", str(clone), "push", "-q", "--force", str(self.bare), f"{source}:{ref}")
        after = self.tip(ref)
        assert after is not None
        if ref.startswith("refs/heads/"):
            when = (at or datetime.now(timezone.utc)).astimezone(timezone.utc)
            self.activity.insert(0, {
                "id": len(self.activity) + 1, "node_id": f"A_{len(self.activity) + 1}", "before": before,
                "after": after, "ref": ref, "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "activity_type": "branch_creation" if before == ZERO else "push",
                "actor": {"login": actor, "id": 1, "type": "User"}})
        return after

    def state_file(self) -> Path:
        path = self.root / "gh-state.json"
        path.write_text(json.dumps({"activity": self.activity, "page_size": self.page_size,
                                    "repository": REPOSITORY}))
        return path

    def calls(self) -> list[dict[str, Any]]:
        """Every `gh` call made, in order: {"argv": [...], "token": bool}."""
        log = self.root / "gh-calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def posted_statuses(self) -> list[dict[str, str]]:
        """The commit statuses posted, in order: {"sha", "state", "context", …}."""
        log = self.root / "gh-statuses.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# --- events ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    """What GitHub gives a run: the event's name and payload, GITHUB_SHA and GITHUB_REF."""

    name: str
    payload: Mapping[str, Any]
    sha: str
    ref: str
    actor: str = "alice"


def _repo_json(full_name: str = REPOSITORY, fork: bool = False) -> dict[str, Any]:
    return {"full_name": full_name, "name": full_name.split("/")[1], "fork": fork,
            "owner": {"login": full_name.split("/")[0]}, "default_branch": "main"}


def push_event(before: str, after: str, ref: str = "refs/heads/main") -> Event:
    return Event("push", {"ref": ref, "before": before, "after": after, "created": before == ZERO,
                          "forced": False, "repository": _repo_json(), "pusher": {"name": "alice"},
                          "head_commit": {"id": after}}, after, ref)


def pull_request_event(hub: FakeGitHub, number: int, head: str, head_ref: str, *, fork: str | None = None,
                       action: str = "opened") -> Event:
    """`pull_request_target`: GITHUB_SHA and GITHUB_REF are the base branch's tip and ref, never the head's."""
    base = hub.tip()
    assert base is not None
    head_repo = _repo_json(fork, fork=True) if fork else _repo_json()
    pull = {"number": number, "state": "open", "head": {"sha": head, "ref": head_ref, "repo": head_repo},
            "base": {"sha": base, "ref": "main", "repo": _repo_json()}}
    return Event("pull_request_target", {"action": action, "number": number, "pull_request": pull,
                                         "repository": _repo_json()}, base, "refs/heads/main")


def schedule_event(hub: FakeGitHub, cron: str) -> Event:
    """A scheduled run: the default branch's tip."""
    tip = hub.tip()
    assert tip is not None
    return Event("schedule", {"schedule": cron, "repository": _repo_json()}, tip, "refs/heads/main")


# --- results ---------------------------------------------------------------------------------------------------

@dataclass
class StepResult:
    name: str
    outcome: str  # success, failure, skipped
    exit_code: int | None  # None: skipped
    stdout: str = ""
    stderr: str = ""
    annotations: list[Annotation] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class JobResult:
    status: str
    steps: list[StepResult]
    summary: str
    workspace: Path
    env_seen: dict[str, dict[str, str]] = field(default_factory=dict)  # step name -> its env as given

    def step(self, name_part: str) -> StepResult:
        found = [s for s in self.steps if s.name.startswith(name_part)]
        assert len(found) == 1, (name_part, [s.name for s in self.steps])
        return found[0]

    @property
    def annotations(self) -> list[Annotation]:
        return [a for s in self.steps for a in s.annotations]


# --- the runner ------------------------------------------------------------------------------------------------




def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True, text=True, env=_git_env())


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    return env


def load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    if True in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def triggers(data: Mapping[str, Any], event: Event) -> bool:
    """Whether the workflow runs on `event` (the `branches` filter of push included)."""
    on = data["on"]
    on = {name: None for name in ([on] if isinstance(on, str) else on)} if not isinstance(on, Mapping) else on
    if event.name not in on:
        return False
    spec = on[event.name] or {}
    if event.name == "push" and "branches" in spec:
        branch = event.ref.removeprefix("refs/heads/")
        return any(re.fullmatch(pattern.replace("*", "[^/]*"), branch) for pattern in spec["branches"])
    if event.name == "schedule":
        return any(entry.get("cron") == event.payload["schedule"] for entry in spec)
    unknown = set(spec) - {"types", "branches"}
    if unknown:
        raise Unsupported(f"trigger {event.name}: filters {sorted(unknown)} are not emulated")
    return True


class Runner:
    """Runs one job of a workflow for one event against a FakeGitHub (module docstring)."""

    def __init__(self, hub: FakeGitHub, tmp: Path, *, home: Path, clean_python: bool = False) -> None:
        self.hub, self.tmp, self.home, self.clean_python = hub, tmp, home, clean_python
        self.bin = tmp / "fake-bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        gh = self.bin / "gh"
        gh.write_text(f"#!{sys.executable}\n" + (Path(__file__).with_name("fake_gh.py")).read_text())
        gh.chmod(0o755)

    def run(self, text: str, event: Event, job: str = "verify") -> JobResult:
        data = load(text)
        if not triggers(data, event):
            raise Unsupported(f"the workflow does not run on {event.name} {event.ref}")
        for key in set(data) - {"name", "on", "permissions", "concurrency", "env", "jobs"}:
            raise Unsupported(f"workflow key {key!r} is not emulated")
        spec = data["jobs"][job]
        if not str(spec.get("runs-on", "")).startswith("ubuntu-"):
            raise Unsupported(f"runs-on {spec.get('runs-on')!r}: only ubuntu runners are emulated")
        for key in set(spec) - {"runs-on", "steps", "permissions", "timeout-minutes", "env", "name"}:
            raise Unsupported(f"job key {key!r} is not emulated")
        run_dir = self.tmp / f"run-{len(list(self.tmp.glob('run-*')))}"
        workspace, temp, tool = run_dir / "work" / "game-repo", run_dir / "temp", run_dir / "tool"
        for folder in (workspace, temp, tool):
            folder.mkdir(parents=True)
        event_file = run_dir / "event.json"
        event_file.write_text(json.dumps(event.payload))
        github = {"event": event.payload, "event_name": event.name, "sha": event.sha, "ref": event.ref,
                  "ref_name": event.ref.rsplit("/", 1)[-1], "repository": REPOSITORY,
                  "repository_owner": REPOSITORY.split("/")[0], "actor": event.actor, "run_id": "4242",
                  "run_number": "7", "run_attempt": "1", "server_url": SERVER, "api_url": "https://api.github.com",
                  "workspace": str(workspace), "job": job, "token": "ghs_faketoken0123456789",
                  "workflow": data.get("name", "")}
        runner = {"temp": str(temp), "tool_cache": str(tool), "os": "Linux", "arch": "X64", "name": "emulated"}
        base_env = {"PATH": f"{self.bin}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home),
                    "CI": "true", "GITHUB_ACTIONS": "true", "LC_ALL": "C.UTF-8",
                    "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_NAME": event.name,
                    "GITHUB_EVENT_PATH": str(event_file), "GITHUB_SHA": event.sha, "GITHUB_REF": event.ref,
                    "GITHUB_REF_NAME": github["ref_name"], "GITHUB_REPOSITORY": REPOSITORY,
                    "GITHUB_REPOSITORY_OWNER": github["repository_owner"], "GITHUB_ACTOR": event.actor,
                    "GITHUB_RUN_ID": "4242", "GITHUB_SERVER_URL": SERVER, "GITHUB_API_URL": github["api_url"],
                    "GITHUB_JOB": job, "RUNNER_TEMP": str(temp), "RUNNER_TOOL_CACHE": str(tool),
                    "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "FAKE_GH_STATE": str(self.hub.state_file()),
                    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(self.home / ".gitconfig")}
        path_prefix: list[str] = []
        added_env: dict[str, str] = {}
        steps_ctx: dict[str, Any] = {}
        status = "success"
        results: list[StepResult] = []
        summary_parts: list[str] = []
        seen: dict[str, dict[str, str]] = {}
        for index, step in enumerate(spec["steps"]):
            name = step.get("name") or step.get("uses") or str(step.get("run", "")).splitlines()[0]
            for key in set(step) - {"name", "id", "if", "uses", "with", "run", "env", "working-directory",
                                    "shell", "continue-on-error", "timeout-minutes"}:
                raise Unsupported(f"step {name!r}: key {key!r} is not emulated")
            ctx = {"github": github, "runner": runner, "job": {"status": status}, "steps": steps_ctx,
                   "env": {**_str_map(data.get("env")), **_str_map(spec.get("env")), **added_env}}
            if not condition(step.get("if"), ctx, status):
                results.append(StepResult(name, "skipped", None))
                if step.get("id"):
                    steps_ctx[step["id"]] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
                continue
            env = dict(base_env)
            env["PATH"] = os.pathsep.join([*reversed(path_prefix), env["PATH"]])
            env.update(added_env)
            for scope in (data.get("env"), spec.get("env"), step.get("env")):
                env.update({k: interpolate(v, ctx, status) for k, v in (scope or {}).items()})
            files = {k: run_dir / f"{k.lower()}-{index}" for k in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH",
                                                                   "GITHUB_STEP_SUMMARY")}
            for key, path in files.items():
                path.write_text("")
                env[key] = str(path)
            seen[name] = env
            if "uses" in step:
                with_ = {k: interpolate(v, ctx, status) for k, v in (step.get("with") or {}).items()}
                result = self._action(name, step["uses"], with_, env, workspace, github, tool, path_prefix)
            else:
                result = self._script(name, step, env, workspace, ctx, status)
            result.outputs = read_env_file(files["GITHUB_OUTPUT"])
            added_env.update(read_env_file(files["GITHUB_ENV"]))
            path_prefix.extend(p for p in files["GITHUB_PATH"].read_text().splitlines() if p.strip())
            summary_parts.append(files["GITHUB_STEP_SUMMARY"].read_text())
            results.append(result)
            if step.get("id"):
                steps_ctx[step["id"]] = {"outputs": result.outputs, "outcome": result.outcome,
                                         "conclusion": "success" if step.get("continue-on-error")
                                         else result.outcome}
            if result.outcome == "failure" and not step.get("continue-on-error"):
                status = "failure"
        return JobResult(status, results, "".join(summary_parts), workspace, seen)

    def _script(self, name: str, step: Mapping[str, Any], env: dict[str, str], workspace: Path,
                ctx: Mapping[str, Any], status: str) -> StepResult:
        script = str(step["run"])
        if "${{" in script:  # GitHub substitutes them into the script text before the shell sees it
            script = interpolate(script, ctx, status)
        shell = step.get("shell", "bash")
        file = Path(env["RUNNER_TEMP"]) / f"step-{abs(hash(name))}.sh"
        file.write_text(script)
        if shell == "bash":
            argv = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(file)]
        elif shell == "sh":
            argv = ["sh", "-e", str(file)]
        else:
            raise Unsupported(f"step {name!r}: shell {shell!r} is not emulated")
        cwd = workspace / str(step.get("working-directory", "."))
        if not cwd.is_dir():  # the runner fails the step before the shell starts
            return StepResult(name, "failure", 1, "", f"An error occurred trying to start process "
                              f"'/usr/bin/bash' with working directory '{cwd}'. No such file or directory")
        timeout = 60 * float(step.get("timeout-minutes", 10))
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        return StepResult(name, "success" if done.returncode == 0 else "failure", done.returncode, done.stdout,
                          done.stderr, read_commands(done.stdout))

    def _action(self, name: str, uses: str, with_: Mapping[str, str], env: Mapping[str, str], workspace: Path,
                github: Mapping[str, Any], tool: Path, path_prefix: list[str]) -> StepResult:
        action, _, version = uses.partition("@")
        if action == "actions/checkout":
            return self._checkout(name, with_, workspace, github)
        if action == "actions/setup-python":
            return self._setup_python(name, with_, tool, path_prefix)
        if action == "actions/upload-artifact":
            return self._upload_artifact(name, with_, Path(env["RUNNER_TEMP"]).parent, Path(env["GITHUB_OUTPUT"]))
        raise Unsupported(f"action {uses!r} is not emulated")

    def _checkout(self, name: str, with_: Mapping[str, str], workspace: Path,
                  github: Mapping[str, Any]) -> StepResult:
        known = {"ref", "path", "fetch-depth", "persist-credentials", "repository", "submodules", "lfs"}
        for key in set(with_) - known:
            raise Unsupported(f"checkout input {key!r} is not emulated")
        if with_.get("repository", REPOSITORY) != REPOSITORY:
            raise Unsupported("checkout of another repository is not emulated")
        if with_.get("submodules", "false") != "false" or with_.get("lfs", "false") != "false":
            raise Unsupported("checkout of submodules or LFS content is not emulated")
        target = (workspace / with_.get("path", ".")).resolve()
        if workspace.resolve() not in (target, *target.parents):
            return StepResult(name, "failure", 1, "", f"Repository path '{target}' is not under "
                              f"'{workspace}'")
        ref = with_.get("ref") or github["sha"]
        depth = int(with_.get("fetch-depth", "1"))
        log: list[str] = []

        def git(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
            done = subprocess.run(["git", "-C", str(target), *args], capture_output=True, text=True, env=_git_env())
            log.append(f"git {' '.join(args)} -> {done.returncode}")
            if check and done.returncode != 0:
                raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)
            return done

        target.mkdir(parents=True, exist_ok=True)
        try:
            git("init", "-q")
            git("remote", "add", "origin", f"file://{self.hub.bare}")
            deep = [] if depth == 0 else [f"--depth={depth}"]
            if re.fullmatch(r"[0-9a-f]{40}", ref):
                specs = ["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"] if depth == 0 else [ref]
                git("fetch", "-q", "--no-tags", "--prune", *deep, "origin", *specs)
                if git("cat-file", "-e", f"{ref}^{{commit}}", check=False).returncode != 0:
                    git("fetch", "-q", "--no-tags", *deep, "origin", ref)  # e.g. a fork's head: refs/pull/N/head
                git("checkout", "-q", "--force", ref)
            else:
                branch = ref.removeprefix("refs/heads/")
                git("fetch", "-q", "--no-tags", "--prune", *deep, "origin",
                    f"+refs/heads/{branch}:refs/remotes/origin/{branch}")
                git("checkout", "-q", "--force", "-B", branch, f"refs/remotes/origin/{branch}")
            if with_.get("persist-credentials", "true") != "false":
                git("config", "--local", f"http.{SERVER}/.extraheader", f"AUTHORIZATION: basic {github['token']}")
        except subprocess.CalledProcessError as error:
            return StepResult(name, "failure", 1, "\n".join(log), str(error.stderr))
        return StepResult(name, "success", 0, "\n".join(log))

    def _upload_artifact(self, name: str, with_: Mapping[str, str], run_dir: Path, output: Path) -> StepResult:
        """The folder or file `path` kept under the run's artifacts/NAME; outputs artifact-id and artifact-url
        as the action sets them. Hidden files are left out, as by the action's default."""
        for key in set(with_) - {"name", "path", "retention-days", "if-no-files-found"}:
            raise Unsupported(f"upload-artifact input {key!r} is not emulated")
        source, target = Path(with_["path"]), run_dir / "artifacts" / with_.get("name", "artifact")
        if not source.exists():
            return StepResult(name, "success", 0, f"No files were found with the provided path: {source}. "
                              "No artifacts will be uploaded.")
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".*"))
        with output.open("a") as out:
            out.write(f"artifact-id=1\nartifact-url={SERVER}/{REPOSITORY}/actions/runs/4242/artifacts/1\n")
        return StepResult(name, "success", 0, f"uploaded {target}")

    def _setup_python(self, name: str, with_: Mapping[str, str], tool: Path, path_prefix: list[str]) -> StepResult:
        wanted = with_.get("python-version", "")
        have = f"{sys.version_info.major}.{sys.version_info.minor}"
        if wanted.strip('"') != have:
            raise Unsupported(f"setup-python {wanted!r}: the suite's Python is {have}")
        venv = tool / "Python"
        if self.clean_python:  # a Python with only pip: what a step installs is all there is
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
        else:
            # the suite's interpreter and what it has installed, plus a site folder of its own on top, so
            # that an install step writes there and never into the suite's environment
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                           capture_output=True)
            site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
            (site / "suite.pth").write_text(f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n")
            path_prefix.append(str(Path(sys.executable).parent))
        path_prefix.append(str(venv / "bin"))
        return StepResult(name, "success", 0, f"python {have} at {venv}")


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): _text(v) for k, v in (value or {}).items()}


def shell_words(script: str) -> list[list[str]]:
    """The simple commands of a script, word-split (for tests that read what a step runs)."""
    return [shlex.split(line) for line in script.splitlines() if line.strip() and not line.strip().startswith("#")]


__all__: Sequence[str] = ("FakeGitHub", "Runner", "Event", "JobResult", "StepResult", "Annotation", "Unsupported",
                          "push_event", "pull_request_event", "schedule_event", "evaluate", "interpolate",
                          "condition", "read_commands", "load", "ZERO")
