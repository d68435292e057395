"""A game repository's files, read strictly into the protocol's data (DESIGN §2).

bytes -> strict YAML -> schema -> frozen dataclasses. Each file kind has one reader; every error names the
file, line and rule. Parsed files are cached by blob id in a small bounded cache: most files do not change
from one commit to the next, and a changed file has a new id (no unbounded cache, DESIGN §11).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from pbem.crypto.keys import PublicKey
from pbem.errors import Finding, PbemError
from pbem.formats import schemas, times, yamlsafe
from pbem.formats.spans import common_prefix, common_suffix
from pbem.protocol.agreements import START, Agreement
from pbem.protocol.dice import ESCROW, Batch
from pbem.protocol.errata import Erratum
from pbem.protocol.model import (Entry, Inputs, Message, PlayerInputs, PressFile, ReportFile, Rolled,
                                 SealedInput, Status, notes_of)
from pbem.protocol.openings import opened_value
from pbem.protocol.secrets import Secret
from pbem.protocol.serving import order_refs, permutation, start_sides
from pbem.rulesets import get as get_ruleset
from pbem.rulesets.base import Ruleset
from pbem.verify.agreementfile import AGREEMENT_RE, read_agreement
from pbem.verify.erratafile import ERRATUM_RE, read_erratum

GAME = "game.yaml"
STATUS = "status.yaml"
README = "README.md"
WORKFLOW = ".github/workflows/pbem.yml"
CODEOWNERS = ".github/CODEOWNERS"  # optional: who must review a change of .github/ on GitHub (docs/github.md)
FIXED_PATHS = {GAME, STATUS, README, WORKFLOW, CODEOWNERS}
PLAYERS_RE = re.compile(r"players/([a-z][a-z0-9_]{0,15})\.yaml\Z")
REPORT_RE = re.compile(r"report/([a-z0-9][a-z0-9-]{0,31})\.yaml\Z")
DICE_RE = re.compile(r"dice/(b[0-9]{4,6}|[a-z][a-z0-9_-]{0,15}-[0-9]{4,6})\.yaml\Z")
SECRET_RE = re.compile(r"secrets/(s[0-9]{4,6}|[a-z][a-z0-9_-]{0,15}-[0-9]{4,6})\.yaml\Z")  # protocol.secrets
PRESS_RE = re.compile(r"press/([a-z][a-z0-9-]{0,31})\.yaml\Z")  # press/<author>.yaml: judged against the seats
BLOB_MODE = 0o100644


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
        return self._players

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
    errata: Mapping[str, Erratum] = field(default_factory=dict)  # erratum id -> erratum (DESIGN §4.8)
    agreements: Mapping[str, Agreement] = field(default_factory=dict)  # file -> agreement (DESIGN §4.8)
    workflow: str | None = None  # the git blob id of WORKFLOW, which only an upgrade agreement changes


FILE_BYTES = 16  # memory a parsed file holds per byte of YAML it was read from (measured on report files)
LINE_BYTES = 28  # the same for a report line kept by its text: the line, the mapping read from it, its entry
ITEM_BYTES = 512  # what any kept value costs at least, so that many small ones count too
_MISSING = object()


class ParseCache:
    """A least-recently-used cache of parsed files keyed by (blob id, kind), bounded by the memory its values
    hold, each weighed by the size of what it was read from (DESIGN §9: caches bounded in bytes). `lines`:
    the same for report lines by their text, with its own budget."""

    def __init__(self, budget: int = 48 << 20, lines: int = 32 << 20) -> None:
        self.budget = budget
        self.held = 0
        self._items: OrderedDict[tuple[str, ...], tuple[Any, int]] = OrderedDict()
        self.lines: ParseCache | None = ParseCache(lines, 0) if lines else None

    def get(self, key: tuple[str, ...], make: Callable[[], Any], weight: int | Callable[[], int] = 0) -> Any:
        """The value kept under `key`, else `make()`, kept at `weight` bytes (or what `weight()` says once
        it is made) and pushing out the least recently used values beyond the budget."""
        found = self._items.get(key, _MISSING)
        if found is not _MISSING:
            self._items.move_to_end(key)
            return found[0]  # type: ignore[index]
        value = make()
        cost = ITEM_BYTES + (weight() if callable(weight) else weight)
        if cost > self.budget:
            return value  # not kept: it would push out everything else, and be pushed out next
        self._items[key] = (value, cost)
        self.held += cost
        while self.held > self.budget:
            _, (_, gone) = self._items.popitem(last=False)
            self.held -= gone
        return value

    @property
    def count(self) -> int:
        """How many values are kept (not `__len__`: an empty cache is still a cache, and truthy)."""
        return len(self._items)


def is_game_path(path: str) -> bool:
    """Whether a path belongs to the game layout (DESIGN §2); only these are ever committed."""
    return path in FIXED_PATHS or any(r.match(path) for r in (PLAYERS_RE, REPORT_RE, DICE_RE, SECRET_RE, PRESS_RE,
                                                           ERRATUM_RE, AGREEMENT_RE))


def layout_findings(files: Mapping[str, tuple[str, int]], changed: set[str] | None = None,
                    added: set[str] | None = None) -> list[Finding]:
    """Only the paths the game layout allows, only regular files (DESIGN §3 Trees). With `changed` (and the
    new paths among them, `added`), only those are looked at, the rest having passed at an earlier commit:
    a commit costs what it changed."""
    found = []
    if changed is None or added:
        folded: dict[str, str] = {}
        for path in sorted(files):
            twin = folded.get(path.lower())
            if twin is not None and (changed is None or path in added or twin in added):  # type: ignore[operator]
                found.append(Finding("tree.case-twin", f"{path} and {twin} differ only in case", file=path))
            folded[path.lower()] = path
    for path in sorted(files) if changed is None else sorted(p for p in changed if p in files):
        mode = files[path][1]
        if not is_game_path(path):
            found.append(Finding("tree.unexpected-path", f"{path} is not part of a game's layout "
                                 "(game.yaml, status.yaml, players/<id>.yaml, report/<period>.yaml, "
                                 "dice/<batch>.yaml, secrets/<id>.yaml, press/<seat>.yaml, errata/<id>.yaml, "
                                 "agreements/<id>.yaml, README.md, .github/CODEOWNERS)",
                                 file=path))
        elif mode != BLOB_MODE:
            found.append(Finding("tree.bad-mode", f"{path} has mode {mode:o}; only regular files (100644)",
                                 file=path))
    return found


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
    setup_schema = getattr(ruleset, "setup_schema", None)
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
    condition_schema = getattr(ruleset, "condition_schema", None)
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


MAX_ENTRIES = 5_000  # schemas/report.json entries.maxItems
ENTRY_LINE = re.compile(r"  - \{[^\n]*\}\Z")  # one entry per line, as pbem writes (DESIGN §2)


def read_report(data: bytes, file: str, ruleset: Ruleset, lines: ParseCache | None = None,
                previous: ReportFile | None = None) -> ReportFile:
    """A report file's entries. A file in pbem's own layout (`entries:` then one flow mapping per line) is read
    line by line, each line's parse cached by its text; when it is `previous` (its version one commit back)
    with lines appended, only those are read, so a commit that appends one entry parses one line, and when it
    is `previous` edited, only the lines that differ (`_read_edited`). Any other valid layout is parsed whole
    (DESIGN §2)."""
    if (previous is not None and previous.source and len(data) <= yamlsafe.MAX_BYTES
            and data.startswith(previous.source) and previous.source.endswith(b"\n")):
        more = _rows(data[len(previous.source):])
        if more and all(ENTRY_LINE.match(r) for r in more):
            added = _line_entries(more, len(previous.entries) + 2, file, ruleset, lines)
            return previous.appended(added, data)
    if (previous is not None and previous.source and len(data) <= yamlsafe.MAX_BYTES
            and data.endswith(b"\n") and previous.source.endswith(b"\n")):
        edited = _read_edited(previous, data, file, ruleset, lines)
        if edited is not None:
            return edited
    rows = _rows(data)
    if (lines is not None and len(data) <= yamlsafe.MAX_BYTES and rows and rows[0] == "entries:"
            and all(ENTRY_LINE.match(r) for r in rows[1:])):
        return ReportFile(_line_entries(rows[1:], 2, file, ruleset, lines), source=data)
    return _read_report_whole(data, file, ruleset)


def _read_edited(previous: ReportFile, data: bytes, file: str, ruleset: Ruleset,
                 lines: ParseCache | None) -> ReportFile | None:
    """`previous` (read line by line) edited into `data`, in pbem's layout still: only the lines that differ
    are read, an entry that moved keeps what was read of it, so a commit costs the lines it changed and a
    comparison of the rest in C, not a parse of the whole file (DESIGN §9). None when `data` is in another
    layout (the whole-file reader then decides)."""
    old = previous.source
    start = common_prefix(old, data)
    start = old.rfind(b"\n", 0, start) + 1  # whole lines only
    if start < len(b"entries:\n"):
        return None
    end = common_suffix(old, data, min(len(old), len(data)) - start)
    if end and (data[len(data) - end - 1] != 0x0A or old[len(old) - end - 1] != 0x0A):  # whole lines only
        end = len(data) - data.index(b"\n", len(data) - end) - 1
    first = old.count(b"\n", 0, start) - 1  # entries before the first changed line
    was = old[start:len(old) - end].split(b"\n")[:-1]
    now = data[start:len(data) - end].split(b"\n")[:-1]
    entries = previous.entries
    if len(was) == len(now):  # lines replaced in place: compare them line by line
        changed = [i for i, a, b in zip(range(len(now)), was, now) if a != b]
    else:
        changed = list(range(len(now)))
    if len(was) != len(now):
        reuse = dict(zip(was, entries[first:first + len(was)]))
    else:
        reuse = {was[i]: entries[first + i] for i in changed}
    texts: dict[int, str] = {}
    for i in changed:
        if now[i] not in reuse:
            try:
                texts[i] = now[i].decode("utf-8")
            except UnicodeDecodeError:
                return None
            if not ENTRY_LINE.match(texts[i]):
                return None
    total = len(entries) - len(was) + len(now)
    if total == 0:
        return None  # `entries:` alone is no list: the whole-file reader says so
    if total > MAX_ENTRIES:
        raise PbemError("schema.invalid", f"entries: has {total} items; expected at most {MAX_ENTRIES}",
                        file=file, line=MAX_ENTRIES + 2, exit_code=1)
    period = file[len("report/"):-len(".yaml")]
    new: list[Entry] = []
    for i in changed:
        known = reuse.get(now[i])
        new.append(known.at_line(first + i + 2) if known is not None
                   else _line_entry(texts[i], file, first + i + 2, ruleset, period, lines))
    if len(was) == len(now):
        out = list(entries)
        for i, entry in zip(changed, new):
            out[first + i] = entry
        result, moved = tuple(out), False
        removed, gone_rows = [entries[first + i] for i in changed], [was[i] for i in changed]
        came_rows = [now[i] for i in changed]
    else:
        shift = len(now) - len(was)
        tail = entries[first + len(was):]
        result = entries[:first] + tuple(new) + (tuple(e.at_line(e.line + shift) for e in tail) if shift else tail)
        moved = bool(shift and tail)
        removed, gone_rows, came_rows = list(entries[first:first + len(was)]), was, now
    if len(removed) + len(new) > 64:  # many lines differ: those that only moved are no change, leave them out
        taken, put = Counter(gone_rows), Counter(came_rows)
        removed, new = _picked(removed, gone_rows, taken - put), _picked(new, came_rows, put - taken)
        moved = True  # entries that moved are in neither list: the index is made afresh
    return previous.edited(result, tuple(removed), tuple(new), data, moved)


def _picked(items: list[Entry], rows: list[bytes], wanted: Counter) -> list[Entry]:
    """The items whose row is one of `wanted` (a multiset of rows), each row as often as it is wanted."""
    out = []
    for item, row in zip(items, rows):
        if wanted[row] > 0:
            wanted[row] -= 1
            out.append(item)
    return out


def _rows(data: bytes) -> list[str]:
    """The lines of `data`, without the empty one a final newline leaves; a single line that is no entry when
    `data` is not UTF-8 (the whole-file reader then names the offending byte)."""
    try:
        rows = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return ["\x00"]
    if rows and rows[-1] == "":
        rows.pop()
    return rows


def _line_entries(rows: list[str], first: int, file: str, ruleset: Ruleset,
                  lines: ParseCache | None) -> tuple[Entry, ...]:
    """The entries of `rows`, one per line, the first at line `first` of the file (line 1 is `entries:`)."""
    count = first - 2 + len(rows)
    if count > MAX_ENTRIES:  # the whole-file schema's cap, so both paths accept the same files
        raise PbemError("schema.invalid", f"entries: has {count} items; expected at most {MAX_ENTRIES}",
                        file=file, line=MAX_ENTRIES + 2, exit_code=1)
    period = file[len("report/"):-len(".yaml")]
    return tuple(_line_entry(row, file, number, ruleset, period, lines)
                 for number, row in enumerate(rows, start=first))


def _line_entry(row: str, file: str, number: int, ruleset: Ruleset, period: str,
                lines: ParseCache | None) -> Entry:
    if lines is None:
        at, item, key, notes = _read_entry_line(row, file, number, ruleset, period)
    else:
        at, item, key, notes = lines.get((row, ruleset.name, period),
                                         lambda: _read_entry_line(row, file, number, ruleset, period),
                                         LINE_BYTES * len(row))
    return Entry(at, item["at"], item["by"], item.get("unit"), item["do"], file, number, key, notes)


def _read_entry_line(row: str, file: str, number: int, ruleset: Ruleset,
                     period: str) -> tuple[Any, dict, bytes, dict]:
    """Parse and check one `  - {…}` line as if it stood in the whole file (same loader, same schemas)."""
    try:
        doc = yamlsafe.load(row.strip()[2:].encode(), file)
    except PbemError as exc:
        raise PbemError.from_finding(exc.finding.at(line=number) if exc.finding.line in (None, 1)
                                     else exc.finding, exc.exit_code) from None
    shifted = _ShiftedDoc(doc, number)
    schemas.validate("pbem/report/1#/$defs/entry", doc.data, file=file, doc=shifted)
    entry = _entry(doc.data, file, number, ruleset, period, shifted, ())
    return entry.at, doc.data, entry.key, entry.notes


class _ShiftedDoc:
    """A one-line document placed at its line in the file, for error locations."""

    def __init__(self, doc: yamlsafe.Document, line: int) -> None:
        self.doc, self.line = doc, line

    def line_of(self, path: tuple) -> int:
        return self.line


def _entry(item: dict, file: str, line: int, ruleset: Ruleset, period: str, doc: Any, base: tuple) -> Entry:
    action_schema = getattr(ruleset, "action_schema", None)
    if action_schema:
        schemas.validate(action_schema, item["do"], file=file, doc=doc, base=base + ("do",), memo=True)
    at = parse_time(ruleset, item["at"], file, line)
    if ruleset.period_of(at) != period:
        raise PbemError("report.wrong-file", f"entry at {item['at']} belongs in "
                        f"report/{ruleset.period_of(at)}.yaml, not {file}", file=file, line=line, exit_code=1)
    return Entry(at, item["at"], item["by"], item.get("unit"), item["do"], file, line, notes=notes_of(item))


def _read_report_whole(data: bytes, file: str, ruleset: Ruleset) -> ReportFile:
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {"entries": []}
    schemas.validate("pbem/report/1", raw, file=file, doc=doc)
    period = file[len("report/"):-len(".yaml")]
    return ReportFile(tuple(_entry(item, file, doc.line_of(("entries", i)), ruleset, period, doc, ("entries", i))
                            for i, item in enumerate(raw["entries"])))


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


def dice_book(batches: Mapping[str, Batch]) -> dict[str, Rolled]:
    """Every dice ref of the batches that stand (not voided), with its result once rolled (DESIGN §5)."""
    book: dict[str, Rolled] = {}
    for batch in sorted(batches.values(), key=lambda b: b.id):
        if batch.voided:
            continue
        results = batch.results or []
        for j, purpose in enumerate(batch.raw["rolls"]):
            if "ref" in purpose:
                book[purpose["ref"]] = Rolled(batch.id, batch.roller, results[j] if j < len(results) else None,
                                               purpose.get("sides", batch.sides), batch.lost())
    return book


def _known_players(report: ReportFile | tuple[Entry, ...], players: tuple[str, ...]) -> bool:
    for entry in report.entries if isinstance(report, ReportFile) else report:
        if entry.by not in players:
            raise PbemError("players.unknown", f"entry by unknown player {entry.by!r}", file=entry.file,
                            line=entry.line, exit_code=1)
    return True


MAX_MESSAGES = 20_000  # schemas/press.json messages.maxItems


def read_press(data: bytes, file: str, ruleset: Ruleset, previous: PressFile | None = None) -> PressFile:
    """A press file's messages in file order, each checked against the ruleset's press schema. As with report
    files (`read_report`), a file in pbem's own layout (`messages:` then one flow mapping per line) that is
    `previous` with lines appended is read in those lines only; any other valid layout is parsed whole."""
    if (previous is not None and previous.source and len(data) <= yamlsafe.MAX_BYTES
            and data.startswith(previous.source) and previous.source.endswith(b"\n")):
        more = _rows(data[len(previous.source):])
        if more and all(ENTRY_LINE.match(r) for r in more):
            return previous.appended(_line_messages(more, len(previous.messages) + 2, file, ruleset), data)
    rows = _rows(data)
    if (len(data) <= yamlsafe.MAX_BYTES and rows and rows[0] == "messages:" and len(rows) > 1
            and all(ENTRY_LINE.match(r) for r in rows[1:])):
        return PressFile(_line_messages(rows[1:], 2, file, ruleset), source=data)
    return _read_press_whole(data, file, ruleset)


def _line_messages(rows: list[str], first: int, file: str, ruleset: Ruleset) -> tuple[Message, ...]:
    """The messages of `rows`, one per line, the first at line `first` of the file (line 1 is `messages:`)."""
    count = first - 2 + len(rows)
    if count > MAX_MESSAGES:  # the whole-file schema's cap, so both paths accept the same files
        raise PbemError("schema.invalid", f"messages: has {count} items; expected at most {MAX_MESSAGES}",
                        file=file, line=MAX_MESSAGES + 2, exit_code=1)
    out = []
    for number, row in enumerate(rows, start=first):
        try:
            doc = yamlsafe.load(row.strip()[2:].encode(), file)
        except PbemError as exc:
            raise PbemError.from_finding(exc.finding.at(line=number) if exc.finding.line in (None, 1)
                                         else exc.finding, exc.exit_code) from None
        out.append(_message(doc.data, file, number, ruleset, _ShiftedDoc(doc, number), ()))
    return tuple(out)


def _message(item: Any, file: str, line: int, ruleset: Ruleset, doc: Any, base: tuple) -> Message:
    schemas.validate(getattr(ruleset, "press_schema", "pbem/press/message/1"), item, file=file, doc=doc,
                     base=base)
    if "at" in item:
        parse_time(ruleset, item["at"], file, line)
    return Message(item["by"], item.get("at"), item, file, line)


def _read_press_whole(data: bytes, file: str, ruleset: Ruleset) -> PressFile:
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {"messages": []}
    schemas.validate("pbem/press/1", raw, file=file, doc=doc)
    return PressFile(tuple(_message(item, file, doc.line_of(("messages", i)), ruleset, doc, ("messages", i))
                           for i, item in enumerate(raw["messages"])))


def sealed_book(secrets: Mapping[str, Secret]) -> dict[tuple[str, str], SealedInput]:
    """Each player's sealed input per sealed step (secrets with a `step`), with its content once revealed."""
    book: dict[tuple[str, str], SealedInput] = {}
    for secret in sorted(secrets.values(), key=lambda s: s.id):
        step = secret.raw.get("step")
        if step is None or (step, secret.owner) in book:
            continue
        # a withheld set opened by the other players' shares stands as sealed (protocol.openings)
        value = secret.value() if secret.revealed else opened_value(secret)
        book[(step, secret.owner)] = SealedInput(secret.id, value, secret.revealed or value is not None,
                                                 withheld=secret.raw.get("withheld", ""), part=secret.opened_part())
    return book


def target_book(secrets: Mapping[str, Secret]) -> dict[tuple[str, str], SealedInput]:
    """Each seeking weapon's sealed target (kind `target`, `concerns` naming the weapon), revealed or not, keyed
    by (its owner, the weapon): replay looks a weapon's target up by the weapon's owner, so nobody else's secret
    can stand for it (the verifier refuses a second one, or one sealed outside the launch commit)."""
    book: dict[tuple[str, str], SealedInput] = {}
    for secret in sorted(secrets.values(), key=lambda s: s.id):
        unit = secret.raw.get("concerns")
        if secret.raw["kind"] == "target" and unit and (secret.owner, unit) not in book:
            book[(secret.owner, unit)] = SealedInput(secret.id, secret.value() if secret.revealed else None,
                                                     secret.revealed, secret.owner, secret.raw.get("withheld", ""))
    return book


def press_book(press: Mapping[str, PressFile]) -> dict[str, tuple[Message, ...]]:
    """Messages grouped by the step they were sent during, for a tree read without its history: file by file,
    in path order. The recognition order is that of the commits that added the messages (DESIGN §7.2), which
    only history knows: `press_after` puts each commit's messages after those of the commits before it."""
    return _booked({}, [m for path in sorted(press) for m in press[path]])


def _booked(book: Mapping[str, tuple[Message, ...]], more: list[Message]) -> dict[str, tuple[Message, ...]]:
    """`book` with `more` after the messages of their steps (grouped first: one tuple built per step)."""
    grown: dict[str, list[Message]] = {}
    for message in more:
        if message.at is not None:
            grown.setdefault(message.at, []).append(message)
    out = dict(book)
    for at, messages in grown.items():
        out[at] = out.get(at, ()) + tuple(messages)
    return out


def press_added(before: Mapping[str, PressFile], after: Mapping[str, PressFile]) -> list[Message] | None:
    """The messages a commit appended (file by file, in path order: one commit has one author), or None when it
    changed or removed a message already sent (press is append-only: press.changed)."""
    added: list[Message] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if new is old:
            continue
        if new is None:
            if old is not None and old.messages:
                return None
            continue
        more = new.added_since(old)
        if more is None:
            return None
        added.extend(more)
    return added


def press_after(before: Mapping[str, PressFile], book: Mapping[str, tuple[Message, ...]],
                after: Mapping[str, PressFile]) -> Mapping[str, tuple[Message, ...]]:
    """The recognition order after a commit (DESIGN §7.2): the messages already sent keep their places (`book`,
    the order before it, of the files `before`), the ones it appended come after them, in the order it added
    them; never by file name. A commit that changed or removed sent messages (refused: press.changed) keeps
    the others in their places and puts the changed files' messages last."""
    added = press_added(before, after)
    if added is not None:
        return book if not added else _booked(book, added)
    touched = {p for p in set(before) | set(after) if before.get(p) is not after.get(p)}
    kept = {at: tuple(m for m in messages if m.file not in touched) for at, messages in book.items()}
    return _booked({at: ms for at, ms in kept.items() if ms},
                   [m for path in sorted(touched) for m in after.get(path, ())])


def in_commit_order(before: Game, game: Game) -> Game:
    """`game` (read from a tree alone, e.g. a working tree) with its press in the recognition order history gives,
    `before` being the game at its parent, already in that order (DESIGN §7.2)."""
    book = press_after(before.press, before.inputs.press, game.press)
    if book is game.inputs.press or book == game.inputs.press:
        return game
    return replace(game, inputs=replace(game.inputs, press=book))


def seed_cache(cache: ParseCache, game: Game, files: Mapping[str, tuple[str, int]]) -> None:
    """Fill `cache` with `game`'s files as already read, under the keys `read_game` looks up, so a commit on
    top of a kept state reads only what it changed (verify.cache)."""
    manifest = game.manifest
    name = manifest.ruleset_name
    by_path: dict[str, tuple[tuple[str, ...], Any]] = {GAME: (("game",), manifest)}
    if game.status is not None:
        by_path[STATUS] = (("status",), game.status)
    for player, inputs in game.inputs.per_player.items():
        by_path[f"players/{player}.yaml"] = (("players", name, f"players/{player}.yaml"), inputs)
    for path, report in game.inputs.files.items():
        by_path[path] = (("report", name, path), report)
    for batch in game.batches.values():
        by_path[batch.file] = (("dice", batch.file), batch)
    for secret in game.secrets.values():
        by_path[secret.file] = (("secret", secret.file), secret)
    for path, press in game.press.items():
        by_path[path] = (("press", name, path), press)
    for path, agreement in game.agreements.items():
        by_path[path] = (("agreement", path), agreement)
    for path, (suffix, value) in by_path.items():
        if path in files:
            oid = files[path][0]
            size = len(value.source) or 64 * len(value.entries) if isinstance(value, ReportFile) else 4096
            cache.get((oid,) + suffix, lambda v=value: v, FILE_BYTES * size)
            if suffix[0] == "report":
                cache.get((oid, "report-players", path) + manifest.players, lambda: True)


def read_game(
    files: Mapping[str, tuple[str, int]],
    blob: Callable[[str], bytes],
    cache: ParseCache | None = None,
) -> Game:
    """Read every game file of a tree (path -> (blob id, mode)); raises PbemError for the first bad file."""
    cache = cache or ParseCache()
    if GAME not in files:
        raise PbemError("tree.no-game", "no game.yaml here: not a game repository", file=GAME, exit_code=1)
    sizes: dict[str, int] = {}

    def read(oid: str) -> bytes:  # the blob, its size noted: what the cache weighs the parsed file by
        data = blob(oid)
        sizes[oid] = len(data)
        return data

    def parsed(key: tuple[str, ...], make: Callable[[], Any]) -> Any:
        return cache.get(key, make, lambda: FILE_BYTES * sizes.get(key[0], 0))  # type: ignore[union-attr]

    manifest = parsed((files[GAME][0], "game"), lambda: read_manifest(read(files[GAME][0])))
    ruleset = manifest.ruleset
    status = None
    if STATUS in files:
        status = parsed((files[STATUS][0], "status"), lambda: read_status(read(files[STATUS][0])))
    per_player: dict[str, PlayerInputs] = {}
    reports: dict[str, ReportFile] = {}
    batches: dict[str, Batch] = {}
    secrets: dict[str, Secret] = {}
    press: dict[str, PressFile] = {}
    errata: dict[str, Erratum] = {}
    agreements: dict[str, Agreement] = {}
    for path, (oid, _mode) in sorted(files.items()):
        m = PLAYERS_RE.match(path)
        if m:
            if m.group(1) not in manifest.players:
                raise PbemError("players.unknown", f"{path}: no player {m.group(1)!r} in game.yaml", file=path,
                                exit_code=1)
            per_player[m.group(1)] = parsed((oid, "players", manifest.ruleset_name, path),
                                            lambda: read_players(read(oid), path, ruleset))
        elif REPORT_RE.match(path):
            reports[path] = parsed((oid, "report", manifest.ruleset_name, path),
                                   lambda: read_report(read(oid), path, ruleset, cache.lines))
            cache.get((oid, "report-players", path) + manifest.players,
                      lambda: _known_players(reports[path], manifest.players))
        elif DICE_RE.match(path):
            batch = parsed((oid, "dice", path), lambda: read_batch(read(oid), path))
            batches[batch.id] = batch
        elif SECRET_RE.match(path):
            secret = parsed((oid, "secret", path), lambda: read_secret(read(oid), path))
            secrets[secret.id] = secret
        elif PRESS_RE.match(path):
            press[path] = parsed((oid, "press", manifest.ruleset_name, path),
                                 lambda: read_press(read(oid), path, ruleset))
        elif ERRATUM_RE.match(path):  # keyed by its file: a file whose id differs is judged, not hidden
            errata[path[len("errata/"):-len(".yaml")]] = parsed(
                (oid, "erratum", manifest.ruleset_name, path), lambda: read_erratum(read(oid), path, ruleset))
        elif AGREEMENT_RE.match(path):  # keyed by its file: a file whose id differs is judged, not hidden
            agreements[path] = parsed((oid, "agreement", manifest.ruleset_name, path),
                                      lambda: read_agreement(read(oid), path, ruleset))
    book = dice_book(batches)
    table = table_order(manifest, agreements, book)
    inputs = Inputs(table or manifest.players, reports, per_player, book, sealed_book(secrets),
                    press_book(press), target_book(secrets), ruleset.period_of, ordered_by_dice=table is not None)
    return Game(manifest, inputs, status, batches, secrets, press, errata, agreements,
                files[WORKFLOW][0] if WORKFLOW in files else None)


def table_order(manifest: Manifest, agreements: Mapping[str, Agreement],
                book: Mapping[str, Rolled]) -> tuple[str, ...] | None:
    """The order around the table when the start dice decide it (seed 000 §2.A): a start agreement every seat
    signed says `order: roll`, and the order dice (`start/order/1` … `n-1`, of n, n-1, …, 2 sides) are rolled;
    None otherwise (game.yaml's order). The start commit checks that the start it makes is the one agreed."""
    seats = manifest.players
    refs = order_refs(len(seats))
    if not refs or not any(a.kind == START and a.content.get("order") == "roll" and set(seats) <= set(a.signatures)
                           for a in agreements.values()):
        return None
    rolled = [book.get(ref) for ref in refs]
    dice = [r.result for ref, r in zip(refs, rolled)
            if r is not None and r.result is not None and r.sides == start_sides(ref, len(seats))]
    return permutation(seats, dice) if len(dice) == len(refs) else None


def read_changes(
    base: Game,
    files: Mapping[str, tuple[str, int]],
    changed: set[str],
    blob: Callable[[str], bytes],
    cache: ParseCache | None = None,
    statuses: Mapping[str, Status] | None = None,
) -> Game:
    """The game after a commit that changed `changed`, read on top of `base`, the game as read at its parent:
    only the changed files are read, a report file in pbem's layout only in the lines that changed, and a
    changed game.yaml with the same ruleset only checked against the files read (who sits may change).
    Gives what `read_game(files)` gives, and raises what it raises for the changed files. `statuses`:
    status.yaml files read already, by blob id (verify.fetch)."""
    if GAME not in files:
        return in_commit_order(base, read_game(files, blob, cache))
    manifest = base.manifest
    if GAME in changed:
        oid = files[GAME][0]
        manifest = (cache or ParseCache()).get((oid, "game"), lambda: read_manifest(blob(oid)))
        if manifest.ruleset_name != base.manifest.ruleset_name:  # other rules: every file is read against them anew
            return in_commit_order(base, read_game(files, blob, cache))
    reseated = manifest.players != base.manifest.players
    if reseated:
        _seated(manifest, files, changed, base)  # the same rules read the same files; only who sits changed
    ruleset = manifest.ruleset
    status = base.status
    if STATUS in changed:
        status = None
        if STATUS in files:
            status = (statuses or {}).get(files[STATUS][0]) or read_status(blob(files[STATUS][0]))
    per_player = dict(base.inputs.per_player)
    reports = dict(base.inputs.files)
    batches, secrets, press = dict(base.batches), dict(base.secrets), dict(base.press)
    errata = dict(base.errata)
    agreements = base.agreements  # copied only when an agreement changes
    kinds: set[str] = set()
    for path in sorted(changed):
        oid = files[path][0] if path in files else None
        m = PLAYERS_RE.match(path)
        if m:
            if oid is None:
                per_player.pop(m.group(1), None)
                continue
            if m.group(1) not in manifest.players:
                raise PbemError("players.unknown", f"{path}: no player {m.group(1)!r} in game.yaml", file=path,
                                exit_code=1)
            per_player[m.group(1)] = read_players(blob(oid), path, ruleset)
        elif REPORT_RE.match(path):
            if oid is None:
                reports.pop(path, None)
                continue
            before = reports.get(path)
            report = read_report(blob(oid), path, ruleset, cache.lines if cache else None, before)
            changes = None if reseated else report.changes_since(before)
            _known_players(changes[1] if changes is not None else report, manifest.players)
            reports[path] = report
        elif DICE_RE.match(path):
            kinds.add("dice")
            batches = {b.id: b for b in batches.values() if b.file != path}
            if oid is not None:
                batch = read_batch(blob(oid), path)
                batches[batch.id] = batch
        elif SECRET_RE.match(path):
            kinds.add("secrets")
            secrets = {s.id: s for s in secrets.values() if s.file != path}
            if oid is not None:
                secret = read_secret(blob(oid), path)
                secrets[secret.id] = secret
        elif PRESS_RE.match(path):
            kinds.add("press")
            before = press.pop(path, None)
            if oid is not None:
                press[path] = read_press(blob(oid), path, ruleset, before)
        elif ERRATUM_RE.match(path):
            errata.pop(path[len("errata/"):-len(".yaml")], None)
            if oid is not None:
                errata[path[len("errata/"):-len(".yaml")]] = read_erratum(blob(oid), path, ruleset)
        elif AGREEMENT_RE.match(path):
            agreements = {p: a for p, a in agreements.items() if p != path}
            if oid is not None:
                agreements[path] = read_agreement(blob(oid), path, ruleset)
    old = base.inputs
    if len(reports) != len(base.inputs.files) or reports.keys() != base.inputs.files.keys():
        reports = dict(sorted(reports.items()))  # in path order, as read_game gives them
    book = dice_book(batches) if "dice" in kinds else old.dice
    if base.status is not None and not reseated:  # started: the table order was fixed at the start
        table, by_dice = old.players, old.ordered_by_dice
    else:
        rolled = table_order(manifest, agreements, book)
        table, by_dice = rolled or manifest.players, rolled is not None
    inputs = Inputs(table, reports, per_player, book,
                    sealed_book(secrets) if "secrets" in kinds else old.sealed,
                    press_after(base.press, old.press, press) if "press" in kinds else old.press,
                    target_book(secrets) if "secrets" in kinds else old.targets, ruleset.period_of,
                    ordered_by_dice=by_dice)
    if agreements is not base.agreements:
        agreements = dict(sorted(agreements.items()))  # in path order, as read_game gives them
    return Game(manifest, inputs, status, batches, secrets, press, errata, agreements,
                files[WORKFLOW][0] if WORKFLOW in files else None)


def _seated(manifest: Manifest, files: Mapping[str, tuple[str, int]], changed: set[str], base: Game) -> None:
    """The files read at `base` and not changed now, against a game.yaml that seats other players: every
    players file and every entry must still name a seated player (players.unknown)."""
    for path in sorted(p for p in files if p not in changed):
        m = PLAYERS_RE.match(path)
        if m and m.group(1) not in manifest.players:
            raise PbemError("players.unknown", f"{path}: no player {m.group(1)!r} in game.yaml", file=path,
                            exit_code=1)
        report = base.inputs.files.get(path) if REPORT_RE.match(path) else None
        if report is not None:
            _known_players(report, manifest.players)


def read_files(files: Mapping[str, bytes], cache: ParseCache | None = None) -> Game:
    """Read game files given by content (a working tree, or a tree not committed yet), keyed by their git blob
    ids so the parse cache serves them as it serves committed files."""
    ids = {path: blob_id(data) for path, data in files.items()}
    by_id = {ids[p]: data for p, data in files.items()}
    return read_game({p: (ids[p], BLOB_MODE) for p in files}, by_id.__getitem__, cache)


def blob_id(data: bytes) -> str:
    """The id git gives a blob with this content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
