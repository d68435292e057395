"""Setting a game up (DESIGN §2, §8): `pbem version`, `keygen`, `init`, `join`, `start`, and `demo`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pbem import __version__
from pbem.cli.options import KeyOption, identity, run, workspace
from pbem.errors import PbemError

commands = typer.Typer()


def installed_version() -> str:
    """The version of the installed distribution (its metadata: what pip installed), else the package's own."""
    from importlib import metadata

    try:
        return metadata.version("pbem")
    except metadata.PackageNotFoundError:  # run from a source tree without installing it
        return __version__


@commands.command()
def version() -> None:
    """Print the pbem version (the same as `pbem --version`).  Example: pbem version"""
    typer.echo(installed_version())


@commands.command()
def keygen(out: Path = typer.Option(Path.home() / ".ssh" / "id_ed25519", "--out", help="where to write the key"),
           comment: str = typer.Option("", "--comment", help="comment for the public key"),
           configure: Optional[bool] = typer.Option(
               None, "--configure/--no-configure",
               help="record the key in your global git config (gpg.format=ssh, user.signingkey, "
                    "gpg.ssh.allowedSignersFile) so pbem and git find it (default: ask on a terminal, else no)")
           ) -> None:
    """Write a new OpenSSH Ed25519 key pair (private file 0600, and PATH.pub); print the public key line.

    With --configure (or yes to the question on a terminal) git records it as your signing key, which is
    where pbem looks; ~/.ssh/id_ed25519 is found without that.

    Example: pbem keygen --out ~/.ssh/pbem_ed25519 --configure
    """
    import sys

    from pbem.crypto.keys import PrivateKey, write_keypair
    from pbem.services import keyconfig

    def go() -> None:
        key = PrivateKey.generate(comment)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_keypair(out, key)
        typer.echo(key.public.to_line())
        wanted = configure
        if wanted is None and sys.stdin.isatty() and sys.stdout.isatty():
            wanted = typer.confirm(f"Record {out} in your global git config as your signing key (gpg.format=ssh, "
                                   "user.signingkey, allowed signers), so pbem and `git log --show-signature` "
                                   "find it?", default=True, err=True)
        if wanted:
            for line in keyconfig.configure(out, key.public):
                typer.echo(line, err=True)
        elif not keyconfig.found_without_config(out):
            typer.echo(f"pbem will not find {out} by itself: pass --key {out}, set PBEM_KEY={out}, or run "
                       f"`git config --global gpg.format ssh && git config --global user.signingkey {out}`",
                       err=True)

    run(go)


@commands.command()
def init(directory: Path = typer.Argument(..., help="new folder for the game repository"),
         template: str = typer.Option("tactical-duel", "--template", help="a template in games/ or a folder"),
         game_id: str = typer.Option(..., "--id", help="the game's id (lower-case, digits, '-')"),
         pbem_spec: Optional[str] = typer.Option(None, "--pbem-spec",
                                                 help="pip requirement the workflow installs (default: this "
                                                      "version)"),
         index_url: Optional[str] = typer.Option(None, "--index-url",
                                                 help="pin pbem and its dependencies by hash, read from this "
                                                      "package index (e.g. https://pypi.org/simple/)"),
         code: Optional[str] = typer.Option(None, "--code", help="a fresh invite code, for a template that has "
                                                                 "one (dow-standard): stored only salted and "
                                                                 "hashed"),
         key: Optional[str] = KeyOption) -> None:
    """Create a game repository from a template, with README and the enforcing workflow.

    Example: pbem init duel-1 --template tactical-duel --id duel-1 --index-url https://pypi.org/simple/
    or       pbem init dow-1 --template dow-standard --id dow-1 --code "a code you give the players"
    """
    from pbem.services import gatelock, setup

    def go() -> None:
        if index_url and pbem_spec:
            raise PbemError("usage.conflict", "--index-url pins this pbem by hash; --pbem-spec names another one")
        lock = gatelock.lock(index_url) if index_url else None
        ws = setup.init(directory, template, game_id, identity(key), pbem_spec, lock, code)
        typer.echo(f"created {directory} ({game_id}); {setup.invite_advice(ws, code)}")
        if lock is None:
            typer.echo("the workflow installs pbem by version only, not by hash: give --index-url to pin it "
                       "(docs/github.md)", err=True)

    run(go)


@commands.command()
def join(seat: str = typer.Option(..., "--as", help="the seat (player id) to claim"),
         code: Optional[str] = typer.Option(None, "--code", help="the invite code from the game description "
                                                                 "(games with setup.invite_hash)"),
         key: Optional[str] = KeyOption) -> None:
    """Claim a seat with your public key (a commit signed by that key).

    Example: pbem join --as kli --key ~/.ssh/pbem_ed25519    or    pbem join --as france --code CODE
    """
    from pbem.services import setup

    run(lambda: setup.join(workspace(), seat, identity(key), code))
    typer.echo(f"you hold seat {seat}")


@commands.command()
def start(first: Optional[str] = typer.Option(None, "--first", help="the player who starts in control"),
          roll: bool = typer.Option(False, "--roll", help="decide who starts by dice (run it again once rolled)"),
          order: bool = typer.Option(False, "--order-by-dice",
                                     help="the dice decide the order around the table too (three or more "
                                          "players; else it is game.yaml's)"),
          key: Optional[str] = KeyOption) -> None:
    """Consent to start over game.yaml as it is, and start once every seat has: the first run proposes the start
    (signed by you), each other player runs the same command (or `pbem sign ID`) to sign it, and the run that
    finds every signature starts the game (with --roll or --order-by-dice: rolls the dice first, then starts).

    Example: pbem start --first fed    or    pbem start --roll    or    pbem start --roll --order-by-dice
    """
    from pbem.services import setup

    def go() -> None:
        for step in setup.begin(workspace(), identity(key), first, roll, order):
            typer.echo(step.message)

    run(go)


@commands.command()
def demo(directory: Optional[Path] = typer.Argument(None, help="where to build the demo game (default: a "
                                                                 "temporary folder)"),
         game: str = typer.Option("tactical-duel", "--game", help="which example game to play")) -> None:
    """Play a complete example game from games/ with generated keys, verify it, print the log.

    Example: pbem demo /tmp/duel
    """
    from pbem.services.demo import run_demo

    raise typer.Exit(run(lambda: run_demo(directory, game, typer.echo)))
