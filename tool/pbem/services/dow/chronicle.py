"""What resolved Diplomacy phases did (`pbem results`, `pbem log`, the reveal that resolves a phase): who owed and
sealed, the orders revealed, the press recognised, the results (DESIGN §4.7, §7.2).

The chronicle never resolves a phase itself: it observes replay (protocol.replay, its `observer`) resolving them,
so what it tells is what replay did, and words it with what the ruleset recognised of each message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pbem.errors import PbemError
from pbem.protocol.model import AT, CONDITION, Checkpoint, Resolved
from pbem.protocol.replay import replay, start_checkpoint
from pbem.rulesets.base import Event, Point, Press
from pbem.rulesets.dow.press import describe_message
from pbem.services.dow.press import changes_text
from pbem.services.dow.seat import press_of
from pbem.services.workspace import Workspace
from pbem.protocol.game import Game
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import effects_of, excused_by_nmr


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
    # the state the phase's orders met (its press recognised) and the state it made: what its maps are drawn on
    before: Any = field(default=None, compare=False, repr=False)
    after: Any = field(default=None, compare=False, repr=False)

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


class _Enough(Exception):
    """The chronicle has seen the phases it was asked for: it ends the replay it observes there."""


def chronicle(game: Game, point: Point | None, state: Any, until: Point | None,
              gone_at: Sequence[tuple[str, str, Point]] = (), fresh: bool = False
              ) -> tuple[list[PhaseReport], tuple[Point | None, Any]]:
    """Tell what each phase from (`point`, `state`) up to `until` (exclusive; None: as far as the revealed orders
    go) did, as replay resolves them (protocol.replay, observed: the powers owing at the phase, their revealed
    orders, the press sent during it recognised in the order of the commits that added it, then the phase;
    `gone_at` as replay has them, `fresh`: `state` carries none at `point`). Stops at a phase not all revealed; a
    break condition met on the way is passed (nobody is served here). Returns the reports and where it stopped."""
    ruleset, setup = game.manifest.ruleset, game.manifest.setup
    press = press_of(ruleset)
    inputs = excused_by_nmr(game, gone_at).inputs
    effects = due = effects_of(ruleset, gone_at, None if fresh else point)
    reports: list[PhaseReport] = []
    at: tuple[Point | None, Any] = (point, state)

    def observe(step: Resolved) -> None:
        nonlocal at
        reports.append(_report(game, press, step))
        at = (ruleset.next_step(setup, step.point), step.after)
        if at[0] is None or (until is not None and at[0] >= until) or ruleset.is_over(step.after):
            raise _Enough

    while at[0] is not None and (until is None or at[0] < until) and not ruleset.is_over(at[1]):
        try:
            stop = replay(ruleset, setup, inputs, Checkpoint(at[0], at[1]), None, effects=due, observer=observe)
        except _Enough:
            break
        if stop.over or not stop.pending or any(b.kind not in (AT, CONDITION) for b in stop.pending):
            if not stop.over:  # waiting at a phase for what it owes: told up to there
                at = (stop.checkpoint.point, stop.checkpoint.state)
            break
        resume = at[0]  # replay stopped for a break condition met after a phase: on from the next one
        due = [e for e in effects if resume is not None and e[0] >= resume]
    return reports, at


def _report(game: Game, press: Press, step: Resolved) -> PhaseReport:
    """One resolved phase told: its press recognised one message at a time from the state it began in, for
    what each message changed (replay recognised them together)."""
    ruleset = game.manifest.ruleset
    when = ruleset.format_time(step.point)
    sealed = [a for a in step.actions if a.source in ("sealed", "opened")]
    state, lines = step.begun, []
    for message in game.inputs.press.get(when, ()):
        before = state
        state, refusal = press.recognise(state, message.body, message.by)
        changes = press.relations(before).recognised.changes_to(press.relations(state).recognised)
        lines.append(PressLine(message.body, str(refusal) if refusal else None, tuple(changes)))
    positions = ruleset.positions
    units = (_unit_changes(positions.position(step.before), positions.position(step.after))
             if positions is not None and step.point[2] in (2, 3) else ())
    outcome = getattr(step.after, "outcome", None) if ruleset.is_over(step.after) else None
    return PhaseReport(when, tuple(a.by for a in sealed), {a.by: tuple(a.do.get("orders", ())) for a in sealed},
                       tuple(lines), step.events, units, outcome,
                       tuple(a.by for a in sealed if a.do.get("draw") is True), step.before, step.after)


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
    if ruleset.press is None:
        raise PbemError("usage.not-diplomacy", f"this game plays {ruleset.name}: `pbem log` tells its story")
    wanted = None
    if phase is not None:
        try:
            wanted = ruleset.format_time(ruleset.parse_time(phase))
        except ValueError as err:
            raise PbemError("usage.bad-phase", f"{phase!r}: {err}") from None
    reports = told(head)
    if wanted is not None:
        reports = [r for r in reports if r.phase == wanted]
        if not reports:
            raise PbemError("usage.bad-phase", f"{wanted} has not been resolved (the game is at "
                            f"{head.status.firm if head.status else '?'})")
    return reports


def told(head: Verified) -> list[PhaseReport]:
    """Every phase resolved up to HEAD's firm point, re-adjudicated from the game start: revealed orders, press,
    results; the phases an nmr settled and those after a resignation included."""
    game = head.game
    ruleset = game.manifest.ruleset
    assert head.stop is not None
    start = start_checkpoint(ruleset, game.manifest.setup, game.manifest.players)
    until = None if head.stop.over else head.stop.checkpoint.point
    return chronicle(game, start.point, start.state, until, head.gone_at, fresh=True)[0]


def log_lines(head: Verified) -> list[str]:
    """`pbem log` for a Diplomacy game: every resolved phase with its orders and results, press left out (the
    press files hold it, `pbem results` shows both)."""
    return [line for report in told(head) for line in report.lines(press=False)]
