"""Global press from a power's side (`pbem say`, `propose`, `accept`, ...): one message appended to his own press
file, dated with the phase open now, judged by the ruleset's `press.recognise` before it is committed (DESIGN §7.2,
§2). The words for a message are the ruleset's (rulesets/dow/press.py)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.errors import ILLEGAL, PbemError
from pbem.formats.freetext import check_texts
from pbem.formats import schemas, yamlsafe
from pbem.formats.writer import dump_flow
from pbem.protocol.model import Status
from pbem.rulesets.dow.press import describe_message
from pbem.services.dow.seat import commit_seated, press_file, press_of, seat_of
from pbem.services.workspace import Identity, Workspace
from pbem.files.lines import ENTRY_LINE


@dataclass(frozen=True)
class Posted:
    """What a press command did: the message, the changes it made to the recognised matrix, the new status."""

    message: Mapping[str, Any]
    changes: tuple[tuple[str, str, str, str], ...]
    status: Status


def post(ws: Workspace, me: Identity, body: Mapping[str, Any]) -> Posted:
    """Append one message by me to my own press file (press/<me>.yaml), dated with the phase open now, and commit
    it signed at once (press is legal without control, DESIGN §2). A message the rules refuse (`press.no-proposal`,
    `press.forced-state`, ...) is refused here with its rule id and nothing is written."""
    check_texts(body, "the message")
    seat = seat_of(ws, me)
    press = press_of(seat.head.game.manifest.ruleset)
    message = {"by": seat.player, "at": seat.when, **body}
    path = press_file(seat.player)
    schemas.validate(press.press_schema, message, file=path)
    after, refusal = press.recognise(seat.state, message, seat.player)
    if refusal is not None:
        raise PbemError(getattr(refusal, "rule", "press.refused"), str(refusal), file=path, exit_code=ILLEGAL,
                        hint="nothing was posted")
    changes = press.relations(seat.state).recognised.changes_to(press.relations(after).recognised)
    files = ws.head_files()
    files[path] = _appended(files.get(path), message, path)
    status, _stop = commit_seated(ws, seat, me, files, f"press: {describe_message(message)}")
    return Posted(message, tuple(changes), status)


def _appended(old: bytes | None, message: Mapping[str, Any], path: str) -> bytes:
    """A press file with one more message, one message per line (DESIGN §2: append-only): the line is added to
    the file as it is, so the verifier reads only that line."""
    line = f"  - {dump_flow(dict(message))}\n"
    if old is None:
        return f"messages:\n{line}".encode()
    rows = old.decode("utf-8", "replace").split("\n")
    if rows[0] == "messages:" and rows[-1] == "" and all(ENTRY_LINE.match(r) for r in rows[1:-1]):
        return old + line.encode()
    messages = list((yamlsafe.load(old, path).data or {}).get("messages", []))
    lines = ["messages:"] + [f"  - {dump_flow(m)}" for m in messages]
    return ("\n".join(lines) + "\n").encode() + line.encode()


def changes_text(changes: Sequence[Sequence[str]]) -> str:
    """[a, b, before, after] pairs as "england-france NEUTRAL -> LIMBO"."""
    return ", ".join(f"{a}-{b} {before} -> {after}" for a, b, before, after in changes)


def resend_command(message: Mapping[str, Any], text: str | None = None) -> str | None:
    """The command that posts `message` again, for a player whose message was not sent (services/press_race.py);
    `text` is a whisper's text, opened with its sender's key. None for a message no command posts (`lift`)."""
    q = shlex.quote
    if "say" in message:
        return f"pbem say {q(str(message['say']))}"
    for kind, other in (("propose", "to"), ("accept", "from"), ("declare", "to")):
        if isinstance(message.get(kind), Mapping):
            return f"pbem {kind} {message[kind][other]} {message[kind]['state']}"
    if isinstance(message.get("reaffirm"), Mapping):
        return "pbem reaffirm " + " ".join(f"{p}={s}" for p, s in message["reaffirm"].items())
    if isinstance(message.get("gift"), Mapping):
        return f"pbem gift {message['gift']['to']} {message['gift']['province']}"
    if "warn" in message:
        offence = message.get("offence") or {}
        cited = "".join(f" --{k} {q(str(offence[k]))}" for k in ("phase", "order") if k in offence)
        return f"pbem warn {message['warn']} --reason {q(str(message.get('reason', '')))}{cited}"
    if isinstance(message.get("whisper"), Mapping):
        return f"pbem whisper {' '.join(message['whisper']['to'])} {q(text) if text is not None else 'TEXT'}"
    if isinstance(message.get("disclose"), Mapping):
        return f"pbem disclose {message['disclose']['id']}"
    if isinstance(message.get("open"), Mapping):
        return f"pbem open {str(message['open'].get('secret', '')).rpartition('-')[0]}"
    if "ready" in message:
        return "pbem ready"
    if "draw" in message:
        return "pbem draw" + ("" if message["draw"] else " --withdraw")
    return None
