"""Taking a turn (DESIGN §4, §8): `pbem status`, `pbem check`, `pbem yield`."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from pbem.cli.options import (KeyOption, OutputFormat, ReadFormat, emit_json, findings_records, identity, json_option,
                              run, say_behind, status_lines, status_record, workspace)
from pbem.errors import ILLEGAL, PbemError

commands = typer.Typer()


@commands.command()
def status(key: Optional[str] = KeyOption,
           output: OutputFormat = typer.Option(OutputFormat.text, "--format"),
           rich: Optional[bool] = typer.Option(None, "--rich/--plain",
                                               help="one screen with colours, or plain lines (default: rich on "
                                                    "a terminal, plain otherwise)"),
           fetch: bool = typer.Option(False, "--fetch", help="fetch the shared repository first (without it, "
                                                             "status never touches the network and says when "
                                                             "it may be behind)")) -> None:
    """Who is in control, the firm point, pending breaks, and what you owe next (with the command to do it).

    Example: pbem status    or    pbem status --plain    or    pbem status --fetch
    """
    from pbem.text import terminal
    from pbem.services import turn

    def go() -> None:
        from pbem.render.status_screen import todos
        from pbem.services import gitstate, pictures

        ws = workspace()
        if fetch:
            failed = gitstate.refresh(ws.repo)
            if failed:
                typer.echo(failed, err=True)
        try:
            me = identity(key)
        except PbemError:
            me = None
        view = turn.outlook(ws, me)
        errata = turn.errata_lines(ws)
        withheld = turn.withheld_lines(ws)
        signs, waits, result = agreement_lines(ws, view.me)
        if rich or (rich is None and sys.stdout.isatty() and output is not OutputFormat.json):
            status_screen(ws, view.me)
            return
        todo = todos(pictures.status_view(ws, view.me)) if ws.repo.head_oid() else []
        behind = gitstate.behind_line(ws.repo)
        if output is OutputFormat.json:
            emit_json({"sign": signs, "status": status_record(view.status), "me": view.me,
                       "you_owe": "; ".join(f"{t.text}: `{t.command}`" for t in todo) or view.owes(),
                       "errata": errata, "withheld": withheld, "behind": behind,
                       "void": [v.text() for v in view.voids], "warnings": list(view.warnings),
                       "todo": [{"do": t.text, "command": t.command} for t in todo],
                       "waits": waits, "result": result})
            return
        for line in signs:  # a missing signature first: the agreement waits for nobody else
            typer.echo(terminal(line))
        typer.echo(status_lines(view.status, view.me))
        if result:
            typer.echo(f"result:  {terminal(result)}")
        for line in waits:
            typer.echo(f"waits:   {terminal(line)}")
        for line in errata:
            typer.echo(f"erratum: {terminal(line)}")
        for line in withheld:
            typer.echo(f"withheld: {terminal(line)}")
        from pbem.services.seat_record import record_lines  # a seat taken over: the old player's record apart

        for line in record_lines(ws):
            typer.echo(terminal(line))
        for line in turn.void_lines(view):
            typer.echo(terminal(line))
        for line in view.warnings:
            typer.echo(terminal(line))
        if behind:
            typer.echo(f"behind:  {terminal(behind)}")
        if view.status is None:  # setting up: the step towards the start, with its command in the sentence
            typer.echo(f"you ({view.me or 'no seat'}) owe: {terminal(view.owes())}")
        for t in todo if view.status is not None else []:
            typer.echo(f"you ({view.me or 'no seat'}) owe: {terminal(t.text)}\n  $ {terminal(t.command)}")

    run(go)


def agreement_lines(ws, me: Optional[str]) -> tuple[list[str], list[str], Optional[str]]:  # type: ignore[no-untyped-def]
    """The agreements waiting for my signature ("sign ID …"), the waits of owed items, the game's result."""
    from pbem.services import agreements, deadlines

    head = ws.head()
    if head is None or head.game.status is None:
        return [], [], None
    oid = ws.repo.head_oid()
    waits = [w.text() for w in deadlines.waits(ws.repo, oid)] if oid else []
    return agreements.to_sign(head.game, me), waits, agreements.result(head.game)


def status_screen(ws, me: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    """`pbem status` on a terminal (or with --rich): one screen, rendered with rich."""
    from rich.console import Console

    from pbem.render.status_screen import screen
    from pbem.services import pictures

    Console(highlight=False).print(screen(pictures.status_view(ws, me)))


@commands.command()
def check(key: Optional[str] = KeyOption, output: ReadFormat = json_option()) -> None:
    """Judge the working tree as if you committed it now: what is illegal, who would get control.

    Example: pbem check    or    pbem check --format json
    """
    from pbem.text import terminal
    from pbem.services import turn

    def go() -> int:
        from pbem.services import gitstate

        ws = workspace()
        view = turn.check(ws, identity(key))
        behind = gitstate.behind_line(ws.repo)
        if output is ReadFormat.json:
            emit_json({"ok": not view.findings, "me": view.me, "findings": findings_records(view.findings),
                       "warnings": list(view.warnings), "behind": behind,
                       "would_commit": view.plan.lines() if view.plan is not None and not view.findings else [],
                       "would_be": status_record(view.would_be), "positions": list(view.positions),
                       "positions_at": ("end" if view.outcome else "firm") if view.positions else None,
                       "outcome": view.outcome or None})
            return ILLEGAL if view.findings else 0
        if behind:
            typer.echo(f"behind: {behind}")
        for f in view.findings:
            typer.echo(f.text())
        for line in view.warnings:
            typer.echo(terminal(line))
        if view.plan is not None and not view.findings:
            typer.echo("pbem yield would make:\n" + "\n".join(f"  {line}" for line in view.plan.lines()))
        if view.would_be is not None:
            typer.echo("if you yield now:\n" + status_lines(view.would_be, view.me))
        if view.positions:
            typer.echo("where the units stand " + ("at the end:" if view.outcome else "where replay stops:"))
            for line in view.positions:
                typer.echo(f"  {line}")
        if view.outcome:
            typer.echo(f"outcome: {view.outcome}")
        return ILLEGAL if view.findings else 0

    code = run(go)
    raise typer.Exit(code)


@commands.command("yield")
def yield_(message: str = typer.Option("", "-m", "--message", help="the yield note for the other players"),
           key: Optional[str] = KeyOption) -> None:
    """Write status.yaml as replay computes it and commit your turn, signed.

    Example: pbem yield -m "closing to range 8"
    """
    from pbem.services import pictures, turn

    def go() -> None:
        ws = workspace()
        plan = turn.plan_yield(ws, identity(key), message)
        oid, new = turn.write_yield(ws, plan)
        typer.echo(f"committed {oid[:10]}")
        say_behind(ws)  # what follows is judged on this clone: `pbem push` replays it onto what landed meanwhile
        if len(plan.commits) > 1 or plan.kept:
            for line in plan.lines():
                typer.echo(f"  {line}")
        if new is not None:
            typer.echo(status_lines(new, None))
            for line in pictures.picture_lines(plan.judged.game.manifest.ruleset_name if plan.judged else ""):
                typer.echo(line)
        elif plan.commits and plan.commits[0].settled:
            typer.echo("settled your dice for who starts")
        else:
            typer.echo("committed your setup edits (the game has not started yet: every seated player consents "
                       "to the final game.yaml at the start)")

    run(go)
