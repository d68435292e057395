"""Sealed secrets in the protocol (DESIGN §6, seed 000 §2.C): when a reveal is owed, and what one commit may
change in secrets/.

A secret is sealed by its owner and never changes afterwards, except that its owner adds the key to reveal it.
The verifier then opens the box, checks the key-committing hash and validates the plaintext against the
secret kind's schema. A secret is due at its `end` (a game time) or at the end of the game; the game is not
over while any secret is unrevealed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping, Sequence

from pbem.crypto import seal
from pbem.errors import Finding, PbemError
from pbem.formats import schemas
from pbem.protocol.model import Break
from pbem.rulesets.base import Point

SECRET = "secret"
END = "end"


@dataclass(frozen=True)
class Secret:
    """One sealed secret as read from secrets/<id>.yaml."""

    raw: Mapping[str, Any] = field(repr=False)
    file: str = ""
    lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)  # top-level field -> line

    def line_of(self, key: str) -> int | None:
        """The line of a top-level field of the secret file (e.g. `key`, the reveal), if it has it."""
        return self.lines.get(key)

    @property
    def id(self) -> str:
        return self.raw["id"]

    @property
    def owner(self) -> str:
        return self.raw["owner"]

    @property
    def revealed(self) -> bool:
        return "key" in self.raw

    def plaintext(self) -> bytes:
        """Open a revealed secret (secret.bad-key, secret.commit-mismatch)."""
        return seal.open_sealed(_b64(self.raw["box"]), bytes.fromhex(self.raw["key"]), bytes.fromhex(self.raw["commit"]))

    @cached_property
    def _opened(self) -> Any:
        try:
            return json.loads(self.plaintext().decode("utf-8"))
        except PbemError as exc:
            raise PbemError.from_finding(exc.finding.at(file=self.file), exc.exit_code) from None
        except (UnicodeDecodeError, ValueError):
            raise PbemError("secret.bad-plaintext", f"secret {self.id} does not hold JSON", file=self.file,
                            exit_code=1) from None

    def value(self) -> Any:
        """The revealed secret's content (its canonical JSON, parsed; opened once)."""
        return self._opened


def _b64(text: str) -> bytes:
    import base64

    return base64.b64decode(text)


def due(secrets: Mapping[str, Secret], parse_time: Callable[[str], Point], stop: Point | None,
        over: bool) -> list[Secret]:
    """Unrevealed secrets whose `end` replay has reached (`stop`), or all of them at the game's end."""
    out = []
    for secret in sorted(secrets.values(), key=lambda s: s.id):
        end = secret.raw["end"]
        if "step" in secret.raw and not over:
            continue  # a sealed step's input: replay asks for it once everyone has sealed (DESIGN §4.7)
        if not secret.revealed and (over or (end != END and stop is not None and parse_time(end) <= stop)):
            out.append(secret)
    return out


def owed_reveals(secrets: Mapping[str, Secret], parse_time: Callable[[str], Point], stop: Point | None,
                 over: bool, at: str | None) -> list[Break]:
    """The reveals owed now, one break for each secret due (DESIGN §6)."""
    return [Break(s.owner, at, SECRET, f"reveal owed for secret {s.id} ({s.raw['kind']}"
                  f"{', ' + s.raw['concerns'] if s.raw.get('concerns') else ''})")
            for s in due(secrets, parse_time, stop, over)]


def secret_findings(before: Mapping[str, Secret], after: Mapping[str, Secret], committer: str,
                    players: Sequence[str], parse_time: Callable[[str], Point]) -> list[Finding]:
    """What a commit may do in secrets/: the owner seals a new secret, and later adds its key."""
    out: list[Finding] = []
    for sid in sorted(set(before) | set(after)):
        old, new = before.get(sid), after.get(sid)
        if new is None:
            out.append(Finding("secret.changed", f"secret {sid} was removed", file=old.file if old else None))
            continue
        if old is not None and old.raw == new.raw:
            continue
        f = new.file
        if f != f"secrets/{new.id}.yaml":
            out.append(Finding("secret.bad-secret", f"secret {new.id} must live in secrets/{new.id}.yaml", file=f))
        if committer != new.owner:
            out.append(Finding("secret.not-owner", f"{committer} changed secret {new.id} of {new.owner}", file=f))
            continue
        if old is None:
            out.extend(_sealed(new, players, parse_time))
            continue
        if {k: v for k, v in old.raw.items() if k != "key"} != {k: v for k, v in new.raw.items() if k != "key"}:
            out.append(Finding("secret.changed", f"secret {new.id} changed after it was sealed", file=f))
        elif old.revealed:
            out.append(Finding("secret.changed", f"secret {new.id}: its key cannot change once revealed", file=f))
        elif new.revealed:
            out.extend(check_reveal(new))
    return out


def _sealed(new: Secret, players: Sequence[str], parse_time: Callable[[str], Point]) -> list[Finding]:
    f = new.file
    out = []
    if new.owner not in players:
        out.append(Finding("secret.bad-secret", f"owner {new.owner!r} is not a player", file=f))
    if new.revealed:
        out.append(Finding("secret.bad-secret", f"secret {new.id} is sealed and revealed at once: write it in the "
                           "report in the clear instead (seed §2.C)", file=f))
    if not schemas.known(f"pbem/secret/{new.raw['kind']}/1"):
        out.append(Finding("secret.unknown-kind", f"no secret kind {new.raw['kind']!r}", file=f))
    end = new.raw["end"]
    if end != END:
        try:
            parse_time(end)
        except ValueError as exc:
            out.append(Finding("schema.bad-time", f"end {end!r}: {exc}", file=f))
    return out


def check_reveal(secret: Secret) -> list[Finding]:
    """Open the box, check the hash, validate the plaintext against its kind's schema."""
    try:
        schemas.validate(f"pbem/secret/{secret.raw['kind']}/1", secret.value(), file=secret.file)
    except PbemError as exc:
        return [exc.finding.at(file=secret.file)]
    return []
