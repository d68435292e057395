"""The `pbem` command line (DESIGN §8): parse arguments, call services, print. No rules here.

Exit codes: 0 success/legal, 1 illegal or verification failed, 2 usage or environment error. Every user
mistake is one clear line on stderr (PbemError), never a traceback.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Callable, List, Optional, TypeVar

import typer

from pbem import __version__
from pbem.errors import ILLEGAL, USAGE, PbemError

app = typer.Typer(
    help="pbem: self-moderated play-by-email games on git. Signed turns, verified rules.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # keys live in locals
    add_completion=True,
)

T = TypeVar("T")


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"


KeyOption = typer.Option(None, "--key", help="private key file (else PBEM_KEY, git user.signingkey, "
                         "~/.ssh/id_ed25519)")


def _run(action: Callable[[], T]) -> T:
    try:
        return action()
    except PbemError as exc:
        typer.echo(f"pbem: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None


def _workspace():  # type: ignore[no-untyped-def]
    from pbem.services.workspace import Workspace

    return Workspace.open(Path.cwd())


def _identity(key: Optional[str]):  # type: ignore[no-untyped-def]
    from pbem.services.workspace import load_identity

    return load_identity(key, Path.cwd())


@app.command()
def version() -> None:
    """Print the pbem version.  Example: pbem version"""
    typer.echo(__version__)


@app.command()
def keygen(out: Path = typer.Option(Path.home() / ".ssh" / "id_ed25519", "--out", help="where to write the key"),
           comment: str = typer.Option("", "--comment", help="comment for the public key")) -> None:
    """Write a new OpenSSH Ed25519 key pair (private file 0600, and PATH.pub); print the public key line.

    Example: pbem keygen --out ~/.ssh/pbem_ed25519
    """
    from pbem.crypto.keys import PrivateKey, write_keypair

    def go() -> None:
        key = PrivateKey.generate(comment)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_keypair(out, key)
        typer.echo(key.public.to_line())

    _run(go)


@app.command()
def init(directory: Path = typer.Argument(..., help="new folder for the game repository"),
         template: str = typer.Option("tactical-duel", "--template", help="a template in games/ or a folder"),
         game_id: str = typer.Option(..., "--id", help="the game's id (lower-case, digits, '-')"),
         pbem_spec: Optional[str] = typer.Option(None, "--pbem-spec",
                                                 help="pip requirement the workflow installs (default: this "
                                                      "version)"),
         key: Optional[str] = KeyOption) -> None:
    """Create a game repository from a template, with README and the enforcing workflow.

    Example: pbem init duel-1 --template tactical-duel --id duel-1
    """
    from pbem.services import setup

    def go() -> None:
        ws = setup.init(directory, template, game_id, _identity(key), pbem_spec)
        typer.echo(f"created {directory} ({game_id}); players now run `pbem join --as ID` there")

    _run(go)


@app.command()
def join(seat: str = typer.Option(..., "--as", help="the seat (player id) to claim"),
         key: Optional[str] = KeyOption) -> None:
    """Claim a seat with your public key (a commit signed by that key).

    Example: pbem join --as kli --key ~/.ssh/pbem_ed25519
    """
    from pbem.services import setup

    _run(lambda: setup.join(_workspace(), seat, _identity(key)))
    typer.echo(f"you hold seat {seat}")


@app.command()
def start(first: str = typer.Option(..., "--first", help="the player who starts in control"),
          key: Optional[str] = KeyOption) -> None:
    """Freeze game.yaml and give control to the first player.

    Example: pbem start --first fed
    """
    from pbem.services import setup

    _run(lambda: setup.start(_workspace(), first, _identity(key)))
    typer.echo(f"started: {first} has control")


@app.command()
def status(key: Optional[str] = KeyOption,
           output: OutputFormat = typer.Option(OutputFormat.text, "--format")) -> None:
    """Who is in control, the firm point, pending breaks, and what you owe next.

    Example: pbem status
    """
    import json

    from pbem.services import turn

    def go() -> None:
        ws = _workspace()
        try:
            me = _identity(key)
        except PbemError:
            me = None
        view = turn.outlook(ws, me)
        if output is OutputFormat.json:
            typer.echo(json.dumps({"status": view.status.to_data() if view.status else None, "me": view.me,
                                   "you_owe": view.owes()}, indent=2))
            return
        typer.echo(_status_lines(view.status, view.me))
        typer.echo(f"you ({view.me or 'no seat'}) owe: {view.owes()}")

    _run(go)


def _status_lines(status, me) -> str:  # type: ignore[no-untyped-def]
    if status is None:
        return "setting up: seats are being claimed"
    if status.over:
        return "the game is over"
    lines = [f"control: {status.control}" + (" (you)" if status.control == me else ""), f"firm:    {status.firm}"]
    for b in status.pending:
        lines.append(f"break:   {b.player} at {b.at} — {b.why}")
    if status.note:
        lines.append(f"note:    {status.yielded_by}: {status.note}")
    return "\n".join(lines)


@app.command()
def check(key: Optional[str] = KeyOption) -> None:
    """Judge the working tree as if you committed it now: what is illegal, who would get control.

    Example: pbem check
    """
    from pbem.services import turn

    def go() -> int:
        view = turn.check(_workspace(), _identity(key))
        for f in view.findings:
            typer.echo(f.text())
        if view.would_be is not None:
            typer.echo("if you yield now:\n" + _status_lines(view.would_be, view.me))
        return ILLEGAL if view.findings else 0

    code = _run(go)
    raise typer.Exit(code)


@app.command("yield")
def yield_(message: str = typer.Option("", "-m", "--message", help="the yield note for the other players"),
           key: Optional[str] = KeyOption) -> None:
    """Write status.yaml as replay computes it and commit your turn, signed.

    Example: pbem yield -m "closing to range 8"
    """
    from pbem.services import turn

    def go() -> None:
        oid, new = turn.yield_turn(_workspace(), _identity(key), message)
        typer.echo(f"committed {oid[:10]}")
        typer.echo(_status_lines(new, None))

    _run(go)


@app.command()
def verify(revisions: Optional[str] = typer.Argument(None, help="a revision range BASE..HEAD (default: all)"),
           output: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text, json or github")) -> None:
    """Verify the game's history: signatures, schemas, ownership, firm marker, progress, status, rules.

    Example: pbem verify --format github    or    pbem verify origin/main..HEAD
    """
    from pbem.services import report
    from pbem.services.ranges import verify_range

    def go() -> int:
        findings, count = verify_range(_workspace(), revisions)
        render = {OutputFormat.text: report.findings_text, OutputFormat.json: report.findings_json,
                  OutputFormat.github: report.findings_github}[output]
        sys.stdout.write(render(findings, count))
        return ILLEGAL if findings else 0

    raise typer.Exit(_run(go))


@app.command("allowed-signers")
def allowed_signers() -> None:
    """Print the players' keys as a git allowed-signers file (for `git verify-commit`).

    Example: pbem allowed-signers > .git/allowed_signers && git -c gpg.ssh.allowedSignersFile=.git/allowed_signers verify-commit HEAD
    """
    from pbem.services.ranges import allowed_signers_text

    typer.echo(_run(lambda: allowed_signers_text(_workspace())), nl=False)


@app.command()
def log() -> None:
    """The game report as text, with the `<-- firm to here -->` marker.

    Example: pbem log
    """
    from pbem.services import report

    typer.echo(_run(lambda: report.log_text(_workspace().history())), nl=False)


@app.command()
def demo(directory: Optional[Path] = typer.Argument(None, help="where to build the demo game (default: a "
                                                                 "temporary folder)"),
         game: str = typer.Option("tactical-duel", "--game", help="which example game to play")) -> None:
    """Play a complete example game from games/ with generated keys, verify it, print the log.

    Example: pbem demo /tmp/duel
    """
    from pbem.services.demo import run_demo

    raise typer.Exit(_run(lambda: run_demo(directory, game, typer.echo)))


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point."""
    try:
        app(args=argv, prog_name="pbem")
    except PbemError as exc:  # pragma: no cover - commands catch their own
        typer.echo(f"pbem: {exc}", err=True)
        sys.exit(exc.exit_code if exc.exit_code in (ILLEGAL, USAGE) else USAGE)


if __name__ == "__main__":  # pragma: no cover
    main()
