"""The protocol's data: what players wrote (entries, horizons, break conditions) and what replay derives
(breaks, the firm point, who is in control). Frozen dataclasses; no git, files or printing.

Vocabulary follows seed 000: a *break* is a point where some player gets control back; the *firm* point is
where replay stopped, the earliest pending break point (seed §3.C); the *horizon* (`through`) is how far a
player has given all his actions (DESIGN §4.1).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from pbem.formats.canonical import dumps as canonical_dumps
from pbem.rulesets.base import Action, Event, Point, State, Withheld

# Break kinds written to status.yaml `pending[].kind`.
HORIZON = "horizon"  # DESIGN §4.2 point 1: his horizon ends before this step ("needs orders")
CONDITION = "condition"  # point 2: a variable break condition met by this step's events
AT = "at"  # an explicit break point ({at: "1.12.move"}) reached
SEALED = "sealed"  # point 5: a sealed simultaneous step still lacks this player's sealed input (§4.7)
REPLY = "reply"  # seed §6.C.1: damage known at a simultaneous step, not yet scored: the damaged may still act there
CLARIFY = "clarify"  # point 3: a plan is ambiguous here; its owner picks one of the options (§4.5)
READY = "ready"  # a press-only step waits for this player's word that he is done (dow/1 S1901P: `ready`)
ROLL = "roll"  # point 4: dice this step needs are not rolled yet: the firer announces them in his turn (§5)
# What is owed out of turn, before any turn is taken (DESIGN §5, §6): a dice part (protocol.dice.DICE), a reveal
# (protocol.secrets.SECRET), a sealed input, the word that one is done (tests/test_judge_rules.py pins the names)
OWED = ("dice", "secret", SEALED, READY)


@dataclass(frozen=True)
class Entry:
    """One explicit action as written in a report file (DESIGN §2: {at, by, unit?, do})."""

    at: Point
    at_text: str
    by: str
    unit: str | None
    do: Mapping[str, Any]
    file: str
    line: int
    key: bytes = field(default=b"", compare=False, repr=False)
    notes: Mapping[str, Any] = field(default_factory=dict, repr=False)  # its `x-` fields, the author's too

    def __post_init__(self) -> None:
        if not self.key:  # computed once: entries are compared at every commit
            object.__setattr__(self, "key", entry_identity(self.at_text, self.by, self.unit, self.do, self.notes))

    def identity(self) -> bytes:
        """What makes two entries the same action, wherever in the file they stand."""
        return self.key

    def at_line(self, line: int) -> "Entry":
        """This entry standing at another line of its file (a line inserted or removed above it)."""
        if line == self.line:
            return self
        # a copy of the fields as they are: dataclass' frozen __init__ would compute nothing new, at twice the cost
        moved = object.__new__(Entry)
        moved.__dict__.update(self.__dict__)
        moved.__dict__["line"] = line
        return moved


def entry_identity(at: str, by: str, unit: str | None, do: Mapping[str, Any],
                   notes: Mapping[str, Any] | None = None) -> bytes:
    """An entry's identity: its action (at, by, unit, do) and its `x-` fields, which belong to its author as
    much as the action does (DESIGN §2 ownership, §4.4 firm): whoever may not edit the action may not edit
    them either. Without `x-` fields the identity is the action's alone."""
    data = {"at": at, "by": by, "unit": unit, "do": dict(do)}
    if notes:
        data.update(notes)
    return canonical_dumps(data)


def notes_of(item: Mapping[str, Any]) -> dict[str, Any]:
    """The `x-` fields of an entry as written (schemas allow them on every entry)."""
    return {k: v for k, v in item.items() if k.startswith("x-")}


# Unique within a process and, starting at random, across the processes whose states meet in the cache.
_serials = itertools.count(int.from_bytes(os.urandom(6), "big") << 8 | 1)


@dataclass(frozen=True)
class ReportFile:
    """The entries of one report file, indexed by game time once (files are cached by content).

    A file read on top of an earlier version (the common case: a turn appends its entries) records that
    version's `serial` as `base`, and the entries it took out of it and put in (`removed`, `added`), so what
    changed is known without comparing the files: a commit costs what it changed, not the file's size (DESIGN
    §9). Only the serial is kept, never the old version itself."""

    entries: tuple[Entry, ...]
    by_step: Mapping[Point, tuple[Entry, ...]] = field(default_factory=dict, compare=False, repr=False)
    source: bytes = field(default=b"", compare=False, repr=False)  # the file as read, when read from bytes
    base: int = field(default=0, compare=False, repr=False)  # serial of the version this one was read on
    serial: int = field(default=0, compare=False, repr=False)
    removed: tuple[Entry, ...] = field(default=(), compare=False, repr=False)  # entries of `base` taken out
    added: tuple[Entry, ...] = field(default=(), compare=False, repr=False)  # and those put in

    def __post_init__(self) -> None:
        object.__setattr__(self, "serial", next(_serials))
        if self.by_step:
            return
        index: dict[Point, list[Entry]] = {}
        for entry in self.entries:
            index.setdefault(entry.at, []).append(entry)
        object.__setattr__(self, "by_step", {k: tuple(v) for k, v in index.items()})

    def appended(self, more: tuple[Entry, ...], source: bytes) -> "ReportFile":
        """This file with `more` entries after its last one; indexes only what was appended."""
        index = dict(self.by_step)
        for entry in more:
            index[entry.at] = index.get(entry.at, ()) + (entry,)
        return ReportFile(self.entries + more, index, source, self.serial, added=more)

    def edited(self, entries: tuple[Entry, ...], removed: tuple[Entry, ...], added: tuple[Entry, ...],
               source: bytes, moved: bool) -> "ReportFile":
        """This file with `removed` taken out and `added` put in, giving `entries`. `moved`: entries other than
        those changed stand at other lines now; the index is then made afresh, else only the steps touched."""
        if moved or len(removed) + len(added) > 64:
            return ReportFile(entries, source=source, base=self.serial, removed=removed, added=added)
        index = dict(self.by_step)
        gone = {id(e) for e in removed}
        for at in {e.at for e in removed} | {e.at for e in added}:
            kept = [e for e in index.get(at, ()) if id(e) not in gone]
            step = tuple(sorted(kept + [e for e in added if e.at == at], key=lambda e: e.line))
            if step:
                index[at] = step
            else:
                index.pop(at, None)
        return ReportFile(entries, index, source, self.serial, removed=removed, added=added)

    def changes_since(self, before: "ReportFile | None") -> tuple[tuple[Entry, ...], tuple[Entry, ...]] | None:
        """(removed, added) if this file was read on top of `before`, else None (compare the two whole)."""
        if before is not None and self.base and self.base == before.serial:
            return self.removed, self.added
        return None


@dataclass(frozen=True)
class PlayerInputs:
    """A player's standing inputs from players/<id>.yaml (DESIGN §4.1)."""

    through: Point | None = None
    through_text: str | None = None
    breaks: tuple[Mapping[str, Any], ...] = ()
    plans: tuple[Mapping[str, Any], ...] = ()
    file: str | None = None


_NO_INPUTS = PlayerInputs()  # a player who wrote nothing yet (frozen: one shared value, not one per look-up)


@dataclass(frozen=True)
class Rolled:
    """Where a dice ref stands: the batch announced for it, its roller, and its result once rolled."""

    batch: str
    roller: str
    result: int | None
    sides: int = 0  # the batch's die; replay uses a result only if it is the die the ruleset names for the ref
    lost: Withheld | None = None  # its roller's reveal was withheld and settled by an agreement: never rolled


@dataclass(frozen=True)
class SealedInput:
    """A player's sealed input for a sealed simultaneous step (§4.7): the secret, and its content once revealed."""

    secret: str
    value: Any = None
    revealed: bool = False
    owner: str = ""
    withheld: str = ""  # the nmr or resign agreement that settled its reveal, owed and never made: it is lost
    part: Any = None  # the part opened alone at its step, the rest staying sealed (a tactical allocation's speeds)


@dataclass(frozen=True)
class Message:
    """One press message (DESIGN §2 press/<author>.yaml); messages are recognised in the order of the commits that
    added them (§7.2)."""

    by: str
    at: str | None
    body: Mapping[str, Any]
    file: str
    line: int


@dataclass(frozen=True)
class PressFile:
    """One press file's messages in file order (DESIGN §2 press/<author>.yaml, append-only).

    As with `ReportFile`, a version read as an earlier one plus appended lines records that version's `serial`
    as `base`, so the messages a commit appended are known without comparing the files (DESIGN §11); `source`
    is the file as read, kept only when it is in pbem's own layout (one message per line)."""

    messages: tuple[Message, ...]
    source: bytes = field(default=b"", compare=False, repr=False)
    base: int = field(default=0, compare=False, repr=False)
    serial: int = field(default=0, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "serial", next(_serials))

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def appended(self, more: tuple[Message, ...], source: bytes) -> "PressFile":
        """This file with `more` messages after its last one."""
        return PressFile(self.messages + more, source, self.serial)

    def added_since(self, before: "PressFile | None") -> tuple[Message, ...] | None:
        """The messages appended to `before` (all of them when there was no `before`), or None when this file
        is not `before` with messages appended (one was changed or removed)."""
        if before is None:
            return self.messages
        if self.base and self.base == before.serial:
            return self.messages[len(before.messages):]
        n = len(before.messages)
        if len(self.messages) >= n and self.messages[:n] == before.messages:
            return self.messages[n:]
        return None


@dataclass(frozen=True)
class Inputs:
    """Everything players wrote that replay reads, at one commit."""

    players: tuple[str, ...]  # table order: game.yaml's, or the one the start dice gave (`ordered_by_dice`)
    files: Mapping[str, ReportFile]  # report path -> its entries
    per_player: Mapping[str, PlayerInputs]
    dice: Mapping[str, "Rolled"] = field(default_factory=dict)  # dice ref -> its batch and result
    sealed: Mapping[tuple[str, str], SealedInput] = field(default_factory=dict)  # (step, player) -> input
    # step -> messages sent during it, in recognition order: the order of the commits that added them (§7.2)
    press: Mapping[str, tuple[Message, ...]] = field(default_factory=dict)
    targets: Mapping[tuple[str, str], SealedInput] = field(default_factory=dict)  # (owner, seeking unit) -> target
    # the report file a game time belongs in (`report/<period>.yaml`), so `at` reads one file, not all of them
    period_of: Callable[[Point], str] | None = field(default=None, compare=False, repr=False)
    # players whose sealed input no sealed step waits for any more: it counts as none (a resign; §4.8)
    gone: frozenset[str] = frozenset()
    # (player, point): the one sealed step an nmr settled for its absent player: there his input counts as none;
    # the next step owes his as usual (§4.8)
    excused: frozenset[tuple[str, Point]] = frozenset()
    ordered_by_dice: bool = False  # the start dice decided the table order (seed 000 §2.A), status.yaml shows it

    @classmethod
    def of_entries(cls, players: tuple[str, ...], entries: tuple[Entry, ...],
                   per_player: Mapping[str, PlayerInputs]) -> "Inputs":
        grouped: dict[str, list[Entry]] = {}
        for entry in entries:
            grouped.setdefault(entry.file, []).append(entry)
        return cls(players, {f: ReportFile(tuple(es)) for f, es in grouped.items()}, per_player)

    @property
    def entries(self) -> tuple[Entry, ...]:
        """All entries (file by file); for reports. Replay uses `at`, which does not walk them all."""
        return tuple(e for f in sorted(self.files) for e in self.files[f].entries)

    def at(self, point: Point) -> tuple[Entry, ...]:
        """The entries at one step, from every file."""
        if self.period_of is not None:
            report = self.files.get(f"report/{self.period_of(point)}.yaml")
            return report.by_step.get(point, ()) if report is not None else ()
        found: tuple[Entry, ...] = ()
        for report in self.files.values():
            found += report.by_step.get(point, ())
        return found

    def of(self, player: str) -> PlayerInputs:
        return self.per_player.get(player, _NO_INPUTS)


@dataclass(frozen=True)
class Break:
    """A pending break: `player` gets control because of `why`, found at game time `at`."""

    player: str
    at: str | None
    kind: str
    why: str
    options: tuple[Mapping[str, Any], ...] = ()  # a clarify break's choices (each an action's `do`)
    unit: str | None = None  # the unit a clarify break is about

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"player": self.player, "at": self.at, "kind": self.kind, "why": self.why}
        if self.options:
            data["options"] = [dict(o) for o in self.options]
        return data


@dataclass(frozen=True)
class Void:
    """An entry replay could not carry out when it reached it, because of what others did after it was written
    (the target left the arc, the firing unit was destroyed): it is void, logged and shown to its owner, and never
    a finding against anybody's commit (DESIGN §4.2 "Entries and time"). What its author alone could have known is
    refused in his own commit instead (pbem.protocol.legality)."""

    player: str
    at: str
    unit: str | None
    do: Mapping[str, Any]
    reason: str
    file: str
    line: int

    def text(self) -> str:
        """One line for `pbem status` and `pbem log`."""
        return f"{self.file}:{self.line}: {self.player}'s entry at {self.at} is void: {self.reason}"


@dataclass(frozen=True)
class Checkpoint:
    """Where replay resumes: `point` is the next unresolved step (the firm point; None = game over),
    `state` the game state before it, `carried` the breaks already found there that are not yet served."""

    point: Point | None
    state: State
    carried: tuple[Break, ...] = ()
    auction: Any = None  # an action auction at `point` (pbem.protocol.auction.Auction), open or closed
    contacts: tuple[tuple[str, tuple[str, ...]], ...] = ()  # seeking weapons met possible targets, reveal owed
    tracks: Mapping[tuple[str, str], tuple[Any, ...]] = field(default_factory=dict)  # (owner, weapon) -> moves
    voids: tuple[Void, ...] = ()  # every entry void so far, in game-time order (DESIGN §4.2)
    armed: tuple[tuple[str, bytes], ...] = ()  # (player, condition) written while it held: met when next seen (§4.3)
    replied: tuple[Any, ...] = ()  # reply-kind events at `point` already shown to those they met (seed §6.C.1)
    # after an erratum: the simultaneous steps before this point had their auctions and replies (DESIGN §4.8)
    settled: Point | None = None


@dataclass(frozen=True)
class Status:
    """The content of status.yaml (DESIGN §2). Everything but `note` is derived and must equal replay."""

    control: str | None
    firm: str | None
    pending: tuple[Break, ...]
    over: bool
    yielded_by: str | None = None
    note: str = ""
    position: Mapping[str, Any] | None = None  # the ruleset's public position, where it keeps one (dow/1)
    table: tuple[str, ...] | None = None  # the order around the table, where the start dice decided it

    def derived(self) -> dict[str, Any]:
        """The fields replay decides, for comparing a written status with the computed one."""
        data: dict[str, Any] = {
            "control": self.control,
            "firm": self.firm,
            "pending": [b.as_dict() for b in self.pending],
            "over": self.over,
            "yielded_by": self.yielded_by,
        }
        if self.position is not None:
            data["position"] = self.position
        if self.table is not None:
            data["table"] = list(self.table)
        return data

    def to_data(self) -> dict[str, Any]:
        data = self.derived()
        position = data.pop("position", None)
        if self.note:
            data["note"] = self.note
        if position is not None:
            data["position"] = position
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> "Status":
        return cls(
            control=data.get("control"),
            firm=data.get("firm"),
            pending=tuple(
                Break(b["player"], b.get("at"), b["kind"], b.get("why", ""), tuple(b.get("options") or ()))
                for b in data.get("pending") or ()
            ),
            over=bool(data.get("over")),
            yielded_by=data.get("yielded_by"),
            note=data.get("note") or "",
            position=data.get("position"),
            table=tuple(data["table"]) if data.get("table") is not None else None,
        )


@dataclass(frozen=True)
class Stop:
    """Where replay stopped: the checkpoint to resume from, the pending breaks in serving order, the problems met
    on the way (a seeking weapon that did not pursue its revealed target), each a Finding, and the entries this
    replay found void (`voids`; the checkpoint keeps all of the game's)."""

    checkpoint: Checkpoint
    pending: tuple[Break, ...]
    over: bool
    problems: tuple[Any, ...] = field(default=())
    steps: int = 0  # how many steps this replay resolved (for tests and benchmarks)
    # the dice refs owed now (DESIGN §5 binding): those the step replay stopped at needs, when it stopped there
    # for its action auction or its dice; a batch may roll for these and no others
    dice_refs: tuple[str, ...] = ()
    voids: tuple[Void, ...] = ()


@dataclass(frozen=True)
class Resolved:
    """One step as replay resolved it, for an observer of the replay (services.dow.chronicle tells each resolved
    phase from these instead of resolving it a second time): the state it began from (the effects due at it
    applied, its press not yet recognised), its actions, the state they met (its press recognised), and what the
    ruleset's `apply` made of them."""

    point: Point
    begun: State
    actions: tuple[Action, ...]
    before: State
    after: State
    events: tuple[Event, ...]
