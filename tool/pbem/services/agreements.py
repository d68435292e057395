"""Agreements from the player's side (DESIGN §4.8): propose one (signed by me), sign one, list them. Each is one
signed commit made without holding control; it touches only my own new file (agreements/<me>-NNNN.yaml) or my
own key of an agreement's `signatures`, so players who sign at the same time never write the same thing (§4.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from pbem.errors import ILLEGAL, PbemError
from pbem.formats.writer import dump_mapping
from pbem.protocol import agreements
from pbem.protocol.agreements import Agreement
from pbem.services.workspace import Identity, Workspace
from pbem.verify.agreementfile import read_agreement
from pbem.verify.gamefiles import STATUS, Game
from pbem.verify.turns import Verified, consent_table, expected_after, who

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


def signers(game: Game, agreement: Agreement) -> tuple[str, ...]:
    """Who must sign `agreement` (its kind says)."""
    return agreements.KINDS[agreement.kind].signers(agreement, consent_table(game, started=False))


def unsigned(game: Game, agreement: Agreement) -> tuple[str, ...]:
    """The required signers whose valid signature `agreement` still lacks, in table order."""
    table = consent_table(game, started=False)
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
    raw["signatures"] = {player: _signature(head.game, raw, me)}
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
    table = consent_table(head.game, started=head.started)
    for finding in agreements.KINDS[agreement.kind].open_findings(agreement, table):
        raise PbemError.from_finding(finding)
    raw = dict(agreement.raw)
    raw["signatures"] = {**agreement.signatures, player: _signature(head.game, raw, me)}
    files = ws.head_files()
    files[agreement.file] = dump(raw)
    return _commit(ws, head, me, player, files, agreement_id, f"signs {agreement_id}")


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


def _signature(game: Game, raw: Mapping[str, Any], me: Identity) -> str:
    path = f"agreements/{raw['id']}.yaml"
    draft = read_agreement(dump({**raw, "signatures": {}}), path)  # as the verifier will read it
    return me.signer.sign(agreements.message(game.manifest.id, draft), agreements.NAMESPACE)


def _commit(ws: Workspace, head: Verified, me: Identity, player: str, files: dict[str, bytes], agreement_id: str,
            summary: str) -> Done:
    """Commit signed through the judging path (nothing is written when it is refused); after the start, with
    the status replay computes (an agreement commit is no turn)."""
    message = f"{player}: {summary}"
    if head.started:
        _stop, status = expected_after(head, ws.game_of(files), player)
        files[STATUS] = dump_mapping(status.to_data()).encode()
        message += f"\n\nnext: {status.control or 'game over'}"
    oid = ws.commit(files, me, message)
    game = ws.game_of(files)
    agreement = find(game, agreement_id)
    return Done(agreement_id, agreement.kind, unsigned(game, agreement), oid)


def listing(game: Game) -> list[str]:
    """One line per agreement: its kind and terms, who signed, who still has to."""
    out = []
    for agreement in sorted(game.agreements.values(), key=lambda a: a.id):
        missing = unsigned(game, agreement)
        terms = agreements.start_terms(agreement) if agreement.kind == agreements.START else agreement.kind
        stale = agreement.kind == agreements.START and agreement.content["game"] != game.manifest.digest
        state = ("stale: game.yaml changed since" if stale else
                 f"to sign: {', '.join(missing)} (pbem sign {agreement.id})" if missing else "signed by all")
        out.append(f"{agreement.id} by {agreement.by} ({agreement.kind}: {terms}) — {state}")
    return out
