"""Deadlines (DESIGN §4.8, revised): how long each owed item has waited, who is overdue, and the gates' refusal of
an agreement that finds a player absent before his deadline ran out.

Time is the one thing the verifier cannot judge: a commit's dates are whatever its signer's clock (or his hand)
wrote. So `pbem verify` never judges a deadline, and no gate believes a commit date either. Each owed item (a
pending break of status.yaml its player owes: the first break, which holds control, and every dice part, reveal
or sealed input) has its own clock: it runs from when the gate first accepted the commit that made the item owed
(the oldest commit, back along first parents, from which the same item has been owed without a break), as
services.gateclock records it. A player's own commit that settles an item ends that item; the next one he owes
starts its own clock then, so a prompt player answering break after break is never found absent.

The gates (pre-receive hook, `pbem deadlines RANGE --clock FILE` in the workflow) refuse an nmr while none of the
absent player's items is past its deadline (`agreement.nmr-early`); so are a forfeit and a lost-key seat, which
take a game or a seat without its player's signature (`agreement.not-overdue`; one he signed himself takes nothing
from him and lands at once). A gate whose record is missing or
corrupt, or does not know the commit that made the item owed, finds nobody absent (`clock.missing`,
`clock.corrupt`, `clock.unknown`). A game without `deadline` in game.yaml uses DEFAULT_DEADLINE; `paused_until`
stops every deadline until that date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from collections.abc import Mapping
from typing import Any, Iterable

from pbem.errors import Finding, PbemError
from pbem.formats import times, yamlsafe
from pbem.crypto.keys import PublicKey
from pbem.protocol import agreements, kinds
from pbem.protocol.model import Status
from pbem.services import gateclock
from pbem.services.gateclock import Clock
from pbem.store.repo import GameRepo
from pbem.files.layout import AGREEMENT_RE, GAME, STATUS
from pbem.files.readers import read_agreement

DEFAULT_DEADLINE = "7d"
OWED_KINDS = ("dice", "secret", "sealed")  # status.yaml pending kinds owed out of turn (protocol.model.OWED)
WALK_LIMIT = 10_000  # first parents walked back for one item's start, at most

Item = tuple[str, str | None, str, str]  # an owed item: player, game time, break kind, why


def deadline_of(game: Mapping[str, Any]) -> timedelta:
    """game.yaml's `deadline` (`72h`, `3d`) as a duration (DEFAULT_DEADLINE when absent; rule time.invalid)."""
    return times.parse_duration(game.get("deadline") or DEFAULT_DEADLINE, file=GAME)


def paused_until(game: Mapping[str, Any]) -> datetime | None:
    """game.yaml's `paused_until` as a UTC time (a bare date: its midnight; rule time.invalid)."""
    text = game.get("paused_until")
    return times.parse_pause(text, file=GAME) if text else None


def owed_items(status: Status | None) -> dict[Item, str]:
    """What is owed in `status`, each item with its description, in the order of the pending breaks: the first
    one (its player holds control) and every dice part, reveal and sealed input."""
    if status is None or status.over:
        return {}
    return {(b.player, b.at, b.kind, b.why): b.why or b.kind for i, b in enumerate(status.pending)
            if i == 0 or b.kind in OWED_KINDS}


def owing(status: Status | None) -> set[str]:
    """Who owes something in `status`."""
    return {item[0] for item in owed_items(status)}


@dataclass(frozen=True)
class Wait:
    """One owed item's wait: since when the clock's source first had the commit that made it owed (None: the
    source does not know that commit), the deadline, and whether it ran out at `now`."""

    player: str
    what: str
    made: str  # the commit that made the item owed
    since: datetime | None
    deadline: timedelta
    now: datetime
    source: str
    pause: datetime | None = None  # game.yaml's paused_until

    @property
    def due(self) -> datetime | None:
        if self.since is None:
            return None
        start = max(self.since, self.pause) if self.pause is not None else self.since
        return times.later(start, self.deadline)

    @property
    def overdue(self) -> bool:
        due = self.due
        return due is not None and self.now >= due

    def text(self) -> str:
        what = self.what if len(self.what) <= 80 else self.what[:77] + "..."
        due = self.due
        if self.since is None or due is None:
            return (f"{self.player} owes since commit {self.made[:10]}, which {self.source} does not know ({what}): "
                    f"nobody is found absent by it")
        left = (f"overdue by {_span(self.now - due)}: the others may sign `pbem agree nmr --player "
                f"{self.player}`" if self.overdue else f"{_span(due - self.now)} left")
        pause = f"paused until {self.pause:%Y-%m-%d %H:%M} UTC, " if self.pause and self.pause > self.now else ""
        return (f"{self.player} owes since {self.since:%Y-%m-%d %H:%M} UTC ({what}; {_span(self.now - self.since)} "
                f"by {self.source}; {pause}deadline {_span(self.deadline)}, {left})")


def _span(delta: timedelta) -> str:
    minutes = max(0, int(delta.total_seconds() // 60))
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    return f"{days}d {hours}h" if days else f"{hours}h {mins:02d}m"


def _status_at(repo: GameRepo, oid: str) -> Status | None:
    """status.yaml at `oid` (None when there is none or it cannot be read: the verifier names that; for a
    clock, an unreadable status ends every wait, which can only shorten one)."""
    blob = repo.tree_files(oid).get(STATUS)
    if blob is None:
        return None
    try:
        data = yamlsafe.load(repo.read_blob(blob[0]), STATUS).data
        return Status.from_data(data) if isinstance(data, Mapping) else None
    except (PbemError, KeyError, TypeError, ValueError, AttributeError):
        return None


def _signed_by(agreement: Any, player: str, game: Mapping[str, Any]) -> bool:
    """Whether `player`'s own valid signature (by his key in `game`, game.yaml's data) is on `agreement`."""
    line = next((p.get("key") for p in game.get("players") or () if isinstance(p, Mapping) and p.get("id") == player),
                None)
    try:
        key = PublicKey.from_line(line) if isinstance(line, str) else None
    except (PbemError, ValueError):
        return False
    return key is not None and agreements.signature_valid(str(game.get("id")), agreement, player, {player: key})


def _game_at(repo: GameRepo, oid: str) -> Mapping[str, Any]:
    blob = repo.tree_files(oid).get(GAME)
    try:
        data = yamlsafe.load(repo.read_blob(blob[0]), GAME).data if blob is not None else None
    except PbemError:
        data = None
    return data if isinstance(data, Mapping) else {}


def made_owed(repo: GameRepo, tip: str, limit: int = WALK_LIMIT) -> dict[Item, tuple[str, str]]:
    """Each item owed at `tip`, with the commit that made it owed (the oldest, back along first parents, from
    which it has been owed without a break) and its description. One walk back for all items, only as far as
    the longest of them goes."""
    current = owed_items(_status_at(repo, tip))
    out = {item: (tip, what) for item, what in current.items()}
    alive, oid = set(current), tip
    for _ in range(limit):
        parents = repo.parents(oid)
        if not alive or not parents:
            break
        oid = parents[0]
        alive &= set(owed_items(_status_at(repo, oid)))
        for item in alive:
            out[item] = (oid, out[item][1])
    return out


def _waits_at(repo: GameRepo, tip: str, clock: Clock, game: Mapping[str, Any],
              now: datetime | None = None) -> list[Wait]:
    """The waits at `tip`, judged at `now` (default the clock's). A start the clock puts after `now` cannot be
    (the commit that made the item owed precedes the one judged): the clock does not know it."""
    deadline, pause, now = deadline_of(game), paused_until(game), now or clock.now
    out = []
    for item, (made, what) in made_owed(repo, tip).items():
        since = clock.accepted(made)
        out.append(Wait(item[0], what, made, since if since is None or since <= now else None, deadline, now,
                        clock.source, pause))
    return out


def waits(repo: GameRepo, tip: str, now: datetime | None = None, clock: Clock | None = None) -> list[Wait]:
    """Every owed item's wait at `tip`, in the order of the pending breaks (`pbem status`, `pbem deadlines`).
    Without `clock`, by this clone's own knowledge (gateclock.clone_clock), never by a commit date."""
    now = now or datetime.now(timezone.utc)
    return _waits_at(repo, tip, clock or gateclock.clone_clock(repo, now), _game_at(repo, tip))


def no_record(now: datetime, why: str) -> Clock:
    """A gate's clock without a record: it finds nobody absent (rule clock.missing, saying why)."""
    return gateclock.broken("no record", now, Finding("clock.missing", why))


def nmr_findings(repo: GameRepo, commits: Iterable[str], clock: Clock) -> list[Finding]:
    """The gates' deadline check: each commit of `commits` that proposes or signs an nmr, a forfeit or a lost-key
    seat is refused unless, by `clock` (the gate's record), one of the absent player's items, as owed just
    before that commit, was past its deadline when the gate accepted the commit (now, for a commit arriving
    now; a range that reaches into history judges each agreement at its own acceptance). See the module
    docstring for the rules."""
    out: list[Finding] = []
    for oid in commits:
        parents = repo.parents(oid)
        if not parents:
            continue
        before, after = repo.tree_files(parents[0]), repo.tree_files(oid)
        for path, (blob, _mode) in sorted(after.items()):
            if not AGREEMENT_RE.match(path) or before.get(path, ("",))[0] == blob:
                continue
            try:
                agreement = read_agreement(repo.read_blob(blob), path)
            except PbemError:
                continue  # the verifier names a malformed agreement
            try:
                found = _judge(repo, agreement, parents[0], clock, clock.accepted(oid) or clock.now)
            except PbemError as exc:  # a date the calendar does not have in game.yaml
                found = exc.finding
            if found is not None:
                out.append(found.at(file=path, commit=oid))
    return out


def _judge(repo: GameRepo, agreement: Any, parent: str, clock: Clock, at: datetime) -> Finding | None:
    """One agreement of a commit accepted at `at` (now, for a commit arriving now): overdue then, or a finding."""
    nmr = agreement.kind == kinds.NMR
    # what takes a player's game or seat without his signature: only once he is overdue
    unsigned = (agreement.kind == kinds.END and agreement.content.get("result") == "forfeit") or \
        (agreement.kind == kinds.SEAT and agreement.content.get("why") == "lost-key")
    if not nmr and not unsigned:
        return None
    player = kinds.subject_of(agreement)
    game = _game_at(repo, parent)
    if unsigned and isinstance(player, str) and _signed_by(agreement, player, game):
        return None  # he signed it himself (a key he replaces while he still holds it): nothing is taken from him
    owed = [w for w in _waits_at(repo, parent, clock, game, at) if w.player == player] \
        if isinstance(player, str) else []
    taken = "game" if agreement.kind == kinds.END else "seat"
    if not owed:
        if unsigned:
            return Finding("agreement.not-overdue", f"{agreement.kind} {agreement.id} takes {player}'s {taken} "
                           "without his signature, but he owes nothing now: only a player past his deadline loses "
                           "it unsigned")
        return None  # an nmr against one who owes nothing: the verifier's agreement.nmr-owes-nothing
    acts = f"{agreement.kind} {agreement.id} acts without {player}'s signature"
    if clock.problem is not None:
        return Finding(clock.problem.rule, f"{acts}, but this gate has no trustworthy time record, so it finds "
                       f"nobody absent: {clock.problem.message}", hint=clock.problem.hint)
    if any(w.overdue for w in owed):
        return None
    unknown = next((w for w in owed if w.since is None), None)
    if unknown is not None:
        return Finding("clock.unknown", f"{acts}, but {clock.source} does not know when commit "
                       f"{unknown.made[:10]} (which made {player} owe) was accepted, so it finds nobody absent")
    first = min(owed, key=lambda w: w.due or at)
    rule = "agreement.nmr-early" if nmr else "agreement.not-overdue"
    return Finding(rule, f"{acts}, but his deadline runs out at {first.due:%Y-%m-%d %H:%M} UTC by {clock.source} "
                   f"({first.text()})")
