"""Where a player's own orders lead, for warnings before he yields (DESIGN §4.2 "Entries and time", §8 `pbem
check`): his view of the game (the firm point carried forward by his own entries, plans and defaults, exactly as
protocol.legality judges his entries) walked on to his horizon, and what the ruleset finds worth a warning there.

A warning is never a finding: the orders are legal, and others may still change what happens. It tells the
player, while he can still change them, that as far as he alone can see his orders take a unit off the map, or
an entry of his will be void, or a seeking weapon he launches can never reach its target (tactical/1
`own_warnings`). A ruleset without a view of its own (`own_view`, `own_step`) or without `own_warnings` warns of
nothing.

Cost: the steps from the firm point to his horizon, at most `LIMIT` steps; nothing is kept.
"""

from __future__ import annotations

from typing import Any, Mapping

from pbem.protocol.model import Checkpoint, Inputs
from pbem.protocol.replay import plan_actions
from pbem.rulesets.base import Action, Ruleset

LIMIT = 600  # steps walked at most: a little over three turns of tactical/1


def void_here(ruleset: Ruleset, firm: Checkpoint, inputs: Inputs, player: str) -> list[str]:
    """`player`'s entries at the step replay stopped at that are void there (the public state already says so),
    while the step still waits (for dice, an auction, a reply): a void shot owes no die, so it drops out of the
    dice owed; this says why instead of letting it vanish. Replay logs it once the step resolves."""
    if firm.point is None:
        return []
    out = []
    for entry in inputs.at(firm.point):
        if entry.by != player:
            continue
        reason = ruleset.legal(firm.state, Action(entry.at, entry.by, entry.unit, entry.do, "entry", entry.file,
                                                  entry.line))
        if reason is not None:
            out.append(f"void: your entry at {entry.at_text} ({entry.file}:{entry.line}) will be void when this step "
                       f"resolves, and owes no die: {reason}")
    return out


def warnings(ruleset: Ruleset, setup: Mapping[str, Any], inputs: Inputs, firm: Checkpoint,
             player: str) -> list[str]:
    """What `player`'s own orders lead to, as far as he alone can see, up to his horizon: one line each, in game
    time order, each once (first what is void at the step replay stopped at, `void_here`)."""
    sight = ruleset.foresight
    point, through = firm.point, inputs.of(player).through
    out: list[str] = void_here(ruleset, firm, inputs, player)
    if sight is None or point is None or through is None:
        return out
    view = sight.own_view(firm.state, player)
    steps = 0
    while point is not None and point <= through and steps < LIMIT:
        state = sight.own_state(view)
        given = [Action(e.at, e.by, e.unit, e.do, "entry", e.file, e.line) for e in inputs.at(point) if e.by == player]
        planned, done = plan_actions(ruleset, state, point, player, inputs, {a.unit for a in given}, None)
        given += planned
        given += [a for a in ruleset.default_actions(state, point, player) if a.unit not in done]
        after = sight.own_step(view, point, given)
        for line in sight.own_warnings(view, after, point, given, inputs.of(player).plans):
            if line not in out:
                out.append(line)
        view, point, steps = after, ruleset.next_step(setup, point), steps + 1
    return out
