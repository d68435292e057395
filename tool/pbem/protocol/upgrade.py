"""The `upgrade` agreement (DESIGN §4.8, §9 revised): a running game repairs its gate. Every active player signs
that the game's workflow file becomes exactly the text the agreement holds: what a newer pbem writes
(`pbem agree upgrade`), pinning that pbem. The commit adding the last signature writes that text to
.github/workflows/pbem.yml and changes nothing else; no other commit may touch the file (protected.changed).

The signers read the whole new workflow in the agreement; the verifier checks that it pins the version the
agreement names, that this version is no older than the one that made the game (game.yaml's `pbem`) and that
it is not one with a known hole (KNOWN_HOLES), and that the file written is byte for byte the signed text
(by its git blob id, which the tree gives without reading the file). Pure: no git, files or printing.
"""

from __future__ import annotations

import hashlib
import re
from typing import Mapping

from pbem.errors import Finding
from pbem.protocol.agreements import KINDS, Agreement, Kind, Table, _active, _finding, _open

UPGRADE = "upgrade"
VERSION_RE = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")
# Versions of pbem whose gate is known to let a rule be broken: a game is never upgraded to one. The release
# that fixes a hole adds the versions it leaves behind, with the hole in words.
KNOWN_HOLES: Mapping[str, str] = {}


def blob_id(text: str) -> str:
    """git's object id of a file with this text (`git hash-object`): what a tree records for it."""
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def version_key(text: str) -> tuple[int, ...] | None:
    m = VERSION_RE.match(text)
    return tuple(int(g) for g in m.groups()) if m else None


def _content(agreement: Agreement, table: Table) -> list[Finding]:
    version, text = agreement.content.get("pbem"), agreement.content.get("workflow")
    wanted = version_key(str(version))
    if wanted is None or not isinstance(text, str):
        return [_finding("agreement.malformed", agreement, f"upgrade {agreement.id} names a pbem version "
                         "(pbem: X.Y.Z) and the whole new workflow (workflow: its text)")]
    if not re.search(rf"\bpbem=={re.escape(str(version))}[\s\"]", text):
        return [_finding("agreement.malformed", agreement, f"upgrade {agreement.id}: its workflow does not install "
                         f"pbem=={version}, the version it names", hint="pbem agree upgrade writes both")]
    made_by = version_key(str((table.game or {}).get("pbem", "")))
    if made_by is not None and wanted < made_by:
        return [_finding("agreement.downgrade", agreement, f"upgrade {agreement.id} goes back to pbem {version}, "
                         f"older than pbem {(table.game or {}).get('pbem')} that made this game")]
    if str(version) in KNOWN_HOLES:
        return [_finding("agreement.known-hole", agreement, f"upgrade {agreement.id}: pbem {version} has a known "
                         f"hole in its gate ({KNOWN_HOLES[str(version)]}); upgrade to a version that fixes it")]
    return []


KIND = Kind(UPGRADE, _active, _content, _open)
KINDS[UPGRADE] = KIND  # registered here: agreements.py knows no kind that builds on it (no import circle)


def agreed_workflow(agreement: Agreement) -> tuple[str, str]:
    """(the signed workflow text, its git blob id)."""
    text = str(agreement.content["workflow"])
    return text, blob_id(text)


def effect_findings(done: list[Agreement], written: str | None) -> list[Finding]:
    """After the commit that completes upgrades `done`, the workflow is exactly the agreed one (its blob id
    `written`); a commit that completes none leaves the file alone (the caller's protected.changed)."""
    if len(done) > 1:
        return [Finding("agreement.effect", f"one commit completes two upgrades ({', '.join(a.id for a in done)}): "
                        "sign them one at a time", file=done[1].file)]
    if done and agreed_workflow(done[0])[1] != written:
        return [Finding("agreement.effect", f"upgrade {done[0].id} takes effect in the commit that adds its last "
                        "signature: that commit writes .github/workflows/pbem.yml exactly as agreed",
                        file=".github/workflows/pbem.yml", hint=f"pbem sign {done[0].id} writes it")]
    return []
