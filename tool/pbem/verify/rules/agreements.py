"""DESIGN §4.8: an agreement is proposed and signed out of turn, in a commit of its own (agreement.mixed), judged
against the consent table before the commit (agreement.*); it takes effect in the commit that adds its last
required signature, which writes exactly its effect: game.yaml for an amend or seat (agreement.effect), the
workflow for an upgrade, the report's corrections for an erratum (erratum.*), the withheld marks of what an nmr or
a resign settles (agreement.mixed, dice.bad-withheld, secret.bad-withheld)."""

from __future__ import annotations

from pbem.protocol import agreement_rules
from pbem.protocol import erratum as erratum_kind
from pbem.protocol import ids as author_ids
from pbem.protocol import kinds
from typing import Any, Iterable

from pbem.errors import Finding
from pbem.protocol import agreements, dice, openings, secrets, upgrade
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import absent_now, seated, settlement_parts
from pbem.verify.change import Change
from pbem.files.layout import GAME, STATUS, WORKFLOW
from pbem.protocol.game import Game

SETTLES = ("withheld", "opened")  # what the commit completing an nmr may write in a secret (DESIGN §4.7, §4.8)


def effect_missing(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """Its last signature landed (two signers at once: the later one's commit completes it) without the change:
    refused, or the group's agreed change would be listed in effect and silently lost."""
    if change.effect is None or GAME in change.paths:
        return []
    return [Finding("agreement.effect", "this commit completes an amend or seat agreement, but game.yaml does not "
                    "change as it says (the commit adding its last signature writes exactly the agreed change: pbem "
                    "sign, and pbem push when it rebases, do)", file=GAME)]


def check(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """The agreement commit: what else it changed, what it completes, and the agreements themselves."""
    paths, corrections, settled = change.paths, change.corrections, change.settled
    findings = [Finding("agreement.mixed", f"{path}: an agreement commit changes only agreements/ (and what the "
                        "agreement it completes changes); take your turn in a commit of its own", file=path)
                for path in sorted(paths - {STATUS}) if path not in change.agreements
                and not (path == GAME and change.agreed) and not (corrections and path in change.reports)
                and not (path == WORKFLOW and change.upgraded)
                and not (settled and (path in change.dice or path in change.secrets))]
    if corrections:  # by exactly their entries: what everybody signed, so neither firm.* nor ownership.*
        findings.extend(erratum_kind.correction_findings(change.removed, change.added, corrections))
    if settled:  # its dice and secrets: only the withheld marks of what it settles (DESIGN §4.8)
        findings.extend(_settlement(prev, game, change))
    findings.extend(_new_actions(prev.game, [erratum_kind.of_agreement(a) for a in change.only(game.agreements).values()
                                             if a.kind == kinds.ERRATUM]))
    findings.extend(agreement_rules.agreement_findings(change.table, change.only(prev.game.agreements),
                                                  change.only(game.agreements), change.player or ""))
    findings.extend(upgrade.effect_findings(change.upgrades, game.workflow))
    if GAME in paths and not change.agreed:
        findings.append(Finding("agreement.effect", "game.yaml changed, but not as an amend or seat agreement "
                                "completed by this commit says (the commit adding its last signature writes "
                                "exactly the agreed change)", file=GAME))
    return findings


def _settlement(prev: Verified, game: Game, change: Change) -> list[Finding]:
    """DESIGN §4.8: the commit completing an nmr (or a resign, or a seat given to a new key) marks what its player
    owed and never gave (the seat's old key: sealed and never opened) as
    withheld by it, in every dice batch and secret concerned, and changes nothing else there (agreement.mixed;
    dice.bad-withheld, secret.bad-withheld)."""
    assert prev.stop is not None
    manifest, settled, player = game.manifest, change.settled, change.player or ""
    seats = seated(game, settled)
    absent = absent_now(prev, game)  # an nmr completed with his seat: both settle (dice.how_settled)
    resigned = {p for p, a in settled.items() if author_ids.author_of(a) == p and p not in seats}
    findings = []
    for path in sorted(change.dice + change.secrets):
        old, new = change.before(path), change.after(path)
        if old is None or new is None or {k: v for k, v in new.raw.items() if k not in SETTLES} != \
                {k: v for k, v in old.raw.items() if k not in SETTLES}:
            findings.append(Finding("agreement.mixed", f"{path}: the commit completing an nmr or resign marks only "
                                    "what it settles (withheld); take your turn in a commit of its own", file=path))
    if findings:
        return findings
    if change.dice or prev.game.batches:
        findings.extend(dice.batch_findings(manifest.id, manifest.players, manifest.keys, manifest.escrow_key,
                                            prev.game.batches, game.batches, player, settled, seats, absent))
        findings.extend(dice.settlement_findings(manifest.players, prev.game.batches, game.batches, settled,
                                                 resigned, seats, absent))
    owed = {p: ids for p, (_batches, ids) in settlement_parts(prev, settled, seats, absent).items()}
    findings.extend(openings.opening_findings(prev.game.secrets, game.secrets, game.press))
    findings.extend(secrets.secret_findings(prev.game.secrets, game.secrets, player, manifest.players,
                                            manifest.ruleset.parse_time, settled, set().union(*owed.values())))
    for p, ids in sorted(owed.items()):
        for sid in sorted(ids):
            if game.secrets.get(sid) is None or game.secrets[sid].withheld != settled[p]:
                findings.append(Finding("secret.bad-withheld", f"{settled[p]} settles what {p} owes, and secret "
                                        f"{sid}'s reveal is owed: its commit writes `withheld: {settled[p]}` there "
                                        "(pbem sign does)", file=f"secrets/{sid}.yaml"))
    return findings


def _new_actions(game: Game, corrections: Iterable[erratum_kind.Erratum]) -> list[Finding]:
    """DESIGN §4.8, errata correct and never re-open: an erratum may change what a unit did at a step (another
    target, another weapon, another speed), but adds no action of a kind the unit did not do there, at a step
    whose dice are known already (a new shot there would be decided knowing every die of the step:
    erratum.new-action)."""
    def slot(entry: Any) -> tuple[Any, ...]:  # a shot corrected to another weapon is a correction, not a new one
        return (entry.at, entry.by, entry.unit, next(iter(entry.do), ""))

    known = {ref.split("/", 1)[0] for ref, rolled in game.inputs.dice.items()
             if rolled.result is not None or rolled.lost is not None}
    out = []
    for erratum in corrections:
        corrected = {slot(e) for e in erratum.removed}
        for entry in erratum.added:
            if slot(entry) not in corrected and entry.at_text in known:
                out.append(Finding("erratum.new-action", f"erratum {erratum.id} adds {entry.by}'s {dict(entry.do)} "
                                   f"for {entry.unit} at {entry.at_text}, whose dice are known: an erratum corrects "
                                   "what was done there, it adds no new action (DESIGN §4.8)", file=erratum.file,
                                   line=entry.line))
    return out
