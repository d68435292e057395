"""Dice and secrets (DESIGN §5, §6): `pbem roll`, `seal`, `reveal`, `pbem dice …`, `pbem escrow sign`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from pbem.cli.options import KeyOption, ReadFormat, data_lines, emit_json, identity, json_option, run, workspace
from pbem.errors import ILLEGAL, PbemError

commands = typer.Typer()
dice_app = typer.Typer(help="Dice batches: show, co-sign or make a void.", no_args_is_help=True)
escrow_app = typer.Typer(help="The neutral dice escrow (DESIGN §5).", no_args_is_help=True)


def _seat(ws, me) -> str:  # type: ignore[no-untyped-def]
    from pbem.services import turn

    player = turn.whoami(ws, me)
    if player is None:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    return player


@commands.command()
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
        ws, me = workspace(), identity(key)
        player = _seat(ws, me)
        files = ws.worktree_files()
        turn.check_roll(ws, files, player, list(refs))
        batch = chance.announce(files, ws.game_of(files), me, player, purposes, refs, sides, mode)
        ws.write_files(files)
        typer.echo(f"announced dice {batch} (d{sides} x{len(purposes)}): now `pbem yield`; the others contribute, "
                   "then you reveal")

    run(go)


@commands.command()
def seal(kind: Optional[str] = typer.Argument(None, help="the secret's kind, e.g. note (without it: the kinds "
                                                         "this game offers, with their files by example)"),
         source: Optional[Path] = typer.Argument(None, help="a YAML or JSON file with the secret"),
         reveal_at: str = typer.Option("end", "--reveal", help="when it must be revealed: end or a game time"),
         concerns: str = typer.Option("", "--concerns", help="what it is about, in the clear"),
         key: Optional[str] = KeyOption) -> None:
    """Seal a secret into secrets/<you>-NNNN.yaml (then yield); only you can reveal it, with your key alone.

    Example: pbem seal note plan.yaml --reveal 2.0.alloc --concerns "my plan for turn 1"
    """
    from pbem.services import chance, secret_kinds

    def go() -> None:
        ws, me = workspace(), identity(key)
        player = _seat(ws, me)
        files = ws.worktree_files()
        secret_kinds.require(ws.game_of(files), kind)  # no or a wrong KIND: the kinds this game offers
        if source is None or not source.is_file():
            raise PbemError("usage.no-file", f"{source or 'FILE'}: no such file (pbem seal {kind} FILE)")
        assert kind is not None  # secret_kinds.require refused a missing one
        head = ws.head()
        owed = [b.at for b in head.status.pending if b.player == player and b.kind == "sealed"] \
            if head is not None and head.status is not None else []
        sid = chance.seal_secret(files, ws.game_of(files), me, player, kind, source.read_bytes(), reveal_at,
                                 concerns, owed[0] if owed else None,  # answers the sealed step he owes, if any
                                 source=str(source), head=head)
        ws.write_files(files)
        from pbem.formats import yamlsafe

        raw = yamlsafe.load(files[f"secrets/{sid}.yaml"], f"secrets/{sid}.yaml").data
        typer.echo(secret_kinds.sealed_said(ws.game_of(files), raw))

    run(go)


@commands.command()
def reveal(secret_id: str = typer.Argument(..., help="the secret's id, e.g. fed-0001"),
           key: Optional[str] = KeyOption) -> None:
    """Reveal one of your secrets now (pbem yield reveals those that are due by itself); then yield.

    Example: pbem reveal fed-0001 && pbem yield
    """
    import json

    from pbem.services import chance, turn

    def go() -> None:
        ws, me = workspace(), identity(key)
        player = turn.whoami(ws, me) or ""
        files = ws.worktree_files()
        value = chance.reveal_secret(files, ws.game_of(files), me, player, secret_id)
        ws.write_files(files)
        typer.echo(f"revealed {secret_id}: {json.dumps(value)}")

    run(go)


@dice_app.command("show")
def dice_show(batch: str = typer.Argument(..., help="a batch id, e.g. fed-0001"),
              output: ReadFormat = json_option()) -> None:
    """A batch's purposes and results in the order announced.

    Example: pbem dice show fed-0001    or    pbem dice show fed-0001 --format json
    """
    from pbem.services import chance

    def go() -> None:
        ws = workspace()
        game = ws.game_of(ws.worktree_files())
        if output is ReadFormat.json:
            emit_json({"batch": chance.show_record(game, batch)})
            return
        typer.echo(data_lines(chance.show(game, batch)), nl=False)

    run(go)


@dice_app.command("cosign")
def dice_cosign(batch: str = typer.Argument(...), reason: str = typer.Option(..., "--reason"),
                key: Optional[str] = KeyOption) -> None:
    """Print your signature agreeing to void a batch whose results were knowable (give it to the roller).

    Example: pbem dice cosign fed-0003 --reason "ph2 was out of arc" > kli.sig
    """
    from pbem.services import chance

    def go() -> None:
        ws = workspace()
        typer.echo(chance.cosign(ws.game_of(ws.worktree_files()), batch, reason, identity(key)))

    run(go)


@dice_app.command("void")
def dice_void(batch: str = typer.Argument(...), reason: str = typer.Option(..., "--reason"),
              cosign: List[str] = typer.Option([], "--cosign", help="PLAYER=FILE with his `pbem dice cosign`"),
              key: Optional[str] = KeyOption) -> None:
    """Void a batch whole with a reason, to re-roll it whole (seed §2.D); then yield and roll again.

    Example: pbem dice void fed-0003 --reason "ph2 was out of arc" --cosign kli=kli.sig
    """
    from pbem.services import chance

    def go() -> None:
        ws = workspace()
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

    run(go)


@dice_app.command("withdraw")
def withdraw(batch: str = typer.Argument(..., help="the batch id, e.g. fed-0003"),
             key: Optional[str] = KeyOption) -> None:
    """Take back a batch you announced and have not yielded yet (a wrong --ref, --for or --sides): its file
    leaves your working tree, nothing is committed. A batch already committed is voided instead (pbem dice
    void).

    Example: pbem dice withdraw fed-0003
    """
    from pbem.services import chance

    def go() -> None:
        ws, me = workspace(), identity(key)
        path = chance.withdrawable(ws.head_files(), ws.worktree_files(), batch, _seat(ws, me))
        (ws.root / path).unlink()
        typer.echo(f"withdrew {batch}: {path} is gone from your working tree; roll again (pbem roll)")

    run(go)


@escrow_app.command("sign")
def escrow_sign(key: Optional[str] = KeyOption) -> None:
    """Sign every open escrow batch and commit the results, as the game's escrow key (run by the neutral
    person or the workflow, on main only).

    Example: pbem escrow sign --key escrow_ed25519
    """
    from pbem.services import chance
    from pbem.services.turn import commit_escrow

    def go() -> None:
        me = identity(key)
        done = commit_escrow(workspace(), me, chance.private_key(me))
        typer.echo("\n".join(done) if done else "no open escrow batches")

    run(go)


commands.add_typer(dice_app, name="dice")
commands.add_typer(escrow_app, name="escrow")
