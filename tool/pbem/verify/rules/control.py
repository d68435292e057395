"""DESIGN §4.2, §4.8 and seed 000 §3: the signer is a seated player or the dice escrow (signature.unknown-key),
and either holds control for a turn, or settles something he owes out of turn: a dice contribution or reveal, a
secret's reveal (signature.not-in-control); nothing is played once the game is over (game.over)."""

from __future__ import annotations

from pbem.protocol import agreement_rules
from pbem.errors import Finding
from pbem.protocol import agreements, dice, secrets
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import ended
from pbem.verify.change import Change
from pbem.files.layout import STATUS
from pbem.protocol.game import Game


def signer(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """Signed by a key that holds no seat in game.yaml (the commit then changes nothing)."""
    if change.player is not None:
        return []
    return [Finding("signature.unknown-key", f"signed by {change.signer.fingerprint()}, which is no "
                    "player's key in game.yaml")]


def game_over(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """No more turns once the game is over; what an agreement proposed or signed now would have done is judged
    against the end agreement that ended it (the game ended once)."""
    findings: list[Finding] = []
    end = ended(prev.game) if change.agreements else None
    if end is not None:
        findings.extend(agreement_rules.agreement_findings(change.table, change.only(prev.game.agreements),
                                                      change.only(game.agreements), change.player or ""))
    findings.append(Finding("game.over", "the game is over; no more turns"))
    return findings


def withheld_touched(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """What a commit changed in dice parts and secrets already settled as withheld (dice.withheld,
    secret.withheld, *.bad-withheld): a late reveal or contribution, by the absent player or anyone else."""
    manifest = game.manifest
    player = change.player or ""
    out: list[Finding] = []
    for path in sorted(change.dice + change.secrets):
        old, new = change.before(path), change.after(path)
        if old is None or new is None or not old.withheld:
            continue
        if isinstance(old, dice.Batch):
            out.extend(dice.batch_findings(manifest.id, manifest.players, manifest.keys, manifest.escrow_key,
                                           {old.id: old}, {new.id: new}, player))  # type: ignore[dict-item]
        else:
            out.extend(secrets.secret_findings({old.id: old}, {new.id: new}, player,  # type: ignore[dict-item]
                                               manifest.players, manifest.ruleset.parse_time))
    return out


def not_in_control(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """A turn by a player who neither holds control nor owes anything (the commit then changes nothing)."""
    assert prev.status is not None
    head = prev.status.pending[0]
    return [Finding("signature.not-in-control", f"{change.player} made a turn, but {head.player} holds "
                    f"control ({head.why})", file=STATUS)]


def out_of_turn(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """Out of turn a player settles what he owes now (dice, secrets) and may post press; the rest waits."""
    mine = change.mine
    outside = sorted(p for p in change.paths if p != STATUS
                     and not (p in change.dice or p in change.secrets or p in change.press))
    why = mine[0].why if mine else "press may be posted at any time"
    return [Finding("signature.not-in-control", f"{change.player} may only settle what he owes now ({why}); "
                    f"{path} waits for his turn", file=path) for path in outside]
