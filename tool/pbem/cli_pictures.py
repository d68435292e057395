"""Pictures on the command line (issue 6 points 5 and 6): `pbem render`, and the helpers behind `pbem log --html`
and the terminal screen of `pbem status`. Registered on the main app by `register`; same rules as cli.py: parse
arguments, call services, print; exit 0 success, 1 illegal, 2 usage or environment.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    """Add `pbem render` to `app`."""
    # pbem.cli calls us at the end of its own import, when these are defined
    from pbem.cli import KeyOption, _run, _workspace

    @app.command()
    def render(out: Optional[Path] = typer.Option(None, "--out", help="write the SVG to this file (default: "
                                                                       "print it)"),
               at: Optional[str] = typer.Option(None, "--at", help="the board at this revision (a commit, "
                                                                     "branch, tag or HEAD~N; default: HEAD)"),
               viewer: Optional[str] = typer.Option(None, "--as", help="Diplomacy: colour the other powers' "
                                                                         "territory by their relationship with "
                                                                         "this power (default: your seat)"),
               key: Optional[str] = KeyOption) -> None:
        """Draw the board where replay stopped (the firm point) as SVG.

        Tactical: the hex map with hex numbers, the units with their facing, seeking weapons, and the `range`
        break conditions of the players holding pending breaks as rings. Diplomacy: the engine's map with the
        last phase's orders and the relationship matrix.

        Example: pbem render --out board.svg    or    pbem render --at HEAD~3 --out before.svg
        """
        from pbem.services import pictures

        def go() -> None:
            ws = _workspace()
            svg = pictures.render_at(ws.repo, at, viewer if viewer is not None else _my_seat(ws, key))
            if out is None:
                sys.stdout.write(svg)
                return
            out.write_text(svg, encoding="utf-8")
            typer.echo(f"wrote {out}")

        _run(go)


def _my_seat(ws, key: Optional[str]) -> Optional[str]:  # type: ignore[no-untyped-def]
    """My seat by my key, or None when no key is found or it holds no seat (a picture needs no key)."""
    from pbem.cli import _identity
    from pbem.errors import PbemError
    from pbem.services import turn

    try:
        return turn.whoami(ws, _identity(key))
    except PbemError:
        return None


def log_html(out: Optional[Path], at: Optional[str]) -> None:
    """`pbem log --html`: the game as one self-contained HTML page, to `out` or stdout."""
    from pbem.cli import _run, _workspace
    from pbem.services import pictures

    def go() -> None:
        page = pictures.html_at(_workspace().repo, at)
        if out is None:
            sys.stdout.write(page)
            return
        out.write_text(page, encoding="utf-8")
        typer.echo(f"wrote {out}: open it in a browser")

    _run(go)


def status_screen(ws, me: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    """`pbem status` on a terminal (or with --rich): one screen, rendered with rich."""
    from rich.console import Console

    from pbem.render.status_screen import screen
    from pbem.services import pictures

    Console(highlight=False).print(screen(pictures.status_view(ws, me)))
