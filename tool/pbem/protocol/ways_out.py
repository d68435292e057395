"""What completed agreements do to play (DESIGN §4.8): a resign, an nmr, a seat given to a replacement, an
erratum's correction, an amend; the consent table they are judged against; what a settlement marks withheld.

Pure: functions of the verified state before a commit and the game it writes.
"""

from __future__ import annotations

from pbem.protocol import agreement_rules
from pbem.protocol import erratum
from pbem.protocol import ids
from pbem.protocol import kinds
from dataclasses import replace
from typing import Any, Callable, Collection, Iterable, Mapping

from pbem.protocol import agreements, dice, secrets
from pbem.protocol.model import OWED, Status
from pbem.protocol.verified import Verified
from pbem.rulesets.base import Point, Ruleset, State
from pbem.protocol.game import Game


FOREVER: tuple = (float("inf"),)  # a horizon past every game time (points are tuples led by a number)


def without_orders(game: Game, absent: Mapping[str, Point | None]) -> Game:
    """`game` as replay reads it once players gave up their say (DESIGN §4.8): a resigned player's horizon
    reaches the end of the game with no new entries and no break conditions (his side does what the ruleset
    does for a player without orders: nothing, or its civil-disorder rules), and an absent player found by an
    nmr is covered through the step he was awaited at (`absent`: player -> that point), with no new orders."""
    resigned = game.resigned()
    if not resigned and not absent:
        return game
    per_player = dict(game.inputs.per_player)
    for player in resigned:
        per_player[player] = replace(game.inputs.of(player), through=FOREVER, breaks=())
    for player, point in absent.items():
        mine = game.inputs.of(player)
        # past the last step (a reveal owed at the end) there is no step to cover him through
        if point is not None and (mine.through is None or mine.through < point):
            per_player[player] = replace(mine, through=point)
    excused = game.inputs.excused | {(player, point) for player, point in absent.items() if point is not None}
    return replace(game, inputs=replace(game.inputs, per_player=per_player, gone=frozenset(resigned),
                                        excused=excused))


def resignations_applied(prev: Verified, game: Game) -> Verified:
    """`prev` with the ruleset's effect of each resignation this commit completes (DESIGN §4.8) applied to the
    state at its firm point, where replay resumes: it takes effect there, once, and every later state carries
    it (tactical: his units leave the map; Diplomacy: civil disorder); likewise a seat given to a replacement
    (`ruleset.replaced`: Diplomacy lifts the civil disorder). Without the hooks, nothing."""
    seats = game.manifest.ruleset.seats
    if seats is None or prev.stop is None or not game.agreements or game.agreements is prev.game.agreements:
        return prev
    now, before = _resigned_now_and_before(prev, game)
    if now == before:
        return prev
    state = prev.stop.checkpoint.state
    for player in sorted(now - before):
        state = seats.resigned(state, player)
    for player in sorted(before - now):
        state = seats.replaced(state, player)
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
    seats = ruleset.seats
    left, taken = (seats.resigned, seats.replaced) if seats is not None else (None, None)
    out: list[tuple[Point, Callable[[Any], Any]]] = []
    for kind, player, point in gone_at:
        hook = left if kind == kinds.RESIGN else taken if kind == kinds.SEAT else None
        if hook is not None and (after is None or point > after):
            out.append((point, _for(hook, player)))
    return out


def _for(hook: Callable[[State, str], State], player: str) -> Callable[[State], State]:
    """`hook` applied to `player` at a state: a resignation's or a replacement's effect, for replay."""
    return lambda state: hook(state, player)


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
    found = nmr_completed(prev, game)
    return found[0] if found is not None else None


def nmr_completed(prev: Verified, game: Game) -> tuple[str, str] | None:
    """(the absent player, the nmr agreement's id) for an nmr this commit completes, or None."""
    if not game.agreements or game.agreements is prev.game.agreements:
        return None
    table = consent_table(prev.game, True, prev.status)
    for new in completed(prev, game, kinds.NMR, table):
        absent = new.content.get("player")
        if isinstance(absent, str) and absent in table.owing:
            return absent, new.id
    return None


def errata_agreed(prev: Verified, game: Game) -> list[erratum.Erratum]:
    """The erratum agreements this commit completes (DESIGN §4.8: in effect with the last required signature),
    as errata: the commit changes the report by exactly their entries, and replay restarts from the earliest
    corrected step. Only an agreement this commit changed counts (a signature added, or a proposal that needs no
    other), so each takes effect once."""
    if not game.agreements or game.agreements is prev.game.agreements:
        return []
    table = consent_table(prev.game, True, prev.status)
    return [erratum.of_agreement(new) for new in completed(prev, game, kinds.ERRATUM, table)]


def completed(prev: Verified, game: Game, kind: str, table: kinds.Table) -> list[agreements.Agreement]:
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
    return game.resigned(), prev.game.resigned()


def settled_now(prev: Verified, game: Game) -> dict[str, str]:
    """Player -> the agreement completed by this commit that settles what he owes (DESIGN §4.8): an nmr against
    him (what he owes now), or his own resign (every part he still had to give). Its commit marks each such dice
    part and secret `withheld` by that agreement: a withheld reveal loses what it hid, a withheld contribution
    is left out."""
    if not game.agreements or game.agreements is prev.game.agreements or prev.stop is None:
        return {}
    out: dict[str, str] = {}
    found = nmr_completed(prev, game)
    if found is not None:
        out[found[0]] = found[1]
    if any(a.kind == kinds.RESIGN for a in game.agreements.values()):
        now, before = _resigned_now_and_before(prev, game)
        for player in sorted(now - before):
            mine = [a.id for a in game.agreements.values() if a.kind == kinds.RESIGN and a.by == player
                    and player in a.signatures]
            out[player] = max(mine)
    for seat, agreement in seats_changed(prev, game).items():
        # an nmr against him completed by the same commit yields to his seat: the seat's id marks the parts,
        # and they are both what the old key sealed and what the nmr settles (dice.how_settled, absent_now)
        out[seat] = agreement
    return out


def absent_now(prev: Verified, game: Game) -> frozenset[str]:
    """The player an nmr this commit completes found absent, if any (with his seat: dice.SEAT_AND_NMR)."""
    found = nmr_completed(prev, game)
    return frozenset({found[0]}) if found is not None else frozenset()


def seats_changed(prev: Verified, game: Game) -> dict[str, str]:
    """Seat -> the `seat` agreement this commit completes, which gives it to a new key (DESIGN §4.8, seed 000:
    a replacement plays on from where the seat stands). What the old key sealed and never opened (his reveal of
    a die he rolls, a contribution he committed to, a secret) nobody can open now: the same commit marks it
    withheld by the seat agreement, as an nmr would (`seat_parts`), so the new holder owes nothing he cannot
    give."""
    if not game.agreements or game.agreements is prev.game.agreements:
        return {}
    table = consent_table(prev.game, True, prev.status)
    out: dict[str, str] = {}
    for new in completed(prev, game, kinds.SEAT, table):
        seat = new.content.get("seat")
        if isinstance(seat, str) and seat in prev.game.manifest.players:
            out[seat] = new.id
    return out


def seated(game: Game, settled: Mapping[str, str]) -> frozenset[str]:
    """The players of `settled` whose settling agreement is a `seat` change (what their old key sealed)."""
    seats = {a.id for a in game.agreements.values() if a.kind == kinds.SEAT}
    return frozenset(p for p, agreement in settled.items() if agreement in seats)


def settlement_parts(prev: Verified, settled: Mapping[str, str], seats: Collection[str] = (),
                     absent: Collection[str] = ()) -> dict[str, tuple[set[str], set[str]]]:
    """Player -> (the dice batches, the secrets) whose part he owed is settled by `settled`'s agreement: for an
    nmr what he owes now, for his resign everything he still had to give, for a seat given to a new key
    (`seats`) what the old key sealed and never opened (every secret of his not revealed)."""
    players = prev.game.manifest.players
    out = {}
    for player, agreement in settled.items():
        resign = ids.author_of(agreement) == player
        batches = {b.id for b in prev.game.batches.values()
                   if dice.part_due(players, b, player, dice.how_settled(player, agreement, seats, absent))}
        out[player] = (batches, secrets_owed(prev, player, resign or player in seats))
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


def reveals_owed(prev: Verified) -> set[str]:
    """The sealed inputs whose reveal is owed at `prev` (every player of their step has sealed): the only sets whose
    shares may be published (protocol.openings)."""
    if prev.status is None:
        return set()
    owed = {(b.at, b.player) for b in prev.status.pending if b.kind == secrets.SECRET}
    return {s.id for s in prev.game.secrets.values() if (s.raw.get("step"), s.owner) in owed and not s.revealed}


def consent_table(game: Game, started: bool, status: Status | None = None) -> kinds.Table:
    """What the agreement rules look at in `game` (protocol.agreements): its id, seats, keys, game.yaml hash;
    after the start, the seats left by a resign, who owes something now (`status`), and whether it ended."""
    manifest = game.manifest
    seats = tuple(s.id for s in manifest.seats)
    if not started:
        return kinds.Table(manifest.id, seats, manifest.keys, manifest.digest, False, game=manifest.raw)
    resigned = game.resigned()
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
