"""Reading agreements/<author>-NNNN.yaml (DESIGN §4.8): strict YAML and schema pbem/agreement/1, which checks
each kind's content (a start agreement: the game.yaml hash, and `first` or `roll`); an erratum's entries are
then read as report entries are (verify.erratafile.read_entries)."""

from __future__ import annotations

import re

from pbem.formats import schemas, yamlsafe
from pbem.protocol.agreements import Agreement
from pbem.protocol.kinds import ERRATUM
from pbem.rulesets.base import Ruleset
from pbem.verify.erratafile import read_entries

AGREEMENT_RE = re.compile(r"agreements/([a-z][a-z0-9_-]{0,30}-[0-9]{4})\.yaml\Z")


def read_agreement(data: bytes, file: str, ruleset: Ruleset | None = None) -> Agreement:
    """One agreement; raises PbemError naming file, line and rule for anything malformed. An erratum needs the
    game's `ruleset` to read its entries (without it, they are left unread)."""
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {}
    schemas.validate("pbem/agreement/1", raw, file=file, doc=doc)
    entries = read_entries(raw["content"], doc, file, ruleset, ("content",)) \
        if raw["kind"] == ERRATUM and ruleset is not None else ((), ())
    return Agreement(raw, file, {key: doc.line_of((key,)) for key in raw}, entries)
