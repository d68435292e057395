"""Opening a withheld Diplomacy set without its owner, from a power's side (DESIGN §4.7; docs/dow.md "A withheld
set is opened without its owner"; protocol.openings judges): `pbem open POWER` publishes my share, and the commit
completing the nmr writes the key the published shares rebuild."""

from __future__ import annotations

import base64
from typing import Any, Mapping

from pbem.crypto import seal, shares
from pbem.errors import ILLEGAL, PbemError
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping
from pbem.protocol import openings
from pbem.protocol.secrets import Secret
from pbem.services import chance
from pbem.services.dow.press import Posted, post
from pbem.services.dow.seat import seat_of
from pbem.services.workspace import Identity, Workspace
from pbem.protocol.game import Game
from pbem.protocol.ways_out import reveals_owed


def dealt(raw: Mapping[str, Any], game: Game, player: str, me: Identity) -> dict[str, object]:
    """The `threshold` and `shares` my freshly sealed set `raw` carries: its key (recovered from its owner box)
    split among the other players (crypto.shares)."""
    key = seal.recover_key(base64.b64decode(raw["owner_box"]), chance.private_key(me))
    return shares.deal(raw["id"], key, openings.recipients(game.manifest.players, player, game.manifest.keys))


def open_share(ws: Workspace, me: Identity, power: str) -> Posted:
    """`pbem open POWER`: publish my share of `power`'s sealed orders for the phase open now, once every power has
    sealed and `power` owes his reveal (protocol.openings): with enough shares, the commit that completes the nmr
    against him opens his set, and his sealed orders stand."""
    seat = seat_of(ws, me)
    head, when = seat.head, seat.when
    sealed = head.game.inputs.sealed.get((when, power))
    if sealed is None or sealed.revealed:
        raise PbemError("share.early", f"{power} has {'revealed' if sealed else 'sealed no'} orders for {when}: "
                        "there is nothing of his to open", exit_code=ILLEGAL)
    secret = head.game.secrets[sealed.secret]
    if sealed.secret not in reveals_owed(head):
        raise PbemError("share.early", f"{power}'s orders for {when} are opened only once every power has sealed "
                        "and he owes his reveal", exit_code=ILLEGAL)
    mine = (secret.raw.get("shares") or {}).get(seat.player)
    if mine is None:
        raise PbemError("share.forged", f"{power}'s set {secret.id} holds no share for {seat.player} (sealed by an "
                        "older pbem, or not shared with you)", exit_code=ILLEGAL)
    share = seal.recover_key(shares.parse(mine)[1], chance.private_key(me))
    return post(ws, me, {"open": {"secret": secret.id, "share": share.hex()}})


def opened_marks(files: dict[str, bytes], game: Game) -> list[str]:
    """In the commit completing an nmr: each set it marks withheld that the published shares open gets `opened`
    (the rebuilt key), so it stands as sealed; one line per set opened, for the commit message."""
    done = []
    for path in sorted(p for p in files if p.startswith("secrets/")):
        raw = yamlsafe.load(files[path], path).data
        if not isinstance(raw, dict) or not raw.get("withheld") or "opened" in raw or not raw.get("shares"):
            continue
        key = openings.opening(Secret(raw, path), game.press)
        if key is not None:
            files[path] = dump_mapping({**raw, "opened": key.hex()}).encode()
            done.append(f"{raw['owner']}'s withheld set {raw['id']} opened by the other powers' shares: it stands")
    return done
