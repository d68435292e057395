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
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Collection, Iterable

from pbem.crypto import part as parts
from pbem.crypto import seal
from pbem.errors import Finding, PbemError
from pbem.formats import schemas
from pbem.protocol.ids import author_of
from pbem.formats.canonical import dumps as canonical
from pbem.protocol.model import Break, Entry, Status
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

    @property
    def withheld(self) -> str | None:
        """The nmr or resign agreement that settled this secret's reveal, owed and never made (DESIGN §4.8): what
        it hid is lost (a sealed input counts as none, a seeking weapon's target is gone with the weapon)."""
        return self.raw.get("withheld")

    @property
    def part_opened(self) -> bool:
        """Whether the part committed beside the box (`part_commit`: a tactical allocation's speeds) is opened."""
        return "part_salt" in self.raw

    def opened_part(self) -> Any:
        """The opened part (DESIGN §4.7: what a sealed step needs at once, the rest staying in the box), or None
        while it is sealed. A secret sealed without a part (no `part_commit`: by hand) has none to open: {}, an
        empty part (a tactical allocation's speeds then plot nothing, and its ships stop), so the step never waits
        for what cannot come."""
        if "part_commit" not in self.raw:
            return {}
        return self.raw.get("part") if self.part_opened else None

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


LATER = ("key", "part", "part_salt")  # what the owner adds to his secret after sealing it, each once


def due(secrets: Mapping[str, Secret], parse_time: Callable[[str], Point], stop: Point | None,
        over: bool) -> list[Secret]:
    """Unrevealed secrets whose `end` replay has reached (`stop`), or all of them at the game's end."""
    out = []
    replaced = {s.raw.get("replaces") for s in secrets.values()}  # a replaced sealed input is owed no more
    for secret in sorted(secrets.values(), key=lambda s: s.id):
        end = secret.raw["end"]
        if ("step" in secret.raw and not over) or secret.id in replaced:
            continue  # a sealed step's input: replay asks for it once everyone has sealed (DESIGN §4.7)
        if secret.withheld:
            continue  # settled by an agreement: lost, never owed again
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
                    players: Sequence[str], parse_time: Callable[[str], Point],
                    settled: Mapping[str, str] | None = None, owed: Collection[str] = ()) -> list[Finding]:
    """What a commit may do in secrets/: the owner seals a new secret, and later adds its key. The commit that
    completes an nmr or resign agreement (`settled`: player -> agreement) marks the secrets whose reveal he owed
    (`owed`, ids) as withheld by it, and that is all it may change there (DESIGN §4.8)."""
    out: list[Finding] = []
    for sid in sorted(set(before) | set(after)):
        old, new = before.get(sid), after.get(sid)
        if new is None:
            out.append(Finding("secret.changed", f"secret {sid} was removed", file=old.file if old else None))
            continue
        if old is not None and old.raw == new.raw:
            continue
        f = new.file
        if old is not None and (old.withheld or new.withheld):
            out.extend(_withheld(old, new, settled or {}, owed))
            continue
        if f != f"secrets/{new.id}.yaml":
            out.append(Finding("secret.bad-secret", f"secret {new.id} must live in secrets/{new.id}.yaml", file=f))
        if committer != new.owner:
            out.append(Finding("secret.not-owner", f"{committer} changed secret {new.id} of {new.owner}", file=f))
            continue
        if old is None:
            out.extend(_sealed(new, players, parse_time))
            continue
        if {k: v for k, v in old.raw.items() if k not in LATER} != \
                {k: v for k, v in new.raw.items() if k not in LATER}:
            out.append(Finding("secret.changed", f"secret {new.id} changed after it was sealed", file=f))
        elif old.revealed:
            out.append(Finding("secret.changed", f"secret {new.id}: its key cannot change once revealed", file=f))
        elif old.part_opened and any(old.raw.get(k) != new.raw.get(k) for k in ("part", "part_salt")):
            out.append(Finding("secret.changed", f"secret {new.id}: its part cannot change once opened", file=f,
                               line=new.line_of("part")))
        else:
            if ("part" in new.raw or new.part_opened) and not old.part_opened:
                out.extend(check_part(new))
            if new.revealed:
                out.extend(check_reveal(new))
    return out


def check_part(secret: Secret) -> list[Finding]:
    """The part opened alone opens the commitment sealed beside the box (`part_commit`), with its salt
    (secret.part-commit): it cannot be opened to any other value than the one sealed."""
    where: dict[str, Any] = {"file": secret.file, "line": secret.line_of("part") or secret.line_of("part_salt")}
    commit, salt = secret.raw.get("part_commit"), secret.raw.get("part_salt")
    if "part" not in secret.raw or salt is None:
        return [Finding("secret.part-commit", f"secret {secret.id}: a part is opened with both `part` and "
                        "`part_salt` (pbem yield writes them)", **where)]
    if commit is None:
        return [Finding("secret.part-commit", f"secret {secret.id} was sealed without a part (no part_commit): "
                        "it is opened whole, when it is due", **where)]
    try:
        opened = parts.opens(bytes.fromhex(commit), bytes.fromhex(str(salt)), canonical(secret.raw.get("part")))
    except (ValueError, TypeError):
        opened = False
    if not opened:
        return [Finding("secret.part-commit", f"secret {secret.id}: the part opened (with its part_salt) is not "
                        "the one committed when it was sealed (part_commit)", **where)]
    return []


def _withheld(old: Secret, new: Secret, settled: Mapping[str, str], owed: Collection[str]) -> list[Finding]:
    """A withheld mark is written once, by the commit completing the agreement that settles it, on a secret whose
    reveal its owner owed then (secret.bad-withheld); after it, the secret never changes: a late reveal, even
    his own, is refused (secret.withheld), or he would choose after the table let him go."""
    where: dict[str, Any] = {"file": new.file, "line": new.line_of("withheld") or new.line_of("key")}
    if old.withheld:
        if new.revealed and not old.revealed:
            return [Finding("secret.withheld", f"secret {new.id}: its reveal was settled by {old.withheld} "
                            "(withheld): what it hid is lost, firm; it is never revealed afterwards", **where)]
        return [Finding("secret.bad-withheld", f"secret {new.id} changed after {old.withheld} settled it", **where)]
    if {k: v for k, v in new.raw.items() if k not in ("withheld", "opened")} != dict(old.raw):
        return [Finding("secret.bad-withheld", f"secret {new.id}: the commit marking it withheld changes nothing "
                        "else in it", **where)]
    if settled.get(new.owner) != new.withheld or new.id not in owed:
        return [Finding("secret.bad-withheld", f"secret {new.id} marked withheld by {new.withheld}: only the "
                        f"last signature of an nmr against {new.owner} (or his own resign) marks a secret whose "
                        "reveal he owes now", **where)]
    return []


def _sealed(new: Secret, players: Sequence[str], parse_time: Callable[[str], Point]) -> list[Finding]:
    f = new.file
    out = []
    if new.owner not in players:
        out.append(Finding("secret.bad-secret", f"owner {new.owner!r} is not a player", file=f))
    author = author_of(new.id)
    if author != new.owner:
        out.append(Finding("ownership.id-author", f"secret {new.id} names {author} in its id, but its owner is "
                           f"{new.owner}: a secret's id is `<owner>-NNNN` (secrets/{new.owner}-NNNN.yaml)", file=f,
                           line=new.line_of("id")))
    if new.revealed or new.part_opened:
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


def sealing_findings(before: Mapping[str, Secret], after: Mapping[str, Secret], player: str, owed_steps: set[str],
                     turn: bool, ruleset: Any, added: Sequence[Entry],
                     entries: Callable[[], Iterable[Entry]]) -> list[Finding]:
    """What the secrets a commit seals must answer (DESIGN §4.7, §6, §7.1; seed §2.C).

    * A sealed step's input (`step`) answers a step its owner owes now, is of the kind that step takes
      (`ruleset.sealed_kind`: a tactical allocation, Diplomacy orders), and is his only one for it; a kind that
      answers sealed steps (`ruleset.sealed_kinds`) is never sealed without naming its step (secret.wrong-step):
      the step, not anything written inside, is what it is judged against. Anything else is sealed in one's
      own turn.
    * A seeking weapon's target (`ruleset.target_kind`) is sealed by the weapon's owner in the commit that
      launches it (`concerns` = the new unit's name), one per weapon (secret.foreign-target, secret.late-target,
      secret.duplicate-target, secret.bad-target); a launch that commit adds needs its target sealed with it
      (secret.missing-target). `added` are the report entries the commit added; `entries()` all of them, read
      only when a target names no launch of this commit."""
    new = [after[sid] for sid in sorted(set(after) - set(before))]
    # the target's own rule first: it says more than "not in one's own turn" about a target sealed out of turn
    out = _target_findings(before, new, after, player, ruleset, added, entries)
    sealing = ruleset.sealing
    sealed_kind = sealing.sealed_kind if sealing is not None else None
    step_kinds: frozenset[str] = sealing.sealed_kinds if sealing is not None else frozenset()
    answered: set[str] = set()
    for secret in new:
        step, kind = secret.raw.get("step"), secret.raw["kind"]
        if step is not None and step not in owed_steps:
            out.append(Finding("secret.bad-secret", f"secret {secret.id} answers step {step}, for which {player} "
                               "owes no sealed input", file=secret.file, line=secret.line_of("step")))
        elif step is not None and step in answered:
            out.append(Finding("secret.bad-secret", f"secret {secret.id} is a second sealed input of {player} for "
                               f"{step}: one answers it", file=secret.file, line=secret.line_of("step")))
        elif step is not None and sealed_kind is not None and sealed_kind(ruleset.parse_time(step)) not in (None, kind):
            out.append(Finding("secret.wrong-kind", f"secret {secret.id} is a {kind}, but {step} takes a sealed "
                               f"{sealed_kind(ruleset.parse_time(step))}", file=secret.file,
                               line=secret.line_of("kind")))
        elif step is None and kind in step_kinds:
            out.append(Finding("secret.wrong-step", f"secret {secret.id}: a {kind} answers the sealed step it is for "
                               f"and names it (step); seal it when you owe it (`pbem seal {kind} FILE`)",
                               file=secret.file, line=secret.line_of("kind")))
        elif step is None and not turn:
            out.append(Finding("secret.bad-secret", "secrets are sealed in one's own turn", file=secret.file))
        if step is not None:
            answered.add(step)
    return out


def _target_findings(before: Mapping[str, Secret], new: Sequence[Secret], after: Mapping[str, Secret], player: str,
                     ruleset: Any, added: Sequence[Entry], entries: Callable[[], Iterable[Entry]]) -> list[Finding]:
    if ruleset.seeking is None:
        return []
    target_kind, launched = ruleset.seeking.target_kind, ruleset.seeking.launched_unit
    out: list[Finding] = []
    launches = {name: e for e in added if e.by == player and (name := launched(e.do)) is not None}
    if not launches and not any(s.raw["kind"] == target_kind for s in new):
        return []
    taken = {s.raw.get("concerns") for s in before.values() if s.raw["kind"] == target_kind}
    for secret in (s for s in new if s.raw["kind"] == target_kind):
        unit, file, line = secret.raw.get("concerns"), secret.file, secret.line_of("concerns")
        if unit not in launches:
            by = next((e.by for e in entries() if launched(e.do) == unit), None) if unit else None
            if by is not None and by != player:
                out.append(Finding("secret.foreign-target", f"secret {secret.id}: {unit} is {by}'s seeking weapon; "
                                   f"only {by} seals its target", file, line))
            elif by is not None:
                out.append(Finding("secret.late-target", f"secret {secret.id}: {unit}'s target is sealed in the "
                                   f"commit that launches it, not after", file, line))
            else:
                out.append(Finding("secret.bad-target", f"secret {secret.id}: a target's `concerns` names the "
                                   f"seeking weapon launched in the same commit ({{launch: {{weapon, as}}}}), got "
                                   f"{unit!r}", file, line if unit else None))
        elif unit in taken:
            out.append(Finding("secret.duplicate-target", f"secret {secret.id}: {unit} has its target sealed "
                               "already; one target per seeking weapon", file, line))
        taken.add(unit)
    mine = {s.raw.get("concerns") for s in after.values() if s.raw["kind"] == target_kind and s.owner == player}
    for name, entry in sorted(launches.items()):
        if name not in mine:
            out.append(Finding("secret.missing-target", f"{player} launches {name} at {entry.at_text} without "
                               f"sealing its target in the same commit (`pbem seal {target_kind} FILE --concerns "
                               f"{name}`)", file=entry.file, line=entry.line))
    return out


def reveal_findings(before: Mapping[str, Secret], after: Mapping[str, Secret], ruleset: Any,
                    asked: Collection[tuple[str | None, str]] = (), over: bool = True) -> list[Finding]:
    """A secret revealed by this commit answers what it was sealed for (DESIGN §4.7, §6): a sealed step's input
    is that step's (`ruleset.sealed_input_error`: a tactical allocation is for the turn of its step,
    secret.wrong-step); a seeking weapon's target names that weapon (secret.bad-target).

    And it is opened when the rules open it, never before (seed §2.C: allocations are "retrieved and verified at
    the conclusion of the battle"): `asked` are the (step, owner) of the reveals replay waits for before this
    commit, `over` whether the battle is over then.
    * a part (`part_commit`, the speeds of a tactical allocation) is opened only once its step asks for it,
      every player owing input there having sealed (secret.early-open): nobody sees a speed before sealing his;
    * a kind the ruleset keeps sealed until the end (`ruleset.sealed_until_end`) is opened whole only then
      (secret.early-reveal), and its box must hold the part opened earlier (`ruleset.sealed_part`;
      secret.part-mismatch: the speeds the turn was played with are the ones the box pays for)."""
    out: list[Finding] = _opening_findings(before, after, ruleset, asked, over)
    check = ruleset.audit.sealed_input_error if ruleset.audit is not None else None
    target_kind = ruleset.seeking.target_kind if ruleset.seeking is not None else None
    for sid in sorted(after):
        secret, old = after[sid], before.get(sid)
        if not secret.revealed or old is None or old.revealed:
            continue
        try:
            value = secret.value()
        except PbemError:
            continue  # check_reveal reports it
        where: dict[str, Any] = {"file": secret.file, "line": secret.line_of("key")}
        step = secret.raw.get("step")
        if check is not None and step is not None:
            reason = check(secret.raw["kind"], ruleset.parse_time(step), value)
            if reason is not None:
                out.append(Finding("secret.wrong-step", f"secret {sid}: {reason}", **where))
        if secret.raw["kind"] == target_kind and isinstance(value, Mapping) \
                and value.get("unit") != secret.raw.get("concerns"):
            out.append(Finding("secret.bad-target", f"secret {sid} was sealed as {secret.raw.get('concerns')}'s "
                               f"target, but names {value.get('unit')!r}", **where))
    return out


def opening_context(status: Status | None, over: bool) -> tuple[set[tuple[str | None, str]], bool]:
    """What `reveal_findings` needs of the state before a commit: the (step, owner) of the reveals it waits for,
    and whether the battle is over (replay's end, or the status's: an agreement ended it)."""
    asked = {(b.at, b.player) for b in status.pending if b.kind == SECRET} if status is not None else set()
    return asked, over or (status is not None and status.over)


def _opening_findings(before: Mapping[str, Secret], after: Mapping[str, Secret], ruleset: Any,
                      asked: Collection[tuple[str | None, str]], over: bool) -> list[Finding]:
    """When a step's sealed input may be opened, and that its box holds the part opened before (reveal_findings)."""
    out: list[Finding] = []
    sealing = ruleset.sealing
    until_end: frozenset[str] = sealing.sealed_until_end if sealing is not None else frozenset()
    project = sealing.sealed_part if sealing is not None else None
    for sid in sorted(after):
        secret, old = after[sid], before.get(sid)
        if old is None or old.withheld or "step" not in secret.raw:
            continue
        step, kind = secret.raw["step"], secret.raw["kind"]
        if secret.part_opened and not old.part_opened and not old.revealed and (step, secret.owner) not in asked:
            out.append(Finding("secret.early-open", f"secret {sid}: its part is opened once every player owing "
                               f"input at {step} has sealed and the step asks for it, not before (nobody sees a "
                               "speed before sealing his own)", file=secret.file, line=secret.line_of("part")))
        if not secret.revealed or old.revealed:
            continue
        where: dict[str, Any] = {"file": secret.file, "line": secret.line_of("key")}
        if kind in until_end and not over:
            out.append(Finding("secret.early-reveal", f"secret {sid}: a {kind} stays sealed until the end of the "
                               "battle, when it is opened and audited (seed §2.C); only its part is opened at "
                               f"{step}", **where))
        if secret.part_opened and project is not None:
            try:
                held = project(kind, secret.value())
            except PbemError:
                continue  # a box that does not open is check_reveal's finding
            if held is None or canonical(held) != canonical(secret.opened_part()):
                out.append(Finding("secret.part-mismatch", f"secret {sid}: its box holds {held}, but the part "
                                   f"opened at {step} was {secret.opened_part()}: the turn was played with a part "
                                   "its box does not hold (the seed's cheater, tarred and feathered: the others "
                                   "record his forfeit)", **where))
    return out
