"""Press raced by a step change: what `pbem push` does with my press when the step it was written for closed
before it landed (DESIGN §2 "dated with the step it is sent during", §4.9, §7.2; docs/dow.md "Press raced by
the end of a phase").

Press is not bound to orders: a message is recognised when it lands, after those that landed before it, and the
date it carries only says during which step that was. So when `pbem push` replays my press onto a tip where
another power's commit (the last reveal, an nmr) closed the step, each message my commit appends is dated again
with the step open now (`redate`) and judged there like any message sent now: most land unchanged but for the
date. A message the new step refuses (a share of a set whose reveal is owed no more, an acceptance of a proposal
made void meanwhile) is not sent: its commit is left out of the replay (`droppable`: it changes press only),
kept on a `pbem-saved-…` branch, and one line quotes it with the command that sends it again (`unsent_line`), so
nothing is lost and the clone is never left holding a commit it cannot push. A commit that changes anything
besides press is never left out: push refuses it as before (`push.rebase-illegal`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from pbem.crypto import whisper as sealed_press
from pbem.errors import Finding, PbemError
from pbem.files.layout import PRESS_RE, STATUS
from pbem.files.lines import ENTRY_LINE
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_flow
from pbem.services.chance import private_key
from pbem.services.dow.press import describe_message, resend_command
from pbem.services.workspace import Identity

Files = dict[str, bytes]
HEADER = b"messages:\n"


@dataclass(frozen=True)
class Redated:
    """A replayed commit of mine whose messages were dated again: written for one step, landed in another."""

    written: str
    now: str
    count: int


@dataclass(frozen=True)
class Unsent:
    """A press commit of mine left out of the replay: the new step refuses one of its messages."""

    commit: str
    messages: tuple[Mapping[str, Any], ...]
    written: str | None
    now: str | None
    finding: Finding


@dataclass
class Race:
    """What the replay did with my press: commits dated again, commits not sent."""

    redated: list[Redated] = field(default_factory=list)
    unsent: list[Unsent] = field(default_factory=list)


def redate(parent: Files, files: Files, now: str | None) -> tuple[Files, str | None, list[Mapping[str, Any]]]:
    """`files` with every message appended to a press file (since `parent`) dated `now`; also the step they were
    dated with (None when none was dated otherwise) and every message appended. A file not in pbem's
    one-message-per-line layout is left as it is (the judge says what is wrong with it)."""
    out, written, added = dict(files), None, []
    for path in sorted(files):
        if not PRESS_RE.match(path) or files[path] == parent.get(path):
            continue
        before = parent.get(path) or HEADER
        if not files[path].startswith(before):
            continue
        rows = []
        for row in files[path][len(before):].decode("utf-8", "replace").splitlines(keepends=True):
            message = _message(row.rstrip("\n"), path)
            if message is not None:
                added.append(message)
                if now is not None and isinstance(message.get("at"), str) and message["at"] != now:
                    written = message["at"]
                    message["at"] = now
                    row = f"  - {dump_flow(message)}\n"
            rows.append(row)
        out[path] = before + "".join(rows).encode()
    return out, written, added


def _message(row: str, path: str) -> dict[str, Any] | None:
    """One appended line as the message it holds, when writing it back changes nothing but what we change."""
    if not ENTRY_LINE.match(row):
        return None
    try:
        data = yamlsafe.load(row[len("  - "):].encode(), path).data
    except PbemError:
        return None
    if not isinstance(data, dict) or f"  - {dump_flow(data)}" != row:
        return None
    return data


def droppable(before: Files, after: Files) -> bool:
    """Whether a commit (before -> after) changes press files only, besides status.yaml: press may be left out of a
    replay and sent again; nothing else is."""
    changed = {p for p in set(before) | set(after) if p != STATUS and before.get(p) != after.get(p)}
    return bool(changed) and all(PRESS_RE.match(p) for p in changed)


def redated_line(race: Race) -> str:
    """What the replay dated again, for the push's message ("" when nothing)."""
    steps: dict[tuple[str, str], int] = {}
    for r in race.redated:
        steps[(r.written, r.now)] = steps.get((r.written, r.now), 0) + r.count
    return "".join(f"; your {n} message(s) written for {written}, which closed before they landed, went out dated "
                   f"{now}" for (written, now), n in steps.items())


def unsent_line(unsent: Unsent, saved: str, me: Identity) -> str:
    """One line per commit not sent: which message, written for which step, why the step open now refuses it,
    where it is kept, and the command that sends it again."""
    told = "; ".join(describe_message(m) for m in unsent.messages) or "your press"
    again = [c for c in (resend_command(m, _whispered(m, me)) for m in unsent.messages) if c]
    when = (f", written for {unsent.written}, which closed before it landed," if unsent.written else "")
    now = f" at {unsent.now}" if unsent.now else ""
    return (f"not sent: {told} (your commit {unsent.commit[:10]}){when} is refused{now} ({unsent.finding.rule}: "
            f"{unsent.finding.message}); it is kept on branch {saved}"
            + (f"; to send it again if it still holds: `{' && '.join(again)}`" if again else ""))


def _whispered(message: Mapping[str, Any], me: Identity) -> str | None:
    """The text of a whisper I sent, opened with my own key (sealed to the sender too), to quote it back."""
    body = message.get("whisper")
    if not isinstance(body, Mapping):
        return None
    try:
        mine = (body.get("keys") or {}).get(str(message.get("by")))
        key = sealed_press.recover_key(str(mine), private_key(me)) if mine else None
        text = json.loads(sealed_press.open_box(str(body["box"]), key, str(body["commit"]))) if key else None
    except (PbemError, sealed_press.WhisperError, KeyError, ValueError):
        return None
    return str(text["text"]) if isinstance(text, dict) and "text" in text else None
