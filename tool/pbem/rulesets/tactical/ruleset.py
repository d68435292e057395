"""`tactical/1`: impulse hex combat in the style of Star Fleet Battles (DESIGN §7.1) — the movement slice.

This class only wires the `Ruleset` protocol (pbem.rulesets.base) to the modules that hold the rules:
gametime (T.I.step), hexmap (XXYY, facings, range), state (units, setup), movement and actions (what a unit
may do at a step and what it does), conditions (the break catalog). Firing, damage, seeking weapons, systems
and energy allocation come in later issues; their actions and conditions are refused with "not supported yet".

Choice where the design is silent: the game is over when at most one player still has units on the map (and
at least two had units at the start); the protocol also ends it after the last turn's final step.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pbem.rulesets.base import Action, Event, Point
from pbem.rulesets.tactical import actions, conditions, gametime, state


class TacticalRuleset:
    """The `tactical/1` ruleset (zero-argument constructor, registered in pbem.rulesets)."""

    name = "tactical/1"
    setup_schema = "pbem/tactical/setup/1"
    action_schema = "pbem/tactical/action/1"
    condition_schema = "pbem/tactical/condition/1"

    # --- game time ---------------------------------------------------------------------------------------
    def parse_time(self, text: str) -> Point:
        """Parse "T.I.step" (e.g. "1.12.move"); ValueError with the reason otherwise."""
        return gametime.parse_time(text)

    def format_time(self, point: Point) -> str:
        """The canonical "T.I.step" of a point."""
        return gametime.format_time(point)

    def first_step(self, setup: Mapping[str, Any]) -> Point:
        """The first step of every game: "1.0.alloc"."""
        return gametime.first_step(setup)

    def next_step(self, setup: Mapping[str, Any], point: Point) -> Point | None:
        """The step after `point`; None after the final step of turn setup.turns."""
        return gametime.next_step(setup, point)

    def is_simultaneous(self, point: Point) -> bool:
        """True at `fire` steps (action auction, DESIGN §4.6)."""
        return gametime.is_simultaneous(point)

    def period_of(self, point: Point) -> str:
        """The report file stem of the point's turn: "turn-01" for turn 1 (report/turn-01.yaml)."""
        return gametime.period_of(point)

    # --- state and actions -------------------------------------------------------------------------------
    def initial_state(self, setup: Mapping[str, Any], players: Sequence[str]) -> state.TacticalState:
        """The units of setup.units on the map before 1.0.alloc; ValueError for a bad setup."""
        return state.initial_state(setup, players)

    def owner_of(self, game: state.TacticalState, unit: str) -> str | None:
        """The player owning `unit`, or None if there is no such unit."""
        found = game.unit(unit)
        return found.owner if found is not None else None

    def default_actions(self, game: state.TacticalState, point: Point, player: str) -> list[Action]:
        """`{move: F}` for each of the player's units that moves at this move step; nothing elsewhere."""
        return actions.default_actions(game, point, player)

    def legal(self, game: state.TacticalState, action: Action) -> str | None:
        """None if the action is legal at its step, else the reason quoting it."""
        return actions.legal(game, action)

    def apply(
        self, game: state.TacticalState, point: Point, given: Sequence[Action]
    ) -> tuple[state.TacticalState, list[Event]]:
        """Resolve one step: all units act at once; illegal actions are ignored, missing moves are F."""
        return actions.resolve(game, point, given)

    # --- break conditions --------------------------------------------------------------------------------
    def condition_error(self, condition: Mapping[str, Any]) -> str | None:
        """None if the break condition is in this ruleset's catalog and well formed, else why not."""
        return conditions.condition_error(condition)

    def condition_met(
        self,
        condition: Mapping[str, Any],
        player: str,
        before: state.TacticalState,
        after: state.TacticalState,
        events: Sequence[Event],
    ) -> str | None:
        """The reason text if the condition is met by this step, else None."""
        return conditions.condition_met(condition, player, before, after, events)

    def is_over(self, game: state.TacticalState) -> bool:
        """Whether at most one player is left on the map (of at least two who started with units)."""
        started = {u.owner for u in game.units}
        left = {u.owner for u in game.units if u.active}
        return len(started) >= 2 and len(left) <= 1

    # --- for the log, the renderer and tests ---------------------------------------------------------------
    def state_summary(self, game: state.TacticalState) -> list[dict[str, Any]]:
        """Each unit: id, owner, hex ("XXYY" or None once off the map), facing letter, speed, status."""
        return state.state_summary(game)

    def unit_positions(self, game: state.TacticalState) -> dict[str, tuple[str, str] | None]:
        """Unit id -> (hex, facing), None for a unit that left the map."""
        return state.unit_positions(game)
