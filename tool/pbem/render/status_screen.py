"""`pbem status` on a terminal: one screen a player reads first (DESIGN §8; seed 000 §3, §4).

Who holds control and why (the break that gave it to him), the firm point, the other pending breaks in the
order they will be served, what *you* must do next with the exact command to do it, your horizon and break
conditions, the units at the firm point (where the ruleset lists them), and the last note.

`todos(view)` is the decision (pure, tested on its own); `screen(view)` lays it out with rich. The CLI prints
the plain text form when stdout is not a terminal (scripts and tests parse it), this one on a terminal or with
`--rich`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pbem.text import terminal
from pbem.protocol.dice import ESCROW
from pbem.protocol.dice import DICE
from pbem.protocol.model import AT, CLARIFY, CONDITION, HORIZON, READY, ROLL, SEALED, Status
from pbem.protocol.secrets import SECRET

OUT_OF_TURN = (DICE, SECRET, SEALED, READY)  # owed without holding control (DESIGN §3, §5, §6, §4.7)
YIELD = "pbem check && pbem yield -m NOTE"
WAIT = "pbem pull && pbem status"  # nothing to do yet: bring the clone up to date and look again


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
    sealed_command: str = "pbem seal note FILE && pbem yield"  # how this ruleset's sealed input is given
    sealed_what: str = "it"  # what the sealed input is, in words (e.g. "your energy allocation")
    reveal_command: str = "pbem yield"  # how a secret that is due is revealed (yield reveals those due)
    owes: str = ""  # the one-sentence answer of `pbem status` in plain text
    errata: tuple[str, ...] = ()  # errata not applied yet, one line each (DESIGN §4.8)
    behind: str | None = None  # "origin has 2 new commits: pbem pull" (services/gitstate.py)
    sides: int = 6  # the ruleset's die for a roll owed (DESIGN §5 `dice_sides`)
    voids: tuple[str, ...] = ()  # my entries replay found void, one line each (DESIGN §4.2)
    setup_todo: tuple[str, str] | None = None  # before the start: my next step towards it and its command
    agreements: tuple[tuple[str, str], ...] = ()  # agreements my signature is missing from: (id, terms) (§4.8)
    waits: tuple[str, ...] = ()  # how long each owed item has waited, who is overdue (services.deadlines)
    withheld: tuple[str, ...] = ()  # parts owed and never given, settled by an nmr, a resign or a seat change (§4.8)


def todos(view: StatusView) -> list[Todo]:
    """Everything I must do now, most urgent first, each with the exact command to paste (never empty): a clone
    behind its remote first, then signatures asked of me, then every obligation of mine among the pending
    breaks (contributions, reveals, rolls, sealed inputs), then my turn."""
    out = _todos(view)
    if view.behind is not None:
        what, _, command = view.behind.partition(": ")
        known = " new commit" in what  # else it has not fetched for a while: it may be behind without knowing
        out.insert(0, Todo(f"your clone {'is' if known else 'may be'} behind: {what}",
                           command.split(" (")[0] or "pbem pull"))
    return out


def _todos(view: StatusView) -> list[Todo]:
    status, me = view.status, view.me
    if status is None:
        if me is None and view.open_seats:
            return [Todo(f"claim a seat ({', '.join(view.open_seats)} open)", f"pbem join --as {view.open_seats[0]}")]
        if view.open_seats:
            return [Todo(f"wait for the other seats to be claimed ({', '.join(view.open_seats)})", WAIT)]
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
        return [Todo("nothing: no escrow batch is open", WAIT)]
    out: list[Todo] = [Todo(f"sign {a}: {terms} (review it; it waits for your signature)", f"pbem sign {a}")
                       for a, terms in view.agreements]
    in_control = status.control == me
    for i, b in enumerate(status.pending):
        if b.player != me:
            continue
        if b.kind == DICE:
            out.append(Todo(f"{b.why}: pbem yield settles it (no need to hold control)", "pbem yield"))
        elif b.kind == SECRET:
            out.append(Todo(f"{b.why}: reveal it (no need to hold control)", view.reveal_command))
        elif b.kind == SEALED:
            out.append(Todo(f"{b.why}: seal {view.sealed_what} (no need to hold control)", view.sealed_command))
        elif b.kind == READY:
            out.append(Todo(f"{b.why}: post your press, then say you are done (no need to hold control)",
                            "pbem ready"))
        elif b.kind == ROLL:
            then = "" if in_control and i == 0 else f" (after {_first_before(status, i)})"
            out.append(Todo(f"{b.why}: {_roll_what(b.why)}{then}", roll_command(b.why, view.sides)))
        elif b.kind == CLARIFY:
            options = ", ".join(" ".join(f"{k}: {v}" for k, v in o.items()) for o in b.options) or "?"
            out.append(Todo(f"answer the special break at {b.at}: add an entry for {b.unit or 'your unit'} with "
                            f"one of: {options}", YIELD))
        elif in_control and i == 0:
            where = f"and your entries in {view.report_file} " if view.report_file else "and your entries "
            out.append(Todo(f"{_why(b.kind, b.why)}: edit players/{me}.yaml (through, breaks) {where}from "
                            f"{status.firm} on", YIELD))
        elif not in_control and not any(t.command == WAIT for t in out):
            out.append(Todo(f"nothing yet: after {status.control} you get control ({b.why})", WAIT))
    if not out or all(t.command.startswith(("pbem erratum", "pbem sign")) for t in out):
        first = status.pending[0] if status.pending else None
        why = f" ({first.why})" if first is not None and first.player == status.control else ""
        owing = simultaneous(status)
        out.append(Todo(f"nothing: waiting for {', '.join(owing)} (all at once, in any order)" if owing else
                        f"nothing: {status.control} holds control{why}", WAIT))
    return out


def simultaneous(status: Status) -> tuple[str, ...]:
    """The players who owe something while nobody holds control for a turn: every pending break is owed without
    control (a sealed step, the press-only first half; DESIGN §4.7), in serving order; empty otherwise."""
    if status.over or not status.pending or any(b.kind not in OUT_OF_TURN for b in status.pending):
        return ()
    return tuple(dict.fromkeys(b.player for b in status.pending))


def control_text(status: Status, me: str | None) -> str:
    """Who holds control, in words: a seat ("fed (you)"), or nobody while every pending break is owed without
    control (status.yaml's `control` then names only the first of those who owe)."""
    owing = simultaneous(status)
    if owing:
        return f"nobody: all at once, {', '.join(_seat(p, me) for p in owing)} still to act, in any order"
    return _seat(status.control or "", me)


def holds_turn(status: Status, player: str | None) -> bool:
    """Whether `player` holds control for a turn now: the first break is his and nothing is owed out of turn
    (protocol.control.takes_turn), not merely a place first among those who owe."""
    pending = status.pending
    return (player is not None and not status.over and bool(pending) and pending[0].player == player
            and not any(b.kind in OUT_OF_TURN for b in pending))


def _first_before(status: Status, i: int) -> str:
    """What is served before the i-th pending break, in words."""
    first = status.pending[0]
    return "what you owe before it" if first.player == status.pending[i].player else f"{first.player}: {first.why}"


# a roll announced with a die of another size than the rules' (protocol/replay.py `_dice_missing`)
_WRONG_DIE = re.compile(r"(\S+) in (\S+), a d(\d+) where the rules roll a d(\d+): void it")


def _roll_what(why: str) -> str:
    """What a roll break asks, in words: to announce dice, to reveal those announced, or to void a wrong die."""
    if _WRONG_DIE.search(why):
        return "void the batch of the wrong die, then roll again"
    if all(" in " in r for r in _roll_refs(why)):
        return "reveal the dice you announced: pbem yield (once the others have contributed)"
    return "announce the dice for your shots, then yield"


def _roll_refs(why: str) -> list[str]:
    listed = _WRONG_DIE.sub("", why.removeprefix("dice owed for ")).split(" (", 1)[0]
    return [r.strip() for r in listed.split(",") if r.strip()]


def roll_command(why: str, sides: int = 6) -> str:
    """`pbem roll` with the real refs of a roll break ("dice owed for 1.4.fire/CA/ph1, 1.4.fire/CA/ph2 (…)"):
    one `--for`/`--ref` pair per roll not announced yet, then yield; for a die of the wrong size, `pbem dice void`
    of its batch first."""
    wrong = _WRONG_DIE.search(why)
    if wrong is not None:
        ref, batch, had, wanted = wrong.groups()
        return (f'pbem dice void {batch} --reason "{ref}: a d{had} where the rules roll a d{wanted}" && pbem yield')
    refs = [r for r in _roll_refs(why) if " in " not in r]
    if not refs:
        return "pbem yield"  # announced already: the roller's reveal settles it
    pairs = " ".join(f'--for "{ref}" --ref {ref}' for ref in refs)
    return f"pbem roll {pairs}" + (f" --sides {sides}" if sides != 6 else "") + " && pbem yield"


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
            table.add_row(str(i), *(_inert(x) for x in (_seat(b.player, view.me), b.at or "", b.kind, b.why)))
        parts.append(table)
    must = Table.grid(padding=(0, 1))
    must.add_column(width=2)
    must.add_column(overflow="fold")
    for todo in todos(view):
        must.add_row("→", _inert(todo.text))
        must.add_row("", Text("$ " + terminal(todo.command), style="bold green"))
    who = view.me if view.me is not None else "no seat"
    parts.append(Panel(must, title=_inert(f"What you ({who}) do next"), title_align="left", border_style="green"))
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
    mine += [f"withheld: {line}" for line in view.withheld]
    if mine:
        parts.append(Text("\n".join(terminal(line) for line in mine)))
    if len(view.units) > 1:
        units = Table(title="Units at the firm point", title_justify="left", box=None, padding=(0, 1),
                      show_edge=False)
        for column in view.units[0]:
            units.add_column(_inert(column))
        for row in view.units[1:]:
            units.add_row(*(_inert(cell) for cell in row))
        parts.append(units)
    return Group(*parts)


def _head(view: StatusView) -> Panel:
    status = view.status
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", width=8)
    grid.add_column(overflow="fold")
    if status is None:
        grid.add_row("SETUP", _inert("seats are being claimed" + (f": {', '.join(view.open_seats)} open"
                                                                  if view.open_seats else ": all taken")))
    elif status.over:
        grid.add_row("OVER", "the game is over")
    else:
        first = None if simultaneous(status) else next((b for b in status.pending if b.player == status.control),
                                                          None)
        control = Text(terminal(control_text(status, view.me)), style="bold yellow")
        if first is not None:
            control.append(f" — {terminal(first.why)}", style="default")
        grid.add_row("CONTROL", control)
        grid.add_row("FIRM", _inert(f"{status.firm}  (entries before it can no longer change)"))
    return Panel(grid, title=_inert(f"{view.game_id} ({view.ruleset}) · {view.title}"), title_align="left",
                 border_style="blue")


def _inert(text: str) -> Text:
    """Text from the repository, shown as it is: control characters escaped (DESIGN §9), and no rich markup
    (a plain str in a table cell or a title would be read as markup: `[green]ok` would paint)."""
    return Text(terminal(text))


def _seat(player: str, me: str | None) -> str:
    return f"{player} (you)" if player == me else player
