"""Every line a player reads is right (DESIGN §8): each message read at the state that produces it.

The pure decisions are tables of state -> expected line; the rest is read from the real command at a real state:
a game set up through the CLI, or a player's clone of a demo game at the commit that produces the state
(tests/demo_games.py).
"""

from __future__ import annotations

import re

import subprocess
import time
from pathlib import Path

import pytest

from conftest import PBEM, DemoGames, Table
from demo_games import clone_at, commit_of, demo, git
from gitutil import Sandbox, clean_env
from pbem.protocol.model import Break, Status
from pbem.render.status_screen import StatusView, Todo, control_text, holds_turn, todos
from pbem.rulesets.dow import invite
from pbem.services import gitstate, watch
from pbem.services.dow.orders import void_means
from pbem.services.pictures import COMMANDS
from pbem.store.repo import GameRepo

WAIT = "pbem pull && pbem status"
SEALED = "sealed input owed for S1901M (any order, without control)"
POWERS = ("england", "france", "germany")


@pytest.fixture(scope="module")
def demos(demo_games: DemoGames) -> DemoGames:
    return demo_games


def simultaneous(*players: str) -> Status:
    return Status(players[0], "S1901M", tuple(Break(p, "S1901M", "sealed", SEALED) for p in players), False)


def view(status: Status | None, me: str | None) -> StatusView:
    return StatusView("Duel", "duel-1", "tactical/1", status, me, players=("fed", "kli"))


# --- the pure decisions, state -> the line ------------------------------------------------------------------

ANNOUNCED = Break("fed", "1.4.fire", "roll", "dice owed for 1.4.fire/CA/ph1 in fed-0003")
UNANNOUNCED = Break("fed", "1.4.fire", "roll", "dice owed for 1.4.fire/CA/ph1 (pbem roll --for … --ref …)")
WRONG_DIE = Break("fed", "1.4.fire", "roll", "dice owed for 1.4.fire/CA/ph1 in fed-0003, a d2 where the rules roll "
                  "a d6: void it")


@pytest.mark.parametrize("pending, text, command", [
    (ANNOUNCED, "dice owed for 1.4.fire/CA/ph1 in fed-0003: reveal the dice you announced: pbem yield (once the "
     "others have contributed)", "pbem yield"),
    (UNANNOUNCED, "dice owed for 1.4.fire/CA/ph1 (pbem roll --for … --ref …): announce the dice for your shots, "
     "then yield", 'pbem roll --for "1.4.fire/CA/ph1" --ref 1.4.fire/CA/ph1 && pbem yield'),
    (WRONG_DIE, "dice owed for 1.4.fire/CA/ph1 in fed-0003, a d2 where the rules roll a d6: void it: void the batch "
     "of the wrong die, then roll again",
     'pbem dice void fed-0003 --reason "1.4.fire/CA/ph1: a d2 where the rules roll a d6" && pbem yield'),
])
def test_a_roller_is_told_what_his_roll_still_needs(pending: Break, text: str, command: str) -> None:
    """Before: a roller who had announced was told to "announce the dice for your shots"."""
    assert todos(view(Status("fed", "1.4.fire", (pending,), False), "fed")) == [Todo(text, command)]


@pytest.mark.parametrize("status, me, control, turn", [
    (simultaneous(*POWERS), "england", "nobody: all at once, england (you), france, germany still to act, in any "
     "order", False),
    (simultaneous("russia"), "russia", "nobody: all at once, russia (you) still to act, in any order", False),
    (Status("fed", "1.9.move", (Break("fed", "1.9.move", "horizon", "needs orders from 1.9.move"),), False), "fed",
     "fed (you)", True),
    (Status("kli", "2.1.move", (Break("kli", "2.1.move", "dice", "contribution owed to dice b2 of fed"),
                                Break("fed", "2.1.move", "horizon", "needs orders from 2.1.move")), False), "kli",
     "kli (you)", False),
])
def test_who_holds_control_in_a_simultaneous_step(status: Status, me: str, control: str, turn: bool) -> None:
    """Before: "control: russia" and "russia holds control" while every power owed its orders at once."""
    assert control_text(status, me) == control
    assert holds_turn(status, me) is turn


def test_nobody_holds_control_while_all_owe_at_once_on_the_status_screen() -> None:
    shown = todos(view(simultaneous("russia", "turkey"), "england"))
    assert shown == [Todo("nothing: waiting for russia, turkey (all at once, in any order)", WAIT)]


@pytest.mark.parametrize("ruleset, command", [("dow/1", "pbem orders orders.yaml"),
                                              ("tactical/1", "pbem seal allocation allocation.yaml && pbem yield")])
def test_watch_tells_the_sealed_input_of_this_game_only(ruleset: str, command: str) -> None:
    """Before: "seal it: `pbem orders …` in Diplomacy, `pbem seal allocation …` in a tactical game", in both; and
    "you hold control" to a power that owed orders with the others (and, having sealed, to the next in line)."""
    told = watch.decisions(simultaneous(*POWERS), "england", [], COMMANDS[ruleset][0])
    assert [d.text for d in told] == [f"{SEALED}: seal it: `{command}`"]
    assert not [d for d in watch.decisions(simultaneous("france", "germany"), "france", [], command)
                if d.text.startswith("you hold control")]
    turn = Status("fed", "1.9.move", (Break("fed", "1.9.move", "horizon", "needs orders from 1.9.move"),), False)
    assert [d.text for d in watch.decisions(turn, "fed")] == [
        "you hold control (needs orders from 1.9.move): `pbem status`, then `pbem yield`"]


@pytest.mark.parametrize("order, reason, means", [
    ("A PAR B", "invalid build site", "nothing is built there"),
    ("F KIE D", "no such unit", "nothing is disbanded by it"),
    ("A BUR H", "unorderable unit", "you have no such unit there: nothing moves"),
    ("A PAR - MUN", "invalid move", "the unit holds"),
])
def test_a_void_order_says_what_it_leaves(order: str, reason: str, means: str) -> None:
    """Before: every void order read "it will be void (the unit holds)", a build too."""
    assert void_means(order, reason) == means


# --- setting up -----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def founder(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """A duel set up through the CLI: fed created it and took his seat; kli's is open."""
    root = tmp_path_factory.mktemp("founder")
    box = Sandbox(root)
    for name in ("alice", "bob", "carol"):
        box.new_key(name)
    table = Table(root)
    assert table.pbem("init", str(table.repo_dir), "--id", "duel-1", who="fed", cwd=root).returncode == 0
    assert table.pbem("join", "--as", "fed", who="fed").returncode == 0
    return table


def test_the_founder_is_told_to_wait_for_the_other_seat_not_to_take_it(founder: Table) -> None:
    """Before: "seats kli are open …: `pbem join --as kli`" to fed, whose key holds fed (one key, one seat)."""
    mine = founder.cli("status", "--plain", who="fed").output
    assert "pbem join --as kli" not in mine.replace("`pbem join --as ID`", "")
    assert f"the other players claim them (each runs `pbem join --as ID` in his clone), then every seat consents " \
           f"to start: `{WAIT}`" in mine
    stranger = founder.cli("status", "--plain", who="carol").output
    assert "seats kli are open (then every seat consents to start): `pbem join --as kli`" in stranger


def test_init_of_a_game_with_an_invite_code_says_how_to_pass_it(tmp_path: Path) -> None:
    """Before: "players now run `pbem join --as ID` there", which fails without the code; no command set a fresh
    one (only a python one-liner in a game.yaml comment)."""
    box = Sandbox(tmp_path)
    key, _ = box.new_key("alice")
    env = clean_env(box.home, {"PBEM_KEY": str(key)})

    def pbem(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(PBEM), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)

    plain = pbem("init", "d1", "--template", "dow-standard", "--id", "d1")
    assert plain.stdout.strip() == (
        "created d1 (d1); players now run `pbem join --as ID --code CODE` there, CODE being the invite code of the "
        "game description (this template's is named in game.yaml's comment; `pbem init --code NEW` sets a fresh "
        "one)")
    fresh = pbem("init", "d2", "--template", "dow-standard", "--id", "d2", "--code", "open sesame")
    assert fresh.stdout.strip() == (
        "created d2 (d2); players now run `pbem join --as ID --code 'open sesame'` there (give them the code with "
        "the game description: the repository keeps only its salted hash)")
    text = (tmp_path / "d2" / "game.yaml").read_text()
    hashed = next(line.split('"')[1] for line in text.splitlines() if "invite_hash:" in line)
    assert "open sesame" not in text and "IReadTheGameDescription" not in text
    assert invite.checkable(hashed) and invite.matches(hashed, "open sesame")
    assert not invite.matches(hashed, "IReadTheGameDescription")
    other = pbem("init", "d3", "--template", "dow-standard", "--id", "d3", "--code", "open sesame")
    assert other.returncode == 0 and hashed not in (tmp_path / "d3" / "game.yaml").read_text()  # a fresh salt
    refused = pbem("join", "--as", "france", "--code", "IReadTheGameDescription", cwd=tmp_path / "d2")
    assert refused.returncode == 1 and "[setup.bad-invite-code]" in refused.stderr
    joined = pbem("join", "--as", "france", "--code", "open sesame", cwd=tmp_path / "d2")
    assert joined.returncode == 0, joined.stderr
    assert pbem("verify", cwd=tmp_path / "d2").returncode == 0


@pytest.mark.parametrize("args, said", [
    (("--id", "t1", "--code", "x"), "has no invite code to replace (setup.invite_hash)"),
    (("--template", "dow-standard", "--id", "t2", "--code", " x"), "--code: give a non-empty code"),
])
def test_a_code_for_a_game_without_one_or_a_bad_code_is_refused(tmp_path: Path, args: tuple[str, ...],
                                                               said: str) -> None:
    box = Sandbox(tmp_path)
    key, _ = box.new_key("alice")
    done = subprocess.run([str(PBEM), "init", "g", *args], cwd=tmp_path, capture_output=True, text=True,
                          env=clean_env(box.home, {"PBEM_KEY": str(key)}), check=False)
    assert done.returncode == 2 and "[usage.invite-code]" in done.stderr and said in done.stderr
    assert not (tmp_path / "g").exists()


# --- files a player writes ------------------------------------------------------------------------------------

UNCLOSED = ('entries:\n  - {at: "1.0.alloc", by: fed, unit: CA, do: {speed: 12}}\n'
            '  - {at: "1.1.move", by: fed, unit: CA, do: {move: F}}\n  - {at: "1.2.move", by: fed, unit: CA, do: '
            '{move: F}}\n  - {at: "1.3.move", by: fed, unit: CA, do: {move: F}\n')


@pytest.mark.parametrize("path, text", [
    ("report/turn-01.yaml", UNCLOSED),  # the entry layout: the line read alone
    ("report/turn-01.yaml", UNCLOSED.replace("F}\n", "F\n")),  # nothing closes it at all
    ("report/turn-01.yaml", UNCLOSED + '  - {at: "1.4.move", by: fed, unit: CA, do: {move: F}}\n'),
    ("players/fed.yaml", 'through: "1.8.damage"\nbreaks:\n  - {range: 8}\n  - {at: "1.16.move"}\n  - {range: 3\n'),
    ("press/fed.yaml", "messages:\n" + "  - {by: fed, say: hello}\n" * 3 + "  - {by: fed, say: {hello}\n"),
])
def test_an_unclosed_brace_is_reported_at_its_own_line(started: Table, path: str, text: str) -> None:
    """Before: line 1 (a line read alone), or the line after the brace (where libyaml noticed)."""
    started.write(path, text)
    checked = started.cli("check", who="fed")
    assert checked.exit_code == 1 and f"{path}:5: [yaml.syntax]" in checked.output, checked.output
    assert "is never closed" in checked.output
    started.git("add", "-A")
    started.git_commit("fed: unclosed", signer="fed")
    verified = started.pbem("verify")  # the verifier reads the line through its parse cache
    assert f"{path}:5: [yaml.syntax]" in verified.stdout, verified.stdout


# --- demo states ----------------------------------------------------------------------------------------------

def test_a_sealed_allocation_says_its_speeds_open_at_the_turn_start(demos: DemoGames, tmp_path: Path) -> None:
    """Before: "sealed secret rom-0001 (allocation); due at end" in a `speeds: sealed` game."""
    folder = demo("twirling-aces", demos)
    clone = clone_at(folder, commit_of(folder, "rom: my orders"), tmp_path / "rom")
    (tmp_path / "alloc.yaml").write_text("{turn: 1, units: {KR: {speed: 8, weapons: 3}}}\n")
    done = clone.cli("seal", "allocation", str(tmp_path / "alloc.yaml"), who="rom")
    assert done.exit_code == 0, done.output
    assert done.output.strip() == ("sealed secret rom-0001 (allocation) for 1.0.alloc: its speeds are opened at "
                                   "1.0.alloc once every player owing one there has sealed, the whole at the end of "
                                   "the battle: now `pbem yield`")


def test_a_build_on_a_wrong_site_builds_nothing(demos: DemoGames, tmp_path: Path) -> None:
    folder = demo("dow", demos)
    clone = clone_at(folder, commit_of(folder, "germany: orders for F1901R revealed"), tmp_path / "germany")
    (tmp_path / "orders.yaml").write_text('{orders: ["A PAR B", "F KIE B"]}\n')
    refused = clone.cli("orders", str(tmp_path / "orders.yaml"), who="germany")
    assert refused.exit_code == 1 and "[orders.invalid]" in refused.output, refused.output
    done = clone.cli("orders", str(tmp_path / "orders.yaml"), "--anyway", who="germany")
    assert done.exit_code == 0, done.output
    assert "'A PAR B' is not a valid order" in done.output and "it will be void (nothing is built there)" in done.output
    assert "the unit holds" not in done.output


def test_status_in_a_simultaneous_phase_says_nobody_holds_control(demos: DemoGames, tmp_path: Path) -> None:
    folder = demo("dow", demos)
    clone = clone_at(folder, commit_of(folder, "austria: orders for S1901M sealed"), tmp_path / "england")
    shown = clone.cli("status", "--plain", who="england").output
    assert shown.splitlines()[0] == ("control: nobody: all at once, england (you), france, germany, italy, russia, "
                                     "turkey still to act, in any order")
    assert "holds control" not in shown
    summary = clone.cli("summary", "HEAD~1..HEAD").output
    assert "nobody holds control: all at once, england, france, germany, italy, russia, turkey still to act" in summary


def test_push_says_the_game_after_it_replayed_a_commit(demos: DemoGames, tmp_path: Path) -> None:
    """Before: the status `pbem yield` (or `pbem orders`) printed on the clone as it was stood unanswered after
    `pbem push` replayed the commit onto another power's."""
    folder = demo("dow", demos)
    england = clone_at(folder, commit_of(folder, "austria: orders for S1901M sealed"), tmp_path / "england")
    france = england.second("france")
    (tmp_path / "en.yaml").write_text('{orders: ["F LON - NTH", "F EDI - NWG", "A LVP - YOR"]}\n')
    (tmp_path / "fr.yaml").write_text('{orders: ["F BRE - MAO", "A PAR - BUR", "A MAR H"]}\n')
    assert england.cli("orders", str(tmp_path / "en.yaml"), who="england").exit_code == 0
    assert france.cli("orders", str(tmp_path / "fr.yaml"), who="france").exit_code == 0
    assert england.pbem("push", who="england").returncode == 0
    pushed = france.pbem("push", who="france")
    assert pushed.returncode == 0, pushed.stderr
    assert "had moved: rebased and re-signed 1 commit(s)" in pushed.stdout
    assert pushed.stdout.strip().endswith("now control: nobody: all at once, germany, italy, russia, turkey still to "
                                          "act, in any order, firm: S1901M (`pbem status` for the rest)")


def test_watch_says_the_game_is_over_and_stops(demos: DemoGames, tmp_path: Path) -> None:
    """Before: it never said so and polled forever."""
    folder = demo("tactical-duel", demos)
    clone = clone_at(folder, commit_of(folder, "kli: my allocations opened, for the audit"), tmp_path / "fed")
    done = clone.pbem("watch", "--interval", "0.1", who="fed", timeout=60)  # no --once: it must stop by itself
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        "the game is over (replay reached its end): nothing more to watch, pbem watch stops (read it whole: "
        "`pbem log --html --out game.html`)")


# --- a clone that may be behind -------------------------------------------------------------------------------

def test_status_says_when_the_remote_moved_or_it_has_not_fetched_for_a_while(demos: DemoGames, tmp_path: Path) -> None:
    """Before: status never said it could be behind, so a newcomer was told to propose a start another player had
    proposed already."""
    folder = demo("tactical-duel", demos)
    fed = clone_at(folder, commit_of(folder, "fed: closing"), tmp_path / "fed")
    kli = fed.second("kli")
    assert "behind" not in kli.cli("status", "--plain", who="kli").output
    repo = GameRepo.open(kli.game)
    assert gitstate.behind_line(repo) is None
    assert gitstate.behind_line(repo, now=time.time() + 3 * 3600) == (
        "origin was last fetched 3 h ago and may have moved since: pbem pull (or pbem status --fetch)")
    assert kli.cli("yield", who="kli").exit_code == 0 and kli.pbem("push", who="kli").returncode == 0
    quiet = fed.cli("status", "--plain", who="fed").output  # no network: fed's clone does not know yet
    assert "new commit" not in quiet
    fetched = fed.cli("status", "--plain", "--fetch", who="fed").output
    assert "behind:  origin has 1 new commit: pbem pull" in fetched
    assert "you (fed) owe: your clone is behind: origin has 1 new commit\n  $ pbem pull" in fetched
    git(fed.game, "remote", "add", "other", str(fed.shared))
    git(fed.game, "config", "branch.main.remote", "other")
    never = fed.cli("status", "--plain", who="fed").output
    assert ("behind:  other was never fetched into this clone and may hold more: pbem pull (or pbem status "
            "--fetch)") in never
    assert "you (fed) owe: your clone may be behind: other was never fetched" in never


def test_the_commands_that_act_on_the_shared_game_say_when_the_clone_is_behind(demos: DemoGames, tmp_path: Path) -> None:
    """Before: `pbem agree`, `pbem sign` and `pbem resign` committed on a clone that knew it was behind and said
    nothing, so the player took what they printed for the game that landed."""
    folder = demo("tactical-duel", demos)
    fed = clone_at(folder, commit_of(folder, "fed: closing"), tmp_path / "fed")
    kli = fed.second("kli")
    assert kli.cli("yield", who="kli").exit_code == 0
    proposed = kli.cli("agree", "amend", "--deadline", "96h", who="kli").output
    found = re.search(r"proposed (kli-\d{4}) \(amend\)", proposed)
    assert found is not None and "behind:" not in proposed, proposed
    assert kli.pbem("push", who="kli").returncode == 0
    assert fed.pbem("pull", who="fed").returncode == 0
    again = kli.cli("agree", "amend", "--deadline", "72h", who="kli").output
    assert "behind:" not in again and kli.pbem("push", who="kli").returncode == 0
    git(fed.game, "fetch", "-q")
    said = "behind: origin has 1 new commit and you have 1 unpublished: pbem push (it replays yours on top)\n"
    signed = fed.cli("sign", found.group(1), who="fed")
    assert signed.exit_code == 0 and said in signed.output, signed.output
    resigned = fed.cli("resign", "--note", "moving house", who="fed")
    assert resigned.exit_code == 0 and said.replace("1 unpublished", "2 unpublished") in resigned.output, (
        resigned.output)
    stale = kli.cli("agree", "amend", "--deadline", "48h", who="kli")  # kli is up to date: nothing to say
    assert stale.exit_code == 0 and "behind:" not in stale.output


def test_every_command_that_commits_says_when_the_clone_is_behind(demos: DemoGames, tmp_path: Path) -> None:
    """Before: press, whispers and the relationship commands committed on a clone that knew it was behind and said
    nothing. Now every command that commits says it last (cli/options.run), and one that commits nothing does not."""
    folder = demo("dow", demos)
    england = clone_at(folder, commit_of(folder, "austria: orders for S1901M sealed"), tmp_path / "england")
    france = england.second("france")
    assert france.cli("say", "bonjour", who="france").exit_code == 0
    assert france.pbem("push", who="france").returncode == 0
    git(england.game, "fetch", "-q")
    said = "behind: origin has 1 new commit and you have {} unpublished: pbem push (it replays yours on top)"
    for n, args in enumerate([("say", "hello all"), ("whisper", "france", "a quiet word"),
                              ("declare", "france", "FRIENDLY")], start=1):
        done = england.cli(*args, who="england")
        assert done.exit_code == 0, done.output
        assert done.output.rstrip("\n").endswith(said.format(n)), (args, done.output)
    (tmp_path / "plan.yaml").write_text("{plan: north}\n")
    sealed = england.cli("seal", "note", str(tmp_path / "plan.yaml"), who="england")  # writes a file, commits nothing
    assert "behind:" not in sealed.output, sealed.output


def test_start_refuses_to_propose_on_a_clone_behind_its_remote(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    for name in ("alice", "bob"):
        box.new_key(name)
    alice = Table(tmp_path)
    assert alice.pbem("init", str(alice.repo_dir), "--id", "duel-1", who="fed", cwd=tmp_path).returncode == 0
    assert alice.pbem("join", "--as", "fed", who="fed").returncode == 0
    subprocess.run(["git", "clone", "-q", "--bare", str(alice.repo_dir), str(tmp_path / "shared.git")], check=True)
    alice.git("remote", "add", "origin", tmp_path / "shared.git")
    alice.git("fetch", "-q", "origin")
    alice.git("branch", "-q", "-u", "origin/main")
    bob_dir = tmp_path / "bob"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "shared.git"), str(bob_dir)], check=True)
    assert alice.pbem("join", "--as", "kli", who="kli", cwd=bob_dir).returncode == 0
    assert alice.pbem("start", "--first", "kli", who="kli", cwd=bob_dir).returncode == 0
    assert alice.pbem("push", who="kli", cwd=bob_dir).returncode == 0
    alice.git("fetch", "-q", "origin")  # alice's clone now knows that origin moved, and has not pulled
    refused = alice.pbem("start", "--first", "fed", who="fed")
    assert refused.returncode == 1 and "[setup.behind]" in refused.stderr, refused.stderr
    assert "your clone is behind origin/main by 2 commit(s)" in refused.stderr
    assert alice.pbem("pull", who="fed").returncode == 0
    signed = alice.pbem("start", "--first", "kli", who="fed")
    assert signed.returncode == 0 and "signed start agreement kli-0001" in signed.stdout, signed.stderr


# --- the starter files ----------------------------------------------------------------------------------------

def test_start_and_pull_write_the_starter_files_of_the_turn_one_holds(tmp_path: Path) -> None:
    """Before: after the start neither players/ nor report/ existed, though the README says "edit
    players/fed.yaml"."""
    box = Sandbox(tmp_path)
    for name in ("alice", "bob"):
        box.new_key(name)
    fed = Table(tmp_path)
    assert fed.pbem("init", str(fed.repo_dir), "--id", "duel-1", who="fed", cwd=tmp_path).returncode == 0
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(tmp_path / "shared.git")], check=True)
    fed.git("remote", "add", "origin", tmp_path / "shared.git")
    for who in ("fed", "kli"):
        assert fed.pbem("join", "--as", who, who=who).returncode == 0
    assert fed.pbem("start", "--first", "kli", who="fed").returncode == 0
    assert fed.pbem("sign", "fed-0001", who="kli").returncode == 0
    started = fed.pbem("start", "--first", "kli", who="fed")
    assert started.stdout.strip().endswith("started: kli has control"), started.stdout  # kli's turn, not fed's
    assert not (fed.repo_dir / "players").exists()
    fed.git("push", "-q", "-u", "origin", "main")
    kli_dir = tmp_path / "kli"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "shared.git"), str(kli_dir)], check=True)
    pulled = fed.pbem("pull", who="kli", cwd=kli_dir)
    assert pulled.returncode == 0, pulled.stderr
    assert pulled.stdout.splitlines()[1:] == [
        f"wrote {p} for your turn (with comments: edit it, then `pbem check && pbem yield`)"
        for p in ("players/kli.yaml", "report/turn-01.yaml")]
    starter = (kli_dir / "players" / "kli.yaml").read_text()
    assert starter.endswith("through: null\nbreaks: []\n") and "# through: the last game time" in starter
    assert (kli_dir / "report" / "turn-01.yaml").read_text().startswith("# report/turn-01.yaml: the entries")
    checked = fed.pbem("check", who="kli", cwd=kli_dir)  # the starters change nothing: orders still to give
    assert "[progress.none]" in checked.stdout + checked.stderr
    (kli_dir / "players" / "kli.yaml").write_text(starter.replace("through: null", 'through: "1.8.damage"'))
    yielded = fed.pbem("yield", "-m", "first orders", who="kli", cwd=kli_dir)
    assert yielded.returncode == 0, yielded.stdout + yielded.stderr
    assert fed.pbem("verify", cwd=kli_dir).returncode == 0
    assert "wrote" not in fed.pbem("pull", who="kli", cwd=kli_dir).stdout  # committed now: never written again
