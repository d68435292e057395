"""Control, the status a commit must write, and the progress rule (DESIGN §4.2, §4.4; seed 000 §3, §4.C)."""

from __future__ import annotations

from dataclasses import replace

from pbem.protocol.model import AT, CONDITION, REPLY, Checkpoint, Inputs, Status, Stop
from pbem.rulesets.base import Point, Ruleset


def status_of(ruleset: Ruleset, stop: Stop, yielded_by: str | None, note: str = "") -> Status:
    """The status.yaml a commit must carry when replay stopped at `stop`: the first pending break gets
    control; `firm` is the next unresolved step (seed §3.C "firm to here")."""
    point = stop.checkpoint.point
    return Status(
        control=stop.pending[0].player if stop.pending else None,
        firm=ruleset.format_time(point) if point is not None and not stop.over else None,
        pending=stop.pending,
        over=stop.over,
        yielded_by=yielded_by,
        note=note,
    )


def resume_from(stop: Stop, served: str | None) -> Checkpoint:
    """Where the next replay starts once `served` (the player in control) has taken his turn.

    Breaks met by a resolved step cannot be recomputed from the firm point, so the unserved ones are carried;
    so are the replies owed at a held simultaneous step (`reply`, seed §6.C.1: the step is resolved again only
    once each has answered); every other kind (horizon, clarify, dice, sealed, auction) is recomputed by the next
    replay.
    """
    carried = tuple(b for b in stop.pending if b.player != served and b.kind in (CONDITION, AT, REPLY))
    if carried == stop.checkpoint.carried:
        return stop.checkpoint  # the usual turn: nothing carried before or after (a copy would equal it)
    return replace(stop.checkpoint, carried=carried)


def progress_error(ruleset: Ruleset, firm: Point | None, committer: str, after: Inputs) -> str | None:
    """Seed §4.C: the player in control must act or forfeit at least the step at the firm point, so his
    horizon must now cover it. None when he made progress, else what he must do."""
    if firm is None:
        return "the game is over: no more turns can be taken"
    through = after.of(committer).through
    if through is None or through < firm:
        when = ruleset.format_time(firm)
        had = after.of(committer).through_text or "nothing"
        return (f"{committer} made no progress: his orders reach {had}, but he holds control at {when}; "
                f"set `through` in players/{committer}.yaml to {when} or later (seed 000 §4.C)")
    return None
