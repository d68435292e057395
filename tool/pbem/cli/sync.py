"""Keeping a clone in step with the shared repository (DESIGN §4.9, §8): `pbem pull`."""

from __future__ import annotations

from typing import Optional

import typer

from pbem.cli.options import my_seat, run, workspace
from pbem.services.workspace import Workspace

commands = typer.Typer()


@commands.command()
def pull(remote: Optional[str] = typer.Option(None, "--remote", help="the git remote (default: the branch's, "
                                                                      "else origin)")) -> None:
    """Fetch the shared branch and fast-forward to it, or say exactly what to do: your own unpublished commits
    (`pbem push` replays them), uncommitted edits in the way, a remote that rewrote its history (refused).

    Example: pbem pull && pbem status
    """
    from pbem.services.pull import pull as service

    def go() -> None:
        ws = workspace()
        typer.echo(service(ws, remote).message)
        from pbem.services import setup

        for path in setup.write_starters(Workspace.open(ws.root), my_seat(ws, None)):
            typer.echo(f"wrote {path} for your turn (with comments: edit it, then `pbem check && pbem yield`)")

    run(go)
