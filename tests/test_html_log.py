"""`pbem log --html` (issue 6 point 5): one self-contained page of the game — the report with the firm marker,
dice, secrets, and the map at each handoff — checked by parsing it, and by a real headless Chromium (Debian's
`chromium`) taking a screenshot, kept in the test artifacts ($PBEM_TEST_ARTIFACTS, else the test's tmp folder).

The game is the demo duel (games/tactical-duel/demo.yaml) seen at HEAD~20, mid-game: fed holds control, so the
page has a firm marker, two dice batches and a revealed secret.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.render.html_log import FIRM_MARKER
from pbem.services.demo import run_demo
from screens import decode_png

AT = "HEAD~20"  # mid turn 2 (the demo plays on to the D7 disengaging in turn 3, then opens the allocations)
BROWSERS = ("chromium", "chromium-browser")


@pytest.fixture(scope="module")
def duel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo duel, played once for this module; returns its repository."""
    root = tmp_path_factory.mktemp("duel")
    assert run_demo(root, "tactical-duel", lambda _line: None) == 0
    return root / "game"


def pbem(repo: Path, *args: str) -> Any:
    old = Path.cwd()
    os.chdir(repo)
    try:
        return CliRunner().invoke(app, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def page(duel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("page") / "game.html"
    done = pbem(duel, "log", "--html", "--at", AT, "--out", str(out))
    assert done.exit_code == 0, done.output
    assert f"wrote {out}" in done.output
    return out


class Page(HTMLParser):
    """What the test needs from the page: text, handoff articles and the <svg> inside each, resources."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.handoffs: list[dict[str, Any]] = []
        self.external: list[str] = []
        self.scripts = 0
        self._article_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "article" and "handoff" in (a.get("class") or ""):
            self.handoffs.append({"id": a.get("id"), "oid": a.get("data-oid"), "svgs": 0})
        if tag == "svg" and self.handoffs:
            self.handoffs[-1]["svgs"] += 1
        if tag == "script":
            self.scripts += 1
        for name in ("src", "href"):
            value = a.get(name) or ""
            if value and not value.startswith("#"):
                self.external.append(f"{tag} {name}={value}")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def read(page: Path) -> Page:
    parsed = Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    parsed.close()
    return parsed


def test_the_page_has_the_report_with_the_firm_marker_dice_secrets_and_a_map_per_handoff(duel: Path,
                                                                                       page: Path) -> None:
    parsed = read(page)
    text = "\n".join(parsed.text)
    assert text.count(FIRM_MARKER) >= 1  # in the report table (and in the text report below it)
    assert "Entries before 1.0.alloc are firm" not in text and "Entries before 2.7.move are firm" in text
    # every commit with a status is a handoff, in history order, each with its own map
    commits = git(duel, "rev-list", "--reverse", "--first-parent", AT).stdout.split()
    expected = [c for c in commits if git(duel, "cat-file", "-e", f"{c}:status.yaml").returncode == 0]
    assert [h["oid"] for h in parsed.handoffs] == expected
    assert [h["id"] for h in parsed.handoffs] == [f"handoff-{i}" for i in range(1, len(expected) + 1)]
    assert all(h["svgs"] == 1 for h in parsed.handoffs), [h for h in parsed.handoffs if h["svgs"] != 1]
    # dice with purposes and results; the revealed secret in the clear, the other still sealed
    assert "CA sensor sweep" in text and "b0002" in text
    assert "I turn to starboard as soon as we are in range 8" in text
    assert "sealed (the owner reveals it when due)" in text
    # self-contained: nothing fetched from elsewhere, no scripts
    assert parsed.external == [] and parsed.scripts == 0


def test_the_page_of_the_whole_game_says_it_is_over(duel: Path, tmp_path: Path) -> None:
    done = pbem(duel, "log", "--html")
    assert done.exit_code == 0 and done.output.startswith("<!DOCTYPE html>")
    assert "The game is over: every entry is firm." in done.output
    assert "the game is over" in done.output
    plain = pbem(duel, "log")
    assert plain.exit_code == 0 and plain.output.startswith("Tactical duel")  # the text report is unchanged
    bad = pbem(duel, "log", "--html", "--at", "nonsense")
    assert bad.exit_code == 2 and "repo.bad-revision" in bad.output


# --- a real browser -------------------------------------------------------------------------------------------

def browser() -> str | None:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def artifacts(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("PBEM_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_chromium_renders_the_page(page: Path, tmp_path: Path) -> None:
    """Headless Chromium opens the page from a file and screenshots it; the PNG shows a page, not a blank."""
    chromium = browser()
    if chromium is None:
        pytest.skip("no headless browser: install Debian's `chromium` (apt-get install chromium; .ci/run does "
                    "it as root) to screenshot the HTML log")
    shot = artifacts(tmp_path) / "pbem-log.png"
    shot.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="pbem-chromium-") as profile:
        done = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1280,2000",
             page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    print(f"screenshot of pbem log --html: {shot}")
    assert shot.is_file(), f"chromium exited {done.returncode}: {done.stderr[-2000:]}"
    assert shot.stat().st_size > 20_000
    width, height, rows = decode_png(shot.read_bytes())
    assert (width, height) == (1280, 2000)
    header = {rows[y][x] for y in range(10, 60) for x in range(100, 1200, 7)}
    assert (0x23, 0x31, 0x3F) in header  # the dark title band
    colours = {px for y in range(0, height, 5) for px in rows[y][::5]}
    assert len(colours) > 50  # text, tables and a map: far from a blank page
    whites = sum(1 for y in range(0, height, 5) for px in rows[y][::5] if px == (255, 255, 255))
    assert whites < 0.9 * (height // 5) * (width // 5)
