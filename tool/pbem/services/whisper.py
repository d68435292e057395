"""Private press from a power's side (DESIGN §7.2, §8 `pbem whisper`, `pbem inbox`): seal a message to its
recipients, read the whispers one may open, and disclose one to everybody.

`whisper` seals the text (pbem.crypto.whisper) to each recipient's key and to the sender's own, signs it with the
sender's key (SSHSIG namespace `pbem`) and posts it in the sender's own press file through `dow_press.post`, so it
is judged exactly as the verifier will (pbem.protocol.whisper, and the ruleset's press.whisper-recipient).
`inbox` opens, with my key file, every whisper sealed to me (sent or received); `disclose` posts a whisper's key
and text, which anyone can check against the box and its commitment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

from pbem.crypto import whisper as crypto
from pbem.crypto.keys import PrivateKey
from pbem.errors import ILLEGAL, PbemError
from pbem.formats.freetext import check_text
from pbem.protocol import ids
from pbem.protocol import whisper as rules
from pbem.protocol.model import Message
from pbem.services.dow import press as dow_press
from pbem.services.chance import private_key
from pbem.services.workspace import Identity, Workspace
from pbem.protocol.game import Game
from pbem.protocol.control import who

MAX_TEXT = 4000  # as a public message (schemas/dow-press.json $defs/text)
RECIPIENT = "press.whisper-recipient"  # the ruleset's rule (pbem.rulesets.dow.press); refused here before sealing

@dataclass(frozen=True)
class Whisper:
    """One whisper as its sender or a recipient reads it."""

    id: str
    sender: str
    to: tuple[str, ...]
    at: str | None
    text: str
    disclosed_by: tuple[str, ...]  # who made it public already


def whisper(ws: Workspace, me: Identity, to: Sequence[str], text: str) -> dow_press.Posted:
    """`pbem whisper POWER… TEXT`: seal `text` to the recipients and to me, sign it and post it."""
    head = ws.head()
    if head is None:
        raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID)")
    game = head.game
    player = who(game, me.public)
    if player is None:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    recipients = list(dict.fromkeys(to))
    if not text.strip() or len(text) > MAX_TEXT:
        raise PbemError("usage.whisper", f"a whisper has 1 to {MAX_TEXT} characters, got {len(text)}")
    check_text(text, "the whisper")  # refused now, not when a recipient discloses it
    keys = game.manifest.keys
    unknown = [p for p in recipients if p not in keys]
    if unknown:
        raise PbemError(RECIPIENT, f"{', '.join(unknown)} holds no seat in this game (seats: "
                        f"{', '.join(game.manifest.players)}); nothing was posted", exit_code=ILLEGAL)
    wid = next_id(game, player)
    readers = {p: keys[p] for p in (*recipients, player)}
    sealed = crypto.seal(crypto.plaintext(game.manifest.id, wid, text), readers)
    body = {"id": wid, "to": recipients, "box": sealed.box, "commit": sealed.commit, "keys": sealed.keys}
    sig = me.signer.sign(crypto.signed_data(game.manifest.id, body), crypto.NAMESPACE)
    return dow_press.post(ws, me, {"whisper": {**body, "sig": crypto.compact(sig)}})


def next_id(game: Game, player: str) -> str:
    """The sender's next whisper id, `<player>-NNNN` (numbered per author, DESIGN §2)."""
    return ids.next_id((m.body["whisper"]["id"] for m in rules.whispers_of(game.press, player)), player)


def inbox(ws: Workspace, me: Identity) -> list[Whisper]:
    """Every whisper I can open (I sent it or received it), in the order of the press files, oldest first."""
    head = ws.head()
    if head is None:
        return []
    game = head.game
    player = who(game, me.public)
    if player is None:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    private = private_key(me)
    disclosed: dict[str, list[str]] = {}
    for message in _messages(game):
        if isinstance(message.body.get("disclose"), dict):
            disclosed.setdefault(str(message.body["disclose"].get("id")), []).append(message.by)
    out = []
    for message in _messages(game):
        body = message.body.get("whisper")
        if not isinstance(body, dict) or player not in body.get("keys", {}):
            continue
        text = _open(game, message, private, player)
        if text is not None:
            out.append(Whisper(body["id"], message.by, tuple(body["to"]), message.at, text,
                               tuple(disclosed.get(body["id"], ()))))
    return out


def disclose(ws: Workspace, me: Identity, whisper_id: str) -> dow_press.Posted:
    """`pbem disclose ID`: publish the key of a whisper I sent or received, with its text, for all to check."""
    head = ws.head()
    if head is None:
        raise PbemError("setup.not-started", "the game has not started yet")
    game = head.game
    player = who(game, me.public)
    sent = rules.find(game.press, whisper_id)
    if sent is None:
        raise PbemError(rules.BAD_DISCLOSURE, f"no whisper {whisper_id} was ever sent (see pbem inbox)",
                        exit_code=ILLEGAL)
    body = sent.body["whisper"]
    if player is None or player not in body.get("keys", {}):
        raise PbemError(rules.BAD_DISCLOSURE, f"whisper {whisper_id} was not sealed to you: only its sender or a "
                        "recipient can disclose it", exit_code=ILLEGAL)
    key = crypto.recover_key(body["keys"][player], private_key(me))
    if key is None:
        raise PbemError(rules.BAD_DISCLOSURE, f"your key cannot open your copy of {whisper_id}'s key",
                        exit_code=ILLEGAL)
    text = _open(game, sent, private_key(me), player)
    if text is None:
        raise PbemError(rules.BAD_DISCLOSURE, f"{whisper_id} does not open to its commitment", exit_code=ILLEGAL)
    return dow_press.post(ws, me, {"disclose": {"id": whisper_id, "key": key.hex(), "text": text}})


def _messages(game: Game) -> list[Message]:
    return [m for path in sorted(game.press) for m in game.press[path]]


def _open(game: Game, message: Message, private: PrivateKey, player: str) -> str | None:
    body = message.body["whisper"]
    key = crypto.recover_key(body["keys"][player], private)
    if key is None:
        return None
    try:
        content = json.loads(crypto.open_box(body["box"], key, body["commit"]))
    except (ValueError, crypto.WhisperError):
        return None
    if content.get("game") != game.manifest.id or content.get("id") != body["id"]:
        return None
    return str(content.get("text"))
