"""Judge one commit (or a working tree) against the one before it: the per-commit steps of DESIGN §3–§6.

No git here: the caller reads both trees and checks the signature; this module decides whether the signer was
allowed to make this change and whether status.yaml says what replay computes. What the commit changed is worked
out once (verify.change); the commit is classified, and its kind's rules (verify.rules, one module per step)
run in order, every finding kept:

  root       the first commit only sets up the game (rules.setup.root);
  setup      before the start: edits by the founder or seated players, start agreements, dice for who starts;
  join       the same, by a new key claiming an open seat;
  start      a setup or join commit that writes the first status: every seat claimed and consenting, the first
             player as agreed or rolled, the first computed status;

and once the game has started, after the checks every commit gets (an amend's or seat's effect written, the
frozen files, a seated signer, a game not over):

  turn       the player in control takes his turn: his files and entries only, nothing before the firm marker,
             dice and secrets as §5 and §6 allow, legal entries, progress, the status replay computes;
  settle     out of turn, a player settles what he owes now (a dice part, a reveal), and nothing else;
  press      a commit posting press only: no turn, whoever makes it (DESIGN §4.8, last lines);
  agreement  proposes or signs agreements, and writes what the agreements it completes change;
  refused    none of these: a turn by a player not in control; the commit changes nothing.
"""

from __future__ import annotations

from typing import Iterable

from pbem.crypto.keys import PublicKey
from pbem.errors import Finding
from pbem.protocol.control import back_to, clarifies
from pbem.protocol.serving import seat_before
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import gone_now
from pbem.verify.change import AGREEMENT, JOIN, PRESS, REFUSED, SETTLE, SETUP, START, TURN, Change
from pbem.protocol.books import in_commit_order
from pbem.protocol.game import Game
from pbem.verify.rules import (Rule, agreements, control, dice, firm, legality, ownership, press, progress,
                               protected, secrets, setup, status, tactical)

# What each kind of commit is judged by, in order: the order its findings are listed in.
RULES: dict[str, tuple[Rule, ...]] = {
    SETUP: (setup.seats_kept, setup.files, setup.start_dice, setup.start_agreements),
    JOIN: (setup.seats_kept, setup.join, setup.files, setup.start_dice, setup.start_agreements),
    START: (setup.who_starts, status.at_start),
    TURN: (ownership.check, firm.check, dice.batches, secrets.check, tactical.launches, press.check,
           legality.check, status.replayed, dice.auction, dice.binding, progress.check, tactical.audits,
           status.check),
    SETTLE: (control.out_of_turn, ownership.check, firm.check, dice.batches, secrets.check, tactical.launches,
             press.check, status.replayed, dice.auction, dice.binding, progress.check, tactical.audits,
             status.check),
    PRESS: (control.out_of_turn, ownership.check, firm.check, dice.batches, secrets.check, tactical.launches,
            press.check, status.replayed, dice.auction, dice.binding, tactical.audits, status.check),
    AGREEMENT: (agreements.check, status.replayed, dice.binding, tactical.audits, status.check),
    REFUSED: (control.withheld_touched, control.not_in_control),
}
PLAYED = (agreements.effect_missing, protected.check)  # every commit once the game has started, first
BEFORE_START = (protected.at_start, setup.seats_open, setup.first_player)  # the start commit, before who starts


def judge(prev: Verified | None, game: Game, changed: Iterable[str], signer: PublicKey) -> tuple[list[Finding], Verified]:
    """All findings for this change, and what is known after it (also when findings were made)."""
    paths = set(changed)
    if prev is None:
        seat = game.manifest.seat_of_key(signer)
        return setup.root(game, paths), Verified(game, None, signer, seat.id if seat else None)
    game = in_commit_order(prev.game, game)  # a tree alone does not know the order press was sent in (§7.2)
    change = Change(prev, game, paths, signer)
    if not prev.started:
        return _setup(prev, change)
    return _play(prev, change)


def classify(prev: Verified, change: Change) -> str:
    """What kind of commit `change` is, once the game has started and its signer holds a seat."""
    if change.agreements:
        return AGREEMENT  # signing and proposing are no turn, also for the player in control (DESIGN §4.8)
    if change.press_only:
        return PRESS
    if change.takes_turn:
        return TURN
    return SETTLE if change.mine else REFUSED


def run(rules: Iterable[Rule], prev: Verified, change: Change) -> list[Finding]:
    """Every finding of `rules`, in their order."""
    game = change.game
    return [finding for rule in rules for finding in rule(prev, game, change)]


def _setup(prev: Verified, change: Change) -> tuple[list[Finding], Verified]:
    change.kind = JOIN if change.joining else SETUP
    findings = run(RULES[change.kind], prev, change)
    game, actor = change.game, change.actor
    if game.status is None:
        return findings, Verified(game, None, prev.founder, actor)
    change.kind = START  # the start commit (pbem start): game.yaml frozen from here on
    findings += run(BEFORE_START, prev, change)
    first = game.status.control
    if first not in game.manifest.players:
        return findings, Verified(game, None, prev.founder, actor)
    findings += run(RULES[START], prev, change)
    stop, expected = change.start
    return findings, Verified(game, stop, prev.founder, actor, expected, seat_before(game.inputs.players, first))


def _play(prev: Verified, change: Change) -> tuple[list[Finding], Verified]:
    assert prev.stop is not None and prev.status is not None
    findings = run(PLAYED, prev, change)
    game = change.game

    def unchanged() -> Verified:
        return Verified(game, prev.stop, prev.founder, None, prev.status, prev.last_yielder, gone_at=prev.gone_at,
                        nmrs=prev.nmrs)

    if change.player is None:
        return findings + control.signer(prev, game, change), unchanged()
    if prev.status.over:
        return findings + control.game_over(prev, game, change), unchanged()
    change.kind = classify(prev, change)
    findings += run(RULES[change.kind], prev, change)
    if change.kind == REFUSED:
        return findings, unchanged()
    return findings, _after(prev, change)


def _after(prev: Verified, change: Change) -> Verified:
    """What is known after an accepted kind of commit: whose turn last moved the game on, to whom control goes
    back after special breaks (seed §5.C), what the agreements it completes did (DESIGN §4.8)."""
    assert prev.stop is not None
    game, player = change.game, change.player or ""
    turn, agreement = change.kind == TURN, change.kind == AGREEMENT
    stop, expected = change.expected
    nmr = change.nmr if agreement else None
    last = back_to(prev, player) if turn else (nmr[0] if nmr else None) or prev.last_yielder if agreement \
        else prev.last_yielder
    if expected.yielded_by not in (None, player) and expected.yielded_by in game.manifest.players:
        last = expected.yielded_by  # a resigned or absent player's turn was served after this commit
    back = (prev.back or prev.last_yielder) if turn and clarifies(prev, player) else None if turn else prev.back
    gone_at = prev.gone_at + gone_now(prev, game) if agreement else prev.gone_at
    point = prev.stop.checkpoint.point
    nmrs = prev.nmrs + ((nmr[1], point),) if nmr is not None and point is not None else prev.nmrs
    return Verified(game, stop, prev.founder, player, expected, last, back, gone_at, nmrs)

