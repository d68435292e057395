"""Diplomacy commands (`dow/1`, DESIGN §7.2, §8).

`pbem orders FILE` seals a power's orders for the phase open now (`pbem orders --reveal` reveals them once every
power has sealed); `pbem say`, `propose`, `accept`, `declare`, `reaffirm`, `gift`, `draw`, and the director's
`warn` post one message to the power's own press/<power>.yaml and commit it at once; `pbem ready` ends
a power's part of the press-only S1901P; `pbem whisper` seals private press to its recipients, `pbem inbox` reads
what one may open, `pbem disclose` makes a whisper public; `pbem relations` prints the matrix in force and what is
pending; `pbem results [PHASE]` tells what resolved phases did.
"""

# no `from __future__ import annotations`: typer reads the annotations of these commands
from pathlib import Path
from typing import Any, List, Optional

import typer

from pbem.cli.options import (KeyOption, OutputFormat, ReadFormat, data_lines, emit_json, identity, json_option, run,
                              workspace)
from pbem.errors import PbemError

STATE_HELP = "WAR, HOSTILE, NEUTRAL, FRIENDLY or ALLIED"

commands = typer.Typer()


def state_of(text: str) -> str:
    state = text.strip().upper()
    if state not in ("WAR", "HOSTILE", "NEUTRAL", "FRIENDLY", "ALLIED"):
        raise PbemError("usage.bad-state", f"{text!r} is no relationship state: use {STATE_HELP} (LIMBO is only "
                        "entered when two allies go to war)")
    return state


def press(body: dict[str, Any], key: Optional[str]) -> None:
    from pbem.services.dow import press as dow_press

    def go() -> None:
        done = dow_press.post(workspace(), identity(key), body)
        typer.echo(data_lines(f"posted at {done.message['at']}: {dow_press.describe_message(done.message)}"))
        if done.changes:
            typer.echo(f"recognised now: {dow_press.changes_text(done.changes)} (in force from the start of the "
                       "next Spring or Fall retreats)")

    run(go)


# --- orders ----------------------------------------------------------------------------------------------
@commands.command()
def orders(source: Optional[Path] = typer.Argument(None, help="a YAML or JSON file: {orders: [ORDER, ...]}"),
           reveal: bool = typer.Option(False, "--reveal", help="reveal your sealed orders (once every power "
                                                               "has sealed)"),
           anyway: bool = typer.Option(False, "--anyway", help="seal orders that will not stand as you wrote "
                                                               "them (void; a forbidden one earns a warning)"),
           draw: bool = typer.Option(False, "--draw", help="seal a secret draw vote with the orders (a draw "
                                                           "needs every surviving power's vote in one phase)"),
           key: Optional[str] = KeyOption) -> None:
    """Seal your power's orders for the phase open now and commit; reveal them once every power has sealed.

    Every order is checked first: one the engine refuses or the relationship states forbid is refused with its
    line and nothing is sealed (a forbidden order would be void and an offence). With --anyway such orders are
    sealed as you wrote them: they will be void (a forbidden one also earns a public warning).

    Example: echo 'orders: ["A PAR - BUR", "A MAR S A PAR - BUR", "F BRE - MAO"]' > o.yaml && pbem orders o.yaml
    then, when all have sealed: pbem orders --reveal
    """
    from pbem.services.dow import orders as dow_orders

    def go() -> None:
        ws, me = workspace(), identity(key)
        if reveal == (source is not None):
            raise PbemError("usage.orders", "give either FILE (seal) or --reveal")
        if reveal:
            done = dow_orders.reveal_orders(ws, me)
            typer.echo(data_lines(f"revealed {done.secret}: your orders for {done.phase}: "
                                  f"{'; '.join(done.orders) or 'none'}"))
            for report in done.resolved:
                typer.echo(data_lines("\n".join(report.lines())))
            typer.echo(_next(done.status))
            return
        assert source is not None
        if not source.is_file():
            raise PbemError("usage.no-file", f"{source}: no such file")
        sealed = dow_orders.seal_orders(ws, me, source.read_bytes(), str(source), anyway=anyway, draw=draw)
        for line in sealed.warnings():
            typer.echo(data_lines(line), err=True)
        typer.echo(f"sealed {sealed.secret}: your orders for {sealed.phase} ({len(sealed.orders)}); they are "
                   "revealed once every power has sealed (`pbem orders --reveal`)")
        if sealed.replaced is not None:
            typer.echo(f"they replace your orders sealed before ({sealed.replaced}), which stay on record and "
                       "count no more; you may replace them again until the last power has sealed")
        typer.echo(_next(sealed.status))

    run(go)


@commands.command(name="open")
def open_(power: str = typer.Argument(..., help="the power whose sealed orders you help open"),
          key: Optional[str] = KeyOption) -> None:
    """Publish your share of a power's sealed orders once every power has sealed and he withholds his reveal;
    with enough shares the nmr against him opens them, and his orders stand as he sealed them.

    Example: pbem open turkey && pbem agree nmr --player turkey
    """
    from pbem.services.dow import openings as dow_openings

    def go() -> None:
        done = dow_openings.open_share(workspace(), identity(key), power)
        typer.echo(f"published your share of {done.message['open']['secret']} at {done.message['at']}")

    run(go)


# --- press -------------------------------------------------------------------------------------------------
@commands.command()
def say(text: str = typer.Argument(..., help="what you say in global press"),
        key: Optional[str] = KeyOption) -> None:
    """Say something in global press (your own press/<power>.yaml), committed at once.

    Example: pbem say "France and England stand together"
    """
    press({"say": text}, key)


@commands.command()
def propose(power: str = typer.Argument(..., help="the power you propose to"),
            state: str = typer.Argument(..., help=f"the higher state: {STATE_HELP}"),
            key: Optional[str] = KeyOption) -> None:
    """Publicly propose a higher relationship state to a power; it stands until that power accepts it.

    Example: pbem propose germany ALLIED
    """
    run(lambda: press({"propose": {"to": power, "state": state_of(state)}}, key))


@commands.command()
def accept(power: str = typer.Argument(..., help="the power whose proposal you accept"),
           state: str = typer.Argument(..., help="exactly the state it proposed"),
           key: Optional[str] = KeyOption) -> None:
    """Publicly accept a power's standing proposal: the raise is recognised now (seed 001).

    Example: pbem accept france ALLIED
    """
    run(lambda: press({"accept": {"from": power, "state": state_of(state)}}, key))


@commands.command()
def declare(power: str = typer.Argument(..., help="the power you declare towards"),
            state: str = typer.Argument(..., help="the lower state, e.g. WAR"),
            key: Optional[str] = KeyOption) -> None:
    """Publicly announce a lower state with a power; WAR cascades to both sides' allies (HOSTILE or LIMBO).

    Example: pbem declare england WAR
    """
    run(lambda: press({"declare": {"to": power, "state": state_of(state)}}, key))


@commands.command()
def reaffirm(choices: List[str] = typer.Argument(..., help="POWER=ALLIED or POWER=HOSTILE, one per power "
                                                            "you are in LIMBO with"),
             key: Optional[str] = KeyOption) -> None:
    """Leave LIMBO by publicly reaffirming ALLIED or HOSTILE, without creating new conflicts.

    Example: pbem reaffirm france=ALLIED germany=HOSTILE
    """
    def go() -> None:
        chosen = {}
        for item in choices:
            power, _, state = item.partition("=")
            if not state:
                raise PbemError("usage.reaffirm", f"{item!r}: expected POWER=ALLIED or POWER=HOSTILE")
            chosen[power] = state_of(state)
        press({"reaffirm": chosen}, key)

    run(go)


@commands.command()
def gift(power: str = typer.Argument(..., help="the ally you give it to"),
         province: str = typer.Argument(..., help="a province of your colour or a centre you own, e.g. BEL"),
         key: Optional[str] = KeyOption) -> None:
    """Publicly gift a province (and its centre, if you own it) to an ally; realised with the states.

    Example: pbem gift germany BEL
    """
    press({"gift": {"to": power, "province": province.upper()}}, key)


@commands.command()
def draw(withdraw: bool = typer.Option(False, "--withdraw", help="withdraw your draw vote"),
         key: Optional[str] = KeyOption) -> None:
    """Vote for a draw of all surviving powers (signed press); unanimous standing votes end the game.

    Example: pbem draw    or    pbem draw --withdraw
    """
    press({"draw": not withdraw}, key)


@commands.command()
def warn(power: str = typer.Argument(..., help="the power warned"),
         reason: str = typer.Option(..., "--reason", help="why, in global press"),
         order: Optional[str] = typer.Option(None, "--order", help="the void order cited, e.g. \"A BUR H\""),
         phase: Optional[str] = typer.Option(None, "--phase", help="the phase of the void order, e.g. S1901M"),
         key: Optional[str] = KeyOption) -> None:
    """As the game director: warn a power for an offence the game recorded, one of its void orders (the second
    offence puts it into civil disorder from the next phase). Each offence earns at most one warning; a message
    is never an offence; the director never warns his own power, and no warning is lifted.

    Example: pbem warn turkey --phase S1901M --order "A BUR H" --reason "an order for a unit Turkey does not have"
    """
    def go() -> None:
        if order is None or phase is None:
            raise PbemError("usage.warn", "cite the offence the game recorded: --phase PHASE --order ORDER (a void "
                            "order of the power; a message is never an offence)")
        press({"warn": power, "reason": reason, "offence": {"phase": phase, "order": order}}, key)

    run(go)


@commands.command()
def ready(key: Optional[str] = KeyOption) -> None:
    """Say you are done with the press-only first half of Spring 1901; it ends when every power is ready.

    Example: pbem say "See you in the second half" && pbem ready
    """
    press({"ready": True}, key)


# --- private press ---------------------------------------------------------------------------------------------
@commands.command()
def whisper(args: List[str] = typer.Argument(..., help="POWER… TEXT: one or more recipients, then the text"),
            key: Optional[str] = KeyOption) -> None:
    """Private press: seal TEXT to the recipients' keys (and yours), signed by you, in your own press file.
    Only the recipients and you can read it (`pbem inbox`); a recipient may later disclose it to all.

    Example: pbem whisper germany russia "Let us keep Austria guessing"
    """
    from pbem.services import whisper as private

    def go() -> None:
        if len(args) < 2:
            raise PbemError("usage.whisper", "give one or more recipients, then the text: pbem whisper POWER… TEXT")
        done = private.whisper(workspace(), identity(key), args[:-1], args[-1])
        typer.echo(f"whispered {done.message['whisper']['id']} to {', '.join(done.message['whisper']['to'])} "
                   f"at {done.message['at']} (sealed: only they and you can read it)")

    run(go)


@commands.command()
def inbox(key: Optional[str] = KeyOption,
          output: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text or json")) -> None:
    """The whispers you can open: those you sent and those sent to you.

    Example: pbem inbox
    """
    from pbem.services import whisper as private

    def go() -> None:
        found = private.inbox(workspace(), identity(key))
        if output is OutputFormat.json:
            emit_json({"whispers": [{"id": w.id, "from": w.sender, "to": list(w.to), "at": w.at, "text": w.text,
                                     "disclosed_by": list(w.disclosed_by)} for w in found]})
            return
        if not found:
            typer.echo("no whispers for you")
        for w in found:
            public = f" (disclosed by {', '.join(w.disclosed_by)})" if w.disclosed_by else ""
            typer.echo(f"{w.id} {w.at} {w.sender} -> {', '.join(w.to)}{public}: {_clean(w.text)}")

    run(go)


@commands.command()
def disclose(whisper_id: str = typer.Argument(..., help="the whisper's id, e.g. france-0001 (see pbem inbox)"),
             key: Optional[str] = KeyOption) -> None:
    """Make a whisper you sent or received public: its key and text, which anyone can check against the box.

    Example: pbem disclose france-0001
    """
    from pbem.services import whisper as private

    def go() -> None:
        done = private.disclose(workspace(), identity(key), whisper_id)
        typer.echo(f"disclosed {whisper_id} at {done.message['at']}: {_clean(done.message['disclose']['text'])}")

    run(go)


def _clean(text: str) -> str:
    """Text from the repository, stripped of control characters before it reaches a terminal (DESIGN §9)."""
    return "".join(c if c.isprintable() else " " for c in text)


# --- reading -------------------------------------------------------------------------------------------------
@commands.command()
def relations(at: Optional[str] = typer.Option(None, "--at", help="a phase already begun, e.g. S1901M: the "
                                                                  "states in force during it"),
              output: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text or json")) -> None:
    """The relationship matrix in force and the changes recognised but not yet realised.

    Example: pbem relations    or    pbem relations --at S1901M --format json
    """
    from pbem.services.dow import relations as dow_relations

    def go() -> None:
        data = dow_relations.relations(workspace(), at)
        if output is OutputFormat.json:
            emit_json(data)
            return
        typer.echo(data_lines(dow_relations.relations_text(data)), nl=False)

    run(go)


@commands.command()
def results(phase: Optional[str] = typer.Argument(None, help="one phase, e.g. F1901M (default: all)"),
            output: ReadFormat = json_option()) -> None:
    """What resolved phases did: press recognised, orders revealed, warnings, dislodgements, centres,
    relationships realised (re-adjudicated from the revealed orders).

    Example: pbem results W1901A    or    pbem results --format json
    """
    from pbem.services.dow import chronicle as dow_chronicle

    def go() -> None:
        reports = dow_chronicle.results(workspace(), phase)
        if output is ReadFormat.json:
            emit_json({"phase": phase, "phases": [{
                "phase": r.phase, "sealed_by": list(r.sealed_by),
                "orders": {power: list(given) for power, given in r.orders.items()},
                "units": [{"power": power, "gone": list(gone), "new": list(new)} for power, gone, new in r.units],
                "draw_votes": list(r.votes),
                "outcome": {"result": r.outcome[0], "powers": list(r.outcome[1])} if r.outcome else None,
                "lines": r.lines()} for r in reports]})
            return
        for report in reports:
            typer.echo(data_lines("\n".join(report.lines())))

    run(go)


def _next(status: Any) -> str:
    if status is None or status.over:
        return "the game is over"
    waiting = sorted({b.player for b in status.pending})
    kind = status.pending[0].kind if status.pending else ""
    doing = {"sealed": "to seal orders", "secret": "to reveal orders", "ready": "to say ready"}.get(kind, "")
    return f"now at {status.firm}: waiting for {', '.join(waiting)} {doing}".rstrip()
