"""Press from every power at the same moment (DESIGN §2 press/<author>.yaml, §4.9, §7.2).

Each power posts in a file of its own, so powers posting at once never write the same path; `pbem push` alone
lands every message (rebasing one's own commit onto the tip that moved), the hub's pre-receive hook accepts each
push, and the messages are recognised in the order their commits landed. Every player has his own clone of one
hooked bare hub and runs the real commands (typer's runner in-process, the installed `pbem` for the hook).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitutil import clean_env
from pbem.services.dow import seat as dow_seat
from pbem.store.repo import GameRepo
from pbem.verify.history import verify_history
from test_dow_flow import Dow, new_dow


def hub_for(dow: Dow, root: Path) -> Path:
    """A bare hub with pbem's pre-receive hook (installed through the CLI), holding the game on `main`."""
    hub = root / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True,
                   env=clean_env(dow.root / "home"))
    dow.ok("hook", "install", str(hub))
    git(dow, "remote", "add", "origin", str(hub))
    done = git(dow, "push", "origin", "main")
    assert "refs/heads/main: ok" in done.stderr, done.stderr
    return hub


def git(dow: Dow, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=dow.repo_dir, env=clean_env(dow.root / "home"), capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done


def clone_for(dow: Dow, hub: Path, power: str) -> Dow:
    """A power's own machine: a clone of the hub, the keys folder shared, a HOME of its own."""
    mine = Dow(dow.root.parent / power)
    (mine.root / "home").mkdir(parents=True)
    (mine.root / "keys").symlink_to(dow.root / "keys")
    subprocess.run(["git", "clone", "-q", str(hub), str(mine.repo_dir)], check=True,
                   env=clean_env(mine.root / "home"), capture_output=True)
    return mine


@pytest.fixture(scope="module")
def base_hub(tmp_path_factory: pytest.TempPathFactory) -> tuple[Dow, Path]:
    root = tmp_path_factory.mktemp("press")
    dow = new_dow(root / "founder")
    return dow, hub_for(dow, root)


def recognised(dow: Dow) -> list[tuple[str, Any]]:
    """(author, message) of the press sent during the phase open now, in recognition order, as verified."""
    head = verify_history(GameRepo.open(dow.repo_dir)).last
    assert head is not None and head.status is not None
    return [(m.by, m.body.get("say") or m.body.get("propose") or m.body.get("accept") or m.body.get("declare"))
            for m in head.game.inputs.press.get(head.status.firm, ())]


def test_four_powers_post_press_at_the_same_moment_and_pbem_push_lands_all_of_them(
        base_hub: tuple[Dow, Path]) -> None:
    """Issue: 3 of 4 simultaneous messages failed (all appended to one file). Now each power writes its own file:
    four clones of the same tip each commit a message, then each runs `pbem push` alone; all four land through
    the hook, the hub verifies, and the recognition order is the order the commits landed in."""
    dow, hub = base_hub
    posts = [("england", ("say", "England seeks friends.")), ("france", ("propose", "england", "ALLIED")),
             ("germany", ("declare", "russia", "HOSTILE")), ("austria", ("say", "Vienna waits."))]
    clones = {power: clone_for(dow, hub, power) for power, _ in posts}
    tip = clones["england"].head()
    for power, args in posts:  # the same moment: every commit is made on the same tip, before any push
        clones[power].ok(*args, who=power)
        assert GameRepo.open(clones[power].repo_dir).parents(clones[power].head()) == [tip]
    for i, (power, _) in enumerate(posts):
        done = clones[power].cli("push", who=power)
        assert done.exit_code == 0, done.output
        assert ("rebased and re-signed 1 commit" in done.output) == (i > 0), done.output
    last = clones["austria"]
    assert [by for by, _ in recognised(last)] == ["england", "france", "germany", "austria"]
    for power, _ in posts:
        assert last.data(dow_seat.press_file(power))["messages"][0]["by"] == power
    assert last.pbem("verify", cwd=hub).returncode == 0  # the hub itself verifies
    assert verify_history(GameRepo.open(hub)).findings() == []


def test_only_a_seat_posts_and_only_in_its_own_file() -> None:
    """DESIGN §2, the rule itself (protocol.press.press_findings): a press file of no seat is no game file; a
    seat's file is written by that seat only; the dice escrow, which may act out of turn, holds no seat and posts
    nothing; press/global.yaml of older games takes any seat's message in its own name."""
    from pbem.protocol.model import Message, PressFile
    from pbem.protocol.press import press_findings

    def one(path: str, by: str) -> dict[str, PressFile]:
        return {path: PressFile((Message(by, "S1901P", {"by": by, "at": "S1901P", "say": "hi"}, path, 2),))}

    seats = ("england", "france")

    def rules(path: str, by: str, committer: str) -> list[str]:
        return [f.rule for f in press_findings({}, one(path, by), committer, "S1901P", seats)]

    assert rules("press/france.yaml", "france", "france") == []
    assert rules("press/global.yaml", "england", "england") == []
    assert rules("press/global.yaml", "england", "france") == ["press.foreign"]
    assert rules("press/france.yaml", "france", "england") == ["ownership.foreign-press"]
    assert rules("press/france.yaml", "escrow", "escrow") == ["ownership.foreign-press"]
    assert rules("press/a.yaml", "france", "france") == ["tree.unexpected-path"]


def test_a_phase_s_press_is_recognised_once_however_many_commits_post_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear recognition (press.recognise_all): recognising a phase's messages again with more appended, as the
    verifier does at every press commit, recognises only the new ones, and gives what one message at a time
    gives, refusals included."""
    from pbem.protocol.model import Message
    from pbem.rulesets.dow import DowRuleset, press
    from pbem.rulesets.dow.state import POWERS

    rules = DowRuleset()
    start = rules.initial_state({"map": "standard"}, POWERS)
    bodies = [{"by": "france", "say": "hi"}, {"by": "france", "propose": {"to": "germany", "state": "ALLIED"}},
              {"by": "germany", "accept": {"from": "france", "state": "FRIENDLY"}},  # refused: not the proposal
              {"by": "germany", "accept": {"from": "france", "state": "ALLIED"}}]
    messages = [Message(b["by"], None, b, f"press/{b['by']}.yaml", i + 2) for i, b in enumerate(bodies)]
    one_at_a_time, refusals = start, []
    for m in messages:
        one_at_a_time, refusal = press.recognise(one_at_a_time, m.body, m.by)
        refusals.append(refusal)
    seen: list[str] = []
    real = press.recognise
    monkeypatch.setattr(press, "recognise", lambda state, body, by: (seen.append(by), real(state, body, by))[1])
    for count in range(1, len(messages) + 1):
        after, refused = rules.recognise_all(start, messages[:count])
    assert len(seen) == len(messages)  # each recognised once over the four calls
    assert after == one_at_a_time and list(refused) == refusals and refused[2] is not None
