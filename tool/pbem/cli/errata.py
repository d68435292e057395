"""`pbem erratum …`: correct the firm part of the report with every player's signature (DESIGN §4.8, seed §4.A)."""

from __future__ import annotations

from typing import Optional

import typer

from pbem.cli.options import (KeyOption, ReadFormat, data_lines, emit_json, erratum_said as said, identity, json_option,
                              run, workspace)

commands = typer.Typer()
errata_app = typer.Typer(help="Errata: correct an error before the firm marker, signed by every active player "
                         "(an agreement of kind erratum).",
                         no_args_is_help=True)


@errata_app.command("propose")
def propose(reason: str = typer.Option(..., "--reason", help="what was wrong, for the other players"),
            key: Optional[str] = KeyOption) -> None:
    """Turn your edits of firm report entries into an erratum signed by you (agreements/<you>-NNNN.yaml, kind
    erratum), and commit it; the report goes back to what is firm until every active player has signed (the
    same as `pbem agree erratum --reason TEXT`). You need not hold control.

    Example: (edit report/turn-01.yaml as it should read) pbem erratum propose --reason "CA turned TR, not TL"
    """
    from pbem.services import errata

    run(lambda: said(errata.propose(workspace(), identity(key), reason)))


@errata_app.command("sign")
def sign(erratum: str = typer.Argument(..., help="the erratum's id, e.g. fed-0001"),
         key: Optional[str] = KeyOption) -> None:
    """Sign an erratum (review it first with `pbem erratum show`); the last signature applies it.

    Example: pbem erratum show fed-0001 && pbem erratum sign fed-0001
    """
    from pbem.services import errata

    run(lambda: said(errata.sign(workspace(), identity(key), erratum)))


@errata_app.command("apply")
def apply(erratum: str = typer.Argument(..., help="the erratum's id, e.g. fed-0001"),
          key: Optional[str] = KeyOption) -> None:
    """An erratum takes effect with its last signature (`pbem erratum sign` or `pbem sign`): this says who still
    has to sign it.

    Example: pbem erratum apply fed-0001
    """
    from pbem.services import errata

    run(lambda: said(errata.apply(workspace(), identity(key), erratum)))


@errata_app.command("show")
def show(erratum: Optional[str] = typer.Argument(None, help="an erratum's id (default: list them all)"),
         output: ReadFormat = json_option()) -> None:
    """An erratum's reason, entries and signatures, or the list of errata with who still has to sign.

    Example: pbem erratum show    or    pbem erratum show fed-0001    or    pbem erratum show --format json
    """
    from pbem.services import errata

    def go() -> str:
        ws = workspace()
        game = ws.game_of(ws.head_files())
        if output is ReadFormat.json:
            emit_json({"erratum": erratum, "errata": errata.listing(game),
                       "shown": errata.show(game, erratum).splitlines() if erratum is not None else []})
            return ""
        if erratum is not None:
            return errata.show(game, erratum)
        lines = errata.listing(game)
        return "\n".join(lines) + "\n" if lines else "no errata\n"

    typer.echo(data_lines(run(go)), nl=False)


commands.add_typer(errata_app, name="erratum")
