"""`pbem log --html`: the whole game as one self-contained HTML page (seed 000 §3: the game report).

The page holds, from top to bottom: who plays; where the game stands (control, firm point, pending breaks, the
last note); the report, entry by entry in game-time order (revealed sealed inputs, such as Diplomacy orders,
among them), with the `<-- firm to here -->` marker; the press; the dice batches with their purposes and
results; the sealed secrets (their content once revealed); and every handoff — who yielded, his note, who got
control and why — each with the map at that point, drawn inline as SVG.

Self-contained: no scripts, fonts, images or style sheets from elsewhere; it opens from a file, a mail or a CI
artifact. `html_page` is a pure function of `GameLog`, which `pbem.services.pictures` gathers from history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape
from typing import Sequence

FIRM_MARKER = "<-- firm to here -->"  # the seed's words; the same line `pbem log` prints


@dataclass(frozen=True)
class EntryRow:
    """One report entry: `firm` when it lies before the firm point (no commit may change it)."""

    at: str
    by: str
    unit: str
    what: str
    period: str
    firm: bool


@dataclass(frozen=True)
class PressRow:
    """One press message (Diplomacy global chat), in recognition order."""

    channel: str
    at: str
    by: str
    text: str


@dataclass(frozen=True)
class DiceRow:
    """One dice batch: its purposes in order and, once rolled, the results."""

    id: str
    roller: str
    mode: str
    sides: int
    purposes: tuple[str, ...]
    results: tuple[int, ...] | None
    void: str | None = None  # the reason, for a voided batch
    at: str = ""


@dataclass(frozen=True)
class SecretRow:
    """One sealed secret: what it concerns, when it is due, and its content once revealed."""

    id: str
    owner: str
    kind: str
    concerns: str
    due: str
    revealed: bool
    content: str = ""


@dataclass(frozen=True)
class HandoffView:
    """One commit of the game: who made it, what he said, who holds control after it, and the map then."""

    number: int
    oid: str
    actor: str
    summary: str
    control: str | None  # None: setting up (no status yet) or the game is over (see `over`)
    over: bool
    firm: str | None
    pending: tuple[str, ...]  # "kli at 1.14.move: range 8: …", in serving order
    note: str = ""
    svg: str | None = None
    findings: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()  # the report lines this commit wrote ("2.3.move kli D7: move 4")
    period: str = ""  # the turn or phase of its firm point ("turn 2", "1901")

    @property
    def is_handoff(self) -> bool:
        """A commit of the game in play (it carries a status), as opposed to one of the setting up."""
        return self.control is not None or self.over


@dataclass(frozen=True)
class GameLog:
    """Everything the page shows."""

    title: str
    game_id: str
    ruleset: str
    players: tuple[tuple[str, str], ...]  # (id, name) in table order
    standing: tuple[str, ...]  # where the game stands now, line by line
    firm: str | None  # None while setting up and once the game is over
    entries: tuple[EntryRow, ...]
    dice: tuple[DiceRow, ...]
    secrets: tuple[SecretRow, ...]
    commits: tuple[HandoffView, ...]
    tip: str = ""
    text: str = ""  # the classic text report (`pbem log`)
    units: tuple[tuple[str, ...], ...] = ()  # a table of the units at the firm point: header row first
    colours: dict[str, str] = field(default_factory=dict)  # player -> colour, as on the maps
    press: tuple[PressRow, ...] = ()
    over: bool = False
    shots: tuple[str, ...] = ()  # each scored shot: die, damage, which shield or internals took it
    outcome: str | None = None  # who won, once the game is over


STYLE = """
body { font-family: "DejaVu Sans", Verdana, sans-serif; margin: 0; background: #f7f5ef; color: #1d1d1d; }
header { background: #23313f; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px; font-size: 26px; }
header p { margin: 2px 0; color: #d8dee6; }
main { padding: 12px 28px 40px; max-width: 1320px; }
h2 { border-bottom: 2px solid #23313f; padding-bottom: 3px; margin-top: 28px; }
table { border-collapse: collapse; margin: 6px 0 10px; background: #fff; }
th, td { border: 1px solid #d5d0c4; padding: 3px 9px; text-align: left; vertical-align: top; font-size: 14px; }
th { background: #ece8dc; }
tr.firm td { color: #555; }
tr.period td { background: #e6e2d5; font-weight: bold; }
tr.firm-marker td { background: #ffe9a8; color: #7a4b00; font-weight: bold; text-align: center;
  font-family: "DejaVu Sans Mono", monospace; letter-spacing: 1px; }
.standing { background: #fff; border-left: 6px solid #d08c00; padding: 8px 14px; margin: 10px 0; }
.standing p { margin: 3px 0; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 5px;
  vertical-align: -1px; }
.handoff { background: #fff; border: 1px solid #d5d0c4; border-radius: 6px; margin: 16px 0; padding: 10px 16px; }
.handoff h3 { margin: 2px 0 6px; font-size: 17px; }
.handoff .oid { font-family: "DejaVu Sans Mono", monospace; color: #777; font-size: 13px; }
.handoff .then { margin: 4px 0; }
.handoff .note { font-style: italic; color: #333; }
.handoff .finding { color: #b00020; font-weight: bold; }
.map svg { max-width: 100%; height: auto; display: block; margin-top: 8px; }
.setup { color: #555; font-size: 14px; }
nav a { margin-right: 6px; font-size: 13px; }
pre { background: #fff; border: 1px solid #d5d0c4; padding: 10px; overflow-x: auto; font-size: 13px; }
.sealed { color: #777; font-style: italic; }
"""


def html_page(log: GameLog) -> str:
    """The page as one HTML document (UTF-8, no external resources)."""
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{escape(log.title)} ({escape(log.game_id)})</title>",
           f"<style>{STYLE}</style>", "</head>", "<body>", "<header>",
           f"<h1>{escape(log.title)}</h1>",
           f"<p>{escape(log.game_id)} · {escape(log.ruleset)}" + (f" · at {escape(log.tip[:10])}" if log.tip else "")
           + "</p>",
           "<p>Players, around the table: " + ", ".join(_player(pid, name, log.colours) for pid, name in log.players)
           + "</p>", "</header>", "<main>"]
    out += ['<section id="standing"><h2>Where the game stands</h2><div class="standing">']
    if log.outcome:
        out += [f'<p class="outcome"><strong>Outcome: {escape(log.outcome)}</strong></p>']
    out += [f"<p>{escape(line)}</p>" for line in log.standing]
    out += ["</div>"]
    if log.units:
        out += _table(log.units[0], log.units[1:])
    out += ["</section>"]
    out += _report(log)
    if log.shots:
        out += ['<section id="shots"><h2>Shots</h2><p class="setup">Each scored shot: the die, the damage, and which '
                "shield or internals took it.</p><ul>"]
        out += [f"<li>{escape(shot)}</li>" for shot in log.shots]
        out += ["</ul></section>"]
    if log.press:
        out += ['<section id="press"><h2>Press</h2>']
        out += _table(("channel", "at", "by", "message"), [(p.channel, p.at, p.by, p.text) for p in log.press])
        out += ["</section>"]
    out += _dice(log.dice)
    out += _secrets(log.secrets)
    out += _handoffs(log.commits)
    if log.text:
        out += ['<section id="text"><h2>The report as text</h2>', "<details><summary>pbem log</summary>",
                f"<pre>{escape(log.text)}</pre>", "</details></section>"]
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


def _player(pid: str, name: str, colours: dict[str, str]) -> str:
    swatch = f'<span class="swatch" style="background:{colours[pid]}"></span>' if pid in colours else ""
    return f"{swatch}{escape(name)} ({escape(pid)})"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["<table>", "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows]
    out.append("</table>")
    return out


def _report(log: GameLog) -> list[str]:
    out = ['<section id="report"><h2>The report</h2>']
    if log.firm is None:
        out.append("<p>The game is over: every entry is firm.</p>" if log.over else
                   "<p>The game has not started yet.</p>")
    else:
        out.append(f"<p>Entries before {escape(log.firm)} are firm: no commit may change them. Those from the "
                   "marker on may still be rewritten by their owners.</p>")
    out += ["<table>", "<tr><th>at</th><th>by</th><th>unit</th><th>action</th></tr>"]
    period = None
    marked = log.firm is None  # no marker before the start, nor once everything is firm
    for entry in log.entries:
        if not marked and not entry.firm:
            out.append(_marker())
            marked = True
        if entry.period != period:
            period = entry.period
            out.append(f'<tr class="period"><td colspan="4">{escape(period)}</td></tr>')
        css = ' class="firm"' if entry.firm else ""
        out.append(f"<tr{css}><td>{escape(entry.at)}</td><td>{escape(entry.by)}</td><td>{escape(entry.unit)}</td>"
                   f"<td>{escape(entry.what)}</td></tr>")
    if not marked:
        out.append(_marker())
    out += ["</table>", "</section>"]
    return out


def _marker() -> str:
    return f'<tr class="firm-marker" id="firm"><td colspan="4">{escape(FIRM_MARKER)}</td></tr>'


def _dice(batches: Sequence[DiceRow]) -> list[str]:
    out = ['<section id="dice"><h2>Dice</h2>']
    if not batches:
        return out + ["<p>No dice were rolled.</p>", "</section>"]
    rows = []
    for b in batches:
        results = list(b.results or ())
        for j, purpose in enumerate(b.purposes):
            result = str(results[j]) if j < len(results) else ("void" if b.void else "not rolled yet")
            rows.append((b.id if j == 0 else "", b.roller if j == 0 else "",
                         f"{b.mode}, d{b.sides}" if j == 0 else "", purpose, result))
        if b.void:
            rows.append(("", "", "", f"voided: {b.void}", ""))
    return out + _table(("batch", "roller", "mode", "for", "result"), rows) + ["</section>"]


def _secrets(secrets: Sequence[SecretRow]) -> list[str]:
    out = ['<section id="secrets"><h2>Secrets</h2>']
    if not secrets:
        return out + ["<p>No secrets were sealed.</p>", "</section>"]
    out += ["<table>", "<tr><th>secret</th><th>owner</th><th>kind</th><th>concerns</th><th>due</th>"
            "<th>content</th></tr>"]
    for s in secrets:
        content = (f"<td>{escape(s.content)}</td>" if s.revealed
                   else '<td class="sealed">sealed (the owner reveals it when due)</td>')
        out.append(f"<tr><td>{escape(s.id)}</td><td>{escape(s.owner)}</td><td>{escape(s.kind)}</td>"
                   f"<td>{escape(s.concerns)}</td><td>{escape(s.due)}</td>{content}</tr>")
    return out + ["</table>", "</section>"]


def _handoffs(commits: Sequence[HandoffView]) -> list[str]:
    out = ['<section id="handoffs"><h2>Handoffs</h2>']
    setup = [c for c in commits if not c.is_handoff]
    turns = [c for c in commits if c.is_handoff]
    if setup:
        out.append('<p class="setup">Setting up: ' + "; ".join(
            f'<span class="oid">{escape(c.oid[:10])}</span> {escape(c.actor)}: {escape(c.summary)}' for c in setup)
                   + "</p>")
    if turns:
        out.append("<nav>" + " ".join(f'<a href="#handoff-{c.number}">{c.number}</a>' for c in turns) + "</nav>")
    seen: dict[str, int] = {}
    for c in turns:
        out.append(f'<article class="handoff" id="handoff-{c.number}" data-oid="{escape(c.oid)}">')
        out.append(f'<h3>{c.number}. {escape(c.actor)}: {escape(c.summary)} <span class="oid">{escape(c.oid[:10])}'
                   "</span></h3>")
        if c.note:
            out.append(f'<p class="note">“{escape(c.note)}”</p>')
        if c.over:
            out.append('<p class="then">→ the game is over</p>')
        else:
            out.append(f'<p class="then">→ <b>{escape(c.control or "")}</b> holds control; firm to '
                       f'{escape(c.firm or "")}</p>')
            if c.pending:
                out.append("<ul>" + "".join(f"<li>{escape(p)}</li>" for p in c.pending) + "</ul>")
        out += [f'<p class="finding">{escape(f)}</p>' for f in c.findings]
        if c.svg:
            out.append(f'<div class="map">{_inline(c.svg, c.number, seen)}</div>')
        out.append("</article>")
    return out + ["</section>"]


_SVG_OPEN = re.compile(r"<svg\b[^>]*>")


def _inline(svg: str, number: int, seen: dict[str, int]) -> str:
    """An SVG document as inline HTML. A map equal to an earlier one on the page is not repeated: an inline
    <svg> of the same size shows the earlier drawing by reference (long games hand over often without moving)."""
    svg = svg[svg.index("<svg"):].strip()
    opening = _SVG_OPEN.match(svg)
    if opening is None:
        raise ValueError("not an SVG document")
    if svg in seen:
        return (f'{opening.group(0)}<desc>the same map as at handoff {seen[svg]}</desc>'
                f'<use href="#map-{seen[svg]}"/></svg>')
    seen[svg] = number
    end = svg.rindex("</svg>")
    return f'{opening.group(0)}<g id="map-{number}">{svg[opening.end():end]}</g></svg>'
