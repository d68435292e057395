"""Global press from a power's side (`pbem say`, `propose`, `accept`, ...): one message appended to his own press
file, dated with the phase open now, judged by the ruleset's `press.recognise` before it is committed (DESIGN §7.2,
§2). The words for a message are the ruleset's (rulesets/dow/press.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

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
