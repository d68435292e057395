"""What a ruleset is (DESIGN §7): a pure module the protocol drives. No git, files, clock or printing.

The protocol (pbem.protocol) knows nothing about hexes or provinces. It asks the ruleset for the order of game
time, the state at the start, what each player does by default, whether an action is legal, what applying a
step's actions yields (new state + events), and whether a player's break condition is met by those events.

What a ruleset may do beyond the required `Ruleset` methods is grouped into capabilities, each a Protocol below
reached as an attribute of the ruleset (`ruleset.dice`, `ruleset.seeking`, `ruleset.press`, ...), None where the
ruleset has none: the protocol asks `if ruleset.seeking is not None`, never for a method by name. A ruleset
inherits `Capabilities` (all None) and gives the object of each capability it has (the built-ins: themselves).

Game time: a ruleset parses its own time strings ("1.12.move", "S1901M") into a `Point`: any tuple that orders
correctly with `<`. The protocol only compares, hashes and formats points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, Union, runtime_checkable

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
    agreement: str  # the id of the nmr, resign or seat agreement
    kind: str = "nmr"

    def text(self) -> str:
        """E.g. "kli's reveal withheld, nmr fed-0003"."""
        return f"{self.player}'s reveal withheld, {self.kind} {self.agreement}"


Roll = Union[int, Withheld]  # what `Ruleset.apply` gets for each dice ref: the die, or a lost die


@dataclass(frozen=True)
class Ambiguous:
    """A plan that cannot be resolved to one action here (ties): the owner must choose one of `options`, each
    an action's `do` mapping (DESIGN §4.5, seed §5.C special break)."""

    unit: str | None
    options: tuple[Mapping[str, Any], ...]


class Ruleset(Protocol):
    """The contract between the protocol and a game's rules. All methods are pure; what is optional is a
    capability (below), None where the ruleset has none."""

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
              rolls: Mapping[str, Roll] | None = None) -> tuple[State, list[Event]]:
        """Resolve all actions of one step together; return the new state and what happened. `rolls` maps each
        dice ref that `dice.dice_needed` named to its die result (DESIGN §5), or to a `Withheld` for a die whose
        roller never revealed (the roll is lost: the ruleset scores it as a miss)."""

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

    # --- what the files of a game are checked against (DESIGN §2), None: the entry's own schema only ------
    @property
    def setup_schema(self) -> str | None:
        """The schema of game.yaml `setup`."""

    @property
    def action_schema(self) -> str | None:
        """The schema of an entry's `do`."""

    @property
    def condition_schema(self) -> str | None:
        """The schema of a variable break condition."""

    @property
    def uses_horizons(self) -> bool:
        """Whether players give orders ahead, through a horizon (DESIGN §4.2); False where every step is sealed
        (dow/1): nobody is then awaited for orders."""

    # --- the capabilities (below), None where the ruleset has none ----------------------------------------
    @property
    def plans(self) -> Plans | None: ...
    @property
    def dice(self) -> Dice | None: ...
    @property
    def declared(self) -> Declared | None: ...
    @property
    def sealing(self) -> Sealed | None: ...
    @property
    def press(self) -> Press | None: ...
    @property
    def orders(self) -> Orders | None: ...
    @property
    def seeking(self) -> Seeking | None: ...
    @property
    def audit(self) -> Audit | None: ...
    @property
    def seats(self) -> Seats | None: ...
    @property
    def positions(self) -> Positions | None: ...
    @property
    def foresight(self) -> Foresight | None: ...
    @property
    def uses(self) -> Uses | None: ...
    @property
    def armed(self) -> Armed | None: ...
    @property
    def summary(self) -> Summary | None: ...


# --- capabilities ----------------------------------------------------------------------------------------------
# Each is checked at runtime by tests/test_ruleset_contract.py for the built-in rulesets (runtime_checkable:
# every member present) and statically by mypy (the built-ins return themselves typed as the capability).

@runtime_checkable
class Plans(Protocol):
    """Variable actions (DESIGN §4.5, seed §5.B): `plans` entries {unit, from, until, do} the ruleset resolves."""

    @property
    def plan_schema(self) -> str:
        """The schema of a plan's `do`."""

    def resolve_plan(self, state: State, point: Point, player: str,
                     plan: Mapping[str, Any]) -> "list[Action] | Ambiguous | None":
        """What a plan does at `point`: the actions, an Ambiguous with the tied options, or None when it does not
        act here."""

    def plan_error(self, plan: Mapping[str, Any]) -> str | None:
        """Why a plan can never act (beyond its schema), or None."""


@runtime_checkable
class Dice(Protocol):
    """Steps resolved with dice (DESIGN §5)."""

    def dice_needed(self, state: State, point: Point, actions: Sequence[Action]) -> list[str]:
        """The dice refs this step's actions need resolved before `apply`, one die each, e.g.
        "1.4.fire/CA/ph1" (DESIGN §5 `ref`), in a stable order."""

    def dice_sides(self, ref: str) -> int:
        """How many sides the die for `ref` has (6 in tactical/1)."""

    def dice_roller(self, state: State, ref: str) -> str | None:
        """The player whose action the die for `ref` resolves, who alone announces its batch (DESIGN §5 "Who
        rolls"; tactical/1: the owner of the firing unit); None where the rules do not say."""


@runtime_checkable
class Declared(Protocol):
    """Simultaneous steps whose actions are declared before they resolve (DESIGN §4.6, seed §6.C.1, §7)."""

    @property
    def declared_kinds(self) -> Sequence[str]:
        """The event kinds `apply` repeats from `declared_events`: checked for breaks once, when declared."""

    @property
    def reply_kinds(self) -> Sequence[str]:
        """The event kinds known before they are scored (damage): whoever they meet may still act in the step."""

    def declared_events(self, state: State, point: Point, actions: Sequence[Action]) -> list[Event]:
        """Events known as soon as this simultaneous step's actions are declared, before anything is resolved
        (e.g. `fire` declared): they can trigger an action auction (seed §7)."""

    def reply_key(self, event: Event) -> Any:
        """What identifies a reply-kind event across replays of the held step (shown once to those it meets)."""


@runtime_checkable
class Sealed(Protocol):
    """Sealed simultaneous steps (DESIGN §4.7): every player owing input seals it, then (where the step needs
    the content) each reveals, then the step resolves."""

    @property
    def sealed_kinds(self) -> frozenset[str]:
        """The secret kinds that answer a sealed step, and only that."""

    def sealed(self, point: Point) -> bool:
        """Whether `point` is a sealed step."""

    def owing_players(self, state: State, point: Point) -> list[str]:
        """The players who must seal input at `point`, in table order (empty: it resolves without any)."""

    def sealed_kind(self, point: Point) -> str | None:
        """The secret kind that answers the sealed step `point` (a tactical allocation, Diplomacy orders)."""

    def secret_kinds(self, setup: Mapping[str, Any]) -> dict[str, str]:
        """The kinds a player can seal in this game beyond `note`, each with when it is sealed."""

    def reveals_sealed_at(self, state: State, point: Point) -> bool:
        """Whether the step waits for the sealed inputs to be revealed before it resolves (per game)."""

    @property
    def sealed_until_end(self) -> frozenset[str]:
        """The sealed kinds opened whole only once the battle is over (seed 000 §2.C: the energy allocation stays
        secret until the end); empty where every sealed input may be revealed at its step (dow/1)."""

    @property
    def part_name(self) -> str:
        """What the part of a sealed input opened at its step is called in breaks and messages ("speeds")."""

    def opens_part_at(self, state: State, point: Point) -> bool:
        """Whether the step `point` resolves from a part of each sealed input alone, opened by all once all have
        sealed, the rest staying sealed (DESIGN §4.7, seed 000 §2.C: tactical/1 with `speeds: sealed`)."""

    def sealed_part(self, kind: str, value: Any) -> Any:
        """The part of a sealed input of `kind` opened at its step (committed beside its box, DESIGN §4.7), or
        None where nothing of it is opened before the whole."""

    @property
    def replaceable_seals(self) -> bool:
        """Whether a player may replace his sealed input for a step while another player's seal is still owed
        there (DESIGN §4.7; dow/1's orders), rather than his first seal being final (tactical/1 allocations)."""


@runtime_checkable
class Press(Protocol):
    """Public press the ruleset recognises, and the relationships it changes (DESIGN §7.2, seed 001)."""

    @property
    def press_schema(self) -> str:
        """The schema of one press message."""

    def recognise(self, state: State, message: Mapping[str, Any], by: str) -> tuple[State, Any]:
        """One message in recognition order: the new state and None, or the state unchanged and the refusal (a
        str with its rule id in `.rule`)."""

    def recognise_all(self, state: State, messages: Sequence[Any]) -> tuple[State, tuple[Any, ...]]:
        """Every message of a step in order (each a `protocol.model.Message`), in one pass."""

    def relations(self, state: State) -> Any:
        """The relationship matrices (dow/1: `Relations`, `.in_force` and `.recognised`)."""

    def relations_data(self, state: State) -> dict[str, Any]:
        """The relationships as plain data, for `pbem relations`."""

    def ready_owed(self, state: State, point: Point) -> list[str]:
        """At a step that is not sealed, with its press recognised: who it still waits for (a `ready` break
        each; dow/1 S1901P); [] where press alone never holds a step."""


@runtime_checkable
class Orders(Protocol):
    """A sealed set of orders judged order by order (dow/1)."""

    def verdicts(self, state: State, action: Action) -> list[tuple[str, str | None, str, str | None]]:
        """(order, normal form, verdict, reason) per order: "ok", "invalid", "rewritten" or "forbidden"."""


@runtime_checkable
class Seeking(Protocol):
    """Seeking weapons with a sealed target (DESIGN §7.1, seed §2.C)."""

    @property
    def target_kind(self) -> str:
        """The secret kind of a weapon's target, sealed in its launch commit."""

    def launched_unit(self, do: Mapping[str, Any]) -> str | None:
        """The weapon an entry's `do` launches, or None."""

    def impact(self, state: State, unit: str, target: str) -> tuple[State, list[Event]]:
        """`unit` meets its revealed target `target`: the hit."""

    def vanish(self, state: State, unit: str) -> tuple[State, list[Event]]:
        """`unit` is a dummy, or its target was lost (DESIGN §4.8): it is removed, doing nothing."""

    def pursuit_violations(self, track: Sequence[tuple[Point, State, Sequence[Event]]], unit: str,
                           target: str) -> list[Any]:
        """The moves of `unit` (step, state before, its events) that did not pursue `target`: each with `.at`,
        `.made` and `.allowed` (rule `rules.pursuit`)."""

    def sealed_pursuit_answer(self, state: State, point: Point, unit: str, target: Any,
                              options: Sequence[Mapping[str, Any]]) -> dict[str, str] | None:
        """The option of a sealed pursuit's special break that pursues `target`, the owner's own sealed target
        (seed 000 §2.C, §5.C; DESIGN §4.5): what his pbem answers for him; None when no option does."""


@runtime_checkable
class Audit(Protocol):
    """A sealed energy allocation audited against what the player's units did (seed §2.C; tactical/1)."""

    @property
    def allocation_schema(self) -> str:
        """The schema of a sealed allocation."""

    def turn_of(self, point: Point) -> int:
        """The turn a step belongs to."""

    def turn_ended(self, point: Point | None, turn: int) -> bool:
        """Whether `turn` is over at the firm point `point` (None: the game is over)."""

    def turn_record(self, state: State, player: str, turn: int) -> Any:
        """The public record of `player`'s units in `turn` (`.units`, each `.unit`, `.speeds`, `.fired`)."""

    def audit_allocation(self, setup: Mapping[str, Any], record: Any, allocation: Mapping[str, Any]) -> list[str]:
        """Why the allocation does not pay for the record, one reason each ([]: it does)."""

    def seal_errors(self, setup: Mapping[str, Any], kind: str, player: str,
                    value: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(unit, reason) for what is wrong with an input before it is sealed (checked before sealing)."""

    def sealed_input_error(self, kind: str, point: Point, value: Any) -> str | None:
        """Why a revealed input of `kind` cannot answer the step `point` (an allocation for another turn)."""

    def audit_plot(self, setup: Mapping[str, Any], allocation: Mapping[str, Any]) -> list[str]:
        """Why an allocation revealed before its turn is played is wrong already, from the allocation alone (a
        total above power, a sealed speed above the top speed; seed §2.C), one reason each ([]: nothing)."""

    def audit_battle(self, setup: Mapping[str, Any], records: Sequence[Any],
                     allocations: Mapping[int, Mapping[str, Any]]) -> list[tuple[int, str, str]]:
        """(turn, rule id, reason) for each fault of one player's opened allocations (by turn; a turn missing is
        unknown) read together against his turn records in turn order (`turn_record`): what no one turn's audit
        can see (seed §2.C "verified at the conclusion of the battle"). Only ever finds more as more are opened."""


@runtime_checkable
class Seats(Protocol):
    """What a seat leaving or changing hands does to the game (DESIGN §4.8): applied once, to the state at the
    firm point when the agreement lands, and again at that point by every later replay."""

    def resigned(self, state: State, player: str) -> State:
        """`player` resigned (tactical: his units leave the map; Diplomacy: civil disorder)."""

    def replaced(self, state: State, player: str) -> State:
        """`player`'s seat was given to a new holder (Diplomacy lifts the civil disorder)."""


@runtime_checkable
class Positions(Protocol):
    """A public position written into status.yaml and re-adjudicated by the verifier (dow/1)."""

    def position(self, state: State) -> dict[str, Any]:
        """The position as plain data (dow/1: units, dislodged, centres, influence)."""

    def position_mismatch(self, state: State, recorded: Mapping[str, Any]) -> Any:
        """None if `recorded` is the position of `state`, else the refusal (rule `result.mismatch`)."""


@runtime_checkable
class Foresight(Protocol):
    """What an entry's author alone could know (DESIGN §4.2 "Entries and time"). Replay judges an entry with
    `legal` on the state it meets, and an illegal one is void (never a finding). A ruleset with these also has
    each entry judged when it is written, in its author's view: the state at the firm point carried forward by
    his own actions only (pbem.protocol.legality); a refusal there is a finding on his commit. Without them only
    entries at the firm step itself are judged when written."""

    def own_view(self, state: State, player: str) -> Any:
        """`player`'s view at the firm point (opaque to the protocol)."""

    def own_state(self, view: Any) -> State:
        """The state inside a view, for the player's plans and defaults."""

    def own_step(self, view: Any, point: Point, actions: Sequence[Action]) -> Any:
        """The view after `point`, carried by the player's own actions there (never by anybody else's)."""

    def own_legality(self, view: Any, action: Action) -> str | None:
        """The reason if the author could have known `action` to be illegal, else None (others may still make
        it impossible: replay then voids it)."""

    def own_warnings(self, before: Any, after: Any, point: Point, actions: Sequence[Action],
                     plans: Sequence[Mapping[str, Any]]) -> list[str]:
        """What the author is told (never refused) about his own step from `before` to `after` (`pbem check`)."""


@runtime_checkable
class Uses(Protocol):
    """What one entry uses of a step, so that a step's entries are judged together (tactical energy, slots)."""

    def slot_of(self, do: Mapping[str, Any]) -> tuple[str, ...] | None:
        """The slot an action fills (one per unit, slot and step; ph1 and ph2 may both fire), None: its verb."""

    def spend(self, judged: Any, action: Action) -> Any:
        """The state (or own view) the step's next entries are judged against, less what `action` spends."""


@runtime_checkable
class Armed(Protocol):
    """Conditions written while they hold (DESIGN §4.3: met at the next step they still hold)."""

    def condition_holds(self, condition: Mapping[str, Any], player: str, state: State) -> str | None:
        """The reason text if the situation a condition watches for already holds in `state`, else None."""


@runtime_checkable
class Summary(Protocol):
    """What a reader is told of the state (`pbem log`, `pbem summary`, the status screen; tactical/1)."""

    def state_summary(self, state: State) -> list[dict[str, Any]]:
        """One plain mapping per unit: id, owner, hex, facing, speed, shields, hull, status."""

    def shots_report(self, state: State) -> list[str]:
        """One line per scored shot so far, in game order."""

    def outcome(self, state: State) -> str:
        """Who won, or a draw, and why (asked once the game is over)."""


class Capabilities:
    """What a ruleset inherits: no capability (each None), no schemas, horizons used. A ruleset overrides the
    properties of the capabilities it has."""

    setup_schema: str | None = None
    action_schema: str | None = None
    condition_schema: str | None = None
    uses_horizons: bool = True

    @property
    def plans(self) -> Plans | None:
        return None

    @property
    def dice(self) -> Dice | None:
        return None

    @property
    def declared(self) -> Declared | None:
        return None

    @property
    def sealing(self) -> Sealed | None:
        return None

    @property
    def press(self) -> Press | None:
        return None

    @property
    def orders(self) -> Orders | None:
        return None

    @property
    def seeking(self) -> Seeking | None:
        return None

    @property
    def audit(self) -> Audit | None:
        return None

    @property
    def seats(self) -> Seats | None:
        return None

    @property
    def positions(self) -> Positions | None:
        return None

    @property
    def foresight(self) -> Foresight | None:
        return None

    @property
    def uses(self) -> Uses | None:
        return None

    @property
    def armed(self) -> Armed | None:
        return None

    @property
    def summary(self) -> Summary | None:
        return None


# Every capability: the attribute that reaches it and the Protocol it satisfies.
CAPABILITIES: dict[str, type] = {
    "plans": Plans, "dice": Dice, "declared": Declared, "sealing": Sealed, "press": Press, "orders": Orders,
    "seeking": Seeking, "audit": Audit, "seats": Seats, "positions": Positions, "foresight": Foresight,
    "uses": Uses, "armed": Armed, "summary": Summary,
}


class SetupError(ValueError):
    """A game.yaml `setup` a ruleset refuses for its own rule (not `schema.invalid`): `rule` is its id and
    `path` the setup field it is about (("damage_allocation", "rolls", 2)), so the reader can name its line."""

    def __init__(self, text: str, rule: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(text)
        self.rule = rule
        self.path = path


class Refusal(str):
    """A reason (a str, so it reads like any reason) that names its own rule id in `.rule`; the protocol reads
    it (protocol/legality.py), its default being `rules.illegal-action` (DESIGN §8)."""

    rule: str

    def __new__(cls, text: str, rule: str) -> Refusal:
        made = super().__new__(cls, text)
        made.rule = rule
        return made
