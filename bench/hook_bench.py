"""Benchmark: what the pre-receive hook costs for a push of one ref and of many refs to one new commit.

    .venv/bin/python bench/hook_bench.py [--commits 1000] [--refs 200] [--runs 3] [--package-root DIR]

A bare repository made by `git init --bare` with the hook `pbem hook install` writes holds the deterministic duel
of bench/verify_bench.py (built there if missing) up to its last commit but one, pushed through the hook (so the
hook kept its verified state, as after any clean push); a second one is empty (a game's first push, or a server
whose kept state was deleted: the whole game is new). Then, each on a fresh copy of each server, the real
`git push` of:

* good, 1 ref:    the game's last commit (a legal turn) to `main`;
* good, N refs:   the same commit to `main` and to N-1 new branches, in one push;
* bad, 1 ref:     a commit on the same parent signed by the player who does not hold control, to `main`;
* bad, N refs:    that commit to `main` and N-1 new branches (the push is refused, nothing lands).

The figure is the CPU time (user + system) of the hook process and every process it waited for, measured by a
small wrapper around the installed hook (RUSAGE_CHILDREN), the median of --runs. `--package-root` runs the hook
with another copy of pbem (a folder holding `pbem/`), e.g. an older version unpacked with `git archive`, to
compare.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tool"))
sys.path.insert(0, str(HERE))

from pbem.services import hook  # noqa: E402
from pbem.store.repo import GameRepo  # noqa: E402
from pbem.store.signer import KeySigner  # noqa: E402
from verify_bench import key, make_game  # noqa: E402

# The hook, run as the only child of this wrapper; its CPU time and that of its children appended to a file.
WRAPPER = """#!/bin/sh
exec {python} -c 'import resource, subprocess, sys
done = subprocess.run([sys.argv[1]])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[2], "a").write(f"{{u.ru_utime + u.ru_stime}}\\n")
sys.exit(done.returncode)' {hook} {record}
"""


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


def serve(game: Path, work: Path, package_root: str | None, holds: str | None) -> Path:
    """A server: a bare repository with the (wrapped) hook, holding the game up to `holds` (or nothing)."""
    server = work / f"server-{holds or 'empty'}.git"
    git(work, "init", "-q", "--bare", "-b", "main", str(server))
    hook.install(server)
    pbem_hook = server / "hooks" / "pbem-pre-receive"
    pbem_hook.write_text(hook.hook_script(package_root=package_root))
    pbem_hook.chmod(0o755)
    wrapper = server / "hooks" / "pre-receive"
    wrapper.write_text(WRAPPER.format(python=sys.executable, hook=pbem_hook, record=server / "hook-cpu.txt"))
    wrapper.chmod(0o755)
    done = git(game, "push", "-q", str(server), f"{holds}:refs/heads/main", check=False) if holds else None
    if done is not None and done.returncode != 0:
        raise SystemExit(f"the first push failed:\n{done.stderr}")
    return server


def bad_commit(game: Path) -> str:
    """HEAD's tree on HEAD's parent, signed by the player who does not hold control there."""
    repo = GameRepo.open(game)
    head = repo.resolve("HEAD")
    parent = repo.parents(head)[0]
    files = {p: repo.read_blob(b) for p, (b, _m) in repo.tree_files(head).items()}
    author = git(game, "log", "-1", "--format=%an", head).stdout.strip()
    wrong = "kli" if author == "fed" else "fed"
    signer = KeySigner(key(1 if wrong == "fed" else 2))
    return repo.commit_tree(files, [parent], "out of turn", signer, (wrong, f"{wrong}@bench.invalid"), 1_900_000_000)


def push_cpu(game: Path, server: Path, work: Path, commit: str, refs: int) -> tuple[float, int]:
    """The hook's CPU seconds for one push of `commit` to `refs` refs, on a fresh copy of `server`."""
    copy = work / "copy.git"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(server, copy, symlinks=True)
    record = copy / "hook-cpu.txt"
    record.unlink(missing_ok=True)
    wrapper = copy / "hooks" / "pre-receive"
    wrapper.write_text(wrapper.read_text().replace(str(server), str(copy)))
    specs = [f"{commit}:refs/heads/main"] + [f"{commit}:refs/heads/b{i:03d}" for i in range(1, refs)]
    done = git(game, "push", "-q", str(copy), *specs, check=False)
    return float(record.read_text().split()[-1]), done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--refs", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--package-root", default=None)
    args = parser.parse_args()
    source = HERE / ".games" / f"duel-{args.commits}"
    if not source.exists():
        source.parent.mkdir(exist_ok=True)
        make_game(source, args.commits)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        game = work / "game"
        git(work, "clone", "-q", str(source), str(game))
        servers = {"holds all but the last commit": serve(game, work, args.package_root, "HEAD~1"),
                   "empty": serve(game, work, args.package_root, None)}
        cases = [("good", git(game, "rev-parse", "HEAD").stdout.strip()), ("bad", bad_commit(game))]
        print(f"| server | commit | refs | hook CPU s (median of {args.runs}) | exit |")
        print("|---|---|---:|---:|---:|")
        for state, server in servers.items():
            for name, commit in cases:
                for refs in (1, args.refs):
                    runs = [push_cpu(game, server, work, commit, refs) for _ in range(args.runs)]
                    print(f"| {state} | {name} | {refs} | {statistics.median(t for t, _ in runs):.2f} | "
                          f"{runs[0][1]} |", flush=True)


if __name__ == "__main__":
    main()
