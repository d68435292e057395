"""Agreements from the player's side (DESIGN §4.8): propose one (signed by me), sign one, list them. Each is one
signed commit made without holding control; it touches only my own new file (agreements/<me>-NNNN.yaml) or my
own key of an agreement's `signatures`, so players who sign at the same time never write the same thing (§4.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pbem.errors import ILLEGAL, PbemError
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping, dump_report
from pbem.protocol import agreements, ids, kinds, upgrade
from pbem.protocol.agreements import Agreement
from pbem.protocol.erratum import Erratum
from pbem.protocol.model import Entry, entry_identity, notes_of
from pbem.rulesets.base import Point
from pbem.services.workspace import Identity, Workspace
from pbem.files.layout import GAME, STATUS, WORKFLOW
from pbem.files.readers import read_agreement
from pbem.protocol.game import Game
from pbem.services import chance
from pbem.protocol.control import expected_after, who
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import (absent_now, agreement_effect, consent_table, errata_agreed, seated, settled_now,
                                    settlement_parts)

ORDER = ("id", "kind", "by", "content", "signatures")
Files = dict[str, bytes]


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


def table_of(game: Game) -> kinds.Table:
    """The agreement rules' view of `game`: before or after the start, with who owes what now."""
    return consent_table(game, started=game.status is not None, status=game.status)


def signers(game: Game, agreement: Agreement) -> tuple[str, ...]:
    """Who must sign `agreement` (its kind says)."""
    return kinds.KINDS[agreement.kind].signers(agreement, table_of(game))


def unsigned(game: Game, agreement: Agreement) -> tuple[str, ...]:
    """The required signers whose valid signature `agreement` still lacks, in table order."""
    table = table_of(game)
    valid = agreements.valid_signers(table.game_id, agreement, table.keys)
    return tuple(p for p in signers(game, agreement) if p not in valid)


def next_id(game: Game, player: str) -> str:
    """My next free agreement id: `<player>-NNNN`, numbered per author (DESIGN §2, §4.9)."""
    return ids.next_id((a.id for a in game.agreements.values()), player)


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
    for finding in kinds.KINDS[agreement.kind].open(agreement, table):
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
        correct(files, erratum, head.game)
        message += f" (takes effect: the report corrected from {erratum.corrected_from_text()})"
    game = ws.game_of(files)
    for signed in game.agreements.values():  # the files a kind's row writes with its last signature (the gate)
        row = kinds.KINDS.get(signed.kind)
        writes = row.writes if row is not None else None
        if writes is not None and f"agreements/{signed.id}.yaml" in changed and \
                kinds.signed_by_all(signed, consent_table(head.game, True, head.status)):
            written, words = writes(signed)
            files.update({path: text.encode() for path, text in written.items()})
            message += f" (takes effect: {words})"
    settled = settled_now(head, ws.game_of(files))
    if settled:  # an nmr's last signature, or a resign: what its player owed and never gave is withheld
        seats = seated(ws.game_of(files), settled)
        absent = absent_now(head, ws.game_of(files))  # an nmr with his seat in one commit: both settle
        marks = chance.withhold(files, head.game, settlement_parts(head, settled, seats, absent), settled)
        if head.game.manifest.ruleset.press is not None:  # Diplomacy: a withheld set the shares open
            from pbem.services.dow.openings import opened_marks

            marks += opened_marks(files, ws.game_of(files))
        message += "\n\n" + "\n".join(marks) if marks else ""
    return message


# --- the erratum's effect (DESIGN §4.8): the report changed by exactly its entries --------------------------------

def entry_data(entry: Entry) -> dict[str, Any]:
    """An entry as a report file and an erratum's content write it."""
    return {"at": entry.at_text, "by": entry.by, **({"unit": entry.unit} if entry.unit else {}),
            "do": dict(entry.do)}


def _identity(item: Mapping[str, Any]) -> bytes:
    """An entry's identity as protocol.model.Entry computes it (at, by, unit, do and its `x-` fields)."""
    return entry_identity(item["at"], item["by"], item.get("unit"), item["do"], notes_of(item))


def correct(files: Files, erratum: Erratum, game: Game) -> None:
    """Change the report files in `files` by exactly the erratum's entries; refuse a stale erratum (one whose
    removed entries are no longer in the report) before anything is written."""
    parse_time = game.manifest.ruleset.parse_time
    touched = sorted({e.file for e in (*erratum.removed, *erratum.added)})
    for path in touched:
        items = list((yamlsafe.load(files[path], path).data or {}).get("entries") or []) if path in files else []
        for entry in (e for e in erratum.removed if e.file == path):
            at = next((i for i, item in enumerate(items) if _identity(item) == entry.identity()), None)
            if at is None:
                raise PbemError("erratum.mismatch", f"erratum {erratum.id} removes {entry.by}'s {dict(entry.do)} at "
                                f"{entry.at_text}, which {path} no longer holds", file=erratum.file,
                                line=entry.line, exit_code=ILLEGAL)
            del items[at]
        for entry in (e for e in erratum.added if e.file == path):
            # after the last entry at or before its time, so the file stays in game-time order
            place = max((i + 1 for i, item in enumerate(items) if parse_time(item["at"]) <= entry.at), default=0)
            items.insert(place, entry_data(entry))
        files[path] = dump_report(items).encode()


def listing(game: Game, nmrs: Sequence[tuple[str, Point]] = ()) -> list[str]:
    """One line per agreement: its kind and terms, who signed, who still has to; for an nmr in effect, the step
    it settled (`nmrs`: `Verified.nmrs`)."""
    out = []
    settled = dict(nmrs)
    for agreement in sorted(game.agreements.values(), key=lambda a: a.id):
        missing = unsigned(game, agreement)
        terms = kinds.describe(agreement)
        stale = agreement.kind == kinds.START and agreement.content["game"] != game.manifest.digest
        effect = ", in effect"
        if agreement.id in settled:
            step = game.manifest.ruleset.format_time(settled[agreement.id])
            effect += f": {agreement.content.get('player')}'s {_settled_words(game)}".replace("STEP", step)
        state = ("stale: game.yaml changed since" if stale else
                 f"to sign: {', '.join(missing)} (pbem sign {agreement.id})" if missing else
                 "signed by all" + (effect if agreement.kind != kinds.START else ""))
        out.append(f"{agreement.id} by {agreement.by} ({agreement.kind}: {terms}) — {state}")
    return out


def _settled_words(game: Game) -> str:
    """What an nmr settled at STEP, in the words of the game's ruleset."""
    if game.manifest.ruleset.press is not None:  # Diplomacy: the phase resolves with the engine's defaults
        return "orders for STEP settled by the engine's defaults"
    return "part at STEP settled by the ruleset's defaults"


# --- the ways out of a stalled game (DESIGN §4.8): amend, seat, resign, nmr, end --------------------------------

def agree(ws: Workspace, me: Identity, kind: str, **values: Any) -> Done:
    """Propose an agreement of `kind` (`pbem agree KIND`), signed by me: its row's `draft` turns `values` (its
    options, protocol.kinds.read_options) into the content; refused before anything is written when its content
    or its time is wrong (the verifier's own rules, the kind's row)."""
    row = kinds.KINDS.get(kind)
    if row is None or row.draft is None:
        if row is not None and row.from_tree:
            raise PbemError("usage.agree", f"a {kind} is proposed from your edit of the working tree: pbem agree "
                            f"{kind} (or pbem erratum propose)")
        raise PbemError("usage.agree", f"no agreement kind {kind!r} to propose (kinds: "
                        f"{', '.join(k.name for k in kinds.proposable())})")
    for option in row.options:
        if option.form == "key" and values.get(option.name):
            values[option.name] = _key_text(values[option.name])
    for need in row.needs:
        values[need] = FACTS[need](values)
    content, summary = row.draft(values)
    note = values.get("note")
    if note:
        content["note"] = note
    head, me_id = seat(ws, me)
    if not head.started or head.status is None:
        raise PbemError("agreement.closed", f"a {kind} agreement is made after the start", exit_code=ILLEGAL)
    if head.status.over:
        end = ended(head.game)
        rule = "agreement.second-end" if kind == kinds.END and end is not None else "game.over"
        raise PbemError(rule, "the game is over" + (f" (ended by agreement {end.id})" if end else ""),
                        exit_code=ILLEGAL)
    draft = Agreement({"id": next_id(head.game, me_id), "kind": kind, "by": me_id, "content": content,
                       "signatures": {}}, "agreements/draft.yaml")
    table = consent_table(head.game, True, head.status)
    for finding in (*row.content(draft, table), *row.open(draft, table)):
        raise PbemError.from_finding(finding)
    return propose(ws, me, kind, content, summary)


def _version(_values: Mapping[str, Any]) -> str:
    import pbem

    return pbem.__version__


def _workflow(values: Mapping[str, Any]) -> str:
    """The gate this pbem writes, pinned by hash from the package index `index_url` when one is given."""
    from pbem.services import gatelock
    from pbem.services.gateworkflow import workflow_text

    return workflow_text(None, gatelock.lock(values["index_url"]) if values.get("index_url") else None)


# What a kind's row may need from the proposer's own pbem (protocol.kinds.Kind.needs).
FACTS: Mapping[str, Callable[[Mapping[str, Any]], str]] = {"pbem": _version, "workflow": _workflow}


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
    from pbem.protocol.ways_out import ended as ended_

    return ended_(game) if game.status is not None and game.agreements else None


def to_sign(game: Game, player: str | None) -> list[str]:
    """The agreements waiting for `player`'s signature, as "sign <id>" lines for pbem status (first of all)."""
    if player is None:
        return []
    out = []
    for agreement in sorted(game.agreements.values(), key=lambda a: a.id):
        if agreement.kind == kinds.START and game.status is not None:
            continue
        if player in unsigned(game, agreement):
            out.append(f"sign {agreement.id} ({agreement.kind} by {agreement.by}: "
                       f"{kinds.describe(agreement)}): pbem sign {agreement.id}")
    return out


def waiting(game: Game) -> dict[str, list[str]]:
    """Who must still sign which agreement: player -> agreement ids (`pbem agreements`, `pbem status --json`)."""
    out: dict[str, list[str]] = {}
    for agreement in sorted(game.agreements.values(), key=lambda a: a.id):
        if agreement.kind == kinds.START and game.status is not None:
            continue
        for p in unsigned(game, agreement):
            out.setdefault(p, []).append(agreement.id)
    return out


def result(game: Game) -> str | None:
    """The game's result when an end agreement ended it, in words (pbem log, status, the HTML page)."""
    end = ended(game)
    return f"{kinds.describe(end)} — agreement {end.id}" if end is not None else None
