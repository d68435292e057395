"""Orders from a power's side (`pbem orders`): every order judged before it is sealed (docs/dow.md "Checked before
they count"), the set sealed for the phase open now with shares for the other powers, and revealed once every
power has sealed; the last reveal resolves the phase (DESIGN §4.7). Where the rules judge an order, the ruleset
does (`orders.verdicts`); this module only reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pbem.errors import ILLEGAL, PbemError
from pbem.formats import schemas, yamlsafe
from pbem.formats.canonical import dumps as canonical
from pbem.formats.writer import dump_mapping
from pbem.protocol import resealing
from pbem.protocol.model import SEALED, Status
from pbem.protocol.secrets import SECRET
from pbem.rulesets.base import Action, Point, Ruleset
from pbem.services import chance
from pbem.services.dow.chronicle import PhaseReport, chronicle
from pbem.services.dow.openings import dealt
from pbem.services.dow.seat import commit_seated, seat_of
from pbem.services.workspace import Identity, Workspace
from pbem.protocol.books import in_commit_order
from pbem.protocol.control import expected_after

ORDERS_KIND = "orders"  # schemas/secret-orders.json: the plaintext is {orders: [...]}


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
                out.append(f"warning: {v.order!r} is not a valid order: {v.reason}; it will be void "
                           f"({void_means(v.order, v.reason or '')})")
        return out


def void_means(order: str, reason: str = "") -> str:
    """What a void order leaves on the board, in words: a build builds nothing, a disband disbands nothing; a
    unit that is not there holds nothing (seed 001: a void order is as if not given; a unit without one holds)."""
    words = order.split()
    if words and words[-1] == "B":
        return "nothing is built there"
    if words and words[-1] == "D":
        return "nothing is disbanded by it"
    if "unorderable unit" in reason or "no unit" in reason:
        return "you have no such unit there: nothing moves"
    return "the unit holds"


def read_orders(content: bytes, name: str) -> dict[str, list[str]]:
    """A power's orders from a YAML or JSON file: `{orders: [ORDER, ...]}` (schema pbem/secret/orders/1) or
    just the list; refused with the file's name and line otherwise."""
    return read_with_lines(content, name)[0]


def judge_orders(ruleset: Ruleset, state: Any, point: Point, player: str, value: Mapping[str, Any]
                 ) -> tuple[str | None, tuple[Verdict, ...]]:
    """(why the whole set will be void, or None; each order's verdict) by the ruleset's own judgement."""
    action = Action(point, player, None, dict(value))
    problem = ruleset.legal(state, action)
    verdicts = tuple(Verdict(order, verdict, reason)
                     for order, _normal, verdict, reason in (ruleset.orders.verdicts(state, action)
                                                             if ruleset.orders is not None else ()))
    return problem, verdicts


def seal_orders(ws: Workspace, me: Identity, content: bytes, name: str, anyway: bool = False,
                draw: bool = False) -> SealedOrders:
    """`pbem orders FILE`: seal my power's orders for the phase open now (secret kind `orders`, `step` = the
    phase) and commit; every order judged first (`check_orders`), sealed as given with `anyway` (the
    rules void it; seed 001: "a one time warning for an honest mistake"); `draw`: a sealed draw vote inside."""
    seat = seat_of(ws, me)
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
        assert head.stop is not None
        owing = ruleset.sealing.owing_players(head.stop.checkpoint.state, seat.point) if ruleset.sealing else []
        why = (f"{player} owes no orders at {when}; powers owing: {', '.join(owing) or 'none'}"
               if player not in owing else f"{player} cannot seal for {when} now ({head.status.pending[0].why})")
        raise PbemError("orders.not-owed", why, exit_code=ILLEGAL)
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
    # shared among the others, to open it without me (§4.7)
    replaces = {resealing.REPLACES: already.secret} if already is not None else {}  # both stay on record
    files[path] = dump_mapping({**_with_step(raw, when), **replaces, **dealt(raw, head.game, player, me)}).encode()
    n = len(value["orders"])
    status, _stop = commit_seated(ws, seat, me, files, f"orders for {when} sealed ({sid}, {n} order{'s' * (n != 1)}"
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
    seat = seat_of(ws, me)
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
    status, _stop = commit_seated(ws, seat, me, files, f"orders for {when} revealed ({mine.secret})", details)
    return RevealedOrders(mine.secret, when, tuple(value.get("orders", ())), status, tuple(reports))


def read_with_lines(content: bytes, name: str) -> tuple[dict[str, Any], Callable[[int], int]]:
    """`read_orders`, and where the i-th order stands in the file (its line, found only when asked)."""
    doc = yamlsafe.load(content, name)
    bare = isinstance(doc.data, list)
    value = {"orders": doc.data} if bare else doc.data
    if value is None:
        value = {"orders": []}
    schemas.validate(f"pbem/secret/{ORDERS_KIND}/1", value, file=name, doc=doc if value is doc.data else None)
    vote = {"draw": True} if not bare and value.get("draw") is True else {}
    return {"orders": list(value["orders"]), **vote}, lambda i: doc.line_of((i,) if bare else ("orders", i))


ORDER_RULES = {"forbidden": "orders.forbidden", "invalid": "orders.invalid"}


def check_orders(name: str, line_of: Callable[[int], int], problem: str | None,
                  verdicts: Sequence[Verdict]) -> None:
    """Refuse to seal orders that will not stand, before anything is written (seed 001 "an honest mistake" is
    best caught before it counts): the first such order named with its file and line, rule `orders.forbidden`
    (the relationship states forbid it: it would be void and an offence) or `orders.invalid` (the engine refuses
    it: void); `--anyway` seals them as written."""
    bad = [(i, v) for i, v in enumerate(verdicts) if v.verdict in ORDER_RULES]
    hint = "fix it, or seal as written with --anyway (void when the phase resolves"
    if problem:
        raise PbemError("orders.invalid", f"{name}: these orders will be void as a whole: {problem}", file=name,
                        exit_code=ILLEGAL, hint=hint + "); nothing was sealed")
    if not bad:
        return
    forbidden = [(i, v) for i, v in bad if v.verdict == "forbidden"]
    i, first = (forbidden or bad)[0]
    more = f" ({len(bad) - 1} more order{'s' * (len(bad) > 2)} will not stand either)" if len(bad) > 1 else ""
    what = ("is forbidden by the relationship states" if first.verdict == "forbidden"
            else "is not a valid order")
    why = "; a forbidden order is an offence: a warning, the second puts you into civil disorder" \
        if forbidden else ""
    raise PbemError(ORDER_RULES[first.verdict], f"{first.order!r} {what}: {first.reason}{more}", file=name,
                    line=line_of(i), exit_code=ILLEGAL,
                    hint=hint + why + "); nothing was sealed")
