"""What a ruleset is (DESIGN §7): a pure module the protocol drives. No git, files, clock or printing.

The protocol (pbem.protocol) knows nothing about hexes or provinces. It asks the ruleset for the order of game
time, the state at the start, what each player does by default, whether an action is legal, what applying a
step's actions yields (new state + events), and whether a player's break condition is met by those events.

Game time: a ruleset parses its own time strings ("1.12.move", "S1901M") into a `Point`: any tuple that orders
correctly with `<`. The protocol only compares, hashes and formats points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

Point = tuple[Any, ...]
State = Any  # opaque to the protocol; rulesets must never mutate a state they were given


@dataclass(frozen=True)
class Action:
    """One action at one step: an explicit entry, or a default/plan the protocol filled in.

    `do` is the entry's `do` mapping exactly as written (e.g. {"move": "TL"}). `source` says where it came from:
    "entry" (file/line set), "default" or "plan".
    """

    at: Point
    by: str
    unit: str | None
    do: Mapping[str, Any]
    source: str = "entry"
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Event:
    """Something that happened in a step, for break conditions. `by` is the player whose unit caused it."""

    kind: str
    by: str
    unit: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Withheld:
    """A die that will never be rolled: its roller never revealed his secret, and an agreement settled it (an nmr
    found him absent, or he resigned). What the reveal hid is lost: the ruleset scores the roll as the worst for
    the roller (tactical: the shot misses), never as a re-roll (DESIGN §4.8, §5)."""

    player: str
    agreement: str  # the id of the nmr or resign agreement
    kind: str = "nmr"

    def text(self) -> str:
        """E.g. "kli's reveal withheld, nmr fed-0003"."""
        return f"{self.player}'s reveal withheld, {self.kind} {self.agreement}"


@dataclass(frozen=True)
class Ambiguous:
    """A plan that cannot be resolved to one action here (ties): the owner must choose one of `options`, each
    an action's `do` mapping (DESIGN §4.5, seed §5.C special break)."""

    unit: str | None
    options: tuple[Mapping[str, Any], ...]


class Ruleset(Protocol):
    """The contract between the protocol and a game's rules. All methods are pure."""

    name: str

    # --- game time -------------------------------------------------------------------------------------
    def parse_time(self, text: str) -> Point:
        """Parse a time string; raise ValueError with a short reason when it is not one."""

    def format_time(self, point: Point) -> str:
        """The canonical string of a point (parse_time(format_time(p)) == p)."""

    def first_step(self, setup: Mapping[str, Any]) -> Point:
        """The first step of the game."""

    def next_step(self, setup: Mapping[str, Any], point: Point) -> Point | None:
        """The step after `point`, or None when `point` is the last step of the game."""

    def is_simultaneous(self, point: Point) -> bool:
        """Whether players act simultaneously at this step (action auction, §4.6)."""

    def period_of(self, point: Point) -> str:
        """The report file stem that holds entries at this point, e.g. "turn-01" -> report/turn-01.yaml."""

    # --- state and actions -----------------------------------------------------------------------------
    def initial_state(self, setup: Mapping[str, Any], players: Sequence[str]) -> State:
        """The state before the first step, from game.yaml `setup`."""

    def owner_of(self, state: State, unit: str) -> str | None:
        """Which player owns a unit (None if no such unit)."""

    def default_actions(self, state: State, point: Point, player: str) -> list[Action]:
        """What `player` does at `point` when he gave no entry there (within his horizon), e.g. move forward."""

    def legal(self, state: State, action: Action) -> str | None:
        """None if `action` is legal in `state` at its step, else the reason (quoting the action)."""

    def apply(self, state: State, point: Point, actions: Sequence[Action],
              rolls: Mapping[str, int] | None = None) -> tuple[State, list[Event]]:
        """Resolve all actions of one step together; return the new state and what happened. `rolls` maps each
        dice ref that `dice_needed` named to its die result (DESIGN §5), or to a `Withheld` for a die whose roller
        never revealed (the roll is lost: the ruleset scores it as a miss)."""

    # --- optional, for rules with plans, dice and simultaneous declarations (DESIGN §4.5, §4.6, §5) ---------
    # A ruleset without these behaves as if: no plan ever acts, no step needs dice, nothing is declared.

    def resolve_plan(self, state: State, point: Point, player: str,
                     plan: Mapping[str, Any]) -> "list[Action] | Ambiguous | None":
        """What a variable action (`plans` entry {unit, from, until, do}) does at `point`: the actions, an
        Ambiguous with the tied options, or None when it does not act here."""

    def dice_needed(self, state: State, point: Point, actions: Sequence[Action]) -> list[str]:
        """The dice refs this step's actions need resolved before `apply`, one die each, e.g.
        "1.4.fire/CA/ph1" (DESIGN §5 `ref`), in a stable order."""

    def dice_sides(self, ref: str) -> int:
        """How many sides the die for `ref` has (6 in tactical/1)."""

    def dice_roller(self, state: State, ref: str) -> str | None:
        """The player whose action the die for `ref` resolves, who alone announces its batch (DESIGN §5 "Who
        rolls"; tactical/1: the owner of the firing unit); None where the rules do not say."""

    def declared_events(self, state: State, point: Point, actions: Sequence[Action]) -> list[Event]:
        """Events known as soon as this simultaneous step's actions are declared, before anything is resolved
        (e.g. `fire` declared): they can trigger an action auction (seed §7)."""

    # --- optional: what an entry's author alone could know (DESIGN §4.2 "Entries and time") -------------------
    # Replay judges an entry with `legal` on the state it meets, and an illegal one is void (never a finding). A
    # ruleset with these four also has each entry judged when it is written, in its author's view: the state at
    # the firm point carried forward by his own actions only (pbem.protocol.legality); a refusal there is a
    # finding on his commit. Without them only entries at the firm step itself are judged when written.

    def own_view(self, state: State, player: str) -> Any:
        """`player`'s view at the firm point (opaque to the protocol)."""

    def own_state(self, view: Any) -> State:
        """The state inside a view, for the player's plans and defaults."""

    def own_step(self, view: Any, point: Point, actions: Sequence[Action]) -> Any:
        """The view after `point`, carried by the player's own actions there (never by anybody else's)."""

    def own_legality(self, view: Any, action: Action) -> str | None:
        """The reason if the author could have known `action` to be illegal, else None (others may still make
        it impossible: replay then voids it)."""

    def condition_holds(self, condition: Mapping[str, Any], player: str, state: State) -> str | None:
        """The reason text if the situation a condition watches for already holds in `state` (DESIGN §4.3: one
        written while it holds is met at the next step it still holds), else None."""

    # --- break conditions (§4.3) -----------------------------------------------------------------------
    def condition_error(self, condition: Mapping[str, Any]) -> str | None:
        """None if the ruleset can evaluate this variable condition, else why not (a schema-level error)."""

    def condition_met(
        self,
        condition: Mapping[str, Any],
        player: str,
        before: State,
        after: State,
        events: Sequence[Event],
    ) -> str | None:
        """The reason text if `condition` of `player` is met by this step, else None.

        `events` are already filtered: a player's own events are removed unless the condition says `by: any`.
        """

    def is_over(self, state: State) -> bool:
        """Whether the game has ended (e.g. all of one side destroyed)."""

    # Optional: `resigned(state, player) -> state`, what a resignation does to the game (DESIGN §4.8): applied
    # once, to the state at the firm point when the resign agreement lands; a ruleset without it leaves the
    # resigned player's side to what it does for a player without orders.
