"""Random legal positions and orders through the engine adapter, and the properties every adjudication must
keep (docs/dow.md "Corrections of the engine"): used by tests/test_dow_properties.py (hypothesis, bounded) and
bench/dow_properties.py (a longer run with counts).

`play(rng)` builds a position (distinct provinces, each unit of a random power where the map allows it; every
unit colours its province; the standard centres), gives every unit an order the engine offers (moves are drawn
most often, so that units meet), adjudicates the movement phase, checks it, then plays the retreats the
engine offers and checks that the engine takes every board it produced in the next phase.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pbem.rulesets.dow import datc, engine
from pbem.rulesets.dow.board import Board, province_of, unit_province

INFO = engine.standard_map()
UNITS = engine.unit_locations()


@dataclass
class Played:
    """What one random position gave: the findings (empty when every property holds) and what it exercised."""

    findings: list[str] = field(default_factory=list)
    dislodged: int = 0
    after_convoy: int = 0  # dislodged by a convoyed army
    convoys: int = 0  # armies a route of convoy orders could carry
    disrupted: int = 0


def random_board(rng: random.Random, count: int) -> Board:
    units: dict[str, list[str]] = {}
    taken: set[str] = set()
    for unit in rng.sample(UNITS, len(UNITS)):
        if len(taken) >= count:
            break
        if unit_province(unit) not in taken:
            taken.add(unit_province(unit))
            units.setdefault(rng.choice(INFO.powers), []).append(unit)
    influence = {p: [unit_province(u) for u in us] for p, us in units.items()}
    return Board.of(INFO.powers, units, dict(INFO.start.centres), influence)


def random_orders(rng: random.Random, board: Board, phase: str) -> dict[str, list[str]]:
    """An order for every unit among those the engine offers: moves half the time; convoys planned (an army
    offered a move via convoy takes it, with or without "VIA", and the fleets offered that convoy give it);
    supports of the moves chosen drawn often; each order then checked as a player's would be."""
    offered = engine.possible_orders(board, phase)
    units = [*board.units, *((p, u) for p, u, _ in board.dislodged)]
    owner = {u: p for p, u in units}
    choices = {u: offered.get(u[2:], ()) or offered.get(unit_province(u), ()) for _, u in units}
    chosen: dict[str, str] = {}
    for unit, offer in choices.items():
        if offer:
            moves = [o for o in offer if " - " in o and " S " not in o and " C " not in o]
            chosen[unit] = rng.choice(moves if moves and rng.random() < 0.5 else offer)
    for unit, offer in choices.items():
        via = [o for o in offer if o.endswith(" VIA")]
        if via and rng.random() < 0.6:
            move = rng.choice(via)
            chosen[unit] = move if rng.random() < 0.5 else move[: -len(" VIA")]
            convoy = "C " + " ".join(move.split()[:4])
            for fleet, theirs in choices.items():
                if fleet[0] == "F" and any(o.endswith(convoy) for o in theirs) and rng.random() < 0.8:
                    chosen[fleet] = f"{fleet} {convoy}"
    moving = {" ".join(o.split()[:2]): o.split()[3] for o in chosen.values() if o.split()[2] == "-"}
    for unit, offer in choices.items():
        if chosen.get(unit, "").split()[2:3] == ["C"] or rng.random() < 0.5:
            continue
        helping = [o for o in offer if o.split()[2] == "S" and len(o.split()) == 7
                   and moving.get(" ".join(o.split()[3:5])) == o.split()[6]]
        if helping:
            chosen[unit] = rng.choice(helping)
    orders: dict[str, list[str]] = {}
    for unit, order in chosen.items():
        orders.setdefault(owner[unit], []).append(order)
    return {p: [c.normal for c in engine.check_orders(board, phase, p, o) if c.normal] for p, o in orders.items()}


def play(rng: random.Random) -> Played:
    out = Played()
    board = random_board(rng, rng.randint(6, 34))
    orders = random_orders(rng, board, "S1901M")
    moved = engine.adjudicate(board, "S1901M", orders, 18)
    _check_movement(board, orders, moved, out)
    try:
        retreats = random_orders(rng, moved.board, moved.next_phase)
        after = engine.adjudicate(moved.board, moved.next_phase, retreats, 18)
        engine.check_orders(after.board, after.next_phase, INFO.powers[0], [])
    except engine.EngineError as err:
        out.findings.append(f"the engine refused a board it produced: {err}")
    return out


def _check_movement(board: Board, orders: dict[str, list[str]], moved: engine.Adjudication, out: Played) -> None:
    results = dict(moved.results)
    after = moved.board
    occupied = {unit_province(u) for _, u in after.units}
    given = {" ".join(o.split()[:2]): o.split() for os in orders.values() for o in os}
    dislodged = {u for _, u, _ in after.dislodged}
    contested = set()
    for unit, words in given.items():
        if len(words) >= 4 and words[2] == "-" and "bounce" in results.get(unit, ()) and unit not in dislodged:
            target = province_of(words[3])
            if target not in occupied:
                contested.add(target)
    near = engine._neighbours()
    for owner, unit, options in after.dislodged:
        out.dislodged += 1
        attacker = after.unit_in(unit_province(unit))
        origin, convoyed = _origin(attacker, given, orders) if attacker else (None, False)
        out.after_convoy += convoyed
        for option in options:
            where = province_of(option)
            if where in occupied:
                out.findings.append(f"{unit} may retreat to occupied {option}")
            if where in contested:
                out.findings.append(f"{unit} may retreat to {option}, where a standoff was")
            if where == origin and not convoyed:
                out.findings.append(f"{unit} may retreat to {option}, where its attacker came from")
    for unit, words in given.items():
        if unit[0] != "A" or len(words) < 4 or words[2] != "-":
            continue
        start, end = unit[2:], words[3]
        if not datc.carried(orders, start, end, near, lambda p: p in SEAS):
            continue
        out.convoys += 1
        if "no convoy" not in results.get(unit, ()):
            continue
        out.disrupted += 1
        fleets = [board.unit_in(unit_province(u)) for u, w in given.items() if w[2:] == ["C", "A", start, "-", end]]
        still = set(after.units)  # (power, unit): another power's fleet may have taken the sea
        at_end = board.unit_in(end)
        paradox = at_end is not None and given.get(at_end[1], ["", "", "H"])[2] in ("S", "C")
        if not paradox and all(f in still for f in fleets):
            out.findings.append(f"the convoy of {unit} - {end} was disrupted, no convoying fleet dislodged "
                                f"({orders})")


def _origin(attacker: tuple[str, str], given: dict[str, list[str]], orders: dict[str, list[str]]
            ) -> tuple[str | None, bool]:
    """Where the unit now standing in a dislodged unit's province came from, and whether it came by convoy
    (ordered via convoy, not adjacent, or convoyed by a fleet of its own power: 2023 rules)."""
    power, unit = attacker
    here = unit_province(unit)
    for mover, words in given.items():
        if len(words) >= 4 and words[2] == "-" and province_of(words[3]) == here and mover[0] == unit[0]:
            start = mover[2:]
            convoy = f"C A {start} - {here}"
            own_fleet = any(o.endswith(convoy) for o in orders.get(power, ()))
            by_land = unit[0] == "F" or bool(engine._map().abuts("A", start, "-", here))
            return province_of(start), unit[0] == "A" and (words[-1] == "VIA" or own_fleet or not by_land)
    return None, False


SEAS = frozenset(p for p in INFO.provinces if engine._map().area_type(p) == "WATER")
