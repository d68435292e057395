"""The relationship matrix of `dow/1` (seed 001 "The Relationship States", DESIGN §7.2): a pure state machine.

Each pair of powers is in one state: WAR 1, HOSTILE 2, NEUTRAL 3 (all pairs at the start), FRIENDLY 4,
ALLIED 5, or LIMBO `*`. Two matrices are kept:

* `recognised`: what global press has made publicly known, message by message in history order (seed: "Once a
  message is sent in global chat ... it becomes publicly recognized. Automatic state changes such as entering
  hostile/limbo also become publicly recognized at this time. Players may now publicly recognize more state
  changes as if they were in the publicly recognized states"). Press is judged against it.
* `in_force`: what orders are judged by. `realise` copies `recognised` into it at the start of Spring and Fall
  retreats, and at the end of the first half of Spring 1901.

Transitions (each refused with a rule id, the matrix unchanged):

* `propose` (raise, one side) records a standing proposal; `accept` by the other side, of exactly the proposed
  state, raises the pair (seed: "both parties must agree (one party publicly announces their intention, and then
  other party must accepts, the time for the acceptance is the time that the state change becomes publicly
  known)"). A proposal stands until accepted, replaced by its author's next proposal to the same power, or made
  void by any change of the pair.
* `declare` (lower, one side: "To change it to a lower status only one party need make it known"). Declaring
  WAR cascades: each ally C of either side (ALLIED or LIMBO: "limbo ... treated as allies ... with regard to
  triggering") goes to HOSTILE with the other side if it was NEUTRAL or FRIENDLY (WAR and HOSTILE stay), or to
  LIMBO with both sides if it is allied to both.
* `reaffirm` (from LIMBO): the limbo pair becomes ALLIED or HOSTILE, if that creates no conflict.
* The invariant after every transition (seed: "For as long as you remain allied to one country and at-war with
  another, those two may only ever be in a states 1, 2 or *"): whenever A is allied (ALLIED or LIMBO) to C and at
  WAR with B, C–B is WAR, HOSTILE or LIMBO. A raise, an acceptance or a reaffirmation that would break it is
  refused (`press.forced-state`); that includes allying with a power at war while still above HOSTILE with its
  enemy. Forced states persist by themselves: nothing ever raises a pair except its own two powers.

Where the seed is silent (docs/dow.md): raising may skip levels (NEUTRAL -> ALLIED); neither side of a LIMBO
pair may propose or declare towards the other before reaffirming; either side of a LIMBO pair may reaffirm it,
one or several pairs at a time; LIMBO is never proposed nor declared.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping

WAR, HOSTILE, NEUTRAL, FRIENDLY, ALLIED, LIMBO = "WAR", "HOSTILE", "NEUTRAL", "FRIENDLY", "ALLIED", "LIMBO"
STATES = (WAR, HOSTILE, NEUTRAL, FRIENDLY, ALLIED, LIMBO)
LEVEL = {WAR: 1, HOSTILE: 2, NEUTRAL: 3, FRIENDLY: 4, ALLIED: 5}
SYMBOL = {WAR: "1", HOSTILE: "2", NEUTRAL: "3", FRIENDLY: "4", ALLIED: "5", LIMBO: "*"}
FORCED_OK = (WAR, HOSTILE, LIMBO)
REAFFIRMABLE = (ALLIED, HOSTILE)

# rule ids of refused press (DESIGN §8: stable ids)
NO_PROPOSAL = "press.no-proposal"
FORCED_STATE = "press.forced-state"
NOT_A_RAISE = "press.not-a-raise"  # a proposal or acceptance of a lower state: declare it instead
ONE_SIDED_RAISE = "press.one-sided-raise"  # a declaration of a higher state: it needs a proposal and acceptance
NO_CHANGE = "press.no-change"  # a proposal or declaration of the state the pair is already in
IN_LIMBO = "press.in-limbo"
NOT_IN_LIMBO = "press.not-in-limbo"
LIMBO_CHOSEN = "press.limbo-not-chosen"
UNKNOWN_POWER = "press.unknown-power"
SELF = "press.self"


class PressRefused(Exception):
    """A press message the rules refuse: `rule` is its stable id, the text says what and why."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def allied(state: str) -> bool:
    """Seed 001: LIMBO counts as allied "with regard to triggering going to hostile / limbo relations"."""
    return state in (ALLIED, LIMBO)


def moves_as(state: str) -> str:
    """The state orders are judged by: LIMBO "may only execute moves as if you are hostile to both"."""
    return HOSTILE if state == LIMBO else state


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


@dataclass(frozen=True)
class Matrix:
    """A symmetric state per unordered pair of powers: `cells` holds (a, b, state) for every pair, a < b."""

    powers: tuple[str, ...]
    cells: tuple[tuple[str, str, str], ...]

    @classmethod
    def neutral(cls, powers: Iterable[str], state: str = NEUTRAL) -> Matrix:
        """Seed 001: NEUTRAL "is you relationship with all countries at the start of the game" (a gunboat game
        starts, and stays, at WAR: plain Diplomacy, no relationship rules)."""
        names = tuple(sorted(powers))
        return cls(names, tuple((a, b, state) for i, a in enumerate(names) for b in names[i + 1:]))

    def get(self, a: str, b: str) -> str:
        """The state between two different powers."""
        first, second = _key(a, b)
        for x, y, state in self.cells:
            if (x, y) == (first, second):
                return state
        raise KeyError(f"no pair {a}-{b}")

    def with_states(self, changes: Mapping[tuple[str, str], str]) -> Matrix:
        """A new matrix with some pairs (in either order) set."""
        keyed = {_key(a, b): s for (a, b), s in changes.items()}
        return replace(self, cells=tuple((a, b, keyed.get((a, b), s)) for a, b, s in self.cells))

    def others(self, power: str) -> tuple[str, ...]:
        return tuple(p for p in self.powers if p != power)

    def changes_to(self, after: Matrix) -> tuple[tuple[str, str, str, str], ...]:
        """(a, b, before, after) for each pair that differs, in pair order."""
        return tuple((a, b, s, t) for (a, b, s), (_, _, t) in zip(self.cells, after.cells) if s != t)

    def as_data(self) -> dict[str, dict[str, str]]:
        """{power: {other: state}} for every ordered pair, for printing and JSON."""
        return {p: {q: self.get(p, q) for q in self.others(p)} for p in self.powers}


@dataclass(frozen=True)
class Relations:
    """Both matrices and the standing proposals (by, to, state), sorted."""

    in_force: Matrix
    recognised: Matrix
    proposals: tuple[tuple[str, str, str], ...] = ()

    @classmethod
    def start(cls, powers: Iterable[str], state: str | None = None) -> Relations:
        matrix = Matrix.neutral(powers, state or NEUTRAL)
        return cls(matrix, matrix)

    def pending(self) -> tuple[tuple[str, str, str, str], ...]:
        """Recognised changes not yet realised: (a, b, in force, recognised)."""
        return self.in_force.changes_to(self.recognised)

    def proposal(self, by: str, to: str) -> str | None:
        for who, whom, state in self.proposals:
            if (who, whom) == (by, to):
                return state
        return None


# --- transitions ---------------------------------------------------------------------------------------------

def _check_pair(rel: Relations, by: str, to: str) -> None:
    powers = rel.recognised.powers
    for who in (by, to):
        if who not in powers:
            raise PressRefused(UNKNOWN_POWER, f"{who!r} is not a power ({', '.join(powers)})")
    if by == to:
        raise PressRefused(SELF, f"{by} cannot change its relationship with itself")


def _state_name(state: str) -> str:
    return f"{state} ({SYMBOL[state]})" if state in SYMBOL else repr(state)


def _set(rel: Relations, changes: Mapping[tuple[str, str], str]) -> Relations:
    """The recognised matrix with `changes`; proposals between the changed pairs lapse."""
    changed = {_key(a, b) for a, b in changes}
    proposals = tuple(p for p in rel.proposals if _key(p[0], p[1]) not in changed)
    return replace(rel, recognised=rel.recognised.with_states(changes), proposals=proposals)


def propose(rel: Relations, by: str, to: str, state: str) -> Relations:
    """`by` publicly proposes to raise its state with `to` to `state`; it stands until `to` accepts it."""
    _check_pair(rel, by, to)
    current = rel.recognised.get(by, to)
    _raise_allowed(rel, by, to, state, current, "propose")
    proposals = tuple(sorted({p for p in rel.proposals if (p[0], p[1]) != (by, to)} | {(by, to, state)}))
    return replace(rel, proposals=proposals)


def accept(rel: Relations, by: str, proposer: str, state: str) -> Relations:
    """`by` publicly accepts `proposer`'s standing proposal of `state`: the pair is raised, recognised now."""
    _check_pair(rel, by, proposer)
    standing = rel.proposal(proposer, by)
    if standing != state:
        found = f"{proposer}'s standing proposal to {by} is {standing}" if standing else (
            f"{proposer} has no standing proposal to {by}")
        raise PressRefused(NO_PROPOSAL, f"{by} cannot accept {state} from {proposer}: {found} (seed 001: a raise "
                                        "needs one side's public proposal, then the other's acceptance)")
    current = rel.recognised.get(by, proposer)
    _raise_allowed(rel, by, proposer, state, current, "accept")
    return _set(rel, {(by, proposer): state})


def _raise_allowed(rel: Relations, by: str, to: str, state: str, current: str, verb: str) -> None:
    if current == LIMBO:
        raise PressRefused(IN_LIMBO, f"{by} cannot {verb} {state} with {to}: they are in LIMBO; either of them "
                                     "must first reaffirm ALLIED or HOSTILE (seed 001, LIMBO)")
    if state not in LEVEL:
        raise PressRefused(LIMBO_CHOSEN, f"{by} cannot {verb} {state} with {to}: LIMBO is only entered when two "
                                         "allies go to war (seed 001)")
    if LEVEL[state] == LEVEL[current]:
        raise PressRefused(NO_CHANGE, f"{by} cannot {verb} {_state_name(state)} with {to}: they are already "
                                      f"{_state_name(current)}")
    if LEVEL[state] < LEVEL[current]:
        raise PressRefused(NOT_A_RAISE, f"{by} cannot {verb} {_state_name(state)} with {to}: they are "
                                        f"{_state_name(current)}, and only a higher state is proposed and "
                                        "accepted (a lower one is declared by one side)")
    _no_conflict(rel.recognised.with_states({(by, to): state}), {_key(by, to)}, f"{by} cannot {verb} {state} "
                                                                                   f"with {to}")


def declare(rel: Relations, by: str, to: str, state: str) -> Relations:
    """`by` publicly lowers its state with `to`; WAR cascades to both sides' allies (seed 001, WAR)."""
    _check_pair(rel, by, to)
    current = rel.recognised.get(by, to)
    if current == LIMBO:
        raise PressRefused(IN_LIMBO, f"{by} cannot declare {state} on {to}: they are in LIMBO; either of them "
                                     "must first reaffirm ALLIED or HOSTILE (seed 001, LIMBO)")
    if state not in LEVEL:
        raise PressRefused(LIMBO_CHOSEN, f"{by} cannot declare LIMBO: it is only entered when two allies go to "
                                         "war (seed 001)")
    if LEVEL[state] == LEVEL[current]:
        raise PressRefused(NO_CHANGE, f"{by} cannot declare {_state_name(state)} on {to}: they are already "
                                      f"{_state_name(current)}")
    if LEVEL[state] > LEVEL[current]:
        raise PressRefused(ONE_SIDED_RAISE, f"{by} cannot declare {_state_name(state)} on {to}: they are "
                                            f"{_state_name(current)}, and a raise is never announced by one side "
                                            f"only: {by} proposes it and {to} accepts it (seed 001)")
    changes: dict[tuple[str, str], str] = {(by, to): state}
    if state == WAR:
        changes.update(cascade(rel.recognised.with_states(changes), by, to))
    return _set(rel, changes)


def cascade(matrix: Matrix, a: str, b: str) -> dict[tuple[str, str], str]:
    """The automatic changes when `a` and `b` are at war (seed 001, WAR): each ally C of one side goes to
    HOSTILE with the other side (from NEUTRAL or FRIENDLY; WAR and HOSTILE stay), or to LIMBO with both sides
    when C is allied to both."""
    changes: dict[tuple[str, str], str] = {}
    for warrior, enemy in ((a, b), (b, a)):
        for c in matrix.powers:
            if c in (a, b) or not allied(matrix.get(warrior, c)):
                continue
            if allied(matrix.get(c, enemy)):
                changes[_key(c, warrior)] = LIMBO
                changes[_key(c, enemy)] = LIMBO
            elif matrix.get(c, enemy) in (NEUTRAL, FRIENDLY) and _key(c, enemy) not in changes:
                changes[_key(c, enemy)] = HOSTILE
    return changes


def reaffirm(rel: Relations, by: str, choices: Mapping[str, str]) -> Relations:
    """`by` publicly reaffirms ALLIED or HOSTILE with powers it is in LIMBO with (seed 001: "You may exit limbo
    by publicly reaffirming Allies / Hostilities with counties in such a way that does not create any more
    conflicts")."""
    if not choices:
        raise PressRefused(NOT_IN_LIMBO, f"{by} reaffirms nothing")
    changes: dict[tuple[str, str], str] = {}
    for other, state in sorted(choices.items()):
        _check_pair(rel, by, other)
        if rel.recognised.get(by, other) != LIMBO:
            raise PressRefused(NOT_IN_LIMBO, f"{by} cannot reaffirm {other}: they are "
                                             f"{_state_name(rel.recognised.get(by, other))}, not in LIMBO")
        if state not in REAFFIRMABLE:
            raise PressRefused(LIMBO_CHOSEN, f"{by} may reaffirm only ALLIED or HOSTILE with {other}, not {state}")
        changes[(by, other)] = state
    after = rel.recognised.with_states(changes)
    _no_conflict(after, {_key(*k) for k in changes}, f"{by} cannot reaffirm "
                 + ", ".join(f"{s} with {o}" for o, s in sorted(choices.items())))
    return _set(rel, changes)


def conflicts(matrix: Matrix) -> list[tuple[str, str, str]]:
    """(a, c, b) for every breach of the invariant: `a` allied to `c` and at WAR with `b`, and c–b not WAR,
    HOSTILE or LIMBO."""
    found = []
    for a in matrix.powers:
        for c in matrix.others(a):
            if not allied(matrix.get(a, c)):
                continue
            for b in matrix.others(a):
                if b != c and matrix.get(a, b) == WAR and matrix.get(c, b) not in FORCED_OK:
                    found.append((a, c, b))
    return found


def _no_conflict(matrix: Matrix, changed: set[tuple[str, str]], what: str) -> None:
    for a, c, b in conflicts(matrix):
        if {_key(a, c), _key(a, b), _key(c, b)} & changed:
            raise PressRefused(FORCED_STATE, f"{what}: while {a} is allied to {c} and at war with {b}, {c} and {b} "
                                             f"may only be WAR, HOSTILE or LIMBO (they would be "
                                             f"{matrix.get(c, b)}; seed 001, WAR)")


def realise(rel: Relations) -> tuple[Relations, tuple[tuple[str, str, str, str], ...]]:
    """Seed 001: at the start of Spring and Fall retreats (and for the second half of Spring 1901) "any publicly
    recognized changes will trigger states to change to the new relationships". Returns the changes made."""
    changes = rel.pending()
    return replace(rel, in_force=rel.recognised), changes
