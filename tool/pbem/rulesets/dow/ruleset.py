"""`dow/1`: Diplomacy with public relationship states (DESIGN §7.2, seed 001 "Declaration of War").

This class wires the `Ruleset` protocol (pbem.rulesets.base) to the modules that hold the rules: phases (game
time), engine (the only door to the `diplomacy` package: adjudication and the standard map), board
(positions), relations (the relationship matrix), press (global press messages), legality (orders by state),
resolve (one phase), conditions (the break catalog), state (setup and the game state).

Beyond `base.Ruleset`, the protocol uses these methods (DESIGN §4.7 sealed steps, press, the verifier):

* `sealed(point) -> bool`: True at every order phase; False in the press-only S1901P, where nothing is sealed.
* `ready_owed(state, point) -> list[str]`: at a step that is not sealed, with the step's press recognised, the
  powers it still waits for (S1901P: every power not yet `ready`; replay stops with a `ready` break for each).
* `owing_players(state, point) -> list[str]`: the powers that must seal orders at `point` (units to order,
  dislodged units to retreat, builds or disbands due), table order; never a power in civil disorder; an empty
  list means the phase resolves with no orders at all.
* `relations(state) -> Relations`: `.in_force` and `.recognised` matrices (`.get(a, b)`, `.as_data()`),
  `.proposals` (by, to, state) and `.pending()` (a, b, in force, recognised); `relations_data(state)` gives all
  of it as plain data for `pbem relations`.
* `recognise(state, message, by) -> (state, Refusal | None)`: one press message (schema pbem/dow/press/1) in
  recognition order; a `Refusal` is a str with the rule id in `.rule` (`press.no-proposal`,
  `press.forced-state`, `press.one-sided-raise`, ...). A raise proposed by one side only is a standing
  proposal (orders are judged as if it had not been made); one declared by one side is refused.
* `verdicts(state, action) -> list[(order, normal, verdict, reason)]`: each order of an orders action judged:
  "ok", "invalid" (the engine refuses it: void, no offence), "rewritten" (the engine would read it with
  another meaning, e.g. a support for another coast: void, no offence, and `pbem orders` refuses to seal it,
  rule `rules.order-rewritten`) or "forbidden" (the relationship table refuses it: void and a warning).
  `legal(state, action)` joins the reasons of all kinds; the protocol should not treat a forbidden order as a
  file error: `apply` voids it and emits `warning` / `civil_disorder` events.
* `position(state) -> dict` and `position_mismatch(state, recorded) -> str | None`: the board as plain data
  (units, dislodged, centres, influence) and the comparison the verifier makes after re-adjudicating
  (rule id `result.mismatch`).
* `render_svg(state) -> str`: the board drawn by the engine.

Actions: `Action(at=phase, by=power, unit=None, do={"orders": [ORDER, ...]})`, one per power per phase (the
plaintext of its sealed orders), orders in the engine's syntax ("A PAR - BUR", "F BRE S A PAR - PIC",
"F ENG C A LON - BRE", "A LON - BRE VIA", "A BUR R RUH", "A BUR D", "A PAR B", "WAIVE").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pbem.rulesets.base import Action, Capabilities, Event, Orders, Point, Positions, Press, Refusal, Roll, Sealed, Seats
from pbem.rulesets.dow import conditions, engine, phases, press, resolve, state
from pbem.rulesets.dow.board import Board
from pbem.rulesets.dow.relations import Relations

RESULT_MISMATCH = "result.mismatch"


class DowRuleset(Capabilities):
    """The `dow/1` ruleset (zero-argument constructor)."""

    name = "dow/1"
    setup_schema = "pbem/dow/setup/1"
    action_schema = "pbem/dow/action/1"
    condition_schema = "pbem/dow/condition/1"
    press_schema = "pbem/dow/press/1"
    uses_horizons = False  # every phase is a sealed step: nobody gives orders ahead (DESIGN §4.7)
    reveals_sealed = True  # a phase resolves from the revealed orders
    # a power may replace his sealed orders until the phase's last power has sealed (protocol/resealing.py)
    replaceable_seals = True
    sealed_kinds = frozenset({"orders"})  # secret kinds that answer a sealed step, and only that
    sealed_until_end: frozenset[str] = frozenset()  # orders are revealed at their phase
    part_name = "part"  # nothing of a set of orders is opened before the whole (`sealed_part`)

    # --- game time ---------------------------------------------------------------------------------------
    def parse_time(self, text: str) -> Point:
        """Parse a phase such as "S1901M"; ValueError with the reason otherwise."""
        return phases.parse_time(text)

    def format_time(self, point: Point) -> str:
        """The canonical phase name of a point."""
        return phases.format_time(point)

    def first_step(self, setup: Mapping[str, Any]) -> Point:
        """S1901P, the press-only first half of Spring 1901 (or S1901M with setup.start: S1901M)."""
        return phases.first_step(setup)

    def next_step(self, setup: Mapping[str, Any], point: Point) -> Point | None:
        """The next phase; every phase exists, also those with nothing to do."""
        return phases.next_step(setup, point)

    def is_simultaneous(self, point: Point) -> bool:
        """True at every order phase."""
        return phases.is_simultaneous(point)

    def period_of(self, point: Point) -> str:
        """The year: "1901" -> report/1901.yaml."""
        return phases.period_of(point)

    def sealed(self, point: Point) -> bool:
        """Every order phase is a sealed step (DESIGN §4.7); the press-only first half of Spring 1901 is not:
        nothing is sealed there, it ends when every power has posted `ready` (seed 001: one phase length)."""
        return phases.sealed(point)

    def ready_owed(self, game: state.DowState, point: Point) -> list[str]:
        """Powers a press-only step still waits for (their `ready` message), with the step's press recognised."""
        return press.ready_owed(game, point)

    def secret_kinds(self, setup: Mapping[str, Any]) -> dict[str, str]:
        """The secret kinds the rules ask for: each phase's `orders` (DESIGN §7.2)."""
        return {"orders": "your orders for the phase open now: `pbem orders FILE` seals them (no control needed)"}

    def sealed_kind(self, point: Point) -> str | None:
        """The secret kind every phase's sealed input must be: `orders` (schemas/secret-orders.json)."""
        return "orders"

    # --- state and actions -------------------------------------------------------------------------------
    def initial_state(self, setup: Mapping[str, Any], players: Sequence[str]) -> state.DowState:
        """The standard opening position, every pair NEUTRAL; ValueError for a bad setup."""
        return state.initial_state(setup, players)

    def owner_of(self, game: state.DowState, unit: str) -> str | None:
        """The power with this unit ("A PAR", "F STP/SC"), dislodged units included; None if there is none."""
        for power, own in game.board.units:
            if own == unit:
                return power
        for power, own, _ in game.board.dislodged:
            if own == unit:
                return power
        return None

    def default_actions(self, game: state.DowState, point: Point, player: str) -> list[Action]:
        """Nothing: missing orders are the engine's defaults (hold, disband, waive, civil disorder removals)."""
        return []

    def owing_players(self, game: state.DowState, point: Point) -> list[str]:
        """Powers that must give orders at `point`, table order."""
        return resolve.owing(game, point)

    def legal(self, game: state.DowState, action: Action) -> str | None:
        """None if the action is a well-formed orders submission for this phase. Orders the engine refuses or
        the relationship states forbid are not a file error: `apply` voids them (the latter with a warning,
        seed 001); `verdicts` says which, for a player about to seal."""
        return resolve.action_problem(game, _orders_only(action))

    def reasons(self, game: state.DowState, action: Action) -> str | None:
        """Every reason an orders submission would be voided in part or whole (shape, engine, relationship
        states), joined; None when all of it stands. For a player about to seal (`pbem orders`)."""
        problem = resolve.action_problem(game, _orders_only(action))
        if problem is not None:
            return problem
        reasons = [r for _, _, verdict, r in self.verdicts(game, action) if verdict != "ok" and r]
        return "; ".join(reasons) or None

    def verdicts(self, game: state.DowState, action: Action) -> list[tuple[str, str | None, str, str | None]]:
        """Each order judged: (order, normal form, "ok" | "invalid" | "rewritten" | "forbidden", reason); [] when
        the action is not an orders submission at this phase (see `legal`)."""
        action = _orders_only(action)
        given = resolve.orders_of(action)
        if given is None or resolve.action_problem(game, action) is not None:
            return []
        return resolve.judge(game, action.by, given)

    def apply(
        self, game: state.DowState, point: Point, actions: Sequence[Action], rolls: Mapping[str, Roll] | None = None
    ) -> tuple[state.DowState, list[Event]]:
        """Resolve one phase (see pbem.rulesets.dow.resolve), then the secret draw vote sealed with its orders;
        Diplomacy rolls no dice, so `rolls` is unused."""
        after, events = resolve.resolve(game, point, [_orders_only(a) for a in actions])
        if point[2] == phases.MOVEMENT:  # a withheld set opened without its owner stands, and counts as missed
            for action in actions:
                if action.source == "opened" and action.by in game.powers:
                    after, disorder = after.withheld_counted(action.by, game)
                    events.append(Event("withheld", action.by, None, {"phase": phases.format_time(point)}))
                    if disorder:
                        events.append(Event("civil_disorder", action.by, None, {
                            "phase": phases.format_time(point), "offences": after.offences_of(action.by)}))
        return sealed_draw(game, after, point, actions, events)

    # --- press and relations -----------------------------------------------------------------------------
    def recognise(
        self, game: state.DowState, message: Mapping[str, Any], by: str
    ) -> tuple[state.DowState, Refusal | None]:
        """Recognise one press message signed by `by`."""
        return press.recognise(game, message, by)

    def recognise_all(self, game: state.DowState, messages: Sequence[Any]
                      ) -> tuple[state.DowState, tuple[Refusal | None, ...]]:
        """Recognise a step's messages in order, linear in them across commits (press.recognise_all)."""
        return press.recognise_all(game, messages)

    def relations(self, game: state.DowState) -> Relations:
        """The relationship matrices in force and recognised, and the standing proposals."""
        return game.relations

    def relations_data(self, game: state.DowState) -> dict[str, Any]:
        """Everything `pbem relations` shows, as plain data."""
        rel = game.relations
        return {
            "in_force": rel.in_force.as_data(),
            "recognised": rel.recognised.as_data(),
            "pending": [list(c) for c in rel.pending()],
            "proposals": [{"by": b, "to": t, "state": s} for b, t, s in rel.proposals],
            "gifts": [{"by": b, "to": t, "province": p} for b, t, p in game.gifts],
            "offences": dict(game.offences),
            "civil_disorder": list(game.disorder),
            "entering_civil_disorder": list(game.entering),
            "former": [{"power": p, "since": at, "warnings": w, "missed": m} for p, at, w, m in game.former],
        }

    # --- results for the verifier ------------------------------------------------------------------------
    def position(self, game: state.DowState) -> dict[str, Any]:
        """The board as plain data: units, dislodged units with their retreats, centres, influence."""
        return game.board.as_data()

    def position_mismatch(self, game: state.DowState, recorded: Mapping[str, Any]) -> Refusal | None:
        """None if a recorded position equals the state's (re-adjudicated) board, else what differs."""
        try:
            board = Board.from_data(recorded)
        except ValueError as err:
            return Refusal(f"the recorded position is malformed: {err}", RESULT_MISMATCH)
        if board == game.board:
            return None
        mine, theirs = game.board.as_data(), board.as_data()
        diffs = []
        for part in ("units", "dislodged", "centres", "influence"):
            for power in sorted(set(mine[part]) | set(theirs[part])):
                if mine[part].get(power) != theirs[part].get(power):
                    diffs.append(f"{part} of {power}: recorded {theirs[part].get(power)}, "
                                 f"engine {mine[part].get(power)}")
        return Refusal("the recorded position differs from the engine's: " + "; ".join(diffs), RESULT_MISMATCH)

    def render_svg(self, game: state.DowState) -> str:
        """The board as SVG (the engine's renderer)."""
        phase = phases.format_time(game.phase) if game.phase is not None else "W2000A"
        return engine.render_svg(game.board, phase)

    # --- break conditions --------------------------------------------------------------------------------
    def condition_error(self, condition: Mapping[str, Any]) -> str | None:
        """None if the break condition is in this ruleset's catalog and well formed, else why not."""
        return conditions.condition_error(condition)

    def condition_met(
        self,
        condition: Mapping[str, Any],
        player: str,
        before: state.DowState,
        after: state.DowState,
        events: Sequence[Event],
    ) -> str | None:
        """The reason text if the condition is met by this phase, else None."""
        return conditions.condition_met(condition, player, events)

    def resigned(self, game: state.DowState, power: str) -> state.DowState:
        """DESIGN §4.8: a resigned power goes into civil disorder at once, as a second offence would put it from
        the next phase: it gives no more orders, its units hold, the civil-disorder rules disband them."""
        if power not in game.powers or power in game.resigned:
            return game
        return replace(game, disorder=tuple(sorted({*game.disorder, power})),
                       entering=tuple(p for p in game.entering if p != power),
                       resigned=tuple(sorted({*game.resigned, power})))

    def replaced(self, game: state.DowState, power: str) -> state.DowState:
        """DESIGN §4.8: a resigned power given to a replacement leaves civil disorder at once and owes orders
        again. The new player starts clean (seed 001: "a one time warning for an honest mistake, and then sent into
        CD for the second offense" is each player's own): the old player's warnings and missed movement phases
        stay his, kept apart in `former` (a director's warning citing an order of his counts there too,
        `press._director`); the power keeps its units, centres and relationships."""
        if power not in game.resigned:
            return game
        missed = dict(game.missed)
        record = (power, phases.format_time(game.phase) if game.phase is not None else "",
                  game.offences_of(power), missed.pop(power, 0))
        return replace(game, resigned=tuple(p for p in game.resigned if p != power),
                       disorder=tuple(p for p in game.disorder if p != power),
                       entering=tuple(p for p in game.entering if p != power),
                       offences=tuple((p, n) for p, n in game.offences if p != power),
                       missed=tuple(sorted(missed.items())),
                       former=(*game.former, record))

    def is_over(self, game: state.DowState) -> bool:
        """Whether someone has won or a draw was agreed (or declared by the engine at its year limit)."""
        return game.outcome is not None

    def reveals_sealed_at(self, game: state.DowState, point: Point) -> bool:
        """Every phase resolves from the revealed orders (`reveals_sealed`)."""
        return self.reveals_sealed

    def opens_part_at(self, game: state.DowState, point: Point) -> bool:
        """Never: a phase resolves from the orders revealed whole (`reveals_sealed`)."""
        return False

    def sealed_part(self, kind: str, value: Any) -> None:
        """Nothing: a set of orders is revealed whole, at its phase."""
        return None

    # --- capabilities (rulesets/base.py): this class implements each itself ----------------------------------
    @property
    def sealing(self) -> Sealed:
        return self

    @property
    def press(self) -> Press:
        return self

    @property
    def orders(self) -> Orders:
        return self

    @property
    def seats(self) -> Seats:
        return self

    @property
    def positions(self) -> Positions:
        return self


def _orders_only(action: Action) -> Action:
    """The action without its sealed draw vote (`draw: true`), which `sealed_draw` counts."""
    if isinstance(action.do, Mapping) and "draw" in action.do:
        return replace(action, do={k: v for k, v in action.do.items() if k != "draw"})
    return action


def sealed_draw(before: state.DowState, after: state.DowState, point: Point, actions: Sequence[Action],
                events: list[Event]) -> tuple[state.DowState, list[Event]]:
    """A draw voted secretly: each power may seal `draw: true` with its orders (`pbem orders FILE --draw`), so
    nobody sees a vote before every power has sealed, all are opened together with the orders, and none can
    change once sealed. The draw is agreed when every surviving power not in civil disorder at the phase's start
    voted for it in that phase; no vote is no, and a vote lasts one phase (it expires with its orders). It is
    shared by every survivor."""
    if after.outcome is not None or point[2] == phases.PRESS:
        return after, events
    votes = {a.by for a in actions if isinstance(a.do, Mapping) and a.do.get("draw") is True}
    voters = [p for p in before.survivors() if not before.in_disorder(p)]
    if not votes or not voters or any(p not in votes for p in voters):
        return after, events
    survivors = after.survivors()
    events = [*events, Event(state.DRAW, "", None, {"phase": phases.format_time(point), "powers": list(survivors),
                                                    "vote": "sealed"})]
    return replace(after, outcome=(state.DRAW, survivors)), events
