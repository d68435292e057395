"""Agreements completed by signatures landing at the same moment (DESIGN §4.8: an agreement takes effect in the
commit that adds its last required signature; §4.9: out-of-turn commits on the same state all land).

In the three-cornered melee an `amend` (a new deadline) and a `seat` (rom's key replaced) are proposed; the last
two signers sign on the same commit, each in his own clone, and run `pbem push` at the same moment (two threads
released by one barrier, each running the real `pbem push` against a bare hub whose pre-receive hook runs pbem).
Whichever lands second is rebased onto the first and becomes the last signature: its commit writes game.yaml as
agreed. Both land, game.yaml changes exactly once, `pbem agreements` says "in effect", a fresh clone of the hub
verifies, and the player in control moves on.
"""

from __future__ import annotations

import subprocess
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from pbem.formats import yamlsafe
from pbem.services import agreements, demo
from pbem.services.workspace import load_identity
from test_sync import Seat, copy_seats, hub_verifies, make_key, start_game, tactical

Seats = dict[str, Seat]


@pytest.fixture(scope="module")
def base_melee(tmp_path_factory: pytest.TempPathFactory) -> tuple[Seats, Path]:
    """Built once: the melee started on a hooked hub with fed in control at 1.0.alloc, every clone up to date."""
    root = tmp_path_factory.mktemp("agreements-hub")
    seats, hub = tactical(root, "tactical-melee", ("fed", "kli", "rom"))
    fed = seats["fed"]
    start_game(fed.ws(), "fed", fed.me, [seats["kli"].me, seats["rom"].me])
    assert fed.push().code == 0
    for seat in seats.values():
        seat.pull()
    return seats, hub


@pytest.fixture
def melee(base_melee: tuple[Seats, Path], tmp_path: Path) -> tuple[Seats, Path]:
    return copy_seats(*base_melee, tmp_path / "melee")


def at_once(seats: list[Seat]) -> list[subprocess.CompletedProcess[str]]:
    """Every seat runs `pbem push` in its own thread, all released at the same moment by one barrier."""
    barrier = threading.Barrier(len(seats))
    done: list[subprocess.CompletedProcess[str] | None] = [None] * len(seats)

    def run(i: int, seat: Seat) -> None:
        barrier.wait()
        done[i] = seat.pbem("push")

    threads = [threading.Thread(target=run, args=(i, seat)) for i, seat in enumerate(seats)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert all(d is not None for d in done), "a push did not return"
    return [d for d in done if d is not None]


def sign_at_once(seats: Seats, proposer: str, signers: tuple[str, str], aid: str) -> None:
    """`proposer` has pushed agreement `aid`; both `signers` pull, sign it on the same commit and push at once."""
    pushed = seats[proposer].push()
    assert pushed.code == 0, pushed.message
    for who in signers:
        seats[who].pull()
    assert seats[signers[0]].head() == seats[signers[1]].head()
    for who in signers:  # neither signature is the last one on the commit it was made on
        done = agreements.sign(seats[who].ws(), seats[who].me, aid)
        assert done.unsigned == tuple(w for w in signers if w != who), done
    pushed = at_once([seats[who] for who in signers])
    assert all(p.returncode == 0 for p in pushed), [p.stdout + p.stderr for p in pushed]
    assert sum("rebased" in p.stdout + p.stderr for p in pushed) == 1, [p.stdout + p.stderr for p in pushed]
    for seat in seats.values():
        seat.pull()


def game_yaml(seat: Seat) -> dict:
    return yamlsafe.load((seat.repo_dir / "game.yaml").read_bytes(), "game.yaml").data


def game_yaml_changes(seat: Seat, since: str) -> list[str]:
    """The subjects of the commits after `since` that changed game.yaml."""
    return seat.git("log", "--format=%s", f"{since}..HEAD", "--", "game.yaml").stdout.splitlines()


def in_effect(seat: Seat, aid: str) -> None:
    listed = seat.pbem("agreements")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    line = next(line for line in listed.stdout.splitlines() if line.startswith(aid))
    assert "signed by all, in effect" in line, listed.stdout


def fed_moves_on(seats: Seats, hub: Path, root: Path) -> None:
    """fed, in control at 1.0.alloc, gives his orders for turn 1 and pushes: the game goes on, and a fresh clone
    of the hub verifies every commit (the agreement's included)."""
    fed = seats["fed"]
    fed.pull()
    status = demo.play_turn(fed.ws(), fed.me, {"player": "fed", "through": "1.32.final", "note": "orders"}, 1)
    assert status.control != "fed", status
    pushed = fed.pbem("push")
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    hub_verifies(hub, root)


def test_an_amend_whose_last_two_signatures_land_at_once_changes_game_yaml_once(melee: tuple[Seats, Path],
                                                                                tmp_path: Path) -> None:
    seats, hub = melee
    fed = seats["fed"]
    before = fed.head()
    done = agreements.agree(fed.ws(), fed.me, "amend", changes={"deadline": "96h"})
    sign_at_once(seats, "fed", ("kli", "rom"), done.agreement)
    for seat in seats.values():
        assert game_yaml(seat)["deadline"] == "96h"
    changes = game_yaml_changes(fed, before)
    assert len(changes) == 1 and changes[0].endswith(f"signs {done.agreement} (takes effect: game.yaml as agreed)"), \
        changes
    in_effect(seats["rom"], done.agreement)
    fed_moves_on(seats, hub, tmp_path / "after-turn")


def test_a_seat_whose_last_two_signatures_land_at_once_gives_the_new_key_once(melee: tuple[Seats, Path],
                                                                              tmp_path: Path) -> None:
    """rom fears his key was copied and proposes a new one for his seat (why: lost-key); fed and kli, the
    signers, sign at the same moment. After that the new key plays rom's seat and the old one is refused."""
    seats, hub = melee
    rom = seats["rom"]
    new = make_key(tmp_path / "new-key", "rom2", 0x5A)
    before = rom.head()
    done = agreements.agree(rom.ws(), rom.me, "seat", seat="rom", new_key=str(new.path) + ".pub", why="lost-key")
    sign_at_once(seats, "rom", ("fed", "kli"), done.agreement)
    for seat in seats.values():
        keys = [p for p in game_yaml(seat)["players"] if p["id"] == "rom"]
        assert keys[0]["key"].split()[:2] == new.public.to_line().split()[:2], keys
    changes = game_yaml_changes(rom, before)
    assert len(changes) == 1 and changes[0].endswith(f"signs {done.agreement} (takes effect: game.yaml as agreed)"), \
        changes
    in_effect(seats["fed"], done.agreement)
    fed_moves_on(seats, hub, tmp_path / "after-turn")
    # the seat is the new key's: rom signs with it, and his old key is no longer anyone's
    rom_new = Seat(rom.root, replace(load_identity(str(new.path), new.path.parent), author=rom.me.author))
    rom_new.pull()
    other = agreements.agree(seats["kli"].ws(), seats["kli"].me, "amend", changes={"deadline": "72h"})
    assert seats["kli"].push().code == 0
    rom_new.pull()
    signed = agreements.sign(rom_new.ws(), rom_new.me, other.agreement)
    assert "rom" not in signed.unsigned
    with pytest.raises(Exception) as old:
        agreements.sign(rom.ws(), rom.me, other.agreement)
    assert getattr(old.value, "finding").rule == "signature.unknown-key"
