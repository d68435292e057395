"""Judge one commit (or a working tree) against the one before it: the per-commit steps of DESIGN §3–§4.

No git here: the caller reads both trees and checks the signature; this module decides whether the signer was
allowed to make this change and whether status.yaml says what replay computes. Steps, in order:

  1. setup phase (no status.yaml yet): joins (a new key claims an open seat), edits by the founder or seated
     players, and the start commit (all seats claimed; status.yaml is the first computed status);
  2. play: game.yaml and the workflow are frozen (DESIGN §3 Trees);
  3. the signer is a seated player (signature.unknown-key) and in control (signature.not-in-control);
  4. he changed only his own players file and entries (ownership.*), nothing before the firm marker (firm.changed);
  5. he made progress (progress.none, seed §4.C);
  6. replay from the firm point: illegal entries (rules.*), and status.yaml must equal the result (status.mismatch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from pbem.crypto.keys import PublicKey
from pbem.errors import Finding
from pbem.protocol.control import progress_error, resume_from, status_of
from pbem.protocol.history import firm_findings, ownership_findings
from pbem.protocol.model import Status, Stop
from pbem.protocol.replay import replay, start_checkpoint
from pbem.protocol.serving import seat_before
from pbem.verify.gamefiles import GAME, PLAYERS_RE, README, STATUS, WORKFLOW, Game

PROTECTED = (GAME, WORKFLOW, README)
SETUP_FILES = {GAME, WORKFLOW, README}


@dataclass(frozen=True)
class Verified:
    """What is known after accepting a commit: the game as read there, and where replay stopped."""

    game: Game
    stop: Stop | None  # None while the game is being set up
    founder: PublicKey | None
    actor: str | None = None  # the seat that made this commit (None for the founder)

    @property
    def started(self) -> bool:
        return self.stop is not None


def expected_start(game: Game, first: str) -> tuple[Stop, Status]:
    """The status the start commit must write when `first` starts (seed 000 §2.A)."""
    manifest = game.manifest
    ruleset = manifest.ruleset
    checkpoint = start_checkpoint(ruleset, manifest.setup, manifest.players)
    stop = replay(ruleset, manifest.setup, game.inputs, checkpoint, seat_before(manifest.players, first))
    return stop, status_of(ruleset, stop, None)


def expected_after_turn(prev: Verified, game: Game, player: str) -> tuple[Stop, Status]:
    """Where replay stops once `player` (in control) has taken his turn with `game`'s inputs."""
    assert prev.stop is not None
    ruleset = game.manifest.ruleset
    stop = replay(ruleset, game.manifest.setup, game.inputs, resume_from(prev.stop, player), player)
    return stop, status_of(ruleset, stop, player)


def judge(prev: Verified | None, game: Game, changed: Iterable[str], signer: PublicKey) -> tuple[list[Finding], Verified]:
    """All findings for this change, and what is known after it (also when findings were made)."""
    changed = set(changed)
    if prev is None:
        return _root(game, changed, signer)
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
    seat = old.seat_of_key(signer)
    founder = prev.founder is not None and prev.founder.same_key(signer)
    findings: list[Finding] = []
    for before in old.seats:  # a claimed seat keeps its key (only its owner's join set it)
        after = new.seat(before.id)
        if before.key is not None and (after is None or after.key is None or not after.key.same_key(before.key)):
            findings.append(Finding("setup.seat-taken", f"seat {before.id!r} was already claimed; its key "
                                    "may not change", file=GAME))
    if seat is None and not founder:
        claimed = [s for s in new.seats if s.key is not None and s.key.same_key(signer)]
        opened = old.seat(claimed[0].id) if claimed else None
        is_join = (len(claimed) == 1 and opened is not None and opened.key is None
                   and changed <= {GAME} and _same_but_key(old.raw, new.raw, claimed[0].id))
        if not is_join:
            findings.append(Finding("signature.unknown-key", f"signed by {signer.fingerprint()}, which holds no "
                                    "seat: a new key may only claim one open seat (pbem join)", file=GAME))
        actor = claimed[0].id if claimed else None
    else:
        now = new.seat_of_key(signer)
        actor = seat.id if seat else (now.id if now else None)
    stray = sorted(p for p in changed if p not in SETUP_FILES | {STATUS})
    for path in stray:
        findings.append(Finding("setup.unexpected-file", f"{path}: before the start only game.yaml, README.md "
                                "and the workflow may change", file=path))
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
    stop, expected = expected_start(game, first)
    findings.extend(_status_findings(expected, game.status))
    return findings, Verified(game, stop, prev.founder, actor)


def _same_but_key(old: dict, new: dict, seat_id: str) -> bool:
    """game.yaml unchanged except for `key` (and `name`) of one seat: what `pbem join` writes."""
    def strip(raw: dict) -> dict:
        copy = dict(raw)
        copy["players"] = [
            {k: v for k, v in s.items() if not (s["id"] == seat_id and k in ("key", "name"))} for s in raw["players"]
        ]
        return copy
    return strip(old) == strip(new)


def _turn(prev: Verified, game: Game, changed: set[str], signer: PublicKey) -> tuple[list[Finding], Verified]:
    assert prev.stop is not None and prev.game.status is not None
    findings: list[Finding] = []
    for path in PROTECTED:
        if path in changed:
            findings.append(Finding("protected.changed", f"{path} is frozen once the game has started "
                                    "(a turn must not be able to change the game or disable its own check)",
                                    file=path))
    seat = prev.game.manifest.seat_of_key(signer)
    if seat is None:
        findings.append(Finding("signature.unknown-key", f"signed by {signer.fingerprint()}, which is no "
                                "player's key in game.yaml"))
        return findings, Verified(game, prev.stop, prev.founder, None)
    player = seat.id
    control = prev.stop.pending[0].player if prev.stop.pending else None
    if prev.stop.over:
        findings.append(Finding("game.over", "the game is over; no more turns"))
        return findings, Verified(game, prev.stop, prev.founder, player)
    if player != control:
        findings.append(Finding("signature.not-in-control", f"{player} made a turn, but {control} holds control "
                                f"({prev.stop.pending[0].why})", file=STATUS))
        return findings, Verified(game, prev.stop, prev.founder, player)
    for path in changed:
        m = PLAYERS_RE.match(path)
        if m and m.group(1) != player:
            findings.append(Finding("ownership.foreign-file", f"{player} changed {path}, which only "
                                    f"{m.group(1)} may change", file=path))
    firm = prev.stop.checkpoint.point
    findings.extend(ownership_findings(prev.game.inputs, game.inputs, player))
    findings.extend(firm_findings(prev.game.inputs, game.inputs, firm))
    ruleset = game.manifest.ruleset
    reason = progress_error(ruleset, firm, player, game.inputs)
    if reason:
        findings.append(Finding("progress.none", reason, file=f"players/{player}.yaml"))
    stop, expected = expected_after_turn(prev, game, player)
    findings.extend(stop.problems)
    if game.status is None:
        findings.append(Finding("status.mismatch", "status.yaml was removed", file=STATUS))
    else:
        findings.extend(_status_findings(expected, game.status))
    return findings, Verified(game, stop, prev.founder, player)


def _status_findings(expected: Status, written: Status) -> list[Finding]:
    want, got = expected.derived(), written.derived()
    wrong = [k for k in want if want[k] != got[k]]
    if not wrong:
        return []
    detail = "; ".join(f"{k}: expected {want[k]!r}, got {got[k]!r}" for k in wrong)
    return [Finding("status.mismatch", f"status.yaml does not match replay ({detail})", file=STATUS,
                    hint="run `pbem yield` to write the computed status")]


__all__ = ["Verified", "judge", "expected_start", "expected_after_turn", "README"]
