"""DESIGN §4.2 step 7 and §4.4: replay from the firm point; what is owed (dice, reveals) comes before the game's
breaks; status.yaml must equal the result (status.mismatch, result.mismatch); a game declared over has every
secret revealed (secret.unrevealed, DESIGN §6)."""

from __future__ import annotations

from pbem.errors import Finding
from pbem.formats.records import evolve
from pbem.protocol.model import Status, Stop
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import ended
from pbem.verify.change import Change
from pbem.files.layout import STATUS
from pbem.protocol.game import Game


def replayed(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """What replay itself found on the way (an entry it cannot apply, a die it cannot read)."""
    return list(change.expected[0].problems)


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """status.yaml after a commit in play."""
    if game.status is None:
        return [Finding("status.mismatch", "status.yaml was removed", file=STATUS)]
    findings = []
    unrevealed = sorted(s.id for s in game.secrets.values() if not s.revealed and not s.withheld)
    if game.status.over and ended(game) is None and unrevealed:
        findings.append(Finding("secret.unrevealed", "the game is declared over with secrets unrevealed: "
                                + ", ".join(unrevealed),
                                file=STATUS))
    stop, expected = change.expected
    return findings + status_findings(expected, game.status, game, stop)


def at_start(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """The start commit's status: the first computed one (seed 000 §2.A)."""
    assert game.status is not None
    return status_findings(change.start[1], game.status)


def status_findings(expected: Status, written: Status, game: Game | None = None,
                    stop: Stop | None = None) -> list[Finding]:
    """`written` against `expected`, every field but the note."""
    if evolve(expected, note=written.note) == written:
        return []  # the usual case, without building both: every field but the note equal gives equal `derived()`
    want, got = expected.derived(), written.derived()
    wrong = [k for k in {**want, **got} if want.get(k) != got.get(k)]  # in the fields' order: the same every run
    if not wrong:
        return []
    if wrong == ["position"] and game is not None and stop is not None:
        positions = game.manifest.ruleset.positions
        mismatch = positions.position_mismatch if positions is not None else None
        detail = mismatch(stop.checkpoint.state, got.get("position") or {}) if mismatch else None
        return [Finding("result.mismatch", f"the recorded result differs from the engine's: "
                        f"{detail or 'position differs'}", file=STATUS)]
    detail = "; ".join(f"{k}: expected {want[k]!r}, got {got[k]!r}" for k in wrong)
    return [Finding("status.mismatch", f"status.yaml does not match replay ({detail})", file=STATUS,
                    hint="run `pbem yield` to write the computed status")]
