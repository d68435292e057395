"""A sealed input replaced before the step's last seal (DESIGN §4.7; docs/dow.md "Replacing a sealed set").

In a ruleset that allows it (`replaceable_seals`: Diplomacy), a player who sealed his input for a sealed step may
seal a new one while another player's seal is still owed there: the new secret names the one it `replaces`, both
stay on record (nothing sealed ever changes), and the step counts only the newest. Nobody has revealed anything
while a seal is still owed (reveals come once all have sealed), so a replacement can answer nobody's orders;
once the last player has sealed, the sets stand.

Pure: functions of the secrets and the pending breaks.
"""

from __future__ import annotations

from typing import Any, Collection, Iterable, Mapping

from pbem.errors import Finding
from pbem.protocol.model import SEALED, Break
from pbem.protocol.secrets import Secret

REPLACES = "replaces"  # the secret field naming the sealed input a new one supersedes


def superseded(secrets: Iterable[Secret]) -> frozenset[str]:
    """The ids of the sealed inputs a later one replaces: the step counts none of them, and none is owed."""
    return frozenset(s.raw[REPLACES] for s in secrets if isinstance(s.raw.get(REPLACES), str))


def _reseals(ruleset: Any) -> bool:
    """Whether the ruleset lets a sealed input be replaced at all (`Sealed.replaceable_seals`)."""
    return ruleset.sealing is not None and bool(ruleset.sealing.replaceable_seals)


def replaceable(ruleset: Any, pending: Iterable[Break], step: str, player: str) -> bool:
    """Whether `player` may replace his sealed input for `step` now: the ruleset allows it, and another player's
    seal is still owed there (after the last seal, the reveals begin and the sets stand)."""
    return _reseals(ruleset) and any(
        b.kind == SEALED and b.at == step and b.player != player for b in pending)


def replacement_findings(ruleset: Any, before: Mapping[str, Secret], after: Mapping[str, Secret], player: str,
                         pending: Collection[Break]) -> tuple[list[Finding], set[str]]:
    """The findings on the replacements a commit seals, and the steps they may answer (a player who sealed owes
    no sealed input there any more; a rightful replacement answers it all the same).

    A replacement names a sealed input of the committer's own for the same step, unrevealed, not withheld and
    not replaced already (`secret.bad-replace`), and comes while another player's seal is still owed there, in a
    ruleset that allows it (`secret.late-replace`)."""
    out: list[Finding] = []
    steps: set[str] = set()
    gone = superseded(before.values())
    for sid in sorted(set(after) - set(before)):
        new = after[sid]
        old_id = new.raw.get(REPLACES)
        if old_id is None:
            continue
        line = new.line_of(REPLACES)
        old = before.get(old_id) if isinstance(old_id, str) else None
        step = new.raw.get("step")
        why = ("it names no sealed input" if old is None else
               f"{old_id} is {old.owner}'s, not {new.owner}'s" if old.owner != new.owner or new.owner != player else
               f"{old_id} answers {old.raw.get('step')}, not {step}" if step is None or old.raw.get("step") != step
               else f"{old_id} was replaced already" if old_id in gone
               else f"{old_id} is revealed" if old.revealed
               else f"{old_id} was settled by {old.withheld}" if old.withheld else None)
        if why is not None:
            out.append(Finding("secret.bad-replace", f"secret {sid} replaces {old_id}, but {why}: a sealed input "
                               "replaces its owner's own unrevealed one for the same step", file=new.file, line=line))
            continue
        assert isinstance(step, str)  # the schema's time, checked above against the replaced set's
        if not replaceable(ruleset, pending, step, player):
            out.append(Finding("secret.late-replace", f"secret {sid} replaces {old_id} for {step}, but "
                               + ("this game's sealed inputs are never replaced"
                                  if not _reseals(ruleset) else
                                  "every player has sealed for it: the sets stand as sealed (a set is replaced "
                                  "only while another player's seal is still owed)"), file=new.file, line=line))
            continue
        steps.add(step)
    return out, steps


def replacing(ruleset: Any, before: Mapping[str, Secret], after: Mapping[str, Secret], player: str,
              pending: Collection[Break]) -> list[Break]:
    """What a commit replacing a sealed input settles out of turn, as a break of its player: one per step he may
    replace his input for now (`replaceable`), so the commit is his to make without holding control."""
    steps = sorted({s.raw["step"] for sid, s in after.items() if sid not in before and s.owner == player
                    and isinstance(s.raw.get(REPLACES), str) and isinstance(s.raw.get("step"), str)})
    return [Break(player, step, SEALED, f"replacing his sealed input for {step} (another's seal is still owed)")
            for step in steps if replaceable(ruleset, pending, step, player)]
