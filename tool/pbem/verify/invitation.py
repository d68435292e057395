"""The invite code checked at every join (DESIGN §7.2, seed 001; docs/dow.md "Joining"): where game.yaml's
`setup.invite_hash` is of the form the verifier can check (pbem.rulesets.dow.invite), the seat a join claims must
carry the code's signature over (game id, seat, key) in `invite:`; otherwise the join is refused,
`setup.bad-invite-code`, naming game.yaml and the seat's line."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.files.layout import GAME
from pbem.protocol.game import Manifest

BAD_CODE = "setup.bad-invite-code"


def join_findings(manifest: Manifest, seat_id: str) -> list[Finding]:
    """What is wrong with the invite of the seat `seat_id` claims in `manifest` (the game.yaml after the join)."""
    invite_hash = manifest.setup.get("invite_hash")
    if invite_hash is None:  # no invite: nothing to check, and no Diplomacy ruleset to import for it
        return []
    from pbem.rulesets.dow import invite

    if not invite.checkable(invite_hash):
        return []
    seat = next(s for s in manifest.raw["players"] if s["id"] == seat_id)
    if invite.proves(str(invite_hash), seat.get("invite"), manifest.id, seat_id, str(seat.get("key"))):
        return []
    why = "carries no invite" if "invite" not in seat else "carries an invite that is not this game's code signing it"
    return [Finding(BAD_CODE, f"seat {seat_id!r} {why}: join with the code from the game description (pbem join "
                    "--as ID --code CODE)", file=GAME, line=manifest.seat_lines.get(seat_id))]
