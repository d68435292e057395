"""A power replaces his sealed set while the last power seals (DESIGN §4.7, §4.9; docs/dow.md "Replacing a sealed
set"), each in his own clone of one hooked hub, through `pbem push`.

The rules give exactly one outcome: the replacement lands while another power's seal is still owed, and the
phase counts it; once the last seal has landed the sets stand, so a replacement replayed after it is not sent:
`pbem push` says so in one line (exit 1), keeps it on a branch, puts the clone back at the shared game, and the
set sealed before stands and is revealed as usual. Either way the hub verifies and the phase resolves.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pbem.services.dow import chronicle as dow_chronicle, orders as dow_orders, press as dow_press
from test_dow_press_race import firm, push_at_once
from test_sync import POWERS, Seat, clone, copy_seats, dow_game, dow_keys, hub_for, hub_head, hub_verifies

FIRST, SECOND = ["A PAR - BUR"], ["A PAR - PIC"]


def _hub(root: Path) -> tuple[dict[str, Seat], Path]:
    """S1901M on a hooked hub: every power but turkey sealed (france: A PAR - BUR, france-0001); austria's,
    england's, france's and turkey's clones up to date."""
    keys = dow_keys(root)
    founder = Seat(root / "austria", keys["austria"])
    dow_game(founder, "dow-reseal-race", keys)
    for power in POWERS[:-1]:
        orders = FIRST if power == "france" else []
        dow_orders.seal_orders(founder.ws(), keys[power], json.dumps({"orders": orders}).encode(), "o")
    hub = hub_for(founder, root)
    return {"austria": founder, **{p: clone(hub, root / p, keys[p]) for p in ("england", "france", "turkey")}}, hub


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Seat], Path]:
    return _hub(tmp_path_factory.mktemp("reseal-race"))


@pytest.fixture
def seats(base: tuple[dict[str, Seat], Path], tmp_path: Path) -> tuple[dict[str, Seat], Path]:
    return copy_seats(*base, tmp_path / "race")


def seal_at_the_same_tip(france: Seat, turkey: Seat) -> None:
    """France seals A PAR - PIC to replace his set (turkey's seal is still owed in his clone); turkey seals the
    phase's last set. Both commits sit on the same tip, unpublished."""
    tip = france.head()
    again = dow_orders.seal_orders(france.ws(), france.me, json.dumps({"orders": SECOND}).encode(), "o")
    assert (again.secret, again.replaced) == ("france-0002", "france-0001")
    dow_orders.seal_orders(turkey.ws(), turkey.me, json.dumps({"orders": []}).encode(), "o")
    assert france.ws().repo.parents(france.head()) == [tip] == turkey.ws().repo.parents(turkey.head())


def play_out(clones: dict[str, Seat], hub: Path) -> str:
    """France reveals in his own clone (`pbem orders --reveal`: nothing is stuck there), then austria's clone for
    those still owing; returns what `pbem results S1901M` tells."""
    france, founder = clones["france"], clones["austria"]
    france.pull()
    done = france.pbem("orders", "--reveal")
    assert done.returncode == 0, done.stdout + done.stderr
    assert france.push().code == 0
    founder.pull()
    keys = dow_keys(hub.parent)
    head = founder.ws().head()
    assert head is not None and head.status is not None
    for power in [b.player for b in head.status.pending if b.kind == "secret"]:
        dow_orders.reveal_orders(founder.ws(), keys[power])
    assert founder.push().code == 0
    assert firm(founder) != "S1901M"
    return "\n".join(dow_chronicle.results(founder.ws(), "S1901M")[0].lines())


def refused_late(france: Seat, said: str, mine: str, hub: Path, racing: bool = False) -> None:
    """The replacement replayed after the last seal: one line, the branch it is kept on, the clone back at the hub
    (`racing`: at the hub as it was then; a push racing his, england's press, may have landed after it)."""
    assert "not sent: your orders sealed again for S1901M (france-0002, replacing france-0001)" in said, said
    assert "came after the last seal" in said and "secret.late-replace" in said, said
    assert "(france-0001) stands as you sealed it" in said and f"pbem-saved-{mine[:10]}" in said, said
    assert france.git("rev-parse", f"pbem-saved-{mine[:10]}").stdout.strip() == mine
    assert france.git("status", "--porcelain").stdout == ""
    if not racing:
        assert france.head() == hub_head(hub)
        return
    behind = subprocess.run(["git", "-C", str(hub), "merge-base", "--is-ancestor", france.head(), hub_head(hub)])
    assert behind.returncode == 0, (france.head(), hub_head(hub))


def test_a_replacement_pushed_after_the_last_seal_is_not_sent_and_the_first_set_stands(
        seats: tuple[dict[str, Seat], Path], tmp_path: Path) -> None:
    """Turkey's last seal lands, then england's reveal; france's replacement, made before he saw either, is not
    sent, and his first set is revealed and resolved."""
    clones, hub = seats
    france, turkey = clones["france"], clones["turkey"]
    seal_at_the_same_tip(france, turkey)
    mine = france.head()
    assert turkey.push().code == 0
    england = clones["england"]  # the reveals begin
    england.pull()
    dow_orders.reveal_orders(england.ws(), england.me)
    assert england.push().code == 0
    done = france.pbem("push")
    assert done.returncode == 1, done.stdout + done.stderr
    refused_late(france, done.stdout + done.stderr, mine, hub)
    results = play_out(clones, hub)
    assert "A PAR - BUR" in results and "A PAR - PIC" not in results, results
    hub_verifies(hub, tmp_path)


def test_a_replacement_and_the_last_seal_pushed_at_the_same_moment_have_one_outcome(
        seats: tuple[dict[str, Seat], Path], tmp_path: Path) -> None:
    """The race itself, with the real `pbem push` in three processes: turkey's seal and england's press (sent
    during the phase, which the last seal does not close) always land; france's replacement lands (and counts)
    when it wins, and is not sent (the first set stands) when it loses."""
    clones, hub = seats
    france, turkey = clones["france"], clones["turkey"]
    seal_at_the_same_tip(france, turkey)
    mine = france.head()
    england = clones["england"]
    dow_press.post(england.ws(), england.me, {"say": "Sealed and waiting."})
    done = push_at_once({"france": france, "turkey": turkey, "england": england})
    assert done["turkey"][0] == 0 and done["england"][0] == 0, done
    code, said = done["france"]
    assert code in (0, 1), said
    if code == 1:
        refused_late(france, said, mine, hub, racing=True)
    results = play_out(clones, hub)
    counted, dropped = (SECOND, FIRST) if code == 0 else (FIRST, SECOND)
    assert counted[0] in results and dropped[0] not in results, (code, said, results)
    hub_verifies(hub, tmp_path)
