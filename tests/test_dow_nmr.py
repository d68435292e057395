"""An nmr holds in Diplomacy (DESIGN §4.8, docs/dow.md "Missed orders and the nmr"): the phase it settles
resolves with the absent power's defaults, the other powers' reveals land in any order, the absent power owes the
next phase's orders as usual (from the nmr's own commit on), `pbem agreements` says what it did, and `pbem
results` and `pbem log` tell every phase, also after a resignation.

The seven-clone test pushes through `pbem push` into a bare hub whose pre-receive hook runs pbem, as
tests/test_sync.py does; the hook's clock judges the nmr, so the game is played eight days in the past first.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from unittest import mock

import pytest

from test_hook import age_record
from test_sync import POWERS, Seat, clone, dow_game, dow_keys, hub_for, hub_verifies
from pbem.services import agreements
from pbem.services.dow import chronicle as dow_chronicle, orders as dow_orders, press as dow_press
from pbem.services.workspace import Identity

EMPTY = json.dumps({"orders": []}).encode()


@pytest.fixture(scope="module")
def base_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once (test_sync.dow_game, in austria's repository): S1901M is open, every power owes orders."""
    root = tmp_path_factory.mktemp("dow-nmr")
    keys = dow_keys(root)
    dow_game(Seat(root / "austria", keys["austria"]), "dow-nmr", keys)
    return root


@pytest.fixture
def game(base_game: Path, tmp_path: Path) -> tuple[Seat, dict[str, Identity]]:
    """A private copy of `base_game`: austria's clone and every power's key."""
    root = tmp_path / "dow"
    shutil.copytree(base_game, root, symlinks=True)
    keys = dow_keys(root)  # the same keys (fixed seeds), read from the copy
    return Seat(root / "austria", keys["austria"]), keys


def owed(seat: Seat) -> list[tuple[str, str, str]]:
    head = seat.ws().head()
    assert head is not None and head.status is not None
    return [(b.player, b.kind, b.at or "") for b in head.status.pending]


def nmr(seat: Seat, keys: dict[str, Identity], absent: str) -> str:
    """Every other power signs an nmr against `absent` in `seat`'s clone; returns its id."""
    signers = [p for p in POWERS if p != absent]
    aid = agreements.agree(seat.ws(), keys[signers[0]], "nmr", player=absent).agreement
    for power in signers[1:]:
        agreements.sign(seat.ws(), keys[power], aid)
    return aid


def test_nmrs_in_a_row_each_settle_their_phase_and_the_second_missed_movement_is_civil_disorder(
        game: tuple[Seat, dict[str, Identity]]) -> None:
    """Turkey never comes: an nmr in S1901M, another in F1901M. Each settles its phase only: from the nmr's own
    commit on, the others owe their reveals and Turkey owes nothing more there; once they reveal, the phase
    resolves with Turkey's defaults. After the first Turkey owes the next phase's orders like everyone (he is not
    left out); the second missed movement phase in a row puts him into civil disorder (setup
    civil_disorder_after, default 2), so W1901A and S1902M owe him nothing. `pbem agreements` says what each nmr
    settled; `pbem results` tells every phase, with Turkey's missed orders."""
    seat, keys = game
    others = [p for p in POWERS if p != "turkey"]
    ids = []
    for phase in ("S1901M", "F1901M"):
        while seat.ws().head().status.firm != phase:  # type: ignore[union-attr]
            for power, kind, _ in owed(seat):
                assert kind == "sealed"
                dow_orders.seal_orders(seat.ws(), keys[power], EMPTY, "o")
            for power, kind, _ in owed(seat):
                dow_orders.reveal_orders(seat.ws(), keys[power])
        assert ("turkey", "sealed", phase) in owed(seat)
        for power in others:
            dow_orders.seal_orders(seat.ws(), keys[power], EMPTY, "o")
        assert owed(seat) == [("turkey", "sealed", phase)]
        ids.append(nmr(seat, keys, "turkey"))
        assert owed(seat) == [(p, "secret", phase) for p in others], phase
        for i, power in enumerate(reversed(others)):
            dow_orders.reveal_orders(seat.ws(), keys[power])
            if i < len(others) - 1:
                assert "turkey" not in {p for p, _, _ in owed(seat)}, (phase, power, owed(seat))
        firm = seat.ws().head().status.firm  # type: ignore[union-attr]
        assert firm != phase
        if phase == "S1901M":
            assert ("turkey", "sealed", firm) in owed(seat), owed(seat)
        else:
            assert "turkey" not in {p for p, _, _ in owed(seat)}, owed(seat)
            assert "civil disorder: turkey" in seat.pbem("relations").stdout
    head = seat.ws().head()
    assert head is not None
    listing = agreements.listing(head.game, head.nmrs)
    for aid, phase in zip(ids, ("S1901M", "F1901M")):
        line = next(line for line in listing if line.startswith(aid))
        assert f"in effect: turkey's orders for {phase} settled by the engine's defaults" in line, line
    told = {r.phase: r for r in dow_chronicle.results(seat.ws())}
    for phase in ("S1901M", "F1901M"):
        lines = told[phase].lines()
        assert any("missed   turkey" in line for line in lines), lines
    assert any("CIVIL DISORDER turkey" in line for line in told["F1901M"].lines())
    done = seat.pbem("verify")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_nmr_commit_itself_owes_the_absent_power_the_next_phase(
        game: tuple[Seat, dict[str, Identity]]) -> None:
    """Turkey sealed and withholds his reveal, the six others revealed: the nmr's last signature resolves the
    phase in its own commit (Turkey's units hold), and that very commit owes Turkey the next phase's orders."""
    seat, keys = game
    for power in POWERS:
        dow_orders.seal_orders(seat.ws(), keys[power], EMPTY, "o")
    for power in POWERS[:-1]:
        dow_orders.reveal_orders(seat.ws(), keys[power])
    assert owed(seat) == [("turkey", "secret", "S1901M")]
    nmr(seat, keys, "turkey")
    head = seat.ws().head()
    assert head is not None and head.status is not None and head.status.firm == "F1901M"
    assert ("turkey", "sealed", "F1901M") in owed(seat), owed(seat)


def test_results_and_log_tell_every_phase_after_a_resignation(
        game: tuple[Seat, dict[str, Identity]]) -> None:
    """Italy resigns in S1901M (civil disorder at once): the phases after it are still told by `pbem results`
    (Italy owes nothing there), and `pbem log` shows every phase's orders."""
    seat, keys = game
    agreements.agree(seat.ws(), keys["italy"], "resign")
    orders = {"france": ["A PAR - BUR"], "england": ["F LON - NTH"]}
    for _ in range(3):
        for power, kind, _at in owed(seat):
            body = json.dumps({"orders": orders.get(power, []) if seat.ws().head().status.firm == "S1901M"
                               else []}).encode()  # type: ignore[union-attr]
            dow_orders.seal_orders(seat.ws(), keys[power], body, "o")
        for power, _kind, _at in owed(seat):
            dow_orders.reveal_orders(seat.ws(), keys[power])
    firm = seat.ws().head().status.firm  # type: ignore[union-attr]
    assert firm == "F1902M", firm
    told = [r.phase for r in dow_chronicle.results(seat.ws())]
    assert told == ["S1901P", "S1901M", "S1901R", "F1901M", "F1901R", "W1901A", "S1902M", "S1902R"], told
    done = seat.pbem("results", "F1901M")
    assert done.returncode == 0 and "F1901M: sealed by" in done.stdout, done.stdout + done.stderr
    log = seat.pbem("log")
    assert log.returncode == 0, log.stderr
    assert "france   A PAR - BUR" in log.stdout and "england  F LON - NTH" in log.stdout, log.stdout



def test_seven_clones_push_at_once_after_an_nmr_and_every_reveal_lands(tmp_path: Path) -> None:
    """The game is played eight days ago (the default deadline is 7d): six powers sealed S1901M, Turkey did not.
    Austria's clone carries the nmr (the others' signatures) to the hooked hub, whose clock finds Turkey overdue.
    Turkey's clone posts press (he is back); then the six other clones push their reveals at once with `pbem
    push`. Every one lands, whatever the order; the phase resolved with Turkey's defaults; Turkey owes F1901M's orders with a
    deadline counted from that resolution; a fresh clone of the hub verifies."""
    keys = dow_keys(tmp_path)
    founder = Seat(tmp_path / "austria", keys["austria"])
    past = time.time() - 8 * 86400
    with mock.patch("pbem.store.repo.time.time", return_value=past):
        dow_game(founder, "dow-nmr-hub", keys)
        for power in POWERS[:-1]:
            dow_orders.seal_orders(founder.ws(), keys[power], EMPTY, "o")
    hub = hub_for(founder, tmp_path)
    age_record(hub, 8)  # eight days pass at the gate: its own record, not the commits' dates, is the clock
    nmr(founder, keys, "turkey")
    done = founder.pbem("push")
    assert done.returncode == 0, done.stdout + done.stderr
    seats = {"austria": founder, **{p: clone(hub, tmp_path / p, keys[p]) for p in POWERS[1:]}}
    # Turkey is back first: his press of S1901M lands before the reveals resolve the phase (press written for a
    # phase that closes while it waits to be pushed is refused on rebase: a race of its own, not this test's)
    dow_press.post(seats["turkey"].ws(), seats["turkey"].me, {"say": "Sorry, I was away."})
    back = seats["turkey"].pbem("push")
    assert back.returncode == 0, back.stdout + back.stderr
    for power, seat in seats.items():
        if power != "turkey":
            seat.pbem("pull")
            dow_orders.reveal_orders(seat.ws(), seat.me)
    env = {p: s for p, s in seats.items() if p != "turkey"}
    running = {p: subprocess.Popen([str(_pbem()), "push"], cwd=s.repo_dir, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, env=_env(s)) for p, s in env.items()}
    said = {p: r.communicate(timeout=300)[0] for p, r in running.items()}
    codes = {p: r.returncode for p, r in running.items()}
    assert all(code == 0 for code in codes.values()), {p: said[p] for p, code in codes.items() if code}
    hub_verifies(hub, tmp_path)
    last = clone(hub, tmp_path / "last", keys["austria"])
    head = last.ws().head()
    assert head is not None and head.status is not None
    assert head.status.firm == "F1901M", head.status.firm
    assert ("turkey", "sealed", "F1901M") in owed(last)
    assert "Sorry, I was away." in (last.repo_dir / "press" / "turkey.yaml").read_text()
    waits = last.pbem("status")
    assert waits.returncode == 0 and "overdue" not in waits.stdout, waits.stdout


def _pbem() -> Path:
    from conftest import PBEM

    return PBEM


def _env(seat: Seat) -> dict[str, str]:
    from gitutil import clean_env

    return clean_env(seat.home, {"PBEM_KEY": str(seat.me.path)})
