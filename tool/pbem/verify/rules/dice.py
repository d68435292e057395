"""DESIGN §5: dice are announced in one's own turn, contributed and revealed as the dice protocol says (dice.*),
bound to what is owed now (DESIGN §5 "Binding"), and neither rolled nor revealed while an action auction is open
(dice.auction-open, seed 000 §7.B)."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.protocol import auction as auctions
from pbem.protocol import dice, dice_binding, dice_contributors
from pbem.protocol.serving import START_REF
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import secrets_owed
from pbem.rulesets.base import Point, Ruleset
from pbem.verify.change import TURN, Change
from pbem.files.layout import STATUS
from pbem.protocol.game import Game


def batches(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """The batches it changed, by the dice protocol; a new batch only in one's own turn, naming as contributors
    the seats still playing (dice.bad-batch)."""
    if not change.dice:
        return []
    manifest = game.manifest
    findings = dice.batch_findings(manifest.id, manifest.players, manifest.keys, manifest.escrow_key,
                                   prev.game.batches, game.batches, change.player or "")
    gone = game.resigned()
    findings += dice_contributors.findings(manifest.players, gone, prev.game.batches, game.batches)
    if change.kind != TURN and set(game.batches) - set(prev.game.batches):
        findings.append(Finding("dice.bad-batch", "dice are announced in one's own turn", file=STATUS))
    return findings


def auction(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """Seed 000 §7.B: no die rolled or revealed, no secret revealed, while an action auction is open
    (`dice.auction-open`, pbem.protocol.auction.dice_findings).

    What resolves a step before the auction's is no part of it: the auction opens only once that step is
    resolved, so its dice and the reveals owed there must land (DESIGN §4.2: else the player who owes them could
    never commit). Those are the batches whose every ref is at an earlier step, and the reveals owed before this
    commit while the firm point was before the auction's step. Such a batch lands also while the auction stays
    open after a later commit: its step resolved, with its dice or without them (a shot that went void when
    its target left), so nothing it tells counts for the bidders, and it stays owed until it is done."""
    if not change.dice and not change.secrets:
        return []
    assert prev.stop is not None
    stop = change.expected[0]
    point = stop.checkpoint.point
    if not auctions.is_open(stop.checkpoint.auction, point):
        return []
    ruleset = game.manifest.ruleset
    before = prev.stop.checkpoint.point
    earlier = before is not None and point is not None and before < point
    changed: list[tuple[str, int | None]] = []
    for batch_id in sorted(game.batches):
        batch, old = game.batches[batch_id], prev.game.batches.get(batch_id)
        if point is not None and _all_before(ruleset, batch, point):
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


def binding(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """DESIGN §5 "Binding": the dice this commit announces or voids, against what is owed now: the refs of the
    step replay stops at once this commit is in (announced with the shot, or once it is declared)."""
    if not change.dice:
        return []
    assert prev.stop is not None
    stop = change.expected[0]
    ruleset = game.manifest.ruleset
    sides = ruleset.dice.dice_sides if ruleset.dice is not None else None
    firm = None if prev.stop.over else prev.stop.checkpoint.point  # what was resolved before this commit

    def resolved(ref: str) -> bool:
        try:
            point = ruleset.parse_time(ref.split("/", 1)[0])
        except (ValueError, TypeError, KeyError, IndexError):
            return False
        return firm is None or point < firm

    owed = set(stop.dice_refs)
    roller = ruleset.dice.dice_roller if ruleset.dice is not None else None  # DESIGN §5 "Who rolls": the firer
    found = dice_binding.binding_findings(prev.game.batches, game.batches, owed,
                                  lambda ref: sides(ref) if sides is not None and ref != START_REF else None,
                                  resolved, lambda ref: dice_binding.only(roller(stop.checkpoint.state, ref))
                                  if roller is not None and ref in owed else None)
    return found + dice_binding.void_binding_findings(prev.game.batches, game.batches, owed | set(prev.stop.dice_refs))
