"""Today's judge (tool/pbem/verify/turns.py as it stood before the house was rebuilt), kept beside the new one
for the length of the rebuild: with PBEM_CROSSCHECK_JUDGE naming this file, verify/history.py judges every commit
with both and fails on any difference (findings, status, who yielded last, to whom control goes back, what
agreements did). It imports today's helper modules (they keep their names through re-exports), never
verify/turns.py. Delete it when the rebuild lands.

The original module docstring follows.

Judge one commit (or a working tree) against the one before it: the per-commit steps of DESIGN §3–§6.

No git here: the caller reads both trees and checks the signature; this module decides whether the signer was
allowed to make this change and whether status.yaml says what replay computes. Steps, in order:

  1. setup phase (no status.yaml yet): joins (a new key claims an open seat), edits by the founder or seated
     players, start agreements (proposed and signed by seated players), dice to decide who starts, and the start
     commit (all seats claimed; every seat's signed consent over this very game.yaml, and the first player it
     names or the start roll chose: setup.no-consent, agreement.*; the first computed status);
  2. play: game.yaml, README, the workflow and .github/CODEOWNERS are frozen (DESIGN §3 Trees);
  3. the signer is a seated player or the dice escrow (signature.unknown-key), and either holds control for a
     turn, or settles something he owes out of turn: a dice contribution or reveal, a secret's reveal
     (signature.not-in-control);
  4. he changed only his own players file and entries (ownership.*), nothing before the firm marker
     (firm.changed), and dice and secrets only as §5 and §6 allow (dice.*, secret.*);
  5. he made progress (progress.none, seed §4.C);
  6. the entries he added, judged with what he could know when writing them (rules.illegal-action,
     rules.duplicate-action; DESIGN §4.2 "Entries and time"); what others made impossible later is void at
     replay, never a finding;
  7. replay from the firm point: what is owed (dice, reveals) comes before the game's
     breaks; status.yaml must equal the result (status.mismatch).

A commit that changes errata/ is an erratum commit (DESIGN §4.8): any player may make it without holding control;
it proposes, signs or applies errata (erratum.*) and is no turn (no break served, no progress owed). The one that
applies an erratum changes the report by exactly its entries, and replay restarts from the corrected step.
"""

from __future__ import annotations

from pbem.protocol import agreement_rules
from pbem.protocol import erratum as erratum_kind
from pbem.protocol import ids as author_ids
from pbem.protocol import kinds
import atexit
import os
import time

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping

from pbem.crypto.keys import PublicKey
from pbem.errors import Finding, PbemError
from pbem.protocol import agreements, dice, errata, nmr, openings, resealing, secrets, upgrade
from pbem.protocol import auction as auctions
from pbem.protocol.control import progress_error, resume_from, status_of
from pbem.protocol.history import entry_changes, firm_findings, ownership_findings
from pbem.protocol.legality import own_findings
from pbem.protocol.model import CLARIFY, READY, REPLY, SEALED, Break, Status, Stop
from pbem.protocol.press import press_findings
from pbem.protocol.whisper import whisper_findings
from pbem.rulesets.base import Point, Ruleset
from pbem.protocol.replay import replay, start_checkpoint
from pbem.protocol.serving import START_REF, order_refs, seat_before, start_sides
from pbem.files.layout import AGREEMENT_RE
from pbem.files.layout import ERRATUM_RE
from pbem.files.layout import (CODEOWNERS, DICE_RE, GAME, PLAYERS_RE, PRESS_RE, README, REPORT_RE, SECRET_RE, STATUS,
                               WORKFLOW)
from pbem.protocol.books import in_commit_order, press_added
from pbem.protocol.game import Game
from pbem.verify.invitation import join_findings

PROTECTED = (GAME, WORKFLOW, README, CODEOWNERS)
SETUP_FILES = {GAME, WORKFLOW, README, CODEOWNERS}
OWED = (dice.DICE, secrets.SECRET, SEALED, READY)


@dataclass(frozen=True)
class Verified:
    """What is known after accepting a commit: the game as read there, where replay stopped, the status that
    follows (obligations first), and whose turn last moved the game on (serving order starts after him)."""

    game: Game
    stop: Stop | None  # None while the game is being set up
    founder: PublicKey | None
    actor: str | None = None  # the seat (or the escrow) that made this commit; None for the founder
    status: Status | None = None
    last_yielder: str | None = None
    # while special breaks are answered (seed §5.C): the player who took the turn before the first of them,
    # to whom control passes back
    back: str | None = None
    # what agreements did to the game at a game point (kind, player, the firm point where it took effect): a
    # resign, a seat given to a replacement, an nmr; a replay from an earlier point (after an erratum) does it
    # again at that same point (`gone_now`, `effects_of`)
    gone_at: tuple[tuple[str, str, Point], ...] = ()
    nmrs: tuple[tuple[str, Point], ...] = ()  # (an nmr agreement's id, the firm point it settled), in effect order

    @property
    def started(self) -> bool:
        return self.stop is not None


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
        base = replace(base, table=game.inputs.players)
    if any(a.kind == kinds.END for a in game.agreements.values()) and ended(game) is not None:
        # DESIGN §4.8: an end agreement takes effect with its last signature; what anybody still owed is moot
        return replace(base, control=None, pending=(), over=True)
    position = getattr(ruleset, "position", None)
    if position is not None:
        base = replace(base, position=position(stop.checkpoint.state))
    owed = dice.owed(game.manifest.players, list(game.batches.values()), base.firm)
    owed += secrets.owed_reveals(game.secrets, ruleset.parse_time, stop.checkpoint.point, stop.over, base.firm)
    if not owed:
        return base
    pending = tuple(owed) + base.pending
    return replace(base, control=pending[0].player, pending=pending, over=False)


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
    settling what he owed out of turn serves nothing, so the game's breaks stay as they were. An erratum commit
    is no turn; the one that applies an erratum makes replay restart from the corrected step (DESIGN §4.8)."""
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
    corrected = min((p for p in (errata.corrected_from(prev.game.errata, game.errata),
                                 *(e.corrected_from() for e in agreed)) if p is not None), default=None)
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
    elif takes_turn(prev, player) and prev.game.errata == game.errata and not agreed \
            and not only_out_of_turn(prev.game, game):
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


FOREVER: tuple = (float("inf"),)  # a horizon past every game time (points are tuples led by a number)


def without_orders(game: Game, absent: Mapping[str, object]) -> Game:
    """`game` as replay reads it once players gave up their say (DESIGN §4.8): a resigned player's horizon
    reaches the end of the game with no new entries and no break conditions (his side does what the ruleset
    does for a player without orders: nothing, or its civil-disorder rules), and an absent player found by an
    nmr is covered through the step he was awaited at (`absent`: player -> that point), with no new orders."""
    resigned = kinds.resigned(game.agreements, game.manifest.keys) \
        if any(a.kind == kinds.RESIGN for a in game.agreements.values()) else frozenset()
    if not resigned and not absent:
        return game
    per_player = dict(game.inputs.per_player)
    for player in resigned:
        per_player[player] = replace(game.inputs.of(player), through=FOREVER, breaks=())
    for player, point in absent.items():
        mine = game.inputs.of(player)
        # past the last step (a reveal owed at the end) there is no step to cover him through
        if point is not None and (mine.through is None or mine.through < point):  # type: ignore[operator]
            per_player[player] = replace(mine, through=point)
    excused = game.inputs.excused | {(player, point) for player, point in absent.items() if point is not None}
    return replace(game, inputs=replace(game.inputs, per_player=per_player, gone=frozenset(resigned),
                                        excused=excused))


def resignations_applied(prev: Verified, game: Game) -> Verified:
    """`prev` with the ruleset's effect of each resignation this commit completes (DESIGN §4.8) applied to the
    state at its firm point, where replay resumes: it takes effect there, once, and every later state carries
    it (tactical: his units leave the map; Diplomacy: civil disorder); likewise a seat given to a replacement
    (`ruleset.replaced`: Diplomacy lifts the civil disorder). Without the hooks, nothing."""
    ruleset = game.manifest.ruleset
    left, taken = getattr(ruleset, "resigned", None), getattr(ruleset, "replaced", None)
    if (left is None and taken is None) or prev.stop is None or not game.agreements \
            or game.agreements is prev.game.agreements:
        return prev
    now, before = _resigned_now_and_before(prev, game)
    if now == before:
        return prev
    state = prev.stop.checkpoint.state
    for player in sorted(now - before):
        state = left(state, player) if left is not None else state
    for player in sorted(before - now):
        state = taken(state, player) if taken is not None else state
    return replace(prev, stop=replace(prev.stop, checkpoint=replace(prev.stop.checkpoint, state=state)))


def gone_now(prev: Verified, game: Game) -> tuple[tuple[str, str, Point], ...]:
    """What the agreements this commit completes did at the firm point (`Verified.gone_at`): each resignation
    (RESIGN), each seat given back to a replacement (SEAT), the nmr served (NMR)."""
    if prev.stop is None or prev.stop.checkpoint.point is None or not game.agreements \
            or game.agreements is prev.game.agreements:
        return ()
    point = prev.stop.checkpoint.point
    now, before = _resigned_now_and_before(prev, game)
    out = [(kinds.RESIGN, p, point) for p in sorted(now - before)]
    out += [(kinds.SEAT, p, point) for p in sorted(before - now)]
    absent = nmr_served(prev, game)
    if absent is not None:
        out.append((kinds.NMR, absent, point))
    return tuple(out)


def effects_of(ruleset: Ruleset, gone_at: Iterable[tuple[str, str, Point]],
               after: Point | None) -> list[tuple[Point, Callable[[Any], Any]]]:
    """The ruleset's effects of the recorded resignations and replacements (`resignations_applied`) at their
    points, for replay; only those past `after` (the point replay resumes at: the others are in its state), or
    all of them when replay restarts from the game start (`after` None)."""
    left, taken = getattr(ruleset, "resigned", None), getattr(ruleset, "replaced", None)
    out: list[tuple[Point, Callable[[Any], Any]]] = []
    for kind, player, point in gone_at:
        hook = left if kind == kinds.RESIGN else taken if kind == kinds.SEAT else None
        if hook is not None and (after is None or point > after):
            out.append((point, lambda state, hook=hook, player=player: hook(state, player)))
    return out


def covered_by_nmr(game: Game, gone_at: Iterable[tuple[str, str, Point]]) -> Game:
    """`game` with each absent player an earlier nmr settled for covered through the step he was awaited at (as
    `without_orders` did at that nmr), so that a replay from the game start does not wait for him there again."""
    per_player = None
    for kind, player, point in gone_at:
        mine = game.inputs.of(player)
        if kind == kinds.NMR and (mine.through is None or mine.through < point):
            per_player = dict(game.inputs.per_player) if per_player is None else per_player
            per_player[player] = replace(mine, through=point)
    return game if per_player is None else replace(game, inputs=replace(game.inputs, per_player=per_player))


def excused_by_nmr(game: Game, gone_at: Iterable[tuple[str, str, Point]]) -> Game:
    """`game` with the sealed step each earlier nmr settled excused for its absent player (DESIGN §4.8): every
    later commit's replay counts his input there as none, as the nmr's own commit did, and owes his input at the
    steps after it as usual."""
    excused = {(player, point) for kind, player, point in gone_at if kind == kinds.NMR}
    if excused <= game.inputs.excused:
        return game
    return replace(game, inputs=replace(game.inputs, excused=game.inputs.excused | excused))


def nmr_served(prev: Verified, game: Game) -> str | None:
    """The absent player an nmr agreement completed by this commit settles for (DESIGN §4.8), or None: his turn
    is served with no new orders; his sealed input counts as none (`without_orders`); the dice parts and the
    secrets' reveals he owes are marked withheld by the same commit (`settled_now`)."""
    found = _nmr_completed(prev, game)
    return found[0] if found is not None else None


def _nmr_completed(prev: Verified, game: Game) -> tuple[str, str] | None:
    """(the absent player, the nmr agreement's id) for an nmr this commit completes, or None."""
    if not game.agreements or game.agreements is prev.game.agreements:
        return None
    table = consent_table(prev.game, True, prev.status)
    for new in _completed(prev, game, kinds.NMR, table):
        absent = new.content.get("player")
        if isinstance(absent, str) and absent in table.owing:
            return absent, new.id
    return None


def errata_agreed(prev: Verified, game: Game) -> list[erratum_kind.Erratum]:
    """The erratum agreements this commit completes (DESIGN §4.8: in effect with the last required signature),
    as errata: the commit changes the report by exactly their entries, and replay restarts from the earliest
    corrected step. Only an agreement this commit changed counts (a signature added, or a proposal that needs no
    other), so each takes effect once."""
    if not game.agreements or game.agreements is prev.game.agreements:
        return []
    table = consent_table(prev.game, True, prev.status)
    return [erratum_kind.of_agreement(new) for new in _completed(prev, game, kinds.ERRATUM, table)]


def _completed(prev: Verified, game: Game, kind: str, table: kinds.Table) -> list[agreements.Agreement]:
    """The agreements of `kind` this commit completes, in file order: changed by it (a signature added, or a
    proposal that needs no other) and now signed by every signer they need, which they were not before; so each
    takes effect once (DESIGN §4.8)."""
    out = []
    for path, new in sorted(game.agreements.items()):
        if new.kind != kind:
            continue
        old = prev.game.agreements.get(path)
        if old is not None and (old == new or kinds.signed_by_all(old, table)):
            continue
        if kinds.signed_by_all(new, table):
            out.append(new)
    return out


def _resigned_now_and_before(prev: Verified, game: Game) -> tuple[frozenset[str], frozenset[str]]:
    """(the seats left by a resign after this commit, and before it): a seat in the first only resigned with
    it, one in the second only was given to a replacement with it."""
    before = kinds.resigned(prev.game.agreements, prev.game.manifest.keys) if prev.game.agreements \
        else frozenset()
    return kinds.resigned(game.agreements, game.manifest.keys), before


def settled_now(prev: Verified, game: Game) -> dict[str, str]:
    """Player -> the agreement completed by this commit that settles what he owes (DESIGN §4.8): an nmr against
    him (what he owes now), or his own resign (every part he still had to give). Its commit marks each such dice
    part and secret `withheld` by that agreement: a withheld reveal loses what it hid, a withheld contribution
    is left out."""
    if not game.agreements or game.agreements is prev.game.agreements or prev.stop is None:
        return {}
    out: dict[str, str] = {}
    found = _nmr_completed(prev, game)
    if found is not None:
        out[found[0]] = found[1]
    if any(a.kind == kinds.RESIGN for a in game.agreements.values()):
        now, before = _resigned_now_and_before(prev, game)
        for player in sorted(now - before):
            mine = [a.id for a in game.agreements.values() if a.kind == kinds.RESIGN and a.by == player
                    and player in a.signatures]
            out[player] = max(mine)
    return out


def settlement_parts(prev: Verified, settled: Mapping[str, str]) -> dict[str, tuple[set[str], set[str]]]:
    """Player -> (the dice batches, the secrets) whose part he owed is settled by `settled`'s agreement: for an
    nmr what he owes now, for his resign everything he still had to give."""
    players = prev.game.manifest.players
    out = {}
    for player, agreement in settled.items():
        resign = author_ids.author_of(agreement) == player
        batches = {b.id for b in prev.game.batches.values()
                   if (dice.involved(players, b, player) if resign else dice.owes(players, b, player))}
        out[player] = (batches, secrets_owed(prev, player, resign))
    return out


def secrets_owed(prev: Verified, player: str, resign: bool) -> set[str]:
    """The ids of `player`'s secrets whose reveal he owes now (a resign: every one he has not revealed, for he
    never will): those due, his sealed input at a step waiting for its reveals, a seeking weapon's target at its
    contact (DESIGN §4.7, §6, §7.1)."""
    assert prev.stop is not None and prev.status is not None
    game = prev.game
    mine = {s.id: s for s in game.secrets.values() if s.owner == player and not s.revealed and not s.withheld}
    if resign:
        return set(mine)
    ruleset = game.manifest.ruleset
    point = prev.stop.checkpoint.point
    owed = {s.id for s in secrets.due(mine, ruleset.parse_time, point, prev.stop.over)}
    waited = {b.at for b in prev.status.pending if b.player == player and b.kind == secrets.SECRET}
    owed |= {i.secret for (when, p), i in game.inputs.sealed.items() if p == player and when in waited}
    for unit, _candidates in prev.stop.checkpoint.contacts:
        target = game.inputs.targets.get((player, unit))
        if target is not None and ruleset.owner_of(prev.stop.checkpoint.state, unit) == player:
            owed.add(target.secret)
    return owed & set(mine)


def new_conditions(before: Game, after: Game, player: str) -> tuple[dict, ...]:
    """The break conditions `player` has in `after` and did not have in `before` (DESIGN §4.3: one written while
    it already holds is met at the next step it still holds)."""
    old = before.inputs.of(player).breaks
    return tuple(c for c in after.inputs.of(player).breaks if c not in old)


def judge(prev: Verified | None, game: Game, changed: Iterable[str], signer: PublicKey) -> tuple[list[Finding], Verified]:
    """All findings for this change, and what is known after it (also when findings were made)."""
    changed = set(changed)
    if prev is None:
        return _root(game, changed, signer)
    game = in_commit_order(prev.game, game)  # a tree alone does not know the order press was sent in (§7.2)
    if not prev.started:
        return _setup(prev, game, changed, signer)
    return _turn(prev, game, changed, signer)


def _root(game: Game, changed: set[str], signer: PublicKey) -> tuple[list[Finding], Verified]:
    findings = [Finding("history.root", f"{path}: the first commit only sets up the game (game.yaml, README.md, "
                        "the workflow)", file=path) for path in sorted(changed - SETUP_FILES)]
    seat = game.manifest.seat_of_key(signer)
    return findings, Verified(game, None, signer, seat.id if seat else None)


def _setup(prev: Verified, game: Game, changed: set[str], signer: PublicKey) -> tuple[list[Finding], Verified]:
    old, new = prev.game.manifest, game.manifest
    actor = who(prev.game, signer)
    founder = prev.founder is not None and prev.founder.same_key(signer)
    findings: list[Finding] = []
    for before in old.seats:  # a claimed seat keeps its key (only its owner's join set it)
        after = new.seat(before.id)
        if before.key is not None and (after is None or after.key is None or not after.key.same_key(before.key)):
            findings.append(Finding("setup.seat-taken", f"seat {before.id!r} was already claimed; its key "
                                    "may not change", file=GAME))
    if actor is None and not founder:
        claimed = [s for s in new.seats if s.key is not None and s.key.same_key(signer)]
        opened = old.seat(claimed[0].id) if claimed else None
        is_join = (len(claimed) == 1 and opened is not None and opened.key is None
                   and changed <= {GAME} and _same_but_key(old.raw, new.raw, claimed[0].id))
        if not is_join:
            findings.append(Finding("signature.unknown-key", f"signed by {signer.fingerprint()}, which holds no "
                                    "seat: a new key may only claim one open seat (pbem join)", file=GAME))
        else:
            findings += join_findings(new, claimed[0].id)  # the invite code, where the verifier can check it
        actor = claimed[0].id if claimed else None
    elif actor is None:
        now = new.seat_of_key(signer)
        actor = now.id if now else None
    for path in sorted(p for p in changed if p not in SETUP_FILES | {STATUS} and not DICE_RE.match(p)
                       and not AGREEMENT_RE.match(p)):
        findings.append(Finding("setup.unexpected-file", f"{path}: before the start only game.yaml, README.md, "
                                "the workflow, start agreements and dice to decide who starts may change",
                                file=path))
    if any(DICE_RE.match(p) for p in changed):
        findings.extend(dice.batch_findings(new.id, new.players, new.keys, new.escrow_key, prev.game.batches,
                                            game.batches, actor or ""))
        # before the start the only dice owed are the one for who starts, with as many sides as seats (DESIGN §2),
        # and at a table of three or more those of the table order, of n, n-1, …, 2 sides (seed §2.A)
        seats = len(new.players)
        owed_refs = {START_REF, *order_refs(seats)}
        findings.extend(dice.binding_findings(prev.game.batches, game.batches, owed_refs,
                                              lambda ref: start_sides(ref, seats), lambda ref: False))
        findings.extend(dice.void_binding_findings(prev.game.batches, game.batches, owed_refs))
    if any(AGREEMENT_RE.match(p) for p in changed):
        findings.extend(agreement_rules.agreement_findings(consent_table(game, started=False),
                                                      _only(prev.game.agreements, changed),
                                                      _only(game.agreements, changed), actor or ""))
    if game.status is None:
        return findings, Verified(game, None, prev.founder, actor)
    # the start commit (pbem start): game.yaml frozen from here on
    if GAME in changed:
        findings.append(Finding("protected.changed", "the start commit may not change game.yaml", file=GAME))
    open_seats = [s.id for s in new.seats if s.key is None]
    if open_seats:
        findings.append(Finding("setup.seats-open", f"cannot start: seats {', '.join(open_seats)} are not claimed",
                                file=GAME))
    first = game.status.control
    if first not in new.players:
        findings.append(Finding("status.mismatch", f"control must go to a player, got {first!r}", file=STATUS))
        return findings, Verified(game, None, prev.founder, actor)
    batch = start_batch(game)
    rolled = None
    if batch is not None and batch.raw["rolls"][0].get("ref") == START_REF:
        rolled = start_choice(batch, new.players)
        if batch.sides != len(new.players):
            findings.append(Finding("dice.bad-sides", f"dice {batch.id} for who starts roll a d{batch.sides}, but "
                                    f"the table has {len(new.players)} seats", file=batch.file,
                                    line=batch.line_of("sides")))
        elif rolled != first:
            findings.append(Finding("dice.start-mismatch", f"dice {batch.id} decide who starts: "
                                    f"{rolled or 'not rolled yet'}, but control went to {first}", file=STATUS))
    findings.extend(agreement_rules.start_findings(consent_table(game, started=False), game.agreements, first,
                                              rolled, game.inputs.ordered_by_dice))
    stop, expected = expected_start(game, first)
    findings.extend(_status_findings(expected, game.status))
    return findings, Verified(game, stop, prev.founder, actor, expected, seat_before(game.inputs.players, first))


def consent_table(game: Game, started: bool, status: Status | None = None) -> kinds.Table:
    """What the agreement rules look at in `game` (protocol.agreements): its id, seats, keys, game.yaml hash;
    after the start, the seats left by a resign, who owes something now (`status`), and whether it ended."""
    manifest = game.manifest
    seats = tuple(s.id for s in manifest.seats)
    if not started:
        return kinds.Table(manifest.id, seats, manifest.keys, manifest.digest, False, game=manifest.raw)
    resigned = kinds.resigned(game.agreements, manifest.keys) if game.agreements else frozenset()
    # who owes something now: the player in control, and everybody who owes a contribution or a reveal
    owing = frozenset(b.player for i, b in enumerate(status.pending) if i == 0 or b.kind in OWED) \
        if status is not None else frozenset()
    firm = manifest.ruleset.parse_time(status.firm) if status is not None and status.firm and not status.over \
        else None
    table = kinds.Table(manifest.id, seats, manifest.keys, manifest.digest, True, resigned, owing,
                             game=manifest.raw, firm=firm)
    end = kinds.ended_by(game.agreements, table) if game.agreements else None
    return replace(table, ended=end.id if end is not None else None)


def ended(game: Game) -> agreements.Agreement | None:
    """The end agreement that ended the game, once every signer it needs has signed (DESIGN §4.8)."""
    return kinds.ended_by(game.agreements, consent_table(game, started=True))


def agreement_effect(prev: Verified, game: Game, changed: set[str], committer: str) -> dict | None:
    """game.yaml as the amend or seat agreement that this commit completes says it must read (DESIGN §4.8: an
    agreement takes effect in the commit that adds its last required signature), or None when none completes."""
    table = consent_table(prev.game, True, prev.status)
    raw = dict(prev.game.manifest.raw)
    done = False
    for path in sorted(changed):
        new = game.agreements.get(path)
        if new is None or new.kind not in (kinds.AMEND, kinds.SEAT):
            continue
        old = prev.game.agreements.get(path)
        if not kinds.signed_by_all(new, table) or (old is not None and kinds.signed_by_all(old, table)):
            continue
        if agreement_rules.agreement_findings(table, {path: old} if old is not None else {}, {path: new}, committer):
            continue  # a refused agreement takes no effect, here or at any later commit
        raw = kinds.applied(new, raw)
        done = True
    return raw if done else None


def _only(by_file: Mapping[str, agreements.Agreement], changed: set[str]) -> dict[str, agreements.Agreement]:
    """The agreements among the changed files: a commit costs what it changed, not every agreement so far."""
    return {path: by_file[path] for path in changed if path in by_file}


def _same_but_key(old: dict, new: dict, seat_id: str) -> bool:
    """game.yaml unchanged except for `key` (and `name`, `invite`) of one seat: what `pbem join` writes."""
    def strip(raw: dict) -> dict:
        copy = dict(raw)
        copy["players"] = [
            {k: v for k, v in s.items() if not (s["id"] == seat_id and k in ("key", "name", "invite"))}
            for s in raw["players"]
        ]
        return copy
    return strip(old) == strip(new)


def _turn(prev: Verified, game: Game, changed: set[str], signer: PublicKey) -> tuple[list[Finding], Verified]:
    assert prev.stop is not None and prev.status is not None
    findings: list[Finding] = []
    agreed = False  # game.yaml changed as an amend or seat agreement completed in this commit says (DESIGN §4.8)
    effect = None
    if any(AGREEMENT_RE.match(p) for p in changed) and not prev.status.over:
        effect = agreement_effect(prev, game, changed, who(prev.game, signer) or "")
        agreed = GAME in changed and effect is not None and effect == game.manifest.raw
    if effect is not None and GAME not in changed:
        # its last signature landed (two signers at once: the later one's commit completes it) without the
        # change: refused, or the group's agreed change would be listed in effect and silently lost
        findings.append(Finding("agreement.effect", "this commit completes an amend or seat agreement, but "
                                "game.yaml does not change as it says (the commit adding its last signature writes "
                                "exactly the agreed change: pbem sign, and pbem push when it rebases, do)",
                                file=GAME))
    upgrades = _completed(prev, game, upgrade.UPGRADE, consent_table(prev.game, True, prev.status)) \
        if any(AGREEMENT_RE.match(p) for p in changed) else []  # the workflow changes only by one (DESIGN §4.8)
    upgraded = bool(upgrades) and not upgrade.effect_findings(upgrades, game.workflow)
    if game.manifest is not prev.game.manifest and game.manifest.raw != prev.game.manifest.raw and not agreed:
        # game.yaml is frozen from the start: a change is refused below (protected.changed) and never takes
        # effect, at this commit or any later one, or an accomplice's key swapped in would play on unchecked
        game = replace(game, manifest=prev.game.manifest)
    unchanged = Verified(game, prev.stop, prev.founder, None, prev.status, prev.last_yielder, gone_at=prev.gone_at,
                         nmrs=prev.nmrs)
    for path in PROTECTED:
        if path in changed and not (path == GAME and agreed) and not (path == WORKFLOW and upgraded):
            findings.append(Finding("protected.changed", f"{path} is frozen once the game has started "
                                    "(a turn must not be able to change the game or disable its own check)",
                                    file=path))
    player = who(prev.game, signer)
    if player is None:
        findings.append(Finding("signature.unknown-key", f"signed by {signer.fingerprint()}, which is no "
                                "player's key in game.yaml"))
        return findings, unchanged
    if prev.status.over:
        end = ended(prev.game) if any(AGREEMENT_RE.match(p) for p in changed) else None
        if end is not None:  # what an agreement proposed or signed now would have done: the game ended once
            findings.extend(agreement_rules.agreement_findings(consent_table(prev.game, True, prev.status),
                                                          _only(prev.game.agreements, changed),
                                                          _only(game.agreements, changed), player))
        findings.append(Finding("game.over", "the game is over; no more turns"))
        return findings, unchanged
    erratum = any(ERRATUM_RE.match(p) for p in changed)
    agreement = not erratum and any(AGREEMENT_RE.match(p) for p in changed)
    press_only = bool(changed - {STATUS}) and all(PRESS_RE.match(p) for p in changed - {STATUS})
    # DESIGN §4.8: signing, proposing and press are no turn, also for the player in control (expected_after)
    turn = takes_turn(prev, player) and not erratum and not agreement and not press_only
    mine = [] if erratum or agreement else [b for b in prev.status.pending if b.player == player and b.kind in OWED]
    if not mine and not turn and not erratum and not agreement:  # a sealed input replaced (protocol/resealing.py)
        mine = resealing.replacing(game.manifest.ruleset, prev.game.secrets, game.secrets, player,
                                   prev.status.pending)
    settled = settled_now(prev, game) if agreement else {}
    if agreement:
        # an agreement is signed out of turn, in a commit of its own; each kind says when it is open (a start
        # agreement is closed once the game has started)
        corrections = errata_agreed(prev, game)  # an erratum's last signature also changes the report
        findings.extend(Finding("agreement.mixed", f"{path}: an agreement commit changes only agreements/ (and "
                                "what the agreement it completes changes); take your turn in a commit of its own",
                                file=path)
                        for path in sorted(changed - {STATUS}) if not AGREEMENT_RE.match(path)
                        and not (path == GAME and agreed) and not (corrections and REPORT_RE.match(path))
                        and not (path == WORKFLOW and upgraded)
                        and not (settled and (DICE_RE.match(path) or SECRET_RE.match(path))))
        if corrections:  # by exactly their entries: what everybody signed, so neither firm.* nor ownership.*
            reports = {p for p in changed if REPORT_RE.match(p)}
            findings.extend(erratum_kind.correction_findings(*entry_changes(prev.game.inputs, game.inputs, reports),
                                                       corrections))
        if settled:  # its dice and secrets: only the withheld marks of what it settles (DESIGN §4.8)
            findings.extend(_settlement(prev, game, changed, player, settled))
        findings.extend(_new_actions(prev.game, [erratum_kind.of_agreement(a) for a in _only(game.agreements,
                                                                                      changed).values()
                                                 if a.kind == kinds.ERRATUM]))
        # judged against the table before the commit: the keys that sign, who owes, who resigned
        findings.extend(agreement_rules.agreement_findings(consent_table(prev.game, True, prev.status),
                                                      _only(prev.game.agreements, changed),
                                                      _only(game.agreements, changed), player))
        findings.extend(upgrade.effect_findings(upgrades, game.workflow))
        if GAME in changed and not agreed:
            findings.append(Finding("agreement.effect", "game.yaml changed, but not as an amend or seat agreement "
                                    "completed by this commit says (the commit adding its last signature writes "
                                    "exactly the agreed change)", file=GAME))
    elif not turn and not mine and not press_only and not erratum:
        head = prev.status.pending[0]
        findings.extend(_withheld_touched(prev, game, changed, player))  # the more telling rule first
        findings.append(Finding("signature.not-in-control", f"{player} made a turn, but {head.player} holds "
                                f"control ({head.why})", file=STATUS))
        return findings, unchanged
    if erratum:
        findings.extend(_erratum(prev, game, changed, player))
    elif not turn and not agreement:
        outside = sorted(p for p in changed if p != STATUS
                         and not (DICE_RE.match(p) or SECRET_RE.match(p) or PRESS_RE.match(p)))
        for path in outside:
            why = mine[0].why if mine else "press may be posted at any time"
            findings.append(Finding("signature.not-in-control", f"{player} may only settle what he owes now "
                                    f"({why}); {path} waits for his turn", file=path))
    if not erratum and not agreement:
        findings.extend(_ownership(prev, game, changed, player, turn))
    if turn:
        findings.extend(_own_legality(prev, game, changed, player))
    stop, expected = expected_after(prev, game, player)
    findings.extend(stop.problems)
    if not erratum and not agreement and any(DICE_RE.match(p) or SECRET_RE.match(p) for p in changed):
        findings.extend(_auction_dice(prev, game, stop))
    if not erratum and any(DICE_RE.match(p) for p in changed):
        findings.extend(_binding(prev, game, stop))
    if not press_only and not erratum and not agreement:
        findings.extend(_progress(prev, game, player, turn, mine, expected))
    findings.extend(_audits(prev, game, stop))
    if game.status is None:
        findings.append(Finding("status.mismatch", "status.yaml was removed", file=STATUS))
    else:
        unrevealed = sorted(s.id for s in game.secrets.values() if not s.revealed and not s.withheld)
        if game.status.over and ended(game) is None and unrevealed:
            findings.append(Finding("secret.unrevealed", "the game is declared over with secrets unrevealed: "
                                    + ", ".join(unrevealed),
                                    file=STATUS))
        findings.extend(_status_findings(expected, game.status, game, stop))
    last = back_to(prev, player) if turn else (nmr_served(prev, game) or prev.last_yielder) if agreement \
        else prev.last_yielder
    if expected.yielded_by not in (None, player) and expected.yielded_by in game.manifest.players:
        last = expected.yielded_by  # a resigned or absent player's turn was served after this commit
    back = (prev.back or prev.last_yielder) if turn and clarifies(prev, player) else None if turn else prev.back
    gone_at = prev.gone_at + gone_now(prev, game) if agreement else prev.gone_at
    served = _nmr_completed(prev, game) if agreement and prev.stop.checkpoint.point is not None else None
    point = prev.stop.checkpoint.point
    nmrs = prev.nmrs + ((served[1], point),) if served is not None and point is not None else prev.nmrs
    return findings, Verified(game, stop, prev.founder, player, expected, last, back, gone_at, nmrs)


def _ownership(prev: Verified, game: Game, changed: set[str], player: str, turn: bool) -> list[Finding]:
    """DESIGN §2 rules of ownership, the firm marker, and the dice and secret rules (§5, §6)."""
    findings = []
    for path in changed:
        m = PLAYERS_RE.match(path)
        if m and m.group(1) != player:
            findings.append(Finding("ownership.foreign-file", f"{player} changed {path}, which only "
                                    f"{m.group(1)} may change", file=path))
    assert prev.stop is not None
    firm = prev.stop.checkpoint.point
    reports = {p for p in changed if p.startswith("report/")}
    findings.extend(ownership_findings(prev.game.inputs, game.inputs, player, reports))
    auction = prev.stop.checkpoint.auction
    committed = auction.seen if auction is not None and auction.at == firm else frozenset()
    if firm is not None and prev.status is not None and any(b.kind == REPLY for b in prev.status.pending):
        # a step held for replies was resolved once with these entries: they may be added to, not withdrawn
        committed = committed | {e.key for e in prev.game.inputs.at(firm)}
    findings.extend(firm_findings(prev.game.inputs, game.inputs, firm, reports, committed))
    if committed and auction is not None and auction.at == firm:
        replying = turn and prev.status is not None and prev.status.pending[:1] != () and \
            prev.status.pending[0].kind == REPLY and prev.status.pending[0].player == player
        asked = (not auction.closed and auction.queue[:1] == (player,)) or replying  # seed §6.C.1
        for entry in game.inputs.at(auction.at):
            if entry.key not in committed and entry.by == player and not asked:
                findings.append(Finding("rules.auction", f"{player} adds {dict(entry.do)} at {entry.at_text}, but "
                                        "he is not the one asked in its action auction" +
                                        (" (it is over)" if auction.closed else f" ({auction.queue[0]} is)")
                                        + " (seed §7.D)", file=entry.file, line=entry.line))
    manifest = game.manifest
    if any(DICE_RE.match(p) for p in changed):
        findings.extend(dice.batch_findings(manifest.id, manifest.players, manifest.keys, manifest.escrow_key,
                                            prev.game.batches, game.batches, player))
        if not turn and set(game.batches) - set(prev.game.batches):
            findings.append(Finding("dice.bad-batch", "dice are announced in one's own turn", file=STATUS))
    if any(SECRET_RE.match(p) for p in changed):
        findings.extend(secrets.secret_findings(prev.game.secrets, game.secrets, player, manifest.players,
                                                manifest.ruleset.parse_time))
        owed_steps = {b.at for b in prev.status.pending if b.player == player and b.kind == SEALED}
        replaced, steps = resealing.replacement_findings(manifest.ruleset, prev.game.secrets, game.secrets, player,
                                                         prev.status.pending if prev.status is not None else ())
        findings.extend(replaced)
        owed_steps |= steps
        added = entry_changes(prev.game.inputs, game.inputs, reports)[1]
        findings.extend(secrets.sealing_findings(prev.game.secrets, game.secrets, player, owed_steps, turn,
                                                 manifest.ruleset, added, lambda: game.inputs.entries))
        findings.extend(secrets.reveal_findings(prev.game.secrets, game.secrets, manifest.ruleset,
                                                *secrets.opening_context(prev.status, prev.stop.over)))
    elif turn and getattr(manifest.ruleset, "launched_unit", None) is not None and reports:
        # a launch needs its target sealed in the same commit (secret.missing-target)
        added = entry_changes(prev.game.inputs, game.inputs, reports)[1]
        findings.extend(secrets.sealing_findings(prev.game.secrets, game.secrets, player, set(), turn,
                                                 manifest.ruleset, added, lambda: game.inputs.entries))
    if any(PRESS_RE.match(p) for p in changed):
        findings.extend(press_findings(prev.game.press, game.press, player, prev.status.firm,
                                       [seat.id for seat in manifest.seats]))
        findings.extend(_press_refusals(prev, game))
        posted = press_added(prev.game.press, game.press) or ()
        findings.extend(whisper_findings(manifest.id, manifest.keys, game.press, posted))
        findings.extend(openings.share_findings(game.secrets, posted, reveals_owed(prev)))
    return findings


def _settlement(prev: Verified, game: Game, changed: set[str], player: str,
                settled: Mapping[str, str]) -> list[Finding]:
    """DESIGN §4.8: the commit completing an nmr (or a resign) marks what its player owed and never gave as
    withheld by it, in every dice batch and secret concerned, and changes nothing else there (agreement.mixed;
    dice.bad-withheld, secret.bad-withheld)."""
    assert prev.stop is not None
    manifest = game.manifest
    resigned = {p for p, a in settled.items() if author_ids.author_of(a) == p}
    findings = []
    for path in sorted(p for p in changed if DICE_RE.match(p) or SECRET_RE.match(p)):
        old = _by_file(prev.game, path)
        new = _by_file(game, path)
        if old is None or new is None or {k: v for k, v in new.raw.items() if k not in SETTLES} != \
                {k: v for k, v in old.raw.items() if k not in SETTLES}:
            findings.append(Finding("agreement.mixed", f"{path}: the commit completing an nmr or resign marks only "
                                    "what it settles (withheld); take your turn in a commit of its own", file=path))
    if findings:
        return findings
    if any(DICE_RE.match(p) for p in changed) or prev.game.batches:
        findings.extend(dice.batch_findings(manifest.id, manifest.players, manifest.keys, manifest.escrow_key,
                                            prev.game.batches, game.batches, player, settled))
        findings.extend(dice.settlement_findings(manifest.players, prev.game.batches, game.batches, settled,
                                                 resigned))
    owed = {p: ids for p, (_batches, ids) in settlement_parts(prev, settled).items()}
    findings.extend(openings.opening_findings(prev.game.secrets, game.secrets, game.press))
    findings.extend(secrets.secret_findings(prev.game.secrets, game.secrets, player, manifest.players,
                                            manifest.ruleset.parse_time, settled, set().union(*owed.values())))
    for p, ids in sorted(owed.items()):
        for sid in sorted(ids):
            if game.secrets.get(sid) is None or game.secrets[sid].withheld != settled[p]:
                findings.append(Finding("secret.bad-withheld", f"{settled[p]} settles what {p} owes, and secret "
                                        f"{sid}'s reveal is owed: its commit writes `withheld: {settled[p]}` there "
                                        "(pbem sign does)", file=f"secrets/{sid}.yaml"))
    return findings


SETTLES = ("withheld", "opened")  # what the commit completing an nmr may write in a secret (DESIGN §4.7, §4.8)


def reveals_owed(prev: Verified) -> set[str]:
    """The sealed inputs whose reveal is owed at `prev` (every player of their step has sealed): the only sets whose
    shares may be published (protocol.openings)."""
    if prev.status is None:
        return set()
    owed = {(b.at, b.player) for b in prev.status.pending if b.kind == secrets.SECRET}
    return {s.id for s in prev.game.secrets.values() if (s.raw.get("step"), s.owner) in owed and not s.revealed}


def _withheld_touched(prev: Verified, game: Game, changed: set[str], player: str) -> list[Finding]:
    """What a commit changed in dice parts and secrets already settled as withheld (dice.withheld,
    secret.withheld, *.bad-withheld): a late reveal or contribution, by the absent player or anyone else."""
    manifest = game.manifest
    out: list[Finding] = []
    for path in sorted(p for p in changed if DICE_RE.match(p) or SECRET_RE.match(p)):
        old, new = _by_file(prev.game, path), _by_file(game, path)
        if old is None or new is None or not old.withheld:
            continue
        if isinstance(old, dice.Batch):
            out.extend(dice.batch_findings(manifest.id, manifest.players, manifest.keys, manifest.escrow_key,
                                           {old.id: old}, {new.id: new}, player))  # type: ignore[dict-item]
        else:
            out.extend(secrets.secret_findings({old.id: old}, {new.id: new}, player,  # type: ignore[dict-item]
                                               manifest.players, manifest.ruleset.parse_time))
    return out


def _by_file(game: Game, path: str) -> dice.Batch | secrets.Secret | None:
    """The dice batch or secret that lives at `path` in `game`, or None."""
    return next((x for x in (*game.batches.values(), *game.secrets.values()) if x.file == path), None)


def _new_actions(game: Game, corrections: Iterable[erratum_kind.Erratum]) -> list[Finding]:
    """DESIGN §4.8, errata correct and never re-open: an erratum may change what a unit did at a step (another
    target, another weapon, another speed), but adds no action of a kind the unit did not do there, at a step
    whose dice are known already (a new shot there would be decided knowing every die of the step:
    erratum.new-action)."""
    def slot(entry: Any) -> tuple[Any, ...]:  # a shot corrected to another weapon is a correction, not a new one
        return (entry.at, entry.by, entry.unit, next(iter(entry.do), ""))

    known = {ref.split("/", 1)[0] for ref, rolled in game.inputs.dice.items()
             if rolled.result is not None or rolled.lost is not None}
    out = []
    for erratum in corrections:
        corrected = {slot(e) for e in erratum.removed}
        for entry in erratum.added:
            if slot(entry) not in corrected and entry.at_text in known:
                out.append(Finding("erratum.new-action", f"erratum {erratum.id} adds {entry.by}'s {dict(entry.do)} "
                                   f"for {entry.unit} at {entry.at_text}, whose dice are known: an erratum corrects "
                                   "what was done there, it adds no new action (DESIGN §4.8)", file=erratum.file,
                                   line=entry.line))
    return out


def _auction_dice(prev: Verified, game: Game, stop: Stop) -> list[Finding]:
    """Seed 000 §7.B: no die rolled or revealed, no secret revealed, while an action auction is open
    (`dice.auction-open`, pbem.protocol.auction.dice_findings).

    What resolves a step before the auction's is no part of it: the auction opens only once that step is
    resolved, so its dice and the reveals owed there must land (DESIGN §4.2: else the player who owes them could
    never commit). Those are the batches whose every ref is at an earlier step, and the reveals owed before this
    commit while the firm point was before the auction's step."""
    assert prev.stop is not None
    point = stop.checkpoint.point
    if not auctions.is_open(stop.checkpoint.auction, point):
        return []
    ruleset = game.manifest.ruleset
    before = prev.stop.checkpoint.point
    earlier = before is not None and point is not None and before < point
    changed: list[tuple[str, int | None]] = []
    for batch_id in sorted(game.batches):
        batch, old = game.batches[batch_id], prev.game.batches.get(batch_id)
        if earlier and point is not None and _all_before(ruleset, batch, point):
            continue
        if old is None or old.raw != batch.raw:
            key = "rolls" if old is None else next((k for k in batch.raw if batch.raw.get(k) != old.raw.get(k)),
                                                   None)
            changed.append((batch.file, batch.line_of(key)))
    owed = {sid for p in game.manifest.players for sid in secrets_owed(prev, p, False)} if earlier else set()
    for sid in sorted(game.secrets):
        new, old_secret = game.secrets[sid], prev.game.secrets.get(sid)
        if new.revealed and (old_secret is None or not old_secret.revealed) and sid not in owed:
            changed.append((new.file, new.line_of("key")))
    when = ruleset.format_time(point) if point is not None else None
    return auctions.dice_findings(True, changed, when)


def _all_before(ruleset: Ruleset, batch: dice.Batch, point: Point) -> bool:
    """Whether every die of `batch` resolves a step before `point` (its refs name their step first, DESIGN §5)."""
    refs = [roll.get("ref") for roll in batch.raw.get("rolls") or ()]
    try:
        return bool(refs) and all(ruleset.parse_time(str(ref).split("/", 1)[0]) < point for ref in refs)
    except (ValueError, TypeError, KeyError, IndexError):
        return False


def _binding(prev: Verified, game: Game, stop: Stop) -> list[Finding]:
    """DESIGN §5 "Binding": the dice this commit announces or voids, against what is owed now: the refs of the
    step replay stops at once this commit is in (announced with the shot, or once it is declared)."""
    assert prev.stop is not None
    ruleset = game.manifest.ruleset
    sides = getattr(ruleset, "dice_sides", None)
    firm = None if prev.stop.over else prev.stop.checkpoint.point  # what was resolved before this commit

    def resolved(ref: str) -> bool:
        try:
            point = ruleset.parse_time(ref.split("/", 1)[0])
        except (ValueError, TypeError, KeyError, IndexError):
            return False
        return firm is None or point < firm

    owed = set(stop.dice_refs)
    roller = getattr(ruleset, "dice_roller", None)  # DESIGN §5 "Who rolls": the firer
    found = dice.binding_findings(prev.game.batches, game.batches, owed,
                                  lambda ref: sides(ref) if sides is not None and ref != START_REF else None,
                                  resolved, lambda ref: dice.only(roller(stop.checkpoint.state, ref))
                                  if roller is not None and ref in owed else None)
    return found + dice.void_binding_findings(prev.game.batches, game.batches, owed | set(prev.stop.dice_refs))


def _own_legality(prev: Verified, game: Game, changed: set[str], player: str) -> list[Finding]:
    """DESIGN §4.2 "Entries and time": the entries this turn adds are judged with what their author could know
    (the firm point and his own orders since); what others may still change is left to replay, which voids it."""
    reports = {p for p in changed if REPORT_RE.match(p)}
    if not reports:
        return []
    assert prev.stop is not None
    _removed, added = entry_changes(prev.game.inputs, game.inputs, reports)
    return own_findings(game.manifest.ruleset, game.manifest.setup, game.inputs, prev.stop.checkpoint, player,
                        added)


def _erratum(prev: Verified, game: Game, changed: set[str], player: str) -> list[Finding]:
    """DESIGN §4.8: an erratum commit proposes, signs or applies errata and changes nothing else but, when it
    applies one, the report: by exactly that erratum's entries (which everybody signed, so neither the firm
    marker nor ownership applies to them)."""
    assert prev.stop is not None
    findings = [Finding("erratum.mixed", f"{path}: an erratum commit changes only errata/ and, when it applies "
                        "one, the report; take your turn in a commit of its own", file=path)
                for path in sorted(changed - {STATUS}) if not (ERRATUM_RE.match(path) or REPORT_RE.match(path))]
    manifest = game.manifest
    firm = None if prev.stop.over else prev.stop.checkpoint.point
    findings.extend(errata.errata_findings(manifest.id, manifest.players, manifest.keys, prev.game.errata,
                                           game.errata, player, firm))
    reports = {p for p in changed if REPORT_RE.match(p)}
    applied = errata.applied_now(prev.game.errata, game.errata)
    if reports or applied:
        findings.extend(erratum_kind.correction_findings(*entry_changes(prev.game.inputs, game.inputs, reports),
                                                   applied))
    return findings


def _audits(prev: Verified, game: Game, stop: Stop) -> list[Finding]:
    """Seed §2.C: a revealed energy allocation must pay for what its units did in the turn of the sealed step it
    answers. Each is audited once, at the first commit where it is revealed and that turn is over (tactical/1
    `audit_allocation`)."""
    ruleset = game.manifest.ruleset
    audit = getattr(ruleset, "audit_allocation", None)
    if audit is None or prev.stop is None:
        return []
    found = []
    for secret in game.secrets.values():
        if secret.raw["kind"] != "allocation" or not secret.revealed or "step" not in secret.raw:
            continue  # an allocation without its step was refused when sealed (secret.wrong-step)
        # bound to the step the secret answers, never to the turn it names (secret.wrong-step at its reveal)
        turn = ruleset.turn_of(ruleset.parse_time(secret.raw["step"]))
        try:
            opened = secret.value()
        except PbemError:
            continue  # a box that does not open is its reveal's finding (secret.bad-key, secret.commit-mismatch)
        if not isinstance(opened, dict):
            continue  # not an allocation: its reveal's finding (schema.invalid)
        value = {**opened, "turn": turn}
        before = prev.game.secrets.get(secret.id)
        was_due = (before is not None and before.revealed
                   and ruleset.turn_ended(None if prev.stop.over else prev.stop.checkpoint.point, turn))
        is_due = ruleset.turn_ended(None if stop.over else stop.checkpoint.point, turn)
        plot = getattr(ruleset, "audit_plot", None)
        if plot is not None and not is_due and before is not None and not before.revealed:
            # revealed before its turn is played (sealed speeds): what is wrong already is the revealer's
            found += [Finding("rules.allocation", f"{secret.id} ({secret.owner}, turn {turn}): {reason}",
                              file=secret.file, line=secret.line_of("key"))
                      for reason in plot(game.manifest.setup, value)]
        if is_due and not was_due:
            record = ruleset.turn_record(stop.checkpoint.state, secret.owner, turn)
            # the reveal (its `key` line) is what shows the allocation does not pay
            found += [Finding("rules.allocation", f"{secret.id} ({secret.owner}, turn {turn}): {reason}",
                              file=secret.file, line=secret.line_of("key"))
                      for reason in audit(game.manifest.setup, record, value)]
    return found


def _press_refusals(prev: Verified, game: Game) -> list[Finding]:
    """Each message a commit posts is recognised at once, after those already posted this step, against the
    state at the firm point: a refused one is this commit's finding, not the one that later resolves the step."""
    ruleset = game.manifest.ruleset
    recognise = getattr(ruleset, "recognise", None)
    if recognise is None or prev.stop is None or prev.status is None or prev.status.firm is None:
        return []
    state = prev.stop.checkpoint.state
    new = {id(m) for m in press_added(prev.game.press, game.press) or ()}  # a changed file: press.changed
    messages = game.inputs.press.get(prev.status.firm, ())
    recognise_all = getattr(ruleset, "recognise_all", None)  # linear over the commits of a step (dow/1)
    if recognise_all is not None:
        refusals = list(recognise_all(state, messages)[1])
    else:
        refusals = []
        for message in messages:
            state, refusal = recognise(state, message.body, message.by)
            refusals.append(refusal)
    return [Finding(getattr(refusal, "rule", "press.refused"), str(refusal), file=message.file, line=message.line)
            for message, refusal in zip(messages, refusals) if refusal is not None and id(message) in new]


def _progress(prev: Verified, game: Game, player: str, turn: bool, mine: list[Break],
              expected: Status) -> list[Finding]:
    """Seed §4.C: a turn must act or forfeit the firm step; settling what one owes must settle some of it."""
    assert prev.stop is not None
    if turn:
        reason = (progress_error(game.manifest.ruleset, prev.stop.checkpoint.point, player, game.inputs)
                  if getattr(game.manifest.ruleset, "uses_horizons", True) else None)
        if reason:
            return [Finding("progress.none", reason, file=f"players/{player}.yaml")]
        assert prev.status is not None
        held = prev.status.pending[0]
        if held.kind == CLARIFY:
            return _clarified(held, game)
        if held in expected.pending:
            return [Finding("progress.none", f"{player} made no progress: his break still stands ({held.why})",
                            file=STATUS)]
        return []
    still = [b for b in mine if b in expected.pending]
    if len(still) == len(mine):
        return [Finding("progress.none", f"{player} owes {mine[0].why} and settled none of it", file=STATUS)]
    return []


def _clarified(held: Break, game: Game) -> list[Finding]:
    """Seed §5.C: the answer to a special break is an explicit entry at that step, one of the options."""
    ruleset = game.manifest.ruleset
    point = ruleset.parse_time(held.at) if held.at else None
    answers = [e for e in game.inputs.at(point) if e.by == held.player and e.unit == held.unit] if point else []
    if not answers:
        return [Finding("rules.bad-clarify", f"{held.player} must answer the special break for {held.unit} at "
                        f"{held.at} with an entry there: one of {[dict(o) for o in held.options]}", file=STATUS)]
    return [Finding("rules.bad-clarify", f"{e.unit} at {e.at_text}: {dict(e.do)} is not one of the options "
                    f"{[dict(o) for o in held.options]} (seed §5.C)", file=e.file, line=e.line)
            for e in answers if dict(e.do) not in [dict(o) for o in held.options]]


def _status_findings(expected: Status, written: Status, game: Game | None = None,
                     stop: Stop | None = None) -> list[Finding]:
    if replace(expected, note=written.note) == written:
        return []  # the usual case, without building both: every field but the note equal gives equal `derived()`
    want, got = expected.derived(), written.derived()
    wrong = [k for k in {**want, **got} if want.get(k) != got.get(k)]  # in the fields' order: the same every run
    if not wrong:
        return []
    if wrong == ["position"] and game is not None and stop is not None:
        mismatch = getattr(game.manifest.ruleset, "position_mismatch", None)
        detail = mismatch(stop.checkpoint.state, got.get("position") or {}) if mismatch else None
        return [Finding("result.mismatch", f"the recorded result differs from the engine's: "
                        f"{detail or 'position differs'}", file=STATUS)]
    detail = "; ".join(f"{k}: expected {want[k]!r}, got {got[k]!r}" for k in wrong)
    return [Finding("status.mismatch", f"status.yaml does not match replay ({detail})", file=STATUS,
                    hint="run `pbem yield` to write the computed status")]


# --- the differential check (verify/history.py calls it on every commit while PBEM_CROSSCHECK_JUDGE names this file)

def crosscheck(prev: Any, game: Game, changed: Iterable[str], signer: PublicKey, findings: list[Finding],
               verified: Any) -> None:
    """This judge, fed the same commit on the same state (`prev`, the new judge's, copied field by field), finds
    the same findings and knows the same after it as the new judge did (`findings`, `verified`)."""
    began = time.process_time()
    try:
        _crosscheck(prev, game, changed, signer, findings, verified)
    finally:
        _SPENT[0] += time.process_time() - began


# With PBEM_CROSSCHECK_TIMING=FILE each process appends the CPU seconds it spent here to FILE when it ends (what
# the differential judge costs a test run, measured apart from the machine's load).
_SPENT = [0.0]
if os.environ.get("PBEM_CROSSCHECK_TIMING"):
    atexit.register(lambda: open(os.environ["PBEM_CROSSCHECK_TIMING"], "a").write(f"{_SPENT[0]:.4f}\n"))


def _crosscheck(prev: Any, game: Game, changed: Iterable[str], signer: PublicKey, findings: list[Finding],
                verified: Any) -> None:
    from dataclasses import fields

    old_prev = None if prev is None else Verified(**{f.name: getattr(prev, f.name) for f in fields(Verified)})
    try:
        old_findings, old = judge(old_prev, game, set(changed), signer)
    except PbemError as exc:  # the new judge returned: a refusal here is a difference, not the player's error
        raise AssertionError(f"the judges disagree in {game.manifest.id}: only the legacy one refuses: {exc}")
    where = f"the judges disagree in {game.manifest.id}"
    assert [f.as_dict() for f in findings] == [f.as_dict() for f in old_findings], (where, findings, old_findings)
    for name in ("status", "last_yielder", "back", "gone_at", "nmrs", "actor", "founder"):
        assert getattr(verified, name) == getattr(old, name), (where, name, getattr(verified, name),
                                                               getattr(old, name))
    new_stop, old_stop = verified.stop, old.stop
    assert (new_stop is None) == (old_stop is None), (where, "stop")
    if new_stop is not None and old_stop is not None:
        for name in ("pending", "over", "problems", "dice_refs", "voids"):
            assert getattr(new_stop, name) == getattr(old_stop, name), (where, "stop", name)
        assert new_stop.checkpoint.point == old_stop.checkpoint.point, (where, "stop point")
    assert (verified.game is game) == (old.game is game), (where, "the game judged on")
