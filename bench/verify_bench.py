"""Benchmark: how fast `pbem verify` checks a long game, against the floor of merely reading it.

    .venv/bin/python bench/verify_bench.py --commits 1000 10000

For each size it generates (once, cached under bench/.games/, deterministic keys and content) a synthetic
two-player tactical game in which every commit is a signed, legal turn: the player in control extends his
horizon one step past his opponent's and adds one entry, so control alternates at every commit and the report
files grow as in a real game. The game is built with the same code the verifier uses (judge per commit), so it
is fast to make. Then, in fresh processes:

* floor:  `git rev-list`, each commit's SSH signature checked, and every blob that changed read with pygit2
          (what any verifier must at least do);
* verify: `pbem verify` of the whole history (signatures, schemas, YAML, ownership, firm, progress, replay);
* tail:   the per-commit cost of the last 1,000 commits against commits 1,000–2,000 (flat means linear);
* one:    `pbem verify` of one new commit on top of the game, the state after its parent kept in .git/pbem/
          (verify/cache.py), as a player's or a server's checkout has it.

Numbers are printed as a Markdown table; times are wall-clock times of the command, Python's start included,
and its CPU time (user + system, of the command and of the processes it waited for: verify's fetching process
too), which a machine shared with other work changes least; floor and verify are the median of `--runs` runs;
peak memory is that of the largest process (the verifying one).
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tool"))

from pbem.crypto import sshsig  # noqa: E402
from pbem.crypto.keys import PrivateKey  # noqa: E402
from pbem.formats.writer import dump_mapping, dump_report  # noqa: E402
from pbem.protocol import agreements  # noqa: E402
from pbem.protocol.agreements import Agreement  # noqa: E402
from pbem.store.repo import GameRepo  # noqa: E402
from pbem.store.signer import KeySigner  # noqa: E402
from pbem.files.game import read_files  # noqa: E402
from pbem.files.parsecache import ParseCache  # noqa: E402
from pbem.protocol.control import expected_after, expected_start  # noqa: E402
from pbem.verify.commit import judge  # noqa: E402

GAME = """format: pbem/1
id: bench-{n}
title: "benchmark duel"
ruleset: tactical/1
pbem: "0.1.0"
players:
  - {{id: fed, name: Alice, key: "{fed}"}}
  - {{id: kli, name: Bob, key: "{kli}"}}
dice: {{mode: commit-reveal}}
setup:
  map: {{columns: 42, rows: 30}}
  turns: 100
  units:
    - {{id: CA, owner: fed, hex: "1015", facing: B, speed: 0, turn_mode: 2}}
    - {{id: D7, owner: kli, hex: "2815", facing: F, speed: 0, turn_mode: 2}}
"""


def key(seed: int) -> PrivateKey:
    return PrivateKey.from_seed(bytes([seed]) * 32, f"bench{seed}")


def consent(files: dict[str, bytes], cache: ParseCache, prev: Any, keys: dict[str, PrivateKey],
            commit: Any, head: str) -> tuple[str, Any]:
    """The start by consent (DESIGN §2 Setup): fed proposes the start agreement, kli signs it; two commits."""
    path = "agreements/fed-0001.yaml"
    raw: dict[str, Any] = {"id": "fed-0001", "kind": "start", "by": "fed",
                           "content": {"game": hashlib.sha256(files["game.yaml"]).hexdigest(), "first": "fed"},
                           "signatures": {}}
    game_id = read_files(files, cache).manifest.id
    for player in ("fed", "kli"):
        bare = Agreement({**raw, "signatures": {}}, path)
        raw["signatures"] = {**raw["signatures"],
                             player: sshsig.sign(keys[player], agreements.message(game_id, bare), "pbem")}
        files[path] = dump_mapping(raw).encode()
        findings, prev = judge(prev, read_files(files, cache), {path}, keys[player].public)
        assert not findings, findings
        head = commit(player, f"{player}: consents to start", head)
    return head, prev


def make_game(path: Path, commits: int) -> None:
    """A deterministic game of `commits` signed commits (each a legal turn), built incrementally."""
    keys = {"fed": key(1), "kli": key(2)}
    signers = {p: KeySigner(k) for p, k in keys.items()}
    repo = GameRepo.init(path)
    files: dict[str, bytes] = {"game.yaml": GAME.format(n=commits, fed=keys["fed"].public.to_line(),
                                                        kli=keys["kli"].public.to_line()).encode()}
    cache = ParseCache()
    when = 1_700_000_000

    def commit(player: str, message: str, parent: str | None) -> str:
        nonlocal when
        when += 60
        return repo.commit_tree(files, [parent] if parent else [], message, signers[player],
                                (player, f"{player}@bench.invalid"), when)

    game = read_files(files, cache)
    _, prev = judge(None, game, set(files), keys["fed"].public)
    head = commit("fed", "new game", None)
    head, prev = consent(files, cache, prev, keys, lambda who, what, parent: commit(who, what, parent), head)
    _, status = expected_start(game, "fed")
    files["status.yaml"] = dump_mapping(status.to_data()).encode()
    game = read_files(files, cache)
    findings, prev = judge(prev, game, {"status.yaml"}, keys["fed"].public)
    assert not findings, findings
    head = commit("fed", "start", head)
    ruleset = game.manifest.ruleset
    entries: dict[str, list[dict]] = {}
    through = {"fed": None, "kli": None}
    for i in range(commits - 4):
        assert prev.status is not None
        player = prev.status.control
        assert player is not None
        other = "kli" if player == "fed" else "fed"
        firm = ruleset.parse_time(prev.status.firm)
        target = firm if through[other] is None else ruleset.parse_time(through[other])
        nxt = ruleset.next_step(game.manifest.setup, target)
        assert nxt is not None
        through[player] = ruleset.format_time(nxt)
        files[f"players/{player}.yaml"] = dump_mapping({"through": through[player]}).encode()
        period = f"report/{ruleset.period_of(nxt)}.yaml"
        entries.setdefault(period, []).append({"at": through[player], "by": player,
                                               "unit": "CA" if player == "fed" else "D7", "do": {"pass": True}})
        files[period] = dump_report(entries[period]).encode()
        game = read_files(files, cache)
        _, status = expected_after(prev, game, player, f"turn {i}")
        files["status.yaml"] = dump_mapping(status.to_data()).encode()
        game = read_files(files, cache)
        findings, prev = judge(prev, game, {"status.yaml", period, f"players/{player}.yaml"},
                               keys[player].public)
        assert not findings, findings
        head = commit(player, f"{player}: turn {i}", head)
    repo.repo.references.create("refs/heads/main", head, force=True)
    repo.repo.set_head("refs/heads/main")
    subprocess.run(["git", "-C", str(path), "reset", "-q", "--hard"], check=True)
    subprocess.run(["git", "-C", str(path), "gc", "-q"], check=True)  # packed, as a clone would be


FLOOR = """
import sys, subprocess, pygit2
sys.path.insert(0, sys.argv[2])
from pbem.crypto import sshsig
from pbem.store.commits import parse_commit
pygit2.settings.enable_caching(False)
repo = pygit2.Repository(sys.argv[1])
oids = subprocess.run(["git", "-C", sys.argv[1], "rev-list", "--reverse", "--first-parent", "HEAD"],
                      capture_output=True, text=True, check=True).stdout.split()
prev = {}
total = 0
def walk(tree, base, out):
    for e in tree:
        if e.type_str == "tree":
            walk(repo[e.id], base + e.name + "/", out)
        else:
            out[base + e.name] = e.id
for oid in oids:
    commit = parse_commit(repo.odb.read(oid)[1])
    sshsig.verify(commit.signature, commit.signed_payload())
    files = {}
    walk(repo[oid].tree, "", files)
    for path, blob in files.items():
        if prev.get(path) != blob:
            total += len(repo.odb.read(blob)[1])
    prev = files
print(len(oids), total)
"""

# The floor of ARCHITECTURE §4.4 (and the target): one Python process, nothing of pbem's, that walks the
# first-parent history with pygit2, parses each commit, checks its one Ed25519 signature with PyNaCl over the
# SSHSIG message (as pbem does), diffs each tree against its parent's and reads every changed blob.
FLOOR_PYGIT2 = """
import base64, hashlib, struct, sys, pygit2
from nacl.signing import VerifyKey
pygit2.settings.enable_caching(False)
repo = pygit2.Repository(sys.argv[1])
walker = repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL)
walker.simplify_first_parent()
commits = list(walker)
commits.reverse()
def strings(data):
    out, i = [], 0
    while i < len(data):
        (n,) = struct.unpack(">I", data[i:i + 4])
        out.append(data[i + 4:i + 4 + n])
        i += 4 + n
    return out
def string(b):
    return struct.pack(">I", len(b)) + b
total = 0
parent = None
for commit in commits:
    armored, payload = commit.gpg_signature
    body = b"".join(armored.strip().splitlines()[1:-1])
    blob = base64.b64decode(body)
    assert blob[:6] == b"SSHSIG"
    key, namespace, reserved, hash_alg, sig = strings(blob[10:])
    _, raw_key = strings(key)
    _, raw_sig = strings(sig)
    message = b"SSHSIG" + string(namespace) + string(reserved) + string(hash_alg) + string(
        hashlib.sha512(payload).digest())
    VerifyKey(raw_key).verify(message, raw_sig)
    tree = commit.tree
    diff = tree.diff_to_tree(swap=True) if parent is None else parent.tree.diff_to_tree(tree)
    for delta in diff.deltas:
        if delta.status != pygit2.enums.DeltaStatus.DELETED:
            total += len(repo.odb.read(delta.new_file.id)[1])
    parent = commit
print(len(commits), total)
"""


# Runs one command as its only child and reports its wall time, the CPU time of it and of every process it waited
# for (verify's fetching process), and the peak resident memory of the largest of them (RUSAGE_CHILDREN).
PEAK = ("import resource, subprocess, sys, time; t = time.perf_counter(); done = subprocess.run(sys.argv[1:]); "
        "t = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(t, u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr); sys.exit(done.returncode)")


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """Wall time, CPU time (s) and peak resident memory (kB) of the command, and its stdout."""
    done = subprocess.run([sys.executable, "-c", PEAK, *cmd], cwd=cwd, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {done.stderr}")
    elapsed, cpu, peak = done.stderr.strip().splitlines()[-1].split()
    return float(elapsed), float(cpu), int(peak), done.stdout


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def tail_ratio(path: Path, runs: int = 3) -> tuple[float | None, float, float]:
    """Per-commit cost of the last 1,000 commits over that of commits 1,000-2,000 (in this process; the
    median of `runs` runs, as one run varies by some 10 %), and the CPU microseconds per commit at commits
    10-210 and at the last 200 of one more run in this process alone (no fetching helper, whose share of the
    work moves with how far ahead it is): what commit 10 and commit 10,000 cost."""
    from pbem.store.repo import GameRepo as Repo
    from pbem.verify.history import verify_history

    ratios = []
    for _ in range(runs):
        stamps: list[float] = []
        verify_history(Repo.open(path), on_commit=lambda _i: stamps.append(time.perf_counter()))
        if len(stamps) >= 3000:
            ratios.append((stamps[-1] - stamps[-1001]) / (stamps[2000] - stamps[1000]))
    cpu: list[float] = []
    verify_history(Repo.open(path), on_commit=lambda _i: cpu.append(time.process_time()), pipeline=False)
    early, late = (cpu[210] - cpu[10]) / 200 * 1e6, (cpu[-1] - cpu[-201]) / 200 * 1e6
    return (median(ratios) if ratios else None), early, late


def head(path: Path) -> str:
    return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--runs", type=int, default=3, help="runs of floor and verify (their medians are shown)")
    args = parser.parse_args()
    pbem = shutil.which("pbem") or str(Path(sys.executable).parent / "pbem")
    # byte-compiled as an installed package is (an editable checkout compiles on first import, unless
    # PYTHONDONTWRITEBYTECODE is set: then every run would compile pbem's modules again)
    compileall.compile_dir(str(ROOT / "tool" / "pbem"), quiet=1)
    rows = []
    for n in args.commits:
        path = HERE / ".games" / f"duel-{n}"
        if args.rebuild and path.exists():
            shutil.rmtree(path)
        if not path.exists():
            start = time.perf_counter()
            make_game(path, n)
            print(f"built {n} commits in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        floors, floors2, verifies = [], [], []
        for _ in range(args.runs):  # alternated, so that a change in the machine's load touches both alike
            floors.append(timed([sys.executable, "-c", FLOOR, str(path), str(ROOT / "tool")], path))
            floors2.append(timed([sys.executable, "-c", FLOOR_PYGIT2, str(path)], path))
            assert floors2[-1][3].split()[0] == str(n), floors2[-1][3]
            shutil.rmtree(path / ".git" / "pbem", ignore_errors=True)  # a cold, full verification
            verifies.append(timed([pbem, "verify"], path))
            shutil.rmtree(path / ".git" / "pbem", ignore_errors=True)
            assert verifies[-1][3].startswith("ok:"), verifies[-1][3][:500]
        floor_t, floor_cpu = median([f[0] for f in floors]), median([f[1] for f in floors])
        verify_t, verify_cpu = median([v[0] for v in verifies]), median([v[1] for v in verifies])
        floor2_t, floor2_cpu = median([f[0] for f in floors2]), median([f[1] for f in floors2])
        floor2_mem = max(f[2] for f in floors2)
        verify_mem = max(v[2] for v in verifies)
        timed([pbem, "verify", "HEAD~1"], path)  # keeps the clean state of the parent (verify/cache.py)
        ones, one_cpus = [], []
        for _ in range(3):  # the median of three: each verifies HEAD on top of HEAD~1's kept state
            one_t, one_cpu, _, one_out = timed([pbem, "verify"], path)
            assert one_out.startswith("ok:"), one_out[:500]
            ones.append(one_t)
            one_cpus.append(one_cpu)
            for kept in (path / ".git" / "pbem").rglob(f"{head(path)}.pickle"):
                kept.unlink()  # HEAD's own state would make the next run verify nothing
        ratio, early_us, late_us = tail_ratio(path)
        rows.append({"commits": n, "floor_s": round(floor_t, 2), "floor_cpu_s": round(floor_cpu, 2),
                     "verify_s": round(verify_t, 2), "verify_cpu_s": round(verify_cpu, 2),
                     "commits_per_s": round(n / verify_t), "x_floor": round(verify_t / floor_t, 2),
                     "x_floor_cpu": round(verify_cpu / floor_cpu, 2),
                     "tail_ratio": round(ratio, 2) if ratio else None, "one_commit_s": round(median(ones), 2),
                     "one_commit_cpu_s": round(median(one_cpus), 2), "peak_mb": round(verify_mem / 1024),
                     "floor2_s": round(floor2_t, 2), "floor2_cpu_s": round(floor2_cpu, 2),
                     "x_floor2": round(verify_t / floor2_t, 2), "x_floor2_cpu": round(verify_cpu / floor2_cpu, 2),
                     "floor2_peak_mb": round(floor2_mem / 1024), "early_cpu_us": round(early_us),
                     "late_cpu_us": round(late_us)})
    print("| commits | floor s (CPU) | verify s (CPU) | commits/s | × floor (CPU) | last 1k / 1k–2k "
          "| one new commit s (CPU) | peak MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['commits']} | {r['floor_s']} ({r['floor_cpu_s']}) | {r['verify_s']} ({r['verify_cpu_s']}) | "
              f"{r['commits_per_s']} | {r['x_floor']} ({r['x_floor_cpu']}) | {r['tail_ratio']} | "
              f"{r['one_commit_s']} ({r['one_commit_cpu_s']}) | {r['peak_mb']} |")
    print()
    print("Against the pygit2 floor (one process: first-parent walk, commit parsed, one Ed25519 signature checked "
          "with PyNaCl, tree diffed against its parent's, every changed blob read):")
    print()
    print("| commits | pygit2 floor s (CPU) | verify s (CPU) | × floor wall | × floor CPU | one new commit s (CPU) "
          "| peak MB verify (floor) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['commits']} | {r['floor2_s']} ({r['floor2_cpu_s']}) | {r['verify_s']} ({r['verify_cpu_s']}) | "
              f"{r['x_floor2']} | {r['x_floor2_cpu']} | {r['one_commit_s']} ({r['one_commit_cpu_s']}) | "
              f"{r['peak_mb']} ({r['floor2_peak_mb']}) |")
    print()
    print("CPU per commit (in-process, no fetching process), commits 10-210 and the last 200:")
    print()
    print("| commits | µs a commit at 10-210 | µs a commit at the last 200 |")
    print("|---:|---:|---:|")
    for r in rows:
        print(f"| {r['commits']} | {r['early_cpu_us']} | {r['late_cpu_us']} |")
    print(json.dumps(rows), file=sys.stderr)


if __name__ == "__main__":
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    main()
