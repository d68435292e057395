"""Agreements: documents every required player signs (DESIGN §4.8; seed 000 §2.A "by mutual consent").

An agreement (agreements/<author>-NNNN.yaml) has an `id` naming its author, a `kind`, its proposer `by`, the
`content` the kind defines, and `signatures`: each player's SSH signature (namespace `pbem`) over

    b"pbem-agreement-v1" + game_id + b"\\x00" + sha256(canonical agreement without its signatures)

so a signature covers the kind, the content and the id, and carries over neither to another agreement nor to
another game. Its life, one commit each, made out of turn:

1. proposed: a new file carrying its proposer's own signature only (its id names him: `ownership.id-author`);
2. signed: a player adds his own signature, and nothing else (`agreement.foreign-signature`,
   `agreement.signature`); nothing signed ever changes, and nothing is ever removed (`agreement.changed`).

Kinds are looked up by name (`KINDS`): each says who must sign, what its content must say, and whether it may
still be proposed or signed. The first kind is `start` (consent to start over the final game.yaml); `erratum`
corrects the firm report (protocol.errata). Pure: no git, files or printing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from pbem.crypto import sshsig
from pbem.crypto.keys import PublicKey
from pbem.errors import Finding, PbemError
from pbem.formats import times
from pbem.formats.canonical import dumps as canonical
from pbem.protocol.ids import author_of  # moved: re-exported until the lead sweeps
from pbem.protocol.model import Entry
from pbem.rulesets.base import Point

NAMESPACE = "pbem"  # as dice voids and errata: never `git`, so no agreement signature can pass for a commit's
DOMAIN = b"pbem-agreement-v1"
UNSIGNED_FIELDS = ("signatures",)  # what the signatures cannot cover: they are added after signing
START = "start"


# --- signing, shared by every document players sign together (agreements, errata) ------------------------------

def consent_message(domain: bytes, game_id: str, body: bytes) -> bytes:
    """What a player signs: a domain, the game id (no signature carries over to another game) and the SHA-256
    of the document's canonical bytes (`body`, everything but the signatures)."""
    return domain + game_id.encode() + b"\0" + hashlib.sha256(body).digest()


def signed_by(armored: str | None, message: bytes, key: PublicKey | None) -> bool:
    """Whether `armored` is a valid SSHSIG (namespace pbem) of `message` by `key`."""
    if armored is None or key is None:
        return False
    try:
        signer = sshsig.verify(armored, message, NAMESPACE)
    except PbemError:
        return False
    return signer.same_key(key)


# --- the agreement ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Agreement:
    """One agreement as read from agreements/<id>.yaml (validated against pbem/agreement/1)."""

    raw: Mapping[str, Any] = field(repr=False)
    file: str
    lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)  # top-level field -> line
    # an erratum's `removed` and `added` entries, read as report entries (verify.agreementfile); else empty
    entries: tuple[tuple[Entry, ...], tuple[Entry, ...]] = field(default=((), ()), repr=False, compare=False)

    @property
    def id(self) -> str:
        return self.raw["id"]

    @property
    def kind(self) -> str:
        return self.raw["kind"]

    @property
    def by(self) -> str:
        return self.raw["by"]

    @property
    def content(self) -> Mapping[str, Any]:
        return self.raw["content"]

    @property
    def signatures(self) -> Mapping[str, str]:
        return self.raw.get("signatures") or {}

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)

    def body(self) -> bytes:
        """The canonical bytes every signer signs the hash of: everything but the signatures."""
        return canonical({k: v for k, v in self.raw.items() if k not in UNSIGNED_FIELDS})

    def unsigned(self, signers: Sequence[str]) -> list[str]:
        """The players among `signers` whose signature is still missing, in table order."""
        return [p for p in signers if p not in self.signatures]


def message(game_id: str, agreement: Agreement) -> bytes:
    """What each signer signs (module docstring)."""
    return consent_message(DOMAIN, game_id, agreement.body())


def signature_valid(game_id: str, agreement: Agreement, player: str, keys: Mapping[str, PublicKey]) -> bool:
    """Whether `player`'s signature on `agreement` verifies under his key in game.yaml."""
    return signed_by(agreement.signatures.get(player), message(game_id, agreement), keys.get(player))


def valid_signers(game_id: str, agreement: Agreement, keys: Mapping[str, PublicKey]) -> set[str]:
    """The players whose signature on `agreement` verifies."""
    return {p for p in agreement.signatures if signature_valid(game_id, agreement, p, keys)}


# --- kinds -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Table:
    """What the rules of a kind look at: the game at the commit judged."""

    game_id: str
    seats: tuple[str, ...]  # every seat of game.yaml, in table order
    keys: Mapping[str, PublicKey]
    game_digest: str  # sha256 hex of game.yaml's bytes
    started: bool  # whether the game had started before this commit
    resigned: frozenset[str] = frozenset()  # seats left by a resign agreement and not given to a new key since
    owing: frozenset[str] = frozenset()  # players who owe something now (status.yaml's pending breaks)
    ended: str | None = None  # the id of the end agreement that ended the game, if any
    game: Mapping[str, Any] | None = None  # game.yaml as read (what an amend may change)
    firm: Point | None = None  # the firm point (the next unresolved step); None before the start or once over

    @property
    def active(self) -> tuple[str, ...]:
        """The seats still played: every seat but those left by a resign (DESIGN §4.8)."""
        return tuple(p for p in self.seats if p not in self.resigned)


@dataclass(frozen=True)
class Kind:
    """The rules of one kind of agreement: who signs it, what its content must say, and when it is open
    (proposed or signed); each returns findings about one agreement being proposed or signed."""

    name: str
    signers: Callable[[Agreement, Table], tuple[str, ...]]
    content_findings: Callable[[Agreement, Table], list[Finding]]
    open_findings: Callable[[Agreement, Table], list[Finding]]


def _every_seat(_agreement: Agreement, table: Table) -> tuple[str, ...]:
    return table.seats


def _start_content(agreement: Agreement, table: Table) -> list[Finding]:
    first = agreement.content.get("first")
    if first is not None and first not in table.seats:
        return [Finding("agreement.malformed", f"start agreement {agreement.id} names {first!r} to start, who "
                        f"holds no seat (seats: {', '.join(table.seats)})", file=agreement.file,
                        line=agreement.line_of("content"))]
    if agreement.content.get("order") is not None and len(table.seats) < 3:
        return [Finding("agreement.malformed", f"start agreement {agreement.id} rolls the order around the table, "
                        f"but {len(table.seats)} players sit in the only order there is: who starts fixes who "
                        "follows", file=agreement.file, line=agreement.line_of("content"))]
    return []


def _start_open(agreement: Agreement, table: Table) -> list[Finding]:
    if table.started:
        return [Finding("agreement.closed", f"start agreement {agreement.id}: the game has started; consent to "
                        "start is given before the start", file=agreement.file)]
    if agreement.content["game"] != table.game_digest:
        return [Finding("agreement.stale", f"start agreement {agreement.id} is over another game.yaml (sha256 "
                        f"{agreement.content['game'][:12]}…, game.yaml is now {table.game_digest[:12]}…): it was "
                        "changed since; propose the start again", file=agreement.file,
                        line=agreement.line_of("content"), hint="pbem start --first ID (or --roll)")]
    return []


# --- the ways out of a stalled game (DESIGN §4.8): amend, seat, resign, nmr, end --------------------------------

AMEND, SEAT, RESIGN, NMR, END, ERRATUM = "amend", "seat", "resign", "nmr", "end", "erratum"
# What an amend may change in game.yaml; everything else is the game's identity (its id, ruleset, seats and keys,
# dice mode, setup), which no agreement rewrites: a key changes only by a `seat` agreement.
AMENDABLE = ("title", "rules", "deadline", "paused_until")
RESULTS = ("draw", "concession", "forfeit")


def _active(_agreement: Agreement, table: Table) -> tuple[str, ...]:
    return table.active


def _others(agreement: Agreement, table: Table) -> tuple[str, ...]:
    """Every active player but the agreement's subject (the seat given away, the absent player, the forfeiter)."""
    subject = subject_of(agreement)
    return tuple(p for p in table.active if p != subject)


def _himself(agreement: Agreement, _table: Table) -> tuple[str, ...]:
    return (agreement.by,)


def _end_signers(agreement: Agreement, table: Table) -> tuple[str, ...]:
    return _others(agreement, table) if agreement.content.get("result") == "forfeit" else table.active


def subject_of(agreement: Agreement) -> str | None:
    """The player an agreement is about: the seat a `seat` gives, the absent player of an `nmr`, who resigns,
    who concedes or forfeits; None for the others."""
    if agreement.kind == RESIGN:
        return agreement.by
    if agreement.kind == SEAT:
        return agreement.content.get("seat")
    if agreement.kind in (NMR, END):
        return agreement.content.get("player")
    return None


def _finding(rule: str, agreement: Agreement, text: str, hint: str | None = None) -> Finding:
    return Finding(rule, text, file=agreement.file, line=agreement.line_of("content"), hint=hint)


def _played(agreement: Agreement, table: Table) -> list[Finding]:
    """What every kind but `start` needs: a game that has started and has not ended."""
    if not table.started:
        return [Finding("agreement.closed", f"{agreement.kind} agreement {agreement.id}: the game has not started "
                        "(before the start, game.yaml is edited and consented to with a start agreement)",
                        file=agreement.file)]
    return []


def _seated(agreement: Agreement, table: Table, player: Any) -> list[Finding]:
    if player not in table.active:
        why = "resigned" if player in table.resigned else "holds no seat"
        return [_finding("agreement.malformed", agreement, f"{agreement.kind} agreement {agreement.id} names "
                         f"{player!r}, who {why} (active: {', '.join(table.active)})")]
    return []


def _amend_content(agreement: Agreement, table: Table) -> list[Finding]:
    changes = agreement.content.get("changes") or {}
    frozen = sorted(k for k in changes if k not in AMENDABLE)
    if frozen:
        return [_finding("agreement.frozen", agreement, f"amend {agreement.id} changes {', '.join(frozen)} of "
                         f"game.yaml: the game's identity (id, ruleset, seats and keys, dice, setup) never changes; an "
                         f"amend changes only {', '.join(AMENDABLE)}", hint="a new key for a seat: pbem agree seat")]
    try:  # the calendar behind the schema's patterns (formats.times): no February 30
        if changes.get("paused_until") is not None:
            times.parse_pause(changes["paused_until"], file=agreement.file, line=agreement.line_of("content"))
        if changes.get("deadline") is not None:
            times.parse_duration(changes["deadline"], file=agreement.file, line=agreement.line_of("content"))
    except PbemError as exc:
        return [exc.finding]
    return []


def _seat_content(agreement: Agreement, table: Table) -> list[Finding]:
    seat = agreement.content.get("seat")
    if seat not in table.seats:
        return [_finding("agreement.malformed", agreement, f"seat agreement {agreement.id} gives {seat!r}, which is "
                         f"no seat (seats: {', '.join(table.seats)})")]
    key = agreement.content.get("key")
    holder = next((p for p, k in table.keys.items() if key is not None and _same_key_text(k, key)), None)
    if holder is not None:
        return [_finding("agreement.seat-not-vacant", agreement, f"seat agreement {agreement.id} gives {seat} to "
                         f"the key of {holder}: one key holds one seat")]
    if agreement.content.get("why") == "replacement" and seat not in table.resigned:
        return [_finding("agreement.seat-not-vacant", agreement, f"seat agreement {agreement.id} gives {seat} to "
                         f"a replacement player, but {seat} is no seat vacant by agreement (only a seat left by "
                         "a resign is; a player who lost his key gets a new one with why: lost-key)")]
    if agreement.content.get("why") == "lost-key" and seat in table.resigned:
        return [_finding("agreement.seat-not-vacant", agreement, f"seat agreement {agreement.id}: {seat} resigned; "
                         "his seat goes to a replacement player (why: replacement)")]
    return []


def _same_key_text(key: PublicKey, text: str) -> bool:
    try:
        return key.same_key(PublicKey.from_line(text))
    except (PbemError, ValueError):
        return False


def _resign_content(agreement: Agreement, table: Table) -> list[Finding]:
    return _seated(agreement, table, agreement.by) if table.started else []


def _nmr_content(agreement: Agreement, table: Table) -> list[Finding]:
    player = agreement.content.get("player")
    out = _seated(agreement, table, player)
    if not out and player == agreement.by:
        out.append(_finding("agreement.malformed", agreement, f"nmr {agreement.id}: {player} cannot find himself "
                            "absent (he can resign: pbem resign)"))
    return out


def _end_content(agreement: Agreement, table: Table) -> list[Finding]:
    result, player = agreement.content.get("result"), agreement.content.get("player")
    if result in ("concession", "forfeit"):
        if player is None:
            return [_finding("agreement.malformed", agreement, f"end {agreement.id}: a {result} names the player "
                             "who concedes or forfeits (player: ID)")]
        return _seated(agreement, table, player)
    return []


def _open(agreement: Agreement, table: Table) -> list[Finding]:
    out = _played(agreement, table)
    if not out and table.ended is not None:
        rule = "agreement.second-end" if agreement.kind == END else "agreement.closed"
        out.append(Finding(rule, f"{agreement.kind} agreement {agreement.id}: the game ended by agreement "
                           f"{table.ended}; a game ends once", file=agreement.file))
    return out


def _nmr_open(agreement: Agreement, table: Table) -> list[Finding]:
    out = _open(agreement, table)
    player = agreement.content.get("player")
    if not out and player not in table.owing:
        out.append(_finding("agreement.nmr-owes-nothing", agreement, f"nmr {agreement.id} finds {player} absent, "
                            f"but {player} owes nothing now (pending: {', '.join(sorted(table.owing)) or 'nobody'})"))
    return out


def _seat_open(agreement: Agreement, table: Table) -> list[Finding]:
    return _open(agreement, table) or _seat_content(agreement, table)


def _erratum_content(agreement: Agreement, table: Table) -> list[Finding]:
    """An erratum corrects only entries before the firm marker, of seated players, and is proposed by an active
    player (one who resigned has no say in the game any more): protocol.errata.entry_findings."""
    from pbem.protocol import errata  # errata signs with this module's helpers: imported here, not at the top

    out = []
    if agreement.by not in table.active:
        why = "resigned" if agreement.by in table.resigned else "holds no seat"
        out.append(_finding("agreement.not-a-signer", agreement, f"erratum {agreement.id}: {agreement.by} {why}; "
                            f"only active players ({', '.join(table.active)}) propose and sign errata"))
    return out + errata.entry_findings(table.seats, errata.of_agreement(agreement), table.firm)


KINDS: dict[str, Kind] = {
    START: Kind(START, _every_seat, _start_content, _start_open),
    AMEND: Kind(AMEND, _active, _amend_content, _open),
    SEAT: Kind(SEAT, _others, _seat_content, _seat_open),
    RESIGN: Kind(RESIGN, _himself, _resign_content, _open),
    NMR: Kind(NMR, _others, _nmr_content, _nmr_open),
    END: Kind(END, _end_signers, _end_content, _open),
    ERRATUM: Kind(ERRATUM, _active, _erratum_content, _open),
}


def signed_by_all(agreement: Agreement, table: Table) -> bool:
    """Whether every signer the kind requires has signed. Each signature was verified in the commit that added
    it (`agreement_findings`), so presence is enough here and costs no signature check per commit."""
    return set(KINDS[agreement.kind].signers(agreement, table)) <= set(agreement.signatures)


def resigned(agreements_: Mapping[str, Agreement], keys: Mapping[str, PublicKey]) -> frozenset[str]:
    """The seats vacant by agreement: left by a resign signed by the player himself (it takes effect at once)
    with the key the seat holds now. A seat given since to another key (a replacement, and any lost-key change
    after it: the commit that completes a seat writes the new key into game.yaml) is held by that key, and the
    resign signed with an earlier key is spent."""
    out = set()
    for agreement in agreements_.values():
        seat = agreement.by
        if agreement.kind == RESIGN and seat in agreement.signatures and seat in keys \
                and _signed_with(agreement.signatures[seat], keys[seat]):
            out.add(seat)
    return frozenset(out)


def _signed_with(signature: str, key: PublicKey) -> bool:
    """Whether an SSH signature names `key` as its signer (whether it is valid is the agreement's own check)."""
    try:
        return sshsig.decode(signature).key_blob == key.blob()
    except PbemError:
        return False


def ended_by(agreements_: Mapping[str, Agreement], table: Table) -> Agreement | None:
    """The end agreement every required signer signed, if any (the first by id)."""
    done = [a for a in agreements_.values() if a.kind == END and signed_by_all(a, table)]
    return min(done, key=lambda a: a.id) if done else None


def applied(agreement: Agreement, game: Mapping[str, Any]) -> dict[str, Any]:
    """game.yaml's data after an amend or seat agreement takes effect: an amend sets (or, with null, removes)
    the top-level fields it names; a seat puts its key (and name) on its seat."""
    raw = dict(game)
    if agreement.kind == AMEND:
        for key, value in (agreement.content.get("changes") or {}).items():
            if value is None:
                raw.pop(key, None)
            else:
                raw[key] = value
    elif agreement.kind == SEAT:
        c = agreement.content
        key = " ".join(str(c["key"]).split()[:2])  # game.yaml holds the key itself; the comment is for review
        raw["players"] = [{**p, "key": key, **({"name": c["name"]} if "name" in c else {})}
                          if p.get("id") == c["seat"] else p for p in raw["players"]]
    return raw


def key_words(text: str) -> str:
    """A public key as a co-signer checks it before he signs: its fingerprint (`ssh-keygen -l`) and comment."""
    try:
        key = PublicKey.from_line(text)
    except (PbemError, ValueError):
        return "(not a readable public key)"
    parts = text.split(None, 2)
    return key.fingerprint() + (f" {parts[2]!r}" if len(parts) > 2 else " (no comment)")


def describe(agreement: Agreement) -> str:
    """An agreement's terms in words, for status, log and the HTML page."""
    c = agreement.content
    if agreement.kind == START:
        return start_terms(agreement)
    if agreement.kind == AMEND:
        return "game.yaml: " + ", ".join(f"{k} = {v!r}" if v is not None else f"{k} removed"
                                         for k, v in (c.get("changes") or {}).items())
    if agreement.kind == SEAT:
        return f"seat {c.get('seat')} to the new key {key_words(str(c.get('key', '')))} ({c.get('why')})"
    if agreement.kind == RESIGN:
        return f"{agreement.by} resigns"
    if agreement.kind == NMR:
        return f"{c.get('player')} missed the deadline: his part settled by the ruleset's defaults"
    if agreement.kind == END:
        result = c.get("result")
        who_ = f" by {c['player']}" if c.get("player") else ""
        return f"the game ends: {result}{who_}" + (f" ({c['note']})" if c.get("note") else "")
    if agreement.kind == ERRATUM:
        from pbem.protocol import errata

        return errata.of_agreement(agreement).terms()
    if agreement.kind == "upgrade":
        return f"the game's workflow becomes what pbem {c.get('pbem')} writes (the text in {agreement.file})"
    return agreement.kind


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
        out.extend(kind.open_findings(new, table))
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
    out.extend(kind.content_findings(new, table))
    if not new.signatures:
        out.extend(kind.open_findings(new, table))  # else checked with the added signature
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


def start_terms(agreement: Agreement) -> str:
    """A start agreement's terms in words: "fed starts" or "the dice decide who starts"."""
    first = agreement.content.get("first")
    who = f"{first} starts" if first is not None else "the dice decide who starts"
    return who + (", and the order around the table" if agreement.content.get("order") == "roll" else "")
