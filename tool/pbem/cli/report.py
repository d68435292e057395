"""Reading a game (DESIGN §8): `pbem verify`, `pbem log`, `pbem render`, `pbem summary`, `pbem allowed-signers`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from pbem.cli import fast
from pbem.cli.options import (KeyOption, OutputFormat, ReadFormat, emit_json, findings_records, json_option, my_seat,
                              run, status_record, workspace, write_out)

commands = typer.Typer()


@commands.command()
def verify(revisions: Optional[str] = typer.Argument(None, help="a revision range BASE..HEAD (default: all)"),
           output: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text, json or github")) -> None:
    """Verify the game's history: signatures, schemas, ownership, firm marker, progress, status, rules.

    Example: pbem verify --format github    or    pbem verify origin/main..HEAD
    """
    raise typer.Exit(run(lambda: fast.verify(revisions, output.value)))


@commands.command("allowed-signers")
def allowed_signers(output: ReadFormat = json_option()) -> None:
    """Print the players' keys as a git allowed-signers file (for `git verify-commit`).

    Example: pbem allowed-signers > .git/allowed_signers && git -c gpg.ssh.allowedSignersFile=.git/allowed_signers verify-commit HEAD
    """
    from pbem.services.ranges import allowed_signers_text, signer_keys

    if output is ReadFormat.json:
        run(lambda: emit_json({"signers": [{"principal": who, "key": key.to_line(), "fingerprint": key.fingerprint()}
                                           for who, key in signer_keys(workspace())]}))
        return
    typer.echo(run(lambda: allowed_signers_text(workspace())), nl=False)


@commands.command()
def log(html: bool = typer.Option(False, "--html", help="one self-contained HTML page: the report, dice, secrets "
                                                        "and the map at each handoff (a long game: pbem site DIR)"),
        out: Optional[Path] = typer.Option(None, "--out", help="write to this file (default: print)"),
        at: Optional[str] = typer.Option(None, "--at", help="the game as it stood at this revision (default: "
                                                            "HEAD)"),
        output: ReadFormat = json_option()) -> None:
    """The game report as text, with the `<-- firm to here -->` marker (or as an HTML page with the maps).

    Example: pbem log    or    pbem log --html --out game.html    or    pbem log --format json
    """
    if html:
        log_html(out, at)
        return
    from pbem.services import report
    from pbem.verify.history import verify_history

    def go() -> str:
        ws = workspace()
        history = verify_history(ws.repo, ws.repo.resolve(at)) if at else ws.history()
        text = report.log_text(history)
        if output is ReadFormat.json:
            text = json_text(log_record(history, text))
        if out is not None:
            out.write_text(text, encoding="utf-8")
            return f"wrote {out}\n"
        return text

    write_out(run(go))


def json_text(data: dict[str, Any]) -> str:
    from pbem.text import JSON_FORMAT, json_dumps

    return json_dumps({"format": JSON_FORMAT, **data}, indent=2) + "\n"


def log_record(history: Any, text: str) -> dict[str, Any]:
    """`pbem log --format json`: the game, its entries with the firm point, the handoffs, the status, and the
    report's lines as `pbem log` prints them."""
    last = history.last
    manifest = last.game.manifest if last is not None else None
    firm = last.stop.checkpoint.point if last is not None and last.stop and not last.stop.over else None
    seats = manifest.players if manifest else ()
    entries = sorted(last.game.inputs.entries, key=lambda e: (e.at, seats.index(e.by) if e.by in seats else 99)) \
        if last is not None else []  # in the report's order
    return {
        "game": manifest.id if manifest else None, "title": manifest.title if manifest else None,
        "ruleset": manifest.ruleset_name if manifest else None,
        "players": [{"id": s.id, "name": s.name} for s in manifest.seats] if manifest else [],
        "firm": manifest.ruleset.format_time(firm) if manifest and firm is not None else None,
        "entries": [{"at": e.at_text, "by": e.by, "unit": e.unit, "do": dict(e.do),
                     "firm": firm is None or e.at < firm} for e in entries],
        "handoffs": [{"commit": c.oid, "by": c.actor, "summary": c.summary,
                      "control": c.status.control if c.status is not None else None,
                      "over": c.status.over if c.status is not None else False} for c in history.commits],
        "status": status_record(last.game.status if last is not None else None),
        "lines": text.splitlines(),
    }


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
           phase: Optional[str] = typer.Option(None, "--phase", help="Diplomacy: the map of this phase "
                                                                       "(default: the last one played)"),
           before: Optional[bool] = typer.Option(None, "--before/--after", help="Diplomacy: the phase's orders "
                                                 "on the positions before its adjudication, or its result "
                                                 "after it (the default)"),
           key: Optional[str] = KeyOption) -> None:
    """Draw the board where replay stopped (the firm point) as SVG.

    Tactical: the hex map with hex numbers; the units with facing, speed, hull and a ring of their six shields
    (damaged ones with what is left); the trails and the fire (weapon, die, damage) of the last impulses; seeking
    weapons with their path (and target, once revealed); where units gone were last seen; and the `range` break
    conditions of the players holding pending breaks as rings. Diplomacy: the engine's map with the
    last phase's orders in each power's colour (failed ones marked), its dislodged units with their retreat
    options, and the relationship matrix; `--phase P --before` shows a phase on the positions it was played
    from.

    Example: pbem render --out board.svg    or    pbem render --phase S1901M --before --out orders.svg
    """
    from pbem.services import outfile, pictures

    def go() -> None:
        if out is not None:
            outfile.check(out)  # before the history is read: a missing folder is said at once
        ws = workspace()
        moment = None if before is None else "before" if before else "after"
        svg = pictures.render_at(ws.repo, at, viewer if viewer is not None else my_seat(ws, key), phase, moment)
        if out is None:
            sys.stdout.write(svg)
            return
        outfile.write(out, svg)
        typer.echo(f"wrote {out}")

    run(go)


@commands.command()
def summary(revisions: Optional[str] = typer.Argument(None, help="BASE..HEAD, or one revision for its whole "
                                                                     "history (default: HEAD's)"),
            markdown: bool = typer.Option(False, "--markdown", help="GitHub Markdown (pull request "
                                                                   "description, job summary)"),
            output: ReadFormat = json_option()) -> None:
    """What a range of commits did: who acted, files, entries, dice and secrets, who holds control now,
    and any findings (each commit judged against the full history before it). Exit 1 when there are findings.

    Example: pbem summary origin/main..HEAD --markdown >> "$GITHUB_STEP_SUMMARY"
    """
    from pbem.services import summary as service
    from pbem.store.repo import GameRepo

    def go() -> int:
        result = service.summarize(GameRepo.open(Path.cwd()), revisions)
        if output is ReadFormat.json:
            emit_json(summary_record(result))
        else:
            write_out(service.markdown(result) if markdown else service.text(result))
        return 0 if result.ok else 1

    raise typer.Exit(run(go))


def summary_record(result: Any) -> dict[str, Any]:
    """`pbem summary --format json` (services/summary.py `Summary`)."""
    return {
        "ok": result.ok, "title": result.title or None, "base": result.base, "tip": result.tip,
        "started": result.started, "merges": result.merges, "hidden": result.hidden,
        "commits": [{"commit": c.oid, "actor": c.actor, "message": c.message, "files": list(c.files),
                     "entries": list(c.entries), "events": list(c.events), "then": c.then or None,
                     "findings": findings_records(c.findings)} for c in result.commits],
        "status": status_record(result.status), "findings": findings_records(result.findings),
        "shots": list(result.shots), "outcome": result.outcome,
    }
