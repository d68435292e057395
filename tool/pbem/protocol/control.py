"""Control, the status a commit must write, and the progress rule (DESIGN §4.2, §4.4; seed 000 §3, §4.C): who
holds control, who starts, where replay stops after a commit and the status.yaml it must carry."""

from __future__ import annotations

from pbem.formats.records import evolve
from pbem.protocol import kinds
from typing import Any, Mapping

from pbem.crypto.keys import PublicKey
from pbem.protocol import agreements, dice, nmr, secrets
from pbem.protocol.model import AT, CLARIFY, CONDITION, OWED, REPLY, Checkpoint, Inputs, Status, Stop
from pbem.protocol.replay import replay, start_checkpoint
from pbem.protocol.serving import START_REF, order_refs, seat_before
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import (covered_by_nmr, effects_of, ended, errata_agreed, excused_by_nmr, nmr_served,
                                    resignations_applied, without_orders)
from pbem.rulesets.base import Point, Ruleset
from pbem.protocol.books import in_commit_order
from pbem.protocol.game import Game


def status_of(ruleset: Ruleset, stop: Stop, yielded_by: str | None, note: str = "") -> Status:
    """The status.yaml a commit must carry when replay stopped at `stop`: the first pending break gets
    control; `firm` is the next unresolved step (seed §3.C "firm to here")."""
    point = stop.checkpoint.point
    return Status(
        control=stop.pending[0].player if stop.pending else None,
        firm=ruleset.format_time(point) if point is not None and not stop.over else None,
        pending=stop.pending,
        over=stop.over,
        yielded_by=yielded_by,
        note=note,
    )


def resume_from(stop: Stop, served: str | None) -> Checkpoint:
    """Where the next replay starts once `served` (the player in control) has taken his turn.

    Breaks met by a resolved step cannot be recomputed from the firm point, so the unserved ones are carried;
    so are the replies owed at a held simultaneous step (`reply`, seed §6.C.1: the step is resolved again only
    once each has answered); every other kind (horizon, clarify, dice, sealed, auction) is recomputed by the next
    replay.
    """
    carried = tuple(b for b in stop.pending if b.player != served and b.kind in (CONDITION, AT, REPLY))
    if carried == stop.checkpoint.carried:
        return stop.checkpoint  # the usual turn: nothing carried before or after (a copy would equal it)
    return evolve(stop.checkpoint, carried=carried)


def progress_error(ruleset: Ruleset, firm: Point | None, committer: str, after: Inputs) -> str | None:
    """Seed §4.C: the player in control must act or forfeit at least the step at the firm point, so his
    horizon must now cover it. None when he made progress, else what he must do."""
    if firm is None:
        return "the game is over: no more turns can be taken"
    through = after.of(committer).through
    if through is None or through < firm:
        when = ruleset.format_time(firm)
        had = after.of(committer).through_text or "nothing"
        return (f"{committer} made no progress: his orders reach {had}, but he holds control at {when}; "
                f"set `through` in players/{committer}.yaml to {when} or later (seed 000 §4.C)")
    return None


def who(game: Game, key: PublicKey) -> str | None:
    """The seat a key holds in `game`, or the escrow, or None."""
    seat = game.manifest.seat_of_key(key)
    if seat is not None:
        return seat.id
    escrow = game.manifest.escrow_key
    return dice.ESCROW if escrow is not None and escrow.same_key(key) else None


def full_status(game: Game, stop: Stop, yielded_by: str | None, note: str = "") -> Status:
    """The status a commit must write: what is owed (dice, then reveals due) before the game's own breaks; the
    game is over only when replay is over and nothing is owed (DESIGN §5, §6)."""
    ruleset = game.manifest.ruleset
    base = status_of(ruleset, stop, yielded_by, note)
    if game.inputs.ordered_by_dice:  # seed §2.A: the order the start dice gave, shown with every status
        base = evolve(base, table=game.inputs.players)
    if any(a.kind == kinds.END for a in game.agreements.values()) and ended(game) is not None:
        # DESIGN §4.8: an end agreement takes effect with its last signature; what anybody still owed is moot
        return evolve(base, control=None, pending=(), over=True)
    if ruleset.positions is not None:
        base = evolve(base, position=ruleset.positions.position(stop.checkpoint.state))
    owed = dice.owed(game.manifest.players, list(game.batches.values()), base.firm)
    owed += secrets.owed_reveals(game.secrets, ruleset.parse_time, stop.checkpoint.point, stop.over, base.firm)
    if not owed:
        return base
    pending = tuple(owed) + base.pending
    return evolve(base, control=pending[0].player, pending=pending, over=False)


def start_choice(batch: dice.Batch, players: tuple[str, ...] | list[str]) -> str | None:
    """Who the start batch's die chose, or None while it is not rolled, has no die for who starts (it rolls the
    table order only) or is no die of one side per seat (DESIGN §2: a start by dice uses `sides` = number of
    seats)."""
    results = batch.results
    if (not results or batch.raw["rolls"][0].get("ref") != START_REF or batch.sides != len(players)
            or not 1 <= results[0] <= len(players)):
        return None
    return players[results[0] - 1]


def start_batch(game: Game) -> dice.Batch | None:
    """The batch that decides who starts (`pbem start --roll`) or the order around the table, if any: its first
    roll's ref is "start" or the first die of the order."""
    firsts = {START_REF, *order_refs(len(game.manifest.players))[:1]}
    for batch in sorted(game.batches.values(), key=lambda b: b.id):
        if not batch.voided and batch.raw["rolls"][0].get("ref") in firsts:
            return batch
    return None


def expected_start(game: Game, first: str) -> tuple[Stop, Status]:
    """The status the start commit must write when `first` starts (seed 000 §2.A)."""
    manifest = game.manifest
    ruleset = manifest.ruleset
    checkpoint = start_checkpoint(ruleset, manifest.setup, manifest.players)
    stop = replay(ruleset, manifest.setup, game.inputs, checkpoint, seat_before(game.inputs.players, first))
    return stop, full_status(game, stop, None)


def takes_turn(prev: Verified, player: str) -> bool:
    """Whether `player` holds control for a turn (nothing is owed, and the first break is his)."""
    assert prev.status is not None
    pending = prev.status.pending
    return bool(pending) and pending[0].player == player and not any(b.kind in OWED for b in pending)


def expected_after(prev: Verified, game: Game, player: str, note: str = "") -> tuple[Stop, Status]:
    """Where replay stops after `player`'s commit, and the status it must write. A turn serves his break;
    settling what he owed out of turn serves nothing, so the game's breaks stay as they were. The commit that
    completes an erratum agreement makes replay restart from the corrected step (DESIGN §4.8)."""
    assert prev.stop is not None
    game = in_commit_order(prev.game, game)
    ruleset = game.manifest.ruleset
    absent = nmr_served(prev, game)
    game = without_orders(excused_by_nmr(game, prev.gone_at),
                          {absent: prev.stop.checkpoint.point} if absent is not None else {})
    # an nmr settles everything its player owes up to his next decision (protocol/nmr.py)
    covers = nmr.covers_at(ruleset, game.manifest.setup, prev.gone_at, prev.stop.checkpoint.point, absent)
    prev = resignations_applied(prev, game)
    assert prev.stop is not None
    agreed = errata_agreed(prev, game)
    corrected = min((p for p in (e.corrected_from() for e in agreed) if p is not None), default=None)
    # what earlier agreements did at points replay has yet to reach (after an erratum: all of it)
    effects = effects_of(ruleset, prev.gone_at, None if corrected is not None else prev.stop.checkpoint.point)
    if corrected is not None:
        # The firm point's state was built from the uncorrected report, so it is rebuilt from the game start. The
        # steps before the correction are unchanged and were served: resolved again, never served again.
        manifest = game.manifest
        start = start_checkpoint(ruleset, manifest.setup, manifest.players)
        stop = replay(ruleset, manifest.setup, nmr.horizons(covered_by_nmr(game, prev.gone_at).inputs,
                                                            nmr.covers_recorded(ruleset, manifest.setup,
                                                                                prev.gone_at)),
                      start, prev.last_yielder,
                      quiet_before=corrected, effects=effects,
                      settled_before=None if prev.stop.over else prev.stop.checkpoint.point)
    elif absent is not None and takes_turn(prev, absent):
        # DESIGN §4.8: the nmr's last signature serves the absent player's turn with no new orders (his part
        # settled by default), as if he had yielded without a word
        stop = nmr.replay_covered(ruleset, game.manifest.setup, game.inputs, resume_from(prev.stop, absent), absent,
                                  absent, fresh={absent: ()}, effects=effects, covers=covers)
        return stop, full_status(game, stop, absent, note)
    elif takes_turn(prev, player) and not agreed and not only_out_of_turn(prev.game, game):
        stop = nmr.replay_covered(ruleset, game.manifest.setup, game.inputs, resume_from(prev.stop, player),
                                  back_to(prev, player), player,
                                  fresh={player: new_conditions(prev.game, game, player)}, effects=effects,
                                  covers=covers)
    else:
        stop = nmr.replay_covered(ruleset, game.manifest.setup, game.inputs, resume_from(prev.stop, None),
                                  prev.last_yielder, effects=effects, covers=covers)
    return stop, full_status(game, stop, player, note)


def only_out_of_turn(before: Game, after: Game) -> bool:
    """Whether a commit only proposes or signs agreements, or only posts press (DESIGN §4.8, last lines): no
    turn, whoever makes it; control, the firm point and every owed break stay as they were. A commit that
    changes nothing at all is a turn: the pass of the player in control."""
    if after.agreements is not before.agreements and after.agreements != before.agreements:
        return True
    if after.press is before.press or after.press == before.press:
        return False
    return (after.inputs.files == before.inputs.files and after.inputs.per_player == before.inputs.per_player
            and after.batches == before.batches and after.secrets == before.secrets)


def clarifies(prev: Verified, player: str) -> bool:
    """Whether `player`'s turn answers a special break (seed §5.C): the first pending break is his `clarify`."""
    return (prev.status is not None and bool(prev.status.pending) and prev.status.pending[0].kind == CLARIFY
            and prev.status.pending[0].player == player)


def back_to(prev: Verified, player: str) -> str | None:
    """Whom the next breaks are served after (seed §3.B, §5.C). Normally the player who just took his turn. After
    the answer to a special break, the owner "must ... pass control of the game back to the current player, so
    that progress may continue": the breaks that follow are served starting with the player who took the turn
    before the special break (he gets control back if replay stops for him), then in table order after him."""
    original = prev.back or prev.last_yielder
    if clarifies(prev, player) and original in prev.game.inputs.players:
        return seat_before(prev.game.inputs.players, original)
    return player


def new_conditions(before: Game, after: Game, player: str) -> tuple[Mapping[str, Any], ...]:
    """The break conditions `player` has in `after` and did not have in `before` (DESIGN §4.3: one written while
    it already holds is met at the next step it still holds)."""
    old = before.inputs.of(player).breaks
    return tuple(c for c in after.inputs.of(player).breaks if c not in old)

