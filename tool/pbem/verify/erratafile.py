"""Reading errata (DESIGN §4.8): the old errata/<id>.yaml files (strict YAML, schema pbem/erratum/1), and the
entries of an erratum, in either form (an old file, or an agreement of kind `erratum`): each listed entry is
checked as a report entry is (the ruleset's action schema, a game time), so a correction can only ever put into
the report what a report file would accept."""

from __future__ import annotations

import re
from typing import Any, Mapping

from pbem.errors import PbemError
from pbem.formats import schemas, yamlsafe
from pbem.protocol.erratum import Erratum
from pbem.protocol.model import Entry, notes_of
from pbem.rulesets.base import Ruleset

ERRATUM_RE = re.compile(r"errata/(e[0-9]{4,6})\.yaml\Z")


def read_erratum(data: bytes, file: str, ruleset: Ruleset) -> Erratum:
    """One old-style erratum; raises PbemError naming file, line and rule for anything malformed."""
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {}
    schemas.validate("pbem/erratum/1", raw, file=file, doc=doc)
    removed, added = read_entries(raw, doc, file, ruleset, ())
    return Erratum(raw, file, removed, added)


def read_entries(raw: Mapping[str, Any], doc: Any, file: str, ruleset: Ruleset,
                 base: tuple) -> tuple[tuple[Entry, ...], tuple[Entry, ...]]:
    """The `removed` and `added` entries of a schema-valid erratum (`raw`, found at `base` in `doc`), parsed as
    report entries: their `file` is the report file they belong in, their `line` the line in the erratum file."""
    action_schema = getattr(ruleset, "action_schema", None)
    lists: dict[str, tuple[Entry, ...]] = {}
    for side in ("removed", "added"):
        entries = []
        for i, item in enumerate(raw[side]):
            line = doc.line_of((*base, side, i))
            if action_schema:
                schemas.validate(action_schema, item["do"], file=file, doc=doc, base=(*base, side, i, "do"))
            try:
                at = ruleset.parse_time(item["at"])
            except ValueError as exc:
                raise PbemError("schema.bad-time", f"{item['at']!r} is not a game time: {exc}", file=file,
                                line=line, exit_code=1) from None
            report = f"report/{ruleset.period_of(at)}.yaml"
            entries.append(Entry(at, item["at"], item["by"], item.get("unit"), item["do"], report, line,
                                 notes=notes_of(item)))
        lists[side] = tuple(entries)
    return lists["removed"], lists["added"]
