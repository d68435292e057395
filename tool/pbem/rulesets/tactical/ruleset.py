"""`tactical/1`: impulse hex combat in the style of Star Fleet Battles (DESIGN §7.1).

This class only wires the `Ruleset` protocol (pbem.rulesets.base) to the modules that hold the rules:
gametime (T.I.step), hexmap and arcs (XXYY, facings, range, sectors), state (units, setup), weapons (tables),
movement, actions (the registry of what a unit may do at a step), fire (shots and damage), seeking (launch,
contact, impact), systems, plans (forward, pursue, keep_range), conditions (the break catalog) and energy (the
allocation audit).

For the protocol, beyond the base contract:
* `declared_events` gives the `fire` (fire steps) and `launch` (activity steps) events as soon as the actions
  are declared; `apply` returns the same events (equal) among the resolution's, so at a step whose declared
  events were already checked for breaks, check only the resolution's other events (`declared_kinds`).
* `slot_of(do)`: one action per unit and slot and step ({fire: …} per weapon, {use: …} per system).
* `impact`, `pursuit_violations`, `turn_record`, `audit_allocation` and `plan_error` (see their docstrings).

Choice where the design is silent: the game is over when at most one player still has units in play (on the
map, not destroyed; seeking weapons in flight do not count) and at least two had units at the start; the
protocol also ends it after the last turn's final step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pbem.formats.records import evolve
from pbem.rulesets.base import (Action, Ambiguous, Armed, Audit, Capabilities, Declared, Dice, Event, Foresight, Plans,
                                Point, Roll, Sealed, Seats, Seeking, Summary, Uses)
from pbem.rulesets.tactical import (actions, audit_battle, conditions, craft, damage, energy, foresight, gametime,
                                    outcome, plans, reinforce, seeking, state)
from pbem.rulesets.tactical.weapons import DIE_SIDES


class TacticalRuleset(Capabilities):
    """The `tactical/1` ruleset (zero-argument constructor, registered in pbem.rulesets)."""

    name = "tactical/1"
    setup_schema = "pbem/tactical/setup/1"
    action_schema = "pbem/tactical/action/1"
    condition_schema = "pbem/tactical/condition/1"
    plan_schema = "pbem/tactical/plan/1"
    allocation_schema = "pbem/secret/allocation/1"
    declared_kinds = ("fire", "launch")
    sealed_kinds = frozenset({energy.KIND})  # secret kinds that answer a sealed step, and only that
    sealed_until_end = frozenset({energy.KIND})  # opened whole only when the battle is over (seed §2.C)
    part_name = "speeds"  # what of an allocation is opened at its step with `speeds: sealed` (sealed_part)
    replaceable_seals = False  # an allocation, once sealed, is final (seed §2.C)
    target_kind = seeking.TARGET_KIND  # a seeking weapon's sealed target, sealed in its launch commit
    # seed §6.C.1: damage at a fire step is known before it is scored; whoever it meets may still act in that step
    reply_kinds = ("damage",)

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
        """True at `fire` and `activity` steps: a declared shot or launch that meets a condition opens an action
        auction there (DESIGN §4.6, seed 000 §7.A)."""
        return gametime.is_simultaneous(point)

    def sealed(self, point: Point) -> bool:
        """Each turn's allocation step is a sealed simultaneous step (DESIGN §4.7) in games whose setup says
        `allocation: sealed`; `owing_players` is empty otherwise."""
        return point[2] == gametime.ALLOC

    def owing_players(self, game: state.TacticalState, point: Point) -> list[str]:
        """With `allocation: sealed`, every player with a ship in play seals his energy allocation at each turn's
        allocation step (seed §2.C), opened at the end of the battle and audited (`audit_allocation`); with
        `speeds: sealed` its speeds alone are opened at the step itself (`opens_part_at`)."""
        if point[2] != gametime.ALLOC or game.tables.get("allocation") != "sealed":
            return []
        return [p for p in game.players
                if any(u.owner == p and u.active and u.seeking is None for u in game.units)]

    def opens_part_at(self, game: state.TacticalState, point: Point) -> bool:
        """With `speeds: sealed`, once every allocation of the step is sealed, the speeds alone are opened, by all
        at once, and the step resolves with them (seed §2.C: SFB announces the speed, the rest of the energy
        allocation stays secret until the end of the battle)."""
        return point[2] == gametime.ALLOC and game.speeds_sealed

    def reveals_sealed_at(self, game: state.TacticalState, point: Point) -> bool:
        """Never: an allocation is opened whole only after the battle (seed §2.C); at its step at most its speeds
        are opened (`opens_part_at`)."""
        return False

    def sealed_part(self, kind: str, value: Any) -> Any:
        """The part of a sealed input opened at its step, the rest staying sealed (DESIGN §4.7): an allocation's
        speeds, `{units: {CA: {speed: 12}}}` (energy.speeds_part); None for other kinds."""
        return energy.speeds_part(value) if kind == energy.KIND else None

    def period_of(self, point: Point) -> str:
        """The report file stem of the point's turn: "turn-01" for turn 1 (report/turn-01.yaml)."""
        return gametime.period_of(point)

    # --- state and actions -------------------------------------------------------------------------------
    def initial_state(self, setup: Mapping[str, Any], players: Sequence[str]) -> state.TacticalState:
        """The units of setup.units on the map before 1.0.alloc, the craft aboard them (craft.py), each with its
        starting boxes (damage.py); ValueError for a bad setup."""
        audit_battle.check_setup(setup)
        return damage.equip(craft.aboard(setup, state.initial_state(setup, players)), setup)

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

    # --- what an entry's author alone could know (DESIGN §4.2 "Entries and time"; pbem.protocol.legality) -------
    def own_view(self, game: state.TacticalState, player: str) -> foresight.OwnView:
        """`player`'s view of the game at the firm point (foresight.py)."""
        return foresight.own_view(game, player)

    def own_state(self, view: foresight.OwnView) -> state.TacticalState:
        """The state inside a view (for plans and defaults)."""
        return view.state

    def own_step(self, view: foresight.OwnView, point: Point, given: Sequence[Action]) -> foresight.OwnView:
        """The view carried over `point` by the player's own actions."""
        return foresight.own_step(view, point, given)

    def own_legality(self, view: foresight.OwnView, action: Action) -> str | None:
        """None if the author could not have known `action` to be illegal, else the reason: a finding on his
        commit. What only others' later actions make impossible is left to `legal` at replay (void)."""
        return foresight.own_legality(view, action)

    def own_warnings(self, before: foresight.OwnView, after: foresight.OwnView, point: Point,
                     given: Sequence[Action], plans: Sequence[Mapping[str, Any]]) -> list[str]:
        """Warnings from the author's own view at `point` (foresight.own_warnings; protocol.ahead)."""
        return foresight.own_warnings(before, after, point, given, plans)

    def spend(self, judged: state.TacticalState | foresight.OwnView, action: Action
              ) -> state.TacticalState | foresight.OwnView:
        """What the next action of the same step is judged against once `action` is accepted there (a state, or
        its author's view): its energy use counts with the others of the step (actions.spend)."""
        if isinstance(judged, foresight.OwnView):
            spent = actions.spend(judged.state, action)
            return judged if spent is judged.state else evolve(judged, state=spent)
        return actions.spend(judged, action)

    def slot_of(self, do: Mapping[str, Any]) -> tuple[str, ...] | None:
        """The slot an action takes (one action per unit, slot and step): ("move",), ("fire", "ph1"), …"""
        return actions.slot_of(do)

    def apply(
        self, game: state.TacticalState, point: Point, given: Sequence[Action],
        rolls: Mapping[str, Roll] | None = None,
    ) -> tuple[state.TacticalState, list[Event]]:
        """Resolve one step: all units act at once; illegal actions are ignored, missing moves are F; a fire step
        needs `rolls[ref]` (1..6) for every ref of `dice_needed`, else ValueError."""
        return actions.resolve(game, point, given, rolls)

    # --- plans, dice, declarations -------------------------------------------------------------------------
    def resolve_plan(self, game: state.TacticalState, point: Point, player: str,
                     plan: Mapping[str, Any]) -> list[Action] | Ambiguous | None:
        """A `plans` entry at `point`: one move action (source "plan"), an Ambiguous with the tied moves, or
        None when it does not act here (plans.py)."""
        return plans.resolve_plan(game, point, player, plan)

    def plan_error(self, plan: Mapping[str, Any]) -> str | None:
        """None if the plan {unit, from, until, do} can be resolved, else why not (a schema-level error)."""
        return plans.plan_error(plan)

    def dice_needed(self, game: state.TacticalState, point: Point, given: Sequence[Action]) -> list[str]:
        """One ref "T.I.fire/UNIT/WEAPON" per legal shot of a fire step, in setup order of units and weapons."""
        return actions.dice_needed(game, point, given)

    def dice_sides(self, ref: str) -> int:
        """Every die of tactical/1 is a d6."""
        return DIE_SIDES

    def dice_roller(self, game: state.TacticalState, ref: str) -> str | None:
        """The owner of the unit the ref names: the firer of "T.I.fire/UNIT/WEAPON" (DESIGN §5 "Who rolls"), the
        damaged unit's owner for its damage allocation "T.I.damage/UNIT/N" (damage.py)."""
        parts = ref.split("/")
        return self.owner_of(game, parts[1]) if len(parts) == 3 else None

    def reply_key(self, event: Event) -> tuple[Any, ...]:
        """What identifies a `damage` event across resolutions of a held step: the shot, not its outcome (a
        reinforcement given in reply changes what the shield and internals take, not which shot it is)."""
        return (event.kind, event.by, event.unit, event.data.get("attacker"), event.data.get("weapon"),
                event.data.get("roll"))

    def declared_events(self, game: state.TacticalState, point: Point, given: Sequence[Action]) -> list[Event]:
        """The `fire` / `launch` events of the legal declared actions, before any die is rolled (seed §7.B)."""
        return actions.declared(game, point, given)

    # --- seeking weapons and the energy audit ----------------------------------------------------------------
    def secret_kinds(self, setup: Mapping[str, Any]) -> dict[str, str]:
        """The secret kinds this game's rules ask for, each with when it is sealed: the energy `allocation` where
        allocations are sealed, a seeking weapon's `target` where a weapon type seeks (DESIGN §6, §7.1)."""
        kinds: dict[str, str] = {}
        if setup.get("allocation") == "sealed":
            kinds[energy.KIND] = ("your energy allocation for a turn, sealed at its allocation step T.0.alloc when "
                                  "you owe it (no control needed)"
                                  + ("; it carries each ship's speed for the turn: the speeds alone are opened "
                                     "with everyone's, the rest at the end of the battle"
                                     if setup.get("speeds") == "sealed" else ""))
        if any(isinstance(w, Mapping) and w.get("seeking") for w in (setup.get("weapons") or {}).values()):
            kinds[seeking.TARGET_KIND] = ("a seeking weapon's target, sealed in the turn that launches it, with "
                                          "--concerns NAME (the `as` of the launch)")
        return kinds

    def launched_unit(self, do: Mapping[str, Any]) -> str | None:
        """The name of the seeking weapon an action launches (`{launch: {weapon, as}}`), else None."""
        return seeking.launched_name(do)

    def impact(self, game: state.TacticalState, seeking_unit: str, target: str
               ) -> tuple[state.TacticalState, list[Event]]:
        """A seeking weapon hits its revealed target in its hex (seeking.py); ValueError if it cannot. Craft aboard
        a carrier it destroys are lost with it (craft.py)."""
        after, events = seeking.impact(game, seeking_unit, target)
        return craft.lost_with_carriers(after), events

    def vanish(self, game: state.TacticalState, seeking_unit: str) -> tuple[state.TacticalState, list[Event]]:
        """A seeking weapon revealed as a dummy vanishes, doing nothing (seeking.py); ValueError if it cannot."""
        return seeking.vanish(game, seeking_unit)

    def pursuit_violations(self, track: Sequence[tuple[Point, state.TacticalState, Sequence[Event]]], unit: str,
                           target: str) -> list[plans.Violation]:
        """The moves of a seeking weapon that did not pursue its revealed target (plans.py)."""
        return plans.pursuit_violations(track, unit, target)

    def sealed_pursuit_answer(self, game: state.TacticalState, point: Point, unit: str, target: Any,
                              options: Sequence[Mapping[str, Any]]) -> dict[str, str] | None:
        """The option of a sealed pursuit's special break that pursues `target` (its owner's sealed target): what
        his own pbem answers for him; None when none does (the target not on the map)."""
        mover, chased = game.unit(unit), game.unit(target) if isinstance(target, str) else None
        if mover is None or chased is None or mover.hex is None or chased.hex is None:
            return None
        allowed = plans.pursue_choices(game, mover, chased, point[1])
        return next(({"move": o["move"]} for o in options if o.get("move") in allowed), None)

    def turn_record(self, game: state.TacticalState, player: str, turn: int) -> energy.TurnRecord:
        """What `player`'s units did in `turn` that costs energy, from a state at or after its end (shuttles,
        fighters and PFs need no allocation: craft.py)."""
        return craft.without_craft(game, reinforce.turn_record(game, player, turn))

    def sealed_kind(self, point: Point) -> str | None:
        """The secret kind a sealed step's input must be (DESIGN §4.7): the turn's energy `allocation`."""
        return energy.KIND if point[2] == gametime.ALLOC else None

    def sealed_input_error(self, kind: str, point: Point, value: Any) -> str | None:
        """Why a revealed sealed input does not answer the step `point` it was sealed for, or None: an allocation
        is for the turn of the allocation step it answers (seed §2.C), whatever turn it names inside."""
        return energy.step_error(point, value) if kind == energy.KIND else None

    def turn_of(self, point: Point) -> int:
        """The game turn a point belongs to (an allocation answering "2.0.alloc" is audited against turn 2)."""
        return point[0]

    def turn_ended(self, point: Point | None, turn: int) -> bool:
        """Whether replay stopped at `point` (None: the game's end) is past the end of `turn`."""
        return point is None or point[0] > turn

    def seal_errors(self, setup: Mapping[str, Any], kind: str, player: str, value: Mapping[str, Any]
                    ) -> list[tuple[str, str]]:
        """(unit, reason) for what is wrong with a secret of `kind` its owner can know before sealing it: an
        allocation's units not his, over power (every line counted) or over max_speed (energy.seal_errors)."""
        return energy.seal_errors(setup, player, value) if kind == energy.KIND else []

    def audit_allocation(self, setup: Mapping[str, Any], record: energy.TurnRecord,
                         allocation: Mapping[str, Any]) -> list[str]:
        """Every way a revealed allocation fails to pay for the record of its turn (energy.py)."""
        return energy.audit_allocation(setup, record, allocation) + reinforce.audit(setup, record, allocation)

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

    def condition_holds(self, condition: Mapping[str, Any], player: str, game: state.TacticalState) -> str | None:
        """The reason text if the situation `condition` watches for already holds in `game` (a range), else None;
        DESIGN §4.3: a condition that holds when written is met at the next step it still holds."""
        return conditions.condition_holds(condition, player, game)

    def resigned(self, game: state.TacticalState, player: str) -> state.TacticalState:
        """DESIGN §4.8: a resigned player's units leave the map (state.resigned)."""
        return state.resigned(game, player)

    def replaced(self, game: state.TacticalState, player: str) -> state.TacticalState:
        """A seat given to a new holder changes nothing on the map: the units play on under him."""
        return game

    def is_over(self, game: state.TacticalState) -> bool:
        """Whether at most one player still has units in play (of at least two who started with units)."""
        started = {u.owner for u in game.units if u.seeking is None}
        left = {u.owner for u in game.units if u.active and u.seeking is None}
        return len(started) >= 2 and len(left) <= 1

    # --- for the log, the renderer and tests ---------------------------------------------------------------
    def shots_report(self, game: state.TacticalState) -> list[str]:
        """One line per scored shot so far: die, damage, and which shield or internals took it (fire.Hit); with
        them, in game order, what the systems that act did (tractors, transporters, craft, probes, ESG)."""
        if not game.doings:
            return [hit.text() for hit in game.hits]
        lines = [(hit.at, 0, hit.text()) for hit in game.hits] + [(at, 1, text) for at, text in game.doings]
        return [text for _, _, text in sorted(lines, key=lambda x: (x[0], x[1]))]

    def outcome(self, game: state.TacticalState) -> str:
        """Who won a finished game, or a draw, and why (outcome.py; docs/tactical.md)."""
        return outcome.outcome(game)

    def state_summary(self, game: state.TacticalState) -> list[dict[str, Any]]:
        """Each unit: id, owner, hex ("XXYY" or None once out of play), facing, speed, status, shields, hull."""
        return state.state_summary(game)

    def unit_positions(self, game: state.TacticalState) -> dict[str, tuple[str, str] | None]:
        """Unit id -> (hex, facing), None for a unit out of play."""
        return state.unit_positions(game)

    # --- capabilities (rulesets/base.py): this class implements each itself ----------------------------------
    @property
    def plans(self) -> Plans:
        return self

    @property
    def dice(self) -> Dice:
        return self

    @property
    def declared(self) -> Declared:
        return self

    @property
    def sealing(self) -> Sealed:
        return self

    @property
    def seeking(self) -> Seeking:
        return self

    @property
    def audit(self) -> Audit:
        return self

    @property
    def seats(self) -> Seats:
        return self

    @property
    def foresight(self) -> Foresight:
        return self

    @property
    def uses(self) -> Uses:
        return self

    @property
    def armed(self) -> Armed:
        return self

    @property
    def summary(self) -> Summary:
        return self

    def audit_plot(self, setup: Mapping[str, Any], allocation: Mapping[str, Any]) -> list[str]:
        """What is wrong with an allocation revealed before its turn is played, from itself alone
        (energy.plot_errors: over power, every line counted; with sealed speeds, a speed above max_speed)."""
        return energy.plot_errors(setup, allocation)

    def audit_battle(self, setup: Mapping[str, Any], records: Sequence[energy.TurnRecord],
                     allocations: Mapping[int, Mapping[str, Any]]) -> list[tuple[int, str, str]]:
        """(turn, rule id, reason) for each fault of one player's allocations read across the whole battle:
        weapons held unarmed or fired before their arming turns were paid, battery charge drawn that was never
        stored or put in beyond capacity (audit_battle.py)."""
        return [(f.turn, f.rule, f.reason) for f in audit_battle.audit_battle(setup, records, allocations)]
