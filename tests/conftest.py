"""Fixtures for the end-to-end tests: a duel played through the real `pbem` CLI in real git repositories.

A `Table` is one folder holding a game repository (`game/`), the players' keys (`keys/`) and a HOME without
any ssh or git setup (`home/`). Seats: `fed` holds alice's key, `kli` holds bob's; carol holds no seat.

    table.turn("fed", through="1.8.damage", breaks=[{"range": 8}], entries=[...], note="closing")
    table.pbem("verify", who="fed")          # a real subprocess: exit codes as a player sees them
    table.cli("status", who="kli")           # typer's CliRunner in-process: fast, same code path

The base games are built once per run through the CLI and copied per test (`shutil.copytree`):
`started` (fed holds control at 1.0.alloc, nothing written yet), `opened` (fed gave orders to 1.8.damage: kli
holds control at 1.0.alloc) and `played` (two turns: fed holds control at 1.9.move because his horizon ended;
the 1.0.alloc entries are firm).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# No per-example deadline: timing depends on the machine's load, never on the code under test (no timing
# assertions, DESIGN: speed is measured by bench/). In CI the examples are derived, not drawn, so a run there is
# repeatable; a developer's run still explores new examples.
settings.register_profile("pbem", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "pbem")
# Every fast path in the suite is checked against the plain way on every use, failing on any disagreement:
# compiled schema validators (formats/schemas.py), incremental tree and file reading (verify/history.py).
os.environ["PBEM_CROSSCHECK"] = "1"


def _compile_pbem() -> None:
    """Byte-compile pbem's own modules once, before anything runs. An editable install leaves them as sources,
    and where PYTHONDONTWRITEBYTECODE is set (this project's machines set it) no process writes a .pyc, so every
    `pbem` the suite starts (thousands: commands, hooks, watches) compiled about a hundred modules again, some
    0.3 s of CPU each time. Python reads a .pyc whatever that variable says, and never one older than its
    source. A folder we may not write to (an installed wheel: pip compiled it) is left as it is."""
    import compileall

    import pbem

    try:
        compileall.compile_dir(str(Path(pbem.__file__).parent), quiet=2, workers=1)
    except OSError:
        pass


_compile_pbem()
from typer.testing import CliRunner

from gitutil import Sandbox, clean_env
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping, dump_report
from pbem.store.repo import GameRepo
from pbem.store.signer import signer_for

PBEM = Path(sys.executable).with_name("pbem")
ROOT = Path(__file__).resolve().parents[1]  # the source tree
SEATS = {"fed": "alice", "kli": "bob"}  # seat -> key name (tests/gitutil.py SEEDS)
STRANGER = "carol"  # a key that holds no seat
GAME_ID = "duel-e2e"
# The base games' template: the duel as it was before it sealed speeds (open allocations, speeds as public entries),
# kept byte for byte so the base games, their commit subjects and their golden dumps stay as they are.
TEACHING_DUEL = Path(__file__).resolve().parent / "templates" / "tactical-duel"

# The first two turns of the base duel (TEACHING_DUEL: speeds as public entries at 1.0.alloc).
FED_TURN_1 = dict(through="1.8.damage", breaks=[{"range": 8}],
                  entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}], note="speed 12, closing")
KLI_TURN_1 = dict(through="1.12.damage", breaks=[{"range": 8}],
                  entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 12}}], note="speed 12")


@dataclass(frozen=True)
class Snapshot:
    """Everything a refusing command must leave alone: refs, HEAD, index and every file of the working tree."""

    head: str
    refs: str
    files: Mapping[str, str]  # path -> sha256 of the content, for every file under the repo (.git included)


@dataclass
class Table:
    """One game folder: the repository, the keys and a clean HOME (see the module docstring)."""

    root: Path

    @property
    def repo_dir(self) -> Path:
        return self.root / "game"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def key(self, who: str) -> Path:
        """The private key file of seat `who` (or of `carol`, the stranger)."""
        return self.root / "keys" / f"{SEATS.get(who, who)}_ed25519"

    def env(self, who: str | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """A clean environment (gitutil.clean_env) with PBEM_KEY set to `who`'s key."""
        more = dict(extra or {})
        if who is not None:
            more["PBEM_KEY"] = str(self.key(who))
        return clean_env(self.home, more)

    # --- running pbem and git ---------------------------------------------------------------------------
    def pbem(self, *args: str, who: str | None = None, cwd: Path | None = None,
             env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """The real `pbem` in a subprocess (exit codes and stderr exactly as a player sees them)."""
        return subprocess.run([str(PBEM), *args], cwd=cwd or self.repo_dir, env=dict(env or self.env(who)),
                              capture_output=True, text=True, check=False)

    def cli(self, *args: str, who: str | None = None, cwd: Path | None = None) -> Any:
        """`pbem ARGS` through typer's CliRunner in this process (same code, no interpreter start-up)."""
        from pbem.cli import app

        env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("GIT_", "SSH_", "PBEM_"))}
        env.update(self.env(who))
        old = Path.cwd()
        os.chdir(cwd or self.repo_dir)
        try:
            return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(old)

    def git(self, *args: str | os.PathLike[str], check: bool = True, env: Mapping[str, str] | None = None,
            input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """Plain `git ARGS` in the repository, in the clean environment."""
        done = subprocess.run(["git", *map(str, args)], cwd=self.repo_dir, env=clean_env(self.home, env),
                              input=input, capture_output=True, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"git {' '.join(map(str, args))}: {done.stderr.decode()}")
        return done

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").stdout.decode().strip()

    # --- the working tree --------------------------------------------------------------------------------
    def read(self, rel: str) -> str:
        return (self.repo_dir / rel).read_text()

    def write(self, rel: str, text: str) -> None:
        path = self.repo_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def data(self, rel: str) -> Any:
        """A game file read with pbem's strict loader."""
        return yamlsafe.load((self.repo_dir / rel).read_bytes(), rel).data

    def edit(self, who: str, *, through: str | None = None, breaks: Sequence[Mapping[str, Any]] | None = None,
             entries: Sequence[Mapping[str, Any]] = ()) -> None:
        """Edit the files as player `who` would by hand: his horizon and breaks in players/<who>.yaml, his
        entries appended to report/turn-NN.yaml (one flow mapping per line)."""
        players_file = f"players/{who}.yaml"
        mine = dict(self.data(players_file) or {}) if (self.repo_dir / players_file).exists() else {}
        if through is not None:
            mine["through"] = through
        if breaks is not None:
            mine["breaks"] = list(breaks)
        self.write(players_file, dump_mapping(mine))
        for entry in entries:
            report = f"report/turn-{int(entry['at'].split('.')[0]):02d}.yaml"
            old = (self.data(report) or {}).get("entries", []) if (self.repo_dir / report).exists() else []
            self.write(report, dump_report([*old, {"at": entry["at"], "by": entry.get("by", who),
                                                   **{k: v for k, v in entry.items() if k not in ("at", "by")}}]))

    def turn(self, who: str, *, note: str = "", in_subprocess: bool = False, **edits: Any) -> Any:
        """Take a turn: edit the files (see `edit`), then `pbem yield -m NOTE`; the yield must succeed."""
        self.edit(who, **edits)
        args = ("yield", "-m", note) if note else ("yield",)
        done = self.pbem(*args, who=who) if in_subprocess else self.cli(*args, who=who)
        code, out = (done.returncode, done.stdout + done.stderr) if in_subprocess else (done.exit_code, done.output)
        assert code == 0, out
        return done

    # --- committing around pbem (the "plain git" way to make a bad commit) --------------------------------
    def sneak(self, who: str, message: str = "sneaked turn", *, status: str = "computed") -> str:
        """Commit the working tree's game files signed by `who`'s key WITHOUT pbem judging them (as a player
        with plain git could), check the commit out and return its id.

        `status`: "computed" writes status.yaml as `pbem yield` would (replay of the new inputs), "keep"
        leaves the working tree's status.yaml as it is.
        """
        from pbem.services.workspace import Workspace

        if status == "computed":
            self.write_status(who, message)
        files = Workspace.open(self.repo_dir).worktree_files()
        repo = GameRepo.open(self.repo_dir)
        oid = repo.commit_tree(files, [self.head()], message, signer_for(self.key(who)),
                               ("Sneaky", "sneaky@example.org"))
        repo.update_branch_and_worktree(oid)
        return oid

    def git_commit(self, message: str, *, signer: str | None) -> str:
        """`git add -A && git commit` with plain git: signed (`-S`, gpg.format=ssh, user.signingkey = `signer`'s
        key, so ssh-keygen signs) or, with `signer=None`, unsigned. Returns the new HEAD."""
        self.git("add", "-A")
        sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={self.key(signer)}"] if signer else []
        self.git(*sign, "commit", "-q", "-S" if signer else "--no-gpg-sign", "-m", message)
        return self.head()

    def write_status(self, who: str, note: str = "") -> None:
        """Write status.yaml as `pbem yield` would once `who` (a seat; carol counts as fed) takes his turn
        with the working tree's files: the same service code, without judging or committing anything."""
        from pbem.services import turn
        from pbem.services.workspace import Workspace, load_identity

        ws = Workspace.open(self.repo_dir)
        me = load_identity(str(self.key(who)), self.repo_dir)
        head = ws.history().last  # not ws.head(): that refuses to build on a history with findings
        assert head is not None
        computed = turn._computed(ws, head, ws.worktree_files(), me, who if who in SEATS else "fed", note)
        assert computed is not None
        self.write("status.yaml", dump_mapping(computed.to_data()))

    def snapshot(self) -> Snapshot:
        """HEAD, all refs and every file under the repository, .git (index, objects) included, but for
        .git/pbem/: the verifier's cache of clean verifications, which is not game content (verify/cache.py)."""
        files: dict[str, str] = {}
        for folder, _dirs, names in os.walk(self.repo_dir):
            for name in names:
                path = Path(folder) / name
                rel = path.relative_to(self.repo_dir).as_posix()
                if not rel.startswith(".git/pbem/"):
                    files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        head = (self.repo_dir / ".git" / "HEAD").read_text()
        refs = self.git("show-ref", "--head", check=False).stdout.decode()
        return Snapshot(head, refs, files)


# The modules holding the suite's longest tests (half a minute or more of one core each under `--durations`), the
# longest single test first, run first so that under pytest-xdist no core waits alone for one of them at the end
# (worksteal then hands out the short ones); the rest keeps its order.
LONG_FIRST = ("test_watch_dow_years.py", "test_workflow_lock.py", "test_watch.py", "test_message_net.py",
              "test_dow_nmr.py", "test_readme.py", "test_types.py", "test_workflow_runs.py", "test_dow_demo.py",
              "test_wheel.py", "test_fuzz_verifier.py", "test_stuck_search.py", "test_ssh.py", "test_github_flow.py",
              "test_twirling_aces.py", "test_energy_together.py", "test_messages.py", "test_workflow_harness.py",
              "test_sync.py", "test_sealed_allocation.py", "test_workflow.py", "test_watch_smtp.py",
              "test_watch_race.py", "test_tactical_secret_speeds.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every worker collects the same order (xdist requires it): a stable sort by LONG_FIRST, modules kept whole."""
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FIRST)))


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """`build(folder)` run once for the whole run, by whichever pytest-xdist worker asks first; the others wait for
    it (a lock file) and get the same folder, which they only read. A build that failed is tried again by the
    next one asking, so each reports its own failure."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's own folder: every worker's basetemp (popen-gwN) is in it
    shared = base / "built-once"
    shared.mkdir(exist_ok=True)
    folder, done = shared / name, shared / f"{name}.done"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            done.touch()
    return folder


def copy_table(source: Table, dest: Path) -> Table:
    """A private copy of a base game (the git dir copies fine: it holds no absolute paths)."""
    shutil.copytree(source.root, dest, symlinks=True)
    return Table(dest)


def built_from(factory: pytest.TempPathFactory, name: str, source: Table, build: Callable[[Table], object]) -> Table:
    """A base game made from another once for the whole run (`built_once`): `build` takes a copy of `source` on
    from there. For a session fixture that several modules import, or that both xdist workers ask for: only read
    it, and give each test its own `copy_table`."""
    return Table(built_once(factory, name, lambda into: build(copy_table(source, into))))


def _build(root: Path, template: str = str(TEACHING_DUEL), game_id: str = GAME_ID) -> Table:
    """init, join, join, then the start by consent through the real CLI (subprocesses), keys from
    tests/gitutil.py: fed proposes the start (`pbem start --first fed`), kli signs it, fed starts."""
    box = Sandbox(root)  # makes home/ (with an empty ~/.ssh)
    shutil.rmtree(box.home / ".ssh")
    for name in (*SEATS.values(), STRANGER):
        box.new_key(name)
    table = Table(root)

    def ok(*args: str, who: str, cwd: Path | None = None) -> None:
        done = table.pbem(*args, who=who, cwd=cwd)
        assert done.returncode == 0, done.stdout + done.stderr

    ok("init", str(table.repo_dir), "--template", template, "--id", game_id, who="fed", cwd=root)
    ok("join", "--as", "fed", who="fed")
    ok("join", "--as", "kli", who="kli")
    ok("start", "--first", "fed", who="fed")
    ok("sign", "fed-0001", who="kli")
    ok("start", "--first", "fed", who="fed")
    for starter in ("players/fed.yaml", "report/turn-01.yaml"):  # what `pbem start` writes for fed's turn, in his
        (table.repo_dir / starter).unlink()  # clone: here one working tree serves every seat, so it starts bare
    for folder in ("players", "report"):
        (table.repo_dir / folder).rmdir()
    return table


@pytest.fixture(scope="session")
def base_started(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Built once per run (`built_once`): fed holds control at 1.0.alloc; nobody has written anything yet."""
    return Table(built_once(tmp_path_factory, "base-started", _build))


@pytest.fixture(scope="session")
def base_opened(base_started: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Built once per run: after fed's first turn (orders to 1.8.damage), kli holds control at 1.0.alloc."""
    return Table(built_once(tmp_path_factory, "base-opened",
                            lambda into: copy_table(base_started, into).turn("fed", **FED_TURN_1)))


@pytest.fixture(scope="session")
def base_played(base_opened: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Built once per run: after fed's and kli's first turns, fed holds control at 1.9.move (his horizon ended)."""
    return Table(built_once(tmp_path_factory, "base-played",
                            lambda into: copy_table(base_opened, into).turn("kli", **KLI_TURN_1)))


@pytest.fixture(scope="session")
def base_three(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once per run: a started game of three seats (alice, bob, carol; tests/stuck_game.py `build`), the
    table folder (game/, keys/, home/); only read: copy it (`copy_table`) to commit to it."""
    from stuck_game import build

    return built_once(tmp_path_factory, "three-seats", lambda into: build(into, 3))


@pytest.fixture
def started(base_started: Table, tmp_path: Path) -> Table:
    """A private copy of the started duel: fed holds control at 1.0.alloc."""
    return copy_table(base_started, tmp_path / "table")


@pytest.fixture
def opened(base_opened: Table, tmp_path: Path) -> Table:
    """A private copy of the duel after fed's first turn: kli holds control at 1.0.alloc."""
    return copy_table(base_opened, tmp_path / "table")


@pytest.fixture
def played(base_played: Table, tmp_path: Path) -> Table:
    """A private copy of the duel after two turns: fed holds control at 1.9.move; 1.0.alloc is firm."""
    return copy_table(base_played, tmp_path / "table")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder that is in no git repository."""
    path = tmp_path / "nowhere"
    path.mkdir()
    assert subprocess.run(["git", "rev-parse", "--git-dir"], cwd=path, capture_output=True).returncode != 0
    return path


# --- the demo games, each played once per run (the game page's and the messages' tests) --------------------

def without_crosscheck(home: Path) -> dict[str, str]:
    """A clean environment for a pbem that only builds or draws a game the suite checks elsewhere: without the
    cross-checks (they cost seven times the work, and the demos' own tests run them)."""
    return {k: v for k, v in clean_env(home).items() if not k.startswith("PBEM_CROSSCHECK")}


class DemoGames:
    """`pbem demo --game NAME` played once for the whole run (`built_once`) and only read: NAME -> its folder
    (game/, keys/, home/, and demo.out, what it printed). Each demo runs with the cross-checks on in its own
    tests (tests/test_dow_demo.py, test_twirling_aces.py, test_html_log.py); here it is only the material of the
    pictures and of the messages' states, played without them. A test that changes a demo works in a clone of it
    (tests/demo_games.py `clone_at`)."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.lines: dict[str, list[str]] = {}  # what each demo printed, once asked for

    def folder(self, name: str) -> Path:
        folder = built_once(self.factory, f"demo-{name}", lambda into: _play_demo(into, name))
        self.lines[name] = (folder / "demo.out").read_text().splitlines()
        return folder

    def __call__(self, name: str) -> Path:
        """The demo's game repository."""
        return self.folder(name) / "game"


def _play_demo(folder: Path, name: str) -> None:
    (folder / "home").mkdir(parents=True)
    done = subprocess.run([str(PBEM), "demo", str(folder), "--game", name], cwd=folder / "home",
                          env=without_crosscheck(folder / "home"), capture_output=True, text=True, timeout=900,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (folder / "demo.out").write_text(done.stdout)


@pytest.fixture(scope="session")
def demo_games(tmp_path_factory: pytest.TempPathFactory) -> DemoGames:
    return DemoGames(tmp_path_factory)


# --- this tree's distributions, built once per run (tests/test_wheel.py, tests/test_workflow_lock.py) -------------

@dataclass(frozen=True)
class Dist:
    """`python -m build` of this tree, as a release builds it: the sdist, then the wheel from the sdist."""

    folder: Path  # the sdist and the wheel, nothing else
    failed: str  # what the build said when it failed, "" when it did not


@pytest.fixture(scope="session")
def pbem_dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """Built once per run (`built_once`): a build costs some ten seconds of a core, and two at once in the same
    source tree would share its build folders."""

    def build(into: Path) -> None:
        into.mkdir(parents=True)
        done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(into / "dist"), str(ROOT)],
                              capture_output=True, text=True, timeout=600, check=False)
        (into / "failed.txt").write_text("" if done.returncode == 0 else done.stdout[-2000:] + done.stderr[-2000:])

    folder = built_once(tmp_path_factory, "dist", build)
    return Dist(folder / "dist", (folder / "failed.txt").read_text())
