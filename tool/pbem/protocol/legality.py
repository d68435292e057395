"""Judging an entry with what its author could know when he wrote it (DESIGN §4.2 "Entries and time").

Legality has two halves, and they are judged at two moments:

* what the author alone could have known (a unit that is not his or does not exist, a value out of range, a move
  at an impulse where his own plotted speed does not move him, a second high-energy turn) is judged when he
  writes the entry: it is a finding on *his* commit (`rules.illegal-action`, `rules.duplicate-action`), through
  `pbem check`, `pbem yield`, the verifier, the hook and the workflow alike;
* what becomes impossible only through others' later actions (the target left the arc, the firing unit was
  destroyed) is void when replay reaches it (pbem.protocol.replay), and never a finding.

The author's view: the public state at the firm point, carried forward by his own actions only (his entries,
plans and defaults), never by anybody else's. The ruleset says what that view is and what it can judge there
(`own_view`, `own_step`, `own_legality`); a ruleset without them judges nothing ahead (all goes to replay).
Entries at the firm step itself are judged by the full `legal` on the firm state: that is exactly what replay
will do there, and all of it is public.

Only the entries a commit adds (or edits) are judged, and the walk ends at the last of them: the cost is the
steps from the firm point to what he wrote, never the game's history. An entry he did not touch is not judged
again (if his later change made it impossible, replay voids it).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pbem.errors import Finding
from pbem.protocol.model import Checkpoint, Entry, Inputs
from pbem.protocol.replay import plan_actions
from pbem.rulesets.base import Action, Foresight, Ruleset

ILLEGAL = "rules.illegal-action"
DUPLICATE = "rules.duplicate-action"


def judges_ahead(ruleset: Ruleset) -> bool:
    """Whether the ruleset can judge entries with their author's view (its `foresight`)."""
    return ruleset.foresight is not None


def own_findings(ruleset: Ruleset, setup: Mapping[str, Any], inputs: Inputs, firm: Checkpoint, player: str,
                 added: Iterable[Entry]) -> list[Finding]:
    """The findings on `player`'s commit for the entries it added at or after the firm point: each judged against
    his own view of the game when he wrote it (see the module docstring)."""
    point = firm.point
    if point is None:
        return []
    mine = [e for e in added if e.by == player and e.at >= point]
    if not mine:
        return []
    fresh = {id(e) for e in mine}
    last = max(e.at for e in mine)
    sight, uses = ruleset.foresight, ruleset.uses
    view = sight.own_view(firm.state, player) if sight is not None else None
    found: list[Finding] = []
    first = True
    while point is not None and point <= last:
        taken: dict[tuple[str | None, Any], bool] = {}  # slot -> whether the entry that took it is new
        actions: list[Action] = []
        # what this step's entries are judged against, less what those accepted before spent (`uses.spend`: two
        # uses that each fit what the ruleset allows but together do not are not both accepted);
        # the entries standing before this commit count first, so the commit that makes a sum exceed is refused
        here = firm.state if first else view
        mine_here = [e for e in inputs.at(point) if e.by == player]
        for entry in sorted(mine_here, key=lambda e: id(e) in fresh):
            action = Action(entry.at, entry.by, entry.unit, entry.do, "entry", entry.file, entry.line)
            verb = next(iter(entry.do), "")
            slot = (uses.slot_of(entry.do) if uses is not None else None) or verb
            judged = id(entry) in fresh
            if (entry.unit, slot) in taken:
                if judged or taken[(entry.unit, slot)]:
                    found.append(Finding(DUPLICATE, f"{player} gave {entry.unit} a second {verb!r} at "
                                         f"{entry.at_text}: one action per unit and slot at a step",
                                         file=entry.file, line=entry.line))
                continue
            reason = (ruleset.legal(here, action) if first or sight is None
                      else sight.own_legality(here, action))
            if reason is not None:
                if judged:  # a ruleset's reason may name its own rule (`reason.rule`)
                    found.append(Finding(getattr(reason, "rule", ILLEGAL), reason + ("" if first else f" (as {player} could know it "
                                         "when writing it: the firm point and his own orders since)"),
                                         file=entry.file, line=entry.line))
                continue
            taken[(entry.unit, slot)] = judged
            actions.append(action)
            here = uses.spend(here, action) if uses is not None else here
        following = ruleset.next_step(setup, point)
        if following is None or following > last or sight is None:
            break
        actions += _planned_and_default(ruleset, sight, view, point, player, inputs, {a.unit for a in actions})
        view = sight.own_step(view, point, actions)
        first = False
        point = following
    return found


def _planned_and_default(ruleset: Ruleset, sight: Foresight, view: Any, point: Any, player: str, inputs: Inputs,
                         explicit: set[str | None]) -> list[Action]:
    """His plans' actions at this step in his view (a tie takes the first option: the view only needs some
    course; the ruleset marks plan-driven units as uncertain), then his defaults."""
    state = sight.own_state(view)
    out, done = plan_actions(ruleset, state, point, player, inputs, explicit, None)
    out.extend(a for a in ruleset.default_actions(state, point, player) if a.unit not in done)
    return out
