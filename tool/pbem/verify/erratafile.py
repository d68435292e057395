"""Reading errata/<id>.yaml (DESIGN §4.8): strict YAML, schema pbem/erratum/1, and each listed entry checked as
a report entry is (the ruleset's action schema, a game time), so a correction can only ever put into the report
what a report file would accept."""

from __future__ import annotations

import re

from pbem.errors import PbemError
from pbem.formats import schemas, yamlsafe
from pbem.protocol.errata import Erratum
from pbem.protocol.model import Entry, notes_of
from pbem.rulesets.base import Ruleset

ERRATUM_RE = re.compile(r"errata/(e[0-9]{4,6})\.yaml\Z")


def read_erratum(data: bytes, file: str, ruleset: Ruleset) -> Erratum:
    """One erratum; raises PbemError naming file, line and rule for anything malformed."""
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {}
    schemas.validate("pbem/erratum/1", raw, file=file, doc=doc)
    action_schema = getattr(ruleset, "action_schema", None)
    lists: dict[str, tuple[Entry, ...]] = {}
    for side in ("removed", "added"):
        entries = []
        for i, item in enumerate(raw[side]):
            line = doc.line_of((side, i))
            if action_schema:
                schemas.validate(action_schema, item["do"], file=file, doc=doc, base=(side, i, "do"))
            try:
                at = ruleset.parse_time(item["at"])
            except ValueError as exc:
                raise PbemError("schema.bad-time", f"{item['at']!r} is not a game time: {exc}", file=file,
                                line=line, exit_code=1) from None
            report = f"report/{ruleset.period_of(at)}.yaml"
            entries.append(Entry(at, item["at"], item["by"], item.get("unit"), item["do"], report, line,
                                 notes=notes_of(item)))
        lists[side] = tuple(entries)
    return Erratum(raw, file, lists["removed"], lists["added"])
