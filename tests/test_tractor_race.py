"""A tractor auction played by two machines at the same moment (seed 000 §7 "similar to a tractor energy auction";
DESIGN §4.6 the action auction, §4.7 and §8 `pbem push`; docs/tactical.md "Tractor beams").

The game is games/tactical-systems on a bare server with the pre-receive hook; fed and kli each play from their
own clone. fed's CA bids 3 to hold the D7 at 1.1.fire, which meets kli's `{system: {name: tractor}}`: the fire
step's action auction asks kli. Then both act at once (threads released by one barrier): kli bids 4 back, and fed,
impatient, raises to 5 before he is asked. The auction asks one player at a time, so only one of the two can
land: kli's bid does; fed is told in one line who is asked and nothing in his clone changes, whether he used
`pbem yield` or committed by plain git and ran `pbem push` (the hook refuses the plain `git push` as well). Once
he pulls kli's bid he is asked, and his raise lands. kli passes, fed passes, the step resolves by the seed's rule
(the higher bid holds: CA 5 against D7 4), every commit verifies in a fresh clone, and the player in control moves
the game on. What may be done out of turn (an agreement proposed) lands beside the bid at the same moment, one
commit replayed by `pbem push` on top of the other.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import Table, _build
from test_dice_flow import sneak_as
from test_hook import clone_for, push as git_push, refused as hook_refused, serve, server_ref
from test_tactical_cli_bad_input import seal

BID = {"at": "1.1.fire", "unit": "CA", "do": {"tractor": {"target": "D7", "energy": 3}}}
BACK = {"at": "1.1.fire", "unit": "D7", "do": {"tractor": {"target": "CA", "energy": 4}}}
RAISE = {"at": "1.1.fire", "unit": "CA", "do": {"tractor": {"target": "D7", "energy": 5}}}


def asked(table: Table) -> list[tuple[str, str]]:
    return [(b["player"], b["kind"]) for b in table.data("status.yaml")["pending"]]


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def run(table: Table, *args: str, who: str) -> str:
    """`pbem ARGS` in this process (no interpreter start-up, where nothing runs at the same moment); it must
    succeed."""
    done = table.cli(*args, who=who)
    assert done.exit_code == 0, done.output
    return str(done.output)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once: fed's bid opened the auction, kli is asked; the game is on the hooked server, each player has
    his clone (fed: the table's own repository, kli: kli/game)."""
    fed = _build(tmp_path_factory.mktemp("tractor-race") / "fed", "tactical-systems", "tractor-race")
    fed.turn("fed", through="1.1.damage", breaks=[{"system": {"name": "tractor"}}],
             entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 4}}, BID])
    fed.turn("kli", through="1.32.final", breaks=[{"system": {"name": "tractor"}}],
             entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 0}}])
    seal(fed, "fed", {"turn": 1, "units": {"CA": {"speed": 4, "systems": 6}}})
    seal(fed, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "systems": 6}}})
    assert asked(fed) == [("kli", "auction")]
    server = serve(fed)
    clone_for(fed, server, "kli")
    return fed.root


@pytest.fixture
def race(base: Path, tmp_path: Path) -> tuple[Table, Table, Path]:
    root = tmp_path / "fed"
    shutil.copytree(base, root, symlinks=True)  # kli's keys link points into the base: read only
    server = root / "server.git"
    fed, kli = Table(root), Table(root / "kli")
    for table in (fed, kli):
        table.git("remote", "set-url", "origin", server)
    return fed, kli, server


def at_once(*moves: Callable[[], Any]) -> list[Any]:
    """Run the moves in threads released together by one barrier; their results, in order."""
    barrier = threading.Barrier(len(moves))
    results: list[Any] = [None] * len(moves)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = moves[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(moves))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return results


def kli_bids_back(kli: Table) -> Callable[[], tuple[Any, Any]]:
    kli.edit("kli", entries=[BACK])
    return lambda: (kli.pbem("yield", "-m", "4 against your 3", who="kli"), kli.pbem("push", who="kli"))


def retry_raise(fed: Table) -> None:
    """What fed does after the message: his edit set aside, kli's bid pulled, asked now: the raise again."""
    fed.git("checkout", "--", ".")
    assert fed.cli("pull", who="fed").exit_code == 0
    assert asked(fed) == [("fed", "auction")]
    fed.turn("fed", entries=[RAISE], note="raising to 5")
    run(fed, "push", who="fed")


def finish(fed: Table, kli: Table, server: Path, tmp_path: Path) -> None:
    """kli passes: the auction is over (fed, who raised last, has nothing new to answer and is not asked again)
    and the step resolves; the player in control moves on; a fresh clone verifies every commit and its log shows
    the hold."""
    assert kli.cli("pull", who="kli").exit_code == 0 and asked(kli) == [("kli", "auction")]
    kli.turn("kli", note="I pass")
    run(kli, "push", who="kli")
    assert fed.cli("pull", who="fed").exit_code == 0 and all(kind != "auction" for _, kind in asked(fed))
    status = fed.data("status.yaml")
    assert status["firm"] != "1.1.fire" and status["control"] == "fed", status  # resolved: fed's horizon reached
    fed.turn("fed", through="1.8.damage", note="on to 1.8")  # the player in control moves the game on
    run(fed, "push", who="fed")
    fresh = clone_for(fed, server, "fresh-" + tmp_path.name)
    assert fresh.head() == server_ref(server) == fed.head()
    run(fresh, "verify", who="fed")
    log = run(fresh, "log", who="fed")
    assert "1.1.fire CA tractor on D7: bids CA 5, D7 4: held" in log, log
    assert "auction round 1" in log and "auction round 2" not in log  # each bid woke the other in round 1


def test_two_bids_at_once_through_pbem_yield_and_push(race: tuple[Table, Table, Path], tmp_path: Path) -> None:
    """kli (asked) and fed (not asked) bid at the same moment, each with `pbem yield` and `pbem push` as a player
    does: kli's lands; fed's yield is one line naming the rule and who is asked, and his clone is unchanged; once
    he pulls, he is asked and his raise lands; the auction then plays out and the hold is decided."""
    fed, kli, server = race
    start = server_ref(server)
    fed.edit("fed", entries=[RAISE])
    before = fed.snapshot()
    (kli_yield, kli_push), (fed_yield, fed_push) = at_once(
        kli_bids_back(kli),
        lambda: (fed.pbem("yield", "-m", "raising to 5", who="fed"), None))
    ok(kli_yield)
    ok(kli_push)
    assert server_ref(server) == kli.head() != start
    assert fed_yield.returncode == 1 and fed_push is None, fed_yield.stdout + fed_yield.stderr
    line = fed_yield.stderr.splitlines()[0]
    assert "[signature.not-in-control]" in line and "kli" in line and "Traceback" not in fed_yield.stderr, line
    assert fed.snapshot() == before  # nothing changed: his edit is still only in his working tree
    retry_raise(fed)
    finish(fed, kli, server, tmp_path)


def test_a_raise_committed_by_plain_git_at_the_same_moment_is_refused_by_push_and_hook(
        race: tuple[Table, Table, Path], tmp_path: Path) -> None:
    """fed commits his raise out of turn by plain git (signed, a status written as pbem would) while kli bids back,
    and runs `pbem push`: kli's bid lands, fed's push is refused naming the rule, nothing of his reaches the
    server, and his branch is as he left it (a plain `git push` of it, tried first, is refused by the hook). fed
    resets to the server, and his raise lands once he is asked: the auction asks kli again."""
    fed, kli, server = race
    start = server_ref(server)
    fed.edit("fed", entries=[RAISE])
    sneaked = sneak_as(fed, "fed", "fed: raising to 5 before I am asked")
    hook_refused(git_push(fed), "signature.not-in-control")
    assert server_ref(server) == start
    (kli_yield, kli_push), fed_push = at_once(kli_bids_back(kli), lambda: fed.pbem("push", who="fed"))
    ok(kli_yield)
    ok(kli_push)
    assert server_ref(server) == kli.head() != start
    assert fed_push.returncode != 0, fed_push.stdout + fed_push.stderr
    said = fed_push.stdout + fed_push.stderr
    assert "signature.not-in-control" in said and "Traceback" not in said, said
    assert fed.head() == sneaked  # his branch is as he left it
    fed.git("fetch", "-q", "origin")
    fed.git("reset", "-q", "--hard", "origin/main")
    assert asked(fed) == [("fed", "auction")]
    fed.turn("fed", entries=[RAISE], note="raising to 5")
    run(fed, "push", who="fed")
    assert server_ref(server) == fed.head()
    assert kli.cli("pull", who="kli").exit_code == 0 and asked(kli) == [("kli", "auction")]  # his answer to give


def test_a_bid_and_an_agreement_at_the_same_moment_both_land_one_rebased(race: tuple[Table, Table, Path],
                                                                         tmp_path: Path) -> None:
    """What may be done out of turn lands beside the bid: while kli bids back, fed proposes an amend (a new
    deadline, signed by him alone so far). Both push at once; the later push is replayed by `pbem push` on top of
    the earlier (status.yaml computed again, signed again), so the server holds both, one the parent of the
    other; the history verifies, the auction asks fed (kli's bid stands), and kli still has the amend to sign."""
    fed, kli, server = race
    start = server_ref(server)
    (kli_yield, kli_push), (fed_agree, fed_push) = at_once(
        kli_bids_back(kli),
        lambda: (fed.pbem("agree", "amend", "--deadline", "96h", who="fed"), fed.pbem("push", who="fed")))
    for done in (kli_yield, kli_push, fed_agree, fed_push):
        ok(done)
    tip = server_ref(server)
    two = subprocess.run(["git", "rev-list", f"{start}..{tip}"], cwd=server, capture_output=True, text=True,
                         check=True).stdout.split()
    assert len(two) == 2  # one on top of the other, no merge
    fresh = clone_for(fed, server, "fresh")
    run(fresh, "verify", who="kli")
    assert asked(fresh)[0] == ("fed", "auction")
    assert "energy: 4" in fresh.read("report/turn-01.yaml")
    listed = run(fresh, "agreements", who="kli")
    assert "fed-0002" in listed and "kli" in listed, listed
