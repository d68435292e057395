"""DESIGN §2 Setup and seed 000 §2.A: before the start, joins (a new key claims an open seat), edits by the
founder or seated players, start agreements (proposed and signed by seated players), dice to decide who starts,
and the start commit (all seats claimed; every seat's signed consent over this very game.yaml, and the first
player it names or the start roll chose: setup.*, agreement.*, dice.*; the first computed status)."""

from __future__ import annotations

from pbem.protocol import agreement_rules
from typing import Any, Mapping

from pbem.errors import Finding
from pbem.protocol import agreements, dice, dice_binding
from pbem.protocol.serving import START_REF, order_refs, start_sides
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import consent_table
from pbem.verify.change import Change
from pbem.files.layout import CODEOWNERS, GAME, README, STATUS, WORKFLOW
from pbem.protocol.game import Game
from pbem.verify.invitation import join_findings

SETUP_FILES = {GAME, WORKFLOW, README, CODEOWNERS}


def root(game: Game, paths: set[str]) -> list[Finding]:
    """DESIGN §3 History: the first commit only sets up the game (history.root)."""
    return [Finding("history.root", f"{path}: the first commit only sets up the game (game.yaml, README.md, "
                    "the workflow)", file=path) for path in sorted(paths - SETUP_FILES)]


def seats_kept(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """A claimed seat keeps its key: only its owner's join set it (setup.seat-taken)."""
    findings = []
    for before in prev.game.manifest.seats:
        after = game.manifest.seat(before.id)
        if before.key is not None and (after is None or after.key is None or not after.key.same_key(before.key)):
            findings.append(Finding("setup.seat-taken", f"seat {before.id!r} was already claimed; its key "
                                    "may not change", file=GAME))
    return findings


def join(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """A key that holds no seat may only claim one open seat, changing nothing else (pbem join), with the invite
    code where the verifier can check it (signature.unknown-key, setup.*)."""
    old, new, claimed = prev.game.manifest, game.manifest, change.claimed
    opened = old.seat(claimed[0].id) if claimed else None
    is_join = (len(claimed) == 1 and opened is not None and opened.key is None
               and change.paths <= {GAME} and _same_but_key(old.raw, new.raw, claimed[0].id))
    if not is_join:
        return [Finding("signature.unknown-key", f"signed by {change.signer.fingerprint()}, which holds no "
                        "seat: a new key may only claim one open seat (pbem join)", file=GAME)]
    return join_findings(new, claimed[0].id)


def files(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """Before the start only the setup files, start agreements and the dice for who starts change."""
    return [Finding("setup.unexpected-file", f"{path}: before the start only game.yaml, README.md, the workflow, "
                    "start agreements and dice to decide who starts may change", file=path)
            for path in sorted(p for p in change.paths if p not in SETUP_FILES | {STATUS}
                               and p not in change.dice and p not in change.agreements)]


def start_dice(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """Before the start the only dice owed are the one for who starts, with as many sides as seats (DESIGN §2),
    and at a table of three or more those of the table order, of n, n-1, …, 2 sides (seed §2.A)."""
    if not change.dice:
        return []
    new = game.manifest
    findings = dice.batch_findings(new.id, new.players, new.keys, new.escrow_key, prev.game.batches,
                                   game.batches, change.actor or "")
    seats = len(new.players)
    owed_refs = {START_REF, *order_refs(seats)}
    findings.extend(dice_binding.binding_findings(prev.game.batches, game.batches, owed_refs,
                                          lambda ref: start_sides(ref, seats), lambda ref: False))
    findings.extend(dice_binding.void_binding_findings(prev.game.batches, game.batches, owed_refs))
    return findings


def start_agreements(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """Start agreements proposed and signed before the start (DESIGN §4.8, agreement.*)."""
    if not change.agreements:
        return []
    return agreement_rules.agreement_findings(consent_table(game, started=False), change.only(prev.game.agreements),
                                         change.only(game.agreements), change.actor or "")


def seats_open(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """The start commit: every seat is claimed (setup.seats-open)."""
    open_seats = [s.id for s in game.manifest.seats if s.key is None]
    if open_seats:
        return [Finding("setup.seats-open", f"cannot start: seats {', '.join(open_seats)} are not claimed",
                        file=GAME)]
    return []


def first_player(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """The start commit gives control to a player (status.mismatch)."""
    assert game.status is not None
    first = game.status.control
    if first not in game.manifest.players:
        return [Finding("status.mismatch", f"control must go to a player, got {first!r}", file=STATUS)]
    return []


def who_starts(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """The start roll, if any, has a side per seat and chose the player given control (dice.bad-sides,
    dice.start-mismatch); every seat consented to this game.yaml and its first player (agreement.*)."""
    assert game.status is not None
    first, players = game.status.control, game.manifest.players
    assert first is not None  # a player: rules.setup.first_player came first
    batch, rolled = change.start_roll
    findings = []
    if batch is not None and batch.raw["rolls"][0].get("ref") == START_REF:
        if batch.sides != len(players):
            findings.append(Finding("dice.bad-sides", f"dice {batch.id} for who starts roll a d{batch.sides}, but "
                                    f"the table has {len(players)} seats", file=batch.file,
                                    line=batch.line_of("sides")))
        elif rolled != first:
            findings.append(Finding("dice.start-mismatch", f"dice {batch.id} decide who starts: "
                                    f"{rolled or 'not rolled yet'}, but control went to {first}", file=STATUS))
    findings.extend(agreement_rules.start_findings(consent_table(game, started=False), game.agreements, first,
                                              rolled, game.inputs.ordered_by_dice))
    return findings


def _same_but_key(old: Mapping[str, Any], new: Mapping[str, Any], seat_id: str) -> bool:
    """game.yaml unchanged except for `key` (and `name`, `invite`) of one seat: what `pbem join` writes."""
    def strip(raw: Mapping[str, Any]) -> dict:
        copy = dict(raw)
        copy["players"] = [
            {k: v for k, v in s.items() if not (s["id"] == seat_id and k in ("key", "name", "invite"))}
            for s in raw["players"]
        ]
        return copy
    return strip(old) == strip(new)
