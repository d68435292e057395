"""DESIGN §7: press is posted by its author, appended only, for the step it is sent during (press.*); each message
is recognised at once, after those already posted this step (§7.2: a refused one is this commit's finding);
whispers are sealed to their readers (whisper.*) and a sealed set's shares published only once its reveal is owed
(DESIGN §4.7, protocol.openings)."""

from __future__ import annotations

from typing import Sequence

from pbem.errors import Finding
from pbem.protocol import openings
from pbem.protocol.press import press_findings
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import reveals_owed
from pbem.protocol.whisper import whisper_findings
from pbem.verify.change import Change
from pbem.protocol.books import press_added
from pbem.protocol.model import Message
from pbem.protocol.game import Game


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    if not change.press:
        return []
    assert prev.status is not None
    manifest = game.manifest
    findings = press_findings(prev.game.press, game.press, change.player or "", prev.status.firm,
                              [seat.id for seat in manifest.seats])
    posted = press_added(prev.game.press, game.press) or ()  # None: a changed file (press.changed)
    findings.extend(_refusals(prev, game, posted))
    findings.extend(whisper_findings(manifest.id, manifest.keys, game.press, posted))
    findings.extend(openings.share_findings(game.secrets, posted, reveals_owed(prev)))
    return findings


def _refusals(prev: Verified, game: Game, posted: Sequence[Message]) -> list[Finding]:
    """Each message a commit posts is recognised at once, after those already posted this step, against the
    state at the firm point: a refused one is this commit's finding, not the one that later resolves the step."""
    ruleset = game.manifest.ruleset
    press = ruleset.press
    if press is None or prev.stop is None or prev.status is None or prev.status.firm is None:
        return []
    state = prev.stop.checkpoint.state
    added = [m for m in posted if m.at == prev.status.firm]
    if not added:
        return []  # nothing sent during this step (a message dated otherwise: press.bad-time)
    new = {id(m) for m in added}
    messages = game.inputs.press.get(prev.status.firm, ())
    refusals = press.recognise_all(state, messages)[1]  # linear over the commits of a step (dow/1)
    first = len(messages) - len(added)  # this commit's messages come last (in_commit_order)
    if first < 0 or any(id(m) not in new for m in messages[first:]):
        first = 0  # not where they belong: look at every message rather than miss one
    return [Finding(getattr(refusal, "rule", "press.refused"), str(refusal), file=message.file, line=message.line)
            for message, refusal in zip(messages[first:], refusals[first:])
            if refusal is not None and id(message) in new]
