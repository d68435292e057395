"""`pbem status` on a terminal: one screen a player reads first (DESIGN §8; seed 000 §3, §4).

Who holds control and why (the break that gave it to him), the firm point, the other pending breaks in the
order they will be served, what *you* must do next with the exact command to do it, your horizon and break
conditions, the units at the firm point (where the ruleset lists them), and the last note.

`todos(view)` is the decision (pure, tested on its own); `screen(view)` lays it out with rich. The CLI prints
the plain text form when stdout is not a terminal (scripts and tests parse it), this one on a terminal or with
`--rich`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pbem.protocol.dice import ESCROW
from pbem.protocol.dice import DICE
from pbem.protocol.model import AT, CLARIFY, CONDITION, HORIZON, ROLL, SEALED, Status
from pbem.protocol.secrets import SECRET

OUT_OF_TURN = (DICE, SECRET, SEALED)  # owed without holding control (DESIGN §3, §5, §6, §4.7)
YIELD = "pbem check && pbem yield -m NOTE"


@dataclass(frozen=True)
class Todo:
    """One thing to do: what, in words, and the command line that does it."""

    text: str
    command: str


@dataclass(frozen=True)
class StatusView:
    """What the screen shows (gathered by `pbem.services.pictures.status_view`)."""

    title: str
    game_id: str
    ruleset: str
    status: Status | None  # None while seats are being claimed
    me: str | None  # my seat (or "escrow"), None when my key holds none
    players: tuple[str, ...] = ()
    open_seats: tuple[str, ...] = ()
    report_file: str | None = None  # where my entries from the firm point go, e.g. report/turn-01.yaml
    horizon: str | None = None  # my `through`
    breaks: tuple[str, ...] = ()  # my break conditions, as written
    last: str = ""  # the last commit: "0e5c99d561 kli: my contribution to the sensor roll"
    units: tuple[tuple[str, ...], ...] = ()  # header row first
    sealed_command: str = "pbem seal KIND FILE && pbem yield"  # how this ruleset's sealed input is given
    reveal_command: str = "pbem yield"  # how a secret that is due is revealed (yield reveals those due)
    owes: str = ""  # the one-sentence answer of `pbem status` in plain text
    errata: tuple[str, ...] = ()  # errata not applied yet, one line each (DESIGN §4.8)
    to_sign: tuple[str, ...] = ()  # ids of those errata my signature is missing from
    to_apply: tuple[str, ...] = ()  # ids of those errata everyone signed
    voids: tuple[str, ...] = ()  # my entries replay found void, one line each (DESIGN §4.2)
    setup_todo: tuple[str, str] | None = None  # before the start: my next step towards it and its command
    agreements: tuple[tuple[str, str], ...] = ()  # agreements my signature is missing from: (id, terms) (§4.8)
    waits: tuple[str, ...] = ()  # how long each owed item has waited, who is overdue (services.deadlines)


def todos(view: StatusView) -> list[Todo]:
    """What I must do next, most urgent first, each with its exact command (never empty)."""
    status, me = view.status, view.me
    if status is None:
        if me is None and view.open_seats:
            return [Todo(f"claim a seat ({', '.join(view.open_seats)} open)", f"pbem join --as {view.open_seats[0]}")]
        if view.open_seats:
            return [Todo(f"wait for the other seats to be claimed ({', '.join(view.open_seats)})",
                         "git pull && pbem status")]
        if view.setup_todo is not None:
            return [Todo(*view.setup_todo)]
        return [Todo("start the game: all seats are taken", f"pbem start --first {view.players[0]}"
                     if view.players else "pbem start --roll")]
    if status.over:
        return [Todo("nothing: the game is over — read it whole", "pbem log --html --out game.html")]
    if me is None:
        return [Todo("your key holds no seat in this game: name the right one", "pbem status --key PATH")]
    if me == ESCROW:
        if any(b.player == ESCROW for b in status.pending):
            return [Todo("sign the open escrow dice batches", "pbem escrow sign")]
        return [Todo("nothing: no escrow batch is open", "git pull && pbem status")]
    out: list[Todo] = [Todo(f"sign {a}: {terms} (review it; it waits for your signature)", f"pbem sign {a}")
                       for a, terms in view.agreements]
    out += [Todo(f"review erratum {e}, a correction before the firm marker; sign it if it is right",
                 f"pbem erratum show {e} && pbem erratum sign {e}") for e in view.to_sign]
    out += [Todo(f"erratum {e} is signed by everyone: apply it", f"pbem erratum apply {e}") for e in view.to_apply]
    in_control = status.control == me
    for i, b in enumerate(status.pending):
        if b.player != me:
            continue
        if b.kind == DICE:
            out.append(Todo(f"{b.why}: pbem yield settles it (no need to hold control)", "pbem yield"))
        elif b.kind == SECRET:
            out.append(Todo(f"{b.why}: reveal it (no need to hold control)", view.reveal_command))
        elif b.kind == SEALED:
            out.append(Todo(f"{b.why}: seal it (no need to hold control)", view.sealed_command))
        elif b.kind == ROLL and in_control and i == 0:
            out.append(Todo(f"{b.why}: announce the dice for your shots, then yield",
                            'pbem roll --for "…" --ref REF … && pbem yield'))
        elif b.kind == CLARIFY:
            options = ", ".join(" ".join(f"{k}: {v}" for k, v in o.items()) for o in b.options) or "?"
            out.append(Todo(f"answer the special break at {b.at}: add an entry for {b.unit or 'your unit'} with "
                            f"one of: {options}", YIELD))
        elif in_control and i == 0:
            where = f"and your entries in {view.report_file} " if view.report_file else "and your entries "
            out.append(Todo(f"{_why(b.kind, b.why)}: edit players/{me}.yaml (through, breaks) {where}from "
                            f"{status.firm} on", YIELD))
        elif not in_control:
            out.append(Todo(f"nothing yet: after {status.control} you get control ({b.why})",
                            "git pull && pbem status"))
    if not out or all(t.command.startswith(("pbem erratum", "pbem sign")) for t in out):
        first = status.pending[0] if status.pending else None
        why = f" ({first.why})" if first is not None and first.player == status.control else ""
        out.append(Todo(f"nothing: {status.control} holds control{why}", "git pull && pbem status"))
    return out


def _why(kind: str, why: str) -> str:
    return {HORIZON: "your orders ran out", CONDITION: "your break condition was met",
            AT: "your break point was reached"}.get(kind, "you hold control") + f" — {why}"


def screen(view: StatusView) -> RenderableType:
    """The whole screen as one rich renderable."""
    parts: list[RenderableType] = [_head(view)]
    status = view.status
    if status is not None and not status.over and len(status.pending) > 1:
        table = Table(title="Pending breaks, in the order they are served", title_justify="left", box=None,
                      padding=(0, 1), show_edge=False)
        for column in ("", "player", "at", "kind", "why"):
            table.add_column(column, overflow="fold")
        for i, b in enumerate(status.pending, 1):
            table.add_row(str(i), _seat(b.player, view.me), b.at or "", b.kind, b.why)
        parts.append(table)
    must = Table.grid(padding=(0, 1))
    must.add_column(width=2)
    must.add_column(overflow="fold")
    for todo in todos(view):
        must.add_row("→", Text(todo.text))
        must.add_row("", Text("$ " + todo.command, style="bold green"))
    who = view.me if view.me is not None else "no seat"
    parts.append(Panel(must, title=f"What you ({who}) do next", title_align="left", border_style="green"))
    mine = []
    if view.horizon is not None or view.breaks:
        mine.append(f"your orders reach {view.horizon or '(nothing yet)'}; your breaks: "
                    f"{', '.join(view.breaks) if view.breaks else 'none'}")
    if status is not None and status.note:
        mine.append(f"last note, from {status.yielded_by}: “{status.note}”")
    if view.last:
        mine.append(f"last commit: {view.last}")
    mine += [f"erratum {line}" for line in view.errata]
    mine += [f"void: {line}" for line in view.voids]
    mine += [f"waits: {line}" for line in view.waits]
    if mine:
        parts.append(Text("\n".join(mine)))
    if len(view.units) > 1:
        units = Table(title="Units at the firm point", title_justify="left", box=None, padding=(0, 1),
                      show_edge=False)
        for column in view.units[0]:
            units.add_column(column)
        for row in view.units[1:]:
            units.add_row(*row)
        parts.append(units)
    return Group(*parts)


def _head(view: StatusView) -> Panel:
    status = view.status
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", width=8)
    grid.add_column(overflow="fold")
    if status is None:
        grid.add_row("SETUP", "seats are being claimed" + (f": {', '.join(view.open_seats)} open"
                                                           if view.open_seats else ": all taken"))
    elif status.over:
        grid.add_row("OVER", "the game is over")
    else:
        first = next((b for b in status.pending if b.player == status.control), None)
        control = Text(_seat(status.control or "", view.me), style="bold yellow")
        if first is not None:
            control.append(f" — {first.why}", style="default")
        grid.add_row("CONTROL", control)
        grid.add_row("FIRM", f"{status.firm}  (entries before it can no longer change)")
    return Panel(grid, title=f"{view.game_id} ({view.ruleset}) · {view.title}", title_align="left",
                 border_style="blue")


def _seat(player: str, me: str | None) -> str:
    return f"{player} (you)" if player == me else player
