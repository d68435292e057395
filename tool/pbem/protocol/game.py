"""The game model (DESIGN §2): who sits (game.yaml's seats and manifest) and all files of one commit, read. Pure
data; the readers that fill it from a repository's bytes are pbem.files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pbem.crypto.keys import PublicKey
from pbem.protocol.agreements import Agreement
from pbem.protocol.dice import Batch
from pbem.protocol.kinds import resigned as resigned_seats
from pbem.protocol.model import Inputs, PressFile, Status
from pbem.protocol.secrets import Secret
from pbem.rulesets import get as get_ruleset
from pbem.rulesets.base import Ruleset


@dataclass(frozen=True)
class Seat:
    id: str
    name: str
    key: PublicKey | None
    role: str = "player"


@dataclass(frozen=True)
class Manifest:
    """game.yaml: who plays (table order), with which keys, under which ruleset and setup."""

    id: str
    title: str
    ruleset_name: str
    seats: tuple[Seat, ...]
    setup: Mapping[str, Any]
    pbem: str | None
    raw: Mapping[str, Any] = field(repr=False)
    escrow_key: PublicKey | None = None
    digest: str = ""  # sha256 hex of game.yaml's bytes: what the players consent to start (DESIGN §2 Setup)
    seat_lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)  # seat id -> its line

    @property
    def keys(self) -> dict[str, PublicKey]:
        return {s.id: s.key for s in self.seats if s.key is not None}

    @property
    def players(self) -> tuple[str, ...]:
        players: tuple[str, ...] = self.__dict__["_players"]  # set once, by __post_init__
        return players

    def __post_init__(self) -> None:
        object.__setattr__(self, "_players", tuple(s.id for s in self.seats if s.role == "player"))

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_ruleset"}  # kept states hold data, not rules

    def seat_of_key(self, key: PublicKey) -> Seat | None:
        return next((s for s in self.seats if s.key is not None and s.key.same_key(key)), None)

    def seat(self, player: str) -> Seat | None:
        return next((s for s in self.seats if s.id == player), None)

    @property
    def ruleset(self) -> Ruleset:
        found = self.__dict__.get("_ruleset")
        if found is None:  # looked up once per game.yaml read: a commit asks some ten times
            found = self.__dict__["_ruleset"] = get_ruleset(self.ruleset_name)
        return found


@dataclass(frozen=True)
class Game:
    """All files of one commit (or the working tree), read."""

    manifest: Manifest
    inputs: Inputs
    status: Status | None  # None before the game starts
    batches: Mapping[str, Batch] = field(default_factory=dict)
    secrets: Mapping[str, Secret] = field(default_factory=dict)
    press: Mapping[str, PressFile] = field(default_factory=dict)  # file -> its messages
    agreements: Mapping[str, Agreement] = field(default_factory=dict)  # file -> agreement (DESIGN §4.8)
    workflow: str | None = None  # the git blob id of WORKFLOW, which only an upgrade agreement changes

    def resigned(self) -> frozenset[str]:
        """The seats left vacant by a resign (protocol.kinds.resigned), none where no agreement was ever made."""
        return resigned_seats(self.agreements, self.manifest.keys) if self.agreements else frozenset()
