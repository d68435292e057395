"""An agreement completed by signatures landing at the same moment applies its change exactly once (DESIGN §4.8,
§4.9): in the three-cornered melee fed proposes an amend; kli and rom sign it at the same commit, each in his own
clone, and push one after the other through a hooked hub. The later push rebases its signature onto the other's,
which makes it the last one: its commit writes game.yaml as agreed. The verifier refuses a completing commit
whose change is missing (agreement.effect): the change a group agreed on is never listed "in effect" and lost."""

from __future__ import annotations

from pathlib import Path

from pbem.formats import yamlsafe
from pbem.services import agreements
from test_sync import all_push, hub_verifies, start_game, tactical


def test_two_last_signatures_at_once_apply_the_amend_once(tmp_path: Path) -> None:
    seats, hub = tactical(tmp_path, "tactical-melee", ("fed", "kli", "rom"))
    fed, kli, rom = seats["fed"], seats["kli"], seats["rom"]
    start_game(fed.ws(), "fed", fed.me, [kli.me, rom.me])
    done = agreements.agree(fed.ws(), fed.me, "amend", changes={"deadline": "96h"})
    assert fed.push().code == 0
    for seat in (kli, rom):
        seat.pull()
    assert kli.head() == rom.head()
    for seat in (kli, rom):  # both sign on the same commit: neither signature is the last one there
        agreements.sign(seat.ws(), seat.me, done.agreement)
    said = all_push([kli, rom])
    assert any("rebased" in line for line in said), said
    rom.pull()
    game = yamlsafe.load((rom.repo_dir / "game.yaml").read_bytes(), "game.yaml").data
    assert game["deadline"] == "96h"
    subjects = rom.git("log", "--format=%s", "--", "game.yaml").stdout.splitlines()
    # once, by the last signature, which says so as `pbem sign` would
    assert [s for s in subjects if "signs" in s] == [f"rom: signs {done.agreement} (takes effect: game.yaml as agreed)"]
    hub_verifies(hub, tmp_path)
