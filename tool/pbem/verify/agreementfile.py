"""Reading agreements/<author>-NNNN.yaml (DESIGN §4.8): strict YAML and schema pbem/agreement/1, which checks
each kind's content (a start agreement: the game.yaml hash, and `first` or `roll`)."""

from __future__ import annotations

import re

from pbem.formats import schemas, yamlsafe
from pbem.protocol.agreements import Agreement

AGREEMENT_RE = re.compile(r"agreements/([a-z][a-z0-9_-]{0,30}-[0-9]{4})\.yaml\Z")


def read_agreement(data: bytes, file: str) -> Agreement:
    """One agreement; raises PbemError naming file, line and rule for anything malformed."""
    doc = yamlsafe.load(data, file)
    raw = doc.data if doc.data is not None else {}
    schemas.validate("pbem/agreement/1", raw, file=file, doc=doc)
    return Agreement(raw, file, {key: doc.line_of((key,)) for key in raw})
