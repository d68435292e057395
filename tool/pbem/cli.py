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
        setup.init(directory, template, game_id, _identity(key), pbem_spec)
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
def start(first: Optional[str] = typer.Option(None, "--first", help="the player who starts in control"),
          roll: bool = typer.Option(False, "--roll", help="decide who starts by dice (run it again once rolled)"),
          key: Optional[str] = KeyOption) -> None:
    """Freeze game.yaml and give control to the first player, chosen by consent or by dice.

    Example: pbem start --first fed    or    pbem start --roll
    """
    from pbem.services import setup

    def go() -> None:
        if roll == (first is not None):
            raise PbemError("usage.start", "give either --first ID or --roll")
        if first is not None:
            setup.start(_workspace(), first, _identity(key))
            typer.echo(f"started: {first} has control")
            return
        _oid, chosen = setup.start_roll(_workspace(), _identity(key))
        if chosen is None:
            typer.echo("dice for who starts announced: every other player runs `pbem yield` to contribute, then "
                       "the roller `pbem yield` to reveal; then `pbem start --roll` again")
        else:
            typer.echo(f"started: the dice chose {chosen}, who has control")

    _run(go)


@app.command()
def status(key: Optional[str] = KeyOption,
           output: OutputFormat = typer.Option(OutputFormat.text, "--format"),
           rich: Optional[bool] = typer.Option(None, "--rich/--plain",
                                               help="one screen with colours, or plain lines (default: rich on "
                                                    "a terminal, plain otherwise)")) -> None:
    """Who is in control, the firm point, pending breaks, and what you owe next (with the command to do it).

    Example: pbem status    or    pbem status --plain    or    pbem status --format json
    """
    from pbem.formats.escape import json_dumps, terminal
    from pbem.services import turn

    def go() -> None:
        ws = _workspace()
        try:
            me = _identity(key)
        except PbemError:
            me = None
        view = turn.outlook(ws, me)
        errata = turn.errata_lines(ws)
        if output is OutputFormat.json:
            typer.echo(json_dumps({"status": view.status.to_data() if view.status else None, "me": view.me,
                                   "you_owe": view.owes(), "errata": errata}, indent=2))
            return
        if rich or (rich is None and sys.stdout.isatty()):
            from pbem.cli_pictures import status_screen

            status_screen(ws, view.me)
            return
        typer.echo(_status_lines(view.status, view.me))
        for line in errata:
            typer.echo(f"erratum: {terminal(line)}")
        typer.echo(f"you ({view.me or 'no seat'}) owe: {terminal(view.owes())}")

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
    from pbem.formats.escape import terminal

    return "\n".join(terminal(line) for line in lines)  # a note is data: shown, never obeyed (DESIGN §9)


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
        typer.echo(_status_lines(new, None) if new is not None else "settled your dice for who starts")

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


@app.command()
def roll(purposes: List[str] = typer.Option(..., "--for", help="what a roll is for, in order (repeat)"),
         sides: int = typer.Option(6, "--sides", help="faces of each die"),
         refs: List[str] = typer.Option([], "--ref", help="the entry each roll resolves (repeat, one per --for)"),
         mode: Optional[str] = typer.Option(None, "--mode", help="commit-reveal or escrow (default: game.yaml)"),
         key: Optional[str] = KeyOption) -> None:
    """Announce a dice batch before anything about it can be known (seed §2.D "about to roll dice"); then yield.

    Example: pbem roll --for "CA ph1 at D7, range 3" --for "CA ph2 at D7, range 3" && pbem yield -m "firing"
    """
    from pbem.services import chance, turn

    def go() -> None:
        ws, me = _workspace(), _identity(key)
        player = turn.whoami(ws, me)
        if player is None:
            raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
        files = ws.worktree_files()
        batch = chance.announce(files, ws.game_of(files), me, player, purposes, refs, sides, mode)
        ws.write_files(files)
        typer.echo(f"announced dice {batch} (d{sides} x{len(purposes)}): now `pbem yield`; the others contribute, "
                   "then you reveal")

    _run(go)


@app.command()
def seal(kind: str = typer.Argument(..., help="the secret's kind, e.g. note"),
         source: Path = typer.Argument(..., help="a YAML or JSON file with the secret"),
         reveal_at: str = typer.Option("end", "--reveal", help="when it must be revealed: end or a game time"),
         concerns: str = typer.Option("", "--concerns", help="what it is about, in the clear"),
         key: Optional[str] = KeyOption) -> None:
    """Seal a secret into secrets/<id>.yaml (then yield); only you can reveal it, with your key alone.

    Example: pbem seal note plan.yaml --reveal 2.0.alloc --concerns "my plan for turn 1"
    """
    from pbem.services import chance, turn

    def go() -> None:
        ws, me = _workspace(), _identity(key)
        player = turn.whoami(ws, me)
        if player is None:
            raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
        if not source.is_file():
            raise PbemError("usage.no-file", f"{source}: no such file")
        files = ws.worktree_files()
        head = ws.head()
        owed = [b.at for b in head.status.pending if b.player == player and b.kind == "sealed"] \
            if head is not None and head.status is not None else []
        sid = chance.seal_secret(files, ws.game_of(files), me, player, kind, source.read_bytes(), reveal_at,
                                 concerns, owed[0] if owed else None)  # answers the sealed step he owes, if any
        ws.write_files(files)
        typer.echo(f"sealed secret {sid} ({kind}); due at {reveal_at}: now `pbem yield`")

    _run(go)


@app.command()
def reveal(secret_id: str = typer.Argument(..., help="the secret's id, e.g. s0001"),
           key: Optional[str] = KeyOption) -> None:
    """Reveal one of your secrets now (pbem yield reveals those that are due by itself); then yield.

    Example: pbem reveal s0001 && pbem yield
    """
    import json

    from pbem.services import chance, turn

    def go() -> None:
        ws, me = _workspace(), _identity(key)
        player = turn.whoami(ws, me) or ""
        files = ws.worktree_files()
        value = chance.reveal_secret(files, ws.game_of(files), me, player, secret_id)
        ws.write_files(files)
        typer.echo(f"revealed {secret_id}: {json.dumps(value)}")

    _run(go)


dice_app = typer.Typer(help="Dice batches: show, co-sign or make a void.", no_args_is_help=True)
app.add_typer(dice_app, name="dice")


@dice_app.command("show")
def dice_show(batch: str = typer.Argument(..., help="a batch id, e.g. b0001")) -> None:
    """A batch's purposes and results in the order announced.  Example: pbem dice show b0001"""
    from pbem.services import chance

    def go() -> None:
        ws = _workspace()
        typer.echo(chance.show(ws.game_of(ws.worktree_files()), batch), nl=False)

    _run(go)


@dice_app.command("cosign")
def dice_cosign(batch: str = typer.Argument(...), reason: str = typer.Option(..., "--reason"),
                key: Optional[str] = KeyOption) -> None:
    """Print your signature agreeing to void a batch whose results were knowable (give it to the roller).

    Example: pbem dice cosign b0003 --reason "ph2 was out of arc" > kli.sig
    """
    from pbem.services import chance

    def go() -> None:
        ws = _workspace()
        typer.echo(chance.cosign(ws.game_of(ws.worktree_files()), batch, reason, _identity(key)))

    _run(go)


@dice_app.command("void")
def dice_void(batch: str = typer.Argument(...), reason: str = typer.Option(..., "--reason"),
              cosign: List[str] = typer.Option([], "--cosign", help="PLAYER=FILE with his `pbem dice cosign`"),
              key: Optional[str] = KeyOption) -> None:
    """Void a batch whole with a reason, to re-roll it whole (seed §2.D); then yield and roll again.

    Example: pbem dice void b0003 --reason "ph2 was out of arc" --cosign kli=kli.sig
    """
    from pbem.services import chance

    def go() -> None:
        ws = _workspace()
        signatures = {}
        for item in cosign:
            player, _, path = item.partition("=")
            if not path or not Path(path).is_file():
                raise PbemError("usage.cosign", f"--cosign {item!r}: expected PLAYER=FILE")
            signatures[player] = Path(path).read_text().strip()
        files = ws.worktree_files()
        chance.void(files, ws.game_of(files), batch, reason, signatures)
        ws.write_files(files)
        typer.echo(f"voided {batch}: now `pbem yield`, and roll it again whole")

    _run(go)


escrow_app = typer.Typer(help="The neutral dice escrow (DESIGN §5).", no_args_is_help=True)
app.add_typer(escrow_app, name="escrow")


@escrow_app.command("sign")
def escrow_sign(key: Optional[str] = KeyOption) -> None:
    """Sign every open escrow batch and commit the results, as the game's escrow key (run by the neutral
    person or the workflow, on main only).

    Example: pbem escrow sign --key escrow_ed25519
    """
    from pbem.services import chance
    from pbem.services.turn import commit_escrow

    def go() -> None:
        me = _identity(key)
        ws = _workspace()
        done = commit_escrow(ws, me, chance.private_key(me))
        typer.echo("\n".join(done) if done else "no open escrow batches")

    _run(go)


@app.command("allowed-signers")
def allowed_signers() -> None:
    """Print the players' keys as a git allowed-signers file (for `git verify-commit`).

    Example: pbem allowed-signers > .git/allowed_signers && git -c gpg.ssh.allowedSignersFile=.git/allowed_signers verify-commit HEAD
    """
    from pbem.services.ranges import allowed_signers_text

    typer.echo(_run(lambda: allowed_signers_text(_workspace())), nl=False)


@app.command()
def log(html: bool = typer.Option(False, "--html", help="one self-contained HTML page: the report, dice, secrets "
                                                        "and the map at each handoff"),
        out: Optional[Path] = typer.Option(None, "--out", help="write to this file (default: print)"),
        at: Optional[str] = typer.Option(None, "--at", help="the game as it stood at this revision (default: "
                                                            "HEAD)")) -> None:
    """The game report as text, with the `<-- firm to here -->` marker (or as an HTML page with the maps).

    Example: pbem log    or    pbem log --html --out game.html
    """
    if html:
        from pbem.cli_pictures import log_html

        log_html(out, at)
        return
    from pbem.services import report
    from pbem.verify.history import verify_history

    def go() -> str:
        ws = _workspace()
        text = report.log_text(verify_history(ws.repo, ws.repo.resolve(at)) if at else ws.history())
        if out is not None:
            out.write_text(text, encoding="utf-8")
            return f"wrote {out}\n"
        return text

    typer.echo(_run(go), nl=False)


@app.command()
def demo(directory: Optional[Path] = typer.Argument(None, help="where to build the demo game (default: a "
                                                                 "temporary folder)"),
         game: str = typer.Option("tactical-duel", "--game", help="which example game to play")) -> None:
    """Play a complete example game from games/ with generated keys, verify it, print the log.

    Example: pbem demo /tmp/duel
    """
    from pbem.services.demo import run_demo

    raise typer.Exit(_run(lambda: run_demo(directory, game, typer.echo)))


def _register_more() -> None:
    from pbem.cli_enforce import register

    register(app)
    __import__("pbem.cli_pictures").cli_pictures.register(app)
    __import__("pbem.cli_dow").cli_dow.register(app)
    __import__("pbem.cli_errata").cli_errata.register(app)


_register_more()


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
