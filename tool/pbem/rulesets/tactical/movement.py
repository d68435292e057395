"""Movement of `tactical/1` (DESIGN §7.1): the impulse chart, turn mode, sideslips and HETs.

* Chart: a unit at speed s moves in impulse i iff floor(i·s/32) > floor((i−1)·s/32), so exactly s times in a
  turn, spread evenly. The speed that counts is the one in force at that impulse's move step.
* F moves one hex ahead. TL/TR turn one facing left/right and then move one hex ahead in the new facing; allowed
  once the unit has moved `turn_mode` hexes since its last turn. The turning move does not count towards the
  next turn; F moves and slips do.
* SL/SR (sideslip) move one hex in the direction facing−1 / facing+1 (forward-left / forward-right) and keep
  the facing; allowed after at least one hex moved since the last slip. F moves and turns count; the slip
  itself does not.
* HET (at activity): any new facing, once per game turn, and the turn-mode count starts again from 0.
* Speed changes (actions.py) may change the speed in force by at most setup `acceleration` (no limit without it);
  an emergency deceleration stops the unit past that limit.

Choices where the design is silent (SFB practice): the counters carry over from one turn to the next; at the
start of the game both are satisfied; an HET does not change the slip count; a move whose destination is off
the map takes the unit off the map (it disengages); units move simultaneously, so stacking is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pbem.formats.records import evolve
from pbem.rulesets.base import Point
from pbem.rulesets.tactical import hexmap
from pbem.rulesets.tactical.state import DISENGAGED, TacticalState, Unit

IMPULSES = 32
ACCELERATION = "rules.acceleration"

MOVES: dict[str, str] = {
    "F": "move forward",
    "TL": "turn left",
    "TR": "turn right",
    "SL": "slip left",
    "SR": "slip right",
}


def moves_in(speed: int, impulse: int) -> bool:
    """Whether a unit at `speed` moves in `impulse` (1..32), by the impulse chart of DESIGN §7.1."""
    return (impulse * speed) // IMPULSES > ((impulse - 1) * speed) // IMPULSES


def why_not_move(unit: Unit, how: str, impulse: int) -> str | None:
    """None if `unit` may make move `how` in `impulse`, else why not (the part after the colon)."""
    if not moves_in(unit.speed, impulse):
        return f"at speed {unit.speed} it does not move in impulse {impulse}"
    if how in ("TL", "TR") and unit.since_turn < unit.turn_mode:
        moved = "hex" if unit.since_turn == 1 else "hexes"
        return f"turn mode {unit.turn_mode}, only {unit.since_turn} {moved} moved since last turn"
    if how in ("SL", "SR") and unit.since_slip < 1:
        return "no hex moved since its last sideslip"
    return None


@dataclass(frozen=True)
class Step:
    """What one move did to a unit: where from and to (None = off the map) and the facings."""

    unit: Unit
    start: hexmap.Hex
    to: hexmap.Hex | None
    facing_before: int
    how: str

    @property
    def turned(self) -> bool:
        """Whether the move changed the unit's facing (TL, TR)."""
        return self.unit.facing != self.facing_before


def move(state: TacticalState, unit: Unit, how: str) -> Step:
    """Carry out move `how` (F, TL, TR, SL, SR) for `unit`, already known to be allowed; counters updated."""
    assert unit.hex is not None
    facing, direction = unit.facing, unit.facing
    since_turn, since_slip = unit.since_turn + 1, unit.since_slip + 1
    if how == "TL":
        facing = direction = hexmap.turn_left(unit.facing)
        since_turn = 0
    elif how == "TR":
        facing = direction = hexmap.turn_right(unit.facing)
        since_turn = 0
    elif how == "SL":
        direction = hexmap.turn_left(unit.facing)
        since_slip = 0
    elif how == "SR":
        direction = hexmap.turn_right(unit.facing)
        since_slip = 0
    target = hexmap.neighbour(unit.hex, direction)
    moved = evolve(unit, facing=facing, since_turn=since_turn, since_slip=since_slip, came_from=unit.hex)
    if not hexmap.on_map(target, state.columns, state.rows):
        return Step(evolve(moved, hex=None, status=DISENGAGED), unit.hex, None, unit.facing, how)
    return Step(evolve(moved, hex=target), unit.hex, target, unit.facing, how)


def why_not_het(unit: Unit, facing: int, turn: int) -> str | None:
    """None if `unit` may make a high energy turn to `facing` in game turn `turn`, else why not."""
    if unit.het_turn == turn:
        return f"it already made a high energy turn in turn {turn}"
    if facing == unit.facing:
        return f"it already faces {hexmap.format_facing(facing)}"
    return None


def het(unit: Unit, facing: int, point: Point) -> Unit:
    """The unit after a high energy turn to `facing` at `point` (recorded for the energy audit)."""
    return evolve(unit, facing=facing, het_turn=point[0], since_turn=0, hets=(*unit.hets, point))


def landing(state: TacticalState, unit: Unit, how: str) -> hexmap.Hex:
    """Where move `how` would take `unit` (on the map or not), without making it."""
    assert unit.hex is not None
    direction = {"TL": -1, "SL": -1, "TR": 1, "SR": 1}.get(how, 0)
    return hexmap.neighbour(unit.hex, (unit.facing + direction) % 6)


def facing_after(unit: Unit, how: str) -> int:
    """The facing `unit` has after move `how` (only turns change it)."""
    return (unit.facing + {"TL": -1, "TR": 1}.get(how, 0)) % 6


def why_not_accelerate(tables: Mapping[str, Any], unit: Unit, speed: int) -> str | None:
    """Why a change of `unit`'s speed to `speed` breaks setup `acceleration` (the most one change may add or take
    away), or None (also without a limit)."""
    limit = tables.get("acceleration")
    if type(limit) is int and abs(speed - unit.speed) > limit:
        return (f"speed {unit.speed} to {speed} changes it by {abs(speed - unit.speed)}, more than the "
                f"acceleration limit {limit} (setup acceleration; an emergency deceleration, {{emergency: true}}, "
                "may stop at once)")
    return None


def why_not_emergency(unit: Unit, value: Any) -> str | None:
    """Why `unit` cannot make an emergency deceleration (`{emergency: true}`: speed 0 from the next impulse, past
    the acceleration limit; it fires nothing more in the turn, fire.py), or None."""
    if value is not True:
        return f"emergency must be 'true', got {value!r}"
    if unit.seeking is not None:
        return f"{unit.id} is a seeking weapon: its speed is fixed at {unit.speed}"
    if unit.speed == 0:
        return f"{unit.id} is already at speed 0"
    return None
