"""The `upgrade` agreement (DESIGN §4.8, §9 revised): a running game repairs its gate. Every active player signs
that the game's workflow file becomes exactly the text the agreement holds: what a newer pbem writes
(`pbem agree upgrade`), pinning that pbem. The commit adding the last signature writes that text to
.github/workflows/pbem.yml and changes nothing else; no other commit may touch the file (protected.changed).

The signers read the whole new workflow in the agreement; the verifier checks that it pins the version the
agreement names, that this version is no older than the one that made the game (game.yaml's `pbem`) and that
it is not one with a known hole (KNOWN_HOLES), and that the file written is byte for byte the signed text
(by its git blob id, which the tree gives without reading the file). The kind's row (its content rules) is in
protocol.kinds; here are the versions and the effect. Pure: no git, files or printing.
"""

from __future__ import annotations

import hashlib
import re
from typing import Mapping

from pbem.errors import Finding
from pbem.protocol.agreements import Agreement

UPGRADE = "upgrade"
WORKFLOW = ".github/workflows/pbem.yml"  # the gate (files/layout names it too)
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


def effect(agreement: Agreement) -> tuple[dict[str, str], str]:
    """What the commit adding an upgrade's last signature writes (the workflow as agreed), in files and words."""
    return {WORKFLOW: agreed_workflow(agreement)[0]}, f"the workflow of pbem {agreement.content['pbem']}"


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
