"""A power taken over by a new player keeps the old player's record apart (docs/dow.md "A power taken over"):
his warnings, his missed movement phases and the void orders a director could cite stay his, shown in `pbem
relations` and `pbem status`; the new player starts clean (seed 001: "a one time warning for an honest mistake,
and then sent into CD for the second offense" is each player's own). Through the services and the CLI on the
seven-power game of tests/test_dow_flow.py.
"""

from __future__ import annotations

import shutil

from pbem.crypto.keys import PrivateKey, public_path, write_keypair
from pbem.services import agreements as agreeing
from test_dow_flow import DIRECTOR, POWERS, Dow, base_first_half, base_second_half, second_half  # noqa: F401


def take_over(dow: Dow, power: str) -> None:
    """`power`'s player resigns; every other active power gives the seat to a new player's key, which from then
    on is the one in keys/ for `power`."""
    agreeing.agree(dow.ws(), dow.me(power), "resign", note="moving house")
    new = dow.root / "newcomer_ed25519"
    write_keypair(new, PrivateKey.from_seed(bytes([0x7f]) * 32, f"newcomer-{power}@dow.test"))
    others = [p for p in POWERS if p != power]
    aid = agreeing.agree(dow.ws(), dow.me(others[0]), "seat", seat=power, new_key=str(public_path(new)),
                         why="replacement").agreement
    for other in others[1:]:
        agreeing.sign(dow.ws(), dow.me(other), aid)
    dow.key(power).unlink()
    public_path(dow.key(power)).unlink()
    shutil.copy(new, dow.key(power))
    shutil.copy(public_path(new), public_path(dow.key(power)))


def test_the_new_player_starts_clean_and_the_old_record_stays_the_old_player_s(second_half: Dow) -> None:
    second_half.phase({"turkey": ["A SMY - MOS", "F ANK - ROM"]})  # both void: the engine refuses them
    second_half.ok("warn", "turkey", "--reason", "an impossible order", "--phase", "S1901M", "--order",
                   "A SMY - MOS", who=DIRECTOR)
    assert "warnings: turkey 1" in second_half.ok("relations")
    take_over(second_half, "turkey")
    phase = second_half.status()["firm"]
    relations = second_half.ok("relations")
    record = (f"taken over: turkey by a new player at {phase}; the former player's record, kept apart: 1 warning, "
              "0 movement phases missed in a row")
    assert record in relations and "warnings: turkey" not in relations, relations
    assert "civil disorder" not in relations  # the new player owes orders again
    assert record in second_half.ok("status", "--plain", who="turkey")
    # the old player's void orders are his: a warning citing one goes on his record, never the new player's
    second_half.ok("warn", "turkey", "--reason", "again", "--phase", "S1901M", "--order", "F ANK - ROM",
                   who=DIRECTOR)
    record = record.replace("1 warning,", "2 warnings,")
    relations = second_half.ok("relations")
    assert record in relations and "warnings: turkey" not in relations and "civil disorder" not in relations
    # the new player's own first offence is his one warning, not the second that would mean civil disorder
    second_half.phase({"turkey": ["A SMY - MOS"]})
    at = [line for line in second_half.ok("results").splitlines() if "A SMY - MOS" in line]
    assert at, second_half.ok("results")
    second_half.ok("warn", "turkey", "--reason", "a mistake of his own", "--phase", phase, "--order", "A SMY - MOS",
                   who=DIRECTOR)
    relations = second_half.ok("relations")
    assert "warnings: turkey 1" in relations and "civil disorder" not in relations, relations
    assert record in relations
    assert second_half.verify() == []


def test_a_lost_key_is_the_same_player_and_keeps_his_record(second_half: Dow) -> None:
    """A seat given to a new key because its player lost his (`--why lost-key`) is the same player: nothing is
    taken over, his warnings stay with him."""
    second_half.phase({"turkey": ["A SMY - MOS"]})
    second_half.ok("warn", "turkey", "--reason", "an impossible order", "--phase", "S1901M", "--order",
                   "A SMY - MOS", who=DIRECTOR)
    new = second_half.root / "found_ed25519"
    write_keypair(new, PrivateKey.from_seed(bytes([0x7e]) * 32, "turkey-new-laptop@dow.test"))
    others = [p for p in POWERS if p != "turkey"]
    aid = agreeing.agree(second_half.ws(), second_half.me(others[0]), "seat", seat="turkey",
                         new_key=str(public_path(new)), why="lost-key").agreement
    for other in others[1:]:
        agreeing.sign(second_half.ws(), second_half.me(other), aid)
    relations = second_half.ok("relations")
    assert "warnings: turkey 1" in relations and "taken over" not in relations, relations
