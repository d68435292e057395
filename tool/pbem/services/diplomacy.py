"""Diplomacy (`dow/1`) from a power's side: seal its orders for the phase, reveal them once every power has sealed,
post global press (its own press file), read the relationships, tell what a resolved phase did (DESIGN §4.7, §7.2).

Each function that changes the game builds the new tree from HEAD's files (never from half-edited working
files), writes the status replay computes, and commits signed through `Workspace.commit`, which judges the
commit exactly as the verifier will: nothing is written when it is refused. Sealing, revealing and press are
legal without holding control (DESIGN §4.7, §2), so each is committed at once; other edits in the working tree
are put back afterwards.

Where the rules judge a player's input, the ruleset does (`verdicts`, `recognise`, `relations_data`); this
module only reads the state at HEAD's firm point and reports. `chronicle` re-plays revealed phases exactly as
replay resolves them (owed players, the phase's press in the order sent, then the phase) to tell what each did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pbem.errors import ILLEGAL, PbemError, check_texts
from pbem.formats import schemas, yamlsafe
from pbem.formats.canonical import dumps as canonical
from pbem.formats.writer import dump_flow, dump_mapping
from pbem.protocol.model import SEALED, Inputs, Status
from pbem.protocol.replay import start_checkpoint
from pbem.protocol.secrets import SECRET
from pbem.rulesets.base import Action, Event, Point
from pbem.services import chance
from pbem.services.workspace import Identity, Workspace
from pbem.verify.gamefiles import ENTRY_LINE, STATUS, Game, in_commit_order
from pbem.protocol.agreements import NMR
from pbem.protocol.openings import gives_input
from pbem.protocol import resealing
from pbem.verify.turns import Verified, effects_of, expected_after, who



def press_file(player: str) -> str:
    """Where a seat posts its press: a file of its own, so seats posting at the same time never touch the same
    path (DESIGN §2, §4.9)."""
    return f"press/{player}.yaml"

ORDERS_KIND = "orders"  # schemas/secret-orders.json: the plaintext is {orders: [...]}
SYMBOL = {"WAR": "1", "HOSTILE": "2", "NEUTRAL": "3", "FRIENDLY": "4", "ALLIED": "5", "LIMBO": "*"}
LEGEND = "1 WAR, 2 HOSTILE, 3 NEUTRAL, 4 FRIENDLY, 5 ALLIED, * LIMBO"


# --- where the game stands ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Seat:
    """HEAD as seen by one player: what is verified there, his seat, the phase open now and its state."""

    head: Verified
    player: str
    when: str  # the phase open now (status.yaml `firm`): press is dated with it, orders answer it
    point: Point
    state: Any  # the state at `when` with the press already sent during it recognised


def _seat(ws: Workspace, me: Identity) -> Seat:
    head = ws.head()
    if head is None or not head.started or head.status is None or head.stop is None:
        raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID)")
    ruleset = head.game.manifest.ruleset
    if not hasattr(ruleset, "recognise"):
        raise PbemError("usage.not-diplomacy", f"this game plays {ruleset.name}, which has no orders, press or "
                        "relationships (those are dow/1 commands)")
    player = who(head.game, me.public)
    if player is None or player not in head.game.manifest.players:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    if head.status.over or head.stop.checkpoint.point is None:
        raise PbemError("game.over", "the game is over", exit_code=ILLEGAL)
    point = head.stop.checkpoint.point
    when = ruleset.format_time(point)
    return Seat(head, player, when, point, current_state(head))


def current_state(head: Verified) -> Any:
    """The state at HEAD's firm point with the press sent during that phase recognised in the order it was sent: what
    players have publicly recognised so far (seed 001), though replay recognises it only when the phase resolves."""
    assert head.stop is not None
    ruleset = head.game.manifest.ruleset
    state, point = head.stop.checkpoint.state, head.stop.checkpoint.point
    if point is None:
        return state
    for message in head.game.inputs.press.get(ruleset.format_time(point), ()):
        state, _refused = ruleset.recognise(state, message.body, message.by)
    return state


def _commit(ws: Workspace, seat: Seat, me: Identity, files: dict[str, bytes], summary: str,
            details: Sequence[str] = ()) -> tuple[Status, Any]:
    """Write the status replay computes into `files` (HEAD's files plus this change), commit signed through
    the judging path, and put back any other edits the player had in his working tree."""
    game = ws.game_of(files)
    stop, status = expected_after(seat.head, game, seat.player)
    files[STATUS] = dump_mapping(status.to_data()).encode()
    head_files, working = ws.head_files(), ws.worktree_files()
    edits = {p: d for p, d in working.items() if p != STATUS and head_files.get(p) != d}
    removed = [p for p in head_files if p != STATUS and p not in working]
    clash = sorted(p for p in (*edits, *removed) if files.get(p) != head_files.get(p))
    if clash:
        raise PbemError("usage.uncommitted", f"you have uncommitted edits to {', '.join(clash)}, which this command "
                        "writes too", hint=f"discard them (git checkout -- {' '.join(clash)}) or commit them first")
    nxt = status.control or "game over"
    if status.pending:
        nxt += f" ({status.pending[0].why})"
    message = f"{seat.player}: {summary}\n\nnext: {nxt}" + "".join(f"\n{line}" for line in details)
    ws.commit(files, me, message)
    if edits or removed:
        ws.write_files(edits)
        for path in removed:
            (ws.root / path).unlink(missing_ok=True)
    return status, stop


# --- orders ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """One order as the rules will judge it: "ok", "invalid" (the engine refuses it: void, no offence) or
    "forbidden" (the relationship states refuse it: void and a public warning)."""

    order: str
    verdict: str
    reason: str | None


@dataclass(frozen=True)
class SealedOrders:
    """What `pbem orders FILE` did."""

    secret: str
    phase: str
    orders: tuple[str, ...]
    verdicts: tuple[Verdict, ...]
    problem: str | None  # why the set as a whole will be void (e.g. orders in the press-only first half)
    status: Status
    replaced: str | None = None  # the set of mine this one replaces (protocol/resealing.py)

    def warnings(self) -> list[str]:
        """One line per order that will not stand, saying why and what follows."""
        out = []
        if self.problem:
            out.append(f"warning: {self.problem} (sealed anyway: these orders will be void)")
        for v in self.verdicts:
            if v.verdict == "forbidden":
                out.append(f"warning: {v.order!r} is forbidden by the relationship states: {v.reason}; it will be "
                           "void and earn a public warning (the second offence puts you into civil disorder)")
            elif v.verdict == "invalid":
                out.append(f"warning: {v.order!r} is not a valid order: {v.reason}; it will be void (the unit "
                           "holds)")
        return out


def read_orders(content: bytes, name: str) -> dict[str, list[str]]:
    """A power's orders from a YAML or JSON file: `{orders: [ORDER, ...]}` (schema pbem/secret/orders/1) or
    just the list; refused with the file's name and line otherwise."""
    from pbem.services.order_check import read_with_lines

    return read_with_lines(content, name)[0]


def judge_orders(ruleset: Any, state: Any, point: Point, player: str, value: Mapping[str, Any]
                 ) -> tuple[str | None, tuple[Verdict, ...]]:
    """(why the whole set will be void, or None; each order's verdict) by the ruleset's own judgement."""
    action = Action(point, player, None, dict(value))
    problem = ruleset.legal(state, action)
    verdicts = tuple(Verdict(order, verdict, reason)
                     for order, _normal, verdict, reason in ruleset.verdicts(state, action))
    return problem, verdicts


def seal_orders(ws: Workspace, me: Identity, content: bytes, name: str, anyway: bool = False,
                draw: bool = False) -> SealedOrders:
    """`pbem orders FILE`: seal my power's orders for the phase open now (secret kind `orders`, `step` = the
    phase) and commit; every order judged first (services.order_check), sealed as given with `anyway` (the
    rules void it; seed 001: "a one time warning for an honest mistake"); `draw`: a sealed draw vote inside."""
    seat = _seat(ws, me)
    head, player, when = seat.head, seat.player, seat.when
    ruleset = head.game.manifest.ruleset
    already = head.game.inputs.sealed.get((when, player))
    assert head.status is not None
    if already is not None and not resealing.replaceable(ruleset, head.status.pending, when, player):
        raise PbemError("orders.already-sealed", f"{player} sealed orders for {when} already ({already.secret}) "
                        "and every power has sealed since: the sets stand as sealed (DESIGN §4.7)",
                        exit_code=ILLEGAL)
    owed = already is not None or any(b.player == player and b.kind == SEALED and b.at == when
                                      for b in head.status.pending)
    if not owed:
        owing = ruleset.owing_players(head.stop.checkpoint.state, seat.point)  # type: ignore[union-attr]
        why = (f"{player} owes no orders at {when}; powers owing: {', '.join(owing) or 'none'}"
               if player not in owing else f"{player} cannot seal for {when} now ({head.status.pending[0].why})")
        raise PbemError("orders.not-owed", why, exit_code=ILLEGAL)
    from pbem.services.order_check import check_orders, read_with_lines

    value, line_of = read_with_lines(content, name)
    if draw:
        value["draw"] = True
    problem, verdicts = judge_orders(ruleset, seat.state, seat.point, player, value)
    for v in verdicts:  # DATC 6.B.9: never seal an order the engine would carry out with another meaning
        if v.verdict == "rewritten":
            raise PbemError("rules.order-rewritten", f"{name}: {v.order!r} refused: {v.reason}", exit_code=ILLEGAL)
    if not anyway:
        check_orders(name, line_of, problem, verdicts)
    files = ws.head_files()
    sid = chance.seal_secret(files, ws.game_of(files), me, player, ORDERS_KIND, canonical(value), when,
                             f"{player}'s orders for {when}")
    path = f"secrets/{sid}.yaml"
    raw = yamlsafe.load(files[path], path).data
    from pbem.services.dow_openings import dealt  # shared among the others, to open it without me (§4.7)

    replaces = {resealing.REPLACES: already.secret} if already is not None else {}  # both stay on record
    files[path] = dump_mapping({**_with_step(raw, when), **replaces, **dealt(raw, head.game, player, me)}).encode()
    n = len(value["orders"])
    status, _stop = _commit(ws, seat, me, files, f"orders for {when} sealed ({sid}, {n} order{'s' * (n != 1)}"
                            + (f", replacing {already.secret})" if already is not None else ")"))
    return SealedOrders(sid, when, tuple(value["orders"]), verdicts, problem, status,
                        already.secret if already is not None else None)


def _with_step(raw: Mapping[str, Any], step: str) -> dict[str, Any]:
    """The secret with `step` (the sealed step it answers) right after `end`, for a file that reads in order."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        out[key] = value
        if key == "end":
            out["step"] = step
    return out


@dataclass(frozen=True)
class RevealedOrders:
    """What `pbem orders --reveal` did, and the phases that resolved because of it."""

    secret: str
    phase: str
    orders: tuple[str, ...]
    status: Status
    resolved: tuple["PhaseReport", ...]


def reveal_orders(ws: Workspace, me: Identity) -> RevealedOrders:
    """`pbem orders --reveal`: once every power owing orders has sealed, add my key to my sealed orders and
    commit; the last reveal resolves the phase (DESIGN §4.7)."""
    seat = _seat(ws, me)
    head, player, when = seat.head, seat.player, seat.when
    assert head.status is not None and head.stop is not None
    mine = head.game.inputs.sealed.get((when, player))
    if mine is None:
        raise PbemError("orders.not-sealed", f"{player} has sealed no orders for {when}: seal them first "
                        "(pbem orders FILE)", exit_code=ILLEGAL)
    if mine.revealed:
        raise PbemError("orders.already-revealed", f"{player}'s orders for {when} ({mine.secret}) are revealed "
                        "already", exit_code=ILLEGAL)
    owed = any(b.player == player and b.kind == SECRET and b.at == when for b in head.status.pending)
    if not owed:
        waiting = [b.player for b in head.status.pending if b.kind == SEALED and b.at == when]
        raise PbemError("orders.not-yet", f"not every power has sealed for {when} (waiting for "
                        f"{', '.join(waiting) or 'nobody'}): orders are revealed once all have sealed (DESIGN §4.7)",
                        exit_code=ILLEGAL)
    files = ws.head_files()
    value = chance.reveal_secret(files, ws.game_of(files), me, player, mine.secret)
    game = in_commit_order(head.game, ws.game_of(files))  # press in the order it was sent (DESIGN §7.2)
    stop = expected_after(head, game, player)[0]
    until = None if stop.over else stop.checkpoint.point
    reports, _ = chronicle(game, head.stop.checkpoint.point, head.stop.checkpoint.state, until, head.gone_at)
    details = [line for r in reports for line in r.headline()]
    status, _stop = _commit(ws, seat, me, files, f"orders for {when} revealed ({mine.secret})", details)
    return RevealedOrders(mine.secret, when, tuple(value.get("orders", ())), status, tuple(reports))


# --- press -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Posted:
    """What a press command did: the message, the changes it made to the recognised matrix, the new status."""

    message: Mapping[str, Any]
    changes: tuple[tuple[str, str, str, str], ...]
    status: Status


def post(ws: Workspace, me: Identity, body: Mapping[str, Any]) -> Posted:
    """Append one message by me to my own press file (press/<me>.yaml), dated with the phase open now, and commit
    it signed at once (press is legal without control, DESIGN §2). A message the rules refuse (`press.no-proposal`,
    `press.forced-state`, ...) is refused here with its rule id and nothing is written."""
    check_texts(body, "the message")
    seat = _seat(ws, me)
    ruleset = seat.head.game.manifest.ruleset
    message = {"by": seat.player, "at": seat.when, **body}
    path = press_file(seat.player)
    schemas.validate(getattr(ruleset, "press_schema", "pbem/press/message/1"), message, file=path)
    after, refusal = ruleset.recognise(seat.state, message, seat.player)
    if refusal is not None:
        raise PbemError(getattr(refusal, "rule", "press.refused"), str(refusal), file=path, exit_code=ILLEGAL,
                        hint="nothing was posted")
    changes = ruleset.relations(seat.state).recognised.changes_to(ruleset.relations(after).recognised)
    files = ws.head_files()
    files[path] = _appended(files.get(path), message, path)
    status, _stop = _commit(ws, seat, me, files, f"press: {describe_message(message)}")
    return Posted(message, tuple(changes), status)


def _appended(old: bytes | None, message: Mapping[str, Any], path: str) -> bytes:
    """A press file with one more message, one message per line (DESIGN §2: append-only): the line is added to
    the file as it is, so the verifier reads only that line."""
    line = f"  - {dump_flow(dict(message))}\n"
    if old is None:
        return f"messages:\n{line}".encode()
    rows = old.decode("utf-8", "replace").split("\n")
    if rows[0] == "messages:" and rows[-1] == "" and all(ENTRY_LINE.match(r) for r in rows[1:-1]):
        return old + line.encode()
    messages = list((yamlsafe.load(old, path).data or {}).get("messages", []))
    lines = ["messages:"] + [f"  - {dump_flow(m)}" for m in messages]
    return ("\n".join(lines) + "\n").encode() + line.encode()


def describe_message(message: Mapping[str, Any]) -> str:
    """One press message in words: "france declares WAR on germany"."""
    by = message.get("by")
    if "say" in message:
        return f"{by} says {json.dumps(message['say'], ensure_ascii=False)}"
    if "propose" in message:
        return f"{by} proposes {message['propose']['state']} to {message['propose']['to']}"
    if "accept" in message:
        return f"{by} accepts {message['accept']['state']} from {message['accept']['from']}"
    if "declare" in message:
        return f"{by} declares {message['declare']['state']} on {message['declare']['to']}"
    if "reaffirm" in message:
        return f"{by} reaffirms " + ", ".join(f"{s} with {p}" for p, s in sorted(message["reaffirm"].items()))
    if "gift" in message:
        return f"{by} gifts {message['gift']['province']} to {message['gift']['to']}"
    if "warn" in message:
        offence = message.get("offence") or {}
        cited = (f" for its public message {offence['press']}" if "press" in offence else
                 f" for {offence.get('order')!r} at {offence.get('phase')}" if "order" in offence else "")
        return f"{by} (director) warns {message['warn']}{cited}: {message.get('reason', '')}"
    if "lift" in message:
        return f"{by} (director) lifts a warning of {message['lift']}"
    if "whisper" in message:
        return f"{by} whispers {message['whisper']['id']} to {', '.join(message['whisper']['to'])} (sealed)"
    if "disclose" in message:
        return (f"{by} discloses whisper {message['disclose']['id']}: "
                f"{json.dumps(message['disclose']['text'], ensure_ascii=False)}")
    if "open" in message:
        return f"{by} publishes its share of the withheld set {message['open']['secret']}"
    if "ready" in message:
        return f"{by} is ready: done with the press-only first half"
    if "draw" in message:
        return f"{by} {'votes for a draw' if message['draw'] else 'withdraws its draw vote'}"
    return f"{by}: {dict(message)}"


def changes_text(changes: Sequence[Sequence[str]]) -> str:
    """[a, b, before, after] pairs as "england-france NEUTRAL -> LIMBO"."""
    return ", ".join(f"{a}-{b} {before} -> {after}" for a, b, before, after in changes)


# --- relations -----------------------------------------------------------------------------------------------------

def relations(ws: Workspace, at: str | None = None) -> dict[str, Any]:
    """The matrix in force and the changes recognised but not yet realised (`relations_data` of the ruleset),
    at the phase open now with its press so far, or at the start of phase `at` (a phase already resolved)."""
    head = ws.head()
    if head is None or not head.started or head.stop is None:
        raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID)")
    ruleset = head.game.manifest.ruleset
    if not hasattr(ruleset, "relations_data"):
        raise PbemError("usage.not-diplomacy", f"this game plays {ruleset.name}, which has no relationships")
    if at is None:
        point, state = head.stop.checkpoint.point, current_state(head)
    else:
        try:
            point = ruleset.parse_time(at)
        except ValueError as err:
            raise PbemError("usage.bad-phase", f"--at {at!r}: {err}") from None
        point, state = _state_at(head, point)
    data = ruleset.relations_data(state)
    data["phase"] = ruleset.format_time(point) if point is not None else None
    data["when"] = "at the start of" if at is not None else "now, at"
    return data


def _state_at(head: Verified, target: Point) -> tuple[Point, Any]:
    """The state at the start of `target` (before its press is recognised), replayed from the game's start."""
    game = head.game
    manifest = game.manifest
    start = start_checkpoint(manifest.ruleset, manifest.setup, manifest.players)
    firm = head.stop.checkpoint.point if head.stop is not None else None
    if firm is not None and target > firm:
        raise PbemError("usage.bad-phase", f"{manifest.ruleset.format_time(target)} has not begun (the game is at "
                        f"{manifest.ruleset.format_time(firm)})")
    if target < start.point:
        raise PbemError("usage.bad-phase", f"the game starts at {manifest.ruleset.format_time(start.point)}")
    _, (point, state) = chronicle(game, start.point, start.state, target, head.gone_at, fresh=True)
    return point, state


def relations_text(data: Mapping[str, Any]) -> str:
    """The matrix in force as a table of symbols, then what is pending, proposed, warned."""
    in_force = data["in_force"]
    powers = sorted(in_force)
    width = max(len(p) for p in powers)
    lines = [f"relationships in force {data.get('when', 'at')} {data['phase']} (orders are judged by these; "
             f"{LEGEND}):", " " * (width + 2) + " ".join(f"{p[:3]:^3}" for p in powers)]
    for p in powers:
        cells = [f"{'-' if q == p else SYMBOL.get(in_force[p][q], '?'):^3}" for q in powers]
        lines.append(f"  {p:<{width}}" + " ".join(cells).rstrip())
    pending = data.get("pending") or []
    lines.append("pending (recognised, not yet in force: realised at the start of the next Spring or Fall retreats, "
                 "or for the second half of Spring 1901):")
    lines.extend(f"  {a}-{b}: {before} -> {after}" for a, b, before, after in pending)
    if not pending:
        lines.append("  none")
    for proposal in data.get("proposals") or []:
        lines.append(f"proposal standing: {proposal['by']} -> {proposal['to']}: {proposal['state']} "
                     f"(`pbem accept {proposal['by']} {proposal['state']}` as {proposal['to']})")
    for gift in data.get("gifts") or []:
        lines.append(f"gift recognised: {gift['by']} gives {gift['province']} to {gift['to']}")
    offences = data.get("offences") or {}
    if offences:
        lines.append("warnings: " + ", ".join(f"{p} {n}" for p, n in sorted(offences.items())))
    if data.get("civil_disorder"):
        lines.append("civil disorder: " + ", ".join(data["civil_disorder"]))
    if data.get("entering_civil_disorder"):
        lines.append("civil disorder from the next phase (second offence): "
                     + ", ".join(data["entering_civil_disorder"]))
    from pbem.services.seat_record import former_lines  # a seat taken over: the old player's record apart

    lines.extend(former_lines(data))
    return "\n".join(lines) + "\n"


# --- what resolved phases did -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PressLine:
    """One message as recognised when its phase resolved."""

    message: Mapping[str, Any]
    refusal: str | None
    changes: tuple[tuple[str, str, str, str], ...]


@dataclass(frozen=True)
class PhaseReport:
    """One resolved phase: who owed and sealed, the orders revealed, the press recognised, the events."""

    phase: str
    sealed_by: tuple[str, ...]
    orders: Mapping[str, tuple[str, ...]]
    press: tuple[PressLine, ...]
    events: tuple[Event, ...] = field(default=())
    units: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()  # (power, units gone, units new)
    outcome: tuple[str, tuple[str, ...]] | None = None  # the game ended in this phase: (victory|draw, powers)
    votes: tuple[str, ...] = ()  # the powers whose sealed orders held a draw vote (opened with them)

    def _kinds(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    def headline(self) -> list[str]:
        """A short summary for a commit message."""
        counts = {k: len(self._kinds(k)) for k in ("warning", "void", "dislodged", "centres")}
        parts = [f"{n} {k}" for k, n in counts.items() if n]
        realised = self._kinds("realised")
        if realised:
            parts.append("relationships realised")
        return [f"{self.phase} resolved" + (f": {', '.join(parts)}" if parts else "")]

    def lines(self, press: bool = True) -> list[str]:
        """The phase told in full, for `pbem results` and the demo (`press=False`: without its press)."""
        idle = ("press only: it ended when every power was ready" if self.phase == "S1901P"
                else "nobody owed orders (resolved by itself)")
        out = [f"{self.phase}: " + (f"sealed by {', '.join(self.sealed_by)}" if self.sealed_by else idle)]
        for line in self.press if press else ():
            text = f"  press    {describe_message(line.message)}"
            if line.refusal:
                text += f" -- REFUSED: {line.refusal}"
            elif line.changes:
                text += f" -> recognised: {changes_text(line.changes)}"
            out.append(text)
        for power, given in self.orders.items():
            if given:
                out.append(f"  orders   {power:<8} {'; '.join(given)}")
        if self.votes:
            out.append(f"  draw vote (sealed, opened with the orders): {', '.join(self.votes)}")
        for event in self.events:
            out.extend(_event_lines(event))
        label = "retreats" if self.phase.endswith("R") else "adjusted"
        for power, gone, new in self.units:
            out.append(f"  {label:<8} {power}: " + ", ".join([f"- {u}" for u in gone] + [f"+ {u}" for u in new]))
        if self.outcome:
            out.append(f"  GAME OVER {self.outcome[0]}: {', '.join(self.outcome[1])}")
        return out


def _event_lines(event: Event) -> list[str]:
    data = event.data
    if event.kind == "adjudicated":
        bounced = sorted(u for u, codes in data.get("results", {}).items() if "bounce" in codes)
        cut = sorted(u for u, codes in data.get("results", {}).items() if "cut" in codes)
        parts = ([f"bounced {', '.join(bounced)}"] if bounced else []) + ([f"support cut {', '.join(cut)}"]
                                                                          if cut else [])
        return [f"  result   {'; '.join(parts)}"] if parts else []
    if event.kind == "warning":
        return [f"  WARNING  {event.by}: {data['order']!r} void: {data['reason']} (offence {data['offences']})"]
    if event.kind == "civil_disorder":
        return [f"  CIVIL DISORDER {event.by} (offence {data['offences']})"]
    if event.kind == "void":
        return [f"  void     {event.by}: {data['order']!r}: {data['reason']}"]
    if event.kind == "withheld":
        return [f"  WITHHELD {event.by}: its sealed orders opened by the others' shares stand (a missed phase)"]
    if event.kind == "missed":
        return [f"  missed   {event.by} gave no orders: the engine's defaults apply"]
    if event.kind == "dislodged":
        return [f"  dislodged {data['owner']}'s {data['unit']} by {event.by or 'a unit'}; may retreat to "
                f"{', '.join(data['retreats']) or 'nowhere (disbanded)'}"]
    if event.kind == "centres":
        return [f"  centre   {data['centre']}: {data['from'] or 'neutral'} -> {data['to'] or 'neutral'}"]
    if event.kind == "realised":
        return [f"  realised {changes_text(data['changes'])}"]
    if event.kind in ("gift", "gift_void"):
        why = f" ({data['reason']})" if event.kind == "gift_void" else ""
        return [f"  {event.kind:<8} {event.by} -> {data['to']}: {data['province']}{why}"]
    if event.kind in ("victory", "draw"):
        return [f"  {event.kind.upper()} {event.by or ', '.join(data.get('powers', []))}"]
    return []


def chronicle(game: Game, point: Point | None, state: Any, until: Point | None,
              gone_at: Sequence[tuple[str, str, Point]] = (), fresh: bool = False
              ) -> tuple[list[PhaseReport], tuple[Point | None, Any]]:
    """Resolve phases from (`point`, `state`) up to `until` (exclusive; None: as far as the revealed orders go)
    the way replay does (protocol.replay: the powers owing at the phase, their revealed orders, the press sent
    during it recognised in the order of the commits that added it, then the phase; `gone_at` as replay has them,
    `fresh`: `state` carries none at `point`), and tell what each did. Stops at a phase not all revealed."""
    ruleset = game.manifest.ruleset
    inputs: Inputs = game.inputs
    reports: list[PhaseReport] = []
    due = sorted(effects_of(ruleset, gone_at, None if fresh else point), key=lambda d: d[0])
    excused = {(p, at) for kind, p, at in gone_at if kind == NMR}
    while point is not None and (until is None or point < until) and not ruleset.is_over(state):
        while due and due[0][0] <= point:
            state = due.pop(0)[1](state)
        when = ruleset.format_time(point)
        owing = tuple(p for p in (ruleset.owing_players(state, point) if ruleset.sealed(point) else ())
                      if gives_input(inputs, when, p, (p, point) in excused))
        revealed = {p: inputs.sealed[(when, p)] for p in owing if (when, p) in inputs.sealed}
        if len(revealed) < len(owing) or not all(s.revealed for s in revealed.values()):
            break
        press = []
        for message in inputs.press.get(when, ()):
            before = state
            state, refusal = ruleset.recognise(state, message.body, message.by)
            changes = ruleset.relations(before).recognised.changes_to(ruleset.relations(state).recognised)
            press.append(PressLine(message.body, str(refusal) if refusal else None, tuple(changes)))
        orders = {p: tuple(revealed[p].value.get("orders", ())) for p in owing}
        actions = [Action(point, p, None, revealed[p].value, "opened" if revealed[p].withheld else "sealed")
                   for p in owing]
        before = state
        state, events = ruleset.apply(state, point, actions)
        units = _unit_changes(ruleset.position(before), ruleset.position(state)) if point[2] in (2, 3) else ()
        outcome = getattr(state, "outcome", None) if ruleset.is_over(state) else None
        votes = tuple(p for p in owing if revealed[p].value.get("draw") is True)
        reports.append(PhaseReport(when, owing, orders, tuple(press), tuple(events), units, outcome, votes))
        point = ruleset.next_step(game.manifest.setup, point)
    return reports, (point, state)


def _unit_changes(before: Mapping[str, Any], after: Mapping[str, Any]
                  ) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """Per power, the units gone (dislodged ones included) and the new ones: retreats, builds, disbands."""
    out = []
    for power in sorted(before["units"]):
        old = set(before["units"][power]) | set(before["dislodged"].get(power, {}))
        new = set(after["units"].get(power, ())) | set(after["dislodged"].get(power, {}))
        if old != new:
            out.append((power, tuple(sorted(old - new)), tuple(sorted(new - old))))
    return tuple(out)


def results(ws: Workspace, phase: str | None = None) -> list[PhaseReport]:
    """`pbem results [PHASE]`: what every resolved phase did (or one of them), re-adjudicated from the revealed
    orders and the press."""
    head = ws.head()
    if head is None or not head.started or head.stop is None:
        raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID)")
    game = head.game
    ruleset = game.manifest.ruleset
    if not hasattr(ruleset, "recognise"):
        raise PbemError("usage.not-diplomacy", f"this game plays {ruleset.name}: `pbem log` tells its story")
    wanted = None
    if phase is not None:
        try:
            wanted = ruleset.format_time(ruleset.parse_time(phase))
        except ValueError as err:
            raise PbemError("usage.bad-phase", f"{phase!r}: {err}") from None
    from pbem.services.dow_log import told

    reports = told(head)
    if wanted is not None:
        reports = [r for r in reports if r.phase == wanted]
        if not reports:
            raise PbemError("usage.bad-phase", f"{wanted} has not been resolved (the game is at "
                            f"{head.status.firm if head.status else '?'})")
    return reports

