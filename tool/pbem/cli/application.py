"""The full command line: every command group registered on one typer app, `pbem --help` in panels by what a
player is doing. Built only for a command that cli/fast.py does not serve (see cli/__init__.py)."""

from __future__ import annotations

import gc
from typing import Any

_COLLECTING = gc.isenabled()
gc.disable()  # importing the command line makes some hundred thousand objects, none of them garbage
import typer
from typer.core import TyperGroup

from pbem.cli import agreements, chance, dow, enforce, errata, play, report, setup, sync, watch
from pbem.cli.fast import answer_os_error
from pbem.errors import USAGE

gc.freeze()  # and no later collection need look at them again, nor the one at exit: 0.03 s of CPU a command
if _COLLECTING:
    gc.enable()

DIPLOMACY = "Diplomacy"  # the mark of a command only a Diplomacy (dow/1) game has, outside the Diplomacy panel

# `pbem --help`, by what a player is doing: panel -> (command, one line, at most 58 characters: one row of an
# 80-column terminal; `[ruleset]` first where only that ruleset has the command). Every command is in exactly one
# panel (tests/test_cli_ecosystem.py).
PANELS: dict[str, tuple[tuple[str, str], ...]] = {
    "Setup": (
        ("keygen", "Write a new Ed25519 signing key; print its public line."),
        ("init", "Create a game repository from a template."),
        ("join", "Claim a seat with your public key."),
        ("start", "Consent to the start; the last consent starts the game."),
        ("demo", "Play, verify and print a complete example game."),
        ("version", "Print the pbem version (also: pbem --version)."),
    ),
    "Play": (
        ("status", "Who is in control, the firm point, and what you owe next."),
        ("check", "Judge the working tree as if you committed it now."),
        ("yield", "Write status.yaml and commit your turn, signed."),
        ("push", "Publish your commits (rebased onto out-of-turn ones)."),
        ("pull", "Fetch and fast-forward, or say exactly what to do."),
        ("watch", "Autopilot: keep current, settle chores, call you to play."),
    ),
    "Dice and secrets": (
        ("roll", "Announce a dice batch before its results can be known."),
        ("dice", "Dice batches: show, co-sign, void or withdraw."),
        ("seal", "Seal a secret that only you can reveal."),
        ("reveal", "Reveal one of your secrets now."),
    ),
    "Agreements": (
        ("agree", "Propose an agreement (amend, nmr, seat, end, upgrade, …)."),
        ("sign", "Sign an agreement; you need not hold control."),
        ("agreements", "List the agreements: terms, who signed, who still has to."),
        ("resign", "Leave the game (an agreement signed by you alone)."),
        ("deadlines", "How long each owed item has waited; who is overdue."),
        ("erratum", "Correct the firm report, signed by every active player."),
    ),
    "Diplomacy (dow/1 games only)": (
        ("orders", "Seal your orders for the phase; reveal once all sealed."),
        ("open", "Publish your share of a power's withheld sealed orders."),
        ("say", "Say something in global press."),
        ("propose", "Publicly propose a higher relationship state."),
        ("accept", "Publicly accept a power's standing proposal."),
        ("declare", "Publicly announce a lower state (WAR cascades to allies)."),
        ("reaffirm", "Leave LIMBO by reaffirming ALLIED or HOSTILE."),
        ("gift", "Publicly gift a province to an ally."),
        ("draw", "Vote for (or withdraw your vote for) a draw."),
        ("warn", "As the director: warn a power for a recorded offence."),
        ("ready", "Done with the press-only first half of Spring 1901."),
        ("whisper", "Private press, sealed to its recipients."),
        ("disclose", "Make a whisper you sent or received public."),
    ),
    "Reading": (
        ("log", "The game report, with the firm marker (or an HTML page)."),
        ("render", "Draw the board as SVG."),
        ("site", "The game page: a static site, step by step."),
        ("verify", "Verify the game's whole history (or a range)."),
        ("summary", "What a range of commits did (for pull requests, CI)."),
        ("results", f"[{DIPLOMACY}] What the resolved phases did."),
        ("relations", f"[{DIPLOMACY}] The relationship matrix and what is pending."),
        ("inbox", f"[{DIPLOMACY}] The whispers you can open."),
    ),
    "Hosting": (
        ("hook", "Guard a self-hosted repository with git hooks."),
        ("escrow", "Sign open escrow dice batches (the neutral escrow key)."),
        ("allowed-signers", "The players' keys as a git allowed-signers file."),
    ),
}


def _marked(line: str, rich: bool) -> str:
    """A help line as it is shown: where rich reads markup, `[Diplomacy]` is escaped to stay text."""
    return line.replace("[", "\\[") if rich else line


class Commands(TyperGroup):
    """The app's command group: `--help` in panels (PANELS), with or without rich; every error of the machine
    one line and exit 2."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        rich = getattr(self, "rich_markup_mode", None) == "rich" and _has_rich()
        placed: dict[str, Any] = {}
        for panel, rows in PANELS.items():
            for name, line in rows:
                command = self.commands.get(name)
                if command is None:
                    continue
                command.rich_help_panel = panel  # type: ignore[attr-defined]
                command.short_help = _marked(line, rich)
                placed[name] = command
        # the panels in PANELS' order (rich shows them by first appearance); a command in no panel comes last
        self.commands = {**placed, **{n: c for n, c in self.commands.items() if n not in placed}}

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """Without rich (TYPER_USE_RICH=0, or typer without it): the same panels as plain sections."""
        shown = [(n, c) for n, c in self.commands.items() if not c.hidden]
        if not shown:
            return
        width = max(len(n) for n, _ in shown)
        for panel in dict.fromkeys(getattr(c, "rich_help_panel", None) or "Commands" for _, c in shown):
            rows = [(n.ljust(width), c.get_short_help_str(formatter.width - 6 - width)) for n, c in shown
                    if (getattr(c, "rich_help_panel", None) or "Commands") == panel]
            with formatter.section(panel):
                formatter.write_dl(rows)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:
            answer_os_error(exc)
            raise typer.Exit(USAGE) from None


def _has_rich() -> bool:
    """Whether typer renders help with rich (the newer typers say so in HAS_RICH, the older by importing it)."""
    from typer import core

    has = getattr(core, "HAS_RICH", None)
    return bool(has if has is not None else getattr(core, "rich", None) is not None)


def _version(shown: bool) -> None:
    if shown:
        from pbem.cli.setup import installed_version

        typer.echo(installed_version())
        raise typer.Exit()


app = typer.Typer(
    cls=Commands,
    help="pbem: self-moderated play-by-email games on git. Signed turns, verified rules.\n\n"
         "Every command has --help with an example; the commands that read the game take --format json.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # keys live in locals
    add_completion=True,
)
for group in (setup, agreements, play, chance, report, enforce, sync, watch, dow, errata):
    app.add_typer(group.commands)


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Print the pbem version and exit.")) -> None:
    pass
