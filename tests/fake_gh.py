"""A stand-in for the GitHub CLI on a runner's PATH (tests/actions_runner.py): answers `gh api` for the
repository activity record and commit statuses from FakeGitHub's state file, and logs every call beside it."""

import json, os, sys
state = json.load(open(os.environ["FAKE_GH_STATE"]))
root = os.path.dirname(os.environ["FAKE_GH_STATE"])
argv = sys.argv[1:]
with open(os.path.join(root, "gh-calls.jsonl"), "a") as log:
    log.write(json.dumps({"argv": argv, "token": bool(os.environ.get("GH_TOKEN"))}) + "\n")
if not os.environ.get("GH_TOKEN"):
    sys.stderr.write("gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable.\n")
    sys.exit(4)
if not argv or argv[0] != "api":
    sys.stderr.write(f"fake gh: only `gh api` is answered, not {argv!r}\n"); sys.exit(1)
args, fields, method, paginate, path = argv[1:], {}, None, False, None
i = 0
while i < len(args):
    a = args[i]
    if a == "--paginate": paginate = True
    elif a in ("-X", "--method"): method = args[i + 1]; i += 1
    elif a in ("-f", "-F", "--raw-field", "--field"):
        k, _, v = args[i + 1].partition("="); fields[k] = v; i += 1
    elif a.startswith("-"):
        sys.stderr.write(f"fake gh: option {a} is not emulated\n"); sys.exit(1)
    elif path is None: path = a
    else: sys.stderr.write(f"fake gh: unexpected argument {a!r}\n"); sys.exit(1)
    i += 1
method = method or ("POST" if fields else "GET")
repo = state["repository"]
base, _, query = (path or "").partition("?")
params = dict(p.partition("=")[::2] for p in query.split("&") if p)
if method == "GET" and base == f"repos/{repo}/activity":
    rows = [r for r in state["activity"] if "ref" not in params or r["ref"] == params["ref"]]
    size = min(int(params.get("per_page", 30)), state["page_size"])
    pages = [rows[k:k + size] for k in range(0, len(rows), size)] or [[]]
    # gh prints each page's array as it comes: several pages are `[…][…]`, not one array
    for page in (pages if paginate else pages[:1]):
        sys.stdout.write(json.dumps(page))
    sys.stdout.write("\n")
    sys.exit(0)
if method == "POST" and base.startswith(f"repos/{repo}/statuses/"):
    sha = base.rsplit("/", 1)[1]
    if len(sha) != 40 or fields.get("state") not in ("error", "failure", "pending", "success"):
        sys.stderr.write(f"gh: Validation Failed (HTTP 422)\n"); sys.exit(1)
    record = dict(fields, sha=sha)
    with open(os.path.join(root, "gh-statuses.jsonl"), "a") as log:
        log.write(json.dumps(record) + "\n")
    print(json.dumps(record))
    sys.exit(0)
sys.stderr.write(f"gh: Not Found (HTTP 404): {method} {path}\n")
sys.exit(1)
