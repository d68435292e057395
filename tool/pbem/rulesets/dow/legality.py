"""Order legality by relationship state (DESIGN §7.2 table; seed 001 "The Relationship States").

An order of power X is judged by the states *in force* and the territories *at the start of the phase*. The
territory of a power Y is every province with a unit of Y or coloured Y's colour (the engine's influence;
seed 001 "Further Definitions"). The table, for X towards each other power Y:

| order of X                                                     | needs X–Y                                  |
|----------------------------------------------------------------|--------------------------------------------|
| move (or retreat) into Y's territory                           | WAR                                        |
| move into an uncoloured, empty province (a bounce there)      | nothing: always allowed                    |
| support or convoy of a move into Y's territory                 | HOSTILE or WAR                             |
| support-hold of Y's unit                                       | FRIENDLY or ALLIED                         |
| support/convoy of Y's unit into Y's own or uncoloured territory| FRIENDLY or ALLIED                         |
| support/convoy of Y's unit into the territory of Z hostile to X| X–Y ALLIED (and X–Z HOSTILE or WAR)        |
| support-hold or support/convoy of Y's unit, anywhere           | WAR (seed: "NO LIMITS to the interactions  |
|                                                                | you may have with their units"); X–Z rules |
|                                                                | for a third power's territory still apply  |
| anything else touching Y (NEUTRAL: "can't interact")           | refused                                    |

LIMBO counts as HOSTILE for all of this ("you may only execute moves as if you are hostile to both").

Choices where the seed is silent (docs/dow.md): a retreat is a move; a province can be the territory of two
powers (Y's unit on Z's colour) and then every one of them must allow the order; helping another power's unit
into X's own territory is refused (only Y's own or uncoloured territory, or a hostile power's, is listed);
holds, disbands, builds and waives are always allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pbem.rulesets.dow.board import Board, province_of, unit_province
from pbem.rulesets.dow.relations import ALLIED, FRIENDLY, HOSTILE, LIMBO, WAR, Matrix, moves_as

HOLD, MOVE, SUPPORT_HOLD, SUPPORT_MOVE, CONVOY, RETREAT, DISBAND, BUILD, WAIVE = (
    "hold", "move", "support_hold", "support_move", "convoy", "retreat", "disband", "build", "waive")

Namer = Callable[[str], str]


@dataclass(frozen=True)
class Order:
    """An order in the engine's normal form, taken apart: `unit` ("A PAR"), and for supports and convoys the
    `target` unit ("A MAR"), `dest` the province moved or retreated into ("BUR")."""

    kind: str
    unit: str | None
    target: str | None = None
    dest: str | None = None


def parse(normal: str) -> Order:
    """Take apart an order the engine accepted ("A PAR S A MAR - BUR", "F ENG C A LON - BRE", "A BUR R RUH",
    "A PAR B", "WAIVE"); ValueError for anything else."""
    words = normal.split()
    if words == ["WAIVE"]:
        return Order(WAIVE, None)
    if len(words) < 3:
        raise ValueError(f"not an order: {normal!r}")
    unit, verb, rest = " ".join(words[:2]), words[2], words[3:]
    if verb == "H" and not rest:
        return Order(HOLD, unit)
    if verb == "-" and rest:
        return Order(MOVE, unit, dest=province_of(rest[0]))
    if verb == "R" and len(rest) == 1:
        return Order(RETREAT, unit, dest=province_of(rest[0]))
    if verb in ("D", "B") and not rest:
        return Order(DISBAND if verb == "D" else BUILD, unit)
    if verb in ("S", "C") and len(rest) >= 2:
        target = " ".join(rest[:2])
        if len(rest) >= 4 and rest[2] == "-":
            return Order(SUPPORT_MOVE if verb == "S" else CONVOY, unit, target, province_of(rest[3]))
        if verb == "S" and (len(rest) == 2 or rest[2:] == ["H"]):
            return Order(SUPPORT_HOLD, unit, target)
    raise ValueError(f"not an order: {normal!r}")


def _title(power: str) -> str:
    return power.capitalize()


def _as(state: str) -> str:
    return "in LIMBO (which moves as HOSTILE)" if state == LIMBO else state


def forbidden(power: str, normal: str, board: Board, matrix: Matrix, name: Namer = str) -> str | None:
    """None if `power` may give this (engine-accepted) order under the states in force, else the reason.

    `board` is the position at the start of the phase, `matrix` the states in force, `name` gives a province's
    name for the message ("MUN" -> "Munich")."""
    order = parse(normal)
    x = power
    if order.kind in (HOLD, DISBAND, BUILD, WAIVE):
        return None
    if order.kind in (MOVE, RETREAT):
        assert order.dest is not None
        verb = "move" if order.kind == MOVE else "retreat"
        for y in sorted(board.territory_owners(order.dest) - {x}):
            state = matrix.get(x, y)
            if moves_as(state) != WAR:
                return (f"{x} may not {verb} into {name(order.dest)}: {_title(y)}'s territory, and {_title(x)} and "
                        f"{_title(y)} are {_as(state)} (moves into a power's territory need WAR)")
        return None
    assert order.target is not None
    target_province = unit_province(order.target)
    found = board.unit_in(target_province)
    owner = found[0] if found else None
    if owner is None:  # the engine lets a convoy order name an army that is not there; nothing to help
        return None
    whose = f"{_title(owner)}'s " if owner != x else ""
    what = f"{'convoy' if order.kind == CONVOY else 'support'} {whose}"
    if order.kind == SUPPORT_HOLD:
        if owner == x:
            return None
        state = matrix.get(x, owner)
        if moves_as(state) not in (FRIENDLY, ALLIED, WAR):
            return (f"{x} may not {what}{order.target}: {_title(x)} and {_title(owner)} are {_as(state)} (support "
                    "of another power's unit needs FRIENDLY or ALLIED, or WAR: no limits)")
        return None
    assert order.dest is not None
    moved = f"{what}{order.target} - {order.dest}"
    owners = board.territory_owners(order.dest) - {owner}
    for w in sorted(owners - {x}):
        state = matrix.get(x, w)
        if moves_as(state) not in (HOSTILE, WAR):
            return (f"{x} may not {moved}: {name(order.dest)} is {_title(w)}'s territory, and {_title(x)} and "
                    f"{_title(w)} are {_as(state)} (supporting or convoying a move into a power's territory "
                    "needs HOSTILE or WAR)")
    if owner == x:
        return None
    state = matrix.get(x, owner)
    if state == WAR:  # seed 001, WAR: "NO LIMITS to the interactions you may have with their units"
        return None
    if x in owners:
        return (f"{x} may not {moved}: {name(order.dest)} is {_title(x)}'s own territory (another power's unit "
                "may be helped only into its own or uncoloured territory, or into a hostile power's)")
    if not owners:
        if moves_as(state) not in (FRIENDLY, ALLIED):
            return (f"{x} may not {moved}: {_title(x)} and {_title(owner)} are {_as(state)} (helping another "
                    "power's unit into its own or uncoloured territory needs FRIENDLY or ALLIED)")
        return None
    if state != ALLIED:
        hostile = ", ".join(_title(w) + "'s" for w in sorted(owners))
        return (f"{x} may not {moved}: {name(order.dest)} is {hostile} territory, and helping another power's "
                f"unit into the territory of a power hostile to {_title(x)} needs {_title(x)} and {_title(owner)} "
                f"ALLIED (they are {_as(state)})")
    return None
