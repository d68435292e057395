"""`pbem watch`: the autopilot that keeps a clone current, settles what needs no decision and tells the player
when a decision is his (DESIGN §8; docs/watch.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pbem.cli.options import KeyOption, identity, run, workspace

commands = typer.Typer()


@commands.command()
def watch(once: bool = typer.Option(False, "--once", help="one round, then exit (for cron): 0, or 1 if "
                                                          "something it tried was refused"),
          interval: float = typer.Option(60.0, "--interval", min=0.1, help="seconds between rounds"),
          remote: Optional[str] = typer.Option(None, "--remote", help="the git remote (default: the branch's, "
                                                                      "else origin)"),
          config: Optional[Path] = typer.Option(None, "--config", help="TOML file with an \\[smtp] table (else "
                                                "PBEM_WATCH_CONFIG, else ~/.config/pbem/watch.toml)"),
          key: Optional[str] = KeyOption) -> None:
    """Keep your clone current, settle what needs no decision (dice, due reveals; the escrow's signatures
    with the escrow key), push it, and tell you once about each decision that is yours. Never writes orders,
    entries, press or signatures on agreements. Ctrl-C stops it.

    Example: pbem watch --interval 120
    """
    from pbem.services import watch as service

    def go() -> int:
        ws = workspace(lock=False)
        me = identity(key)
        notifier = service.Notifier(typer.echo, service.environment_smtp(config))
        return service.watch(ws.root, me, notifier, once=once, interval=interval, remote=remote)

    raise typer.Exit(run(go))
