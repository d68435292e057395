"""Golden dumps: fixed game repositories and what pbem says about them, byte for byte (tests/golden/README.md).

    .venv/bin/python tests/golden.py --update [NAME ...]     rebuild the dumps from the stored repositories and
                                                             print what changed (after an intended change)
    .venv/bin/python tests/golden.py --check [NAME ...]      the same comparison tests/test_golden.py makes
    .venv/bin/python tests/golden.py --capture [NAME ...]    build the repositories again (new keys and dice:
                                                             every dump changes; only to add a game)

Each repository is stored as a git bundle under tests/golden/repos/ with its provenance in
tests/golden/games.json; its dumps are under tests/golden/dumps/NAME/. The repositories are never rebuilt by the
test: their keys and dice are random, so only the stored ones stay fixed.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GOLDEN = HERE / "golden"
REPOS = GOLDEN / "repos"
DUMPS = GOLDEN / "dumps"
GAMES = GOLDEN / "games.json"

# The clone's clock (services/deadlines.py `waits`, read by `pbem status`): when this clone first saw each commit
# is its reflog's time, which unpacking writes with this committer date; "now" is pinned an hour and a half later.
# Both are otherwise the moment the test runs, and the waits would say so.
UNPACKED_AT = "2026-12-01T00:00:00+00:00"
NOW = datetime(2026, 12, 1, 1, 30, tzinfo=timezone.utc)
REPO_MARK = "<repo>"  # the unpacked repository's absolute path, wherever a dump would show it

DUMP_FILES = ("verify.json", "verify-commits.txt", "log.txt", "status.json")


# --- unpacking ------------------------------------------------------------------------------------------------

def git_env(home: Path) -> dict[str, str]:
    """A git environment that reads no user or system configuration and dates every ref update alike."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "SSH_", "PBEM_"))}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C",
               GIT_COMMITTER_NAME="golden", GIT_COMMITTER_EMAIL="golden@example.org",
               GIT_AUTHOR_NAME="golden", GIT_AUTHOR_EMAIL="golden@example.org",
               GIT_COMMITTER_DATE=UNPACKED_AT, GIT_AUTHOR_DATE=UNPACKED_AT)
    return env


def unpack(name: str, dest: Path, branch: str) -> Path:
    """The stored repository `name` as a fresh clone without a remote, `branch` checked out, at `dest`."""
    home = dest.parent / f"{dest.name}.home"
    home.mkdir(parents=True, exist_ok=True)
    env = git_env(home)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True)

    dest.mkdir(parents=True)
    git("init", "-q", "-b", branch)
    git("fetch", "-q", "--update-head-ok", str(REPOS / f"{name}.bundle"), "refs/heads/*:refs/heads/*")
    git("checkout", "-q", "-f", branch)
    return dest


def games() -> dict[str, dict[str, Any]]:
    return json.loads(GAMES.read_text()) if GAMES.exists() else {}


# --- the dumps ------------------------------------------------------------------------------------------------

@contextmanager
def pinned_now() -> Iterator[None]:
    """`datetime.now` in services/deadlines.py answers NOW (see NOW above)."""
    from pbem.services import deadlines

    real = deadlines.datetime

    class Pinned(real):  # type: ignore[misc, valid-type]
        @classmethod
        def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
            return NOW.astimezone(tz) if tz is not None else NOW.replace(tzinfo=None)

    deadlines.datetime = Pinned  # type: ignore[misc]
    try:
        yield
    finally:
        deadlines.datetime = real  # type: ignore[misc]


def cli(repo: Path, *args: str) -> str:
    """`pbem ARGS` in `repo` through typer's CliRunner, in this process (the same code as the `pbem` command;
    no interpreter start-up), with no key, no git configuration and an empty HOME: its exit code, then what it
    printed."""
    from typer.testing import CliRunner

    from pbem.cli import app

    home = repo.parent / f"{repo.name}.home"
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("GIT_", "SSH_", "PBEM_"))}
    env.update(git_env(home))
    env.pop("GIT_COMMITTER_DATE")
    env.pop("GIT_AUTHOR_DATE")
    old = Path.cwd()
    os.chdir(repo)
    try:
        with pinned_now():
            done = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
    finally:
        os.chdir(old)
    return f"exit {done.exit_code}\n" + done.output.replace(str(repo), REPO_MARK)


def per_commit(repo: Path) -> tuple[list[str], str]:
    """The turns, oldest first, and what `pbem verify --format json BASE..C` prints for each turn C (BASE its
    parent turn; the root alone for the root): from one verification of the whole history, whose findings of
    commit C are those of `verify BASE..C` (a commit is judged on the history before it only; the test runs the
    command itself on a few commits to show it)."""
    from pbem.services import report
    from pbem.store.repo import GameRepo
    from pbem.verify.history import verify_history

    result = verify_history(GameRepo.open(repo), statuses=False)
    out = []
    for i, oid in enumerate(result.sequence):
        findings = result.findings({oid})
        out.append(f"### {i} {oid}\nexit {1 if findings else 0}\n" + report.findings_json(findings, 1))
    return result.sequence, "".join(out)


def commit_section(dump: str, oid: str) -> str:
    """The part of verify-commits.txt that is `verify BASE..oid`'s exit code and output."""
    for part in dump.split("### ")[1:]:
        head, _, body = part.partition("\n")
        if head.split()[1] == oid:
            return body
    raise KeyError(oid)


def commit_range(sequence: list[str], oid: str) -> str:
    i = sequence.index(oid)
    return f"{sequence[i - 1]}..{oid}" if i else oid


def dumps(repo: Path) -> dict[str, str]:
    """Every dump of the repository at `repo` (DUMP_FILES)."""
    whole = cli(repo, "verify", "--format", "json")
    _sequence, commits = per_commit(repo)
    return {"verify.json": whole, "verify-commits.txt": commits, "log.txt": cli(repo, "log"),
            "status.json": cli(repo, "status", "--format", "json")}


def sample(sequence: list[str]) -> list[str]:
    """The turns whose `verify BASE..C` the test runs through the command: the root, the second, the middle and
    the last."""
    picks = {0, 1, len(sequence) // 2, len(sequence) - 1}
    return [sequence[i] for i in sorted(p for p in picks if 0 <= p < len(sequence))]


def difference(name: str, file: str, want: str, got: str) -> str:
    """A unified diff of a stored dump against the one just made (empty when equal)."""
    return "".join(difflib.unified_diff(want.splitlines(keepends=True), got.splitlines(keepends=True),
                                        f"golden/{name}/{file}", f"now/{name}/{file}", n=2))


def update(names: list[str], write: bool) -> int:
    """Make every dump of `names` (default all) from the stored repositories; print the differences; write them
    when `write`. Returns the number of dumps that differ."""
    changed = 0
    known = games()
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        for name in names or sorted(known):
            repo = unpack(name, Path(tmp) / name, known[name]["branch"])
            for file, text in dumps(repo).items():
                path = DUMPS / name / file
                old = path.read_text(encoding="utf-8") if path.exists() else ""
                if old != text:
                    changed += 1
                    print(difference(name, file, old, text) or f"{name}/{file}: new", end="")
                    if write:
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_text(text, encoding="utf-8")
    print(f"{changed} dump(s) {'rewritten' if write else 'differ'}", file=sys.stderr)
    return changed


# --- capturing the repositories (once, on the code the dumps are to pin) -------------------------------------

def store(name: str, repo: Path, source: str) -> None:
    """Bundle `repo`'s branches as tests/golden/repos/NAME.bundle and note where it came from."""
    REPOS.mkdir(parents=True, exist_ok=True)
    branch = subprocess.run(["git", "symbolic-ref", "--short", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    bundle = REPOS / f"{name}.bundle"
    bundle.unlink(missing_ok=True)
    subprocess.run(["git", "bundle", "create", "-q", str(bundle), "--branches"], cwd=repo, check=True,
                   capture_output=True, env=git_env(repo.parent))
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True, text=True,
                           check=True).stdout.strip()
    base = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    known = games()
    known[name] = {"branch": branch, "commits": int(count), "source": source, "recorded_on": base}
    GAMES.write_text(json.dumps(dict(sorted(known.items())), indent=2) + "\n")
    print(f"stored {name}: {count} commits, {bundle.stat().st_size // 1024} KiB", file=sys.stderr)


def _pbem() -> str:
    return str(Path(sys.executable).with_name("pbem"))


def capture_demo(game: str) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        subprocess.run([_pbem(), "demo", str(tmp / "demo"), "--game", game], check=True, capture_output=True,
                       env=git_env(tmp))
        return tmp / "demo" / "game"
    return build


def capture_bench(commits: int) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        sys.path.insert(0, str(ROOT / "bench"))
        import verify_bench

        verify_bench.make_game(tmp / "bench", commits)
        return tmp / "bench"
    return build


def capture_adversarial(case: str) -> Callable[[Path], Path]:
    """Small versions of bench/adversarial.py's hostile games (the full ones weigh megabytes)."""
    def build(tmp: Path) -> Path:
        sys.path.insert(0, str(ROOT / "bench"))
        import adversarial as adv

        path = tmp / case
        if case == "horizon":
            adv.build_horizon(path, 6, 8)
        elif case == "horizon-refused":
            adv.build_horizon(path, 999, 198)
        else:  # swap: an illegal report of 300 entries, then 12 commits each swapping two of its lines
            game = adv.Builder(path, "swap", 4, adv.TWO_UNITS)
            lines = adv.report_lines(300, 1)
            game.files["report/turn-01.yaml"] = adv.as_report(lines)
            game.files["players/fed.yaml"] = adv.dump_mapping({"through": "1.32.final"}).encode()
            game.turn("fed", {"report/turn-01.yaml", "players/fed.yaml"}, "fed: orders for turn 1", legal=False)
            for i in range(12):
                a, b = (i * 97) % len(lines), (i * 79 + 150) % len(lines)
                lines[a], lines[b] = lines[b], lines[a]
                game.files["report/turn-01.yaml"] = adv.as_report(lines)
                game.commit("kli", f"swap {i}")
            game.finish()
        return path
    return build


def capture_test(node: str) -> Callable[[Path], Path]:
    """The game repository a test of the suite leaves behind (the one with the most commits, when it makes
    several clones): the test runs with pytest's --basetemp in `tmp`."""
    def build(tmp: Path) -> Path:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                               f"--basetemp={tmp / 'run'}", node], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:]
        found = []
        for git in (tmp / "run").rglob(".git"):
            repo = git.parent
            if git.is_dir() and (repo / "game.yaml").exists():
                count = subprocess.run(["git", "rev-list", "--count", "--all"], cwd=repo, capture_output=True,
                                       text=True).stdout.strip()
                found.append((int(count or 0), str(repo)))
        assert found, f"{node} left no game repository"
        return Path(max(found)[1])
    return build


CAPTURES: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "demo-duel": ("pbem demo", capture_demo("tactical-duel")),
    "demo-twirling-aces": ("pbem demo --game twirling-aces", capture_demo("twirling-aces")),
    "demo-dow": ("pbem demo --game dow", capture_demo("dow")),
    "bench-verify-300": ("bench/verify_bench.py make_game(path, 300)", capture_bench(300)),
    "bench-horizon": ("bench/adversarial.py build_horizon(path, 6, 8)", capture_adversarial("horizon")),
    "bench-horizon-refused": ("bench/adversarial.py build_horizon(path, 999, 198): game.yaml refused",
                              capture_adversarial("horizon-refused")),
    "bench-swap": ("bench/adversarial.py build_swap, 300 entries and 12 swaps", capture_adversarial("swap")),
}
TESTS = {
    "errata-agreed": "test_errata.py::test_the_last_signature_applies_the_correction_and_replay_restarts",
    "errata-three-players": "test_errata.py::test_three_players_each_sign_before_it_applies",
    "dice-revealed": "test_dice_flow.py::test_the_roller_reveals_with_yield_and_pbem_writes_the_results",
    "dice-out-of-turn": "test_dice_flow.py::test_a_contribution_made_out_of_turn_is_accepted",
    "seal-revealed": "test_secrets_flow.py::test_yield_reveals_what_is_due_in_a_commit_of_its_own_then_the_turn",
    "seal-stolen-key": "test_secrets_flow.py::test_secret_not_owner__a_key_added_by_another_player_is_found",
    "forfeit": "test_agreement_kinds.py::test_a_forfeit_ends_the_game_with_its_result",
    "amend": "test_agreement_kinds.py::test_an_amend_changes_the_deadline_once_both_sign",
    "seat-lost-key": "test_agreement_kinds.py::test_a_lost_key_is_replaced_by_a_seat_agreement",
    "resign-replaced": "test_agreement_kinds.py::test_a_resigned_seat_goes_to_a_replacement",
    "nmr": "test_agreement_kinds.py::test_an_nmr_serves_the_absent_player_s_turn_with_no_new_orders",
    "seat-replacement-keeps": "test_seat_fair.py::test_a_replacement_who_loses_his_key_keeps_the_seat",
    "dow-retreats-builds": "test_dow_flow.py::test_retreats_and_builds_are_owed_only_by_the_powers_concerned",
    "dow-resign-replaced": "test_resign_effects.py::test_a_replacement_takes_a_resigned_power_out_of_civil_disorder",
    "dow-withheld-opened": "test_dow_withheld.py::test_a_withheld_set_is_opened_by_the_others_shares_and_stands",
    # refused histories: their findings are pinned too
    "attack-not-in-control": "test_attacks.py::test_not_in_control__kli_signs_a_turn_while_fed_holds_control",
    "attack-rewritten": "test_attacks.py::test_history_rewritten__an_old_turn_edited_and_the_later_turns_replayed",
    "attack-merge": "test_attacks.py::test_merge__a_merge_that_changes_content",
    "attack-dice-grinding":
        "test_attacks.py::test_dice_grinding__the_roller_swaps_his_commitment_after_seeing_the_contribution",
    "attack-status-forged": "test_attacks.py::test_status_forged__fed_writes_himself_back_into_control",
    "attack-press-foreign": "test_attacks.py::test_press__a_message_posted_in_another_player_s_name",
    "attack-case-twins": "test_attacks.py::test_tree_case_twins__players_fed_and_players_FED",
    "attack-firm-changed": "test_attacks.py::test_history_rewritten__a_firm_entry_changed_in_a_later_turn",
}


def capture_base(which: str) -> Callable[[Path], Path]:
    """The session base games of tests/conftest.py, built with its own code."""
    def build(tmp: Path) -> Path:
        sys.path.insert(0, str(HERE))
        import conftest

        table = conftest._build(tmp / "started")
        if which in ("opened", "played"):
            table.turn("fed", **conftest.FED_TURN_1)
        if which == "played":
            table.turn("kli", **conftest.KLI_TURN_1)
        return table.repo_dir
    return build


for _base in ("started", "opened", "played"):
    CAPTURES[f"base-{_base}"] = (f"tests/conftest.py base_{_base}", capture_base(_base))
for _name, _node in TESTS.items():
    CAPTURES[_name] = (f"tests/{_node}", capture_test(f"tests/{_node}"))


def capture(names: list[str]) -> None:
    for name in names or list(CAPTURES):
        source, build = CAPTURES[name]
        with tempfile.TemporaryDirectory(prefix=f"golden-{name}-") as tmp:
            store(name, build(Path(tmp)), source)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--update", action="store_true", help="rewrite the dumps, printing what changed")
    what.add_argument("--check", action="store_true", help="print what changed, write nothing")
    what.add_argument("--capture", action="store_true", help="build and store the repositories again")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tool"))
    if args.capture:
        capture(args.names)
        return 0
    return 1 if update(args.names, write=args.update) and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
