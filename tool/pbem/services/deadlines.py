"""Deadlines (DESIGN §4.8): how long each owed item has waited, who is overdue, and the gates' refusal of an
`nmr` agreement pushed before its player's deadline ran out.

Time is the one thing the verifier cannot judge: a commit's dates are whatever its signer's clock (or his hand)
wrote. So `pbem verify` never judges a deadline. What waits is measured from the committer date of the commit
that made the item owed (the first commit, going back along first parents, after which the player has owed
something without a break): that date is its signer's claim. The gates (pre-receive hook, workflow) judge an
nmr by their own clock when it arrives: refused while the absent player's deadline has not run out (rule
`agreement.nmr-early`); so are a forfeit and a lost-key seat, which take a game or a seat without its player's
signature (`agreement.not-overdue`). A game without `deadline` in game.yaml uses DEFAULT_DEADLINE; `paused_until` stops
every deadline until that date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Mapping

from pbem.errors import Finding, PbemError
from pbem.formats import yamlsafe
from pbem.protocol import agreements
from pbem.protocol.model import Status
from pbem.store.repo import GameRepo
from pbem.verify.agreementfile import AGREEMENT_RE, read_agreement
from pbem.verify.gamefiles import GAME, STATUS

DEFAULT_DEADLINE = "7d"
OWED_KINDS = ("dice", "secret", "sealed")  # status.yaml pending kinds owed out of turn (verify.turns.OWED)


def deadline_of(game: Mapping[str, Any]) -> timedelta:
    """game.yaml's `deadline` (`72h`, `3d`) as a duration (DEFAULT_DEADLINE when absent)."""
    text = str(game.get("deadline") or DEFAULT_DEADLINE)
    m = re.fullmatch(r"([1-9][0-9]*)([hd])", text)
    if m is None:
        return deadline_of({})
    n = int(m.group(1))
    return timedelta(hours=n) if m.group(2) == "h" else timedelta(days=n)


def paused_until(game: Mapping[str, Any]) -> datetime | None:
    """game.yaml's `paused_until` as a UTC time (a bare date: its midnight)."""
    text = game.get("paused_until")
    if not text:
        return None
    text = str(text)
    fmt = "%Y-%m-%dT%H:%MZ" if "T" in text else "%Y-%m-%d"
    return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc)


def owing(status: Status | None) -> set[str]:
    """Who owes something in `status`: the player in control, and whoever owes a contribution or a reveal."""
    if status is None or status.over:
        return set()
    return {b.player for i, b in enumerate(status.pending) if i == 0 or b.kind in OWED_KINDS}


@dataclass(frozen=True)
class Wait:
    """One player's wait: since when he owes (the committer date of the commit that made it owed: that
    commit's signer's claim), his deadline, and whether it ran out at `now`."""

    player: str
    since: datetime
    deadline: timedelta
    due: datetime
    now: datetime
    paused: datetime | None = None  # game.yaml's paused_until, when it still holds at `now`

    @property
    def overdue(self) -> bool:
        return self.now >= self.due

    def text(self) -> str:
        waited = _span(self.now - self.since)
        left = (f"overdue by {_span(self.now - self.due)}: the others may sign `pbem agree nmr --player "
                f"{self.player}`" if self.overdue else f"{_span(self.due - self.now)} left")
        pause = f"paused until {self.paused:%Y-%m-%d %H:%M} UTC, " if self.paused is not None else ""
        return f"{self.player} owes since {self.since:%Y-%m-%d %H:%M} UTC ({waited}; {pause}deadline " \
               f"{_span(self.deadline)}, {left})"


def _span(delta: timedelta) -> str:
    minutes = max(0, int(delta.total_seconds() // 60))
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    return f"{days}d {hours}h" if days else f"{hours}h {mins:02d}m"


def _status_at(repo: GameRepo, oid: str) -> Status | None:
    blob = repo.tree_files(oid).get(STATUS)
    if blob is None:
        return None
    data = yamlsafe.load(repo.read_blob(blob[0]), STATUS).data
    return Status.from_data(data) if isinstance(data, Mapping) else None


def _game_at(repo: GameRepo, oid: str) -> Mapping[str, Any]:
    blob = repo.tree_files(oid).get(GAME)
    data = yamlsafe.load(repo.read_blob(blob[0]), GAME).data if blob is not None else None
    return data if isinstance(data, Mapping) else {}


def _time(repo: GameRepo, oid: str) -> datetime:
    commit = repo.repo[oid]
    return datetime.fromtimestamp(commit.committer.time, timezone.utc)


def owed_since(repo: GameRepo, tip: str, player: str, limit: int = 10_000) -> datetime | None:
    """The committer date of the commit after which `player` has owed something without a break, up to `tip`
    (None when he owes nothing at `tip`). Walks back along first parents only as far as the wait goes."""
    if player not in owing(_status_at(repo, tip)):
        return None
    oid, since = tip, _time(repo, tip)
    for _ in range(limit):
        parents = repo.parents(oid)
        if not parents or player not in owing(_status_at(repo, parents[0])):
            break
        oid = parents[0]
        since = _time(repo, oid)
    return since


def waits(repo: GameRepo, tip: str, now: datetime | None = None) -> list[Wait]:
    """Every owed item's wait at `tip`, in table order of the pending breaks (`pbem status`)."""
    now = now or datetime.now(timezone.utc)
    status = _status_at(repo, tip)
    game = _game_at(repo, tip)
    out = []
    for player in sorted(owing(status), key=lambda p: [b.player for b in status.pending].index(p)):  # type: ignore[union-attr]
        since = owed_since(repo, tip, player)
        if since is not None:
            out.append(_wait(player, since, game, now))
    return out


def _wait(player: str, since: datetime, game: Mapping[str, Any], now: datetime) -> Wait:
    deadline = deadline_of(game)
    pause = paused_until(game)
    start = max(since, pause) if pause is not None else since
    return Wait(player, since, deadline, start + deadline, now, pause if pause is not None and pause > now else None)


def nmr_findings(repo: GameRepo, commits: Iterable[str], now: datetime | None = None) -> list[Finding]:
    """The gates' deadline check (rules `agreement.nmr-early`, `agreement.not-overdue`): each pushed commit that
    proposes or signs an nmr, a forfeit or a lost-key seat is refused while, by the gate's own clock `now`, the
    absent player's deadline (counted from the commit that made him owe, as of the commit before it) has not run
    out, or the game is paused."""
    now = now or datetime.now(timezone.utc)
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
            nmr = agreement.kind == agreements.NMR
            # what takes a player's game or seat without his signature: only once he is overdue
            unsigned = (agreement.kind == agreements.END and agreement.content.get("result") == "forfeit") or \
                (agreement.kind == agreements.SEAT and agreement.content.get("why") == "lost-key")
            if not nmr and not unsigned:
                continue
            player = agreements.subject_of(agreement)
            since = owed_since(repo, parents[0], player) if isinstance(player, str) else None
            if since is None:
                if unsigned:
                    out.append(Finding("agreement.not-overdue", f"{agreement.kind} {agreement.id} takes {player}'s "
                                       f"{'game' if agreement.kind == agreements.END else 'seat'} without his "
                                       "signature, but he owes nothing now: only a player past his deadline loses "
                                       "it unsigned", file=path, commit=oid))
                continue  # an nmr against one who owes nothing: the verifier's agreement.nmr-owes-nothing
            wait = _wait(player, since, _game_at(repo, parents[0]), now)
            if not wait.overdue:
                rule = "agreement.nmr-early" if nmr else "agreement.not-overdue"
                out.append(Finding(rule, f"{agreement.kind} {agreement.id} acts without {player}'s signature, but "
                                   f"his deadline runs out at {wait.due:%Y-%m-%d %H:%M} UTC by this server's "
                                   f"clock ({wait.text()})", file=path, commit=oid))
    return out
