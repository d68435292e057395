"""Where players meet (DESIGN §4.9, §9): `pbem hook install`, `pbem hook pre-receive` (self-hosted git) and
`pbem push` (publish, replaying my own commits onto another player's out-of-turn commit)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from pbem.cli.options import KeyOption, identity, run, workspace

commands = typer.Typer()
hook_app = typer.Typer(help="The pre-receive hook that guards a self-hosted game repository.", no_args_is_help=True)


@hook_app.command("install")
def hook_install(repository: Path = typer.Argument(..., help="the (bare) repository the players push to"),
                 force: bool = typer.Option(False, "--force",
                                            help="replace a pre-receive hook that pbem did not write"),
                 branch: str = typer.Option("main", "--branch",
                                            help="the game branch: it only moves forward and is never "
                                                 "deleted, whatever the repository's HEAD names")) -> None:
    """Install a pre-receive hook that refuses every push whose new commits fail verification.

    The hook runs this pbem (this Python, by absolute path), so it works without PATH. Run it again after
    upgrading pbem.

    Example: pbem hook install /srv/git/duel-1.git    or    pbem hook install --branch game /srv/git/duel-1.git
    """
    from pbem.services import hook

    def go() -> None:
        done = hook.install(repository, force, branch)
        for warning in done.warnings:
            typer.echo(f"pbem: warning: {warning}", err=True)
        typer.echo(f"installed {done.hook}: pushes whose new commits fail `pbem verify` are refused; "
                   f"{done.branch} only moves forward; post-receive records when each commit landed on it "
                   "(pbem/accepted, the clock for deadlines)")

    run(go)


@hook_app.command("pre-receive")
def hook_pre_receive() -> None:
    """What the installed hook runs: verify the pushed refs; exit 1 refuses the push.

    Reads `OLD NEW REF` lines on stdin, as git gives them, and prints the findings of the new commits on stderr
    (the pusher reads them as `remote:` lines).

    Example (inside the bare repository): echo "$OLD $NEW refs/heads/main" | pbem hook pre-receive
    """
    from pbem.services import hook

    raise typer.Exit(run(lambda: hook.pre_receive(sys.stdin, sys.stderr)))


@hook_app.command("post-receive")
def hook_post_receive() -> None:
    """What the installed post-receive hook runs: record, in the repository's own pbem/accepted, when the game
    branch first held each commit (the gate's clock for deadlines; no pusher can write it).

    Example (inside the bare repository): echo "$OLD $NEW refs/heads/main" | pbem hook post-receive
    """
    from pbem.services import hook

    raise typer.Exit(run(lambda: hook.post_receive(sys.stdin, sys.stderr)))


@commands.command()
def push(remote: Optional[str] = typer.Option(None, "--remote", help="the git remote (default: the "
                                                                      "branch's, else origin)"),
         review: bool = typer.Option(False, "--review", help="open a pull request for the other players to "
                                     "review and merge, instead of landing the commits at once"),
         no_wait: bool = typer.Option(False, "--no-wait", help="on GitHub, do not wait for the pull request's "
                                      "merge (GitHub still merges it once the check passed)"),
         key: Optional[str] = KeyOption) -> None:
    """Fetch, and push your commits; if another player's out-of-turn commit landed first and touches other
    parts of the game, rebase yours onto it, re-sign and verify them first. Otherwise say what to do. Where
    `main` is protected on GitHub, the commits go to your branch `pbem/<seat>` and a pull request that GitHub
    merges once the check `pbem/verify` passed (docs/github.md).

    Example: pbem yield -m "contributing" && pbem push
    """
    from pbem.services.landing import WAIT
    from pbem.services.push import push as service

    def go() -> int:
        outcome = service(workspace(), lambda: identity(key), remote, review=review,
                          wait=0.0 if no_wait else WAIT)
        for finding in outcome.findings:
            typer.echo(finding.text(), err=True)
        typer.echo(outcome.message, err=outcome.code != 0)
        return outcome.code

    raise typer.Exit(run(go))


commands.add_typer(hook_app, name="hook")
