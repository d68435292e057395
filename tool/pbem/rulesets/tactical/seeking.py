"""Seeking weapons of `tactical/1` (DESIGN §7.1; seed 000 §2.C): launch, contact and impact.

`{launch: {weapon: dr1, as: S1}}` at an `activity` step launches a seeking-type weapon (once a turn, like a
shot): a new unit S1, owned by the launcher's owner, appears in the launcher's hex with its facing, moving at
the type's `speed` with the type's `turn_mode`. Its target is not known to the ruleset: the protocol keeps it
sealed (secret kind `target`, `concerns` naming the new unit), sealed by the weapon's owner in the very commit
that launches it, one per weapon, and looked up by (owner, weapon) (`launched_name` tells the protocol which
entries launch). Its owner moves it like any unit (entries, or a `pursue` plan; by default it goes straight on); it
cannot change speed, make an HET, fire or launch.

Contact: after a move step, a seeking weapon on the map sharing its hex with enemy units (ships, shuttles,
fighters: not other seeking weapons) gives a `seeking_contact` event {unit, candidates} if it or one of them
moved into that hex in the step. The protocol then has its owner reveal the target and, if the target is one
of the candidates still in that hex, calls `impact`: the warhead hits the target's shield facing the hex the
seeking weapon came from (fire.attacker_hex), then the seeking weapon is expended (off the map, kept on record).

Nature (seed §2.C): the sealed target also says whether the weapon is `real` (the default) or a `dummy`; nobody
else learns which until the owner reveals it at contact. A dummy then does no damage and vanishes (`vanish`:
status `dummy`, off the map, event `dummy`); it cannot be re-declared real, since the sealed plaintext is fixed by
its commitment at launch.

Choices where the design is silent: contact is checked after move steps only (a weapon launched into an enemy's
hex meets it after its next move); two launches with the same `as` at one step: the first in setup order
counts, the other is ignored; a seeking weapon can be fired at like any enemy unit (without shields or hull, any
internal damage destroys it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import Event, Point, Refusal
from pbem.rulesets.tactical import damage, fire, hexmap, weapons
from pbem.rulesets.tactical.gametime import format_time
from pbem.rulesets.tactical.state import DUMMY, EXPENDED, TacticalState, Unit
from pbem.rulesets.tactical.weapons import Mount, Seeker, WeaponType

TARGET_KIND = "target"  # the secret kind of a seeking weapon's target (schemas/secret-target.json)
REAL, DUMMY_NATURE = "real", "dummy"  # a target's `nature`
ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


@dataclass(frozen=True)
class Launch:
    """One legal launch of an activity step."""

    unit: Unit
    mount: Mount
    type: WeaponType
    name: str


def _unit_id(value: Any) -> bool:
    return (isinstance(value, str) and 1 <= len(value) <= 16 and value[0].isascii() and value[0].isalnum()
            and set(value) <= ID_CHARS)


def launched_name(do: Mapping[str, Any]) -> str | None:
    """The new unit's name of a launch action `{launch: {weapon, as}}`, else None (as written, even if illegal)."""
    value = do.get("launch") if type(do) is dict or isinstance(do, Mapping) else None  # dict: fast, at every entry
    name = value.get("as") if isinstance(value, Mapping) else None
    return name if isinstance(name, str) else None


def why_not_launch(state: TacticalState, unit: Unit, value: Any, at: Point) -> str | None:
    """None if `unit` may launch as `value` ({weapon, as}) at activity step `at`, else why not."""
    if not isinstance(value, Mapping) or set(value) != {"weapon", "as"}:
        return "launch takes {weapon: WEAPON, as: NEW_UNIT}"
    weapon, name = value["weapon"], value["as"]
    mount = unit.mount(weapon) if isinstance(weapon, str) else None
    if mount is None:
        carried = ", ".join(m.id for m in unit.weapons) or "none"
        return f"{unit.id} has no weapon {weapon!r} (it carries {carried})"
    if not state.weapon_type(mount).seeking:
        return f"{weapon} is a direct-fire weapon: fire it at a fire step"
    broken = damage.why_cannot_fire(unit, weapon)
    if broken:
        return Refusal(broken, damage.OUT_OF_ACTION)
    not_ready = weapons.why_not_ready(unit, mount, state.weapon_type(mount), at)
    if not_ready is not None:
        why = not_ready[1].replace(" fired ", " launched ")
        return Refusal(why, not_ready[0]) if not_ready[0] else why
    if not _unit_id(name):
        return f"as must be a new unit name (letters, digits, _ or -, up to 16), got {name!r}"
    if state.unit(name) is not None:
        return f"{name} is already the name of a unit"
    return None


def launches(state: TacticalState, chosen: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[Launch]:
    """The step's launches in setup order from the chosen legal actions ((unit, weapon) -> {weapon, as})."""
    found: list[Launch] = []
    names: set[str] = set()
    for unit in state.units:
        for mount in unit.weapons:
            value = chosen.get((unit.id, mount.id))
            if value is None or value["as"] in names:
                continue
            names.add(value["as"])
            found.append(Launch(unit, mount, state.weapon_type(mount), value["as"]))
    return found


def launch_event(launch: Launch, point: Point) -> Event:
    """The `launch` event: known as soon as it is declared."""
    data = {"weapon": launch.mount.id, "as": launch.name, "type": launch.type.name, "heavy": launch.type.heavy,
            "at": format_time(point)}
    return Event("launch", launch.unit.owner, launch.unit.id, data)


def launch(launch: Launch, launcher: Unit, point: Point) -> tuple[Unit, Unit]:
    """(the launcher with the weapon marked as used, the new seeking unit) for one launch at `point`."""
    kind = launch.type
    flying = Unit(
        id=launch.name,
        owner=launcher.owner,
        hex=launcher.hex,
        facing=launcher.facing,
        speed=kind.speed,
        turn_mode=kind.turn_mode,
        since_turn=kind.turn_mode,
        since_slip=1,
        kind="seeking",
        setup_speed=kind.speed,
        seeking=Seeker(kind.name, launcher.id, launch.mount.id, kind.warhead, point),
    )
    return evolve(launcher, fired=(*launcher.fired, (point, launch.mount.id))), flying


def _candidates(state: TacticalState, unit: Unit) -> list[Unit]:
    return [u for u in state.units
            if u.active and u.owner != unit.owner and u.seeking is None and u.hex == unit.hex]


def contacts(before: TacticalState, after: TacticalState) -> list[Event]:
    """`seeking_contact` events after a move step (see the module docstring)."""
    found: list[Event] = []
    for unit in after.units:
        if unit.seeking is None or not unit.active:
            continue
        here = _candidates(after, unit)
        if not here:
            continue
        arrived = [u for u in (unit, *here) if (old := before.unit(u.id)) is None or old.hex != u.hex]
        if arrived:
            found.append(Event("seeking_contact", unit.owner, unit.id,
                               {"unit": unit.id, "candidates": [u.id for u in here],
                                "hex": hexmap.format_hex(unit.hex) if unit.hex else None}))
    return found


def impact(state: TacticalState, seeking_unit: str, target: str) -> tuple[TacticalState, list[Event]]:
    """The seeking weapon `seeking_unit` hits its revealed `target` in its hex: warhead damage on the shield
    facing where it came from, then it is expended. ValueError when that is no possible impact (a protocol bug)."""
    flying, hit = state.unit(seeking_unit), state.unit(target)
    if flying is None or flying.seeking is None or not flying.active:
        raise ValueError(f"{seeking_unit!r} is no seeking weapon on the map")
    if hit is None or hit.id not in {u.id for u in _candidates(state, flying)}:
        raise ValueError(f"{target!r} is no enemy unit in {seeking_unit}'s hex")
    warhead = flying.seeking.warhead
    shield = fire.shield_hit(hit, fire.attacker_hex(flying, hit), hit.shields)
    deferred = damage.table_of(state.tables) is not None  # internals wait for the damage step (damage.py)
    damaged, on_shield, internal = fire.strike(hit, shield, warhead, flying.owner if deferred else None)
    where = hexmap.format_hex(hit.hex) if hit.hex else None
    events = [
        Event("impact", flying.owner, flying.id, {"target": hit.id, "warhead": warhead, "type": flying.seeking.type,
                                                  "hex": where}),
        fire.damage_event(flying.owner, damaged, shield, on_shield, internal, weapon=flying.seeking.weapon,
                          attacker=flying.id),
    ]
    if internal > 0 and damaged.hull == 0 and not deferred:
        damaged, destroyed = fire.destroy(damaged, state.at, flying.owner)
        events.append(destroyed)
    spent = evolve(flying, status=EXPENDED, hex=None, left_at=state.at)
    return state.with_units({spent.id: spent, damaged.id: damaged}, state.at), events



def vanish(state: TacticalState, seeking_unit: str) -> tuple[TacticalState, list[Event]]:
    """The seeking weapon `seeking_unit`, revealed as a dummy, vanishes without doing anything: off the map, status
    `dummy`, event `dummy` {type, hex}. ValueError when it is no seeking weapon on the map (a protocol bug)."""
    flying = state.unit(seeking_unit)
    if flying is None or flying.seeking is None or not flying.active:
        raise ValueError(f"{seeking_unit!r} is no seeking weapon on the map")
    where = hexmap.format_hex(flying.hex) if flying.hex else None
    gone = evolve(flying, status=DUMMY, hex=None, left_at=state.at)
    event = Event("dummy", flying.owner, flying.id, {"type": flying.seeking.type, "launcher": flying.seeking.launcher,
                                                     "hex": where})
    return state.with_units({gone.id: gone}, state.at), [event]
