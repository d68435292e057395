"""Agreements from the player's side (DESIGN §4.8): propose one (signed by me), sign one, list them. Each is one
signed commit made without holding control; it touches only my own new file (agreements/<me>-NNNN.yaml) or my
own key of an agreement's `signatures`, so players who sign at the same time never write the same thing (§4.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pbem.errors import ILLEGAL, PbemError
from pbem.formats.writer import dump_mapping
from pbem.protocol import agreements, upgrade
from pbem.protocol.agreements import Agreement
from pbem.rulesets.base import Point
from pbem.services.workspace import Identity, Workspace
from pbem.verify.agreementfile import read_agreement
from pbem.verify.gamefiles import GAME, STATUS, WORKFLOW, Game
from pbem.services import chance
from pbem.verify.turns import (Verified, agreement_effect, consent_table, errata_agreed, expected_after,
                               settled_now, settlement_parts, who)

ORDER = ("id", "kind", "by", "content", "signatures")


@dataclass(frozen=True)
class Done:
    """What an agreement command did: the agreement, who still has to sign, the commit."""

    agreement: str
    kind: str
    unsigned: tuple[str, ...]
    commit: str


def seat(ws: Workspace, me: Identity) -> tuple[Verified, str]:
    """HEAD and my seat; refused for a key that holds none (only seated players propose and sign)."""
    head = ws.head()
    if head is None:
        raise PbemError("setup.not-started", "this repository has no game yet (pbem init)")
    player = who(head.game, me.public)
    if player is None or head.game.manifest.seat(player) is None:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game: only seated players "
                        "propose and sign agreements", exit_code=ILLEGAL)
    return head, player


def by_id(game: Game) -> dict[str, Agreement]:
    """The game's agreements by id."""
    return {a.id: a for a in game.agreements.values()}


def table_of(game: Game) -> agreements.Table:
    """The agreement rules' view of `game`: before or after the start, with who owes what now."""
    return consent_table(game, started=game.status is not None, status=game.status)


def signers(game: Game, agreement: Agreement) -> tuple[str, ...]:
    """Who must sign `agreement` (its kind says)."""
    return agreements.KINDS[agreement.kind].signers(agreement, table_of(game))


def unsigned(game: Game, agreement: Agreement) -> tuple[str, ...]:
    """The required signers whose valid signature `agreement` still lacks, in table order."""
    table = table_of(game)
    valid = agreements.valid_signers(table.game_id, agreement, table.keys)
    return tuple(p for p in signers(game, agreement) if p not in valid)


def next_id(game: Game, player: str) -> str:
    """My next free id: `<player>-NNNN`, numbered per author (DESIGN §2)."""
    numbers = [int(m.group(1)) for a in game.agreements.values()
               if (m := re.fullmatch(re.escape(player) + r"-([0-9]{4})", a.id))]
    return f"{player}-{(max(numbers) + 1) if numbers else 1:04d}"


def propose(ws: Workspace, me: Identity, kind: str, content: Mapping[str, Any], summary: str) -> Done:
    """A new agreement of `kind` over `content`, signed by me, in one commit of its own."""
    head, player = seat(ws, me)
    agreement_id = next_id(head.game, player)
    raw: dict[str, Any] = {"id": agreement_id, "kind": kind, "by": player, "content": dict(content),
                           "signatures": {}}
    raw["signatures"] = {player: signature(head.game, raw, me)}
    files = ws.head_files()
    files[f"agreements/{agreement_id}.yaml"] = dump(raw)
    return _commit(ws, head, me, player, files, agreement_id, f"proposes {agreement_id}: {summary}")


def sign(ws: Workspace, me: Identity, agreement_id: str) -> Done:
    """Add my signature to agreement `agreement_id` (my own key of its `signatures`, nothing else)."""
    head, player = seat(ws, me)
    agreement = find(head.game, agreement_id)
    if player in agreement.signatures:
        missing = unsigned(head.game, agreement)
        raise PbemError("usage.signed", f"you signed agreement {agreement_id} already"
                        + (f"; waiting for {', '.join(missing)}" if missing else ""))
    if player not in signers(head.game, agreement):
        raise PbemError("agreement.foreign-signature", f"agreement {agreement_id} is not yours to sign (signers: "
                        f"{', '.join(signers(head.game, agreement))})", file=agreement.file, exit_code=ILLEGAL)
    table = consent_table(head.game, started=head.started, status=head.status)
    for finding in agreements.KINDS[agreement.kind].open_findings(agreement, table):
        raise PbemError.from_finding(finding)
    if agreement.kind == upgrade.UPGRADE:
        _check_upgrade(agreement)
    raw = dict(agreement.raw)
    raw["signatures"] = {**agreement.signatures, player: signature(head.game, raw, me)}
    files = ws.head_files()
    files[agreement.file] = dump(raw)
    return _commit(ws, head, me, player, files, agreement_id, f"signs {agreement_id}")


def _check_upgrade(agreement: Agreement) -> None:
    """What the verifier cannot know, the signer's pbem checks: the workflow signed is the one it writes itself
    (with the lock the text carries), so an upgrade is signed only with the pbem it installs (DESIGN §4.8)."""
    import pbem
    from pbem.services.gateworkflow import workflow_text

    version, text = agreement.content["pbem"], agreement.content["workflow"]
    if version != pbem.__version__:
        raise PbemError("upgrade.other-version", f"upgrade {agreement.id} installs pbem {version}, and this is pbem "
                        f"{pbem.__version__}: sign it with pbem {version}, which checks that the workflow is the one "
                        "it writes", file=agreement.file, exit_code=ILLEGAL, hint=f"pip install pbem=={version}")
    m = re.search(r"<<'LOCK'\n(.*?)\n *LOCK\n", text, re.S)
    lock = "\n".join(line[10:] for line in m.group(1).split("\n")) + "\n" if m else None
    if text != workflow_text(None, lock):
        raise PbemError("upgrade.not-ours", f"upgrade {agreement.id}: its workflow is not the one pbem {version} "
                        "writes; do not sign it (read the difference: pbem agreements, git show)",
                        file=agreement.file, exit_code=ILLEGAL)


def find(game: Game, agreement_id: str) -> Agreement:
    """An agreement by id, or a usage error listing the known ones."""
    agreement = by_id(game).get(agreement_id)
    if agreement is None:
        known = ", ".join(sorted(by_id(game))) or "none yet"
        raise PbemError("usage.no-agreement", f"no agreement {agreement_id!r} (agreements: {known})")
    return agreement


def dump(raw: Mapping[str, Any]) -> bytes:
    """An agreement file as pbem writes it: fields in the schema's order."""
    ordered = {k: raw[k] for k in ORDER if k in raw} | {k: v for k, v in raw.items() if k not in ORDER}
    return dump_mapping(ordered).encode()


def signature(game: Game, raw: Mapping[str, Any], me: Identity) -> str:
    path = f"agreements/{raw['id']}.yaml"
    draft = read_agreement(dump({**raw, "signatures": {}}), path)  # as the verifier will read it
    return me.signer.sign(agreements.message(game.manifest.id, draft), agreements.NAMESPACE)


def _commit(ws: Workspace, head: Verified, me: Identity, player: str, files: dict[str, bytes], agreement_id: str,
            summary: str) -> Done:
    """Commit signed through the judging path (nothing is written when it is refused); after the start, with
    the status replay computes (an agreement commit is no turn)."""
    message = f"{player}: {summary}"
    if head.started:
        message += completion(ws, head, files, player, {f"agreements/{agreement_id}.yaml"})
        _stop, status = expected_after(head, ws.game_of(files), player)
        files[STATUS] = dump_mapping(status.to_data()).encode()
        message += f"\n\nnext: {status.control or 'game over'}"
    oid = ws.commit(files, me, message)
    game = ws.game_of(files)
    agreement = find(game, agreement_id)
    return Done(agreement_id, agreement.kind, unsigned(game, agreement), oid)


def completion(ws: Workspace, head: Verified, files: dict[str, bytes], player: str, changed: set[str]) -> str:
    """Write into `files` what the agreements among `changed` that this commit completes do (DESIGN §4.8: in
    effect in the commit that adds the last required signature): game.yaml as an amend or seat says, the report
    as an erratum corrects it, the withheld marks of what an nmr or resign settles. The words for the commit
    message (empty when none completes). `pbem sign` and `pbem push` (which may turn a signature into the last
    one when it rebases onto another signer's) both write it so."""
    message = ""
    effect = agreement_effect(head, ws.game_of(files), changed, player)
    if effect is not None:  # the last signature of an amend or seat: its commit writes game.yaml as agreed
        files[GAME] = dump_mapping(effect).encode()
        message += " (takes effect: game.yaml as agreed)"
    for erratum in errata_agreed(head, ws.game_of(files)):  # an erratum's: the report as corrected
        from pbem.services.errata import correct

        correct(files, erratum, head.game)
        message += f" (takes effect: the report corrected from {erratum.corrected_from_text()})"
    game = ws.game_of(files)
    for signed in game.agreements.values():
        if f"agreements/{signed.id}.yaml" in changed and signed.kind == upgrade.UPGRADE and \
                agreements.signed_by_all(signed, consent_table(head.game, True, head.status)):
            files[WORKFLOW] = upgrade.agreed_workflow(signed)[0].encode()  # the last signature: the new gate
            message += f" (takes effect: the workflow of pbem {signed.content['pbem']})"
    settled = settled_now(head, ws.game_of(files))
    if settled:  # an nmr's last signature, or a resign: what its player owed and never gave is withheld
        marks = chance.withhold(files, head.game, settlement_parts(head, settled), settled)
        if head.game.manifest.ruleset.press is not None:  # Diplomacy: a withheld set the shares open
            from pbem.services.dow.openings import opened_marks

            marks += opened_marks(files, ws.game_of(files))
        message += "\n\n" + "\n".join(marks) if marks else ""
    return message


def listing(game: Game, nmrs: Sequence[tuple[str, Point]] = ()) -> list[str]:
    """One line per agreement: its kind and terms, who signed, who still has to; for an nmr in effect, the step
    it settled (`nmrs`: `Verified.nmrs`)."""
    out = []
    settled = dict(nmrs)
    for agreement in sorted(game.agreements.values(), key=lambda a: a.id):
        missing = unsigned(game, agreement)
        terms = agreements.describe(agreement)
        stale = agreement.kind == agreements.START and agreement.content["game"] != game.manifest.digest
        effect = ", in effect"
        if agreement.id in settled:
            step = game.manifest.ruleset.format_time(settled[agreement.id])
            effect += f": {agreement.content.get('player')}'s {_settled_words(game)}".replace("STEP", step)
        state = ("stale: game.yaml changed since" if stale else
                 f"to sign: {', '.join(missing)} (pbem sign {agreement.id})" if missing else
                 "signed by all" + (effect if agreement.kind != agreements.START else ""))
        out.append(f"{agreement.id} by {agreement.by} ({agreement.kind}: {terms}) — {state}")
    return out


def _settled_words(game: Game) -> str:
    """What an nmr settled at STEP, in the words of the game's ruleset."""
    if game.manifest.ruleset.press is not None:  # Diplomacy: the phase resolves with the engine's defaults
        return "orders for STEP settled by the engine's defaults"
    return "part at STEP settled by the ruleset's defaults"


# --- the ways out of a stalled game (DESIGN §4.8): amend, seat, resign, nmr, end --------------------------------

def agree(ws: Workspace, me: Identity, kind: str, *, changes: Mapping[str, Any] | None = None,
          seat_id: str | None = None, new_key: str | None = None, why: str | None = None, name: str | None = None,
          player: str | None = None, result: str | None = None, note: str | None = None,
          lock: str | None = None) -> Done:
    """Propose an agreement of `kind` (`pbem agree KIND`), signed by me; refused before anything is written
    when its content or its time is wrong (the verifier's own rules, protocol.agreements)."""
    content: dict[str, Any]
    if kind == agreements.AMEND:
        if not changes:
            raise PbemError("usage.agree", "an amend changes something: --deadline, --pause-until, --resume, "
                            "--set KEY=VALUE or --unset KEY")
        content = {"changes": dict(changes)}
        summary = agreements.describe(Agreement({"id": "x", "kind": kind, "by": "x", "content": content}, ""))
    elif kind == agreements.SEAT:
        if not seat_id or not new_key or why not in ("lost-key", "replacement"):
            raise PbemError("usage.agree", "a seat agreement names the seat (--seat ID), the new public key "
                            "(--new-key FILE or 'ssh-ed25519 AAAA…') and why (--why lost-key|replacement)")
        content = {"seat": seat_id, "key": _key_text(new_key), "why": why, **({"name": name} if name else {})}
        summary = f"seat {seat_id} to a new key ({why})"
    elif kind == agreements.RESIGN:
        content, summary = {}, "resigns"
    elif kind == agreements.NMR:
        if not player:
            raise PbemError("usage.agree", "an nmr names the absent player: --player ID")
        content, summary = {"player": player}, f"{player} missed the deadline"
    elif kind == agreements.END:
        if result not in agreements.RESULTS:
            raise PbemError("usage.agree", f"an end states its result: --result {'|'.join(agreements.RESULTS)}")
        content = {"result": result, **({"player": player} if player else {})}
        summary = f"the game ends: {result}" + (f" ({player})" if player else "")
    elif kind == upgrade.UPGRADE:  # the gate this pbem writes: its version, pinned by `lock` when given
        import pbem
        from pbem.services.gateworkflow import workflow_text

        content = {"pbem": pbem.__version__, "workflow": workflow_text(None, lock)}
        summary = f"the workflow of pbem {pbem.__version__}"
    else:
        raise PbemError("usage.agree", f"no agreement kind {kind!r} to propose (kinds: amend, seat, resign, nmr, "
                        "end, erratum, upgrade)")
    if note:
        content["note"] = note
    head, me_id = seat(ws, me)
    if not head.started or head.status is None:
        raise PbemError("agreement.closed", f"a {kind} agreement is made after the start", exit_code=ILLEGAL)
    if head.status.over:
        end = ended(head.game)
        rule = "agreement.second-end" if kind == agreements.END and end is not None else "game.over"
        raise PbemError(rule, "the game is over" + (f" (ended by agreement {end.id})" if end else ""),
                        exit_code=ILLEGAL)
    draft = Agreement({"id": next_id(head.game, me_id), "kind": kind, "by": me_id, "content": content,
                       "signatures": {}}, "agreements/draft.yaml")
    table = consent_table(head.game, True, head.status)
    kind_ = agreements.KINDS[kind]
    for finding in (*kind_.content_findings(draft, table), *kind_.open_findings(draft, table)):
        raise PbemError.from_finding(finding)
    return propose(ws, me, kind, content, summary)


def _key_text(value: str) -> str:
    """A public key's one line, from a file or given literally."""
    from pathlib import Path

    path = Path(value).expanduser()
    text = path.read_text().strip() if not value.startswith("ssh-") and path.is_file() else value.strip()
    # the comment stays in the agreement, for the co-signers to check with the fingerprint (describe)
    words = text.split(None, 2)
    comment = [" ".join(words[2].split())[:200]] if len(words) > 2 else []
    return " ".join([*words[:2], *comment])


def ended(game: Game) -> Agreement | None:
    from pbem.verify.turns import ended as ended_

    return ended_(game) if game.status is not None and game.agreements else None


def to_sign(game: Game, player: str | None) -> list[str]:
    """The agreements waiting for `player`'s signature, as "sign <id>" lines for pbem status (first of all)."""
    if player is None:
        return []
    out = []
    for agreement in sorted(game.agreements.values(), key=lambda a: a.id):
        if agreement.kind == agreements.START and game.status is not None:
            continue
        if player in unsigned(game, agreement):
            out.append(f"sign {agreement.id} ({agreement.kind} by {agreement.by}: "
                       f"{agreements.describe(agreement)}): pbem sign {agreement.id}")
    return out


def waiting(game: Game) -> dict[str, list[str]]:
    """Who must still sign which agreement: player -> agreement ids (`pbem agreements`, `pbem status --json`)."""
    out: dict[str, list[str]] = {}
    for agreement in sorted(game.agreements.values(), key=lambda a: a.id):
        if agreement.kind == agreements.START and game.status is not None:
            continue
        for p in unsigned(game, agreement):
            out.setdefault(p, []).append(agreement.id)
    return out


def result(game: Game) -> str | None:
    """The game's result when an end agreement ended it, in words (pbem log, status, the HTML page)."""
    end = ended(game)
    return f"{agreements.describe(end)} — agreement {end.id}" if end is not None else None
