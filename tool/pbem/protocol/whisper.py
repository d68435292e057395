"""Private press and its disclosure, checked with the players' keys (DESIGN §7.2 "private press is sealed to its
recipients (§6) and recognises nothing"; pbem.crypto.whisper holds the construction).

A whisper is a message in its sender's own press file: `{by, at, whisper: {id, to, box, commit, keys, sig}}`.
Anyone can check, without reading it, that it is well made: its id carries its sender (`<sender>-NNNN`,
ownership.id-author) and is new (press.bad-whisper), its key is sealed to each recipient and to the sender and
to no one else (press.bad-whisper), and the sender signed it (press.whisper-signature: another player's whisper
copied into one's own file does not carry one's signature). Whom it may go to is the ruleset's question
(press.whisper-recipient).

A disclosure `{by, at, disclose: {id, key, text}}` makes one whisper public: it names a whisper that was sent,
its author is the sender or a recipient, the key opens the box to exactly the committed plaintext, and that
plaintext is this game's, this id's, and the text given (press.bad-disclosure otherwise). A forged disclosure
can thus never put words in the sender's mouth; the sender's signature makes the proof portable.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pbem.crypto import sshsig
from pbem.crypto import whisper as crypto
from pbem.crypto.keys import PublicKey
from pbem.errors import Finding, PbemError
from pbem.protocol.model import Message, PressFile
from pbem.protocol.ids import author_of
from pbem.protocol.press import LEGACY

BAD_WHISPER = "press.bad-whisper"
SIGNATURE = "press.whisper-signature"
BAD_DISCLOSURE = "press.bad-disclosure"
ID_AUTHOR = "ownership.id-author"


def whispers_of(press: Mapping[str, PressFile], sender: str) -> list[Message]:
    """The whispers `sender` sent, in file order (his own press file, and the old shared one)."""
    return [m for path in (f"press/{sender}.yaml", LEGACY) for m in press.get(path, ())
            if m.by == sender and isinstance(m.body.get("whisper"), Mapping)]


def find(press: Mapping[str, PressFile], whisper_id: str) -> Message | None:
    """The whisper with this id, or None when none was sent."""
    return next((m for m in whispers_of(press, author_of(whisper_id)) if m.body["whisper"].get("id") ==
                 whisper_id), None)


def whisper_findings(game_id: str, keys: Mapping[str, PublicKey], press: Mapping[str, PressFile],
                     added: Sequence[Message]) -> list[Finding]:
    """Every whisper and disclosure a commit added, checked (module docstring)."""
    out: list[Finding] = []
    for message in added:
        if isinstance(message.body.get("whisper"), Mapping):
            out.extend(_whisper(game_id, keys, press, message))
        elif isinstance(message.body.get("disclose"), Mapping):
            out.extend(_disclosure(game_id, press, message))
    return out


def _whisper(game_id: str, keys: Mapping[str, PublicKey], press: Mapping[str, PressFile],
             message: Message) -> list[Finding]:
    body: Mapping[str, Any] = message.body["whisper"]
    sender, wid = message.by, str(body.get("id"))

    def finding(rule: str, text: str) -> list[Finding]:
        return [Finding(rule, f"whisper {wid}: {text}", file=message.file, line=message.line)]

    if author_of(wid) != sender:
        return finding(ID_AUTHOR, f"the id names {author_of(wid)!r}, but {sender} sent it (ids are "
                                  f"{sender}-NNNN)")
    same = [m for m in whispers_of(press, sender) if m.body["whisper"].get("id") == wid]
    if len(same) > 1:
        return finding(BAD_WHISPER, "this id was used already (each whisper has an id of its own)")
    readers = {*body.get("to", ()), sender}
    if set(body.get("keys", {})) != readers:
        return finding(BAD_WHISPER, f"the key must be sealed to each recipient and to the sender: "
                                    f"{', '.join(sorted(readers))}; got {', '.join(sorted(body.get('keys', {})))}")
    sig = str(body.get("sig", ""))
    try:
        canonical_sig = base64.b64encode(base64.b64decode(sig.encode("ascii"), validate=True)).decode()
        signer = sshsig.verify(crypto.armored(sig), crypto.signed_data(game_id, body), crypto.NAMESPACE)
    except (ValueError, PbemError) as exc:
        why = exc.finding.message if isinstance(exc, PbemError) else str(exc)
        return finding(SIGNATURE, f"the sender's signature does not hold ({why})")
    if canonical_sig != sig:
        return finding(SIGNATURE, "the signature is not in canonical base64")
    own = keys.get(sender)
    if own is None or not signer.same_key(own):
        return finding(SIGNATURE, f"signed by {signer.fingerprint()}, not by {sender}'s key: a whisper carries "
                                  "its sender's own signature")
    return []


def _disclosure(game_id: str, press: Mapping[str, PressFile], message: Message) -> list[Finding]:
    body: Mapping[str, Any] = message.body["disclose"]
    wid = str(body.get("id"))

    def finding(text: str) -> list[Finding]:
        return [Finding(BAD_DISCLOSURE, f"disclosure of {wid}: {text}", file=message.file, line=message.line)]

    sent = find(press, wid)
    if sent is None:
        return finding("no such whisper was ever sent")
    whisper = sent.body["whisper"]
    if message.by != sent.by and message.by not in whisper.get("to", ()):
        return finding(f"only its sender ({sent.by}) or a recipient ({', '.join(whisper.get('to', ()))}) can "
                       f"disclose it, not {message.by}")
    try:
        data = crypto.open_box(whisper["box"], bytes.fromhex(str(body.get("key"))), whisper["commit"])
        content = json.loads(data)
    except (ValueError, crypto.WhisperError) as exc:
        return finding(str(exc))
    if content != {"game": game_id, "id": wid, "text": body.get("text")}:
        return finding("the key opens the box, but not to this game's whisper with this id and this text")
    return []
