"""GitHub's REST and GraphQL API, the few calls `pbem push` makes to land a player's commits through a pull
request that GitHub merges itself once the required check passed (docs/github.md, The one flow).

The standard library's urllib only: five calls with a JSON body need no client library. The API's address is
`https://api.github.com`, or PBEM_GITHUB_API for a GitHub Enterprise host (`https://HOST/api/v3`; its GraphQL
endpoint is then `https://HOST/api/graphql`) and for the tests' stand-in server. The token comes from GH_TOKEN or
GITHUB_TOKEN, else from `gh auth token` where the GitHub CLI is installed; without one, one line says what to set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pbem.errors import USAGE, PbemError

API = "https://api.github.com"
API_ENV = "PBEM_GITHUB_API"
REPO_CONFIG = "pbem.github"  # git config: OWNER/NAME, for a remote whose URL does not name the GitHub repository
CHECK = "pbem/verify"  # the commit status the game's workflow posts on a pull request's head
TIMEOUT = 30.0

_URL = re.compile(r"^(?:[a-z+]+://)?(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?[:/](?P<owner>[^/]+)/(?P<name>[^/]+?)"
                  r"(?:\.git)?/?$")


@dataclass(frozen=True)
class Repository:
    """A repository on GitHub (or a GitHub Enterprise host) and the API that serves it."""

    owner: str
    name: str
    api: str

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def graphql(self) -> str:
        base = self.api.rstrip("/")
        return base[: -len("/v3")] + "/graphql" if base.endswith("/api/v3") else base + "/graphql"

    @property
    def host(self) -> str:
        host = urllib.parse.urlsplit(self.api).hostname or "github.com"
        return "github.com" if host == "api.github.com" else host


def api_base(environ: Mapping[str, str]) -> str:
    return environ.get(API_ENV) or API


def repository(url: str | None, configured: str | None, environ: Mapping[str, str]) -> Repository | None:
    """The GitHub repository a remote stands for: `pbem.github` (OWNER/NAME) when set, else the remote's URL
    when its host is github.com or the API's own host (GitHub Enterprise). None: not a GitHub remote."""
    api = api_base(environ)
    if configured:
        owner, _, name = configured.strip().partition("/")
        if owner and name and "/" not in name:
            return Repository(owner, name, api)
        raise PbemError("github.config", f"git config {REPO_CONFIG} is {configured!r}: write OWNER/NAME",
                        exit_code=USAGE)
    found = _URL.match(url or "")
    if found is None:
        return None
    hosts = {"github.com", "ssh.github.com", Repository("", "", api).host}
    return Repository(found["owner"], found["name"], api) if found["host"] in hosts else None


def token(environ: Mapping[str, str], host: str = "github.com") -> str | None:
    """GH_TOKEN, GITHUB_TOKEN, else what `gh auth token` prints (None without any)."""
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        if environ.get(name):
            return environ[name].strip()
    gh = shutil.which("gh")
    if gh is None:
        return None
    try:
        done = subprocess.run([gh, "auth", "token", "--hostname", host], capture_output=True, text=True,
                              timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def no_token(repo: Repository, why: str) -> PbemError:
    return PbemError("github.no-token", f"{why}: pbem lands your commits through a pull request on {repo.slug} "
                     "and needs a GitHub token: set GH_TOKEN (a token with Contents and Pull requests write "
                     "access to the repository), or log in with `gh auth login`", exit_code=USAGE)


Opener = Callable[..., Any]


class Client:
    """The calls pbem makes, each one clear line (rule `github.*`, exit 2) when GitHub says no."""

    def __init__(self, repo: Repository, token_: str, opener: Opener = urllib.request.urlopen) -> None:
        self.repo = repo
        self._token = token_
        self._open = opener

    # --- pull requests -----------------------------------------------------------------------------------------
    def open_pull(self, branch: str, base: str) -> dict[str, Any] | None:
        """The open pull request from `branch` into `base`, if there is one."""
        query = urllib.parse.urlencode({"head": f"{self.repo.owner}:{branch}", "base": base, "state": "open"})
        found = self._rest("GET", f"pulls?{query}")
        return found[0] if isinstance(found, list) and found else None

    def create_pull(self, branch: str, base: str, title: str, body: str) -> dict[str, Any]:
        return dict(self._rest("POST", "pulls", {"head": branch, "base": base, "title": title, "body": body}))

    def pull(self, number: int) -> dict[str, Any]:
        return dict(self._rest("GET", f"pulls/{number}"))

    def merge(self, number: int, sha: str) -> bool:
        """Merge now with a merge commit (transparent when the branch is up to date: DESIGN §3); False when
        GitHub will not yet (a required check not passed, the branch behind its base)."""
        try:
            self._rest("PUT", f"pulls/{number}/merge", {"merge_method": "merge", "sha": sha})
        except _Refused as exc:
            if exc.code in (405, 409):
                return False
            raise exc.error from None
        return True

    def auto_merge(self, pull: Mapping[str, Any]) -> bool:
        """Ask GitHub to merge the pull request with a merge commit once its required checks pass. False when
        it is mergeable already ("clean status"): the caller merges it at once."""
        mutation = ("mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: "
                    "MERGE}) { pullRequest { number } } }")
        answer = self._call("POST", self.repo.graphql, {"query": mutation, "variables": {"id": pull["node_id"]}})
        errors = answer.get("errors") if isinstance(answer, dict) else None
        if not errors:
            return True
        said = "; ".join(str(e.get("message", e)) for e in errors if isinstance(e, dict)) or str(errors)
        if "clean status" in said.lower():
            return False
        if "auto merge is not allowed" in said.lower() or "auto-merge" in said.lower():
            raise PbemError("github.auto-merge-off", f"{self.repo.slug} does not allow auto-merge: a host turns it "
                            "on (Settings → General → Allow auto-merge); your pull request "
                            f"#{pull['number']} waits meanwhile", exit_code=USAGE)
        raise PbemError("github.api", f"GitHub refused auto-merge of pull request #{pull['number']}: {said}",
                        exit_code=USAGE)

    def check(self, sha: str, context: str = CHECK) -> tuple[str, str] | None:
        """(state, description) of the commit status `context` on `sha`, newest first; None when not posted."""
        combined = self._rest("GET", f"commits/{sha}/status")
        for status in combined.get("statuses", []) if isinstance(combined, dict) else []:
            if status.get("context") == context:
                return str(status.get("state")), str(status.get("description") or "")
        return None

    # --- the wire ----------------------------------------------------------------------------------------------
    def _rest(self, method: str, path: str, body: Any = None) -> Any:
        url = f"{self.repo.api.rstrip('/')}/repos/{self.repo.slug}/{path}"
        return self._call(method, url, body)

    def _call(self, method: str, url: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers={
            "Accept": "application/vnd.github+json", "Authorization": f"Bearer {self._token}",
            "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "pbem",
            **({"Content-Type": "application/json"} if data is not None else {})})
        try:
            with self._open(request, timeout=TIMEOUT) as answer:
                text = answer.read()
        except urllib.error.HTTPError as exc:
            raise _Refused(exc.code, self._refusal(method, url, exc)) from None
        except (urllib.error.URLError, OSError) as exc:
            raise PbemError("github.unreachable", f"cannot reach {self.repo.api}: "
                            f"{getattr(exc, 'reason', exc)}", exit_code=USAGE) from None
        try:
            return json.loads(text) if text.strip() else {}
        except ValueError:
            raise PbemError("github.api", f"{url} answered something that is not JSON", exit_code=USAGE) from None

    def _refusal(self, method: str, url: str, exc: urllib.error.HTTPError) -> PbemError:
        try:
            said = str(json.loads(exc.read() or b"{}").get("message", "")) or exc.reason
        except (ValueError, AttributeError, OSError):
            said = str(exc.reason)
        if exc.code == 401:
            return PbemError("github.token", f"GitHub refused the token ({said}): set GH_TOKEN to a valid token",
                             exit_code=USAGE)
        if exc.code in (403, 404):
            return PbemError("github.permission", f"GitHub says {exc.code} {said} to {method} "
                             f"{urllib.parse.urlsplit(url).path}: the token needs Contents and Pull requests write "
                             f"access to {self.repo.slug}", exit_code=USAGE)
        return PbemError("github.api", f"GitHub says {exc.code} {said} to {method} "
                         f"{urllib.parse.urlsplit(url).path}", exit_code=USAGE)


class _Refused(PbemError):
    """An HTTP error answer, with its code (most become their PbemError as they are)."""

    def __init__(self, code: int, error: PbemError) -> None:
        super().__init__(error.finding.rule, error.finding.message, exit_code=error.exit_code)
        self.code = code
        self.error = error


def environment() -> Mapping[str, str]:
    return os.environ
