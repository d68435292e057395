"""A net under every command pbem suggests (DESIGN §8): at states of the three demo games and of a random honest
battle (tests/stuck_game.py), a player reads `pbem status`, `pbem check` and `pbem watch --once`; every command
they suggest must be a real pbem command line, one the player may run now, and the first thing `pbem status`
tells him to do must do what it says when he runs it (in a throwaway copy of his clone).

States are sampled, not walked whole (a few per game, each read by the player first in line and by one who
waits), so the net stays cheap; tests/demo_games.py plays each demo once per process.
"""

from __future__ import annotations

import random
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import PBEM, DemoGames
from demo_games import DEMOS, Clone, clone_at, commits, demo, git
from pbem.formats import yamlsafe

PER_GAME = 3  # states sampled from each demo's play (its start, its middle, late in it)
# placeholders the messages use for what only the player knows, and what the net writes for them
PLACEHOLDERS = {"ID": "x", "NOTE": "net", "CODE": "x", "PATH": "key", "BATCH": "x-0001", "FILE": "file.yaml"}
# a command is refused to the player it was suggested to when its output names one of these
NOT_MINE = ("[usage.", "not-in-control", "[signature.unknown-key]", "not-owed", "[setup.seat-taken]", "Traceback",
            "No such command", "No such option", "Missing argument", "Got unexpected extra")
OWN_FILES = ("orders.yaml", "allocation.yaml", "file.yaml")  # files only the player can write: parsed, not run


@dataclass(frozen=True)
class State:
    game: str
    folder: Path
    oid: str
    seats: tuple[str, ...]  # the player first in line, and one who waits


def _status_at(folder: Path, oid: str) -> Any:
    text = git(folder / "game", "show", f"{oid}:status.yaml")
    return yamlsafe.load(text.encode(), "status.yaml").data


def _sample(game: str, folder: Path) -> Iterator[State]:
    played = commits(folder)
    subjects = git(folder / "game", "log", "--reverse", "--format=%s").splitlines()
    first = next(i for i, s in enumerate(subjects) if s.startswith("start:"))
    span = played[first:-1]  # after the start, before the end (the end: tests/test_messages.py)
    for k in range(PER_GAME):
        oid = span[(len(span) - 1) * k // max(1, PER_GAME - 1)] if k else span[0]
        status = _status_at(folder, oid)
        players = [s["id"] for s in yamlsafe.load(git(folder / "game", "show", f"{oid}:game.yaml").encode(),
                                                  "game.yaml").data["players"]]
        ahead = status["pending"][0]["player"] if status["pending"] else status["control"]
        other = next(p for p in players if p != ahead)
        yield State(game, folder, oid, (ahead, other))


@pytest.fixture(scope="module")
def demos(demo_games: DemoGames) -> DemoGames:
    return demo_games


def suggested(text: str) -> list[str]:
    """The command lines a message suggests: `$ …` lines, and `pbem …` quoted in backticks."""
    out = [line.strip()[2:] for line in text.splitlines() if line.strip().startswith("$ ")]
    out += [m for m in re.findall(r"`(pbem [^`]+)`", text)]
    return out


def _words(line: str) -> list[list[str]]:
    """The pbem commands of a line (`a && b`), each as argv, placeholders filled in."""
    out = []
    for part in line.split("&&"):
        argv = [PLACEHOLDERS.get(word, word) for word in shlex.split(part.strip())]
        if argv and argv[0] == "pbem":
            out.append(argv[1:])
    return out


def parses(argv: list[str]) -> str | None:
    """None when `pbem ARGV` is a command line the CLI accepts (names, options and their values), else why not."""
    import typer.main

    from pbem.cli import app

    command: Any = typer.main.get_command(app)
    name, parent, args = "pbem", None, list(argv)
    try:
        while True:
            ctx = command.make_context(name, args, parent=parent)
            if not hasattr(command, "resolve_command"):
                return None
            rest = [*(getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", None) or []),
                    *ctx.args]
            if not rest:
                return None
            name, command, args = command.resolve_command(ctx, rest)
            parent = ctx
    except Exception as exc:  # the CLI's own usage errors: the message suggested something it refuses
        return f"{type(exc).__name__}: {exc}"


def _throwaway(clone: Clone, dest: Path) -> Clone:
    shutil.copytree(clone.root, dest, symlinks=True)
    copy = Clone(dest, clone.keys)
    git(copy.game, "remote", "set-url", "origin", str(copy.shared))
    return copy


def _run(clone: Clone, who: str, line: str) -> subprocess.CompletedProcess[str]:
    env = clone.env(who)
    env["PATH"] = f"{PBEM.parent}:{env['PATH']}"
    filled = " ".join(PLACEHOLDERS.get(w, w) for w in line.split(" "))
    return subprocess.run(["bash", "-c", filled], cwd=clone.game, env=env, capture_output=True, text=True,
                          check=False, timeout=300)


def _pending(clone: Clone) -> list[tuple[str, str, str]]:
    data = yamlsafe.load((clone.game / "status.yaml").read_bytes(), "status.yaml").data
    return [(b["player"], b["kind"], b["why"]) for b in data["pending"]]


def read_and_follow(clone: Clone, who: str, scratch: Path, follow: bool = True) -> list[str]:
    """What is wrong with what `who` is told at this state (empty: nothing). With `follow` (the player first in
    line), `pbem watch --once` is read too and the first thing status tells him is run."""
    problems: list[str] = []
    status = clone.cli("status", "--plain", who=who)
    check = clone.cli("check", who=who)
    said = {"status": status.output, "check": check.output}
    if follow:
        watched = _throwaway(clone, scratch / f"watch-{who}").pbem("watch", "--once", who=who)
        said["watch"] = watched.stdout + watched.stderr
        if "Traceback" in said["watch"]:
            problems.append(f"watch --once: {said['watch']}")
    for where, text in said.items():
        for line in suggested(text):
            for argv in _words(line):
                why = parses(argv)
                if why is not None:
                    problems.append(f"{where} suggests `{line}`: {why}")
    todo = [line.strip()[2:] for line in status.output.splitlines() if line.strip().startswith("$ ")]
    if not follow or not todo or any(own in todo[0] for own in OWN_FILES) or "--key" in todo[0]:
        return problems
    line = todo[0]
    copy = _throwaway(clone, scratch / f"run-{who}")
    before = [b for b in _pending(copy) if b[0] == who]
    done = _run(copy, who, line)
    out = done.stdout + done.stderr
    if done.returncode == 2 or any(mark in out for mark in NOT_MINE):
        problems.append(f"status told {who} `{line}`, which refuses him: {out.strip()}")
    elif line.startswith("pbem yield") or line.startswith("pbem escrow sign"):  # it settles what he owes
        if done.returncode != 0:
            problems.append(f"`{line}` failed for {who}: {out.strip()}")
        elif before and before[0] in _pending(copy) and before[0][1] in ("dice", "secret"):
            problems.append(f"`{line}` left {before[0]} owed by {who}")
    elif line.startswith("pbem check && pbem yield") and done.returncode not in (0, 1):
        problems.append(f"`{line}` failed for {who}: {out.strip()}")
    return problems


@pytest.mark.parametrize("game", DEMOS)
def test_every_suggested_command_is_real_and_the_first_does_what_it_says(game: str, demos: DemoGames,
                                                                         tmp_path: Path) -> None:
    folder = demo(game, demos)
    problems = []
    for i, state in enumerate(_sample(game, folder)):
        clone = clone_at(folder, state.oid, tmp_path / f"s{i}")
        for who in state.seats:
            problems += [f"{game} at {state.oid[:10]}, {who}: {p}"
                         for p in read_and_follow(clone, who, tmp_path / f"s{i}-x", follow=who == state.seats[0])]
    assert not problems, "\n".join(problems)


def test_the_states_of_a_random_honest_battle_suggest_real_commands(base_three: Path, tmp_path: Path) -> None:
    """A few states the stuck-game search reaches (tests/stuck_game.py), each committed as the judge accepted it,
    read as at the demos' states."""
    from conftest import Table, copy_table
    from stuck_game import Figures, Play, play_step

    from pbem.store.repo import GameRepo

    root = copy_table(Table(base_three), tmp_path / "battle").root  # the started game of three seats
    play = Play.open(root)
    made: list[tuple[str, dict[str, bytes]]] = []
    commit = play.commit

    def recorded(player: str, edit: Any, what: str, settle: bool = True) -> list[Any]:
        findings = commit(player, edit, what, settle)
        if not findings:
            made.append((player, dict(play.files)))
        return findings

    play.commit = recorded  # type: ignore[method-assign]
    rng = random.Random(24)
    while len(made) < 6 and not play.over:
        play_step(play, rng, Figures(), tmp_path)
    repo = GameRepo.open(root / "game")
    shared = tmp_path / "shared.git"
    problems: list[str] = []
    for n, (player, files) in enumerate(made):
        head = repo.head_oid()
        assert head is not None
        oid = repo.commit_tree(files, [head], f"{player}: move {n}", play.keys[player].signer,
                               ("Test Player", "player@example.org"))
        repo.update_branch_and_worktree(oid)
        if n % 2:
            continue  # every other state: the net stays cheap
        if shared.exists():
            shutil.rmtree(shared)
        git(tmp_path, "clone", "-q", "--bare", str(root / "game"), "shared.git")
        dest = tmp_path / f"c{n}"
        dest.mkdir()
        shutil.move(str(shared), str(dest / "shared.git"))
        (dest / "home").mkdir()
        git(dest, "clone", "-q", str(dest / "shared.git"), "game")
        clone = Clone(dest, root / "keys")
        status = yamlsafe.load(files["status.yaml"], "status.yaml").data
        ahead = status["pending"][0]["player"] if status["pending"] else status["control"]
        for who in dict.fromkeys([ahead, *(p for p in play.keys if p != ahead)][:2]):
            problems += [f"battle state {n}, {who}: {p}"
                         for p in read_and_follow(clone, who, tmp_path / f"c{n}-x", follow=who == ahead)]
    assert made and not problems, "\n".join(problems)


def test_the_net_catches_a_command_the_cli_refuses() -> None:
    """The net's own check: a misspelt command, an option that does not exist, a missing argument."""
    assert parses(["status", "--plain"]) is None and parses(["dice", "void", "fed-0003", "--reason", "x"]) is None
    assert parses(["seal", "allocation", "allocation.yaml"]) is None
    for wrong in (["statuss"], ["status", "--fetched"], ["dice", "void"], ["join"]):
        assert parses(wrong) is not None, wrong
    assert suggested("you owe: x\n  $ pbem pull && pbem status\nseal it: `pbem orders orders.yaml`") == [
        "pbem pull && pbem status", "pbem orders orders.yaml"]
