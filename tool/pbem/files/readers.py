"""The readers of a game repository's single documents (DESIGN §2): game.yaml, players/<id>.yaml, status.yaml,
dice/<batch>.yaml, secrets/<id>.yaml and agreements/<author>-NNNN.yaml (DESIGN §4.8).
bytes -> strict YAML -> schema -> frozen data; every error names the file, line and rule.

An agreement is read against the schema pbem/agreement/1, which checks each kind's content (a start agreement:
the game.yaml hash, and `first` or `roll`); an erratum's entries are then checked as report
entries are (the ruleset's action schema, a game time), so a correction can only ever put into the report what
a report file would accept."""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from pbem.crypto.keys import PublicKey
from pbem.errors import PbemError
from pbem.files.layout import GAME, STATUS
from pbem.formats import schemas, times, yamlsafe
from pbem.protocol.agreements import Agreement
from pbem.protocol.kinds import ERRATUM
from pbem.protocol.dice import ESCROW, Batch
from pbem.protocol.game import Manifest, Seat
from pbem.protocol.model import Entry, PlayerInputs, Status, notes_of
from pbem.protocol.secrets import Secret
from pbem.rulesets import get as get_ruleset
from pbem.rulesets.base import Ruleset, SetupError


def _check_times(raw: Mapping[str, Any], doc: yamlsafe.Document) -> None:
    """The calendar behind the schema's patterns: no February 30 in `paused_until` (rule time.invalid)."""
    if raw.get("paused_until") is not None:
        times.parse_pause(raw["paused_until"], file=GAME, line=doc.line_of(("paused_until",)))


def read_manifest(data: bytes) -> Manifest:
    doc = yamlsafe.load(data, GAME)
    schemas.validate("pbem/game/1", doc.data, file=GAME, doc=doc)
    raw = doc.data
    _check_times(raw, doc)
    ruleset = get_ruleset(raw["ruleset"])
    setup = raw.get("setup") or {}
    setup_schema = ruleset.setup_schema
    if setup_schema:
        schemas.validate(setup_schema, setup, file=GAME, doc=doc, base=("setup",))
    seats = []
    seen: set[str] = set()
    for i, seat in enumerate(raw["players"]):
        if seat["id"] in seen:
            raise PbemError("schema.invalid", f"player id {seat['id']!r} appears twice", file=GAME,
                            line=doc.line_of(("players", i)), exit_code=1)
        if seat["id"] == ESCROW:
            raise PbemError("schema.invalid", f"{ESCROW!r} is reserved for the dice escrow", file=GAME,
                            line=doc.line_of(("players", i)), exit_code=1)
        seen.add(seat["id"])
        key = PublicKey.from_line(seat["key"]) if seat.get("key") else None
        seats.append(Seat(seat["id"], seat.get("name", seat["id"]), key, seat.get("role", "player")))
    keys = [s.key.raw for s in seats if s.key is not None]
    if len(keys) != len(set(keys)):
        raise PbemError("schema.invalid", "two seats share one key", file=GAME, line=doc.line_of(("players",)),
                        exit_code=1)
    try:
        ruleset.initial_state(setup, [s.id for s in seats if s.role == "player"])
    except SetupError as exc:  # a ruleset's own rule, at the field it names
        raise PbemError(exc.rule, f"setup: {exc}", file=GAME, line=doc.line_of(("setup", *exc.path)),
                        exit_code=1) from None
    except ValueError as exc:
        raise PbemError("schema.invalid", f"setup: {exc}", file=GAME, line=doc.line_of(("setup",)),
                        exit_code=1) from None
    escrow = (raw.get("dice") or {}).get("escrow_key")
    return Manifest(raw["id"], raw.get("title", raw["id"]), raw["ruleset"], tuple(seats), setup,
                    raw.get("pbem"), raw, PublicKey.from_line(escrow) if escrow else None,
                    hashlib.sha256(data).hexdigest(),
                    {seat["id"]: doc.line_of(("players", i)) for i, seat in enumerate(raw["players"])})


def parse_time(ruleset: Ruleset, text: str, file: str, line: int) -> Any:
    try:
        return ruleset.parse_time(text)
    except ValueError as exc:
        raise PbemError("schema.bad-time", f"{text!r} is not a game time: {exc}", file=file, line=line,
                        exit_code=1) from None


def read_players(data: bytes, file: str, ruleset: Ruleset) -> PlayerInputs:
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {}
    schemas.validate("pbem/players/1", raw, file=file, doc=doc)
    through_text = raw.get("through")
    through = None
    if through_text:
        try:
            through = ruleset.parse_time(through_text)
        except ValueError:  # the line only now: finding it reads the file again (yamlsafe's fast reader)
            through = parse_time(ruleset, through_text, file, doc.line_of(("through",)))
    condition_schema = ruleset.condition_schema
    for i, condition in enumerate(raw.get("breaks") or ()):
        line = doc.line_of(("breaks", i))
        if "at" in condition:
            extra = set(condition) - {"at"}
            if extra:
                raise PbemError("schema.bad-condition", f"an explicit break takes only `at`, not {sorted(extra)}",
                                file=file, line=line, exit_code=1)
            parse_time(ruleset, str(condition["at"]), file, line)
            continue
        if condition_schema:
            schemas.validate(condition_schema, condition, file=file, doc=doc, base=("breaks", i))
        reason = ruleset.condition_error(condition)
        if reason:
            raise PbemError("schema.bad-condition", reason, file=file, line=line, exit_code=1)
    return PlayerInputs(through, through_text, tuple(raw.get("breaks") or ()), tuple(raw.get("plans") or ()), file)


def read_status(data: bytes) -> Status:
    return status_of(yamlsafe.load(data, STATUS))


def status_of(doc: yamlsafe.Document) -> Status:
    """status.yaml as loaded (by `yamlsafe.load`), checked and read."""
    schemas.validate("pbem/status/1", doc.data if doc.data is not None else {}, file=STATUS, doc=doc)
    return Status.from_data(doc.data)


def read_batch(data: bytes, file: str) -> Batch:
    doc = yamlsafe.load(data, file)
    schemas.validate("pbem/dice/1", doc.data, file=file, doc=doc)
    return Batch(doc.data, file, _top_lines(doc))


def read_secret(data: bytes, file: str) -> Secret:
    doc = yamlsafe.load(data, file)
    schemas.validate("pbem/secret/1", doc.data, file=file, doc=doc)
    return Secret(doc.data, file, _top_lines(doc))


def _top_lines(doc: yamlsafe.Document) -> dict[str, int]:
    """The line of each top-level field: findings about a dice batch or a secret name it (DESIGN §11)."""
    return {key: doc.line_of((key,)) for key in doc.data} if isinstance(doc.data, dict) else {}


def read_agreement(data: bytes, file: str, ruleset: Ruleset | None = None) -> Agreement:
    """One agreement; raises PbemError naming file, line and rule for anything malformed. An erratum needs the
    game's `ruleset` to read its entries (without it, they are left unread)."""
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {}
    schemas.validate("pbem/agreement/1", raw, file=file, doc=doc)
    entries = read_entries(raw["content"], doc, file, ruleset, ("content",)) \
        if raw["kind"] == ERRATUM and ruleset is not None else ((), ())
    return Agreement(raw, file, {key: doc.line_of((key,)) for key in raw}, entries)


def read_entries(raw: Mapping[str, Any], doc: Any, file: str, ruleset: Ruleset,
                 base: tuple) -> tuple[tuple[Entry, ...], tuple[Entry, ...]]:
    """The `removed` and `added` entries of a schema-valid erratum's content (`raw`, found at `base` in `doc`),
    parsed as report entries: their `file` is the report file they belong in, their `line` the line in the
    agreement file."""
    action_schema = ruleset.action_schema
    lists: dict[str, tuple[Entry, ...]] = {}
    for side in ("removed", "added"):
        entries = []
        for i, item in enumerate(raw[side]):
            line = doc.line_of((*base, side, i))
            if action_schema:
                schemas.validate(action_schema, item["do"], file=file, doc=doc, base=(*base, side, i, "do"))
            at = parse_time(ruleset, item["at"], file, line)
            report = f"report/{ruleset.period_of(at)}.yaml"
            entries.append(Entry(at, item["at"], item["by"], item.get("unit"), item["do"], report, line,
                                 notes=notes_of(item)))
        lists[side] = tuple(entries)
    return lists["removed"], lists["added"]
