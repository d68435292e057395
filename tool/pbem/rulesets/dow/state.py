"""The state of a `dow/1` game (DESIGN §7.2): board, relationships, sanctions and outcome, all immutable.

`phase` is the phase to be played next (like the engine's current phase): the state before S1901M has
phase S1901M. `apply(state, phase, ...)` returns the state at the next phase.

Setup (game.yaml `setup`, schema pbem/dow/setup/1): `map: standard`, optional `start` (S1901P, the default, or
S1901M to skip the press-only first half), `victory` (centres to win, default 18), `director` (the player id
that may issue and lift warnings), `edition` (the rulebook where the Diplomacy Adjudicator Test Cases offer
alternatives: "2023", the default and DATC v3.0's preference, or "2000"), `invite_hash` (the invite code as
"sha256:SALT:DIGEST", see invite.py), `civil_disorder_after` (a power that misses this many movement phases in a
row goes into civil disorder; default 2; a missed retreat or adjustment, forced disbands included, never counts),
`press` ("full", the default, or "none": a gunboat game, no press at all and no relationship rules).
The players must include the seven powers by their ids (austria, england, france, germany, italy, russia,
turkey); any other player id is a seat without a power (a director who does not play).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pbem.rulesets.base import Point
from pbem.rulesets.dow import engine, invite, phases
from pbem.rulesets.dow.board import Board
from pbem.rulesets.dow.relations import WAR, Relations

POWERS = ("austria", "england", "france", "germany", "italy", "russia", "turkey")
DEFAULT_VICTORY = 18
SETUP_KEYS = ("map", "start", "victory", "director", "edition", "invite_hash", "civil_disorder_after", "press")
DEFAULT_MISSED = 2  # movement phases missed in a row before civil disorder
VICTORY, DRAW = "victory", "draw"
OFFENCES_FOR_DISORDER = 2


@dataclass(frozen=True)
class DowState:
    """The whole game between two phases.

    `gifts`: recognised gifts not yet realised, (giver, taker, province) in recognition order; `offences`:
    (power, count) for powers warned at least once, sorted; `disorder`: powers put into civil disorder by a
    second offence (they give no more orders; their units hold); `entering`: powers whose second offence was
    recorded during the phase being played, in civil disorder from the next one (both paths alike: forbidden
    orders and the director's warnings); `draw_votes`: powers whose draw vote stands;
    `outcome`: None while the game runs, else ("victory", (winner,)) or ("draw", (powers sharing it)).

    The director's limits (seed 001 "a one time warning for an honest mistake"): `voids` holds the orders voided
    in this and the previous game year, (phase, power, order, warned) with `warned` True for a forbidden order
    (warned already, automatically); `cited` the offences a director's warning cited ("order PHASE POWER ORDER",
    "press POWER N"), each at most once; `said` counts each author's public messages recognised so far, so a
    warning may cite one by its number. `ready`: powers that said they are done with the press-only S1901P.
    """

    phase: Point | None
    board: Board
    relations: Relations
    powers: tuple[str, ...] = POWERS
    players: tuple[str, ...] = POWERS
    director: str | None = None
    victory: int = DEFAULT_VICTORY
    engine: str = ""
    gifts: tuple[tuple[str, str, str], ...] = ()
    offences: tuple[tuple[str, int], ...] = ()
    disorder: tuple[str, ...] = ()
    draw_votes: tuple[str, ...] = ()
    outcome: tuple[str, tuple[str, ...]] | None = None
    invite_hash: str | None = None
    edition: str = "2023"
    entering: tuple[str, ...] = ()
    voids: tuple[tuple[str, str, str, bool], ...] = ()
    cited: tuple[str, ...] = ()
    said: tuple[tuple[str, int], ...] = ()
    ready: tuple[str, ...] = ()
    resigned: tuple[str, ...] = ()  # powers whose player resigned: in civil disorder for good (no lift ends it)
    missed: tuple[tuple[str, int], ...] = ()  # (power, movement phases missed in a row) for powers missing any
    missed_limit: int = DEFAULT_MISSED
    gunboat: bool = False  # `press: none`: no press, every pair at WAR (no relationship rules)
    # the record of each player who left a power that a replacement took over, kept apart from the new player's:
    # (power, the phase of the takeover, his warnings, his movement phases missed in a row), in takeover order
    former: tuple[tuple[str, str, int, int], ...] = ()

    def offences_of(self, power: str) -> int:
        return dict(self.offences).get(power, 0)

    def in_disorder(self, power: str) -> bool:
        return power in self.disorder

    def with_offences(self, power: str, count: int) -> DowState:
        """A new state where `power` has `count` offences (seed 001: "a one time warning for an honest mistake,
        and then sent into CD for the second offense"). A second offence puts the power into civil disorder from
        the next phase (`entering`, see `begin_disorder`), whichever path recorded it; fewer than two (a lifted
        warning) takes it out at once."""
        offences = dict(self.offences)
        if count > 0:
            offences[power] = count
        else:
            offences.pop(power, None)
        disorder, entering = set(self.disorder), set(self.entering)
        if count >= OFFENCES_FOR_DISORDER:
            if power not in disorder:
                entering.add(power)
        elif power not in self.resigned:
            disorder.discard(power)
            entering.discard(power)
        return replace(self, offences=tuple(sorted(offences.items())), disorder=tuple(sorted(disorder)),
                       entering=tuple(sorted(entering)))

    def begin_disorder(self) -> tuple[DowState, tuple[str, ...]]:
        """At the end of a phase: the powers `entering` civil disorder are in it from now on."""
        if not self.entering:
            return self, ()
        entering = tuple(p for p in self.powers if p in self.entering)
        return replace(self, disorder=tuple(sorted({*self.disorder, *entering})), entering=()), entering

    def after_movement(self, power: str, gave: bool) -> DowState:
        """`power` gave orders in a movement phase (`gave`: the count of missed ones starts again) or missed it
        (no orders sealed, or sealed and withheld, settled by an nmr): the `missed_limit`-th movement phase missed
        in a row puts it into civil disorder from the next phase, as a second offence does."""
        missed = dict(self.missed)
        count = 0 if gave else missed.get(power, 0) + 1
        if count:
            missed[power] = count
        else:
            missed.pop(power, None)
        out = replace(self, missed=tuple(sorted(missed.items())))
        if count >= self.missed_limit and power not in self.disorder:
            out = replace(out, entering=tuple(sorted({*self.entering, power})))
        return out

    def withheld_counted(self, power: str, before: DowState) -> tuple[DowState, bool]:
        """`power`'s movement phase counted as missed after all: its set was withheld and opened without it (the
        orders stood, the withholding did not pay). From `before`'s count; at the limit it is in civil disorder
        from the next phase at once (True)."""
        missed = dict(self.missed)
        missed[power] = dict(before.missed).get(power, 0) + 1
        out = replace(self, missed=tuple(sorted(missed.items())))
        if missed[power] >= self.missed_limit and power not in out.disorder:
            return replace(out, disorder=tuple(sorted({*out.disorder, power}))), True
        return out, False

    def said_by(self, author: str) -> int:
        """How many public messages of `author` were recognised so far."""
        return dict(self.said).get(author, 0)

    def with_said(self, author: str) -> DowState:
        """One more public message of `author` recognised."""
        said = dict(self.said)
        said[author] = said.get(author, 0) + 1
        return replace(self, said=tuple(sorted(said.items())))

    def survivors(self) -> tuple[str, ...]:
        """Powers still in the game (units or centres), in table order."""
        return tuple(p for p in self.powers if self.board.is_alive(p))


def initial_state(setup: Mapping[str, Any], players: Sequence[str]) -> DowState:
    """The state before the first phase from game.yaml `setup`; ValueError naming the bad field otherwise."""
    if not isinstance(setup, Mapping):
        raise ValueError("setup must be a mapping")
    unknown = sorted(str(k) for k in setup if k not in SETUP_KEYS and not str(k).startswith("x-"))
    if unknown:
        raise ValueError(f"setup: unknown field {', '.join(unknown)} (known: {', '.join(SETUP_KEYS)})")
    if setup.get("map", "standard") != "standard":
        raise ValueError(f"setup.map must be 'standard', got {setup.get('map')!r}")
    first = phases.first_step(setup)
    victory = setup.get("victory", DEFAULT_VICTORY)
    if not isinstance(victory, int) or isinstance(victory, bool) or not 2 <= victory <= 34:
        raise ValueError(f"setup.victory must be a whole number of centres 2..34, got {victory!r}")
    missing = [p for p in POWERS if p not in players]
    if missing:
        raise ValueError(f"the players must include the seven powers; missing: {', '.join(missing)}")
    director = setup.get("director")
    if director is not None and director not in players:
        raise ValueError(f"setup.director {director!r} is not a player ({', '.join(players)})")
    edition = setup.get("edition", "2023")
    if edition not in engine.EDITIONS:
        raise ValueError(f"setup.edition must be one of {', '.join(engine.EDITIONS)}, got {edition!r}")
    code_hash = setup.get("invite_hash")
    if code_hash is not None and not invite.well_formed(code_hash):
        raise ValueError("setup.invite_hash must be 'sha256:' + 32 hex digits of salt + ':' + 64 hex digits")
    missed_limit = setup.get("civil_disorder_after", DEFAULT_MISSED)
    if not isinstance(missed_limit, int) or isinstance(missed_limit, bool) or not 1 <= missed_limit <= 20:
        raise ValueError(f"setup.civil_disorder_after must be a number of movement phases 1..20, got "
                         f"{missed_limit!r}")
    press = setup.get("press", "full")
    if press not in ("full", "none"):
        raise ValueError(f"setup.press must be 'full' or 'none' (a gunboat game), got {press!r}")
    info = engine.standard_map()
    if info.powers != POWERS:  # pragma: no cover - a different engine map
        raise ValueError(f"the engine's standard map has powers {info.powers}")
    return DowState(
        phase=first,
        board=info.start,
        relations=Relations.start(POWERS, WAR if press == "none" else None),
        powers=POWERS,
        players=tuple(players),
        director=director,
        victory=victory,
        engine=engine.engine_name(),
        invite_hash=code_hash,
        edition=edition,
        missed_limit=missed_limit,
        gunboat=press == "none",
    )
