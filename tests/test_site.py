"""`pbem site DIR`: the game page as a static site — its files, its data split into chunks, what comes from
players kept as text, and every bad target refused with one line, exit 2 and nothing written. The page in a real
browser: tests/test_site_browser.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import Table, copy_table
from pbem.cli import app
from pbem.render import site
from pbem.render.html_log import GameLog, HandoffView

HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'


def pbem(repo: Path, *args: str) -> Any:
    old = Path.cwd()
    os.chdir(repo)
    try:
        return CliRunner().invoke(app, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def call(text: str, name: str) -> Any:
    """The arguments of a data file (`pbemSite.NAME(a, b);`) as JSON values."""
    head = f"pbemSite.{name}("
    assert text.startswith(head) and text.endswith(");\n"), text[:80]
    return json.loads(f"[{text[len(head):-3]}]")


@pytest.fixture(scope="module")
def duel_site(demo_games: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "duel"
    done = pbem(demo_games("tactical-duel"), "site", str(out))
    assert done.exit_code == 0, done.output
    assert done.output == f"wrote {out}/index.html: 57 commits; open it in a browser\n"
    return out


def test_the_site_has_a_page_a_script_an_index_chunks_and_each_map_once(duel_site: Path,
                                                                          demo_games: Any) -> None:
    names = {p.relative_to(duel_site).as_posix() for p in duel_site.rglob("*") if p.is_file()}
    assert {"index.html", "site.js", "site.css", "report.html", "data/index.js", "data/steps-0000.js",
            site.MARKER} <= names
    (index,) = call((duel_site / "data/index.js").read_text(), "start")
    rows = index["commits"]
    commits = subprocess.run(["git", "rev-list", "--reverse", "--first-parent", "HEAD"], check=True, text=True,
                             capture_output=True, cwd=demo_games("tactical-duel")).stdout.split()
    assert [r[0] for r in rows] == [c[:10] for c in commits]  # every commit, in history order
    assert rows[0][2] == "setting up" and rows[-1][2:] == ["the game is over", "", "over"]
    number, details = call((duel_site / "data/steps-0000.js").read_text(), "chunk")
    assert number == 0 and [d["oid"] for d in details] == commits
    shown = {d["map"] for d in details if d["map"]}
    assert shown == {n for n in names if n.startswith("maps/")}  # each map file is used, none is missing
    assert all((duel_site / m).read_text().lstrip().startswith(("<svg", "<?xml")) for m in shown)
    assert len(shown) < sum(1 for d in details if d["map"])  # a map drawn alike at two commits is one file
    # fed's turn 1 writes no speed (it comes sealed, in his allocation) and says who holds control after it
    fed = next(i for i, d in enumerate(details) if d["summary"].startswith("fed: closing"))
    assert details[fed]["lines"] == [] and details[fed]["note"] == "closing; my speed comes sealed, in my allocation"
    assert rows[fed][1:] == ["fed", "turn-01 · 1.0.alloc", "turn-01", "kli"]
    # a mid-turn speed change is a public entry: kli's commit shows its line
    kli = next(i for i, d in enumerate(details) if d["summary"].startswith("kli: more speed"))
    assert details[kli]["lines"] == ["1.25.activity kli D7: speed 16"] and rows[kli][1] == "kli"
    page = (duel_site / "index.html").read_text()
    assert '<script src="data/index.js"></script>' in page and "http" not in page  # nothing from elsewhere
    assert "Tactical duel: two cruisers close in" in page and "Federation (fed)" in page
    assert "CA sensor sweep" in (duel_site / "report.html").read_text()  # the whole report, dice and secrets


def view(number: int, note: str = "", svg: str | None = None) -> HandoffView:
    return HandoffView(number=number, oid=f"{number:040x}", actor="fed", summary=f"turn {number}", control="kli",
                       over=False, firm="1.2.move", pending=(), note=note, svg=svg, lines=(f"line {number}",),
                       period="turn-01")


def game_log(commits: tuple[HandoffView, ...], name: str = "Alice") -> GameLog:
    return GameLog(title="A game", game_id="g", ruleset="tactical/1", players=(("fed", name), ("kli", "Bob")),
                   standing=("kli holds control.",), firm="1.2.move", entries=(), dice=(), secrets=(),
                   commits=commits)


def test_a_long_game_is_split_into_chunks_of_commits_and_a_map_drawn_once_is_one_file() -> None:
    maps = ["<svg>a</svg>", "<svg>b</svg>", None]
    files = site.site_files(game_log(tuple(view(i + 1, svg=maps[i % 3]) for i in range(2 * site.CHUNK + 7))))
    chunks = sorted(p for p in files if p.startswith("data/steps-"))
    assert chunks == [site.chunk_name(n) for n in range(3)]
    sizes = [len(call(files[c], "chunk")[1]) for c in chunks]
    assert sizes == [site.CHUNK, site.CHUNK, 7]
    assert call(files[chunks[2]], "chunk")[1][6]["lines"] == [f"line {2 * site.CHUNK + 7}"]
    assert sorted(p for p in files if p.startswith("maps/")) == sorted(
        {d["map"] for c in chunks for d in call(files[c], "chunk")[1] if d["map"]})
    assert len([p for p in files if p.startswith("maps/")]) == 2


def test_markup_from_players_stays_data_in_every_file() -> None:
    """Names, notes and report lines reach the page as JSON set with textContent (site.js) or escaped HTML:
    no file holds them as markup."""
    files = site.site_files(game_log((view(1, note=HOSTILE),), name=HOSTILE))
    for path, text in files.items():
        if not path.startswith("maps/"):
            assert "<script>alert" not in text and "<img src=x" not in text, path
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in files["index.html"]
    details = call(files[site.chunk_name(0)], "chunk")[1]
    assert details[0]["note"] == HOSTILE  # the same text, only encoded
    assert "innerHTML" not in files["site.js"] and "insertAdjacentHTML" not in files["site.js"]


def test_a_note_with_markup_in_a_real_game_is_kept_as_text(base_played: Table, tmp_path: Path) -> None:
    table = copy_table(base_played, tmp_path / "table")
    done = table.turn("fed", note=HOSTILE, through="1.10.move")
    # the closing line of `pbem yield` names the pictures: the map and the game page
    assert done.output.splitlines()[-1] == ("pictures: the map now: pbem render --out board.svg; every commit with "
                                            "its map: pbem site game-site (then open game-site/index.html)")
    out = tmp_path / "site"
    done = pbem(table.repo_dir, "site", str(out))
    assert done.exit_code == 0, done.output
    (index,) = call((out / "data/index.js").read_text(), "start")
    details = call((out / "data/steps-0000.js").read_text(), "chunk")[1]
    assert details[-1]["note"] == HOSTILE and len(details) == len(index["commits"])
    assert all("<script>alert" not in p.read_text() for p in out.rglob("*.js"))


# --- bad input: one clear line, exit 2, nothing written ------------------------------------------------------

def refused(repo: Path, out: Path, rule: str, *extra: str) -> str:
    before = sorted(str(p) for p in out.parent.rglob("*")) if out.parent.exists() else []
    done = pbem(repo, "site", str(out), *extra)
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and f"[{rule}]" in lines[0], done.output
    after = sorted(str(p) for p in out.parent.rglob("*")) if out.parent.exists() else []
    assert after == before  # nothing written, no staging folder left
    return lines[0]


def test_a_game_point_that_does_not_exist_is_refused(demo_games: Any, tmp_path: Path) -> None:
    line = refused(demo_games("tactical-duel"), tmp_path / "site", "repo.bad-revision", "--at", "no-such-commit")
    assert "no-such-commit" in line


def test_an_output_path_that_cannot_be_written_is_refused(demo_games: Any, tmp_path: Path) -> None:
    repo = demo_games("tactical-duel")
    assert "does not exist" in refused(repo, tmp_path / "missing" / "site", "render.site-no-folder")
    (tmp_path / "a-file").write_text("mine\n")
    assert "is a file" in refused(repo, tmp_path / "a-file", "render.site-not-a-folder")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.txt").write_text("not a site\n")
    refused(repo, tmp_path / "mine", "render.site-not-empty")
    assert (tmp_path / "mine" / "thesis.txt").read_text() == "not a site\n"
    refused(repo, tmp_path / ("x" * 300), "render.site-cannot-write")  # a name longer than any file system takes


def test_a_site_written_before_is_replaced_whole(demo_games: Any, tmp_path: Path) -> None:
    repo, out = demo_games("tactical-duel"), tmp_path / "site"
    assert pbem(repo, "site", str(out), "--at", "HEAD~30").exit_code == 0
    (out / "maps" / "stale.svg").write_text("<svg/>")
    assert pbem(repo, "site", str(out)).exit_code == 0
    assert not (out / "maps" / "stale.svg").exists()
    (index,) = call((out / "data/index.js").read_text(), "start")
    assert len(index["commits"]) == 57
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no staging folder left beside it


def test_the_demo_s_closing_lines_name_its_picture_files(demo_games: Any) -> None:
    repo = demo_games("tactical-duel")
    folder = repo.parent
    line = next(line for line in demo_games.lines["tactical-duel"] if line.startswith("pictures: "))
    assert line == (f"pictures: the map now: {folder}/board.svg; every commit with its map: cd {repo} && pbem site "
                    f"{folder}/site (then open {folder}/site/index.html)")
    board = (folder / "board.svg").read_text()
    assert "<svg" in board[:300] and "the game is over" in board
    lines = demo_games.lines["tactical-duel"]
    assert lines.index(line) < next(i for i, t in enumerate(lines) if t.startswith("see it yourself"))
