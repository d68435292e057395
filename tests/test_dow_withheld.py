"""Nothing gained by withholding (DESIGN §4.7 revised; docs/dow.md "A withheld set is opened without its owner").

Each power's sealed orders carry their key split among the other players (crypto/shares.py, Shamir's scheme over
pycryptodome, each share sealed to its recipient and committed). Once every power has sealed, the others publish
their shares (`pbem open POWER`); the nmr's last signature opens the withheld set with them: the owner's sealed
orders stand as if he had revealed, and the withholding counts as a missed phase. Too few shares: the set is lost
as before (units hold). The same cheats by plain git are in tests/test_attacks.py ("withheld sets").
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.crypto import shares
from pbem.errors import PbemError
from pbem.services import agreements
from pbem.services.dow import chronicle as dow_chronicle, openings as dow_openings
from pbem.services.dow import orders as dow_orders, seat as dow_seat
from test_sync import POWERS, Seat, dow_game, dow_keys


@settings(max_examples=40, deadline=None)
@given(key=st.binary(min_size=32, max_size=32), n=st.integers(min_value=1, max_value=8), data=st.data())
def test_any_threshold_of_shares_rebuilds_the_key_and_fewer_do_not(key: bytes, n: int, data: st.DataObject) -> None:
    names = [f"p{i}" for i in range(n)]
    t = shares.threshold_for(n)
    dealt = shares.split(key, names, t)
    chosen = data.draw(st.permutations(names))[:t]
    assert shares.combine([dealt[p] for p in chosen], n) == key
    if t > 1:
        assert shares.combine([dealt[p] for p in chosen[:t - 1]] + [(99, os.urandom(32))], n) != key
    assert shares.commitment("turkey-0001", names[0], dealt[names[0]][0], dealt[names[0]][1]) != \
        shares.commitment("turkey-0002", names[0], dealt[names[0]][0], dealt[names[0]][1])


def all_sealed_turkey_withholds(root: Path, turkey: list[str]) -> tuple[Seat, dict[str, object]]:
    """S1901M: every power sealed (Turkey: `turkey`), all but Turkey revealed; Turkey withholds."""
    keys = dow_keys(root)
    seat = Seat(root / "austria", keys["austria"])
    dow_game(seat, "dow-withheld", keys)
    for power in POWERS:
        body = {"orders": turkey if power == "turkey" else []}
        dow_orders.seal_orders(seat.ws(), keys[power], json.dumps(body).encode(), "o")
    for power in POWERS[:-1]:
        dow_orders.reveal_orders(seat.ws(), keys[power])
    return seat, keys  # type: ignore[return-value]


def nmr(seat: Seat, keys: dict[str, object]) -> None:
    aid = agreements.agree(seat.ws(), keys["austria"], "nmr", player="turkey").agreement  # type: ignore[arg-type]
    for power in POWERS[1:-1]:
        agreements.sign(seat.ws(), keys[power], aid)  # type: ignore[arg-type]


def test_a_withheld_set_is_opened_by_the_others_shares_and_stands(tmp_path: Path) -> None:
    """Turkey saw the six others' orders and withholds his own (A CON - BUL). Five of the six publish their
    shares (threshold: all others but one); the nmr opens his set: A CON - BUL is carried out as sealed, exactly as
    a reveal would have done, and `pbem results` says it was withheld and opened. The set records `withheld` and
    `opened`; Turkey's withholding counts as a missed movement phase."""
    seat, keys = all_sealed_turkey_withholds(tmp_path, ["A CON - BUL"])
    secret = seat.ws().head().game.secrets["turkey-0001"]  # type: ignore[union-attr]
    assert secret.raw["threshold"] == 5 and sorted(secret.raw["shares"]) == sorted(POWERS[:-1])
    for power in POWERS[1:-1]:  # Austria, who would rather see Turkey hold, publishes nothing
        dow_openings.open_share(seat.ws(), keys[power], "turkey")  # type: ignore[arg-type]
    nmr(seat, keys)
    head = seat.ws().head()
    assert head is not None and head.status is not None and head.status.firm == "F1901M"
    raw = head.game.secrets["turkey-0001"].raw
    assert raw["withheld"].startswith("austria-") and len(raw["opened"]) == 64
    lines = dow_chronicle.results(seat.ws(), "S1901M")[0].lines(press=False)
    assert "  orders   turkey   A CON - BUL" in lines, lines
    assert any(line.startswith("  WITHHELD turkey") for line in lines), lines
    state = dow_seat.current_state(head)
    assert "A BUL" in state.board.units_of("turkey") and dict(state.missed)["turkey"] == 1
    done = seat.pbem("verify")
    assert done.returncode == 0, done.stdout + done.stderr


def test_with_too_few_shares_the_withheld_set_is_lost_as_before(tmp_path: Path) -> None:
    """Only four shares of five needed: the nmr marks the set withheld and cannot open it; Turkey's units hold
    (the price of two absent powers: docs/dow.md)."""
    seat, keys = all_sealed_turkey_withholds(tmp_path, ["A CON - BUL"])
    for power in POWERS[2:-1]:
        dow_openings.open_share(seat.ws(), keys[power], "turkey")  # type: ignore[arg-type]
    nmr(seat, keys)
    head = seat.ws().head()
    assert head is not None
    raw = head.game.secrets["turkey-0001"].raw
    assert raw["withheld"] and "opened" not in raw
    assert "A CON" in dow_seat.current_state(head).board.units_of("turkey")


def test_a_share_is_published_only_once_every_power_has_sealed(tmp_path: Path) -> None:
    """Before every power has sealed, a share would let a coalition read a set while it still writes its own:
    pbem refuses (share.early) and writes nothing."""
    keys = dow_keys(tmp_path)
    seat = Seat(tmp_path / "austria", keys["austria"])
    dow_game(seat, "dow-early", keys)
    dow_orders.seal_orders(seat.ws(), keys["turkey"], json.dumps({"orders": ["A CON - BUL"]}).encode(), "o")
    before = seat.head()
    with pytest.raises(PbemError) as refused:
        dow_openings.open_share(seat.ws(), keys["russia"], "turkey")
    assert refused.value.finding.rule == "share.early"
    assert seat.head() == before
