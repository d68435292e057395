"""The script and style sheet of `pbem site` (data: see pbem.render.site for the files they read).

The script sets everything it shows as text (`textContent`), never as markup: names, notes and report lines come
from players. `document.body.dataset.ready` turns "yes" once a commit's details and map are shown (the browser
tests and bench/site_bench.py wait for it).
"""

from __future__ import annotations

from pbem.render.html_log import STYLE as PAGE_STYLE

SCRIPT = r""""use strict";
(function () {
  var site = { index: null, chunks: {}, waiting: {}, at: -1, periods: [] };
  window.pbemSite = site;
  function $(id) { return document.getElementById(id); }

  site.chunk = function (number, rows) {
    site.chunks[number] = rows;
    (site.waiting[number] || []).forEach(function (then) { then(); });
    delete site.waiting[number];
  };

  function load(number, then) {
    if (site.chunks[number]) { then(); return; }
    if (site.waiting[number]) { site.waiting[number].push(then); return; }
    site.waiting[number] = [then];
    var script = document.createElement("script");
    script.src = "data/steps-" + String(number).padStart(4, "0") + ".js";
    script.onerror = function () {
      problem("The data file " + script.getAttribute("src") + " is missing: write the site again (pbem site).");
    };
    document.head.appendChild(script);
  }

  function problem(message) { var p = $("problem"); p.textContent = message; p.hidden = !message; }

  function text(id, value) { var el = $(id); el.textContent = value; el.hidden = !value; }

  function list(id, items, empty) {
    var el = $(id);
    while (el.firstChild) { el.removeChild(el.firstChild); }
    (items.length ? items : (empty ? [empty] : [])).forEach(function (item) {
      var li = document.createElement("li");
      li.textContent = item;
      if (!items.length) { li.className = "none"; }
      el.appendChild(li);
    });
  }

  function show(i) {
    var rows = site.index.commits;
    if (!rows.length) { return; }
    i = Math.max(0, Math.min(rows.length - 1, i));
    site.at = i;
    var row = rows[i], actor = row[1], step = row[2], period = row[3], control = row[4];
    document.body.dataset.ready = "no";
    document.body.dataset.commit = String(i + 1);
    $("slider").value = String(i + 1);
    $("position").textContent = "commit " + (i + 1) + " of " + rows.length;
    $("heading").textContent = (i + 1) + ". " + actor + " · " + step;
    if (period) { $("period").value = period; }
    $("control").textContent = control === "over" ? "→ the game is over"
      : control ? "→ " + control + " holds control" : "setting up: nobody holds control yet";
    try { history.replaceState(null, "", "#" + (i + 1)); } catch (e) { /* some hosts refuse: the page works on */ }
    var size = site.index.chunk, number = Math.floor(i / size);
    load(number, function () { if (site.at === i) { detail(site.chunks[number][i % size], i); } });
    if (i % size >= size - 5 && (number + 1) * size < rows.length) { load(number + 1, function () {}); }
    if (i % size < 5 && number > 0) { load(number - 1, function () {}); }
  }

  function detail(d, i) {
    $("oid").textContent = d.oid.slice(0, 10) + " · " + d.summary;
    text("note", d.note ? "“" + d.note + "”" : "");
    if (d.firm && site.index.commits[i][4] !== "over") {
      $("control").textContent += "; firm to " + d.firm;
    }
    list("pending", d.pending, "");
    list("findings", d.findings, "");
    list("lines", d.lines, "none: this commit wrote no report line");
    var img = $("map-img");
    $("no-map").hidden = !!d.map;
    if (!d.map) { img.hidden = true; img.removeAttribute("src"); document.body.dataset.ready = "yes"; return; }
    img.hidden = false;
    if (img.getAttribute("src") === d.map && img.complete) { document.body.dataset.ready = "yes"; return; }
    img.onload = function () { if (site.at === i) { document.body.dataset.ready = "yes"; } };
    img.onerror = function () { problem("The map " + d.map + " is missing: write the site again (pbem site)."); };
    img.setAttribute("src", d.map);
  }

  function turn(direction) {
    var starts = site.periods.map(function (p) { return p[1]; }), at = site.at;
    if (direction > 0) {
      var later = starts.filter(function (s) { return s > at; });
      show(later.length ? later[0] : site.index.commits.length - 1);
    } else {
      var earlier = starts.filter(function (s) { return s < at; });
      show(earlier.length ? earlier[earlier.length - 1] : 0);
    }
  }

  var KEYS = { ArrowLeft: function () { show(site.at - 1); }, ArrowRight: function () { show(site.at + 1); },
               Home: function () { show(0); }, End: function () { show(site.index.commits.length - 1); },
               PageUp: function () { turn(-1); }, PageDown: function () { turn(1); } };

  site.start = function (index) {
    site.index = index;
    var rows = index.commits, select = $("period"), seen = {};
    rows.forEach(function (row, i) {
      if (row[3] && !(row[3] in seen)) {
        seen[row[3]] = i;
        site.periods.push([row[3], i]);
        var option = document.createElement("option");
        option.value = row[3];
        option.textContent = row[3];
        select.appendChild(option);
      }
    });
    $("slider").max = String(Math.max(rows.length, 1));
    $("slider").addEventListener("input", function () { show(Number($("slider").value) - 1); });
    select.addEventListener("change", function () { show(seen[select.value]); });
    $("first").onclick = KEYS.Home; $("last").onclick = KEYS.End;
    $("prev").onclick = KEYS.ArrowLeft; $("next").onclick = KEYS.ArrowRight;
    $("prev-turn").onclick = KEYS.PageUp; $("next-turn").onclick = KEYS.PageDown;
    document.addEventListener("keydown", function (event) {
      if (event.target === select || event.altKey || event.ctrlKey || event.metaKey) { return; }
      var act = KEYS[event.key];
      if (act) { event.preventDefault(); act(); }
    });
    if (!rows.length) { problem("This game has no commits yet."); document.body.dataset.ready = "yes"; return; }
    window.addEventListener("hashchange", function () { showHash(site.at); });
    showHash(rows.length - 1);
  };

  // "#N" opens commit N; anything else there is named and the page shows `otherwise` instead
  function showHash(otherwise) {
    var rows = site.index.commits, hash = location.hash;
    var wanted = /^#[0-9]+$/.test(hash) ? Number(hash.slice(1)) : null;
    problem("");
    if (hash && hash !== "#" && (wanted === null || wanted < 1 || wanted > rows.length)) {
      problem("There is no commit " + hash.slice(1) + " in this game: it has " + rows.length + " commits. "
              + (otherwise === rows.length - 1 ? "Showing the last." : "Showing commit " + (otherwise + 1) + "."));
      wanted = null;
    }
    if (wanted === null || wanted - 1 !== site.at) { show(wanted === null ? otherwise : wanted - 1); }
  }
})();
"""

STYLE = PAGE_STYLE + """
#controls { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 14px 0 8px; }
#controls button { font-size: 16px; min-width: 34px; padding: 3px 8px; }
#slider { flex: 1 1 320px; }
#position { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; color: #555; }
#problem { background: #ffe3e3; color: #8a0018; padding: 6px 12px; border-left: 6px solid #b00020; }
#step { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
#map { flex: 3 1 560px; min-height: 200px; background: #fff; border: 1px solid #d5d0c4; border-radius: 6px;
  padding: 8px; }
#map img { max-width: 100%; max-height: calc(100vh - 40px); width: auto; height: auto; display: block;
  margin: 0 auto; }
#info { flex: 2 1 320px; background: #fff; border: 1px solid #d5d0c4; border-radius: 6px; padding: 10px 16px; }
#info h2 { margin-top: 4px; font-size: 19px; }
#info h3 { font-size: 15px; margin: 14px 0 4px; }
#info ul { margin: 4px 0; padding-left: 20px; font-size: 14px; }
#lines li { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; }
li.none { color: #777; list-style: none; margin-left: -20px; }
.oid { font-family: "DejaVu Sans Mono", monospace; color: #555; font-size: 13px; }
.note { font-style: italic; }
.finding { color: #b00020; font-weight: bold; }
header a { color: #cfe3ff; }
#info details summary { font-weight: bold; font-size: 15px; margin: 14px 0 4px; cursor: pointer; }
"""
