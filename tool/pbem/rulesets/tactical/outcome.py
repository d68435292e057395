"""Who won a `tactical/1` game (docs/tactical.md "The end and the outcome"); pbem's rule, the seed leaves it to
the players.

* When the game ends because at most one player still has units in play (ships, shuttles, fighters on the map;
  seeking weapons do not count): that player wins, the others' units having been destroyed or having disengaged
  (left the map); if nobody has, it is a draw.
* When the last turn ends with two or more players still in play: the player whose units took the least damage
  wins (damage = shield points lost + internal points lost; a destroyed unit counts all its shields and hull);
  equal least damage: a draw between those players. Internal points lost are hull points, and under a damage
  allocation table the boxes of weapons and systems lost (net of repairs) and each one a raid destroyed.
"""

from __future__ import annotations

from typing import Any

from pbem.rulesets.tactical.state import DESTROYED, TacticalState, Unit


def _initial(unit: Unit, key: str) -> Any:
    return unit.extra.get(key)


def damage_taken(state: TacticalState) -> dict[str, int]:
    """Player -> the damage his units (not seeking weapons) have taken so far."""
    taken = {p: 0 for p in state.players}
    for unit in state.units:
        if unit.seeking is not None or unit.owner not in taken:
            continue
        shields = _initial(unit, "shields")
        start_shields = sum(shields) if isinstance(shields, (list, tuple)) else 0
        start_hull = _initial(unit, "hull") if isinstance(_initial(unit, "hull"), int) else 0
        if unit.status == DESTROYED:
            taken[unit.owner] += start_shields + start_hull
        else:
            boxes = sum(change for _, _, change in unit.lost) + len(unit.gear.lost)
            taken[unit.owner] += max(0, start_shields - sum(unit.shields)) + max(0, start_hull - unit.hull) + boxes
    return taken


def outcome(state: TacticalState) -> str:
    """The outcome of a finished game, one line (see the module docstring)."""
    started = [p for p in state.players if any(u.owner == p and u.seeking is None for u in state.units)]
    left = [p for p in started if any(u.owner == p and u.active and u.seeking is None for u in state.units)]
    gone = {p: sorted({u.status for u in state.units if u.owner == p and u.seeking is None and not u.active})
            for p in started if p not in left}
    why = "; ".join(f"{p}'s units {' or '.join(sorted(s))}" for p, s in gone.items() if s)
    if len(left) == 1 and len(started) >= 2:
        return f"{left[0]} wins: the only one left in play ({why})"
    if not left:
        return f"a draw: nobody is left in play ({why})"
    taken = damage_taken(state)
    least = min(taken[p] for p in left)
    best = [p for p in left if taken[p] == least]
    scores = ", ".join(f"{p} {taken[p]}" for p in left)
    if len(best) == 1:
        return f"{best[0]} wins on damage taken after the last turn (least is best: {scores})"
    return f"a draw between {' and '.join(best)} on damage taken after the last turn ({scores})"
