"""Reading a game out loud: `pbem log` (the classic text report, seed 000 §3) and `pbem verify` output."""

from __future__ import annotations

from typing import Iterable

from pbem.errors import Finding
from pbem import text as escape
from pbem.services import results
from pbem.verify.history import HistoryResult

FIRM_MARKER = "<-- firm to here -->"


def log_text(result: HistoryResult) -> str:
    """The game report: who plays, every entry in game-time order with the firm marker, the handoffs and
    the current break status (seed 000 §3.C, §4.D)."""
    last = result.last
    if last is None:
        return "(no game here yet)\n"
    manifest = last.game.manifest
    ruleset = manifest.ruleset
    names = {s.id: s.name for s in manifest.seats}
    table = last.game.inputs.players if last.game.inputs.ordered_by_dice else tuple(s.id for s in manifest.seats)
    out = [f"{manifest.title} ({manifest.id}, {manifest.ruleset_name})",
           "Players, around the table" + (" (the order the start dice gave)" if last.game.inputs.ordered_by_dice
                                          else "") + ": " + ", ".join(f"{names[p]} ({p})" for p in table), ""]
    firm = last.stop.checkpoint.point if last.stop and not last.stop.over else None
    entries = sorted(last.game.inputs.entries, key=lambda e: (e.at, manifest.players.index(e.by)
                                                              if e.by in manifest.players else 99))
    period = None
    marked = False
    for entry in entries:
        if firm is not None and not marked and entry.at >= firm:
            out.append(FIRM_MARKER)
            marked = True
        if ruleset.period_of(entry.at) != period:
            period = ruleset.period_of(entry.at)
            out.append(f"[{period}]")
        what = " ".join(f"{k} {_plain(v)}" for k, v in entry.do.items())
        out.append(f"  {entry.at_text:<14} {entry.by:<8} {entry.unit or '':<6} {what}")
    if firm is not None and not marked:
        out.append(FIRM_MARKER)
    if ruleset.press is not None and last.stop is not None:  # Diplomacy: the orders are sealed, not entries
        from pbem.services.dow.chronicle import log_lines

        out.append("")
        out.append("Phases (orders as revealed, and what they did):")
        out.extend(f"  {line}" for line in log_lines(last))
    out.append("")
    out.append("Handoffs:")
    for c in result.commits:
        who = c.actor or "founder"
        nxt = ""
        if c.status is not None:
            nxt = " -> " + (c.status.control or "game over")
            if c.status.pending:
                nxt += f" ({c.status.pending[0].why})"
        out.append(f"  {c.oid[:10]} {who:<8} {c.summary}{nxt}")
    out.append("")
    status = last.game.status
    if status is None:
        out.append("Status: setting up (seats are being claimed)")
    elif status.over:
        from pbem.services.agreements import result as game_result

        ended = game_result(last.game)
        out.append("Status: the game is over" + (f" — {ended}" if ended else ""))
    else:
        firm_to = status.firm or "the end of play (what is owed is settled last)"
        out.append(f"Status: {status.control} in control; firm to {firm_to}")
        for b in status.pending:
            out.append(f"  break for {b.player}" + (f" at {b.at}" if b.at else "") + f": {b.why}")
        if status.note:
            out.append(f"  note from {status.yielded_by}: {status.note}")
    voids = last.stop.checkpoint.voids if last.stop is not None else ()
    if voids:
        out.append("")
        out.append("Void entries (others' later actions made them impossible; the game went on without them):")
        out.extend(f"  {v.text()}" for v in voids)
    if any(a.kind != "start" for a in last.game.agreements.values()):
        from pbem.services import agreements

        out.append("")
        out.append("Agreements (each takes effect with its last required signature):")
        out.extend(f"  {line}" for line in agreements.listing(last.game, last.nmrs))
    from pbem.services.chance import withheld_listing

    withheld = withheld_listing(last.game)
    if withheld:
        out.append("")
        out.append("Withheld (owed, never given, settled by an nmr, a resign or a seat change: what it hid is lost):")
        out.extend(f"  {line}" for line in withheld)
    fired = results.shots(last)
    if fired:
        out.append("")
        out.append("Shots (die, damage, and which shield or internals took it):")
        out.extend(f"  {line}" for line in fired)
    ending = results.outcome(last)
    if ending:
        out.append("")
        out.append(f"Outcome: {ending}")
    if last.stop is not None and ruleset.summary is not None:
        out.append("")
        out.append("Units at the end:" if last.stop.over else "Units at the firm point:")
        for unit in ruleset.summary.state_summary(last.stop.checkpoint.state):
            out.append("  " + "  ".join(f"{k}={v}" for k, v in unit.items()))
    # each line is ours, its values the repository's: a newline or ESC from the data is shown escaped
    return "\n".join(escape.terminal(line) for line in out) + "\n"


def _plain(value: object) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def findings_text(findings: Iterable[Finding], commits: int) -> str:
    findings = list(findings)
    if not findings:
        return f"ok: {commits} commits verified\n"
    lines = [f.text() for f in findings]
    lines.append(f"FAILED: {len(findings)} finding(s) in {commits} commits")
    return "\n".join(lines) + "\n"


def findings_json(findings: Iterable[Finding], commits: int) -> str:
    findings = list(findings)
    return escape.json_dumps({"format": escape.JSON_FORMAT, "ok": not findings, "commits": commits,
                              "findings": [f.as_record() for f in findings]}, indent=2) + "\n"


def findings_github(findings: Iterable[Finding], commits: int) -> str:
    """GitHub workflow commands: `::error file=F,line=L,title=RULE::message` (DESIGN §8), every value escaped
    (DESIGN §9: a newline in a file name must not start a command of its own)."""
    lines = []
    for f in findings:
        props = []
        if f.file:
            props.append(("file", f.file))
            props.append(("line", str(f.line or 1)))
        props.append(("title", f.rule))
        message = f.message + (f" (commit {f.commit[:10]})" if f.commit else "")
        lines.append(escape.annotation("error", props, message))
    lines.append(f"pbem verify: {commits} commits, {len(lines)} finding(s)")
    return "\n".join(lines) + "\n"
