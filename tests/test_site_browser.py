"""The game page (`pbem site`) in a real browser: Debian's Chromium (/usr/bin/chromium, `.ci/run` installs it)
driven by Playwright, one browser for the module, each demo's site written once. The page is opened from disk
(file://), as a player opens a downloaded artifact: the slider and the keys step through the commits, the map
changes with them, the elements of a known game point are there, markup from players stays text, and each
demo's key moments look as reviewed: a screenshot of the map panel against tests/screens/*.png, with a tolerance
(tests/screens.py; PBEM_UPDATE_SCREENSHOTS=1 writes them anew for review, and the pages docs/pictures.md
shows). Timing: bench/site_bench.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import PBEM, without_crosscheck
from screens import diff_ratio
from test_site import HOSTILE, game_log, view
from pbem.render import site

CHROMIUM = "/usr/bin/chromium"
SCREENS = Path(__file__).parent / "screens"
TOLERANCE = 0.02  # the share of pixels that may differ visibly (dice, fonts); a moved unit or a new arrow is more
READY = 'body[data-ready="yes"]'

# each demo's key moments: (file name, demo, which commit — by its step label, the first or last one with it)
MOMENTS = [
    ("duel-start", "tactical-duel", ("first", "turn-01 · 1.0.alloc")),
    ("duel-turn-2", "tactical-duel", ("first", "turn-02 · 2.7.move")),
    ("duel-end", "tactical-duel", ("last", "the game is over")),
    ("aces-fire", "twirling-aces", ("first", "turn-01 · 1.12.fire")),
    ("aces-turn-2-fire", "twirling-aces", ("last", "turn-02 · 2.14.fire")),
    ("dow-spring-1901", "dow", ("first", "F1901M")),
    ("dow-retreat", "dow", ("first", "W1901A")),
    ("dow-1902", "dow", ("last", "W1902A")),
]
# the moments docs/pictures.md shows as whole pages, written with the references (PBEM_UPDATE_SCREENSHOTS=1)
DOCS = {"duel-turn-2": "site-duel-turn-2", "duel-end": "site-duel-end", "aces-fire": "site-aces-fire",
        "dow-spring-1901": "site-dow-spring-1901", "dow-retreat": "site-dow-autumn-1901"}
DOC_PICTURES = Path(__file__).parent.parent / "docs" / "pictures"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no {CHROMIUM}: install Debian's chromium (apt-get install chromium; .ci/run does it as root)")
    from playwright.sync_api import Error

    with sync_playwright() as p:
        try:
            launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        except Error as exc:  # a Chromium that does not start here (libraries missing): no browser to test with
            pytest.skip(f"{CHROMIUM} did not start under Playwright: {str(exc).splitlines()[0]}")
        yield launched
        launched.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


@pytest.fixture(scope="module")
def sites(demo_games: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("sites")
    made: dict[str, Path] = {}

    def site_of(demo: str) -> Path:
        if demo not in made:
            repo = demo_games(demo)
            done = subprocess.run([str(PBEM), "site", str(root / demo)], cwd=repo, capture_output=True, text=True,
                                  env=without_crosscheck(repo.parent / "home"), check=False, timeout=600)
            assert done.returncode == 0, done.stderr
            made[demo] = root / demo
        return made[demo]

    return site_of


def open_at(tab: Any, folder: Path, number: int | None = None) -> None:
    tab.goto((folder / "index.html").as_uri() + (f"#{number}" if number else ""))
    tab.wait_for_selector(f'body[data-commit="{number}"][data-ready="yes"]' if number and number < 9999 else READY)


def shown(tab: Any) -> dict[str, Any]:
    return tab.evaluate("""() => { const $ = (id) => document.getElementById(id); return {
        commit: Number(document.body.dataset.commit), slider: Number($("slider").value),
        map: $("map-img").getAttribute("src"), heading: $("heading").textContent, control: $("control").textContent,
        lines: [...document.querySelectorAll("#lines li")].map(li => li.textContent),
        position: $("position").textContent, period: $("period").value}; }""")


def step(tab: Any, key: str) -> dict[str, Any]:
    tab.keyboard.press(key)
    tab.wait_for_selector(READY)
    return shown(tab)


def commit_of(tab: Any, which: str, label: str) -> int:
    rows = tab.evaluate("() => pbemSite.index.commits.map(r => r[2])")
    numbers = [i + 1 for i, r in enumerate(rows) if r == label]
    assert numbers, (label, sorted(set(rows)))
    return numbers[0] if which == "first" else numbers[-1]


def test_a_known_game_point_shows_its_map_report_lines_and_who_holds_control(sites: Any, tab: Any,
                                                                             demo_games: Any) -> None:
    folder, repo = sites("tactical-duel"), demo_games("tactical-duel")
    count = int(subprocess.run(["git", "rev-list", "--count", "--first-parent", "HEAD~20"], cwd=repo, text=True,
                               capture_output=True, check=True).stdout)
    open_at(tab, folder, count)
    now = shown(tab)
    assert now["commit"] == now["slider"] == count and now["position"] == f"commit {count} of 57"
    assert now["control"] == "→ fed holds control; firm to 2.7.move" and now["period"] == "turn-02"
    assert now["map"].startswith("maps/") and tab.locator("#map-img").evaluate("img => img.naturalWidth") > 100
    assert tab.locator("#heading").text_content().startswith(f"{count}. ")
    for element in ("#slider", "#period", "#prev", "#next", "#lines", "#players", "header h1"):
        assert tab.locator(element).is_visible(), element
    assert tab.locator("header h1").text_content() == "Tactical duel: two cruisers close in"


def test_the_slider_and_the_keys_step_through_every_commit_and_the_map_changes(sites: Any, tab: Any) -> None:
    open_at(tab, sites("tactical-duel"))
    end = shown(tab)
    assert end["commit"] == 57 and end["control"] == "→ the game is over"
    tab.locator("#slider").fill("20")  # the slider as a player drags it
    tab.wait_for_selector(READY)
    at20 = shown(tab)
    assert at20["commit"] == 20 and at20["map"] != end["map"]
    back = step(tab, "ArrowLeft")
    assert back["commit"] == 19 and back["slider"] == 19
    assert step(tab, "ArrowRight")["commit"] == 20
    first = step(tab, "Home")
    assert first["commit"] == 1 and first["map"] is None and tab.locator("#no-map").is_visible()
    turn = step(tab, "PageDown")  # the first commit of the first turn: the start, with the first map
    assert turn["period"] == "turn-01" and turn["map"] and turn["commit"] > 1
    later = step(tab, "PageDown")
    assert later["period"] == "turn-02" and later["map"] != turn["map"]
    assert step(tab, "End")["commit"] == 57
    assert tab.evaluate("location.hash") == "#57"


def test_a_commit_that_does_not_exist_says_so_and_shows_the_last(sites: Any, tab: Any) -> None:
    open_at(tab, sites("tactical-duel"), 9999)
    assert tab.locator("#problem").text_content() == ("There is no commit 9999 in this game: it has 57 commits. "
                                                       "Showing the last.")
    assert shown(tab)["commit"] == 57


def test_markup_from_players_is_shown_as_text_and_never_runs(tab: Any, tmp_path: Path) -> None:
    files = site.site_files(game_log((view(1, note=HOSTILE), view(2)), name=HOSTILE))
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    dialogs: list[str] = []
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_at(tab, tmp_path, 1)
    assert tab.locator("#note").text_content() == f"“{HOSTILE}”"
    assert HOSTILE in tab.locator("#players").text_content()
    assert tab.evaluate("document.querySelectorAll('main script, main img:not(#map-img), header img').length") == 0
    assert dialogs == []


@pytest.mark.parametrize("name,demo,moment", MOMENTS, ids=[m[0] for m in MOMENTS])
def test_each_demo_s_key_moments_look_as_reviewed(sites: Any, tab: Any, name: str, demo: str,
                                                  moment: tuple[str, str]) -> None:
    folder = sites(demo)
    open_at(tab, folder)
    number = commit_of(tab, *moment)
    open_at(tab, folder, number)
    shot = tab.locator("#map").screenshot(animations="disabled")
    reference = SCREENS / f"{name}.png"
    artifacts = os.environ.get("PBEM_TEST_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        (Path(artifacts) / f"site-{name}.png").write_bytes(shot)
    if os.environ.get("PBEM_UPDATE_SCREENSHOTS") or not reference.exists():
        SCREENS.mkdir(exist_ok=True)
        reference.write_bytes(shot)
        if name in DOCS and os.environ.get("PBEM_UPDATE_SCREENSHOTS"):
            tab.screenshot(path=str(DOC_PICTURES / f"{DOCS[name]}.png"), animations="disabled")
        if not os.environ.get("PBEM_UPDATE_SCREENSHOTS"):
            pytest.fail(f"no reference for {name}: wrote {reference}; review it and commit it")
        return
    ratio = diff_ratio(tab, shot, reference.read_bytes())
    assert ratio <= TOLERANCE, (f"{name}: {ratio:.1%} of the pixels differ from {reference}; if the picture "
                                "changed on purpose, PBEM_UPDATE_SCREENSHOTS=1 writes new references to review")


def test_the_screenshots_can_fail(tab: Any, sites: Any) -> None:
    """The comparison is no rubber stamp: two different key moments differ by far more than the tolerance."""
    first, last = (SCREENS / "duel-start.png").read_bytes(), (SCREENS / "duel-end.png").read_bytes()
    assert diff_ratio(tab, first, first) == 0.0
    assert diff_ratio(tab, first, last) > TOLERANCE

