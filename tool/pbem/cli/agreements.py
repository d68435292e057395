"""Agreements (DESIGN §4.8): `pbem sign ID` adds my signature to an agreement, out of turn."""

from __future__ import annotations

from typing import Optional

import typer

from pbem.cli.options import KeyOption, identity, run, workspace

commands = typer.Typer()


@commands.command()
def sign(agreement: str = typer.Argument(..., help="the agreement's id, e.g. fed-0001"),
         key: Optional[str] = KeyOption) -> None:
    """Sign an agreement (review it first: `pbem status`, and for a start agreement game.yaml itself); one
    commit that adds your signature and nothing else. You need not hold control.

    Example: pbem sign fed-0001
    """
    from pbem.services import agreements

    def go() -> None:
        done = agreements.sign(workspace(), identity(key), agreement)
        waiting = f"waiting for {', '.join(done.unsigned)}" if done.unsigned else "every signer has signed"
        start = done.kind == "start" and not done.unsigned
        extra = " (start the game with `pbem start`, as proposed)" if start else ""
        typer.echo(f"signed {done.agreement}: {waiting}{extra}")

    run(go)
