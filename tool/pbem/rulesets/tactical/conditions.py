"""Break conditions of `tactical/1` (DESIGN §4.3, §7.1; seed 000 §6.B–§6.D): the catalog, checked and evaluated.

The protocol handles the generic keys: `{at: TIME}` (never evaluated here) and `by: any` (it passes the
player's own events only then). The catalog, read liberally as seed §6.D asks:

* `{range: N, unit?: ENEMY, mine?: MINE}` — some pair (a unit of the player, an enemy unit) comes to range N
  or less in this step: over N before, at most N after, and one of the two appears in the step's events (so it
  fires once when the range is crossed, not at every impulse spent inside it). Without `unit`/`mine`, any enemy
  and any of the player's units. DESIGN §4.3: a pair already inside that meets (comes into one hex, or swaps
  hexes with the other) meets it again: ships never pass through each other under a standing range condition
  without a break; and a condition written while a pair is already inside is met at the next step it still
  holds (`condition_holds`, armed by the protocol for conditions new in a commit).
* `{turn: {within?: N, unit?: ENEMY}}` — a unit changed facing (TL, TR or HET); with `within`, only if after
  the step it is at most N hexes from one of the player's other units.
* `{speed: {unit?: ENEMY}}` — a unit changed speed (at allocation or by a mid-turn change).
* `{fire: {heavy?: true, unit?: ENEMY}}` — a unit fires or launches a seeking weapon (seed §6.D.4: any direct
  fire, seeking launch or other use of a weapon); with `heavy: true` only weapons of a heavy type (seed §6.C.3).
  Met by the `fire`/`launch` events, which are known when the actions are declared (before dice: seed §7.B).
* `{launch: {unit?: ENEMY}}` — a seeking weapon is launched.
* `{damage: {kind?: shield|internal|shuttle|fighter, unit?: MINE}}` — one of the player's units takes damage
  (seed §6.C.1, §6.C.2): `shield` any shield damage, `internal` any internal damage, `shuttle`/`fighter` any
  damage to a unit of that kind; without `kind` any damage at all.
* `{shield_down: {unit?: UNIT}}` — seed §6.C.4: a unit shows a down shield (strength 0) to an enemy unit able to
  fire on it (a direct-fire weapon with it in arc and range, fired this turn or not), and either is the
  player's; met when such a pair appears in the step and one of the two is in the step's events.
* `{system: {kind?: use|cease|announce|launch|land, name?: SYSTEM, unit?: ENEMY}}` — seed §6.C.5: a unit uses,
  ceases or announces a system (`system:` is accepted for `name:`); `launch`/`land`: a shuttle, fighter or PF
  launched or landed (craft.py; `name` its kind). Tractor bids, transporters and probes are uses declared at the
  fire step (system_steps.py), so they wake the auction. A seeking weapon launch counts as a use of a system
  when no name is given.

"Enemy" is any unit the player does not own; which units' events count is the protocol's filter (`by`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

from pbem.rulesets.base import Event
from pbem.rulesets.tactical import arcs, fire, hexmap
from pbem.rulesets.tactical.actions import quote
from pbem.rulesets.tactical.systems import VERBS
from pbem.rulesets.tactical.gametime import format_time, parse_time
from pbem.rulesets.tactical.state import TacticalState, Unit

MAX_RANGE = 200
DAMAGE_KINDS = ("shield", "internal", "shuttle", "fighter")
_TURNS = {"TL": "turned left", "TR": "turned right", "HET": "made a high energy turn"}

Met = Callable[[Mapping[str, Any], str, TacticalState, TacticalState, Sequence[Event]], "str | None"]


@dataclass(frozen=True)
class ConditionKind:
    """One catalog entry: its allowed top-level keys and sub-keys, and how it is evaluated."""

    name: str
    top_keys: frozenset[str]
    sub_keys: frozenset[str] | None  # None: the value is a number, not a mapping
    met: Met
    check: Callable[[Mapping[str, Any]], "str | None"] = lambda options: None


def _whole(value: Any, what: str, low: int, high: int) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        return f"{what} must be a whole number {low}..{high}, got {value!r}"
    return None


def _unit_name(value: Any, what: str) -> str | None:
    return None if isinstance(value, str) and value else f"{what} must be a unit name, got {value!r}"


def condition_error(condition: Mapping[str, Any]) -> str | None:
    """None if this break condition can be evaluated, else why not (a schema-level error for the player)."""
    if not isinstance(condition, Mapping) or not condition:
        return "a break condition must be a mapping such as {range: 8}"
    if "by" in condition and condition["by"] != "any":
        return f"{quote(condition)}: by must be 'any', got {condition['by']!r}"
    named = [k for k in condition if k in CONDITIONS or k == "at"]
    if len(named) != 1:
        what = "no" if not named else "more than one"
        known = ", ".join(("at", *CONDITIONS))
        return f"{quote(condition)} has {what} break condition among {known}"
    name = named[0]
    if name == "at":
        return _at_error(condition)
    kind = CONDITIONS[name]
    extra = [k for k in condition if k not in kind.top_keys and k not in (name, "by")]
    if extra:
        return f"{quote(condition)}: {', '.join(map(str, extra))} is not part of a {name} condition"
    value = condition[name]
    if kind.sub_keys is None:
        problem = _whole(value, name, 0, MAX_RANGE)
        options: Mapping[str, Any] = condition
    elif not isinstance(value, Mapping):
        return f"{quote(condition)}: {name} takes a mapping such as {{{name}: {{}}}}, got {value!r}"
    else:
        unknown = [k for k in value if k not in kind.sub_keys]
        if unknown:
            return f"{quote(condition)}: {', '.join(map(str, unknown))} is not part of a {name} condition"
        problem, options = None, value
    for key in ("unit", "mine"):
        if problem is None and key in options:
            problem = _unit_name(options[key], key)
    if problem is None and "within" in options:
        problem = _whole(options["within"], "within", 0, MAX_RANGE)
    if problem is None:
        problem = kind.check(options)
    return f"{quote(condition)}: {problem}" if problem else None


def _at_error(condition: Mapping[str, Any]) -> str | None:
    extra = [k for k in condition if k != "at"]
    if extra:  # an explicit break point needs no `by`: it is met whoever acts
        return f"{quote(condition)}: {', '.join(map(str, extra))} is not part of an at condition"
    try:
        parse_time(condition["at"])
    except ValueError as err:
        return str(err)
    return None


def condition_met(
    condition: Mapping[str, Any],
    player: str,
    before: TacticalState,
    after: TacticalState,
    events: Sequence[Event],
) -> str | None:
    """The report text if `player`'s condition is met by the step from `before` to `after`, else None."""
    if condition_error(condition) is not None or "at" in condition:
        return None
    name = next(k for k in condition if k in CONDITIONS)
    return CONDITIONS[name].met(condition, player, before, after, events)


def _when(state: TacticalState, events: Sequence[Event] = ()) -> str:
    """" (T.I.step)": the step of the events when they name it (declared events), else the step just resolved."""
    stated = next((e.data["at"] for e in events if isinstance(e.data.get("at"), str)), None)
    if stated is not None:
        return f" ({stated})"
    return f" ({format_time(state.at)})" if state.at is not None else ""


def _range_pairs(condition: Mapping[str, Any], player: str, state: TacticalState
                 ) -> list[tuple[int, Unit, int, Unit]]:
    """(order, enemy, order, own unit) of every pair a range condition watches."""
    mine = [u for u in state.units if u.owner == player and condition.get("mine", u.id) == u.id]
    enemies = [u for u in state.units if u.owner != player and condition.get("unit", u.id) == u.id]
    return [(order, enemy, own_order, own) for order, enemy in enumerate(enemies)
            for own_order, own in enumerate(mine)]


def _passed_through(own: str, enemy: str, before: TacticalState, after: TacticalState) -> bool:
    """Whether the two units met in this step: came into one hex, or swapped hexes (they crossed each other
    between two hexes: range 0 on the way, DESIGN §4.3)."""
    a0, b0 = before.unit(own), before.unit(enemy)
    a1, b1 = after.unit(own), after.unit(enemy)
    if None in (a0, b0, a1, b1) or None in (a0.hex, b0.hex, a1.hex, b1.hex):  # type: ignore[union-attr]
        return False
    if a1.hex == b1.hex:  # type: ignore[union-attr]
        return a0.hex != b0.hex  # type: ignore[union-attr]
    return a1.hex == b0.hex and b1.hex == a0.hex and a0.hex != b0.hex  # type: ignore[union-attr]


def _range_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    limit = condition["range"]
    involved = {e.unit for e in events if e.unit is not None}
    hits: list[tuple[int, int, int, str]] = []
    for order, enemy, own_order, own in _range_pairs(condition, player, after):
        if enemy.id not in involved and own.id not in involved:
            continue
        now = after.range_between(own.id, enemy.id)
        then = before.range_between(own.id, enemy.id)
        if now is not None and now <= limit and (then is None or then > limit):
            hits.append((now, order, own_order, f"{enemy.id} at range {now} from {own.id}"))
        elif now is not None and then is not None and _passed_through(own.id, enemy.id, before, after):
            # already inside the range, but they meet: ships never pass through each other under a standing
            # range condition without a break (DESIGN §4.3)
            hits.append((now, order, own_order, f"{enemy.id} meets {own.id} (range {then} to {now} through 0)"))
    if not hits:
        return None
    return f"range {limit}: {', '.join(text for *_, text in sorted(hits))}{_when(after)}"


def _range_holds(condition: Mapping[str, Any], player: str, state: TacticalState) -> str | None:
    limit = condition["range"]
    hits = sorted((now, order, own_order, f"{enemy.id} at range {now} from {own.id}")
                  for order, enemy, own_order, own in _range_pairs(condition, player, state)
                  if (now := state.range_between(own.id, enemy.id)) is not None and now <= limit)
    return f"range {limit}: {', '.join(text for *_, text in hits)}{_when(state)}" if hits else None


def condition_holds(condition: Mapping[str, Any], player: str, state: TacticalState) -> str | None:
    """The report text if the situation a condition watches for already holds in `state` (a range condition
    with a pair at range N or less), else None; conditions met by events only (fire, turn, …) never hold.
    DESIGN §4.3: a condition that already holds when it is written is met at the next step it still holds."""
    if condition_error(condition) is not None or "range" not in condition:
        return None
    return _range_holds(condition, player, state)


def _nearest_of(state: TacticalState, unit: Unit, player: str) -> tuple[int, str] | None:
    """(range, id) of `player`'s nearest other unit on the map to `unit`, or None."""
    ranges = [
        (r, u.id)
        for u in state.units
        if u.owner == player and u.id != unit.id and (r := state.range_between(unit.id, u.id)) is not None
    ]
    return min(ranges) if ranges else None


def _turn_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    options = condition["turn"]
    within = options.get("within")
    hits: list[str] = []
    for event in events:
        if event.kind != "turned" or options.get("unit", event.unit) != event.unit:
            continue
        unit = after.unit(event.unit)
        if unit is None:
            continue
        how = _TURNS.get(str(event.data.get("how")), "turned")
        text = f"{unit.id} {how} {event.data.get('from_facing')} to {event.data.get('to_facing')}"
        if within is not None:
            nearest = _nearest_of(after, unit, player)
            if nearest is None or nearest[0] > within:
                continue
            text += f" at range {nearest[0]} from {nearest[1]}"
        hits.append(text)
    if not hits:
        return None
    label = "turn" if within is None else f"turn within {within}"
    return f"{label}: {', '.join(hits)}{_when(after)}"


def _speed_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    options = condition["speed"]
    hits = [
        f"{e.unit} changed speed from {e.data.get('old')} to {e.data.get('new')}"
        for e in events
        if e.kind == "speed" and options.get("unit", e.unit) == e.unit
    ]
    return f"speed: {', '.join(hits)}{_when(after)}" if hits else None


def _check_fire(options: Mapping[str, Any]) -> str | None:
    heavy = options.get("heavy", False)
    return None if isinstance(heavy, bool) else f"heavy must be true or false, got {heavy!r}"


def _check_damage(options: Mapping[str, Any]) -> str | None:
    kind = options.get("kind", "shield")
    return None if kind in DAMAGE_KINDS else f"kind must be one of {', '.join(DAMAGE_KINDS)}, got {kind!r}"


def _check_system(options: Mapping[str, Any]) -> str | None:
    if "name" in options and "system" in options:
        return "give the system once, as name"
    kind = options.get("kind", "use")
    if kind not in (*VERBS, *CRAFT_VERBS):
        return f"kind must be one of {', '.join((*VERBS, *CRAFT_VERBS))}, got {kind!r}"
    name = options.get("name", options.get("system", "x"))
    return None if isinstance(name, str) and name else f"name must be a system name, got {name!r}"


def _fire_text(event: Event) -> str:
    if event.kind == "launch":
        return f"{event.unit} launches {event.data.get('weapon')} as {event.data.get('as')}"
    return (f"{event.unit} fires {event.data.get('weapon')} at {event.data.get('target')}"
            f" (range {event.data.get('range')})")


def _fire_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    options = condition["fire"]
    heavy = options.get("heavy") is True
    hits = [e for e in events
            if e.kind in ("fire", "launch") and options.get("unit", e.unit) == e.unit
            and (not heavy or e.data.get("heavy") is True)]
    if not hits:
        return None
    label = "heavy fire" if heavy else "fire"
    return f"{label}: {', '.join(_fire_text(e) for e in hits)}{_when(after, hits)}"


def _launch_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    options = condition["launch"]
    hits = [e for e in events if e.kind == "launch" and options.get("unit", e.unit) == e.unit]
    return f"launch: {', '.join(_fire_text(e) for e in hits)}{_when(after, hits)}" if hits else None


def _damage_matches(kind: str | None, event: Event, unit: Unit) -> bool:
    on_shield, internal = event.data.get("shield_damage", 0), event.data.get("internal", 0)
    if kind == "shield":
        return bool(on_shield > 0)
    if kind == "internal":
        return bool(internal > 0)
    if kind is not None:
        return unit.kind == kind and on_shield + internal > 0
    return bool(on_shield + internal > 0)


def _damage_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    options = condition["damage"]
    hits: list[str] = []
    for event in events:
        unit = after.unit(event.unit)
        if event.kind != "damage" or unit is None or unit.owner != player:
            continue
        if options.get("unit", unit.id) != unit.id or not _damage_matches(options.get("kind"), event, unit):
            continue
        source = f" from {event.data['attacker']}" if "attacker" in event.data else ""
        weapon = f"'s {event.data['weapon']}" if source and "weapon" in event.data else ""
        hits.append(f"{unit.id} took {event.data.get('shield_damage', 0)} on shield #{event.data.get('shield')} and "
                    f"{event.data.get('internal', 0)} internal{source}{weapon}")
    label = f"damage ({options['kind']})" if "kind" in options else "damage"
    return f"{label}: {', '.join(hits)}{_when(after)}" if hits else None


def _can_fire_on(state: TacticalState, attacker: Unit, ship: Unit) -> bool:
    if attacker.hex is None or ship.hex is None:
        return False
    distance = hexmap.distance(attacker.hex, ship.hex)
    for mount in attacker.weapons:
        kind = state.weapon_type(mount)
        if kind.seeking or distance > kind.max_range or kind.bracket_of(distance) is None:
            continue
        if arcs.in_arc(attacker.hex, attacker.facing, ship.hex, mount.arcs):
            return True
    return False


def _exposures(state: TacticalState, player: str, only: str | None) -> dict[tuple[str, str], int]:
    """(ship, attacker) -> the ship's down shield facing an attacker able to fire on it, where one is `player`'s."""
    found: dict[tuple[str, str], int] = {}
    for ship in state.units:
        if not ship.active or not ship.shields:
            continue
        for attacker in state.units:
            if not attacker.active or attacker.owner == ship.owner or player not in (ship.owner, attacker.owner):
                continue
            if only is not None and only not in (ship.id, attacker.id):
                continue
            shield = fire.shield_hit(ship, fire.attacker_hex(attacker, ship), ship.shields)
            if ship.shields[shield - 1] == 0 and _can_fire_on(state, attacker, ship):
                found[(ship.id, attacker.id)] = shield
    return found


def _shield_down_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    only = condition["shield_down"].get("unit")
    involved = {e.unit for e in events if e.unit is not None}
    then = _exposures(before, player, only)
    hits = [f"{ship} shows down shield #{shield} to {attacker}"
            for (ship, attacker), shield in _exposures(after, player, only).items()
            if (ship, attacker) not in then and (ship in involved or attacker in involved)]
    return f"shield_down: {', '.join(hits)}{_when(after)}" if hits else None


def _system_met(
    condition: Mapping[str, Any], player: str, before: TacticalState, after: TacticalState, events: Sequence[Event]
) -> str | None:
    options = condition["system"]
    name, kind = options.get("name", options.get("system")), options.get("kind")
    hits: list[Event] = []
    for event in events:
        if options.get("unit", event.unit) != event.unit:
            continue
        if event.kind == "system" and kind in (None, event.data.get("kind")) and name in (None,
                                                                                           event.data.get("system")):
            hits.append(event)
        elif event.kind == "launch" and name is None and kind in (None, "use"):
            hits.append(event)
    if not hits:
        return None
    texts = [_fire_text(e) if e.kind == "launch" else
             f"{e.unit} {_SYSTEM_VERBS[e.data.get('kind', 'use')]} {e.data.get('system')}"
             + (f" on {e.data['target']}" if "target" in e.data else "") for e in hits]
    return f"system: {', '.join(texts)}{_when(after, hits)}"


_SYSTEM_VERBS = {"use": "uses", "cease": "ceases", "announce": "announces", "launch": "launches", "land": "lands"}

CONDITIONS: dict[str, ConditionKind] = {
    "range": ConditionKind("range", frozenset({"unit", "mine"}), None, _range_met),
    "turn": ConditionKind("turn", frozenset(), frozenset({"within", "unit"}), _turn_met),
    "speed": ConditionKind("speed", frozenset(), frozenset({"unit"}), _speed_met),
    "fire": ConditionKind("fire", frozenset(), frozenset({"heavy", "unit"}), _fire_met, _check_fire),
    "launch": ConditionKind("launch", frozenset(), frozenset({"unit"}), _launch_met),
    "damage": ConditionKind("damage", frozenset(), frozenset({"kind", "unit"}), _damage_met, _check_damage),
    "shield_down": ConditionKind("shield_down", frozenset(), frozenset({"unit"}), _shield_down_met),
    "system": ConditionKind("system", frozenset(), frozenset({"kind", "name", "system", "unit"}), _system_met,
                            _check_system),
}
CRAFT_VERBS = ("launch", "land")  # a shuttle, fighter or PF launched or landed (craft.py), seed §6.C.5
