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
    {by: DIRECTOR, warn: france, reason: TEXT}               the director's warning (an offence)
    {by: DIRECTOR, lift: france}                             the director lifts one warning
    {by: france, draw: true}                                 a draw vote (false withdraws it)

and may carry `at: PHASE`, the phase during which it was sent; it must then be the phase the game is at.
A refused message changes nothing and gets a `Refusal`: the reason text, with the rule id in `.rule`.

Choices where the seed is silent (docs/dow.md): a power in civil disorder may still `say` but changes no
relationship, gives no gift and has no draw vote; a gift is judged against the recognised states and the board
when recognised, and again when realised (it lapses if the giver no longer holds the province or the pair is
no longer ALLIED); a draw is shared by every surviving power and needs the standing vote of each surviving power
not in civil disorder; after the game is over only `say` is recognised.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from pbem.rulesets.dow import engine, phases, relations
from pbem.rulesets.dow.refusal import Refusal
from pbem.rulesets.dow.relations import ALLIED, PressRefused
from pbem.rulesets.dow.state import DRAW, DowState

# rule ids (DESIGN §8); the relationship ones live in relations.py
MALFORMED = "press.malformed"
NOT_AUTHOR = "press.not-author"
WRONG_PHASE = "press.wrong-phase"
GAME_OVER = "press.game-over"
CIVIL_DISORDER = "press.civil-disorder"
NOT_DIRECTOR = "press.not-director"
NO_WARNING = "press.no-warning"
GIFT_NOT_ALLIED = "press.gift-not-allied"
GIFT_NOT_YOURS = "press.gift-not-yours"
UNKNOWN_PROVINCE = "press.unknown-province"

KINDS = ("say", "propose", "accept", "declare", "reaffirm", "gift", "warn", "lift", "draw")
_EXTRA = {"warn": ("reason",)}


def recognise(state: DowState, message: Mapping[str, Any], by: str) -> tuple[DowState, Refusal | None]:
    """Recognise one press message signed by `by`: (the new state, None), or (the same state, the refusal)."""
    try:
        return _recognise(state, message, by), None
    except PressRefused as refused:
        return state, Refusal(refused.rule, refused.message)


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
    if kind == "say":
        return state
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


def _director(state: DowState, kind: str, message: Mapping[str, Any], by: str) -> DowState:
    """Seed 001 (moderated game): the director may issue a warning or lift one (DESIGN §7.2)."""
    if state.director is None or by != state.director:
        raise PressRefused(NOT_DIRECTOR, f"only the director ({state.director or 'none in this game'}) may {kind}")
    power = message[kind]
    if power not in state.powers:
        raise PressRefused(relations.UNKNOWN_POWER, f"{power!r} is not a power ({', '.join(state.powers)})")
    count = state.offences_of(power)
    if kind == "warn":
        if not isinstance(message.get("reason"), str) or not message["reason"].strip():
            raise PressRefused(MALFORMED, "a warning needs a reason")
        return state.with_offences(power, count + 1)
    if count == 0:
        raise PressRefused(NO_WARNING, f"{power} has no warning to lift")
    return state.with_offences(power, count - 1)


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
