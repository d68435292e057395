"""`pbem site DIR`: the game as a small static site that steps through every commit (seed 000 §3: the report).

The files, all relative to each other so the folder opens from disk (file://), from a CI artifact or from any
static host (GitHub Pages) as it is:

* `index.html` — the page: a slider and keys (←/→ one commit, PageUp/PageDown one turn or phase, Home/End)
  through every commit, with the map, the report lines the commit wrote, who made it, his note and who held
  control after it. `#N` in the address opens commit N.
* `site.js` and `site.css` — how the page steps; no script or style from elsewhere.
* `data/index.js` — one short row per commit (who, the step, who held control), read at once.
* `data/steps-NNNN.js` — the rest of each commit, `CHUNK` commits to a file, read when the slider reaches it.
  Loaded as scripts (JSONP: each file calls `pbemSite.chunk`), since browsers refuse fetch() of file:// pages.
* `maps/<digest>.svg` — each distinct map once, shown as an image only when its commit is shown.
* `report.html` — the whole report, dice, secrets and press as `pbem log --html` shows them.
* `.pbem-site` (MARKER) names the folder as one `pbem site` wrote; `.nojekyll` has GitHub Pages serve it as is.

Everything from players (names, notes, report lines, findings) reaches the page as data and is set as text, never
as markup (`textContent`); a map is shown as an image, where no script of it can run. `site_files` is a pure
function of `GameLog`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from html import escape
from typing import Any

from pbem.render import html_log
from pbem.render.html_log import GameLog, HandoffView
from pbem.render.site_assets import SCRIPT, STYLE

CHUNK = 100  # commits per data file: a 2,000-commit game reads 20 of them, each well under 100 kB
MARKER = ".pbem-site"  # names a folder this module wrote, which `pbem site` may replace


def site_files(log: GameLog) -> dict[str, str]:
    """Every file of the site, by path relative to its folder."""
    files: dict[str, str] = {}
    maps: dict[str, str] = {}  # svg text -> its file
    rows: list[list[Any]] = []
    details: list[dict[str, Any]] = []
    for c in log.commits:
        name = None
        if c.svg:
            name = maps.get(c.svg)
            if name is None:
                name = f"maps/{hashlib.sha256(c.svg.encode()).hexdigest()[:20]}.svg"
                maps[c.svg] = name
                files[name] = c.svg
        rows.append([c.oid[:10], c.actor, _step(c), c.period, "over" if c.over else (c.control or "")])
        details.append({"oid": c.oid, "summary": c.summary, "note": c.note, "firm": c.firm or "",
                        "pending": list(c.pending), "findings": list(c.findings), "lines": list(c.lines),
                        "map": name})
    for start in range(0, len(details), CHUNK):
        files[chunk_name(start // CHUNK)] = _jsonp("chunk", start // CHUNK, details[start:start + CHUNK])
    files["data/index.js"] = _jsonp("start", {"title": log.title, "game": log.game_id, "chunk": CHUNK,
                                              "commits": rows})
    files["index.html"] = _index(log)
    files["site.js"] = SCRIPT
    files["site.css"] = STYLE
    files["report.html"] = html_log.html_page(replace(log, commits=()))
    files[MARKER] = "written by pbem site: the folder is replaced as a whole when the site is written again\n"
    files[".nojekyll"] = ""  # GitHub Pages serves the files as they are
    return files


def chunk_name(number: int) -> str:
    return f"data/steps-{number:04d}.js"


def _step(c: HandoffView) -> str:
    if c.over:
        return "the game is over"
    if c.firm is None:
        return "after the play: reveals owed" if c.control else "setting up"
    return f"{c.period} · {c.firm}" if c.period and c.period not in c.firm else c.firm


def _jsonp(call: str, *args: Any) -> str:
    # ensure_ascii: U+2028/U+2029 and every other non-ASCII character escaped, so the file is valid script; < > &
    # escaped too, so no player's text reads as markup even where the file is pasted into a page
    body = ", ".join(json.dumps(a, ensure_ascii=True, separators=(",", ":")) for a in args)
    body = body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"pbemSite.{call}({body});\n"


def _index(log: GameLog) -> str:
    players = ", ".join(
        (f'<span class="swatch" style="background:{escape(log.colours[pid])}"></span>' if pid in log.colours else "")
        + f"{escape(name)} ({escape(pid)})" for pid, name in log.players)
    standing = "".join(f"<p>{escape(line)}</p>" for line in log.standing)
    if log.outcome:
        standing = f"<p><strong>Outcome: {escape(log.outcome)}</strong></p>" + standing
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(log.title)} ({escape(log.game_id)})</title>
<link rel="stylesheet" href="site.css">
</head>
<body>
<header>
<h1>{escape(log.title)}</h1>
<p>{escape(log.game_id)} · {escape(log.ruleset)}{f" · at {escape(log.tip[:10])}" if log.tip else ""}
 · <a href="report.html">the whole report, dice and secrets</a></p>
<p id="players">Players, around the table: {players}</p>
</header>
<main>
<nav id="controls" aria-label="step through the game">
<button id="first" title="the first commit (Home)">|‹</button>
<button id="prev-turn" title="the turn or phase before (PageUp)">«</button>
<button id="prev" title="the commit before (←)">‹</button>
<input type="range" id="slider" min="1" max="{max(len(log.commits), 1)}" value="{max(len(log.commits), 1)}"
 aria-label="commit">
<button id="next" title="the next commit (→)">›</button>
<button id="next-turn" title="the next turn or phase (PageDown)">»</button>
<button id="last" title="the last commit (End)">›|</button>
<label>Turn or phase <select id="period"></select></label>
<span id="position"></span>
</nav>
<p id="problem" hidden></p>
<section id="step">
<div id="map"><img id="map-img" alt="the map at this commit" hidden><p id="no-map" hidden>No map at this commit
 (setting up).</p></div>
<div id="info">
<h2 id="heading"></h2>
<p id="oid" class="oid"></p>
<p id="note" class="note"></p>
<p id="control" class="then"></p>
<ul id="pending"></ul>
<ul id="findings" class="finding"></ul>
<h3>Report lines of this commit</h3>
<ul id="lines"></ul>
<details><summary>Where the game stands now</summary>
<div class="standing">{standing}</div></details>
</div>
</section>
<noscript><p>This page steps through the game with a script; without one, read
 <a href="report.html">the whole report</a>.</p></noscript>
</main>
<script src="site.js"></script>
<script src="data/index.js"></script>
</body>
</html>
"""
