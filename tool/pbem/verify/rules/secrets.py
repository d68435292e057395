"""DESIGN §6, §4.7: secrets are sealed, revealed and opened only as the secret protocol says (secret.*): a sealed
input at a step where its owner owes one, a reveal that opens what was sealed."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.protocol import resealing, secrets
from pbem.protocol.model import SEALED
from pbem.protocol.verified import Verified
from pbem.verify.change import TURN, Change
from pbem.protocol.game import Game


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    if not change.secrets:
        return []
    assert prev.status is not None
    manifest, player = game.manifest, change.player or ""
    findings = secrets.secret_findings(prev.game.secrets, game.secrets, player, manifest.players,
                                       manifest.ruleset.parse_time)
    owed_steps = {b.at for b in prev.status.pending if b.player == player and b.kind == SEALED and b.at is not None}
    replaced, steps = resealing.replacement_findings(manifest.ruleset, prev.game.secrets, game.secrets, player,
                                                     prev.status.pending)
    findings.extend(replaced)
    owed_steps |= steps
    findings.extend(secrets.sealing_findings(prev.game.secrets, game.secrets, player, owed_steps,
                                             change.kind == TURN, manifest.ruleset, change.added,
                                             lambda: game.inputs.entries))
    assert prev.stop is not None
    findings.extend(secrets.reveal_findings(prev.game.secrets, game.secrets, manifest.ruleset,
                                            *secrets.opening_context(prev.status, prev.stop.over)))
    return findings
