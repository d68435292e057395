"""The `pbem` command line (DESIGN §8): parse arguments, call services, print. No rules here.

One module per command group, each with its own `commands`; they share options.py, which imports none of them
back. Exit codes: 0 success/legal, 1 illegal or verification failed, 2 usage or environment error. Every user
mistake is one clear line on stderr (PbemError), never a traceback.
"""

from __future__ import annotations

import gc
import sys
from typing import List, Optional

_COLLECTING = gc.isenabled()
gc.disable()  # importing the command line makes some hundred thousand objects, none of them garbage
import typer

from pbem.cli import agreements, chance, dow, enforce, errata, play, report, setup, sync, watch
from pbem.errors import ILLEGAL, USAGE, PbemError

gc.freeze()  # and no later collection need look at them again, nor the one at exit: 0.03 s of CPU a command
if _COLLECTING:
    gc.enable()

app = typer.Typer(
    help="pbem: self-moderated play-by-email games on git. Signed turns, verified rules.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # keys live in locals
    add_completion=True,
)
for group in (setup, agreements, play, chance, report, enforce, sync, watch, dow, errata):
    app.add_typer(group.commands)


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point."""
    for stream in (sys.stdout, sys.stderr):
        # a path or note in a finding may hold any bytes a git tree allows: show them, never crash on them
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    try:
        app(args=argv, prog_name="pbem")
    except PbemError as exc:  # pragma: no cover - commands catch their own
        typer.echo(f"pbem: {exc}", err=True)
        sys.exit(exc.exit_code if exc.exit_code in (ILLEGAL, USAGE) else USAGE)


if __name__ == "__main__":  # pragma: no cover
    main()
