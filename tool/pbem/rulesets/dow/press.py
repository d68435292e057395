"""Global press of `dow/1` (seed 001, DESIGN §1 "global chat" -> each power's press/<power>.yaml; schema
pbem/dow/press/1).

Messages are recognised one at a time in the order of the commits that added them (DESIGN §7.2), never by file
name; that order is the public recognition order. Each message is one of:

    {by: france, say: TEXT}                                  free text, changes nothing
    {by: france, propose: {to: germany, state: ALLIED}}      a raise proposed (stands until accepted or void)
    {by: germany, accept: {from: france, state: ALLIED}}     the raise agreed: recognised now
    {by: france, declare: {to: england, state: WAR}}         a lowering: recognised now (WAR cascades)
    {by: italy, reaffirm: {france: ALLIED, germany: HOSTILE}} leaving LIMBO
    {by: france, gift: {to: germany, province: BEL}}         a public gift between allies, realised with the states
    {by: DIRECTOR, warn: france, reason: TEXT, offence: {phase: S1901M, order: "F TRI - VEN"}}
                                                             the director's warning, citing a recorded offence:
                                                             a void order of that power (never a message)
    {by: DIRECTOR, lift: france}                             refused: a warning stands (press.no-lift)
    {by: france, draw: true}                                 a draw vote (false withdraws it)
    {by: france, ready: true}                                done with the press-only S1901P
    {by: france, whisper: {id, to, box, commit, keys, sig}}  private press, sealed to its recipients: recognises
                                                             nothing (pbem.protocol.whisper checks the crypto)
    {by: germany, disclose: {id, key, text}}                 a whisper made public by one who received it
    {by: russia, open: {secret: turkey-0001, share: HEX}}    a share of a withheld set (protocol.openings)

and may carry `at: PHASE`, the phase during which it was sent; it must then be the phase the game is at.
A refused message changes nothing and gets a `Refusal`: the reason text, with the rule id in `.rule`.

Choices where the seed is silent (docs/dow.md): a power in civil disorder may still `say` but changes no
relationship, gives no gift and has no draw vote; a gift is judged against the recognised states and the board
when recognised, and again when realised (it lapses if the giver no longer holds the province or the pair is
no longer ALLIED); a draw is shared by every surviving power and needs the standing vote of each surviving power
not in civil disorder; after the game is over only `say` is recognised.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pbem.rulesets.dow import engine, phases, relations
from pbem.rulesets.base import Refusal
from pbem.rulesets.dow.relations import ALLIED, PressRefused
from pbem.rulesets.dow.state import DRAW, DowState

# rule ids (DESIGN §8); the relationship ones live in relations.py
MALFORMED = "press.malformed"
NOT_AUTHOR = "press.not-author"
WRONG_PHASE = "press.wrong-phase"
GAME_OVER = "press.game-over"
CIVIL_DISORDER = "press.civil-disorder"
NOT_DIRECTOR = "press.not-director"
WARN_NO_OFFENCE = "press.warn-no-offence"
WARN_TWICE = "press.warn-twice"
SELF_WARN = "press.self-warn"
NO_LIFT = "press.no-lift"
GUNBOAT = "press.gunboat"
WHISPER_RECIPIENT = "press.whisper-recipient"
GIFT_NOT_ALLIED = "press.gift-not-allied"
GIFT_NOT_YOURS = "press.gift-not-yours"
UNKNOWN_PROVINCE = "press.unknown-province"

KINDS = ("say", "propose", "accept", "declare", "reaffirm", "gift", "warn", "lift", "draw", "ready", "whisper",
         "disclose", "open")
_EXTRA = {"warn": ("reason", "offence")}
PRIVATE = ("whisper", "disclose")  # private press and its disclosure: recognised, but they change nothing


def recognise(state: DowState, message: Mapping[str, Any], by: str) -> tuple[DowState, Refusal | None]:
    """Recognise one press message signed by `by`: (the new state, None), or (the same state, the refusal).
    A recognised message other than a whisper is one more public message of `by` (`said`: a director's warning
    may cite it by its number; a refused one is a finding of its commit, so it never stands in a verified
    history; a whisper is no public message, all cannot read it)."""
    try:
        after = _recognise(state, message, by)
        return (after if "whisper" in message else after.with_said(by)), None
    except PressRefused as refused:
        return state, Refusal(refused.message, refused.rule)


KEPT = 4  # recognitions remembered: a verifier walks one phase at a time, from one or two starting states
_recognised: "OrderedDict[int, tuple[DowState, tuple[Any, ...], DowState, tuple[Refusal | None, ...]]]" = \
    OrderedDict()


def recognise_all(state: DowState, messages: Sequence[Any]) -> tuple[DowState, tuple[Refusal | None, ...]]:
    """The state after recognising `messages` (each with `.body` and `.by`, in recognition order) from `state`,
    and each message's refusal (None when recognised).

    Linear in a phase's messages however many commits post them: a verifier recognises the phase's press at
    every press commit, from the same state at the phase's start and with the messages of the commit before
    as a prefix; that prefix is taken from the last recognitions (`KEPT`, keyed by their starting state) and
    only the messages after it are recognised."""
    messages = tuple(messages)  # the verifier's tuple itself: no copy
    end, done = state, 0
    refusals: tuple[Refusal | None, ...] = ()
    for begun, seen, after, refused in _recognised.values():
        # the same message objects at both ends of the prefix: messages are only ever appended to a phase's press
        if (done < len(seen) <= len(messages) and seen[0] is messages[0] and seen[-1] is messages[len(seen) - 1]
                and (begun is state or begun == state)):
            end, done, refusals = after, len(seen), refused
    found = list(refusals)
    for message in messages[done:]:
        end, refusal = recognise(end, message.body, message.by)
        found.append(refusal)
    _recognised[id(state)] = (state, messages, end, tuple(found))
    _recognised.move_to_end(id(state))
    while len(_recognised) > KEPT:
        _recognised.popitem(last=False)
    return end, tuple(found)


def ready_owed(state: DowState, point: Any) -> list[str]:
    """The powers that have not yet said they are done with the press-only first half of Spring 1901 (`ready`);
    [] at every other phase. S1901P ends when every surviving power not in civil disorder is ready."""
    if point is None or point[2] != phases.PRESS or state.outcome is not None:
        return []
    return [p for p in state.powers if p not in state.ready and not state.in_disorder(p)]


def kind_of(message: Mapping[str, Any]) -> str:
    """The kind of a message ("propose", ...); PressRefused(press.malformed) when it has none or several."""
    if not isinstance(message, Mapping):
        raise PressRefused(MALFORMED, "a press message must be a mapping such as {by: france, say: hello}")
    kinds = [k for k in message if k in KINDS]
    if len(kinds) != 1:
        raise PressRefused(MALFORMED, f"a press message has exactly one of {', '.join(KINDS)}; got "
                                      f"{', '.join(map(str, kinds)) or 'none'}")
    kind = kinds[0]
    extra = [str(k) for k in message if k not in (kind, "by", "at", *_EXTRA.get(kind, ()))
             and not str(k).startswith("x-")]
    if extra:
        raise PressRefused(MALFORMED, f"{', '.join(extra)} is not part of a {kind} message")
    return kind


def _recognise(state: DowState, message: Mapping[str, Any], by: str) -> DowState:
    kind = kind_of(message)
    if by not in state.players:
        raise PressRefused(relations.UNKNOWN_POWER, f"{by!r} is not a player of this game")
    if message.get("by") != by:
        raise PressRefused(NOT_AUTHOR, f"the message says by {message.get('by')!r} but is signed by {by!r}")
    if "at" in message:
        at = message["at"]
        expected = phases.format_time(state.phase) if state.phase is not None else None
        if at != expected:
            raise PressRefused(WRONG_PHASE, f"the message is dated {at!r} but the game is at {expected}")
    if kind == "open":  # a share of a withheld set: checked with the secrets (protocol.openings), changes nothing
        return state
    if state.gunboat and kind not in ("ready", "draw"):
        raise PressRefused(GUNBOAT, f"a gunboat game (setup press: none) has no press: no {kind}; only `ready` "
                                    "and draw votes")
    if kind == "say":
        return state
    if kind in PRIVATE:
        return _private(state, kind, message[kind], by)
    if state.outcome is not None:
        raise PressRefused(GAME_OVER, f"the game is over ({state.outcome[0]}); only `say` is still recognised")
    if kind in ("warn", "lift"):
        return _director(state, kind, message, by)
    if by not in state.powers:
        raise PressRefused(relations.UNKNOWN_POWER, f"{by!r} plays no power and may only `say`"
                                                    + (" or warn" if by == state.director else ""))
    if state.in_disorder(by):
        raise PressRefused(CIVIL_DISORDER, f"{by} is in civil disorder (second offence) and may only `say`")
    value = message[kind]
    rel = state.relations
    if kind == "ready":
        if state.phase is None or state.phase[2] != phases.PRESS:
            raise PressRefused(WRONG_PHASE, "`ready` ends the press-only first half of Spring 1901; the game is at "
                                            f"{phases.format_time(state.phase) if state.phase else 'the end'}")
        if value is not True:
            raise PressRefused(MALFORMED, f"ready takes true, got {value!r}")
        return replace(state, ready=tuple(p for p in state.powers if p in {*state.ready, by}))
    if kind == "propose":
        to, wanted = _target(value, "to")
        return replace(state, relations=relations.propose(rel, by, to, wanted))
    if kind == "accept":
        proposer, wanted = _target(value, "from")
        return replace(state, relations=relations.accept(rel, by, proposer, wanted))
    if kind == "declare":
        to, wanted = _target(value, "to")
        return replace(state, relations=relations.declare(rel, by, to, wanted))
    if kind == "reaffirm":
        if not isinstance(value, Mapping):
            raise PressRefused(MALFORMED, "reaffirm takes {power: ALLIED|HOSTILE, ...}")
        return replace(state, relations=relations.reaffirm(rel, by, {str(k): str(v) for k, v in value.items()}))
    if kind == "gift":
        return _gift(state, value, by)
    return _draw(state, value, by)


def _target(value: Any, who: str) -> tuple[str, str]:
    if not isinstance(value, Mapping) or set(value) != {who, "state"}:
        raise PressRefused(MALFORMED, f"expected {{{who}: POWER, state: STATE}}, got {value!r}")
    return str(value[who]), str(value["state"])


def _private(state: DowState, kind: str, value: Any, by: str) -> DowState:
    """Private press (DESIGN §7.2: sealed to its recipients, recognises nothing). A whisper goes only to seated
    players still in the game, never to oneself (press.whisper-recipient); that it opens, who signed it, and
    that a disclosure opens what was sent is checked with the keys (pbem.protocol.whisper)."""
    if not isinstance(value, Mapping):
        raise PressRefused(MALFORMED, f"{kind} takes a mapping, got {value!r}")
    if kind == "whisper":
        to = value.get("to")
        if not isinstance(to, (list, tuple)) or not to:
            raise PressRefused(MALFORMED, "a whisper names its recipients: to: [POWER, ...]")
        for power in to:
            if power not in state.players:
                raise PressRefused(WHISPER_RECIPIENT, f"{power!r} holds no seat in this game "
                                                      f"({', '.join(state.players)})")
            if power == by:
                raise PressRefused(WHISPER_RECIPIENT, f"{by} cannot whisper to itself")
            if power in state.powers and not state.board.is_alive(power):
                raise PressRefused(WHISPER_RECIPIENT, f"{power} is out of the game (no units, no centres)")
    return state


def _director(state: DowState, kind: str, message: Mapping[str, Any], by: str) -> DowState:
    """Seed 001 (moderated game: "a one time warning for an honest mistake, and then sent into CD for the second
    offense"): the director may issue a warning, bounded so that it only ever names a breach the machine itself
    recorded. A warning cites one void order of the warned power (press.warn-no-offence: a message, a made-up
    offence), at most once (press.warn-twice; a forbidden order was warned automatically already); the director
    never warns the power he plays (press.self-warn); nothing lifts a warning (press.no-lift): it stands for the
    offence it cites, which stays recorded."""
    if state.director is None or by != state.director:
        raise PressRefused(NOT_DIRECTOR, f"only the director ({state.director or 'none in this game'}) may {kind}")
    if kind == "lift":
        raise PressRefused(NO_LIFT, "a warning stands for the offence it cites: the director lifts nothing")
    power = message[kind]
    if power not in state.powers:
        raise PressRefused(relations.UNKNOWN_POWER, f"{power!r} is not a power ({', '.join(state.powers)})")
    if power == by:
        raise PressRefused(SELF_WARN, f"{by} directs and plays {power}: no one warns his own power")
    if not isinstance(message.get("reason"), str) or not message["reason"].strip():
        raise PressRefused(MALFORMED, "a warning needs a reason")
    cited = _offence(state, power, message.get("offence"))
    holder = _former_holder(state, power, message["offence"]["phase"])
    if holder is not None:  # an order of a player who has left the power since: the warning is on his record
        p, since, warnings, missed = state.former[holder]
        former = (*state.former[:holder], (p, since, warnings + 1, missed), *state.former[holder + 1:])
        return replace(state, former=former, cited=(*state.cited, cited))
    return replace(state.with_offences(power, state.offences_of(power) + 1), cited=(*state.cited, cited))


def _former_holder(state: DowState, power: str, phase: str) -> int | None:
    """The index in `state.former` of the player who held `power` at `phase` and has left it since (a power
    taken over, docs/dow.md), or None when that is the power's present player."""
    at = phases.parse_time(phase)
    for i, (p, since, _warnings, _missed) in enumerate(state.former):
        if p == power and since and at < phases.parse_time(since):
            return i
    return None


def _offence(state: DowState, power: str, offence: Any) -> str:
    """The recorded offence a warning cites, as the key it is remembered by; PressRefused otherwise."""
    if isinstance(offence, Mapping) and set(offence) == {"phase", "order"}:
        phase, order = offence["phase"], offence["order"]
        year = state.phase[0] if state.phase is not None else 0
        recorded = [warned for when, who, given, warned in state.voids
                    if (when, who, given) == (phase, power, order) and phases.parse_time(when)[0] >= year - 1]
        if not recorded:
            raise PressRefused(WARN_NO_OFFENCE, f"{power} has no void order {order!r} at {phase} (a warning cites a "
                                                "void order of this or the last game year)")
        if recorded[0]:
            raise PressRefused(WARN_TWICE, f"{power}'s {order!r} at {phase} was forbidden and warned already")
        key = f"order {phase} {power} {order}"
    elif isinstance(offence, Mapping) and set(offence) == {"press"}:
        raise PressRefused(WARN_NO_OFFENCE, "a message is no offence: a warning cites a breach of the rules the "
                                            "game recorded, a void order (offence: {phase: PHASE, order: ORDER})")
    else:
        raise PressRefused(WARN_NO_OFFENCE, "a warning cites a recorded offence: offence: {phase: PHASE, order: "
                                            "ORDER} (a void order of the warned power)")
    if key in state.cited:
        raise PressRefused(WARN_TWICE, f"{power} was warned for this offence already ({key})")
    return key


def gift_problem(state: DowState, giver: str, taker: str, province: str) -> tuple[str, str] | None:
    """(rule id, why) `giver` cannot gift `province` to `taker` now, or None (seed 001, ALLIED: "You may also
    (publicly) gift territories to your allies"): the pair must be ALLIED (recognised), the province coloured the
    giver's colour or a supply centre he owns."""
    pair = state.relations.recognised.get(giver, taker)
    if pair != ALLIED:
        return GIFT_NOT_ALLIED, f"{giver} may gift only to an ally; {giver} and {taker} are {pair}"
    board = state.board
    if board.colour_of(province) != giver and board.centre_owner(province) != giver:
        return GIFT_NOT_YOURS, f"{province} is neither coloured {giver}'s colour nor a centre {giver} owns"
    return None


def _gift(state: DowState, value: Any, by: str) -> DowState:
    if not isinstance(value, Mapping) or set(value) != {"to", "province"}:
        raise PressRefused(MALFORMED, f"expected {{to: POWER, province: PROVINCE}}, got {value!r}")
    taker, raw = str(value["to"]), value["province"]
    if taker not in state.powers:
        raise PressRefused(relations.UNKNOWN_POWER, f"{taker!r} is not a power ({', '.join(state.powers)})")
    if taker == by:
        raise PressRefused(relations.SELF, f"{by} cannot gift to itself")
    province = engine.normal_province(str(raw))
    if province is None or province != str(raw):
        raise PressRefused(UNKNOWN_PROVINCE, f"{raw!r} is not a province of the standard map (three letters, e.g. "
                                             "BEL)")
    problem = gift_problem(state, by, taker, province)
    if problem:
        raise PressRefused(*problem)
    return replace(state, gifts=(*state.gifts, (by, taker, province)))


def _draw(state: DowState, value: Any, by: str) -> DowState:
    if not isinstance(value, bool):
        raise PressRefused(MALFORMED, f"draw takes true (vote) or false (withdraw), got {value!r}")
    votes = set(state.draw_votes) | {by} if value else set(state.draw_votes) - {by}
    state = replace(state, draw_votes=tuple(p for p in state.powers if p in votes))
    survivors = state.survivors()
    voters = [p for p in survivors if not state.in_disorder(p)]
    if voters and all(p in votes for p in voters):
        state = replace(state, outcome=(DRAW, survivors))
    return state


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
