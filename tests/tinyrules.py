"""A tiny ruleset for testing the protocol without any game's rules: tokens on a line.

Time is "N" (steps 1..last); each player owns one token (unit = player id). At each step a token moves by
`{step: -1|0|1}`; the default is +1. Odd steps are simultaneous. Break conditions: `{near: D}` — an enemy token
comes to distance <= D (crossing, like tactical `range`); `{moves: {}}` — an enemy token stood still or moved back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pbem.rulesets.base import Action, Capabilities, Event, Point


@dataclass(frozen=True)
class TinyState:
    pos: tuple[tuple[str, int], ...]

    def at(self, unit: str) -> int:
        return dict(self.pos)[unit]


class TinyRuleset(Capabilities):
    name = "tiny/1"

    def __init__(self, last: int = 20) -> None:
        self.last = last

    def parse_time(self, text: str) -> Point:
        if not text.isdigit() or text.startswith("0") or not 1 <= int(text) <= self.last:
            raise ValueError(f"not a step: {text!r}")
        return (int(text),)

    def format_time(self, point: Point) -> str:
        return str(point[0])

    def first_step(self, setup: Mapping[str, Any]) -> Point:
        return (1,)

    def next_step(self, setup: Mapping[str, Any], point: Point) -> Point | None:
        return (point[0] + 1,) if point[0] < self.last else None

    def is_simultaneous(self, point: Point) -> bool:
        return point[0] % 2 == 1

    def period_of(self, point: Point) -> str:
        return "steps"

    def initial_state(self, setup: Mapping[str, Any], players: Sequence[str]) -> TinyState:
        return TinyState(tuple((p, int(setup["start"][p])) for p in players))

    def owner_of(self, state: TinyState, unit: str) -> str | None:
        return unit if unit in dict(state.pos) else None

    def default_actions(self, state: TinyState, point: Point, player: str) -> list[Action]:
        return [Action(point, player, player, {"step": 1}, "default")]

    def legal(self, state: TinyState, action: Action) -> str | None:
        if action.unit != action.by:
            return f"{action.by} does not own {action.unit}"
        if action.do.get("step") not in (-1, 0, 1):
            return f"bad step {action.do!r}"
        return None

    def apply(self, state: TinyState, point: Point, actions: Sequence[Action]):
        pos = dict(state.pos)
        events = []
        for a in actions:
            pos[a.unit] += a.do["step"]
            events.append(Event("moved", a.by, a.unit, {"step": a.do["step"]}))
        return TinyState(tuple(pos.items())), events

    def condition_error(self, condition: Mapping[str, Any]) -> str | None:
        return None if ("near" in condition or "moves" in condition) else "unknown condition"

    def condition_met(self, condition, player, before: TinyState, after: TinyState, events: Sequence[Event]):
        mine = after.at(player)
        for e in events:
            if "near" in condition:
                d_before = abs(before.at(e.unit) - before.at(player))
                d_after = abs(after.at(e.unit) - mine)
                if d_before > condition["near"] >= d_after:
                    return f"near {condition['near']}: {e.unit} at {d_after}"
            if "moves" in condition and e.data["step"] != 1:
                return f"{e.unit} changed pace"
        return None

    def is_over(self, state: TinyState) -> bool:
        return False
