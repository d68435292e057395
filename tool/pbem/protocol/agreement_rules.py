"""What a commit may change in agreements/, and the consent the start needs (DESIGN §4.8, §2 Setup; seed 000
§2.A): rules over every kind alike, each kind's own rules looked up in its row (protocol.kinds). Pure: no git,
files or printing.
"""

from __future__ import annotations

from typing import Mapping

from pbem.errors import Finding
from pbem.protocol.agreements import Agreement, signature_valid, valid_signers
from pbem.protocol.ids import author_of
from pbem.protocol.kinds import KINDS, START, Kind, Table, start_terms


# --- what one commit may change --------------------------------------------------------------------------------

def agreement_findings(table: Table, before: Mapping[str, Agreement], after: Mapping[str, Agreement],
                       committer: str) -> list[Finding]:
    """Every rule a commit's changes to agreements/ must keep (module docstring): a proposal is its author's
    and carries his signature only; a player adds only his own, valid signature; nothing signed changes and
    nothing is removed; each kind's content and time rules. `before`/`after`: by file."""
    out: list[Finding] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if new is None:
            assert old is not None
            out.append(Finding("agreement.changed", f"agreement {old.id} was removed: agreements stay in the "
                               "report", file=path))
            continue
        if old is not None and old.raw == new.raw:
            continue
        out.extend(_one(table, old, new, committer))
    return out


def _one(table: Table, old: Agreement | None, new: Agreement, committer: str) -> list[Finding]:
    f = new.file
    out: list[Finding] = []
    if f != f"agreements/{new.id}.yaml":
        out.append(Finding("agreement.malformed", f"agreement {new.id} must live in agreements/{new.id}.yaml",
                           file=f, line=new.line_of("id")))
    kind = KINDS.get(new.kind)
    if kind is None:  # the schema names the kinds; this is the registry's side of it
        return out + [Finding("agreement.malformed", f"no agreement of kind {new.kind!r}", file=f,
                              line=new.line_of("kind"))]
    if old is None:
        out.extend(_proposal(table, kind, new, committer))
    elif old.body() != new.body():
        out.append(Finding("agreement.changed", f"agreement {new.id}: what was signed cannot change (propose a "
                           "new one instead)", file=f))
    added = [p for p, s in sorted(new.signatures.items()) if old is None or old.signatures.get(p) != s]
    for player in added:
        if player != committer:
            why = "holds no seat" if player not in table.seats else "signs for himself"
            out.append(Finding("agreement.foreign-signature", f"{committer} wrote a signature in {player}'s name "
                               f"on agreement {new.id}; {player} {why} (each signs in a commit of his own: "
                               f"pbem sign {new.id})", file=f, line=new.line_of("signatures")))
        elif old is not None and player in old.signatures:
            out.append(Finding("agreement.changed", f"{player}'s signature on agreement {new.id} was replaced",
                               file=f, line=new.line_of("signatures")))
        elif table.started and player != new.by and player not in kind.signers(new, table):
            out.append(Finding("agreement.not-a-signer", f"{player} signed agreement {new.id}, whose signers are "
                               f"{', '.join(kind.signers(new, table)) or 'nobody'}", file=f,
                               line=new.line_of("signatures")))
        elif not signature_valid(table.game_id, new, player, table.keys):
            out.append(Finding("agreement.signature", f"{player}'s signature on agreement {new.id} does not "
                               "verify under his key in game.yaml over this agreement in this game", file=f,
                               line=new.line_of("signatures")))
    if old is not None:
        for player in sorted(set(old.signatures) - set(new.signatures)):
            out.append(Finding("agreement.changed", f"{player}'s signature on agreement {new.id} was removed",
                               file=f, line=new.line_of("signatures")))
    if added and not out:
        out.extend(kind.open(new, table))
    return out


def _proposal(table: Table, kind: Kind, new: Agreement, proposer: str) -> list[Finding]:
    f = new.file
    out = []
    if author_of(new.id) != proposer or new.by != proposer:
        out.append(Finding("ownership.id-author", f"{proposer} proposed agreement {new.id} (by {new.by}): a "
                           "proposal's id and `by` name its proposer", file=f, line=new.line_of("id")))
    if proposer not in new.signatures:
        out.append(Finding("agreement.unsigned", f"a new agreement carries its proposer's signature: {proposer} "
                           f"proposes {new.id} and signs it", file=f, line=new.line_of("signatures")))
    out.extend(kind.content(new, table))
    if not new.signatures:
        out.extend(kind.open(new, table))  # else checked with the added signature
    return out


# --- the start (DESIGN §2 Setup, seed 000 §2.A) ---------------------------------------------------------------

def complete(table: Table, agreement: Agreement) -> bool:
    """Whether every required signer signed `agreement` validly."""
    kind = KINDS[agreement.kind]
    return set(kind.signers(agreement, table)) <= valid_signers(table.game_id, agreement, table.keys)


def start_findings(table: Table, agreements: Mapping[str, Agreement], first: str,
                   rolled: str | None, ordered: bool = False) -> list[Finding]:
    """The start commit carries every seat's consent over the final game.yaml: some `start` agreement over
    exactly this game.yaml (`table.game_digest`) is validly signed by every seat, and control goes to the
    player it names (`first`), or to the one the start roll named (`rolled`) when it says `roll: true`; the
    table order is by dice (`ordered`: the order dice are rolled) exactly when it says `order: roll`.
    Rules: setup.no-consent, agreement.stale, agreement.unsigned."""
    starts = [a for _, a in sorted(agreements.items()) if a.kind == START]
    how = "every player runs `pbem start --first ID` (or `pbem start --roll`) to consent"
    if not starts:
        return [Finding("setup.no-consent", f"the start needs every seat's signed consent over the final "
                        f"game.yaml ({', '.join(table.seats)}), and there is no start agreement",
                        file="game.yaml", hint=how)]
    current = [a for a in starts if a.content["game"] == table.game_digest]
    if not current:
        return [Finding("agreement.stale", f"every start agreement ({', '.join(a.id for a in starts)}) is over "
                        "another game.yaml: it changed after they were signed; consent again to this one",
                        file="game.yaml", hint=how)]
    signed = [a for a in current if complete(table, a)]
    if not signed:
        best = max(current, key=lambda a: len(valid_signers(table.game_id, a, table.keys)))
        missing = [p for p in table.seats if p not in valid_signers(table.game_id, best, table.keys)]
        return [Finding("agreement.unsigned", f"start agreement {best.id} lacks a valid signature of "
                        f"{', '.join(missing)}: the start needs every seat's", file=best.file,
                        hint=f"{', '.join(missing)}: pbem sign {best.id}")]
    for agreement in signed:
        if agreement.content.get("first") == first or (agreement.content.get("roll") and rolled == first):
            if (agreement.content.get("order") == "roll") == ordered:
                return []
    said = "; ".join(f"{a.id}: " + start_terms(a) for a in signed)
    order = "the table order by dice" if ordered else "game.yaml's table order"
    return [Finding("setup.no-consent", f"control went to {first} with {order}, but the start every seat signed "
                    f"says otherwise ({said}; by dice: {rolled or 'not rolled'})", file="status.yaml", hint=how)]
