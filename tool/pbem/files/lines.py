"""The one-entry-per-line reader of report/<period>.yaml and press/<author>.yaml (DESIGN §2, §9).

Both are a list under one key (`entries:`, `messages:`) that pbem writes one flow mapping per line. A file in
that layout is read line by line, each line parsed as if it stood in the whole file (same loader, same schemas);
when it is its version one commit back (`previous`) with lines appended, only those are read, so a commit that
appends one entry parses one line; a report file edited in place is read in the lines that differ
(`_read_edited`), each line's parse cached by its text. Any other valid layout is parsed whole. The formats
differ only in their key, their cap and how one item is read (`LineFormat`)."""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Callable

from pbem.errors import PbemError
from pbem.files.parsecache import LINE_BYTES, ParseCache
from pbem.files.readers import parse_time
from pbem.formats import schemas, yamlsafe
from pbem.formats.spans import common_prefix, common_suffix
from pbem.protocol.model import Entry, Message, PressFile, ReportFile, notes_of
from pbem.rulesets.base import Ruleset

MAX_ENTRIES = 5_000  # schemas/report.json entries.maxItems
MAX_MESSAGES = 20_000  # schemas/press.json messages.maxItems
ENTRY_LINE = re.compile(r"  - \{[^\n]*\}\Z")  # one entry per line, as pbem writes (DESIGN §2)


@dataclass(frozen=True)
class LineFormat:
    """One list-of-lines file kind. `row` reads one line (text, file, line number, ruleset, line cache) into its
    item; `whole` reads a file in any other layout; `count` is how many items a file read already holds.
    `fewest`: the rows a file in this layout has at least (its key line included). `cached_only`: a whole file
    is read line by line only with a line cache at hand (report files: the cache is what makes it pay)."""

    key: str
    most: int
    row: Callable[[str, str, int, Ruleset, ParseCache | None], Any]
    whole: Callable[[bytes, str, Ruleset], Any]
    make: Callable[..., Any]
    count: Callable[[Any], int]
    fewest: int = 1
    cached_only: bool = False
    edit: Callable[[Any, bytes, str, Ruleset, ParseCache | None], Any] | None = None


def read_lines(form: LineFormat, data: bytes, file: str, ruleset: Ruleset, lines: ParseCache | None = None,
               previous: Any = None) -> Any:
    """A file of `form`, read line by line where it is in pbem's layout (on top of `previous` where it is that
    version appended to, or edited), else whole."""
    if (previous is not None and previous.source and len(data) <= yamlsafe.MAX_BYTES
            and data.startswith(previous.source) and previous.source.endswith(b"\n")):
        more = _rows(data[len(previous.source):])
        if more and all(ENTRY_LINE.match(r) for r in more):
            return previous.appended(_line_items(form, more, form.count(previous) + 2, file, ruleset, lines), data)
    if (form.edit is not None and previous is not None and previous.source and len(data) <= yamlsafe.MAX_BYTES
            and data.endswith(b"\n") and previous.source.endswith(b"\n")):
        edited = form.edit(previous, data, file, ruleset, lines)
        if edited is not None:
            return edited
    rows = _rows(data)
    if ((lines is not None or not form.cached_only) and len(data) <= yamlsafe.MAX_BYTES and len(rows) >= form.fewest
            and rows[0] == form.key and all(ENTRY_LINE.match(r) for r in rows[1:])):
        return form.make(_line_items(form, rows[1:], 2, file, ruleset, lines), source=data)
    return form.whole(data, file, ruleset)


def read_report(data: bytes, file: str, ruleset: Ruleset, lines: ParseCache | None = None,
                previous: ReportFile | None = None) -> ReportFile:
    """A report file's entries (`read_lines`): a commit that appends one entry parses one line, one that edits
    the file the lines that differ."""
    return read_lines(REPORT, data, file, ruleset, lines, previous)  # type: ignore[no-any-return]


def read_press(data: bytes, file: str, ruleset: Ruleset, previous: PressFile | None = None) -> PressFile:
    """A press file's messages in file order, each checked against the ruleset's press schema (`read_lines`)."""
    return read_lines(PRESS, data, file, ruleset, None, previous)  # type: ignore[no-any-return]


def _within(form: LineFormat, count: int, file: str) -> None:
    """The whole-file schema's cap on the list, so both paths accept the same files."""
    if count > form.most:
        raise PbemError("schema.invalid", f"{form.key} has {count} items; expected at most {form.most}",
                        file=file, line=form.most + 2, exit_code=1)


def _line_items(form: LineFormat, rows: list[str], first: int, file: str, ruleset: Ruleset,
                lines: ParseCache | None) -> tuple[Any, ...]:
    """The items of `rows`, one per line, the first at line `first` of the file (line 1 is the key)."""
    _within(form, first - 2 + len(rows), file)
    return tuple(form.row(row, file, number, ruleset, lines) for number, row in enumerate(rows, start=first))


def _load_line(row: str, file: str, number: int) -> yamlsafe.Document:
    """One `  - {…}` line loaded as a document of its own, its errors placed at its line in the file."""
    try:
        return yamlsafe.load(row.strip()[2:].encode(), file)
    except PbemError as exc:
        # a line read alone is line 1 of its own document: its place in the file is `number` (`at` keeps a known line)
        raise PbemError.from_finding(replace(exc.finding, line=number), exc.exit_code) from None


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
    _within(REPORT, total, file)
    new: list[Entry] = []
    for i in changed:
        known = reuse.get(now[i])
        new.append(known.at_line(first + i + 2) if known is not None
                   else _line_entry(texts[i], file, first + i + 2, ruleset, lines))
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


def _line_entry(row: str, file: str, number: int, ruleset: Ruleset, lines: ParseCache | None) -> Entry:
    period = file[len("report/"):-len(".yaml")]
    if lines is None:
        return _read_entry_line(row, file, number, ruleset, period)
    # kept by its text in its file: the same line is the same entry wherever in the file it stands
    kept: Entry = lines.get(_line_key(row, ruleset.name, file),
                            lambda: _read_entry_line(row, file, number, ruleset, period), LINE_BYTES * len(row))
    return kept.at_line(number)


LineKey = tuple[str, str, str]  # a report line's text, the ruleset it was read by, its file


def _line_key(row: str, ruleset: str, file: str) -> LineKey:
    return row, ruleset, file


def entries_ahead(file: str, before: bytes, more: bytes, ruleset: Ruleset) -> dict[LineKey, Entry]:
    """The entries of the lines `more` appends to the report file `before`, read ahead of the judge by the
    fetching process (verify.fetch), under the keys the line cache keeps them by. A line that does not read
    is left out: the judge reads it itself and meets its finding there."""
    out: dict[LineKey, Entry] = {}
    if not before.endswith(b"\n") or len(before) + len(more) > yamlsafe.MAX_BYTES:
        return out  # not read line by line (`read_lines`)
    for number, row in enumerate(_rows(more), start=before.count(b"\n") + 1):
        if ENTRY_LINE.match(row):
            try:
                out[_line_key(row, ruleset.name, file)] = _line_entry(row, file, number, ruleset, None)
            except PbemError:
                continue
    return out


def keep_entries(lines: ParseCache | None, entries: dict[LineKey, Entry]) -> None:
    """Entries read ahead (`entries_ahead`) put in the line cache, where reading their lines finds them."""
    if lines is None:
        return
    for key, entry in entries.items():
        lines.get(key, lambda entry=entry: entry, LINE_BYTES * len(key[0]))  # type: ignore[misc]


def _read_entry_line(row: str, file: str, number: int, ruleset: Ruleset, period: str) -> Entry:
    """Parse and check one `  - {…}` line as if it stood in the whole file (same loader, same schemas)."""
    doc = _load_line(row, file, number)
    shifted: Any = _ShiftedDoc(doc, number)  # stands for a document: only its line_of is asked
    schemas.validate("pbem/report/1#/$defs/entry", doc.data, file=file, doc=shifted)
    return _entry(doc.data, file, number, ruleset, period, shifted, ())


class _ShiftedDoc:
    """A one-line document placed at its line in the file, for error locations."""

    def __init__(self, doc: yamlsafe.Document, line: int) -> None:
        self.doc, self.line = doc, line

    def line_of(self, path: tuple) -> int:
        return self.line


def _entry(item: dict, file: str, line: int, ruleset: Ruleset, period: str, doc: Any, base: tuple) -> Entry:
    action_schema = ruleset.action_schema
    if action_schema:
        schemas.validate(action_schema, item["do"], file=file, doc=doc, base=base + ("do",), memo=True)
    at = parse_time(ruleset, item["at"], file, line)
    if ruleset.period_of(at) != period:
        raise PbemError("report.wrong-file", f"entry at {item['at']} belongs in "
                        f"report/{ruleset.period_of(at)}.yaml, not {file}", file=file, line=line, exit_code=1)
    return Entry(at, _shared(item["at"]), _shared(item["by"]), _shared(item.get("unit")), _shared_in(item["do"]),
                 _shared(file), line, notes=_shared_in(notes_of(item)))


def _shared(value: Any) -> Any:
    """A string as the one object every entry holds for it (sys.intern: freed with its last holder). A long
    game's entries repeat a few strings (author, unit, file, the names in `do`) tens of thousands of times: held
    once, the state kept after a verification (verify/cache.py) is written and loaded with each once, by
    pickle's own memo."""
    return sys.intern(value) if type(value) is str else value


def _shared_in(mapping: dict) -> dict:
    """`mapping` with its keys and string values shared (`_shared`)."""
    return {_shared(k): _shared(v) for k, v in mapping.items()}


def _read_report_whole(data: bytes, file: str, ruleset: Ruleset) -> ReportFile:
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {"entries": []}
    schemas.validate("pbem/report/1", raw, file=file, doc=doc)
    period = file[len("report/"):-len(".yaml")]
    return ReportFile(tuple(_entry(item, file, doc.line_of(("entries", i)), ruleset, period, doc, ("entries", i))
                            for i, item in enumerate(raw["entries"])))


def _line_message(row: str, file: str, number: int, ruleset: Ruleset, lines: ParseCache | None) -> Message:
    doc = _load_line(row, file, number)
    return _message(doc.data, file, number, ruleset, _ShiftedDoc(doc, number), ())


def _message(item: Any, file: str, line: int, ruleset: Ruleset, doc: Any, base: tuple) -> Message:
    schemas.validate(ruleset.press.press_schema if ruleset.press is not None else "pbem/press/message/1", item,
                     file=file, doc=doc, base=base)
    if "at" in item:
        parse_time(ruleset, item["at"], file, line)
    return Message(item["by"], item.get("at"), item, file, line)


def _read_press_whole(data: bytes, file: str, ruleset: Ruleset) -> PressFile:
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {"messages": []}
    schemas.validate("pbem/press/1", raw, file=file, doc=doc)
    return PressFile(tuple(_message(item, file, doc.line_of(("messages", i)), ruleset, doc, ("messages", i))
                           for i, item in enumerate(raw["messages"])))


REPORT = LineFormat("entries:", MAX_ENTRIES, _line_entry, _read_report_whole, ReportFile,
                    lambda report: len(report.entries), fewest=2, cached_only=True, edit=_read_edited)
PRESS = LineFormat("messages:", MAX_MESSAGES, _line_message, _read_press_whole, PressFile,
                   lambda press: len(press.messages), fewest=2)
