"""What every command group shares: the output formats, the `--key` option, running an action with one clear
line for a user mistake, the workspace and identity of the current folder, and the status lines that status,
check and yield print. Command modules import from here; nothing here imports a command module back.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

import typer

from pbem.cli.fast import STDOUT, write_out  # noqa: F401 - shared by the command groups
from pbem.errors import PbemError

if TYPE_CHECKING:
    from pbem.protocol.model import Status
    from pbem.services.workspace import Identity, Workspace

T = TypeVar("T")


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"


def emit_json(data: "dict[str, object]") -> None:
    """A `--format json` output: the format's version first, then the command's keys (each always present: null,
    never absent; schemas/output/<command>.json says which)."""
    from pbem.text import JSON_FORMAT, json_dumps

    write_out(json_dumps({"format": JSON_FORMAT, **data}, indent=2) + "\n")


class ReadFormat(str, Enum):
    """What a command that reads the game prints: lines for a player, or JSON for a program."""

    text = "text"
    json = "json"


def json_option() -> Any:
    """`--format text|json`, for a command that reads the game."""
    return typer.Option(ReadFormat.text, "--format", help="text, or json for a program (schemas/output/)")


KeyOption = typer.Option(None, "--key", help="private key file (else PBEM_KEY, git user.signingkey, "
                         "~/.ssh/id_ed25519)")


# The clones a command opened, with the commit each stood at, so that a command which committed says when the
# clone is behind (`say_behind`) without each command remembering to; cleared when the command ends.
_opened: "list[tuple[Workspace, Optional[str]]]" = []
_said: "set[int]" = set()


def run(action: Callable[[], T]) -> T:
    """Run a command's action; a PbemError becomes one line on stderr and its exit code (never a traceback).
    A command that committed to a clone behind its remote says so last; the clone's lock (`workspace()`) is
    given back when the action ends."""
    from pbem.services import clonelock

    try:
        done = action()
        for ws, before in _opened:
            if id(ws) not in _said and _head(ws) != before:
                say_behind(ws)
        return done
    except PbemError as exc:
        typer.echo(f"pbem: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    finally:
        _opened.clear()
        _said.clear()
        clonelock.release_all()


def _head(ws: "Workspace") -> Optional[str]:
    repo = ws.repo.repo
    return None if repo.head_is_unborn else str(repo.head.target)


def workspace(lock: bool = True) -> "Workspace":
    """The game repository of the current folder, locked against `pbem watch` working in it at the same time
    (services/clonelock.py) until the command ends; `lock=False` for the watch, which locks round by round."""
    from pbem.services import clonelock
    from pbem.services.workspace import Workspace

    ws = Workspace.open(Path.cwd())
    if lock and not ws.repo.is_bare:
        clonelock.acquire(ws.repo.git_dir)  # before anything reads HEAD (a Workspace reads it when asked)
    _opened.append((ws, _head(ws)))
    return ws


def identity(key: Optional[str]) -> "Identity":
    """The signing key, found in the order of DESIGN §8."""
    from pbem.services.workspace import load_identity

    return load_identity(key, Path.cwd())


def my_seat(ws: "Workspace", key: Optional[str]) -> Optional[str]:
    """My seat by my key, or None when no key is found or it holds no seat (reading needs no key)."""
    from pbem.services import turn

    try:
        return turn.whoami(ws, identity(key))
    except PbemError:
        return None


def data_lines(text: str) -> str:
    """Text built from a repository's data (a purpose, a reason, press), each line shown with its control
    characters escaped and no workflow command in it: data is shown, never obeyed (DESIGN §9)."""
    from pbem.text import terminal

    return "\n".join(terminal(line) for line in text.split("\n"))


def status_record(status: "Status | None") -> "dict[str, Any] | None":
    """status.yaml as `--format json` shows it: every key, null or empty where the game has none."""
    if status is None:
        return None
    data = status.to_data()
    data["pending"] = [{**b.as_dict(), "options": [dict(o) for o in b.options]} for b in status.pending]
    return {**data, "note": status.note or None, "position": data.get("position"),
            "table": data.get("table")}


def findings_records(findings: "Any") -> "list[dict[str, Any]]":
    """Findings as `--format json` shows them: rule, message, file, line, commit and hint, null where unknown."""
    return [f.as_record() for f in findings]


def status_lines(status: "Status | None", me: Optional[str]) -> str:
    """Control, firm point, pending breaks and the yield note, one per line."""
    if status is None:
        return "setting up: the game has not started"
    if status.over:
        return "the game is over"
    from pbem.render.status_screen import control_text

    lines = [f"control: {control_text(status, me)}", f"firm:    {status.firm}"]
    if status.table is not None:
        lines.append(f"table:   {', '.join(status.table)} (the order around the table, by dice)")
    for b in status.pending:
        lines.append(f"break:   {b.player} at {b.at} — {b.why}")
    if status.note:
        lines.append(f"note:    {status.yielded_by}: {status.note}")
    from pbem.text import terminal

    return "\n".join(terminal(line) for line in lines)  # a note is data: shown, never obeyed (DESIGN §9)


def say_behind(ws: "Workspace") -> None:
    """After a command committed to the shared game: when this clone is behind its remote, or has not fetched for
    a while, say so (no network), since what was just judged here may not be the game that landed meanwhile."""
    from pbem.services import gitstate

    _said.add(id(ws))
    behind = gitstate.behind_line(ws.repo)
    if behind:
        then = "" if "pbem push" in behind else "; `pbem push` replays your commit onto it and says the game then"
        typer.echo(f"behind: {behind}{then}")


def erratum_said(done) -> None:  # type: ignore[no-untyped-def]
    """What `pbem erratum propose|sign|apply` and `pbem agree erratum` print (services.errata.Done)."""
    typer.echo(f"committed {done.commit[:10]}")
    if done.applied:
        typer.echo(f"erratum {done.erratum} applied: replay restarted from the corrected step; "
                   f"{done.status.control or 'nobody'} holds control (firm to {done.status.firm})")
    else:
        typer.echo(f"erratum {done.erratum}: to sign: {', '.join(done.unsigned)} "
                   f"(pbem erratum sign {done.erratum}, or pbem sign {done.erratum})")
