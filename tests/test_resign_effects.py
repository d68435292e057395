"""What a resignation does to the game (DESIGN §4.8): each ruleset's own effect, applied once at the firm point
where the resign agreement lands. Tactical: his units leave the map (status `resigned`, not destroyed) and the
others play on; Diplomacy: his power goes into civil disorder (no orders owed; its units hold)."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_dice_flow import cli, findings
from test_dow_flow import DIRECTOR, Dow, base_first_half, base_second_half, first_half, second_half  # noqa: F401
from test_errata import _melee

# ruleset -> (who resigns, what the table must show afterwards), checked by the tests below
TACTICAL = [("kli", "resigned"), ("rom", "resigned")]


@pytest.mark.parametrize("who,status", TACTICAL)
def test_a_tactical_resign_takes_his_units_off_the_map_and_the_others_play_on(tmp_path: Path, who: str,
                                                                             status: str) -> None:
    table = _melee(tmp_path / "melee")
    out = cli(table, "resign", "--note", "called away", who=who)
    assert "in effect" in out
    units = [line for line in cli(table, "log", who="fed").splitlines() if line.strip().startswith("id=")]
    gone = [line for line in units if f"owner={who} " in line]
    assert gone and all(f"status={status}" in line and "hex=None" in line for line in gone), units
    assert all("status=active" in line for line in units if line not in gone), units  # the others play on
    data = table.data("status.yaml")
    assert not data.get("over"), data
    assert all(b["player"] != who for b in data["pending"]), data["pending"]
    assert findings(table) == []


def test_a_diplomacy_resign_puts_the_power_into_civil_disorder(second_half: Dow) -> None:  # noqa: F811
    second_half.ok("resign", "--note", "called away", who="turkey")
    assert "civil disorder: turkey" in second_half.ok("relations")
    owed = {b["player"] for b in second_half.status()["pending"]}
    assert "turkey" not in owed and owed, owed
    assert second_half.pbem("verify").returncode == 0



def test_a_replacement_takes_a_resigned_power_out_of_civil_disorder(second_half: Dow) -> None:  # noqa: F811
    from pbem.crypto.keys import PrivateKey, public_path, write_keypair

    new = second_half.root / "newcomer_ed25519"
    write_keypair(new, PrivateKey.from_seed(bytes([0x7f]) * 32, "newcomer@dow.test"))
    second_half.ok("resign", who="turkey")
    second_half.ok("agree", "seat", "--seat", "turkey", "--new-key", str(public_path(new)), "--why", "replacement",
                   who="austria")
    for power in ("england", "france", "germany", "italy", "russia"):
        second_half.ok("sign", "austria-0002", who=power)
    assert "civil disorder" not in second_half.ok("relations")
    assert "turkey" in {b["player"] for b in second_half.status()["pending"]}
    assert second_half.pbem("verify").returncode == 0
