"""Replay to the next break (DESIGN §4.2; seed 000 §3.B, §3.C, §6).

From a checkpoint (the firm point and the state there), resolve steps in order. At each step, first any player
whose horizon ends before it needs orders (break *before* the step, nothing of it resolved); otherwise gather
every player's actions (his entries there, else the ruleset's defaults), resolve them together, and stop
*after* the step if its events meet some player's break conditions. The step that triggered a break is then
resolved and firm: the firm point moves on to the next step, and the triggered players are carried in the
checkpoint until each has been served (seed §3.B: "each player whose break condition is met will gain control
of the game, in turn").
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from pbem.errors import Finding
from pbem.formats.canonical import dumps as canonical_dumps
from pbem.formats.records import evolve
from pbem.protocol.model import (AT, CLARIFY, CONDITION, HORIZON, READY, REPLY, ROLL, SEALED, Break, Checkpoint,
                                 Entry, Inputs, Message, Resolved, Stop, Void)
from pbem.protocol.auction import Auction, open_or_go_on
from pbem.protocol.auction import breaks as auction_breaks
from pbem.protocol.secrets import SECRET
from pbem.protocol.serving import serving_order
from pbem.rulesets.base import Action, Ambiguous, Event, Point, Ruleset

# A guard against a ruleset whose next_step never ends; far above any real game (8 turns x 161 steps).
MAX_STEPS = 1_000_000


def start_checkpoint(ruleset: Ruleset, setup: Mapping[str, Any], players: Sequence[str]) -> Checkpoint:
    """The checkpoint before the first step of the game."""
    return Checkpoint(ruleset.first_step(setup), ruleset.initial_state(setup, players))


def replay(
    ruleset: Ruleset,
    setup: Mapping[str, Any],
    inputs: Inputs,
    start: Checkpoint,
    after: str | None,
    served: str | None = None,
    quiet_before: Point | None = None,
    fresh: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    effects: Sequence[tuple[Point, Callable[[Any], Any]]] = (),
    settled_before: Point | None = None,
    observer: Callable[[Resolved], None] | None = None,
) -> Stop:
    """Replay from `start` to the next break; pending breaks are served in table order after `after`.
    `served` is the player whose turn was just taken (it moves an open action auction on).

    `quiet_before`: steps before this point were played and served already; they are resolved again (to rebuild
    the state) but their breaks and action auctions are not served again. Replay after an erratum restarts from
    the game start this way, so that the steps it corrected are the first to count again (DESIGN §4.8).

    `fresh`: the break conditions each player wrote in the commit being judged. One that already holds at the
    start (a range condition written at a closer range) is armed: it is met at the next step where it still holds
    and an event counts for it, and disarmed as soon as it stops holding (DESIGN §4.3, seed 000 §6.D).

    `effects`: (point, change of state) of agreements that took effect at that game point (a resignation: the
    ruleset's `resigned`); each changes the state before the step at its point is resolved, so a replay from
    an earlier point (after an erratum) meets it at the same point again (DESIGN §4.8).

    `settled_before`: the simultaneous steps before this point had their action auctions and damage replies
    (the firm point before an erratum): resolved again with the corrected entries, never auctioned or held for
    replies again, so that an erratum corrects a step and never re-opens it (DESIGN §4.8).

    `observer`: called with each step as it resolves (`Resolved`: as the ruleset's `apply` left it), in game
    order, before its breaks are looked for; it may end the replay by raising."""
    if start.carried and inputs.gone & {b.player for b in start.carried}:
        # a seat that left (a resign) or whose turn an nmr settles is served at once: his breaks go (DESIGN §4.8)
        start = evolve(start, carried=tuple(b for b in start.carried if b.player not in inputs.gone))
    if start.carried:
        kept = evolve(start, armed=tuple(sorted(_arm(ruleset, inputs, start, fresh)))) if fresh else start
        return Stop(kept, serving_order(start.carried, inputs.players, after), over=False)
    point, state = start.point, start.state
    auction = start.auction
    problems: list[Finding] = []
    voids: list[Void] = list(start.voids)
    known = len(voids)
    armed = _arm(ruleset, inputs, start, fresh)
    tracks = _check_pursuit(ruleset, inputs, dict(start.tracks), problems)

    if start.settled is not None and (settled_before is None or start.settled > settled_before):
        settled_before = start.settled  # an erratum's replay stopped before the old firm point: still settled

    def checkpoint(at: Point | None, now: Any, **more: Any) -> Checkpoint:
        if at == start.point and start.replied:
            more.setdefault("replied", start.replied)  # a held step waiting for its dice stays held
        if settled_before is not None and at is not None and at < settled_before:
            more.setdefault("settled", settled_before)
        return Checkpoint(at, now, tracks=dict(tracks), voids=tuple(voids), armed=tuple(sorted(armed)), **more)

    if start.contacts:
        state, waiting, more = _impacts(ruleset, state, start.contacts, inputs)
        if waiting:
            return Stop(evolve(start, carried=(), state=state, contacts=waiting, tracks=dict(tracks),
                                voids=tuple(voids), armed=tuple(sorted(armed))),
                        serving_order(_reveals_owed(waiting, inputs, start.point, ruleset, state), inputs.players,
                                      after),
                        over=False, problems=tuple(problems), voids=tuple(voids[known:]), steps=0)
        met = _breaks_met(ruleset, inputs, start.point, ruleset.format_time(start.point), start.state, state, more,
                          explicit=False) if more and start.point is not None else ()
        if met:
            return Stop(checkpoint(start.point, state), serving_order(met, inputs.players, after), over=False,
                        problems=tuple(problems), voids=tuple(voids[known:]))
    declaring = ruleset.declared
    reply_kinds = tuple(declaring.reply_kinds) if declaring is not None else ()
    reply_key = declaring.reply_key if declaring is not None else (lambda event: event)
    steps = 0
    due = sorted(effects, key=lambda e: e[0])
    while point is not None and not ruleset.is_over(state := _apply_due(due, point, state)):
        steps += 1
        if steps > MAX_STEPS:
            raise RuntimeError("ruleset produced an endless step sequence")
        when = ruleset.format_time(point)
        begun = state
        needing = ([p for p in inputs.players if not _covers(inputs, p, point)]
                   if ruleset.uses_horizons else [])
        if needing:
            pending = tuple(Break(p, when, HORIZON, f"needs orders from {when}") for p in needing)
            return Stop(checkpoint(point, state), serving_order(pending, inputs.players, after),
                        over=False, problems=tuple(problems), voids=tuple(voids[known:]), steps=steps - 1)
        heard = None
        ready_owed = ruleset.press.ready_owed if ruleset.press is not None else None
        if ready_owed is not None and not (ruleset.sealing is not None and ruleset.sealing.sealed(point)):
            # a step that ends by press alone (dow/1 S1901P: every power says `ready`)
            heard = _recognise(ruleset, state, inputs.press.get(when, ()), problems)
            unready = ready_owed(heard, point)
            if unready:
                pending = tuple(Break(p, when, READY, f"say `ready` when done with {when} (press only, any order, "
                                      "without control)") for p in unready)
                return Stop(checkpoint(point, state), serving_order(pending, inputs.players, after),
                            over=False, problems=tuple(problems), voids=tuple(voids[known:]), steps=steps - 1)
        sealed_actions, unopened = _sealed(ruleset, state, point, when, inputs)
        if unopened is not None:
            return Stop(checkpoint(point, state), serving_order(unopened, inputs.players, after),
                        over=False, problems=tuple(problems), voids=tuple(voids[known:]), steps=steps - 1)
        step_voids: list[Void] = []  # kept once the step resolves: a replay stopping before it meets them again
        actions, unclear = _gather(ruleset, state, point, inputs, inputs.at(point), step_voids)
        actions += sealed_actions
        if unclear:
            return Stop(checkpoint(point, state), serving_order(unclear, inputs.players, after),
                        over=False, problems=tuple(problems), voids=tuple(voids[known:]), steps=steps - 1)
        quiet = quiet_before is not None and point < quiet_before
        settled = quiet or (settled_before is not None and point < settled_before)
        declared = _declaring(ruleset, point)
        needed = _needed(ruleset, state, point, actions)  # once a step: the ruleset's answer depends on these only
        if declared and not settled:
            auction = _auction(ruleset, inputs, state, point, auction, served, after)
            if auction is not None and not auction.closed:
                return Stop(checkpoint(point, state, auction=auction), auction_breaks(auction, when),
                            over=False, problems=tuple(problems), voids=tuple(voids[known:]), steps=steps - 1,
                            dice_refs=tuple(needed))
        blocked = _dice_missing(ruleset, state, when, inputs, needed)
        if blocked:
            return Stop(checkpoint(point, state, auction=auction), serving_order(blocked, inputs.players, after),
                        over=False, problems=tuple(problems), voids=tuple(voids[known:]), steps=steps - 1,
                        dice_refs=tuple(needed))
        recognised = heard if heard is not None else _recognise(ruleset, state, inputs.press.get(when, ()),
                                                                problems)
        if recognised is not state:  # press changed the state (dow/1): ask again
            state, needed = recognised, _needed(ruleset, recognised, point, actions)
        # a lost die (its roller's reveal withheld, settled by an agreement) goes to the ruleset as a Withheld
        # (a die neither rolled nor lost is left out: the ruleset refuses a missing die as it refused a None)
        rolls = {ref: roll for ref in needed if (roll := inputs.dice[ref].lost or inputs.dice[ref].result) is not None}
        new_state, events = (ruleset.apply(state, point, actions, rolls) if rolls
                             else ruleset.apply(state, point, actions))
        if declared:  # checked when declared (the auction); resolution must not trigger them twice
            at_declaring = declaring.declared_events(state, point, actions) if declaring is not None else []
            events = [e for e in events if e.kind not in (declaring.declared_kinds if declaring is not None else ())
                      and e not in at_declaring]
        if declared and not settled:
            # seed §6.C.1: at a simultaneous step the damage is known but not yet scored; whoever it meets may
            # still act in this step, so the step is held (resolved again once each has answered or passed)
            replied = start.replied if start.point == point else ()
            fresh_replies = [e for e in events if e.kind in reply_kinds and reply_key(e) not in replied]
            held = _breaks_met(ruleset, inputs, point, when, state, new_state, fresh_replies, explicit=False)
            if held:
                replies = tuple(Break(b.player, when, REPLY, f"{b.why}: known, not yet scored; act at {when} too, or "
                                      "pass (seed §6.C.1)") for b in held)
                return Stop(checkpoint(point, state, auction=auction,
                                       replied=(*replied, *(reply_key(e) for e in fresh_replies))),
                            serving_order(replies, inputs.players, after), over=False, problems=tuple(problems),
                            voids=tuple(voids[known:]), steps=steps - 1,
                            dice_refs=tuple(needed))
        if declared:
            events = [e for e in events if e.kind not in reply_kinds]  # shown while the step was held
        voids.extend(step_voids)
        if observer is not None:
            observer(Resolved(point, begun, tuple(actions), state, new_state, tuple(events)))
        _record_moves(ruleset, inputs, tracks, point, state, events)
        tracks = _check_pursuit(ruleset, inputs, tracks, problems)
        contacts = tuple((e.data["unit"], tuple(e.data["candidates"])) for e in events if e.kind == "seeking_contact")
        if contacts:
            new_state, waiting, more = _impacts(ruleset, new_state, contacts, inputs)
            events = [*events, *more]
            if waiting:
                nxt = ruleset.next_step(setup, point)
                return Stop(checkpoint(nxt, new_state, contacts=waiting),
                            serving_order(_reveals_owed(waiting, inputs, nxt, ruleset, new_state), inputs.players,
                                          after),
                            over=False, problems=tuple(problems), voids=tuple(voids[known:]), steps=steps)
        met = () if quiet else _breaks_met(ruleset, inputs, point, when, state, new_state, events, armed=armed)
        nxt = ruleset.next_step(setup, point)
        auction, served = None, None
        if met:
            return Stop(checkpoint(nxt, new_state), serving_order(met, inputs.players, after), over=False,
                        problems=tuple(problems), voids=tuple(voids[known:]), steps=steps)
        state, point = new_state, nxt
    return Stop(checkpoint(None, state), (), over=True, problems=tuple(problems), voids=tuple(voids[known:]),
                steps=steps)


def _apply_due(due: list[tuple[Point, Callable[[Any], Any]]], point: Point, state: Any) -> Any:
    """`state` changed by each effect in `due` (sorted by point) whose point is reached; those are taken off."""
    while due and due[0][0] <= point:
        state = due.pop(0)[1](state)
    return state


def _sealed(ruleset: Ruleset, state: Any, point: Point, when: str,
            inputs: Inputs) -> tuple[list[Action], tuple[Break, ...] | None]:
    """A sealed simultaneous step (DESIGN §4.7; seed §2.C, §7.F): every player who owes input seals it, in any
    order and without holding control; then, where the step needs the content, each reveals; then it resolves.
    Returns the revealed inputs as actions, or the breaks the step still waits for."""
    sealing = ruleset.sealing
    if sealing is None or not sealing.sealed(point):
        return [], None
    # a player gone by agreement (resigned) owes nothing, nor does one an nmr found absent at this step: his input
    # counts as none, and one he sealed but withheld (its secret marked so by that agreement) loses what it hid
    # (DESIGN §4.8); the nmr settles this step only, the next one owes his input as usual
    owing = [p for p in sealing.owing_players(state, point)
             if not ((when, p) in inputs.sealed and inputs.sealed[(when, p)].withheld
                     and not inputs.sealed[(when, p)].revealed)
             and ((p not in inputs.gone and (p, point) not in inputs.excused)
                  or ((when, p) in inputs.sealed and inputs.sealed[(when, p)].revealed))]
    missing = [p for p in owing if (when, p) not in inputs.sealed]
    if missing:
        return [], tuple(Break(p, when, SEALED, f"sealed input owed for {when} (any order, without control)")
                         for p in missing)
    sealing = ruleset.sealing
    if sealing is not None and sealing.opens_part_at(state, point):  # per game: tactical/1 with `speeds: sealed`
        return _parts(sealing.part_name, point, when, owing, inputs)
    if sealing is None or not sealing.reveals_sealed_at(state, point):
        return [], None
    unrevealed = [p for p in owing if not inputs.sealed[(when, p)].revealed]
    if unrevealed:
        return [], tuple(Break(p, when, SECRET, f"reveal owed for {inputs.sealed[(when, p)].secret}: everyone "
                               f"has sealed for {when}") for p in unrevealed)
    # a withheld set opened without its owner stands, known as such (source "opened"): the ruleset records it
    return [Action(point, p, None, inputs.sealed[(when, p)].value,
                   "opened" if inputs.sealed[(when, p)].withheld else "sealed") for p in owing], None


def _parts(name: str, point: Point, when: str, owing: Sequence[str],
           inputs: Inputs) -> tuple[list[Action], tuple[Break, ...] | None]:
    """Seed §2.C, DESIGN §4.7: at a step that needs only a part of each sealed input (a tactical turn's speeds,
    announced by all at once), each opens that part alone, in any order and without control, once all have
    sealed; the rest stays sealed until the end of the battle. The step resolves with the parts (source
    "part"; an input opened whole counts for its part alone). `name` is what the part is called (`part_name`)."""
    closed = [p for p in owing if inputs.sealed[(when, p)].part is None and not inputs.sealed[(when, p)].revealed]
    if closed:
        return [], tuple(Break(p, when, SECRET, f"open the {name} of {inputs.sealed[(when, p)].secret} (only the "
                               f"{name}: the rest stays sealed until the battle ends): everyone has sealed for "
                               f"{when}") for p in closed)
    given = (inputs.sealed[(when, p)] for p in owing)
    return [Action(point, p, None, s.part if s.part is not None else s.value, "part")
            for p, s in zip(owing, given)], None


def _recognise(ruleset: Ruleset, state: Any, messages: Sequence[Message], problems: list[Finding]) -> Any:
    """Press sent during this step is publicly recognised, in history order, before the step resolves."""
    press = ruleset.press
    if press is None:
        return state
    return press.recognise_all(state, messages)[0]  # linear over the commits of a step (dow/1)


def _record_moves(ruleset: Ruleset, inputs: Inputs, tracks: dict[tuple[str, str], tuple[Any, ...]],
                  point: Point, before: Any, events: Sequence[Event]) -> None:
    """Keep each sealed-target seeking weapon's moves (the step, the state before it, its events) until its
    target is known, so they can be checked against pursuit of it then (DESIGN §7.1, seed §2.C)."""
    if ruleset.seeking is None:
        return
    for weapon in inputs.targets:  # (owner, unit): the owner's own weapon, nobody else's unit of that name
        owner, unit = weapon
        mine = tuple(e for e in events if e.unit == unit and e.by == owner and e.kind in ("moved", "disengaged"))
        if mine:
            tracks[weapon] = tracks.get(weapon, ()) + ((point, before, mine),)


def _check_pursuit(ruleset: Ruleset, inputs: Inputs, tracks: dict[tuple[str, str], tuple[Any, ...]],
                   problems: list[Finding]) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Once a seeking weapon's target is revealed, every move it made is checked against pursuit of that target
    (`rules.pursuit`); checked moves are dropped, later ones are checked as they are made."""
    if ruleset.seeking is None:
        return tracks
    check = ruleset.seeking.pursuit_violations
    left = {}
    for weapon, track in tracks.items():
        sealed = inputs.targets.get(weapon)
        if sealed is not None and sealed.withheld and not sealed.revealed:
            continue  # its target is lost (DESIGN §4.8): there is nothing to check its moves against
        if sealed is None or not sealed.revealed:
            left[weapon] = track
            continue
        unit = weapon[1]
        target: Any = (sealed.value or {}).get("target")  # the ruleset judges whatever was sealed
        for violation in check(list(track), unit, target):
            # name the entry that made the move where there is one; a default or planned move has none
            entry = next((e for e in inputs.at(violation.at) if e.unit == unit and "move" in e.do), None)
            where = {"file": entry.file, "line": entry.line} if entry is not None else \
                {"file": f"secrets/{sealed.secret}.yaml"}
            problems.append(Finding("rules.pursuit", f"{unit} did not pursue its target {target} at "
                                    f"{ruleset.format_time(violation.at)}: it made {violation.made}, pursuit allows "
                                    f"{', '.join(sorted(violation.allowed))} (target revealed in secrets/"
                                    f"{sealed.secret}.yaml)", **where))
    return left


def _impacts(ruleset: Ruleset, state: Any, contacts: Sequence[tuple[str, tuple[str, ...]]],
             inputs: Inputs) -> tuple[Any, tuple[tuple[str, tuple[str, ...]], ...], list[Event]]:
    """Seed §2.C: a seeking weapon that meets possible targets obliges its owner to reveal its sealed target;
    once revealed, it hits that target if the target is one of them (the ruleset's `impact`). Returns the state,
    the contacts still waiting for a reveal, and the impact events."""
    waiting = []
    events: list[Event] = []
    seeking = ruleset.seeking
    for unit, candidates in contacts:
        sealed = _target(ruleset, state, inputs, unit)
        if sealed is None:
            continue  # no sealed target: it flies on (the launch without one was the owner's loss)
        if sealed.withheld and not sealed.revealed and seeking is not None:
            # DESIGN §4.8: its owner never revealed its target and an agreement settled it: it has no target and
            # is removed as a dummy would be, doing nothing
            state, more = seeking.vanish(state, unit)
            events.extend(more)
            continue
        if not sealed.revealed:
            waiting.append((unit, candidates))
            continue
        target = (sealed.value or {}).get("target")
        if (sealed.value or {}).get("nature") == "dummy" and seeking is not None:
            state, more = seeking.vanish(state, unit)
            events.extend(more)  # identified at contact: a dummy does nothing and is gone (seed §2.C)
        elif target in candidates and seeking is not None:
            state, more = seeking.impact(state, unit, target)
            events.extend(more)
    return state, tuple(waiting), events


def _target(ruleset: Ruleset, state: Any, inputs: Inputs, unit: str) -> Any:
    """The sealed target of seeking weapon `unit`: its owner's, found by (owner, weapon), never by name alone."""
    owner = ruleset.owner_of(state, unit)
    return inputs.targets.get((owner, unit)) if owner is not None else None


def _reveals_owed(waiting: Sequence[tuple[str, tuple[str, ...]]], inputs: Inputs, point: Point | None,
                  ruleset: Ruleset, state: Any) -> tuple[Break, ...]:
    when = ruleset.format_time(point) if point is not None else None
    out = []
    for unit, candidates in waiting:
        sealed = _target(ruleset, state, inputs, unit)
        assert sealed is not None  # waiting only for a weapon with a sealed target (_impacts)
        out.append(Break(sealed.owner, when, SECRET, f"reveal owed for {sealed.secret}: {unit} meets "
                         f"{', '.join(candidates)}", unit=unit))
    return tuple(out)


def _declaring(ruleset: Ruleset, point: Point) -> bool:
    """Whether actions at this step are declared before they are resolved (simultaneous, seed §7)."""
    return ruleset.declared is not None and ruleset.is_simultaneous(point)


def _auction(ruleset: Ruleset, inputs: Inputs, state: Any, point: Point, previous: Auction | None,
             served: str | None, initiator: str | None) -> Auction | None:
    """Open or move on the action auction at this step (DESIGN §4.6)."""
    def triggered(entries: Sequence[Entry]) -> list[str]:
        actions = [Action(e.at, e.by, e.unit, e.do, "entry", e.file, e.line) for e in entries]
        actions = [a for a in actions if ruleset.legal(state, a) is None]
        assert ruleset.declared is not None  # an auction opens only at a declaring step (_declaring)
        events = ruleset.declared.declared_events(state, point, actions)
        met = _breaks_met(ruleset, inputs, point, ruleset.format_time(point), state, state, events,
                          explicit=False)
        return [b.player for b in met]

    def order(players: Sequence[str]) -> list[str]:
        breaks = [Break(p, None, "auction", "") for p in players]
        return [b.player for b in serving_order(breaks, inputs.players, initiator)]

    return open_or_go_on(previous if previous is not None and previous.at == point else None, point,
                         inputs.at(point), served, initiator, triggered, order, inputs.gone)


def _covers(inputs: Inputs, player: str, point: Point) -> bool:
    through = inputs.of(player).through
    return through is not None and through >= point


def _gather(
    ruleset: Ruleset,
    state: Any,
    point: Point,
    inputs: Inputs,
    entries: Sequence[Entry],
    voids: list[Void],
) -> tuple[list[Action], list[Break]]:
    """Every player's actions at this step: legal entries first, then his plans (§4.5), then the ruleset's
    defaults for units without either. A plan that ties gives a clarify break for its owner instead.

    An entry that is illegal here (or a second one for the same unit and slot) is void (DESIGN §4.2 "Entries and
    time"): recorded in `voids`, never a finding. What its author alone could have known was refused in his own
    commit (pbem.protocol.legality); what is left became impossible through others' later actions, and must not
    make anybody's commit illegal, or the game could stick."""
    actions: list[Action] = []
    unclear: list[Break] = []
    uses = ruleset.uses
    slot_of = uses.slot_of if uses is not None else None
    spend = uses.spend if uses is not None else None
    judged = state  # less what the entries accepted so far spent: a step's uses count together (tactical energy)
    for player in inputs.players:
        acted: set[tuple[str | None, Any]] = set()
        for entry in (e for e in entries if e.by == player):
            action = Action(entry.at, entry.by, entry.unit, entry.do, "entry", entry.file, entry.line)
            verb = next(iter(entry.do), "")
            slot = (slot_of(entry.do) if slot_of is not None else None) or verb  # ph1 and ph2 may both fire
            if (entry.unit, slot) in acted:
                voids.append(void_of(entry, f"a second {verb!r} for {entry.unit} at {entry.at_text}"))
                continue
            reason = ruleset.legal(judged, action)
            if reason is not None:
                voids.append(void_of(entry, reason))
                continue
            acted.add((entry.unit, slot))
            actions.append(action)
            judged = spend(judged, action) if spend is not None else judged
        explicit = {a.unit for a in actions if a.by == player}
        planned, _settled = plan_actions(ruleset, state, point, player, inputs, explicit, unclear)
        actions.extend(planned)
        covered = explicit | {a.unit for a in planned}
        for default in ruleset.default_actions(state, point, player):
            if default.unit not in covered:
                actions.append(default)
    return actions, unclear


def void_of(entry: Entry, reason: str) -> Void:
    """The record of an entry replay found void, and why."""
    return Void(entry.by, entry.at_text, entry.unit, dict(entry.do), reason, entry.file, entry.line)


def plan_actions(ruleset: Ruleset, state: Any, point: Point, player: str, inputs: Inputs,
                 explicit: set[str | None], unclear: list[Break] | None) -> tuple[list[Action], set[str | None]]:
    """The actions of `player`'s plans at this step, for units he gave no entry (seed §5.B variable actions), and
    the units his plans settled (those with an entry included). A plan that ties (Ambiguous) asks its owner: a
    clarify break in `unclear`; with `unclear` None (an author's own view, protocol.legality, which only needs
    some course) it takes its first option."""
    resolve = ruleset.plans.resolve_plan if ruleset.plans is not None else None
    done: set[str | None] = set(explicit)
    plans = inputs.of(player).plans
    if resolve is None or not plans:
        return [], done
    out: list[Action] = []
    for plan in plans:
        unit = plan.get("unit")
        if unit in done or not _window(ruleset, plan, point):
            continue
        result = resolve(state, point, player, plan)
        if result is None:
            continue
        done.add(unit)
        if isinstance(result, Ambiguous):
            if unclear is None:
                out.append(Action(point, player, unit, result.options[0], "plan"))
                continue
            when = ruleset.format_time(point)
            choices = ", ".join(" ".join(f"{k} {v}" for k, v in o.items()) for o in result.options)
            unclear.append(Break(player, when, CLARIFY, f"{unit}'s plan {dict(plan['do'])} is ambiguous at {when}: "
                                 f"choose one of {choices}", tuple(result.options), unit))
            continue
        out.extend(result)
    return out, done


def _window(ruleset: Ruleset, plan: Mapping[str, Any], point: Point) -> bool:
    try:
        return ruleset.parse_time(plan["from"]) <= point <= ruleset.parse_time(plan["until"])
    except (KeyError, ValueError):
        return False  # reported when the players file is read


def _needed(ruleset: Ruleset, state: Any, point: Point, actions: Sequence[Action]) -> list[str]:
    needed = ruleset.dice.dice_needed if ruleset.dice is not None else None
    return list(needed(state, point, actions)) if needed is not None else []


def _dice_missing(ruleset: Ruleset, state: Any, when: str, inputs: Inputs, needed: Sequence[str]) -> list[Break]:
    """DESIGN §4.2 point 4: the step waits for its dice. Unannounced dice are owed by whoever acted; announced
    but unrolled ones by their roller (what the others owe him comes first, from the batch itself).

    DESIGN §5 binding: a die of another size than the ruleset's for its ref never resolves it (a d2 or a d1000
    for a d6 shot): the step waits for its roller, who voids the batch and rolls again. The commit that announced
    it was refused for it (`dice.bad-sides`); replay only never scores with it."""
    owed: dict[str, list[str]] = {}
    sides_of = ruleset.dice.dice_sides if ruleset.dice is not None else None
    for ref in needed:  # the step's dice (`_needed`)
        rolled = inputs.dice.get(ref)
        wanted = sides_of(ref) if sides_of is not None else None
        if rolled is not None and wanted is not None and (
                (rolled.sides and rolled.sides != wanted)
                or (rolled.result is not None and not 1 <= rolled.result <= wanted)):
            owed.setdefault(rolled.roller, []).append(f"{ref} in {rolled.batch}, a d{rolled.sides} where the "
                                                      f"rules roll a d{wanted}: void it")
            continue
        if rolled is not None and (rolled.result is not None or rolled.lost is not None):
            continue  # rolled, or lost for good (DESIGN §4.8: a withheld reveal loses what it hid)
        parts = ref.split("/")  # DESIGN §5: "1.4.fire/CA/ph1" names the acting unit second
        who = rolled.roller if rolled is not None else (ruleset.owner_of(state, parts[1]) if len(parts) > 1 else None)
        if who is not None:
            owed.setdefault(who, []).append(ref if rolled is None else f"{ref} in {rolled.batch}")
    return [Break(p, when, ROLL, "dice owed for " + ", ".join(refs)
                  + ("" if all(" in " in r for r in refs) else " (pbem roll --for … --ref …)"))
            for p, refs in owed.items()]


def _breaks_met(
    ruleset: Ruleset,
    inputs: Inputs,
    point: Point,
    when: str,
    before: Any,
    after: Any,
    events: Sequence[Event],
    explicit: bool = True,
    armed: set[tuple[str, bytes]] | None = None,
) -> tuple[Break, ...]:
    """One break per player whose conditions this step meets (reasons joined), DESIGN §4.2 point 2.
    `explicit`: whether explicit break points count (not for a declaration, only for a resolved step).
    `armed`: conditions written while they held (see `replay`); one met here, or no longer holding, is removed."""
    met: list[Break] = []
    for player in inputs.players:
        reasons: list[str] = []
        explicit_only = True
        for condition in inputs.of(player).breaks:
            if "at" in condition:
                if explicit and _explicit_point(ruleset, condition["at"]) == point:
                    reasons.append(f"break at {when}")
                continue
            # Seed §6 / DESIGN §4.2: a player's own events never trigger him unless he says `by: any`.
            seen = events if condition.get("by") == "any" else [e for e in events if e.by != player]
            if armed and ruleset.armed is not None and (player, canonical_dumps(condition)) in armed:
                holds = ruleset.armed.condition_holds(condition, player, after)
                if holds is None or seen:
                    armed.discard((player, canonical_dumps(condition)))
                if holds is not None and seen:
                    reasons.append(holds)
                    explicit_only = False
                    continue
            if not seen:
                continue
            reason = ruleset.condition_met(condition, player, before, after, seen)
            if reason is not None:
                reasons.append(reason)
                explicit_only = False
        if reasons:
            met.append(Break(player, when, AT if explicit_only else CONDITION, "; ".join(reasons)))
    return tuple(met)


def _arm(ruleset: Ruleset, inputs: Inputs, start: Checkpoint,
         fresh: Mapping[str, Sequence[Mapping[str, Any]]] | None) -> set[tuple[str, bytes]]:
    """The armed conditions (DESIGN §4.3): those still armed at `start` that their players still have, and the
    fresh ones that hold in the state at `start`."""
    holds = ruleset.armed.condition_holds if ruleset.armed is not None else None
    if holds is None:
        return set()
    have = {(p, canonical_dumps(c)) for p in {p for p, _ in start.armed} for c in inputs.of(p).breaks}
    armed = set(start.armed) & have
    for player, conditions in (fresh or {}).items():
        for condition in conditions:
            if "at" not in condition and holds(condition, player, start.state) is not None:
                armed.add((player, canonical_dumps(condition)))
    return armed


def _explicit_point(ruleset: Ruleset, text: Any) -> Point | None:
    try:
        return ruleset.parse_time(str(text))
    except ValueError:
        return None  # reported when the players file is read; never a silent match
