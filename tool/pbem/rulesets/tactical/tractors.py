"""Tractor beams of `tactical/1` (seed 000 §6.C.5, §7: "an action auction (which is similar to a tractor energy
auction)"; docs/tactical.md "Tractor beams").

`{tractor: {target: D7, energy: N}}` at a `fire` step, by a unit with a working `tractor` within
setup.tractor.range of an enemy unit on the map: a bid of N energy (a whole number ≥ 1) to hold it. Bids are
declared, so the fire step's action auction runs them (a `system` event {kind: use, system: tractor, target,
energy}): the target's owner, woken by a `{system: {name: tractor}}` break condition, bids back at the same step
with `{tractor: {target: CA, energy: M}}` (his own tractor against the beam), the first may raise with a higher
bid, and so on until one passes. When the step resolves, each unit's highest bid counts and is spent, won or lost
(N uses of the tractor on record: costs.tractor per point):

* the attacker's bid above the target's: the target is held (`holding` / `held_by`);
* otherwise the beam fails ("resisted");
* in a standing beam, the held unit breaks free when its bid is above its holder's bid (to keep it) at that
  step.

Held: the held unit's own moves count for nothing; whenever its holder moves, it is moved one hex the same way
(keeping its facing), so the pair moves together. The hold ends with `{cease: tractor}` by the holder at an
activity step, when the held unit breaks free, when either leaves the map, or when the dragged unit would leave
it (it is let go). Every turn a hold is carried into costs one more use of the tractor (at T.0.alloc).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point
from pbem.rulesets.tactical import acting, hexmap
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.gear import table
from pbem.rulesets.tactical.state import TacticalState, Unit

VERB = "tractor"
SYSTEM = "tractor"
Bids = dict[tuple[str, str], int]  # (bidder, target) -> its highest bid of the step


def why_not(state: TacticalState, unit: Unit, value: Any, at: Point, own: bool = False) -> str | None:
    """None if `unit` may bid as `value` ({target, energy}) at fire step `at`, else why not. `own`: only what its
    owner alone can know (the target's place may change through others' later moves)."""
    given = acting.value_of({VERB: value}, VERB, {"target", "energy"})
    if given is None:
        return "tractor takes {target: UNIT, energy: N}"
    energy = given["energy"]
    if type(energy) is not int or energy < 1:
        return f"energy must be a whole number of at least 1, got {energy!r}"
    why = acting.why_not_working(unit, SYSTEM) or acting.why_not_act(state, unit, at)
    if why:
        return why
    if unit.gear.holding not in (None, given["target"]):  # a bid on the unit it holds is one to keep it
        return f"{unit.id} already holds {unit.gear.holding} in its tractor beam (cease it first)"
    already = _bid_so_far(unit, at)
    why = acting.why_no_energy(state, unit, at, (energy - already) * acting.cost(state, SYSTEM),
                               f"a tractor bid of {energy}")
    if why or own:
        return why
    target, why = acting.enemy_within(state, unit, given["target"], int(table(state.tables, "tractor")["range"]),
                                      "tractor")
    return why or (acting.hidden(state, unit, target, at) if target is not None else None)


def _bid_so_far(unit: Unit, at: Point) -> int:
    return sum(1 for p, verb, name in unit.used if p == at and verb == "use" and name == SYSTEM)


def spend(unit: Unit, value: Mapping[str, Any], at: Point) -> Unit:
    """The bidder with its raise on record, for judging the rest of the step (a bid is a total, not a step)."""
    return acting.pay(unit, at, SYSTEM, int(value["energy"]) - _bid_so_far(unit, at))


def bids(picked: Mapping[tuple[str, tuple[str, ...]], Mapping[str, Any]]) -> Bids:
    """Each (bidder, target)'s highest legal bid of the step."""
    out: Bids = {}
    for (unit, slot), do in picked.items():
        if slot[0] == VERB:
            key = (unit, str(do[VERB]["target"]))
            out[key] = max(out.get(key, 0), int(do[VERB]["energy"]))
    return out


def slot(do: Mapping[str, Any]) -> tuple[str, ...]:
    """A raise is a new bid: one slot per bidder, target and amount."""
    value = do[VERB]
    return (VERB, str(value.get("target")), str(value.get("energy"))) if isinstance(value, Mapping) else (VERB,)


def declared(state: TacticalState, point: Point, found: Bids) -> list[Event]:
    """The `system` events of the step's bids, known when declared (they run the auction)."""
    return [Event("system", state.unit(bidder).owner, bidder,  # type: ignore[union-attr]
                  {"kind": "use", "system": SYSTEM, "target": target, "energy": energy, "at": format_time(point)})
            for (bidder, target), energy in sorted(found.items(), key=lambda kv: _order(state, kv[0][0]))]


def _order(state: TacticalState, unit_id: str) -> int:
    return next(i for i, u in enumerate(state.units) if u.id == unit_id)


def resolve(before: TacticalState, units: dict[str, Unit], point: Point, found: Bids
            ) -> tuple[list[Event], list[str]]:
    """Settle the step's bids on `units` (changed in place): who holds whom; the events and the log lines."""
    events: list[Event] = []
    lines: list[str] = []
    for (bidder, target), energy in sorted(found.items(), key=lambda kv: _order(before, kv[0][0])):
        units[bidder] = acting.pay(units[bidder], point, SYSTEM, energy)
    settled: set[frozenset[str]] = set()
    for (bidder, target), energy in sorted(found.items(), key=lambda kv: _order(before, kv[0][0])):
        pair = frozenset((bidder, target))
        if pair in settled:
            continue
        settled.add(pair)
        against = found.get((target, bidder), 0)
        text = f"bids {bidder} {energy}, {target} {against}"
        holds = {u: before.unit(u).gear.holding for u in (bidder, target)}  # type: ignore[union-attr]
        holder = next((u for u, other in holds.items() if other is not None and other in pair - {u}), None)
        if holder is not None:  # a struggle in a standing beam: the held side breaks free with the higher bid
            held = target if holder == bidder else bidder
            keeps, pulls = found.get((holder, held), 0), found.get((held, holder), 0)
            result = "broke free" if pulls > keeps else "still held"
            if pulls > keeps:
                units[bidder], units[target] = release(units[bidder], units[target])
        elif units[target].gear.held_by is not None:
            result = f"already held by {units[target].gear.held_by}"  # one beam holds a unit (setup order first)
        elif energy > against:
            result = "held"
            units[bidder], units[target] = _hold(units[bidder], units[target])
        else:
            result = "resisted"
        events.append(Event("tractor", units[bidder].owner, bidder, {"target": target, "energy": energy,
                                                                       "against": against, "result": result}))
        lines.append(f"{format_time(point)} {bidder} tractor on {target}: {text}: {result}")
    return events, lines


def _hold(holder: Unit, held: Unit) -> tuple[Unit, Unit]:
    return (evolve(holder, gear=evolve(holder.gear, holding=held.id)),
            evolve(held, gear=evolve(held.gear, held_by=holder.id)))


def release(one: Unit, other: Unit) -> tuple[Unit, Unit]:
    """Both units out of the beam between them (whichever held the other)."""
    def free(unit: Unit) -> Unit:
        gear = unit.gear
        return evolve(unit, gear=evolve(gear, holding=None if gear.holding in (one.id, other.id) else gear.holding,
                                          held_by=None if gear.held_by in (one.id, other.id) else gear.held_by))
    return free(one), free(other)


def held_moves(unit: Unit) -> bool:
    """Whether a unit's own move counts: not while it is held."""
    return unit.gear.held_by is None


def drag(state: TacticalState, before: TacticalState, changed: dict[str, Unit], point: Point
         ) -> tuple[list[Event], list[str]]:
    """After a move step (`before` it, `state` after it): each held unit follows its holder's move one hex the
    same way; a holder or held unit gone from the map, or a drag off the map, ends the hold. `changed` is updated
    in place."""
    events: list[Event] = []
    lines: list[str] = []
    for old in before.units:
        if old.gear.holding is None:
            continue
        holder = changed.get(old.id, state.unit(old.id))
        held = changed.get(old.gear.holding, state.unit(old.gear.holding))
        if holder is None or held is None:
            continue
        if not holder.active or not held.active:
            changed[holder.id], changed[held.id] = release(holder, held)
            lines.append(f"{format_time(point)} {holder.id} lets go of {held.id}: one of them left the map")
            continue
        if holder.hex == old.hex or old.hex is None or holder.hex is None or held.hex is None:
            continue
        way = next((f for f in range(6) if hexmap.neighbour(old.hex, f) == holder.hex), None)
        if way is None:
            continue
        to = hexmap.neighbour(held.hex, way)
        if not hexmap.on_map(to, state.columns, state.rows):
            changed[holder.id], changed[held.id] = release(holder, held)
            lines.append(f"{format_time(point)} {holder.id} lets go of {held.id} at the map's edge")
            continue
        events.append(Event("moved", held.owner, held.id, {"from": hexmap.format_hex(held.hex),
                                                            "to": hexmap.format_hex(to), "how": "tractor",
                                                            "facing_before": hexmap.format_facing(held.facing),
                                                            "facing": hexmap.format_facing(held.facing)}))
        changed[held.id] = evolve(held, hex=to, came_from=held.hex)
    return events, lines


def upkeep(state: TacticalState, point: Point) -> dict[str, Unit]:
    """At a turn's allocation step, each hold carried into the turn costs its holder one use of the tractor."""
    return {u.id: acting.pay(u, point, SYSTEM) for u in state.units if u.gear.holding is not None and u.active}


