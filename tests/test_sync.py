"""Acting at the same time (DESIGN §4.9, §8): several players, each in his own clone of one hooked bare hub, act
at the same commit; `pbem push` alone lands everything (replaying each one's own commits onto the new tip,
status.yaml computed again, re-signed, re-verified), and the hub verifies. `pbem pull` fast-forwards or says
what to do; every command sends a clone with a merge or rebase half done to `git … --abort` and `pbem pull`.

The games are built through the services (fast); pushing and pulling go through the real git binary into a bare
repository whose pre-receive hook runs the installed pbem, so every landed commit was verified by the hub.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from conftest import PBEM, TEACHING_DUEL, Table
from gitutil import clean_env
from pbem.crypto.keys import PrivateKey, write_keypair
from pbem.errors import PbemError
from pbem.services import setup, turn
from pbem.services.dow import orders as dow_orders, press as dow_press
from pbem.services.pull import pull
from pbem.services.push import push
from pbem.services.workspace import Identity, Workspace, load_identity
from pbem.store.repo import GameRepo

ROOT = Path(__file__).resolve().parents[1]


# --- a hub and its clones ------------------------------------------------------------------------------------------

@dataclass
class Seat:
    """One player's machine: his clone (`game/`), his HOME, his key."""

    root: Path
    me: Identity

    @property
    def repo_dir(self) -> Path:
        return self.root / "game"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def ws(self) -> Workspace:
        return Workspace.open(self.repo_dir)

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["git", *args], cwd=self.repo_dir, env=clean_env(self.home), capture_output=True,
                              text=True, check=False)
        assert not check or done.returncode == 0, done.stderr
        return done

    def run_git(self, args: Any, cwd: Path) -> subprocess.CompletedProcess[str]:
        """What pbem push/pull run, in this player's clean environment."""
        return subprocess.run(["git", *args], cwd=cwd, env=clean_env(self.home), capture_output=True, text=True,
                              check=False)

    def push(self) -> Any:
        return push(self.ws(), self.me, git=self.run_git)

    def pull(self) -> Any:
        return pull(self.ws(), git=self.run_git)

    def pbem(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(PBEM), *args], cwd=self.repo_dir, capture_output=True, text=True, check=False,
                              env=clean_env(self.home, {"PBEM_KEY": str(self.me.path)}))

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").stdout.strip()


def make_key(folder: Path, name: str, seed: int) -> Identity:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}_ed25519"
    if not path.exists():
        write_keypair(path, PrivateKey.from_seed(bytes([seed]) * 32, f"{name}@pbem.test"))
    return replace(load_identity(str(path), folder), author=(name, f"{name}@pbem.test"))


def start_game(ws: Workspace, first: str, founder: Identity, others: list[Identity]) -> None:
    """Start the game with `first` in control: at once where pbem starts on the founder's word, or by consent
    where the start needs every seat's signature (`setup.begin`: propose, each other signs, start)."""
    begin = getattr(setup, "begin", None)
    if begin is None:
        setup.start(ws, first, founder)
        return
    for who in (founder, *others, founder):  # the run that finds every signature starts the game
        head = ws.head()
        if head is not None and head.started:
            break
        begin(ws, who, first)


def hub_for(founder: Seat, root: Path) -> Path:
    """A bare hub with pbem's pre-receive hook, holding the founder's game; the founder's clone tracks it."""
    hub = root / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True, capture_output=True)
    done = subprocess.run([str(PBEM), "hook", "install", str(hub)], capture_output=True, text=True,
                          env=clean_env(founder.home))
    assert done.returncode == 0, done.stderr
    founder.git("remote", "add", "origin", str(hub))
    founder.git("push", "-q", "-u", "origin", "main")
    return hub


def clone(hub: Path, root: Path, me: Identity) -> Seat:
    seat = Seat(root, me)
    seat.home.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(hub), str(seat.repo_dir)], check=True, capture_output=True,
                   env=clean_env(seat.home))
    return seat


def copy_seats(seats: dict[str, Seat], hub: Path, root: Path) -> tuple[dict[str, Seat], Path]:
    """A private copy, in `root`, of seats built under one folder with their hub and keys (as `tactical` and
    `dow_hub` lay them out): every clone's origin points at the copy of the hub, every key at its copy."""
    base = hub.parent
    shutil.copytree(base, root, symlinks=True)
    copied = {}
    for name, seat in seats.items():
        key = root / Path(seat.me.path).relative_to(base)
        copied[name] = Seat(root / seat.root.relative_to(base),
                            replace(load_identity(str(key), key.parent), author=seat.me.author))
        copied[name].git("remote", "set-url", "origin", str(root / hub.name))
    return copied, root / hub.name


def hub_head(hub: Path) -> str:
    return subprocess.run(["git", "rev-parse", "main"], cwd=hub, capture_output=True, text=True).stdout.strip()


def hub_verifies(hub: Path, root: Path) -> None:
    """A fresh clone of the hub verifies from its root (what any player or the workflow would see)."""
    fresh = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(hub), str(fresh)], check=True, capture_output=True)
    done = subprocess.run([str(PBEM), "verify"], cwd=fresh, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def all_push(seats: list[Seat]) -> list[str]:
    """Each seat runs `pbem push` once, in turn; every one must land. Returns the messages."""
    said = []
    for seat in seats:
        outcome = seat.push()
        assert outcome.code == 0, (outcome.message, [f.text() for f in outcome.findings])
        said.append(outcome.message)
    return said


def tactical(root: Path, template: str, seats: tuple[str, ...]) -> tuple[dict[str, Seat], Path]:
    """init from games/TEMPLATE (or the folder TEMPLATE), every seat joins, pushed to a hub; each seat has his own
    clone."""
    keys = {seat: make_key(root / "keys", seat, 0x20 + i) for i, seat in enumerate(seats)}
    founder = Seat(root / seats[0], keys[seats[0]])
    founder.home.mkdir(parents=True)
    ws = setup.init(founder.repo_dir, str(ROOT / "games" / template), f"{Path(template).name}-sync", keys[seats[0]])
    for seat, me in keys.items():
        setup.join(ws, seat, me)
    hub = hub_for(founder, root)
    out = {seats[0]: founder}
    for seat in seats[1:]:
        out[seat] = clone(hub, root / seat, keys[seat])
    return out, hub


# --- 2 contributions and a reveal ---------------------------------------------------------------------------------

def test_two_contributions_at_once_and_the_reveal_land_with_push_alone(tmp_path: Path) -> None:
    """The three-cornered melee decides who starts by dice (seed 000 §2.A): fed announces, kli and rom contribute
    at the same commit (the same batch file, different keys of its `contributions` mapping; at a table of three,
    possibly a commitment round first), fed reveals. Every round lands with `pbem push` alone; the hub verifies."""
    seats, hub = tactical(tmp_path, "tactical-melee", ("fed", "kli", "rom"))
    fed, kli, rom = seats["fed"], seats["kli"], seats["rom"]
    for who in (kli, rom, fed):  # every seat consents to start by dice; fed signs last and announces the die
        setup.begin(fed.ws(), who.me, None, True)
    assert fed.push().code == 0
    rebased = 0
    for _round in range(4):  # each round: everyone owing something settles it at the same commit, then pushes
        for seat in seats.values():
            seat.pull()
        acted = [seat for seat in seats.values() if _settles(seat)]
        if not acted:
            break
        said = all_push(acted)
        rebased += sum("rebased and re-signed" in line for line in said)
    assert rebased >= 1  # kli's and rom's contributions were made on the same commit
    fed.pull()
    first = setup.begin(fed.ws(), fed.me, None, True)[-1].first
    assert first in ("fed", "kli", "rom")
    assert fed.push().code == 0
    hub_verifies(hub, tmp_path)


def _settles(seat: Seat) -> bool:
    """`pbem yield` by this seat, if he owes something before the start; False when he owes nothing."""
    try:
        turn.yield_turn(seat.ws(), seat.me)
    except PbemError as exc:
        assert exc.finding.rule == "setup.not-started", exc.finding.text()
        return False
    return True


# --- 3 players sealing allocations at the same commit -------------------------------------------------------------

def test_three_players_seal_their_allocations_at_the_same_commit_and_all_land(tmp_path: Path) -> None:
    """games/tactical-melee seals each turn's energy allocation and speed (DESIGN §4.7, seed 000 §2.C): after
    everyone's orders, all three seal at the same commit, each in his own clone, and push one after the other;
    then each opens the speeds of his own (a bare yield), again at the same commit, and all land."""
    seats, hub = tactical(tmp_path, "tactical-melee", ("fed", "kli", "rom"))
    fed = seats["fed"]
    start_game(fed.ws(), "fed", fed.me, [seats["kli"].me, seats["rom"].me])
    assert fed.push().code == 0
    from pbem.services import demo

    units = {"fed": "CA", "kli": "D7", "rom": "KR"}
    for number, who in enumerate(("fed", "kli", "rom"), 1):  # orders in table order, each pulled first
        seat = seats[who]
        seat.pull()
        demo.play_turn(seat.ws(), seat.me, {"player": who, "through": "1.32.final"}, number)  # no speed: sealed
        assert seat.push().code == 0
    for seat in seats.values():
        seat.pull()
    base = {who: seat.head() for who, seat in seats.items()}
    assert len(set(base.values())) == 1
    for number, (who, seat) in enumerate(seats.items(), 10):
        demo.play_turn(seat.ws(), seat.me, {"player": who, "seal": {"kind": "allocation", "value": {
            "turn": 1, "units": {units[who]: {"speed": 8, "weapons": 3}}}}}, number)
    all_push(list(seats.values()))
    for seat in seats.values():
        seat.pull()
    owing = [b.player for b in seats["rom"].ws().head().status.pending]
    assert sorted(owing) == ["fed", "kli", "rom"], owing  # each owes the speeds part of his own box
    for number, seat in enumerate(seats.values(), 20):  # opened at the same commit too
        demo.play_turn(seat.ws(), seat.me, {"player": seat.me.author[0]}, number)
    all_push(list(seats.values()))
    hub_verifies(hub, tmp_path)
    last = list(seats.values())[-1]
    status = last.ws().head().status
    assert status is not None and not any(b.kind in ("sealed", "secret") for b in status.pending), status.pending
    assert status.firm != "1.0.alloc"


# --- 7 powers sealing orders at once ------------------------------------------------------------------------------

POWERS = ("austria", "england", "france", "germany", "italy", "russia", "turkey")
CODE = "IReadTheGameDescription"


def dow_keys(root: Path) -> dict[str, Identity]:
    return {p: make_key(root / "keys", p, 0x40 + i) for i, p in enumerate(POWERS)}


def dow_game(seat: Seat, game_id: str, keys: dict[str, Identity], ready: bool = True) -> None:
    """A seven-power Diplomacy game in `seat`'s repository, started by consent and past the press-only first
    half of Spring 1901 (every power said `ready`): S1901M is open and every power owes orders. Without
    `ready`, the game stops at the start of S1901P (press only)."""
    seat.home.mkdir(parents=True)
    ws = setup.init(seat.repo_dir, "dow-standard", game_id, keys["austria"])
    for power in POWERS:
        setup.join(ws, power, keys[power], CODE)
    start_game(ws, "austria", keys["austria"], [keys[p] for p in POWERS[1:]])
    for power in POWERS if ready else ():
        dow_press.post(ws, keys[power], {"ready": True})


def dow_hub(root: Path) -> tuple[dict[str, Seat], Path]:
    keys = dow_keys(root)
    founder = Seat(root / "austria", keys["austria"])
    dow_game(founder, "dow-sync", keys)
    hub = hub_for(founder, root)
    seats = {"austria": founder}
    for power in POWERS[1:]:
        seats[power] = clone(hub, root / power, keys[power])
    return seats, hub


@pytest.fixture(scope="module")
def base_dow_hub(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Seat], Path]:
    """Built once (`dow_hub`): S1901M is open on the hooked hub, every power's clone up to date."""
    return dow_hub(tmp_path_factory.mktemp("dow-hub"))


@pytest.fixture
def dow_seats(base_dow_hub: tuple[dict[str, Seat], Path], tmp_path: Path) -> tuple[dict[str, Seat], Path]:
    """A private copy of `base_dow_hub`: the seven clones and their hub."""
    return copy_seats(*base_dow_hub, tmp_path / "dow")


def test_seven_powers_seal_their_orders_at_once_and_all_land(dow_seats: tuple[dict[str, Seat], Path],
                                                             tmp_path: Path) -> None:
    """A Diplomacy opening (DESIGN §4.9): all seven powers seal their orders for the first phase at the same
    commit, each in his own clone, and push one after the other: all seven land, none retyped."""
    seats, hub = dow_seats
    for power, seat in seats.items():
        dow_orders.seal_orders(seat.ws(), seat.me, json.dumps({"orders": []}).encode(), f"{power}'s orders")
    said = all_push(list(seats.values()))
    assert sum("rebased" in line for line in said) == 6
    hub_verifies(hub, tmp_path)
    last = seats["turkey"].ws().head()
    assert last is not None and last.status is not None
    assert not any(b.kind == "sealed" for b in last.status.pending)


def test_a_replayed_commit_that_no_longer_fits_is_kept_on_a_branch_and_named(
        dow_seats: tuple[dict[str, Seat], Path], tmp_path: Path) -> None:
    """France seals orders on his laptop and pushes; on his desktop (the same key, a clone behind) he sealed
    orders too. `pbem push` there cannot land the second: it says exactly why and what to do, changes neither
    branch nor working tree, and keeps the commit on a `pbem-saved-…` branch it names."""
    seats, hub = dow_seats
    laptop = seats["france"]
    desktop = clone(hub, tmp_path / "france-desktop", laptop.me)
    dow_orders.seal_orders(laptop.ws(), laptop.me, json.dumps({"orders": []}).encode(), "orders")
    assert laptop.push().code == 0
    dow_orders.seal_orders(desktop.ws(), desktop.me, json.dumps({"orders": ["A PAR H"]}).encode(), "orders")
    mine, landed = desktop.head(), hub_head(hub)
    with pytest.raises(PbemError) as refused:
        desktop.push()
    finding = refused.value.finding
    assert finding.rule in ("push.conflict", "push.rebase-illegal")
    saved = f"pbem-saved-{mine[:10]}"
    assert saved in finding.message and "git reset --hard origin/main" in finding.message
    assert desktop.git("rev-parse", saved).stdout.strip() == mine
    assert desktop.head() == mine and hub_head(hub) == landed
    assert desktop.git("status", "--porcelain").stdout == ""


def test_press_posted_before_the_phase_moved_on_is_dated_again_and_lands(tmp_path: Path) -> None:
    """Germany posts press on his desktop (dated S1901M, unpublished) while, from his laptop, the phase is
    played out and moves on. `pbem push` replays the press onto the new tip dated with the phase open now (press
    is not bound to orders, services/left_out.py), says so, and lands it; what the new phase refuses is told in
    tests/test_dow_press_race.py."""
    keys = dow_keys(tmp_path)
    laptop = Seat(tmp_path / "laptop", keys["germany"])
    dow_game(laptop, "dow-late", keys)
    hub = hub_for(laptop, tmp_path)
    desktop = clone(hub, tmp_path / "desktop", keys["germany"])
    dow_press.post(desktop.ws(), desktop.me, {"say": "Peace in the north?"})
    for power in POWERS:  # the whole second half, played from the laptop's clone
        dow_orders.seal_orders(laptop.ws(), keys[power], json.dumps({"orders": []}).encode(), "orders")
    for power in POWERS:
        dow_orders.reveal_orders(laptop.ws(), keys[power])
    assert laptop.push().code == 0
    outcome = desktop.push()
    assert outcome.code == 0 and "written for S1901M" in outcome.message, outcome.message
    assert desktop.head() == hub_head(hub)
    hub_verifies(hub, tmp_path)


# --- pbem pull ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def base_duel(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Seat], Path]:
    """Built once: a started duel on a hub, fed's and kli's clones up to date, fed in control."""
    seats, hub = tactical(tmp_path_factory.mktemp("duel-hub"), str(TEACHING_DUEL), ("fed", "kli"))  # speeds as entries
    fed, kli = seats["fed"], seats["kli"]
    start_game(fed.ws(), "fed", fed.me, [kli.me])
    assert fed.push().code == 0
    kli.pull()
    return seats, hub


@pytest.fixture
def duel(base_duel: tuple[dict[str, Seat], Path], tmp_path: Path) -> tuple[Seat, Seat, Path]:
    """A private copy of `base_duel`: fed's and kli's clones, and their hub."""
    seats, hub = copy_seats(*base_duel, tmp_path / "duel")
    return seats["fed"], seats["kli"], hub


def fed_turn(fed: Seat) -> None:
    (fed.repo_dir / "players").mkdir(exist_ok=True)
    (fed.repo_dir / "players" / "fed.yaml").write_text('through: "1.8.damage"\nbreaks: [{range: 8}]\n')
    (fed.repo_dir / "report").mkdir(exist_ok=True)
    (fed.repo_dir / "report" / "turn-01.yaml").write_text(
        'entries:\n  - {at: "1.0.alloc", by: fed, unit: CA, do: {speed: 12}}\n')
    turn.yield_turn(fed.ws(), fed.me, "closing")


def test_status_and_check_say_a_clone_is_behind_and_pull_fast_forwards(duel: tuple[Seat, Seat, Path]) -> None:
    fed, kli, _hub = duel
    fed_turn(fed)
    assert fed.push().code == 0
    kli.git("fetch", "-q")
    status = kli.pbem("status", "--plain")
    assert "behind:  origin has 1 new commit: pbem pull" in status.stdout
    assert "$ pbem pull" in status.stdout
    assert json.loads(kli.pbem("status", "--format", "json").stdout)["behind"].startswith("origin has 1 new")
    assert "origin has 1 new commit: pbem pull" in kli.pbem("check").stdout
    done = kli.pbem("pull")
    assert done.returncode == 0 and "pulled 1 new commit from origin/main" in done.stdout, done.stderr
    assert kli.head() == fed.head()
    assert "up to date" in kli.pbem("pull").stdout
    assert "behind" not in kli.pbem("status", "--plain").stdout


def test_pull_with_my_own_commits_says_push(duel: tuple[Seat, Seat, Path]) -> None:
    fed, kli, _hub = duel
    fed_turn(fed)
    assert "1 unpublished commit: `pbem push`" in fed.pull().message
    (kli.repo_dir / "players").mkdir(exist_ok=True)
    (kli.repo_dir / "players" / "kli.yaml").write_text('through: "1.4.damage"\n')
    kli.git("add", "-A")  # an uncommitted edit that the incoming commit does not touch stays
    assert fed.push().code == 0
    assert "pulled 1 new commit" in kli.pull().message
    assert (kli.repo_dir / "players" / "kli.yaml").read_text() == 'through: "1.4.damage"\n'


def test_pull_refuses_to_overwrite_my_uncommitted_edits(duel: tuple[Seat, Seat, Path]) -> None:
    fed, kli, _hub = duel
    fed_turn(fed)
    assert fed.push().code == 0
    (kli.repo_dir / "players").mkdir(exist_ok=True)
    (kli.repo_dir / "players" / "fed.yaml").write_text("through: 1.2.move\n")
    before = kli.head()
    with pytest.raises(PbemError) as refused:
        kli.pull()
    assert refused.value.finding.rule == "pull.dirty"
    assert "git stash" in refused.value.finding.message and "players/fed.yaml" in refused.value.finding.message
    assert kli.head() == before


@pytest.mark.parametrize("operation", ["merge", "rebase"])
def test_every_command_sends_a_half_done_merge_or_rebase_to_abort_and_pull(duel: tuple[Seat, Seat, Path],
                                                                           operation: str) -> None:
    fed, kli, _hub = duel
    kli.git("switch", "-q", "-c", "side")
    (kli.repo_dir / "README.md").write_text("mine\n")
    kli.git("commit", "-q", "--no-gpg-sign", "-am", "side")
    kli.git("switch", "-q", "main")
    (kli.repo_dir / "README.md").write_text("theirs\n")
    kli.git("commit", "-q", "--no-gpg-sign", "-am", "main")
    if operation == "merge":
        assert kli.git("merge", "side", check=False).returncode != 0
    else:
        assert kli.git("rebase", "side", check=False).returncode != 0
    for command in (["status"], ["check"], ["yield"], ["pull"], ["push"], ["log"]):
        done = kli.pbem(*command)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        line = done.stderr.strip()
        assert "[git.in-progress]" in line and f"`git {operation} --abort`" in line and "`pbem pull`" in line, line
        assert "Traceback" not in done.stderr


def test_an_unsigned_commit_on_top_says_reset_soft_then_yield_everywhere(duel: tuple[Seat, Seat, Path]) -> None:
    """A plain `git commit` (unsigned): the hub's refusal, `pbem yield` and `pbem verify` all give the same way
    out, and following it works (no circle between "use pbem yield" and "run pbem verify")."""
    fed, _kli, _hub = duel
    (fed.repo_dir / "players").mkdir(exist_ok=True)
    (fed.repo_dir / "players" / "fed.yaml").write_text('through: "1.8.damage"\n')
    fed.git("add", "-A")
    fed.git("commit", "-q", "--no-gpg-sign", "-m", "my turn")
    pushed = fed.git("push", "origin", "main", check=False)
    assert pushed.returncode != 0 and "git reset --soft HEAD~1" in pushed.stderr
    for command in (["yield"], ["verify"], ["status", "--plain"]):
        done = fed.pbem(*command)
        assert done.returncode == 1 and "git reset --soft HEAD~1" in done.stdout + done.stderr, command
    fed.git("reset", "-q", "--soft", "HEAD~1")
    assert fed.pbem("yield", "-m", "my turn").returncode == 0
    assert fed.pbem("push").returncode == 0


# --- day one --------------------------------------------------------------------------------------------------------

def test_keygen_configure_makes_pbem_and_git_find_the_key(tmp_path: Path) -> None:
    """README step 1 then step 2 in a fresh HOME: the key keygen wrote is the one pbem signs with, and plain
    `git verify-commit` says Good for it."""
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(home)
    done = subprocess.run([str(PBEM), "keygen", "--out", str(home / ".ssh" / "pbem_ed25519"), "--configure"],
                          env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "user.signingkey" in done.stderr
    assert subprocess.run(["git", "config", "--global", "gpg.format"], env=env, capture_output=True,
                          text=True).stdout.strip() == "ssh"
    made = subprocess.run([str(PBEM), "init", "g", "--template", "tactical-duel", "--id", "g-1"], env=env,
                          capture_output=True, text=True, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    joined = subprocess.run([str(PBEM), "join", "--as", "fed"], env=env, capture_output=True, text=True,
                            cwd=tmp_path / "g")
    assert joined.returncode == 0, joined.stderr
    shown = subprocess.run(["git", "verify-commit", "HEAD"], env=env, capture_output=True, text=True,
                           cwd=tmp_path / "g")
    assert shown.returncode == 0 and "Good" in shown.stderr, shown.stderr
    nothing = subprocess.run([str(PBEM), "keygen", "--out", str(home / "other_ed25519"), "--no-configure"], env=env,
                             capture_output=True, text=True, cwd=tmp_path)
    assert nothing.returncode == 0 and "pbem will not find" in nothing.stderr


def test_the_founder_commits_setup_edits_with_yield(tmp_path: Path) -> None:
    """Before the start the docs invite setup edits (e.g. `allocation: open`): the founder commits them with
    `pbem yield`, `pbem check` shows it beforehand, and the game verifies."""
    keys = {s: make_key(tmp_path / "keys", s, 0x60 + i) for i, s in enumerate(("fed", "kli"))}
    founder = Seat(tmp_path / "fed", keys["fed"])
    founder.home.mkdir(parents=True)
    setup.init(founder.repo_dir, "tactical-duel", "setup-1", keys["fed"])
    game = founder.repo_dir / "game.yaml"
    text = game.read_text()
    assert "  speeds: sealed " in text and "  allocation: sealed " in text
    game.write_text(text.replace("  speeds: sealed ", "  speeds: open ", 1)
                    .replace("  allocation: sealed ", "  allocation: open ", 1))
    checked = founder.pbem("check")
    assert checked.returncode == 0 and "commit 1: founder: setup: game.yaml" in checked.stdout, checked.stdout
    done = founder.pbem("yield")
    assert done.returncode == 0 and "setup edits" in done.stdout, done.stderr
    assert founder.git("status", "--porcelain").stdout == ""
    assert "allocation: open" in founder.git("show", "HEAD:game.yaml").stdout
    assert founder.pbem("verify").returncode == 0
