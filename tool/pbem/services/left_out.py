"""What `pbem push` may leave out when it replays my commits onto a tip that moved (DESIGN §4.9), and how it tells
me: press raced by a step change, and a sealed set replaced too late (DESIGN §2, §4.7, §7.2; docs/dow.md "Press
raced by the end of a phase", "Replacing a sealed set").

Press is not bound to orders: a message is recognised when it lands, after those that landed before it, and the
date it carries only says during which step that was. So when `pbem push` replays my press onto a tip where
another power's commit (the last reveal, an nmr) closed the step, each message my commit appends is dated again
with the step open now (`redate`) and judged there like any message sent now: most land unchanged but for the
date. A message the new step refuses (a share of a set whose reveal is owed no more, a proposal by a power the
step's end put into civil disorder) is not sent.

A set sealed again to replace my earlier one lands only while another player's seal is still owed; when the
step's last seal landed first, the replacement is refused there (`secret.late-replace`) and my earlier set
stands as I sealed it, which is what the rules say: it is not sent.

Either way the commit is left out of the replay (`leave_out`: it changes press only, or it only seals that
replacement), kept on a `pbem-saved-…` branch, and one line says what was not sent, why, and how to send it again
(`unsent_line`), so nothing is lost and the clone is never left holding a commit it cannot push. Any other commit
is never left out: push refuses it as before (`push.rebase-illegal`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pbem.crypto import whisper as sealed_press
from pbem.errors import Finding, PbemError
from pbem.files.layout import PRESS_RE, SECRET_RE, STATUS
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
class Replaced:
    """A set sealed again to replace an earlier one: its id, the one it replaces, its kind and step."""

    secret: str
    replaces: str
    kind: str
    step: str


@dataclass(frozen=True)
class Unsent:
    """A commit of mine left out of the replay: a press commit the new step refuses one message of, or the
    replacement of a sealed set that came after the step's last seal."""

    commit: str
    finding: Finding
    messages: tuple[Mapping[str, Any], ...] = ()
    written: str | None = None
    now: str | None = None
    replaced: tuple[Replaced, ...] = ()


@dataclass
class Race:
    """What a replay did with what could not land as it was: press dated again, commits left out."""

    redated: list[Redated] = field(default_factory=list)
    unsent: list[Unsent] = field(default_factory=list)


def redate(parent: Files, files: Files, now: str | None) -> tuple[Files, str | None, list[Mapping[str, Any]]]:
    """`files` with every message appended to a press file (since `parent`) dated `now`; also the step they were
    dated with (None when none was dated otherwise) and every message appended. A file not in pbem's
    one-message-per-line layout is left as it is (the judge says what is wrong with it), and so is a commit that
    changes more than press: what else it does may be bound to the step it was made in."""
    out: Files = dict(files)
    written: str | None = None
    added: list[Mapping[str, Any]] = []
    if not _press_only(parent, files):
        return out, None, added
    for path in sorted(files):
        if not PRESS_RE.match(path) or files[path] == parent.get(path):
            continue
        before = parent.get(path) or HEADER
        try:
            tail = files[path][len(before):].decode() if files[path].startswith(before) else None
        except UnicodeDecodeError:
            tail = None
        if tail is None:
            continue  # not appended to, or not text: left for the judge to name
        rows = []
        for row in tail.splitlines(keepends=True):
            message = _message(row.rstrip("\n"), path)
            if message is not None:
                added.append(message)
                if now is not None and isinstance(message.get("at"), str) and message["at"] != now:
                    written = str(message["at"])
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


LATE_REPLACE = "secret.late-replace"  # protocol/resealing.py


def leave_out(commit: str, before: Files, after: Files, findings: list[Finding], messages: list[Mapping[str, Any]],
              written: str | None, now: str | None) -> Unsent | None:
    """Whether a replayed commit (before -> after) that no longer verifies (`findings`) may be left out, and what
    to tell: when it changes press files only, besides status.yaml, or only seals replacements the step's last
    seal came before (`secret.late-replace`, and what follows from it). Any other commit: None (push refuses it)."""
    if not findings:
        return None
    if _press_only(before, after):
        return Unsent(commit, findings[0], tuple(messages), written, now)
    changed = _changed(before, after)
    late = next((f for f in findings if f.rule == LATE_REPLACE), None)
    if late is not None and changed and all(SECRET_RE.match(p) and p not in before for p in changed):
        replaced = [_replaced(after[p], p) for p in sorted(changed)]  # a replacement only, come too late
        if all(r is not None for r in replaced):
            return Unsent(commit, late, replaced=tuple(r for r in replaced if r is not None))
    return None


def _changed(before: Files, after: Files) -> set[str]:
    return {p for p in set(before) | set(after) if p != STATUS and before.get(p) != after.get(p)}


def _press_only(before: Files, after: Files) -> bool:
    changed = _changed(before, after)
    return bool(changed) and all(PRESS_RE.match(p) for p in changed)


def _replaced(raw: bytes, path: str) -> Replaced | None:
    try:
        data = yamlsafe.load(raw, path).data
    except PbemError:
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("id", "replaces", "step")):
        return None
    return Replaced(data["id"], data["replaces"], str(data.get("kind") or "input"), data["step"])


def redated_line(race: Race) -> str:
    """What the replay dated again, for the push's message ("" when nothing)."""
    steps: dict[tuple[str, str], int] = {}
    for r in race.redated:
        steps[(r.written, r.now)] = steps.get((r.written, r.now), 0) + r.count
    return "".join(f"; your {n} message(s) written for {written}, which closed before they landed, went out dated "
                   f"{now}" for (written, now), n in steps.items())


def unsent_line(unsent: Unsent, saved: str, me: Identity) -> str:
    """One line per commit not sent: what, why the tip refuses it now, where it is kept, and how to send it again
    (or what stands instead)."""
    why = f"({unsent.finding.rule}: {unsent.finding.message}); it is kept on branch {saved}"
    if unsent.replaced:
        sets = "; ".join(f"your {r.kind} sealed again for {r.step} ({r.secret}, replacing {r.replaces})"
                         for r in unsent.replaced)
        kept = ", ".join(r.replaces for r in unsent.replaced)
        return (f"not sent: {sets} (your commit {unsent.commit[:10]}) came after the last seal {why}; what you "
                f"sealed before ({kept}) stands as you sealed it: `pbem status` says what you owe now")
    told = "; ".join(describe_message(m) for m in unsent.messages) or "your press"
    again = [c for c in (resend_command(m, _whispered(m, me)) for m in unsent.messages) if c]
    when = (f", written for {unsent.written}, which closed before it landed," if unsent.written else "")
    now = f" at {unsent.now}" if unsent.now else ""
    return (f"not sent: {told} (your commit {unsent.commit[:10]}){when} is refused{now} {why}"
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
