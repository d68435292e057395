"""Who contributes to a commit-reveal batch (DESIGN §5, §4.8; docs/dice.md "Who contributes"): the seats still
playing when it is announced. A seat that resigned before is not asked for it, now or ever: nobody waits on a
player who left. The batch says so itself: where a seat had resigned, its announcement names the contributors
(`contributors`, in table order), fixed from then on like the rest of the announcement; without the field every
other seat contributes, as DESIGN §5 has it. A seat given back to a player later (a replacement) contributes to
what is announced after that.

It stays unbiased: every contributor left still commits to his part before he can see any other, and the roller
to his secret before anyone contributes; one honest part among them makes the die uniform. A batch with no
contributor left would be the roller's alone (he chose his secret knowing it), so none is announced.
"""

from __future__ import annotations

from typing import Collection, Mapping, Sequence

from pbem.errors import Finding
from pbem.protocol.dice import Batch


def playing(players: Sequence[str], roller: str, gone: Collection[str]) -> list[str]:
    """The seats that contribute to a batch `roller` announces now: every other seat not in `gone` (resigned)."""
    return [p for p in players if p != roller and p not in gone]


def to_write(players: Sequence[str], roller: str, gone: Collection[str]) -> list[str] | None:
    """The `contributors` a new batch writes, or None where every other seat plays (the field is left out)."""
    them = playing(players, roller, gone)
    return None if them == playing(players, roller, ()) else them


def findings(players: Sequence[str], gone: Collection[str], before: Mapping[str, Batch],
             after: Mapping[str, Batch]) -> list[Finding]:
    """A batch announced (or its announcement corrected) by this commit names exactly the seats still playing as
    its contributors, none when every other seat plays; an escrow batch has none (`dice.bad-batch`)."""
    out = []
    for batch_id in sorted(after):
        batch, old = after[batch_id], before.get(batch_id)
        named = batch.raw.get("contributors")
        if old is not None and old.raw.get("contributors") == named:
            continue
        line = batch.line_of("contributors") or batch.line_of("roller")
        if batch.mode == "escrow":
            if named is not None:
                out.append(Finding("dice.bad-batch", f"batch {batch.id}: an escrow batch has no contributors",
                                   file=batch.file, line=line))
            continue
        wanted = playing(players, batch.roller, gone)
        if not wanted:
            out.append(Finding("dice.bad-batch", f"batch {batch.id}: nobody but its roller is still playing, so "
                               "nobody could contribute, and a die made of the roller's secret alone is his choice",
                               file=batch.file, line=line))
        elif (list(named) if named is not None else batch.others(players)) != wanted:
            left = sorted(set(players) & set(gone) - {batch.roller})
            why = f" ({', '.join(left)} resigned)" if left else ""
            write = f"`contributors: [{', '.join(wanted)}]`" if left else "no `contributors`"
            out.append(Finding("dice.bad-batch", f"batch {batch.id}: its contributors are the seats still playing "
                               f"when it is announced, {', '.join(wanted)}{why}: it writes {write} (pbem roll does)",
                               file=batch.file, line=line))
    return out
