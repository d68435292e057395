"""Dice and secrets from the player's side (DESIGN §5, §6): announce a batch, settle what one owes (contribute,
reveal, sign as escrow), seal and reveal secrets. Each function edits files; `pbem yield` commits them.

Nothing is kept outside the repository: the roller's secret and every secret's key are sealed to the owner's
own key inside it, so a player with only his key file can always reveal.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, Collection

from pbem.crypto import dice as dice_crypto
from pbem.crypto import part as parts
from pbem.crypto import seal
from pbem.crypto.keys import PrivateKey, load_private_key
from pbem.errors import ILLEGAL, PbemError
from pbem.formats import schemas, yamlsafe
from pbem.formats.canonical import dumps as canonical
from pbem.formats.freetext import check_text
from pbem.formats.writer import dump_mapping
from pbem.protocol import dice, dice_contributors, ids, kinds, secrets
from pbem.protocol.dice import Batch
from pbem.protocol.secrets import Secret
from pbem.protocol.serving import START_REF, start_sides
from pbem.services.workspace import Identity
from pbem.protocol.game import Game
from pbem.protocol.verified import Verified

Files = dict[str, bytes]
MODES = ("commit-reveal", "escrow")  # DESIGN §5; schemas/dice.json `mode`
MIN_SIDES, MAX_SIDES = 2, 1000  # schemas/dice.json `sides`


def private_key(me: Identity) -> PrivateKey:
    """My private key, needed to open what is sealed to me (a key held only by ssh-agent cannot)."""
    return load_private_key(me.path)


def announce(files: Files, game: Game, me: Identity, roller: str, purposes: list[str], refs: list[str],
             sides: int, mode: str | None = None, at: str | None = None, replaces: str | None = None,
             each: list[int] | None = None) -> str:
    """Write a new batch: the purposes in order, sides, the roller and his commitment (DESIGN §5). `each`: every
    roll's own die, where they differ (the start's table order: n, n-1, …, 2); `sides` is then the first's."""
    for purpose in purposes:
        check_text(purpose, "the purpose (--for)")
    if refs and len(refs) != len(purposes):
        raise PbemError("usage.dice", f"{len(purposes)} --for but {len(refs)} --ref: give one --ref per --for")
    mode = mode or (game.manifest.raw.get("dice") or {}).get("mode", "commit-reveal")
    # refuse here, before anything is written, what the batch's schema or the verifier would refuse later
    if mode not in MODES:
        raise PbemError("usage.dice", f"dice mode {mode!r}: use {' or '.join(MODES)}")
    if isinstance(sides, bool) or not isinstance(sides, int) or not MIN_SIDES <= sides <= MAX_SIDES:
        raise PbemError("usage.dice", f"--sides {sides}: a die has {MIN_SIDES} to {MAX_SIDES} sides")
    if mode == "escrow" and game.manifest.escrow_key is None:
        raise PbemError("usage.dice", "escrow dice need the escrow's key in game.yaml (dice.escrow_key)")
    each = each or [sides] * len(purposes)
    for i, ref in enumerate(refs):
        _check_binding(game, [ref], each[i])
    batch_id = ids.next_id(game.batches, roller)
    raw: dict[str, Any] = {"id": batch_id, "roller": roller, "mode": mode, "sides": sides,
                           "rolls": [{"for": text, **({"ref": refs[i]} if refs else {}),
                                      **({"sides": each[i]} if each[i] != sides else {})}
                                     for i, text in enumerate(purposes)]}
    if at:
        raw["at"] = at
    if replaces:
        raw["replaces"] = replaces
    if mode == "commit-reveal":
        gone = game.resigned()
        if not dice_contributors.playing(game.manifest.players, roller, gone):
            raise PbemError("dice.bad-batch", "nobody but you is still playing: nobody could contribute to a die",
                            exit_code=ILLEGAL)
        contributors = dice_contributors.to_write(game.manifest.players, roller, gone)
        if contributors is not None:  # the seats still playing (docs/dice.md "Who contributes")
            raw["contributors"] = contributors
        secret = dice_crypto.fresh_secret()
        raw["commit"] = dice_crypto.commitment(secret).hex()
        raw["owner_box"] = base64.b64encode(seal.seal_to(secret, me.public)).decode()
    files[f"dice/{batch_id}.yaml"] = dump_mapping(raw).encode()
    return batch_id


def _check_binding(game: Game, refs: list[str], sides: int) -> None:
    """Refuse at once what the verifier refuses later (DESIGN §5 binding): a die of another size than the rules
    roll for a ref, and a ref that a batch which stands already rolls. Whether the ref is owed now is judged
    when the turn is yielded (it needs the replay of the turn)."""
    dice = game.manifest.ruleset.dice
    for ref in refs:
        wanted = (start_sides(ref, len(game.manifest.players)) if ref.startswith(START_REF)
                  else dice.dice_sides(ref) if dice is not None else None)
        if wanted is not None and sides != wanted:
            raise PbemError("dice.bad-sides", f"--sides {sides} for {ref}: the rules roll it with a d{wanted}",
                            hint=f"use --sides {wanted}", exit_code=ILLEGAL)
        standing = [b.id for b in game.batches.values() if not b.voided and ref in b.refs]
        if standing:
            raise PbemError("dice.rebound-ref", f"{ref} is rolled by {standing[0]} already: one batch per ref",
                            hint=f"to re-roll, void {standing[0]} whole first (pbem dice void)", exit_code=ILLEGAL)


def settle_dice(files: Files, game: Game, me: Identity, player: str) -> list[str]:
    """Add what `player` owes to open batches: his contributions (at a table of three or more first his
    commitment, then, once every contributor has committed, the contribution itself), and his reveals with the
    results (DESIGN §5)."""
    done = []
    players = game.manifest.players
    for batch in sorted(game.batches.values(), key=lambda b: b.id):
        if (batch.voided or batch.results is not None or batch.mode != "commit-reveal" or player in batch.withheld
                or batch.lost() is not None):
            continue  # a part withheld and settled by an agreement is never given afterwards, nor one to a batch
            # whose roller's reveal was (its rolls are lost, DESIGN §4.8)
        raw = dict(batch.raw)
        if player == batch.roller:
            if not batch.knowable(players):
                continue
            secret = seal.recover_key(base64.b64decode(raw["owner_box"]), private_key(me))
            raw["reveal"] = secret.hex()
            raw["results"] = dice.derive(game.manifest.id, players, Batch(raw))
            done.append(f"revealed {batch.id}: {raw['results']}")
        elif player not in batch.others(players) or player in batch.contributions:
            continue  # not a contributor (he had resigned when it was announced), or given
        elif not batch.committed_first(players):
            raw["contributions"] = {**batch.contributions, player: dice_crypto.fresh_secret().hex()}
            done.append(f"contributed to {batch.id}")
        elif player not in batch.contribution_commits:
            # a table of three or more: commit first, reveal once every contributor has committed (DESIGN §5)
            secret = dice_crypto.fresh_secret()
            raw["contribution_commits"] = {**batch.contribution_commits,
                                           player: dice_crypto.contribution_commitment(secret).hex()}
            raw["contribution_boxes"] = {**(batch.raw.get("contribution_boxes") or {}),
                                         player: base64.b64encode(seal.seal_to(secret, me.public)).decode()}
            done.append(f"committed a contribution to {batch.id}")
        elif batch.all_committed(players):
            box = base64.b64decode(batch.raw["contribution_boxes"][player])
            raw["contributions"] = {**batch.contributions, player: seal.recover_key(box, private_key(me)).hex()}
            done.append(f"revealed my contribution to {batch.id}")
        else:
            continue
        files[batch.file] = dump_mapping(_ordered(raw)).encode()
    return done


def escrow_sign(files: Files, game: Game, escrow: PrivateKey) -> list[str]:
    """The escrow's signatures for every open escrow batch, with the results (DESIGN §5 escrow mode)."""
    if game.manifest.escrow_key is None or not game.manifest.escrow_key.same_key(escrow.public):
        raise PbemError("key.not-escrow", "this key is not the game's dice escrow key (game.yaml dice.escrow_key)")
    done = []
    for batch in sorted(game.batches.values(), key=lambda b: b.id):
        if batch.mode != "escrow" or batch.voided or "escrow" in batch.raw:
            continue
        raw = dict(batch.raw)
        message = dice_crypto.escrow_message(game.manifest.id, batch.id, dice_crypto.announced_batch(raw))
        raw["escrow"] = base64.b64encode(escrow.sign_raw(message)).decode()
        raw["results"] = dice.derive(game.manifest.id, game.manifest.players, Batch(raw))
        files[batch.file] = dump_mapping(_ordered(raw)).encode()
        done.append(f"signed {batch.id}: {raw['results']}")
    return done


def void(files: Files, game: Game, batch_id: str, reason: str, cosign: Mapping[str, str]) -> None:
    """Void a batch whole with a reason (seed §2.D); once results were knowable every other player co-signs."""
    check_text(reason, "the reason")
    batch = _batch(game, batch_id)
    raw = dict(batch.raw)
    raw["void"] = {"reason": reason, **({"cosign": dict(cosign)} if cosign else {})}
    files[batch.file] = dump_mapping(_ordered(raw)).encode()


def withdrawable(committed: Files, worktree: Files, batch_id: str, player: str) -> str:
    """The path of `player`'s announced batch `batch_id` that is in his working tree only (never committed), for
    `pbem dice withdraw`; refused with the way on otherwise: a committed batch is voided (seed §2.D), never
    taken back."""
    path = f"dice/{batch_id}.yaml"
    if path not in worktree:
        raise PbemError("usage.no-batch", f"no dice batch {batch_id!r} in your working tree")
    if path in committed:
        raise PbemError("dice.changed", f"{batch_id} is committed: it can no longer be withdrawn, only voided whole "
                        "with a reason", file=path, exit_code=ILLEGAL,
                        hint=f'pbem dice void {batch_id} --reason "…" (co-signed once its results are knowable)')
    roller = yamlsafe.load(worktree[path], path).data
    if not isinstance(roller, Mapping) or roller.get("roller") != player:
        raise PbemError("dice.wrong-roller", f"{batch_id} is not your batch", file=path, exit_code=ILLEGAL)
    return path


def cosign(game: Game, batch_id: str, reason: str, me: Identity) -> str:
    """My signature agreeing that `batch_id` be voided for `reason` (give it to the roller)."""
    check_text(reason, "the reason")
    message = dice.void_message(game.manifest.id, _batch(game, batch_id), reason)
    return me.signer.sign(message, dice.VOID_NAMESPACE)


def show(game: Game, batch_id: str) -> str:
    """A batch's purposes and results in the order announced (`pbem dice show`)."""
    batch = _batch(game, batch_id)
    lines = [f"dice {batch.id}: d{batch.sides}, {batch.mode}, rolled by {batch.roller}"
             + (f" (re-rolls {batch.raw['replaces']})" if "replaces" in batch.raw else "")]
    results = batch.results or []
    for j, purpose in enumerate(batch.raw["rolls"]):
        got = str(results[j]) if j < len(results) else "?"
        ref = f"  [{purpose['ref']}]" if "ref" in purpose else ""
        lines.append(f"  {j + 1:>3}. {got:>4}  {purpose['for']}{ref}")
    if batch.voided:
        lines.append(f"  VOID: {batch.raw['void']['reason']}")
    elif batch.results is None:
        owed = dice.owed(game.manifest.players, [batch], None)
        lines.append("  waiting for: " + "; ".join(f"{b.player} ({b.why})" for b in owed))
    return "\n".join(lines) + "\n"


def show_record(game: Game, batch_id: str) -> dict[str, Any]:
    """`pbem dice show --format json`: what `show` prints, every key present (null where not known yet)."""
    batch = _batch(game, batch_id)
    results = batch.results or []
    owed = [] if batch.voided or batch.results is not None else dice.owed(game.manifest.players, [batch], None)
    return {"id": batch.id, "roller": batch.roller, "mode": batch.mode, "sides": batch.sides,
            "replaces": batch.raw.get("replaces"), "file": batch.file or None,
            "rolls": [{"for": purpose["for"], "ref": purpose.get("ref"), "sides": sides,
                       "result": results[j] if j < len(results) else None}
                      for j, (purpose, sides) in enumerate(zip(batch.raw["rolls"], batch.each_sides))],
            "void": batch.raw["void"]["reason"] if batch.voided else None,
            "waiting_for": [{"player": b.player, "why": b.why} for b in owed]}


def _check_sealable(game: Game, owner: str, kind: str, value: Any, document: yamlsafe.Document,
                    before: tuple[Verified, Identity, str] | None = None) -> None:
    """Check what the verifier can check only once it is opened, before it is sealed: an allocation whose units
    are not the owner's, or that spends more than a unit's power (every line counted, `reinforce` too), or
    plots a speed above max_speed, is refused here with its line (rules.allocation; seed §2.C). Sealed, nobody
    could see the mistake before the reveal, when it can no longer be taken back. With `before` (the verified
    head, my identity, the step it answers) also what it adds to my own earlier allocations read across the
    battle (a weapon held that they never armed, battery charge they never stored: `audit_battle`)."""
    audit = game.manifest.ruleset.audit
    if audit is None or not isinstance(value, Mapping):
        return
    for unit, reason in audit.seal_errors(game.manifest.setup, kind, owner, value):
        raise PbemError("rules.allocation", reason, file=document.file,
                        line=document.line_of(("units", unit)), exit_code=ILLEGAL)
    stop = before[0].stop if before is not None else None
    if before is None or stop is None or kind != "allocation":
        return
    verified, me, step = before
    turn = audit.turn_of(game.manifest.ruleset.parse_time(step))
    mine = {t: v for t, (_, v) in own_allocations(verified, me, owner).items() if t < turn}
    state = stop.checkpoint.state
    records = [audit.turn_record(state, owner, t) for t in range(1, turn + 1)]
    for at, rule, reason in audit.audit_battle(game.manifest.setup, records, {**mine, turn: {**value, "turn": turn}}):
        if at == turn:
            unit = reason.split(", ", 1)[1].split(":", 1)[0] if ", " in reason else ""
            raise PbemError(rule, f"{reason} (your allocations of the turns before, read with it)",
                            file=document.file, line=document.line_of(("units", unit)), exit_code=ILLEGAL)


def own_allocations(verified: Verified, me: Identity, player: str) -> dict[int, tuple[str, dict[str, Any]]]:
    """turn -> (id, what it holds) for each of my allocations still sealed that my key file opens (an agent-held
    key opens none): what my own pbem reads to warn me and to check my next one (seed §2.C)."""
    ruleset, audit = verified.game.manifest.ruleset, verified.game.manifest.ruleset.audit
    out: dict[int, tuple[str, dict[str, Any]]] = {}
    if audit is None:
        return out
    for secret in sorted(verified.game.secrets.values(), key=lambda s: s.id):
        if secret.owner != player or secret.revealed or secret.raw["kind"] != "allocation" or "step" not in secret.raw:
            continue
        try:
            value = own_value(secret, me)
        except (PbemError, ValueError, OSError):
            continue
        if isinstance(value, dict):
            turn = audit.turn_of(ruleset.parse_time(secret.raw["step"]))
            out[turn] = (secret.id, {**value, "turn": turn})
    return out


def seal_secret(files: Files, game: Game, me: Identity, owner: str, kind: str, content: bytes, end: str,
                concerns: str = "", step: str | None = None, source: str = "the secret",
                head: Verified | None = None) -> str:
    """Seal `content` (YAML or JSON of the secret's kind) into secrets/<owner>-NNNN.yaml (DESIGN §6); a kind this
    game does not offer is refused with the list of those it does (services.secret_kinds)."""
    from pbem.services import secret_kinds

    check_text(concerns, "what the secret concerns (--concerns)")
    secret_kinds.require(game, kind)
    document = yamlsafe.load(content, source)
    value = document.data
    schemas.validate(f"pbem/secret/{kind}/1", value, file=source)
    _check_sealable(game, owner, kind, value, document,
                    (head, me, step) if head is not None and step is not None else None)
    sealed = seal.seal(canonical(value), me.public)
    secret_id = ids.next_id(game.secrets, owner)  # the owner's own id: sealing at once never collides
    raw: dict[str, Any] = {"id": secret_id, "owner": owner, "kind": kind}
    if concerns:
        raw["concerns"] = concerns
    ruleset = game.manifest.ruleset
    sealing = ruleset.sealing
    if step is not None and sealing is not None and sealing.sealed_kind(ruleset.parse_time(step)) not in (None, kind):
        step = None  # a note or a target sealed while one owes an allocation does not answer that step
    if step is not None:
        raw["step"] = step  # the sealed simultaneous step this answers (DESIGN §4.7)
    raw.update({"end": end, "box": base64.b64encode(sealed.box).decode(), "commit": sealed.commit.hex(),
                "owner_box": base64.b64encode(sealed.owner_box).decode()})
    part = sealing.sealed_part if sealing is not None else None
    shown = part(kind, value) if part is not None and step is not None else None
    if shown is not None:
        # what the step opens alone (a turn's speeds), committed beside the box (crypto/part.py)
        raw["part_commit"] = parts.part_commitment(parts.part_salt(sealed.key), canonical(shown)).hex()
    files[f"secrets/{secret_id}.yaml"] = dump_mapping(raw).encode()
    return secret_id


def withhold(files: Files, game: Game, parts: Mapping[str, tuple[Collection[str], Collection[str]]],
             settled: Mapping[str, str]) -> list[str]:
    """Mark what each settled player owed and never gave as withheld by the agreement settling it (DESIGN §4.8):
    `parts`: player -> (the batch ids, the secret ids) concerned. What the commit completing an nmr or a resign
    writes; one line per mark for its message."""
    done = []
    for batch in sorted(game.batches.values(), key=lambda b: b.id):
        marks = {p: a for p, a in settled.items() if batch.id in parts[p][0]}
        if marks:
            raw = {**batch.raw, "withheld": {**batch.withheld, **marks}}
            files[batch.file] = dump_mapping(_ordered(raw)).encode()
            done += [f"{p}'s part of dice {batch.id} withheld" for p in sorted(marks)]
    for secret in sorted(game.secrets.values(), key=lambda s: s.id):
        owner = secret.owner
        if owner in settled and secret.id in parts[owner][1]:
            files[secret.file] = dump_mapping({**secret.raw, "withheld": settled[owner]}).encode()
            done.append(f"{owner}'s secret {secret.id} withheld")
    return done


def withheld_listing(game: Game) -> list[str]:
    """One line per part settled as withheld (DESIGN §4.8), for `pbem status` and `pbem log`."""
    out = []
    seat_changes = {a.id for a in game.agreements.values() if a.kind == kinds.SEAT}
    for batch in sorted(game.batches.values(), key=lambda b: b.id):
        lost = batch.lost(seat_changes)
        for player, agreement in sorted(batch.withheld.items()):
            how = f"{dice.how_settled(player, agreement, {player} if agreement in seat_changes else ())} {agreement}"
            if lost is not None and player == batch.roller:
                refs = ", ".join(batch.refs) or "its rolls"
                out.append(f"dice {batch.id}: missed: {lost.text()} ({refs} lost: never rolled)")
            else:
                out.append(f"dice {batch.id}: {player}'s contribution withheld, {how}: left out of the seed")
    for secret in sorted(game.secrets.values(), key=lambda s: s.id):
        if secret.withheld:
            how = dice.how_settled(secret.owner, secret.withheld,
                                   {secret.owner} if secret.withheld in seat_changes else ())
            what = secret.raw["kind"] + (f", {secret.raw['concerns']}" if secret.raw.get("concerns") else "")
            out.append(f"secret {secret.id} ({what}): {secret.owner}'s reveal withheld, {how} {secret.withheld}: "
                       "what it hid is lost")
    return out


def reveal_secret(files: Files, game: Game, me: Identity, player: str, secret_id: str) -> Any:
    """Add the key of my secret, recovered from its owner box with my key file alone."""
    secret = game.secrets.get(secret_id)
    if secret is None:
        raise PbemError("usage.no-secret", f"no secret {secret_id!r}; secrets: {', '.join(sorted(game.secrets))}")
    if secret.owner != player:
        raise PbemError("secret.not-owner", f"secret {secret_id} is {secret.owner}'s, not yours", exit_code=ILLEGAL)
    if secret.revealed:
        return secret.value()
    key = seal.recover_key(base64.b64decode(secret.raw["owner_box"]), private_key(me))
    raw = dict(secret.raw)
    raw["key"] = key.hex()
    files[secret.file] = dump_mapping(raw).encode()
    return Secret(raw, secret.file).value()


def own_value(secret: Secret, me: Identity) -> Any:
    """What my own sealed secret holds, opened with the key from its owner box, nothing written (my own pbem may
    look inside my boxes at any time: to warn me, to open a part, to steer by my sealed target). PbemError or
    ValueError when my key file cannot open it."""
    key = seal.recover_key(base64.b64decode(secret.raw["owner_box"]), private_key(me))
    return json.loads(seal.open_sealed(base64.b64decode(secret.raw["box"]), key, bytes.fromhex(secret.raw["commit"])))


def open_part(files: Files, game: Game, me: Identity, player: str, secret_id: str) -> Any:
    """Open the part of my secret that its step needs (DESIGN §4.7: a turn's speeds), the rest staying sealed:
    the box opened with the key from my owner box, its part and salt written beside it (crypto/part.py)."""
    secret = game.secrets[secret_id]
    if secret.owner != player:
        raise PbemError("secret.not-owner", f"secret {secret_id} is {secret.owner}'s, not yours", exit_code=ILLEGAL)
    key = seal.recover_key(base64.b64decode(secret.raw["owner_box"]), private_key(me))
    shown = game.manifest.ruleset.sealed_part(secret.raw["kind"], own_value(secret, me))  # type: ignore[attr-defined]
    files[secret.file] = dump_mapping({**secret.raw, "part": shown, "part_salt": parts.part_salt(key).hex()}).encode()
    return shown


def due_reveals(files: Files, game: Game, me: Identity, player: str, owed: list[str]) -> list[str]:
    """Reveal each of my secrets in `owed` (ids whose reveal is due)."""
    return [f"revealed {sid}: {json.dumps(reveal_secret(files, game, me, player, sid))}" for sid in owed]


def _batch(game: Game, batch_id: str) -> Batch:
    batch = game.batches.get(batch_id)
    if batch is None:
        raise PbemError("usage.no-batch", f"no dice batch {batch_id!r}; batches: {', '.join(sorted(game.batches))}")
    return batch


def _ordered(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The batch fields in DESIGN §5's order, for a file players can read."""
    order = ["id", "roller", "mode", "sides", "rolls", "at", "replaces", "contributors", "commit", "owner_box",
             "contribution_commits", "contribution_boxes", "contributions", "withheld", "reveal", "escrow", "results",
             "void"]
    return {k: raw[k] for k in order if k in raw} | {k: v for k, v in raw.items() if k not in order}

