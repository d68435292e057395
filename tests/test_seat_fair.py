"""Resign and seat, fair (DESIGN §4.8): a seat given to a replacement stays at the table when the replacement
later loses his key and the others give the seat to his new key (a lost-key change): the old resignation is spent,
it is never applied again, and the new key plays. Through the real CLI on the three-cornered melee."""

from __future__ import annotations

from pathlib import Path

from pbem.crypto.keys import write_keypair
from pbem.protocol import kinds
from pbem.services.workspace import Workspace
from gitutil import fixed_key
from test_agreement_kinds import carol_pub
from test_dice_flow import cli, findings
from test_errata import _melee


def newest(table, who: str) -> str:  # type: ignore[no-untyped-def]
    return max(p.stem for p in (table.repo_dir / "agreements").glob(f"{who}-*.yaml"))


def vacant(table) -> frozenset[str]:  # type: ignore[no-untyped-def]
    head = Workspace.open(table.repo_dir).head()
    assert head is not None
    return kinds.resigned(head.game.agreements, head.game.manifest.keys)


def test_a_replacement_who_loses_his_key_keeps_the_seat(tmp_path: Path) -> None:
    table = _melee(tmp_path / "melee")
    cli(table, "resign", who="kli")
    assert vacant(table) == {"kli"}
    cli(table, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(table), "--why", "replacement", who="fed")
    cli(table, "sign", newest(table, "fed"), who="rom")
    assert vacant(table) == frozenset()  # carol plays kli now
    fresh = table.root / "keys" / "kli-new_ed25519"
    write_keypair(fresh, fixed_key("escrow"))
    cli(table, "agree", "seat", "--seat", "kli", "--new-key", str(fresh) + ".pub", "--why", "lost-key", who="fed")
    cli(table, "sign", newest(table, "fed"), who="rom")
    assert vacant(table) == frozenset(), "the old resignation was applied again and locked the new key out"
    assert "kli" in cli(table, "status", "--plain", who="kli-new")
    assert findings(table) == []


def test_a_seat_agreement_shows_the_new_key_before_anyone_signs(tmp_path: Path) -> None:
    """A co-signer must see whose key he seats: `pbem agreements`, `pbem status` and `pbem sign` show the new
    key's fingerprint and comment (`ssh-keygen -l` spelling), so a proposer cannot slip his own key in unseen."""
    from pbem.crypto.keys import PublicKey

    table = _melee(tmp_path / "melee")
    cli(table, "resign", who="kli")
    line = Path(carol_pub(table)).read_text().strip()
    fingerprint = PublicKey.from_line(line).fingerprint()
    cli(table, "agree", "seat", "--seat", "kli", "--new-key", carol_pub(table), "--why", "replacement", who="fed")
    assert fingerprint in cli(table, "agreements", who="rom") and "carol@pbem.test" in cli(table, "agreements",
                                                                                            who="rom")
    assert fingerprint in cli(table, "status", "--plain", who="rom")
    said = cli(table, "sign", newest(table, "fed"), who="rom")
    assert fingerprint in said and "carol@pbem.test" in said
    assert table.data("game.yaml")["players"][1]["key"] == " ".join(line.split()[:2])
    assert findings(table) == []
