"""GOING: the old errata/ form (DESIGN §4.8 before errata became an agreement kind), judged exactly as before
until the sweep that deletes the form; the erratum agreement kind is judged in rules.agreements.

A commit that changes errata/ is an erratum commit: any player may make it without holding control; it
proposes, signs or applies errata (erratum.*) and is no turn (no break served, no progress owed). The one that
applies an erratum changes the report by exactly its entries, and replay restarts from the corrected step
(protocol.control.expected_after)."""

from __future__ import annotations

from pbem.protocol import erratum
from pbem.errors import Finding
from pbem.protocol import errata
from pbem.protocol.verified import Verified
from pbem.verify.change import Change
from pbem.files.layout import STATUS
from pbem.protocol.game import Game


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """An erratum commit changes nothing else but, when it applies one, the report: by exactly that erratum's
    entries (which everybody signed, so neither the firm marker nor ownership applies to them)."""
    assert prev.stop is not None
    findings = [Finding("erratum.mixed", f"{path}: an erratum commit changes only errata/ and, when it applies "
                        "one, the report; take your turn in a commit of its own", file=path)
                for path in sorted(change.paths - {STATUS}) if path not in change.errata
                and path not in change.reports]
    manifest = game.manifest
    firm = None if prev.stop.over else prev.stop.checkpoint.point
    findings.extend(errata.errata_findings(manifest.id, manifest.players, manifest.keys, prev.game.errata,
                                           game.errata, change.player or "", firm))
    applied = errata.applied_now(prev.game.errata, game.errata)
    if change.reports or applied:
        findings.extend(erratum.correction_findings(change.removed, change.added, applied))
    return findings
