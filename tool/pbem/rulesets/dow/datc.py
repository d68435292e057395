"""Corrections of the `diplomacy` engine's results to the DATC v3.0 preferred rulings (2023 rulebook).

The engine (diplomacy 1.1.2) departs from DATC v3.0 in three places; engine.py calls these functions, and only
when their situation applies (a support naming a coast, a move "via convoy" to a neighbouring province, a
power short of disbands), so an ordinary phase costs nothing more. This module is pure: it never imports the
engine; what it needs of the map (adjacency, names) is passed in.

* 6.B.9 (issue 4.B.4): a coast given in a support must match the coast the supported fleet moves to; the
  engine drops the coast and lets the support count for either coast (`keep_support_coast`,
  `void_unmatched_coast_supports`).
* 6.G.8 (issue 4.A.3): an army ordered "via convoy" with no fleet to carry it does not fall back to the land
  route (`no_land_fallback`).
* 6.J.3-6.J.11 (issue 4.D.8): a power that orders too few disbands loses the units farthest from its owned
  supply centres, counted over land and sea for armies and fleets alike; fleets before armies at equal
  distance, then by province name (`civil_disorder_disbands`); the engine counts to home centres by the
  unit's own moves.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Callable, Iterable, Mapping, Sequence

_SUPPORT_MOVE = re.compile(r"^([AF] [A-Z]{3}(?:/[NESW]C)?) S ([AF]) ([A-Z]{3}(?:/[NESW]C)?) - ([A-Z]{3})(/[NESW]C)?$")
_GIVEN_SUPPORT = re.compile(r"\bS\s+(?:F\s+)?[A-Z]{3}(?:/[NESW]C)?\s*-\s*([A-Z]{3})\s*/\s*([NESW]C)\b")


def keep_support_coast(given: str, normal: str, reaches: Callable[[str, str], bool]
                       ) -> tuple[str | None, str | None, bool]:
    """DATC 6.B.9 (and 6.A.10): a support naming a coast, as (normal form, reason, rewritten).

    (the normal form keeping the coast the player gave, None, False) when the supported fleet can move there;
    (None, why, False) when it cannot and the engine keeps the coast (an impossible support, void like any
    order the engine refuses); (None, why, True) when the engine would read the support for another coast than
    the one given: the order changes meaning and is refused (`rules.order-rewritten`). `given` is the order as
    written, `normal` the engine's form (it drops or changes the coast of a fleet's support), `reaches(fleet
    location, "SPA/NC")` whether the supported fleet can move to that coast."""
    found = _SUPPORT_MOVE.match(normal)
    if found is None or found.group(2) != "F":
        return normal, None, False
    asked = _GIVEN_SUPPORT.search(re.sub(r"\s+", " ", given.upper()))
    if asked is None or asked.group(1) != found.group(4):
        return normal, None, False
    coast = f"{asked.group(1)}/{asked.group(2)}"
    engine_coast = found.group(4) + (found.group(5) or "")
    if not reaches(found.group(3), coast):
        if engine_coast == coast:
            return None, f"the fleet in {found.group(3)} cannot move to {coast}", False
        return None, (f"the engine would read it as {normal!r}: the fleet in {found.group(3)} cannot move to "
                      f"{coast}, and the support would count for another coast"), True
    if engine_coast == coast:
        return normal, None, False
    if engine_coast != found.group(4):
        return None, f"the engine would read it as {normal!r}, a support for another coast", True
    return f"{found.group(1)} S F {found.group(3)} - {coast}", None, False


def strip_support_coast(order: str) -> str:
    """The support as the engine takes it: "F POR S F MAO - SPA/NC" -> "F POR S F MAO - SPA"."""
    found = _SUPPORT_MOVE.match(order)
    if found is None or found.group(5) is None:
        return order
    return order[: -len(found.group(5))]


def has_support_coast(order: str) -> bool:
    found = _SUPPORT_MOVE.match(order)
    return found is not None and found.group(5) is not None


def void_unmatched_coast_supports(orders: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """DATC 6.B.9 (4.B.4, 2023 rules: "coast specification in support order is possible and must match"): a
    support naming a coast the supported fleet does not move to is void (the supporter holds); the others are
    handed to the engine without their coast."""
    moves = {}
    for given in orders.values():
        for order in given:
            words = order.split()
            if len(words) == 4 and words[2] == "-":
                moves[words[1][:3]] = words[3]
    out: dict[str, list[str]] = {}
    for power, given in orders.items():
        out[power] = []
        for order in given:
            found = _SUPPORT_MOVE.match(order)
            if found is not None and found.group(5) is not None:
                moved = moves.get(found.group(3)[:3])
                if moved is not None and moved[:3] == found.group(4) and moved != found.group(4) + found.group(5):
                    out[power].append(f"{found.group(1)} H")
                    continue
                order = strip_support_coast(order)
            out[power].append(order)
    return out


def no_land_fallback(orders: Mapping[str, Sequence[str]], carried: Callable[[str, str], bool]
                     ) -> dict[str, list[str]] | None:
    """DATC 6.G.8 (4.A.3, preference changed in v3.0: no fallback): an army ordered "A X - Y VIA" that no
    convoy order can carry stays in X as a failed move: its order becomes a hold, and hold supports given to
    it (a moving unit receives none, 6.D.8) and supports of its move become holds too. None when no order
    needs it; `carried(start, end)` says whether the convoy orders given make a route."""
    stranded = []
    for given in orders.values():
        for order in given:
            words = order.split()
            if len(words) == 5 and words[0] == "A" and words[2] == "-" and words[4] == "VIA":
                if not carried(words[1], words[3]):
                    stranded.append(f"A {words[1]}")
    if not stranded:
        return None
    out: dict[str, list[str]] = {}
    for power, given in orders.items():
        out[power] = []
        for order in given:
            words = order.split()
            if " ".join(words[:2]) in stranded:
                out[power].append(f"{' '.join(words[:2])} H")
            elif len(words) >= 5 and words[2] == "S" and " ".join(words[3:5]) in stranded:
                out[power].append(f"{' '.join(words[:2])} H")
            else:
                out[power].append(order)
    return out


def carried(orders: Mapping[str, Sequence[str]], start: str, end: str, near: Mapping[str, Iterable[str]],
            at_sea: Callable[[str], bool]) -> bool:
    """Whether the convoy orders given make a route of fleets at sea for an army from `start` to `end`
    (`near`: the neighbours of each province; `at_sea(province)`: a sea province)."""
    wanted = f"C A {start} - {end}"
    seas = {o.split()[1] for given in orders.values() for o in given
            if o.startswith("F ") and o.endswith(wanted) and at_sea(o.split()[1])}
    reached = [s for s in seas if start in near.get(s, ())]
    seen = set(reached)
    while reached:
        here = reached.pop()
        if end in near.get(here, ()):
            return True
        for there in near.get(here, ()):
            if there in seas and there not in seen:
                seen.add(there)
                reached.append(there)
    return False


def civil_disorder_disbands(units: Sequence[str], owned: Iterable[str], count: int,
                            neighbours: Mapping[str, Iterable[str]], name: Callable[[str], str]) -> list[str]:
    """DATC 6.J.3-6.J.11 (4.D.8, 2023 rules): the `count` units to remove from `units` ("A PRU", "F STP/NC"):
    the farthest from any owned supply centre first, distance counted province to province over land and sea
    for both armies and fleets; at equal distance fleets before armies, then by province name."""
    distance: dict[str, int] = {c: 0 for c in owned}
    queue = deque(distance)
    while queue:
        here = queue.popleft()
        for there in neighbours.get(here, ()):
            if there not in distance:
                distance[there] = distance[here] + 1
                queue.append(there)
    far = 10 ** 6  # a power owning no centre: only the tie-breaks order its units
    ranked = sorted(units, key=lambda u: (-distance.get(u[2:5], far), u[0] != "F", name(u[2:5])))
    return ranked[:count]
