"""The Diplomacy map reads right (docs/pictures.md, Diplomacy): the viewer's own territory and every power's colour
apart from the relationship legend's colours, void and forbidden orders drawn unlike carried-out ones, every
order of every power in the panel, centres per power; structurally (no browser needed), then as Chromium draws
it (skipped, saying why, without a browser)."""

from __future__ import annotations

import re
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pbem.render import dow_svg
from pbem.rulesets.dow import DowRuleset, engine
from pbem.rulesets.dow.state import POWERS
from pbem.services import pictures
from pbem.store.repo import GameRepo
from test_dow_flow import Dow, copy_dow, new_dow
from test_html_log import artifacts, browser, decode_png

SVG = "{http://www.w3.org/2000/svg}"
RULES = DowRuleset()
START = RULES.initial_state({"map": "standard"}, POWERS)
OPENING = {
    "austria": ["A VIE - GAL", "A BUD - SER", "F TRI - VEN"],  # Venice is Italy's: forbidden at NEUTRAL
    "england": ["F LON - NTH", "F EDI - NWG", "A LVP - YOR"],
    "france": ["F BRE - MAO", "A PAR - BUR", "A MAR S A PAR - BUR"],
    "germany": ["A MUN - RUH", "F KIE - DEN", "A BER - KIE"],
    "italy": ["F NAP - ION", "A ROM - APU", "A VEN H"],
    "russia": ["A MOS - UKR", "A WAR - GAL", "F SEV H", "F STP/SC - BOT", "A MOS - BER"],  # the last: void
    "turkey": ["F ANK - BLA", "A CON - BUL", "A SMY - ARM"],
}
VERDICTS = {"austria": {"F TRI - VEN": "forbidden"}, "russia": {"A MOS - BER": "void"}}
APART = 60.0  # the least RGB distance at which two fills are told apart at a glance


def rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def distance(a: str, b: str) -> float:
    return sum((x - y) ** 2 for x, y in zip(rgb(a), rgb(b))) ** 0.5


def fills(svg: str) -> dict[str, str]:
    """CSS class -> fill, the later rule winning (as in a browser)."""
    return {name: fill for name, fill in re.findall(r"\.([a-z-]+) \{fill:(#[0-9a-f]{6})", svg)}


def orders_in_panel(root: ET.Element) -> list[tuple[str, str, str]]:
    return [(t.get("data-power") or "", (t.text or "").rstrip(" ✗"), t.get("data-verdict") or "")
            for t in root.iter(f"{SVG}text") if t.get("class") == "pbem-order"]


# --- structure, no browser ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("viewer", POWERS)
def test_the_viewer_s_own_territory_is_coloured_apart_from_every_legend_colour(viewer: str) -> None:
    """England's violet read as LIMBO and Italy's green as ALLIED: a viewer's own land is now "yours"."""
    svg = dow_svg.render(START, viewer=viewer)
    own = [m for m in re.findall(r'<path class="([^"]*)" d="[^"]*" id="_([a-z]{3})"', svg) if m[0] == "pbem-own"]
    homes = {c.lower() for c in engine.standard_map().homes[viewer]}
    assert homes <= {code for _, code in own}
    assert f'class="{viewer}"' not in svg
    css = fills(svg)
    for state, colour in dow_svg.RELATION_COLOURS.items():
        assert distance(css["pbem-own"], colour) > APART, state
        assert distance(css["pbem-uncoloured"], colour) > APART, state
    legend = [r.get("fill") for r in ET.fromstring(svg).iter(f"{SVG}rect") if r.get("class") == "pbem-legend"]
    assert css["pbem-own"] in legend and css["pbem-uncoloured"] in legend  # "yours" and "uncoloured" explained


def test_every_power_s_map_colour_is_apart_from_the_legend_colours() -> None:
    """Without a viewer each power's territory has its own colour; none is a relationship colour."""
    css = fills(dow_svg.render(START))
    for power in POWERS:
        for state, colour in dow_svg.RELATION_COLOURS.items():
            assert distance(css[power], colour) > APART, (power, state)
    for state, colour in dow_svg.RELATION_COLOURS.items():
        assert distance(css["neutral"], colour) > APART, state  # unowned centres: not NEUTRAL's grey
    colours = list(dow_svg.RELATION_COLOURS.values())
    assert all(distance(a, b) > APART for i, a in enumerate(colours) for b in colours[i + 1:])


def test_every_order_of_every_power_is_in_the_panel_and_the_picture_is_tall_enough() -> None:
    """Turkey's third order was cut off: now each order is listed, inside the picture, whatever their number."""
    many = {p: list(o) for p, o in OPENING.items()}
    many["turkey"] += [f"A CON - {p}" for p in ("AEG", "BLA", "SMY", "ANK", "ARM", "SYR", "BUL", "GRE")]
    for given in (OPENING, many):
        root = ET.fromstring(dow_svg.render(START, given, "S1901M", viewer="turkey", verdicts=VERDICTS,
                                            title="t: firm"))
        listed = orders_in_panel(root)
        assert [(p, o) for p, o, _ in listed] == [(p, o) for p in sorted(given) for o in given[p]]
        height = float(root.get("viewBox", "").split()[3])
        lowest = max(float(t.get("y", "0")) for t in root.iter(f"{SVG}text") if t.get("class") == "pbem-order")
        assert lowest < height - 10


def test_void_and_forbidden_orders_are_drawn_unlike_carried_out_ones() -> None:
    root = ET.fromstring(dow_svg.render(START, OPENING, "S1901M", verdicts=VERDICTS))
    arrows = {g.get("data-order"): g for g in root.iter(f"{SVG}g") if "pbem-arrow" in (g.get("class") or "")}

    def look(order: str) -> tuple[Any, ...]:
        line = next(arrows[order].iter(f"{SVG}line"))
        marks = [e for e in arrows[order] if e.get("class") == "pbem-mark"]
        return line.get("stroke"), line.get("stroke-dasharray"), line.get("marker-end"), len(marks) > 0

    ok, void, forbidden = look("A VIE - GAL"), look("A MOS - BER"), look("F TRI - VEN")
    assert ok[3] is False and void[3] is True and forbidden[3] is True
    assert len({ok, void, forbidden}) == 3 and len({ok[0], void[0], forbidden[0]}) == 3
    assert void[1] and not ok[1]  # void: dashed
    verdicts = {(p, o): v for p, o, v in orders_in_panel(root)}
    assert verdicts[("austria", "F TRI - VEN")] == "forbidden" and verdicts[("russia", "A MOS - BER")] == "void"
    assert sum(v == "ok" for v in verdicts.values()) == len(verdicts) - 2
    texts = {(t.get("data-power"), (t.text or "").rstrip(" ✗")): t for t in root.iter(f"{SVG}text")
             if t.get("class") == "pbem-order"}
    assert texts[("russia", "A MOS - BER")].get("text-decoration") == "line-through"
    assert texts[("austria", "F TRI - VEN")].get("fill") != texts[("austria", "A VIE - GAL")].get("fill")


def test_centres_and_relations_are_in_the_panel() -> None:
    root = ET.fromstring(dow_svg.render(START))
    centres = {t.get("data-power"): t.get("data-centres") for t in root.iter(f"{SVG}text")
               if t.get("class") == "pbem-centres"}
    assert centres == {p: str(4 if p == "russia" else 3) for p in POWERS}
    cells = [t.text for t in root.iter(f"{SVG}text") if t.text == "3"]
    assert len(cells) >= 42  # every pair shows its state's symbol, not only its colour


# --- in a real game: the verdicts come from the phase as replay resolved it ----------------------------------------

@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> Dow:
    """S1901M played with a forbidden and a void order (and Turkey's war on Russia recognised, in force from the
    retreats); the map is drawn after it."""
    dow = new_dow(tmp_path_factory.mktemp("dow-map") / "game")
    dow.phase()
    assert dow.status()["firm"] == "S1901M"
    dow.say("turkey", declare={"to": "russia", "state": "WAR"})
    dow.phase(OPENING)
    assert dow.status()["firm"] == "F1901M"
    return dow


def test_the_map_of_a_played_phase_marks_what_replay_voided_and_forbade(opened: Dow) -> None:
    svg = pictures.render_at(GameRepo.open(opened.repo_dir), None, "austria")
    root = ET.fromstring(svg)
    listed = orders_in_panel(root)
    assert {(p, o) for p, o, _ in listed} == {(p, o) for p, given in OPENING.items() for o in given}
    marked = {(p, o): v for p, o, v in listed if v != "ok"}
    assert marked == {("austria", "F TRI - VEN"): "forbidden", ("russia", "A MOS - BER"): "void"}
    centres = {t.get("data-power"): t.get("data-centres") for t in root.iter(f"{SVG}text")
               if t.get("class") == "pbem-centres"}
    assert centres["russia"] == "4"


def test_the_html_log_draws_each_handoff_with_its_verdicts(opened: Dow) -> None:
    page = pictures.html_at(GameRepo.open(opened.repo_dir))
    assert 'data-verdict="forbidden"' in page and 'data-verdict="void"' in page


# --- one phase, before or after its adjudication, in a real game ---------------------------------------------------

FALL = {"turkey": ["A ARM - SEV", "F BLA S A ARM - SEV", "A BUL H"], "russia": ["F SEV H"]}


@pytest.fixture(scope="module")
def fallen(opened: Dow, tmp_path_factory: pytest.TempPathFactory) -> Dow:
    """On from `opened`: in F1901M Turkey (at war with Russia since S1901R) dislodges Russia's fleet in Sevastopol,
    which retreats in F1901R; the game then waits at the Winter adjustments."""
    dow = copy_dow(opened, tmp_path_factory.mktemp("dow-map") / "fallen")
    dow.phase(FALL)
    assert dow.status()["firm"] == "F1901R"
    dow.phase({"russia": ["F SEV R RUM"]})
    assert dow.status()["firm"] == "W1901A"
    return dow


def drawn(dow: Dow, *options: str, tmp: Path) -> ET.Element:
    out = tmp / "map.svg"
    done = dow.cli("render", "--out", str(out), *options, who="austria")
    assert done.exit_code == 0, done.output
    return ET.fromstring(out.read_text())


def order_groups(root: ET.Element) -> dict[str, list[str]]:
    return {g.get("data-order") or "": (g.get("class") or "").split() for g in root.iter(f"{SVG}g")
            if "order" in (g.get("class") or "").split()}


def units_on(root: ET.Element) -> set[str]:
    return {(u.get("id") or "")[5:8] for u in root.iter(f"{SVG}use") if (u.get("id") or "").startswith("unit_")}


def test_pbem_render_shows_a_phase_before_and_after_its_adjudication(fallen: Dow, tmp_path: Path) -> None:
    """The command once (each run verifies the history); the other map through the service it calls."""
    from pbem.services.dow import maps

    before = drawn(fallen, "--phase", "s1901m", "--before", tmp=tmp_path)
    head = fallen.ws().head()
    assert head is not None
    after = ET.fromstring(maps.phase_svg(head, "S1901M", "after", "austria"))
    assert {"ANK", "BUD", "SMY"} <= units_on(before) and not {"BLA", "SER", "ARM"} & units_on(before)
    assert {"BLA", "SER", "ARM"} <= units_on(after) and not {"ANK", "BUD", "SMY"} & units_on(after)
    for root in (before, after):
        orders = order_groups(root)
        assert {"move", "failed"} <= set(orders["A VIE - GAL"]) and {"move", "failed"} <= set(orders["A WAR - GAL"])
        assert "failed" not in orders["A BUD - SER"] and "failed" not in orders["F ANK - BLA"]
        assert "forbidden" in orders["F TRI - VEN"] and "void" in orders["A MOS - BER"]
        assert "failed" not in orders["F TRI - VEN"]  # the engine never saw it: void, not failed
    heads = [t.text for t in after.iter(f"{SVG}text") if t.get("class") == "pbem-orders-head"]
    assert heads == ["Orders S1901M · after adjudication"]


def test_the_map_after_a_dislodgement_shows_the_engine_s_retreat_options(fallen: Dow) -> None:
    """Through the services the command uses (one verified history for every map: cheaper than four commands)."""
    from pbem.services.dow import maps

    head = fallen.ws().head()
    assert head is not None
    engine = {u: set(o) for _p, u, o in maps.phase_map(head, "F1901M").after.board.dislodged}
    assert engine == {"F SEV": {"RUM"}}  # the engine's answer: ARM is the attacker's, BLA Turkey's
    root = ET.fromstring(maps.phase_svg(head, "F1901M", "after", "austria"))
    shown = [g for g in root.iter(f"{SVG}g") if "dislodged" in (g.get("class") or "").split()]
    assert [g.get("data-unit") for g in shown] == ["F SEV"]
    options = {e.get("data-to") for e in shown[0].iter(f"{SVG}line") if e.get("class") == "retreat-option"}
    assert options == engine["F SEV"]
    assert "failed" in order_groups(root)["F SEV H"] and "failed" not in order_groups(root)["A ARM - SEV"]
    retreat = ET.fromstring(maps.phase_svg(head, "F1901R", "before"))
    assert [g.get("data-unit") for g in retreat.iter(f"{SVG}g") if "dislodged" in (g.get("class") or "").split()] \
        == ["F SEV"]
    assert "retreat" in order_groups(retreat)["F SEV R RUM"]
    settled = ET.fromstring(pictures.board_svg(head) or "")  # the map at HEAD: after the retreats, at the Winter
    assert "RUM" in units_on(settled) and not [g for g in settled.iter(f"{SVG}g")
                                               if "dislodged" in (g.get("class") or "").split()]
    assert [m.phase for m in maps.phase_maps(head)] == ["S1901P", "S1901M", "S1901R", "F1901M", "F1901R"]


def test_a_phase_not_resolved_is_one_clear_line_and_nothing_is_written(fallen: Dow, tmp_path: Path) -> None:
    from pbem.errors import PbemError
    from pbem.services.dow import maps

    out = tmp_path / "map.svg"
    done = fallen.cli("render", "--phase", "W1901A", "--out", str(out), who="austria")  # the phase open now
    assert done.exit_code == 2, done.output
    assert "[usage.bad-phase]" in done.output and "W1901A has not been resolved" in done.output
    assert "Traceback" not in done.output and len(done.output.strip().splitlines()) <= 2
    assert not out.exists()
    head = fallen.ws().head()
    assert head is not None
    for phase in ("S1905M", "nonsense", ""):
        with pytest.raises(PbemError) as caught:
            maps.phase_map(head, phase)
        assert caught.value.finding.rule == "usage.bad-phase" and caught.value.exit_code == 2


def test_a_tactical_game_has_no_phases_to_draw_before_or_after(started: Any, tmp_path: Path) -> None:
    out = tmp_path / "board.svg"
    done = started.cli("render", "--before", "--out", str(out), who="kli")
    assert done.exit_code == 2, done.output
    assert "[usage.not-diplomacy]" in done.output
    assert not out.exists()


# --- as a player sees it: Chromium --------------------------------------------------------------------------------

def screenshot(svg: str, name: str, tmp_path: Path) -> tuple[int, int, list[list[tuple[int, int, int]]], Path]:
    chromium = browser()
    if chromium is None:
        pytest.skip("no headless browser: install Debian's `chromium` (apt-get install chromium; .ci/run does it "
                    "as root) to screenshot the Diplomacy map")
    folder = artifacts(tmp_path)
    source = folder / f"{name}.svg"
    source.write_text(svg)
    root = ET.fromstring(svg)
    width = int(float(root.get("width", "0").rstrip("px")))
    height = int(float(root.get("height", "0").rstrip("px")))
    shot = folder / f"{name}.png"
    shot.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="pbem-chromium-") as profile:
        done = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", f"--screenshot={shot}", f"--window-size={width},{height}",
             source.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    print(f"screenshot of the Diplomacy map: {shot}")
    assert shot.is_file(), f"chromium exited {done.returncode}: {done.stderr[-2000:]}"
    w, h, rows = decode_png(shot.read_bytes())
    return w, h, rows, shot


def near(pixel: tuple[int, int, int], colour: str, slack: int = 12) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(pixel, rgb(colour)))


def test_chromium_draws_the_map_as_a_player_reads_it(opened: Dow, tmp_path: Path) -> None:
    """The map seen by Austria after S1901M: her land in "yours", no LIMBO or ALLIED pink/teal on it (nobody is
    allied yet), the forbidden order in red and the void one in grey in the panel, the last power's orders in
    the picture."""
    svg = pictures.render_at(GameRepo.open(opened.repo_dir), None, "austria")
    width, height, rows, shot = screenshot(svg, "pbem-dow-map", tmp_path)
    root = ET.fromstring(svg)
    view = [float(v) for v in root.get("viewBox", "").split()]
    scale = width / view[2]
    map_right = int((view[2] - dow_svg.PANEL) * scale)
    on_map = [px for y in range(0, height, 3) for px in rows[y][:map_right:3]]
    in_panel = [px for y in range(0, height, 2) for px in rows[y][map_right::2]]
    assert sum(near(px, dow_svg.OWN_COLOUR) for px in on_map) > 200  # Austria's own territory, in "yours"
    assert not any(near(px, dow_svg.RELATION_COLOURS["LIMBO"], 6) for px in on_map)
    assert sum(near(px, dow_svg.RELATION_COLOURS["NEUTRAL"]) for px in on_map) > 500  # the others: NEUTRAL
    assert sum(near(px, dow_svg.VERDICT_STYLES["forbidden"][0], 30) for px in in_panel) > 20  # the forbidden order
    assert sum(near(px, dow_svg.VERDICT_STYLES["void"][0], 20) for px in in_panel) > 20  # the void one
    last = max(float(t.get("y", "0")) for t in root.iter(f"{SVG}text") if t.get("class") == "pbem-order")
    row = int(last * scale) - 4  # the last order's text line: ink on the panel's background
    assert row < height and any(sum(px) < 300 for px in rows[row][map_right:])
    assert shot.stat().st_size > 50_000
