"""A stand-in for GitHub in the tests: the API endpoints `pbem push` calls (tool/pbem/services/github.py), served
on 127.0.0.1 by http.server in a thread, over a local bare repository that stands for GitHub's copy.

It behaves as a game repository configured as docs/github.md says:

* `main` is protected: a direct push is refused by a pre-receive hook printing GitHub's own `GH006` text; a push
  by an account without write access gets GitHub's "Permission … denied" text; other branches take pushes.
* The gate: for every new head of an open pull request the server runs a real `pbem verify` of that head (the
  check the game's workflow runs from the default branch) and posts its result as the commit status
  `pbem/verify`, by the app `github-actions`.
* Auto-merge: once that status is `success` on the head, from the required source, and the branch is up to date
  with `main` (strict), the server merges with a real merge commit made by git (`git commit-tree` with the head's
  tree: the transparent merge of DESIGN §3) and moves `main` to it. `strict=False` stands for a host that left
  "Require branches to be up to date" off: git's own three-way merge (`git merge-tree`).

    hub = FakeGitHub(bare, "alice", "race-1", home, tokens={"t-kli": "bob"})
    with hub:                      # serving; hub.url is the API base for PBEM_GITHUB_API
        ...
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from conftest import PBEM
from gitutil import clean_env

ACTIONS = "github-actions"  # the app whose statuses branch protection requires (docs/github.md)
CONTEXT = "pbem/verify"

HOOK = """#!/bin/sh
# GitHub's copy of the game: main is protected (a required check, changes through pull requests only)
while read old new ref; do
  if grep -qx "$GH_TOKEN" "$GIT_DIR/readonly-tokens" 2>/dev/null; then
    echo "Permission to {slug}.git denied to $(grep -x "$GH_TOKEN" "$GIT_DIR/readonly-tokens")." >&2
    exit 1
  fi
  if [ "$ref" = refs/heads/main ]; then
    echo "error: GH006: Protected branch update failed for refs/heads/main." >&2
    echo "error: Changes must be made through a pull request. Required status check \\"{context}\\" is expected." >&2
    exit 1
  fi
done
exit 0
"""


@dataclass
class Pull:
    number: int
    head: str  # branch name
    base: str
    title: str
    user: str
    state: str = "open"
    merged: bool = False
    merge_commit_sha: str | None = None
    auto_merge: bool = False
    checked: set[str] = field(default_factory=set)

    @property
    def node_id(self) -> str:
        return f"PR_{self.number}"


class FakeGitHub:
    """See the module docstring."""

    def __init__(self, bare: Path, owner: str, name: str, home: Path, tokens: dict[str, str], *,
                 strict: bool = True, required_source: str | None = ACTIONS, allow_auto_merge: bool = True) -> None:
        self.bare, self.owner, self.name, self.home = bare, owner, name, home
        self.tokens = tokens  # token -> login
        self.strict, self.required_source, self.allow_auto_merge = strict, required_source, allow_auto_merge
        self.pulls: dict[int, Pull] = {}
        self.statuses: dict[str, list[dict[str, str]]] = {}
        self.merges: list[str] = []
        self.paused = False  # while True, no check runs and nothing merges
        self.verdict: str | None = None  # when set, the check fails with this line (a gate that knows more
        # than the player's clone, e.g. its own clock: the commit verifies at home and is refused here)
        self.lock = threading.RLock()
        self.checks = home / "fake-github-checks"
        self._stop = threading.Event()
        (bare / "hooks" / "pre-receive").write_text(HOOK.replace("{slug}", self.slug).replace("{context}", CONTEXT))
        (bare / "hooks" / "pre-receive").chmod(0o755)
        self.git("clone", "-q", str(bare), str(self.checks), cwd=home)

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.name}"

    # --- serving -------------------------------------------------------------------------------------------------
    def __enter__(self) -> "FakeGitHub":
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._threads = [threading.Thread(target=server.serve_forever, daemon=True),
                         threading.Thread(target=self._work, daemon=True)]
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
        for thread in self._threads:
            thread.join(timeout=30)

    def env(self, token: str) -> dict[str, str]:
        return {"PBEM_GITHUB_API": self.url, "GH_TOKEN": token}

    def read_only(self, token: str) -> None:
        """Take the account of `token` off the collaborators with write access."""
        (self.bare / "readonly-tokens").write_text(f"{token}\n")

    # --- the repository ------------------------------------------------------------------------------------------
    def git(self, *args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=cwd or self.bare, capture_output=True, text=True, check=False,
                              env=clean_env(self.home))
        if done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
        return done.stdout.strip()

    def tip(self, branch: str) -> str | None:
        done = subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/heads/{branch}^{{commit}}"],
                              cwd=self.bare, capture_output=True, text=True, env=clean_env(self.home))
        return done.stdout.strip() or None

    def contains(self, tip: str, ancestor: str) -> bool:
        return subprocess.run(["git", "merge-base", "--is-ancestor", ancestor, tip], cwd=self.bare,
                              env=clean_env(self.home)).returncode == 0

    # --- the gate and the merge button ---------------------------------------------------------------------------
    def _work(self) -> None:
        """What GitHub does in the background: run the check on every new head of an open pull request (without
        holding the lock: a check takes a second), then merge what auto-merge may merge."""
        while not self._stop.is_set():
            if not self.paused:
                with self.lock:
                    todo = [(p, self.tip(p.head)) for p in self.pulls.values() if p.state == "open"]
                for pull, head in todo:
                    if head is not None and head not in pull.checked:
                        self._check(head)
                        with self.lock:
                            pull.checked.add(head)
                with self.lock:
                    for pull in self.pulls.values():
                        if pull.state == "open" and pull.auto_merge:  # git is asked only about these
                            head = self.tip(pull.head)
                            if head in pull.checked:
                                self._merge(pull, head)
            self._stop.wait(0.1)

    def settled(self, timeout: float = 120.0) -> None:
        """Wait until every open pull request has been checked at its head (and merged where it could)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                waiting = [p for p in self.pulls.values() if p.state == "open" and self.tip(p.head) not in p.checked]
            if not waiting:
                time.sleep(0.3)  # one more pass of the worker: the merge follows the check
                return
            time.sleep(0.1)
        raise AssertionError("the fake GitHub did not settle")

    def _check(self, sha: str) -> None:
        """The game's workflow on a pull request: a real `pbem verify` of its head, posted as `pbem/verify`."""
        self.git("fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*", cwd=self.checks)
        self.git("checkout", "-q", "--detach", sha, cwd=self.checks)
        done = subprocess.run([str(PBEM), "verify"], cwd=self.checks, capture_output=True, text=True,
                              env=clean_env(self.home), check=False)
        said = (done.stdout + done.stderr).strip().splitlines()
        if self.verdict is not None:
            done.returncode, said = 1, [self.verdict]
        with self.lock:
            self.post_status(sha, "success" if done.returncode == 0 else "failure", ACTIONS,
                             said[0][:140] if said else "")

    def post_status(self, sha: str, state: str, creator: str, description: str = "", context: str = CONTEXT) -> None:
        self.statuses.setdefault(sha, []).insert(0, {"context": context, "state": state, "creator": creator,
                                                     "description": description})

    def passed(self, sha: str) -> bool:
        """The required check as branch protection reads it: the newest `pbem/verify` from the required source."""
        for status in self.statuses.get(sha, []):
            if status["context"] == CONTEXT and (self.required_source is None
                                                 or status["creator"] == self.required_source):
                return status["state"] == "success"
        return False

    def mergeable(self, pull: Pull, head: str) -> bool:
        base = self.tip(pull.base)
        return self.passed(head) and base is not None and (not self.strict or self.contains(head, base))

    def _merge(self, pull: Pull, head: str) -> bool:
        if not self.mergeable(pull, head):
            return False
        base = self.tip(pull.base)
        assert base is not None
        if self.contains(head, base):
            tree = self.git("rev-parse", f"{head}^{{tree}}")
        else:  # the branch is behind: git's three-way merge (a host that does not require up-to-date branches)
            tree = self.git("merge-tree", "--write-tree", base, head).splitlines()[0]
        merge = self.git("commit-tree", tree, "-p", base, "-p", head, "-m",
                         f"Merge pull request #{pull.number} from {self.owner}/{pull.head}\n\n{pull.title}")
        self.git("update-ref", f"refs/heads/{pull.base}", merge, base)
        pull.state, pull.merged, pull.merge_commit_sha = "closed", True, merge
        self.merges.append(merge)
        return True

    # --- the API -------------------------------------------------------------------------------------------------
    def pull_json(self, pull: Pull) -> dict[str, Any]:
        return {"number": pull.number, "node_id": pull.node_id, "state": pull.state, "merged": pull.merged,
                "merge_commit_sha": pull.merge_commit_sha, "title": pull.title, "user": {"login": pull.user},
                "html_url": f"https://github.com/{self.slug}/pull/{pull.number}",
                "head": {"ref": pull.head, "sha": self.tip(pull.head)}, "base": {"ref": pull.base},
                "auto_merge": {"merge_method": "merge"} if pull.auto_merge else None}

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any,
               login: str) -> tuple[int, Any]:
        repo = f"/repos/{self.slug}/"
        if path == "/graphql" and method == "POST":
            return self._graphql(body)
        if not path.startswith(repo):
            return 404, {"message": "Not Found"}
        rest = path[len(repo):]
        if rest == "pulls" and method == "GET":
            head = query.get("head", [""])[0].partition(":")[2]
            found = [p for p in self.pulls.values() if p.state == query.get("state", ["open"])[0]
                     and p.head == head and p.base == query.get("base", [p.base])[0]]
            return 200, [self.pull_json(p) for p in found]
        if rest == "pulls" and method == "POST":
            if self.tip(body["head"]) is None:
                return 422, {"message": "Validation Failed", "errors": [{"field": "head", "code": "invalid"}]}
            if any(p.state == "open" and p.head == body["head"] for p in self.pulls.values()):
                return 422, {"message": f"A pull request already exists for {self.owner}:{body['head']}."}
            pull = Pull(len(self.pulls) + 1, body["head"], body["base"], body.get("title", ""), login)
            self.pulls[pull.number] = pull
            return 201, self.pull_json(pull)
        found = re.fullmatch(r"pulls/(\d+)(/merge)?", rest)
        if found and int(found[1]) in self.pulls:
            pull = self.pulls[int(found[1])]
            if method == "GET" and not found[2]:
                return 200, self.pull_json(pull)
            if method == "PUT" and found[2]:
                head = self.tip(pull.head)
                if pull.state != "open" or head is None or head != body.get("sha", head):
                    return 409, {"message": "Head branch was modified. Review and try the merge again."}
                if not self._merge(pull, head):
                    return 405, {"message": f"Required status check \"{CONTEXT}\" is expected."}
                return 200, {"merged": True, "sha": pull.merge_commit_sha}
        found = re.fullmatch(r"commits/([0-9a-f]{40})/status", rest)
        if found and method == "GET":
            statuses = self.statuses.get(found[1], [])
            state = statuses[0]["state"] if statuses else "pending"
            return 200, {"state": state, "statuses": [{k: v for k, v in s.items() if k != "creator"}
                                                      for s in statuses]}
        found = re.fullmatch(r"statuses/([0-9a-f]{40})", rest)
        if found and method == "POST":
            self.post_status(found[1], body["state"], login, body.get("description", ""), body["context"])
            return 201, {"state": body["state"], "context": body["context"]}
        return 404, {"message": "Not Found"}

    def _graphql(self, body: Any) -> tuple[int, Any]:
        node = (body.get("variables") or {}).get("id")
        if "enablePullRequestAutoMerge" not in body.get("query", ""):
            return 200, {"errors": [{"message": "unknown query"}]}
        pull = next((p for p in self.pulls.values() if p.node_id == node), None)
        if pull is None:
            return 200, {"errors": [{"message": f"Could not resolve to a node with the global id of '{node}'"}]}
        if not self.allow_auto_merge:
            return 200, {"errors": [{"message": "Pull request Auto merge is not allowed for this repository"}]}
        head = self.tip(pull.head)
        if head is not None and self.mergeable(pull, head):
            return 200, {"errors": [{"message": "Pull request Pull request is in clean status"}]}
        pull.auto_merge = True
        return 200, {"data": {"enablePullRequestAutoMerge": {"pullRequest": {"number": pull.number}}}}


def _handler(hub: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: Any) -> None:
            pass

        def _serve(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            if token not in hub.tokens:
                code, answer = 401, {"message": "Bad credentials"}
            else:
                with hub.lock:
                    code, answer = hub.answer(self.command, url.path, parse_qs(url.query),
                                              json.loads(raw) if raw else {}, hub.tokens[token])
            data = json.dumps(answer).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = _serve

    return Handler
