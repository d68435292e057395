"""Dice bound to the rules (DESIGN §5 "Binding", "Who rolls"): a batch rolls only for refs owed now, with the
ruleset's die for each, one standing batch per ref, announced by the player whose action it resolves; a batch
whose refs were scored is never voided. Pure: the caller says what is owed, which die and who rolls.
"""

from __future__ import annotations

from typing import Callable, Collection, Mapping

from pbem.errors import Finding
from pbem.protocol.dice import Batch


def binding_findings(before: Mapping[str, Batch], after: Mapping[str, Batch], owed_refs: Collection[str],
                     sides_of: Callable[[str], int | None], resolved: Callable[[str], bool],
                     rollers_of: Callable[[str], Collection[str] | None] = lambda ref: None) -> list[Finding]:
    """DESIGN §5 "Binding": a batch announced (or re-announced) by this commit rolls only for refs owed now
    (`owed_refs`: the declared, unresolved actions of the step being resolved, or "start" before the start;
    `dice.unbound-ref`), with the die the rules name for each (`sides_of`; `dice.bad-sides`), and no ref is
    rolled by two batches that stand (`dice.rebound-ref`): a batch is replaced only through a void.
    `resolved(ref)` says whether the ref's step is already behind the firm point (only for the message).

    DESIGN §5 "Who rolls": only the player whose action a die resolves announces it (`rollers_of(ref)`: the
    players who may, None where the rules do not say; `dice.wrong-roller`). Anybody else could announce the
    firer's die, learn it once the firer contributed, and withhold the reveal so that the shot is lost."""
    live: dict[str, list[str]] = {}
    for batch in sorted(after.values(), key=lambda b: b.id):
        if not batch.voided:
            for ref in batch.refs:
                live.setdefault(ref, []).append(batch.id)
    out: list[Finding] = []
    for batch_id in sorted(after):
        batch, old = after[batch_id], before.get(batch_id)
        if old is not None and old.raw["rolls"] == batch.raw["rolls"] and old.sides == batch.sides:
            continue  # announced before: judged then
        if batch.voided:
            continue
        for ref in dict.fromkeys(batch.refs):
            allowed = rollers_of(ref)
            if allowed is not None and batch.roller not in allowed:
                out.append(Finding("dice.wrong-roller", f"batch {batch.id} rolls for {ref}, which is "
                                   f"{' or '.join(sorted(allowed)) or 'nobody'}'s to roll, not {batch.roller}'s: "
                                   "only the player whose action a die resolves announces it (the firer; for the "
                                   "start, who proposed to roll for it)", file=batch.file,
                                   line=batch.line_of("roller")))
            wanted, rolled = sides_of(ref), batch.sides_of(ref)
            if wanted is not None and rolled != wanted:
                out.append(Finding("dice.bad-sides", f"batch {batch.id} rolls a d{rolled} for {ref}, which "
                                   f"the rules roll with a d{wanted}", file=batch.file,
                                   line=batch.line_of("sides")))
            if ref not in owed_refs:
                why = ("its step is resolved already: a resolved shot keeps the die it was scored with"
                       if resolved(ref) else
                       "nothing owes a die for it now: dice are rolled for a declared action at the step being "
                       "resolved, never before it is declared")
                out.append(Finding("dice.unbound-ref", f"batch {batch.id} rolls for {ref}: {why}"
                                   + (f" (owed now: {', '.join(owed_refs)})" if owed_refs else ""),
                                   file=batch.file, line=batch.line_of("rolls")))
            else:
                # the batch that stood first keeps the ref: one announced before this commit, else the lowest id
                first = [b for b in live.get(ref, ()) if b != batch.id and (b in before or b < batch.id)]
                if first or batch.refs.count(ref) > 1:
                    out.append(Finding("dice.rebound-ref", f"batch {batch.id} rolls for {ref}, which "
                                       f"{', '.join(first) or batch.id} already rolls: one batch per ref; to "
                                       "re-roll, void the first whole (pbem dice void, co-signed once its results "
                                       "are knowable)", file=batch.file, line=batch.line_of("rolls")))
    return out


def only(player: str | None) -> tuple[str, ...] | None:
    """The rollers `binding_findings` allows for a ref whose rules name one player (None: not said)."""
    return None if player is None else (player,)


def void_binding_findings(before: Mapping[str, Batch], after: Mapping[str, Batch],
                          owed_refs: Collection[str]) -> list[Finding]:
    """DESIGN §5: a batch is replaced only through a void, never for a step already resolved: a batch whose
    refs were scored may not be voided (or an erratum's replay would find the shot without its die)."""
    out = []
    for batch_id in sorted(after):
        batch, old = after[batch_id], before.get(batch_id)
        if not batch.voided or old is None or old.voided:
            continue
        done = [ref for ref in batch.refs if ref not in owed_refs]
        if done:
            out.append(Finding("dice.bad-void", f"batch {batch.id} cannot be voided: {', '.join(done)} "
                               "owe no die now (resolved, or not declared)", file=batch.file,
                               line=batch.line_of("void")))
    return out
