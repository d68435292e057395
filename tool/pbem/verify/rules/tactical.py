"""The tactical ruleset's own per-commit checks (seed 000 §2.C, §6.D; ARCHITECTURE §1 point 4), kept together
here until a ruleset capability declares them: a launch seals its target in the same commit
(secret.missing-target), a revealed energy allocation pays for what its units did (rules.allocation), and a
player's allocations add up across the battle (rules.held-unarmed, rules.not-armed, rules.battery-overdrawn,
rules.battery-overcharged: the ruleset's `audit_battle`)."""

from __future__ import annotations

from typing import Any

from pbem.errors import Finding, PbemError
from pbem.protocol import secrets
from pbem.protocol.verified import Verified
from pbem.verify.change import TURN, Change
from pbem.protocol.game import Game


def launches(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """A launch needs its target sealed in the same commit (secret.missing-target); a commit that changes
    secrets is judged for it with the other secret rules (rules.secrets)."""
    manifest = game.manifest
    if change.secrets or change.kind != TURN or manifest.ruleset.seeking is None \
            or not change.in_report_folder:
        return []
    return secrets.sealing_findings(prev.game.secrets, game.secrets, change.player or "", set(), True,
                                    manifest.ruleset, change.added, lambda: game.inputs.entries)


def audits(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """Seed §2.C: a revealed energy allocation must pay for what its units did in the turn of the sealed step it
    answers. Each is audited once, at the first commit where it is revealed and that turn is over (tactical/1
    `audit_allocation`)."""
    ruleset = game.manifest.ruleset
    audit = ruleset.audit
    if audit is None or prev.stop is None:
        return []
    stop = change.expected[0]
    found = []
    for secret in game.secrets.values():
        if secret.raw["kind"] != "allocation" or not secret.revealed or "step" not in secret.raw:
            continue  # an allocation without its step was refused when sealed (secret.wrong-step)
        # bound to the step the secret answers, never to the turn it names (secret.wrong-step at its reveal)
        turn = audit.turn_of(ruleset.parse_time(secret.raw["step"]))
        try:
            opened = secret.value()
        except PbemError:
            continue  # a box that does not open is its reveal's finding (secret.bad-key, secret.commit-mismatch)
        if not isinstance(opened, dict):
            continue  # not an allocation: its reveal's finding (schema.invalid)
        value = {**opened, "turn": turn}
        before = prev.game.secrets.get(secret.id)
        was_due = (before is not None and before.revealed
                   and audit.turn_ended(None if prev.stop.over else prev.stop.checkpoint.point, turn))
        is_due = audit.turn_ended(None if stop.over else stop.checkpoint.point, turn)
        if not is_due and before is not None and not before.revealed:
            # revealed before its turn is played (sealed speeds): what is wrong already is the revealer's
            found += [Finding("rules.allocation", f"{secret.id} ({secret.owner}, turn {turn}): {reason}",
                              file=secret.file, line=secret.line_of("key"))
                      for reason in audit.audit_plot(game.manifest.setup, value)]
        if is_due and not was_due:
            record = audit.turn_record(stop.checkpoint.state, secret.owner, turn)
            # the reveal (its `key` line) is what shows the allocation does not pay
            found += [Finding("rules.allocation", f"{secret.id} ({secret.owner}, turn {turn}): {reason}",
                              file=secret.file, line=secret.line_of("key"))
                      for reason in audit.audit_allocation(game.manifest.setup, record, value)]
    return found + _battle(prev, game, stop)


def _opened(game: Game, owner: str, audit: Any) -> dict[int, tuple[Any, dict[str, Any]]]:
    """turn -> (secret, its opened value) for each of `owner`'s revealed allocations that opens."""
    out: dict[int, tuple[Any, dict[str, Any]]] = {}
    for secret in game.secrets.values():
        if secret.owner != owner or secret.raw["kind"] != "allocation" or not secret.revealed \
                or "step" not in secret.raw:
            continue
        try:
            value = secret.value()
        except PbemError:
            continue  # its reveal's own finding
        if isinstance(value, dict):
            turn = audit.turn_of(game.manifest.ruleset.parse_time(secret.raw["step"]))
            out[turn] = (secret, {**value, "turn": turn})
    return out


def _battle(prev: Verified, game: Game, stop: Any) -> list[Finding]:
    """Seed §2.C, "verified at the conclusion of the battle": each owner's allocations read together across
    the turns that are over (a weapon held that was never armed, battery charge drawn that was never stored;
    `audit_battle`). What a reveal adds to what the allocations opened before it showed is found at that
    reveal, at the file and `key` line of the allocation at fault."""
    audit = game.manifest.ruleset.audit
    if audit is None:
        return []
    owners = {s.owner for s in game.secrets.values() if s.raw["kind"] == "allocation" and s.revealed
              and not (s.id in prev.game.secrets and prev.game.secrets[s.id].revealed)}
    point = None if stop.over else stop.checkpoint.point
    found: list[Finding] = []
    for owner in sorted(owners):
        now, before = _opened(game, owner, audit), _opened(prev.game, owner, audit)
        turns = [t for t in range(1, max(now, default=0) + 1) if audit.turn_ended(point, t)]
        records = [audit.turn_record(stop.checkpoint.state, owner, t) for t in turns]
        setup = game.manifest.setup
        seen = set(audit.audit_battle(setup, records, {t: v for t, (_, v) in before.items() if t in turns}))
        for turn, rule, reason in audit.audit_battle(setup, records, {t: v for t, (_, v) in now.items()
                                                                       if t in turns}):
            if (turn, rule, reason) not in seen and turn in now:
                secret = now[turn][0]
                found.append(Finding(rule, f"{secret.id} ({owner}, turn {turn}): {reason}", file=secret.file,
                                     line=secret.line_of("key")))
    return found
