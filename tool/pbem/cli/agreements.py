"""Agreements (DESIGN §4.8): `pbem agree KIND` proposes one, `pbem sign ID` adds my signature, `pbem agreements`
lists what waits for whom, `pbem resign` leaves the game; all out of turn."""

from __future__ import annotations

import inspect
from typing import Optional

import typer

from pbem.cli.options import (KeyOption, ReadFormat, emit_json, findings_records, identity, json_option, my_seat, run,
                              workspace, write_out)
from pbem.errors import PbemError

commands = typer.Typer()


@commands.command()
def sign(agreement: str = typer.Argument(..., help="the agreement's id, e.g. fed-0001"),
         key: Optional[str] = KeyOption) -> None:
    """Sign an agreement (review it first: `pbem status`, and for a start agreement game.yaml itself); one
    commit that adds your signature and nothing else. You need not hold control.

    Example: pbem sign fed-0001
    """
    from pbem.protocol.kinds import KINDS, describe
    from pbem.services import agreements

    def go() -> None:
        ws = workspace()
        head = ws.head()
        if head is not None:  # what he signs, in words (a seat: the new key's fingerprint and comment)
            found = agreements.by_id(head.game).get(agreement)
            if found is not None:
                typer.echo(f"{agreement}: {describe(found)}")
        done = agreements.sign(ws, identity(key), agreement)
        waiting = f"waiting for {', '.join(done.unsigned)}" if done.unsigned else "every signer has signed"
        row = KINDS.get(done.kind)
        extra = f" {row.signed_words}" if row is not None and row.signed_words and not done.unsigned else ""
        typer.echo(f"signed {done.agreement}: {waiting}{extra}")

    run(go)


def _done(done) -> None:  # type: ignore[no-untyped-def]
    waiting = f"waiting for {', '.join(done.unsigned)}" if done.unsigned else "every signer has signed: in effect"
    typer.echo(f"proposed {done.agreement} ({done.kind}): {waiting}")


def _kinds_help() -> str:
    """`pbem agree --help`: every kind `pbem agree` proposes and its options, from the kinds' table."""
    from pbem.protocol.kinds import NOTE, proposable

    lines = []
    for kind in proposable():
        lines.append(f"{kind.name}: {kind.help}")
        lines.extend(f"    {o.flag}{'' if o.form == 'flag' else ' VALUE'}: {o.help}" for o in kind.options)
    lines.append(f"every kind: {NOTE.flag} VALUE: {NOTE.help}")
    return "\n\n\b\nKinds and their options:\n" + "\n".join(lines)


def agree(ctx: typer.Context,
          kind: str = typer.Argument(..., help="the kind of agreement (listed below)", metavar="KIND"),
          key: Optional[str] = KeyOption) -> None:
    """Propose an agreement, signed by you, in one commit; the others sign it with `pbem sign ID`, and it takes
    effect in the commit that adds its last required signature. After KIND come its options, as --OPTION VALUE
    or OPTION=VALUE.

    \b
    Examples:
      pbem agree amend --deadline 96h
      pbem agree nmr --player kli      (or: pbem agree nmr player=kli)
      pbem agree seat --seat kli --new-key kli-new.pub --why lost-key
      pbem agree end --result forfeit --player kli
      pbem agree upgrade --index-url https://pypi.org/simple/   (the workflow of this pbem)
      (edit the firm report) pbem agree erratum --reason "CA turned TR, not TL"
    """
    from pbem.protocol import kinds
    from pbem.services import agreements

    def go() -> None:
        row = kinds.KINDS.get(kind)
        values = kinds.read_options(row, ctx.args) if row is not None else {}
        if row is not None and row.from_tree:  # the same as `pbem erratum propose`: read from the report files
            from pbem.cli.options import erratum_said as said
            from pbem.services import errata

            if values.get("reason") is None:
                raise PbemError("usage.erratum", "give the reason for the correction: --reason TEXT")
            ws = workspace()
            said(errata.propose(ws, identity(key), values["reason"]))
            return
        ws = workspace()
        _done(agreements.agree(ws, identity(key), kind, **values))

    run(go)


agree.__doc__ = inspect.cleandoc(agree.__doc__ or "") + _kinds_help()
commands.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(agree)


@commands.command()
def resign(note: Optional[str] = typer.Option(None, "--note", help="why, in words"),
           key: Optional[str] = KeyOption) -> None:
    """Leave the game: an agreement signed by you alone, in effect at once (pbem agree resign). Your seat is then
    vacant: the others may give it to a replacement (pbem agree seat --why replacement).

    Example: pbem resign --note "moving house"
    """
    from pbem.services import agreements

    def go() -> None:
        ws = workspace()
        _done(agreements.agree(ws, identity(key), "resign", note=note))

    run(go)


@commands.command("agreements")
def agreements_(key: Optional[str] = KeyOption, output: ReadFormat = json_option()) -> None:
    """List the game's agreements: their terms, who signed, who still has to (and what waits for you).

    Example: pbem agreements    or    pbem agreements --format json
    """
    from pbem.protocol.kinds import describe
    from pbem.services import agreements
    from pbem.protocol.game import Game

    def go() -> None:
        ws = workspace()
        head = ws.head()
        if head is None:
            raise PbemError("setup.not-started", "this repository has no game yet (pbem init)")
        game: Game = head.game
        if output is ReadFormat.json:
            rows = sorted(game.agreements.values(), key=lambda a: a.id)
            emit_json({"agreements": [{"id": a.id, "by": a.by, "kind": a.kind, "terms": describe(a),
                                       "unsigned": list(agreements.unsigned(game, a)), "text": line}
                                      for a, line in zip(rows, agreements.listing(game, head.nmrs))],
                       "to_sign": agreements.to_sign(game, my_seat(ws, key)), "result": agreements.result(game)})
            return
        for line in agreements.to_sign(game, my_seat(ws, key)):
            typer.echo(line)
        lines = agreements.listing(game, head.nmrs)
        typer.echo("\n".join(lines) if lines else "no agreements")
        done = agreements.result(game)
        if done:
            typer.echo(f"result: {done}")

    run(go)


@commands.command()
def deadlines(revisions: Optional[str] = typer.Argument(None, help="a range BASE..HEAD to judge (a gate's check)"),
              clock: Optional[str] = typer.Option(None, "--clock", help="the gate's record of when it accepted each "
                                                  "commit: the hook's pbem/accepted, or GitHub's activity JSON"),
              now: Optional[str] = typer.Option(None, "--now", help="the gate's current time, RFC 3339 (default: "
                                                "this machine's clock)"),
              branch: str = typer.Option("main", "--branch", help="the game branch the record is about"),
              output: ReadFormat = json_option()) -> None:
    """How long each owed item has waited and who is overdue; with a range, judge its nmr, forfeit and lost-key
    seat agreements as the gates do (exit 1 when one came before the deadline). Waits run from when the gate
    first accepted the commit that made each item owed (--clock FILE); never from a commit's date, which is its
    signer's claim. Without --clock, waits are this clone's own knowledge (its reflogs) and a range finds nobody
    absent (clock.missing).

    Example: pbem deadlines    or, in a workflow:    pbem deadlines "$BASE..$HEAD" --clock activity.json
    """
    from datetime import datetime, timezone
    from pathlib import Path

    from pbem.errors import ILLEGAL
    from pbem.formats import times
    from pbem.services import deadlines as deadline_service
    from pbem.services import gateclock
    from pbem.services.hook import branch_ref
    from pbem.services.report import findings_text

    def go() -> int:
        moment = times.parse_instant(now, what="--now") if now else datetime.now(timezone.utc)
        repo = workspace().repo
        source = gateclock.file_clock(Path(clock), repo, branch_ref(branch), moment) if clock else None
        if revisions is None:
            if source is not None and source.problem is not None:
                raise PbemError.from_finding(source.problem, exit_code=2)
            tip = repo.head_oid()
            waits = deadline_service.waits(repo, tip, moment, source) if tip else []
            if output is ReadFormat.json:
                emit_json({"now": times.format_instant(moment), "range": None, "waits": wait_records(waits),
                           "ok": True, "commits": None, "findings": []})
                return 0
            typer.echo("\n".join(w.text() for w in waits) if waits else "nobody owes anything")
            return 0
        base, dots, head = revisions.rpartition("..")
        tip = repo.resolve(head or "HEAD")
        hidden = [repo.resolve(base)] if dots and base else []
        walker = repo.repo.walk(tip)
        for oid in hidden:
            walker.hide(oid)
        commits = [str(c.id) for c in walker]
        # what the record does not hold arrives now (a pull request, a push GitHub has not listed yet)
        judge = source.with_pushed(c for c in commits if c not in source.times) if source is not None else \
            deadline_service.no_record(
            moment, "no gate record was given (--clock FILE): this clone's own times are no gate's")
        found = deadline_service.nmr_findings(repo, commits, judge)
        if output is ReadFormat.json:
            emit_json({"now": times.format_instant(moment), "range": revisions, "waits": [], "ok": not found,
                       "commits": len(commits), "findings": findings_records(found)})
        else:
            write_out(findings_text(found, len(commits)))
        return ILLEGAL if found else 0

    raise typer.Exit(run(go))


def wait_records(waits) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    """`pbem deadlines --format json`: each owed item's wait (services/deadlines.py `Wait`)."""
    from pbem.formats import times

    def instant(moment):  # type: ignore[no-untyped-def]
        return times.format_instant(moment) if moment is not None else None

    return [{"player": w.player, "owes": w.what, "made_by": w.made, "since": instant(w.since),
             "deadline_seconds": int(w.deadline.total_seconds()), "due": instant(w.due), "overdue": w.overdue,
             "paused_until": instant(w.pause), "source": w.source, "text": w.text()} for w in waits]
