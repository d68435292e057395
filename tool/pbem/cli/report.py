"""Reading a game (DESIGN §8): `pbem verify`, `pbem log`, `pbem render`, `pbem summary`, `pbem allowed-signers`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from pbem.cli.options import KeyOption, OutputFormat, my_seat, run, workspace
from pbem.errors import ILLEGAL

commands = typer.Typer()


@commands.command()
def verify(revisions: Optional[str] = typer.Argument(None, help="a revision range BASE..HEAD (default: all)"),
           output: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text, json or github")) -> None:
    """Verify the game's history: signatures, schemas, ownership, firm marker, progress, status, rules.

    Example: pbem verify --format github    or    pbem verify origin/main..HEAD
    """
    from pbem.services import report
    from pbem.services.ranges import verify_range

    def go() -> int:
        findings, count = verify_range(workspace(), revisions)
        render = {OutputFormat.text: report.findings_text, OutputFormat.json: report.findings_json,
                  OutputFormat.github: report.findings_github}[output]
        sys.stdout.write(render(findings, count))
        return ILLEGAL if findings else 0

    raise typer.Exit(run(go))


@commands.command("allowed-signers")
def allowed_signers() -> None:
    """Print the players' keys as a git allowed-signers file (for `git verify-commit`).

    Example: pbem allowed-signers > .git/allowed_signers && git -c gpg.ssh.allowedSignersFile=.git/allowed_signers verify-commit HEAD
    """
    from pbem.services.ranges import allowed_signers_text

    typer.echo(run(lambda: allowed_signers_text(workspace())), nl=False)


@commands.command()
def log(html: bool = typer.Option(False, "--html", help="one self-contained HTML page: the report, dice, secrets "
                                                        "and the map at each handoff (a long game: pbem site DIR)"),
        out: Optional[Path] = typer.Option(None, "--out", help="write to this file (default: print)"),
        at: Optional[str] = typer.Option(None, "--at", help="the game as it stood at this revision (default: "
                                                            "HEAD)")) -> None:
    """The game report as text, with the `<-- firm to here -->` marker (or as an HTML page with the maps).

    Example: pbem log    or    pbem log --html --out game.html
    """
    if html:
        log_html(out, at)
        return
    from pbem.services import report
    from pbem.verify.history import verify_history

    def go() -> str:
        ws = workspace()
        text = report.log_text(verify_history(ws.repo, ws.repo.resolve(at)) if at else ws.history())
        if out is not None:
            out.write_text(text, encoding="utf-8")
            return f"wrote {out}\n"
        return text

    typer.echo(run(go), nl=False)


def log_html(out: Optional[Path], at: Optional[str]) -> None:
    """`pbem log --html`: the game as one self-contained HTML page, to `out` or stdout."""
    from pbem.services import pictures

    def go() -> None:
        page = pictures.html_at(workspace().repo, at)
        if out is None:
            sys.stdout.write(page)
            return
        out.write_text(page, encoding="utf-8")
        typer.echo(f"wrote {out}: open it in a browser (a long game opens faster as a site: pbem site DIR)")

    run(go)


@commands.command()
def site(folder: Path = typer.Argument(..., help="the folder to write the site into (new, empty, or a site "
                                                 "written before)"),
         at: Optional[str] = typer.Option(None, "--at", help="the game as it stood at this revision (default: "
                                                             "HEAD)")) -> None:
    """The game as a static site that steps through every commit: the map, the report lines, who held control.

    Open DIR/index.html from disk, or publish DIR as it is (GitHub Pages: docs/pictures.md). ←/→ step one
    commit, PageUp/PageDown one turn or phase, Home/End to the ends; DIR/index.html#N opens commit N.

    Example: pbem site game-site    or    pbem site game-site --at HEAD~10
    """
    from pbem.services.site import write_site

    def go() -> None:
        count = write_site(workspace().repo, folder, at)
        typer.echo(f"wrote {folder}/index.html: {count} commits; open it in a browser")

    run(go)


@commands.command()
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
        ws = workspace()
        svg = pictures.render_at(ws.repo, at, viewer if viewer is not None else my_seat(ws, key))
        if out is None:
            sys.stdout.write(svg)
            return
        out.write_text(svg, encoding="utf-8")
        typer.echo(f"wrote {out}")

    run(go)


@commands.command()
def summary(revisions: Optional[str] = typer.Argument(None, help="BASE..HEAD, or one revision for its whole "
                                                                     "history (default: HEAD's)"),
            markdown: bool = typer.Option(False, "--markdown", help="GitHub Markdown (pull request "
                                                                   "description, job summary)")) -> None:
    """What a range of commits did: who acted, files, entries, dice and secrets, who holds control now,
    and any findings (each commit judged against the full history before it). Exit 1 when there are findings.

    Example: pbem summary origin/main..HEAD --markdown >> "$GITHUB_STEP_SUMMARY"
    """
    from pbem.services import summary as service
    from pbem.store.repo import GameRepo

    def go() -> int:
        result = service.summarize(GameRepo.open(Path.cwd()), revisions)
        sys.stdout.write(service.markdown(result) if markdown else service.text(result))
        return 0 if result.ok else 1

    raise typer.Exit(run(go))
