"""Commands for enforcement where players meet (DESIGN §8, §9): registered on the main app by `register`.

`pbem hook install` / `pbem hook pre-receive` (self-hosted git), `pbem summary` (pull requests and job
summaries) and `pbem push` (publish, rebasing onto another player's out-of-turn commit). Same rules as cli.py:
parse arguments, call services, print; exit 0 success/legal, 1 illegal or refused, 2 usage or environment.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    # pbem.cli calls us at the end of its own import, when these are defined
    from pbem.cli import KeyOption, _identity, _run, _workspace

    hook_app = typer.Typer(help="The pre-receive hook that guards a self-hosted game repository.",
                           no_args_is_help=True)
    app.add_typer(hook_app, name="hook")

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
                       f"{done.branch} only moves forward")

        _run(go)

    @hook_app.command("pre-receive")
    def hook_pre_receive() -> None:
        """What the installed hook runs: verify the pushed refs; exit 1 refuses the push.

        Reads `OLD NEW REF` lines on stdin, as git gives them, and prints the findings of the new commits on stderr
        (the pusher reads them as `remote:` lines).

        Example (inside the bare repository): echo "$OLD $NEW refs/heads/main" | pbem hook pre-receive
        """
        from pbem.services import hook

        raise typer.Exit(_run(lambda: hook.pre_receive(sys.stdin, sys.stderr)))

    @app.command()
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

        raise typer.Exit(_run(go))

    @app.command()
    def push(remote: Optional[str] = typer.Option(None, "--remote", help="the git remote (default: the "
                                                                          "branch's, else origin)"),
             key: Optional[str] = KeyOption) -> None:
        """Fetch, and push your commits; if another player's out-of-turn commit landed first and touches other
        parts of the game, rebase yours onto it, re-sign and verify them first. Otherwise say what to do.

        Example: pbem yield -m "contributing" && pbem push
        """
        from pbem.services.push import push as service

        def go() -> int:
            outcome = service(_workspace(), lambda: _identity(key), remote)
            for finding in outcome.findings:
                typer.echo(finding.text(), err=True)
            typer.echo(outcome.message, err=outcome.code != 0)
            return outcome.code

        raise typer.Exit(_run(go))
