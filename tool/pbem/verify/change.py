"""What one commit changed, computed once (DESIGN §3 History, §11: a commit costs what it changed): its paths by
file kind, the entries it removed and added, the dice batches and secrets before and after it, the agreements it
completes and what they do, the consent table before it, and where replay stops once it is in.

Every fact is worked out the first time a rule asks for it and kept for the other rules of the same commit; a
fact no rule of the commit's kind asks for is never worked out (a refused commit replays nothing).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping

from pbem.crypto.keys import PublicKey
from pbem.protocol import resealing, upgrade
from pbem.protocol.agreements import Agreement
from pbem.protocol.kinds import Table
from pbem.protocol.control import expected_after, expected_start, start_batch, start_choice, takes_turn, who
from pbem.protocol.dice import Batch
from pbem.protocol.history import entry_changes
from pbem.protocol.model import OWED, Break, Entry, Status, Stop
from pbem.protocol.secrets import Secret
from pbem.protocol.serving import START_REF
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import (agreement_effect, completed, consent_table, errata_agreed, nmr_completed,
                                    settled_now)
from pbem.files.layout import AGREEMENT_RE
from pbem.files.layout import DICE_RE, GAME, PLAYERS_RE, PRESS_RE, REPORT_RE, SECRET_RE, STATUS
from pbem.protocol.game import Game
from pbem.formats.records import once

# The kinds of path a commit may change besides the fixed files, each recognised once (files/layout.py's patterns)
PATH_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("players", PLAYERS_RE), ("report", REPORT_RE), ("dice", DICE_RE), ("secret", SECRET_RE), ("press", PRESS_RE),
    ("agreement", AGREEMENT_RE))
_BY_FOLDER = {pattern.pattern.partition("/")[0]: (kind, pattern) for kind, pattern in PATH_KINDS}  # one match a path

# What a commit is (commit.classify): each kind has its rules, in order (commit.RULES)
ROOT, SETUP, JOIN, START = "root", "setup", "join", "start"
TURN, SETTLE, PRESS, AGREEMENT, REFUSED = "turn", "settle", "press", "agreement", "refused"


class Change:
    """One commit on top of `prev`: `read` is the game as read at the commit, in commit order (DESIGN §7.2),
    `paths` the paths it changed (iterated in the order they were given, as findings that list them are)."""

    def __init__(self, prev: Verified, read: Game, paths: set[str], signer: PublicKey) -> None:
        self.prev = prev
        self.read = read
        self.paths = paths
        self.signer = signer
        self.kind: str | None = None  # set by commit.classify
        self.by_kind: dict[str, list[str]] = {kind: [] for kind, _pattern in PATH_KINDS}
        self.owner: dict[str, str] = {}  # players/<seat>.yaml -> <seat>
        for path in paths:
            known = _BY_FOLDER.get(path.partition("/")[0])
            if known is None:
                continue
            kind, pattern = known
            found = pattern.match(path)
            if found:
                self.by_kind[kind].append(path)
                if kind == "players":
                    self.owner[path] = found.group(1)

    # -- paths by kind

    @once
    def reports(self) -> set[str]:
        return set(self.by_kind["report"])

    @once
    def in_report_folder(self) -> bool:
        """Whether any path under report/ changed (a name the layout refuses counts too)."""
        return any(p.startswith("report/") for p in self.paths)

    dice = property(lambda self: self.by_kind["dice"], doc="the dice batches it changed")
    secrets = property(lambda self: self.by_kind["secret"], doc="the secrets it changed")
    press = property(lambda self: self.by_kind["press"], doc="the press files it changed")
    agreements = property(lambda self: self.by_kind["agreement"], doc="the agreements it changed")

    @once
    def press_only(self) -> bool:
        """Whether it changes press files only, besides status.yaml (DESIGN §4.8: press is no turn)."""
        rest = self.paths - {STATUS}
        return bool(rest) and len(self.press) == len(rest)

    # -- who made it

    @once
    def player(self) -> str | None:
        """The seat (or the escrow) the signer holds before the commit."""
        return who(self.prev.game, self.signer)

    @once
    def founder(self) -> bool:
        return self.prev.founder is not None and self.prev.founder.same_key(self.signer)

    @once
    def claimed(self) -> list[Any]:
        """The seats of the new game.yaml that hold the signer's key (a join claims one)."""
        return [s for s in self.read.manifest.seats if s.key is not None and s.key.same_key(self.signer)]

    @property
    def joining(self) -> bool:
        """Before the start: signed by a key that holds no seat and is not the founder's (pbem join)."""
        return self.player is None and not self.founder

    @once
    def actor(self) -> str | None:
        """Before the start: the seat the signer holds, before or (a join, the founder) after the commit."""
        if self.joining:
            return self.claimed[0].id if self.claimed else None
        if self.player is None:
            now = self.read.manifest.seat_of_key(self.signer)
            return now.id if now else None
        return self.player

    @once
    def mine(self) -> list[Break]:
        """What the signer owes out of turn now (dice, reveals, sealed inputs, his word): none for an agreement
        commit, which settles nothing of its own."""
        if self.agreements:
            return []
        assert self.prev.status is not None
        owed = [b for b in self.prev.status.pending if b.player == self.player and b.kind in OWED]
        if not owed and not (self.takes_turn and not self.press_only):  # a sealed input replaced (§4.7)
            owed = resealing.replacing(self.game.manifest.ruleset, self.prev.game.secrets, self.game.secrets,
                                       self.player or "", self.prev.status.pending)
        return owed

    @once
    def takes_turn(self) -> bool:
        return self.player is not None and takes_turn(self.prev, self.player)

    # -- the documents before and after

    @once
    def game(self) -> Game:
        """The game as judged: once started, game.yaml changes only as a completed agreement says; any other
        change is refused (protected.changed) and never takes effect, at this commit or any later one, or an
        accomplice's key swapped in would play on unchecked."""
        read, prev = self.read, self.prev
        if not prev.started or self.agreed:
            return read
        if read.manifest is not prev.game.manifest and read.manifest.raw != prev.game.manifest.raw:
            return replace(read, manifest=prev.game.manifest)
        return read

    @once
    def entries(self) -> tuple[list[Entry], list[Entry]]:
        """(removed, added) over the report files it changed."""
        return entry_changes(self.prev.game.inputs, self.game.inputs, self.reports)

    @property
    def removed(self) -> list[Entry]:
        return list(self.entries[0])

    @property
    def added(self) -> list[Entry]:
        return list(self.entries[1])

    @once
    def _documents(self) -> tuple[dict[str, Batch | Secret], dict[str, Batch | Secret]]:
        def by_file(game: Game) -> dict[str, Batch | Secret]:
            out: dict[str, Batch | Secret] = {}
            for batch in game.batches.values():
                out.setdefault(batch.file, batch)
            for secret in game.secrets.values():
                out.setdefault(secret.file, secret)
            return out
        return by_file(self.prev.game), by_file(self.game)

    def before(self, path: str) -> Batch | Secret | None:
        """The dice batch or secret at `path` before the commit, or None."""
        return self._documents[0].get(path)

    def after(self, path: str) -> Batch | Secret | None:
        """The dice batch or secret at `path` after the commit, or None."""
        return self._documents[1].get(path)

    def only(self, by_file: Mapping[str, Agreement]) -> dict[str, Agreement]:
        """The agreements among the changed files: a commit costs what it changed, not every agreement so far."""
        return {path: by_file[path] for path in self.paths if path in by_file}

    # -- what the agreements it completes do (DESIGN §4.8)

    @once
    def table(self) -> Table:
        """The consent table before the commit: the keys that sign, who owes, who resigned."""
        return consent_table(self.prev.game, True, self.prev.status)

    @once
    def effect(self) -> dict | None:
        """game.yaml as an amend or seat agreement this commit completes says it must read, or None."""
        assert self.prev.status is not None
        if not self.agreements or self.prev.status.over:
            return None
        return agreement_effect(self.prev, self.read, self.paths, self.player or "")

    @once
    def agreed(self) -> bool:
        """Whether game.yaml changed exactly as such an agreement says."""
        return GAME in self.paths and self.effect is not None and self.effect == self.read.manifest.raw

    @once
    def upgrades(self) -> list[Agreement]:
        """The upgrade agreements it completes: the workflow changes only by one."""
        return completed(self.prev, self.read, upgrade.UPGRADE, self.table) if self.agreements else []

    @once
    def upgraded(self) -> bool:
        return bool(self.upgrades) and not upgrade.effect_findings(self.upgrades, self.read.workflow)

    @once
    def corrections(self) -> list[Any]:
        """The erratum agreements it completes, as errata."""
        return errata_agreed(self.prev, self.game)

    @once
    def settled(self) -> dict[str, str]:
        """Player -> the nmr or resign it completes that settles what he owes."""
        return settled_now(self.prev, self.game)

    @once
    def nmr(self) -> tuple[str, str] | None:
        """(the absent player, the nmr's id) for an nmr it completes, or None."""
        return nmr_completed(self.prev, self.game)

    # -- where replay stops

    @once
    def expected(self) -> tuple[Stop, Status]:
        """Where replay stops once the commit is in, and the status it must write."""
        return expected_after(self.prev, self.game, self.player or "")

    @once
    def start_roll(self) -> tuple[Batch | None, str | None]:
        """The start commit: the batch that decides who starts or the table order, and whom its die chose (None
        when it rolls the table order only)."""
        batch = start_batch(self.game)
        if batch is not None and batch.raw["rolls"][0].get("ref") == START_REF:
            return batch, start_choice(batch, self.game.manifest.players)
        return batch, None

    @once
    def start(self) -> tuple[Stop, Status]:
        """The start commit: where replay stops and the status it must write (seed 000 §2.A)."""
        assert self.game.status is not None and self.game.status.control is not None
        return expected_start(self.game, self.game.status.control)

