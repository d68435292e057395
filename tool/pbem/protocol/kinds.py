"""The agreement kinds (DESIGN §4.8): one row per kind holding all it does, looked up by name (`KINDS`).

A row says who must sign an agreement of its kind (`signers`), what its content must say (`content`), when it may
be proposed or signed (`open`), whom it is about (`subject`), its terms in words (`describe`) and what it does to
game.yaml once every signer has signed (`apply`), and how `pbem agree KIND` proposes one (`options`, `draft`).
Everything else here is a function over the table: whether an agreement is signed by all, who resigned, which end
agreement ended the game; the rules a commit's changes to agreements/ keep are protocol.agreement_rules. Adding a
kind is adding its row (and its content's shape to schemas/agreement.json, which the reader checks first). The
document itself and its signing are protocol.agreements. Pure: no git, files or printing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pbem.crypto import sshsig
from pbem.crypto.keys import PublicKey
from pbem.errors import Finding, PbemError
from pbem.formats import times, yamlsafe
from pbem.protocol import erratum as errata
from pbem.protocol import upgrade
from pbem.protocol.agreements import Agreement
from pbem.rulesets.base import Point

START = "start"


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
class Option:
    """One option of `pbem agree KIND`, written `--name VALUE` (`--pause-until` for `pause_until`) or
    `name=VALUE`, read into the values the kind's `draft` gets under `name`. `form`: "text" (one value),
    "flag" (no value: true), "many" (repeatable: a list), "key" (a public key: its file, or its line)."""

    name: str
    help: str
    form: str = "text"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


NOTE = Option("note", "why, in words")  # every kind proposed with `pbem agree` takes it into its content


def _nobody(_agreement: Agreement) -> str | None:
    return None


def _as_is(_agreement: Agreement, game: Mapping[str, Any]) -> dict[str, Any]:
    return dict(game)


@dataclass(frozen=True)
class Kind:
    """One kind of agreement, all it does (module docstring). `signers`, `content` and `open` judge one
    agreement being proposed or signed (`content`: when it is proposed; `open`: with each signature); `apply`
    gives game.yaml's data after the agreement took effect (as it was, for a kind that does not change it).
    `pbem agree KIND` takes the row's `options` (and NOTE), and `draft` turns their values into the content and
    the commit's summary (None: not proposed by `pbem agree`); `needs` names what the proposer's own pbem adds to
    the values (its version, the workflow it writes); `from_tree`: the content is the player's edit of the
    working tree (an erratum: `pbem erratum propose`). `writes`: the files the commit adding the last signature
    writes as agreed (path -> text), and the words for its message (game.yaml's `apply` and the report's
    correction are written apart: the judge computes them)."""

    name: str
    signers: Callable[[Agreement, Table], tuple[str, ...]]
    content: Callable[[Agreement, Table], list[Finding]]
    open: Callable[[Agreement, Table], list[Finding]]
    describe: Callable[[Agreement], str]
    subject: Callable[[Agreement], str | None] = _nobody
    apply: Callable[[Agreement, Mapping[str, Any]], dict[str, Any]] = _as_is
    help: str = ""
    options: tuple[Option, ...] = ()
    draft: Callable[[Mapping[str, Any]], tuple[dict[str, Any], str]] | None = None
    needs: tuple[str, ...] = ()
    from_tree: bool = False
    writes: Callable[[Agreement], tuple[dict[str, str], str]] | None = None
    signed_words: str = ""  # what `pbem sign` adds once the last signer has signed


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


def start_terms(agreement: Agreement) -> str:
    """A start agreement's terms in words: "fed starts" or "the dice decide who starts"."""
    first = agreement.content.get("first")
    who = f"{first} starts" if first is not None else "the dice decide who starts"
    return who + (", and the order around the table" if agreement.content.get("order") == "roll" else "")


# --- the ways out of a stalled game (DESIGN §4.8): amend, seat, resign, nmr, end --------------------------------

AMEND, SEAT, RESIGN, NMR, END, ERRATUM = "amend", "seat", "resign", "nmr", "end", "erratum"
UPGRADE = upgrade.UPGRADE
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
    who concedes or forfeits; None for the others (the kind's row says)."""
    kind = KINDS.get(agreement.kind)
    return kind.subject(agreement) if kind is not None else None


def _proposer(agreement: Agreement) -> str | None:
    return agreement.by


def _seat_given(agreement: Agreement) -> str | None:
    return agreement.content.get("seat")


def _player_named(agreement: Agreement) -> str | None:
    return agreement.content.get("player")


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
    player (one who resigned has no say in the game any more): protocol.erratum.entry_findings."""
    out = []
    if agreement.by not in table.active:
        why = "resigned" if agreement.by in table.resigned else "holds no seat"
        out.append(_finding("agreement.not-a-signer", agreement, f"erratum {agreement.id}: {agreement.by} {why}; "
                            f"only active players ({', '.join(table.active)}) propose and sign errata"))
    return out + errata.entry_findings(table.seats, errata.of_agreement(agreement), table.firm)


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
    """game.yaml's data after an agreement takes effect (its kind's `apply`): an amend sets (or, with null,
    removes) the top-level fields it names; a seat puts its key (and name) on its seat; the others leave it."""
    kind = KINDS.get(agreement.kind)
    return kind.apply(agreement, game) if kind is not None else dict(game)


def _amended(agreement: Agreement, game: Mapping[str, Any]) -> dict[str, Any]:
    raw = dict(game)
    for key, value in (agreement.content.get("changes") or {}).items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    return raw


def _seat_given_to(agreement: Agreement, game: Mapping[str, Any]) -> dict[str, Any]:
    raw = dict(game)
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
    """An agreement's terms in words, for status, log and the HTML page (its kind's `describe`)."""
    kind = KINDS.get(agreement.kind)
    return kind.describe(agreement) if kind is not None else agreement.kind


def _amend_terms(agreement: Agreement) -> str:
    return "game.yaml: " + ", ".join(f"{k} = {v!r}" if v is not None else f"{k} removed"
                                     for k, v in (agreement.content.get("changes") or {}).items())


def _seat_terms(agreement: Agreement) -> str:
    c = agreement.content
    return f"seat {c.get('seat')} to the new key {key_words(str(c.get('key', '')))} ({c.get('why')})"


def _resign_terms(agreement: Agreement) -> str:
    return f"{agreement.by} resigns"


def _nmr_terms(agreement: Agreement) -> str:
    return f"{agreement.content.get('player')} missed the deadline: his part settled by the ruleset's defaults"


def _end_terms(agreement: Agreement) -> str:
    c = agreement.content
    who_ = f" by {c['player']}" if c.get("player") else ""
    return f"the game ends: {c.get('result')}{who_}" + (f" ({c['note']})" if c.get("note") else "")


def _erratum_terms(agreement: Agreement) -> str:
    return errata.of_agreement(agreement).terms()


# --- upgrade (DESIGN §4.8, §9 revised; protocol.upgrade): the gate a running game repairs ----------------------

def _upgrade_content(agreement: Agreement, table: Table) -> list[Finding]:
    """It names a pbem version and holds the whole workflow that installs it; never older than the pbem that
    made the game, never one with a known hole in its gate (upgrade.KNOWN_HOLES)."""
    version, text = agreement.content.get("pbem"), agreement.content.get("workflow")
    wanted = upgrade.version_key(str(version))
    if wanted is None or not isinstance(text, str):
        return [_finding("agreement.malformed", agreement, f"upgrade {agreement.id} names a pbem version "
                         "(pbem: X.Y.Z) and the whole new workflow (workflow: its text)")]
    if not re.search(rf"\bpbem=={re.escape(str(version))}[\s\"]", text):
        return [_finding("agreement.malformed", agreement, f"upgrade {agreement.id}: its workflow does not install "
                         f"pbem=={version}, the version it names", hint="pbem agree upgrade writes both")]
    made_by = upgrade.version_key(str((table.game or {}).get("pbem", "")))
    if made_by is not None and wanted < made_by:
        return [_finding("agreement.downgrade", agreement, f"upgrade {agreement.id} goes back to pbem {version}, "
                         f"older than pbem {(table.game or {}).get('pbem')} that made this game")]
    if str(version) in upgrade.KNOWN_HOLES:
        return [_finding("agreement.known-hole", agreement, f"upgrade {agreement.id}: pbem {version} has a known "
                         f"hole in its gate ({upgrade.KNOWN_HOLES[str(version)]}); upgrade to a version that fixes it")]
    return []


def _upgrade_terms(agreement: Agreement) -> str:
    return f"the game's workflow becomes what pbem {agreement.content.get('pbem')} writes (the text in " \
           f"{agreement.file})"


# --- what `pbem agree KIND` writes: the content from the options' values ----------------------------------------

def _usage(text: str) -> PbemError:
    return PbemError("usage.agree", text)


def _amend_draft(values: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    changes = dict(values.get("changes") or {})
    if values.get("deadline"):
        changes["deadline"] = values["deadline"]
    if values.get("pause_until"):
        changes["paused_until"] = values["pause_until"]
    if values.get("resume"):
        changes["paused_until"] = None
    for item in values.get("set") or ():
        k, eq, v = item.partition("=")
        if not eq:
            raise _usage(f"--set {item!r}: write KEY=VALUE")
        changes[k.strip()] = yamlsafe.load(v.encode(), "--set").data
    for k in values.get("unset") or ():
        changes[k] = None
    if not changes:
        raise _usage("an amend changes something: --deadline, --pause-until, --resume, --set KEY=VALUE or --unset KEY")
    content = {"changes": changes}
    return content, _amend_terms(Agreement({"id": "x", "kind": AMEND, "by": "x", "content": content}, ""))


def _seat_draft(values: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    seat, key, why, name = values.get("seat"), values.get("new_key"), values.get("why"), values.get("name")
    if not seat or not key or why not in ("lost-key", "replacement"):
        raise _usage("a seat agreement names the seat (--seat ID), the new public key (--new-key FILE or "
                     "'ssh-ed25519 AAAA…') and why (--why lost-key|replacement)")
    return {"seat": seat, "key": key, "why": why, **({"name": name} if name else {})}, \
        f"seat {seat} to a new key ({why})"


def _resign_draft(_values: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    return {}, "resigns"


def _nmr_draft(values: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    player = values.get("player")
    if not player:
        raise _usage("an nmr names the absent player: --player ID")
    return {"player": player}, f"{player} missed the deadline"


def _end_draft(values: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    result, player = values.get("result"), values.get("player")
    if result not in RESULTS:
        raise _usage(f"an end states its result: --result {'|'.join(RESULTS)}")
    return {"result": result, **({"player": player} if player else {})}, \
        f"the game ends: {result}" + (f" ({player})" if player else "")


def _upgrade_draft(values: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The gate the proposer's pbem writes (`needs`: its version, its workflow, pinned by --index-url if given)."""
    return {"pbem": values["pbem"], "workflow": values["workflow"]}, f"the workflow of pbem {values['pbem']}"


# --- the table -------------------------------------------------------------------------------------------------

KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind(START, _every_seat, _start_content, _start_open, start_terms,
         help="consent to start over the final game.yaml (pbem start)",
         signed_words="(start the game with `pbem start`, as proposed)"),
    Kind(AMEND, _active, _amend_content, _open, _amend_terms, apply=_amended,
         help="change game.yaml's title, rules, deadline or pause", draft=_amend_draft, options=(
             Option("deadline", "the new deadline, e.g. 72h"), Option("pause_until", "pause until YYYY-MM-DD"),
             Option("resume", "end a pause", "flag"), Option("set", "KEY=VALUE of game.yaml (VALUE as YAML)", "many"),
             Option("unset", "remove KEY from game.yaml", "many"))),
    Kind(SEAT, _others, _seat_content, _seat_open, _seat_terms, subject=_seat_given, apply=_seat_given_to,
         help="give a seat to a new key: a lost key, or a replacement player", draft=_seat_draft, options=(
             Option("seat", "the seat given to a new key"), Option("new_key", "the new public key (file or line)",
                                                                    "key"),
             Option("why", "lost-key or replacement"), Option("name", "the new player's name"))),
    Kind(RESIGN, _himself, _resign_content, _open, _resign_terms, subject=_proposer, draft=_resign_draft,
         help="leave the game, in effect at once (pbem resign)"),
    Kind(NMR, _others, _nmr_content, _nmr_open, _nmr_terms, subject=_player_named, draft=_nmr_draft,
         help="a player missed the deadline: his part is settled by the ruleset's defaults",
         options=(Option("player", "the absent player"),)),
    Kind(END, _end_signers, _end_content, _open, _end_terms, subject=_player_named, draft=_end_draft,
         help="the game ends: a draw, a concession or a forfeit", options=(
             Option("result", "draw, concession or forfeit"), Option("player", "who concedes or forfeits"))),
    Kind(ERRATUM, _active, _erratum_content, _open, _erratum_terms, from_tree=True,
         signed_words="(in effect: the report is corrected, and replay restarted from the corrected step)",
         help="correct the firm report: your edit of the report files (as pbem erratum propose)",
         options=(Option("reason", "what was wrong"),)),
    Kind(UPGRADE, _active, _upgrade_content, _open, _upgrade_terms, draft=_upgrade_draft, needs=("pbem", "workflow"),
         writes=upgrade.effect, help="the game's workflow becomes the one this pbem writes",
         options=(Option("index_url", "pin the new gate by hash, read from this package index"),)),
)}


def proposable() -> list[Kind]:
    """The kinds `pbem agree KIND` proposes, in the table's order."""
    return [kind for kind in KINDS.values() if kind.draft is not None or kind.from_tree]


def read_options(kind: Kind, args: Sequence[str]) -> dict[str, Any]:
    """The values of `pbem agree KIND ARGS`: `--name VALUE`, `--name=VALUE` or `name=VALUE` of the kind's options
    (and NOTE); a flag takes no value. Anything else is a usage error naming what the kind takes."""
    options = (*kind.options, NOTE)
    by_flag = {o.flag: o for o in options}
    takes = ", ".join(o.flag for o in options)
    values: dict[str, Any] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg.startswith("--"):
            flag, eq, value = arg.partition("=")
            option = by_flag.get(flag)
            if option is not None and option.form != "flag" and not eq:
                if not rest:
                    raise _usage(f"{flag} needs a value ({kind.name} takes {takes})")
                value = rest.pop(0)
        else:
            name, eq, value = arg.partition("=")
            option = by_flag.get("--" + name.replace("_", "-")) if eq else None
        if option is None:
            raise _usage(f"{arg!r}: no option of {kind.name} (it takes {takes}, as --OPTION VALUE or OPTION=VALUE)")
        if option.form == "flag":
            values[option.name] = value.lower() not in ("false", "no", "0") if eq else True
        elif option.form == "many":
            values.setdefault(option.name, []).append(value)
        else:
            values[option.name] = value
    return values
