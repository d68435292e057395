"""Pictures (issue 6 point 5): the tactical map as SVG drawn to DESIGN §7.1's geometry, the Diplomacy board with
orders and relationships (DESIGN §7.2), and `pbem render` on a real game repository."""

from __future__ import annotations

import dataclasses
import math
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from conftest import Table
from pbem.rulesets.base import Action
from pbem.rulesets.dow import DowRuleset
from pbem.rulesets.dow.state import POWERS
from pbem.rulesets.tactical import TacticalRuleset, hexmap
from pbem.rulesets.tactical.state import DESTROYED, DISENGAGED, TacticalState
from pbem.render import dow_svg, tactical_svg
from pbem.render.tactical_svg import HEIGHT, RangeRing

RULES = TacticalRuleset()
SVG = "{http://www.w3.org/2000/svg}"
WEAPONS = {"phaser": {"brackets": [[0, 15]], "damage": [[6, 5, 4, 3, 2, 1]]},
           "drone": {"seeking": True, "speed": 16, "turn_mode": 1, "warhead": 12}}


def ship(unit_id: str, owner: str, hex_: str, facing: str = "A") -> dict[str, Any]:
    return {"id": unit_id, "owner": owner, "hex": hex_, "facing": facing, "speed": 8, "turn_mode": 2,
            "shields": [20] * 6, "hull": 10, "weapons": [{"id": "dr1", "type": "drone", "arcs": ["A"]}]}


def game(columns: int, rows: int, *units: dict[str, Any], players: tuple[str, ...] = ("fed", "kli", "rom")
         ) -> TacticalState:
    setup = {"map": {"columns": columns, "rows": rows}, "turns": 1, "units": list(units), "weapons": WEAPONS}
    return RULES.initial_state(setup, list(players))


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def hex_numbers(root: ET.Element) -> dict[str, tuple[float, float]]:
    """Every hex number drawn, with where it is drawn."""
    return {t.text: (float(t.get("x")), float(t.get("y"))) for t in root.iter(f"{SVG}text")
            if t.text and re.fullmatch(r"[0-9]{4}", t.text)}


def units_drawn(root: ET.Element) -> dict[str, ET.Element]:
    return {g.get("data-unit"): g for g in root.iter(f"{SVG}g") if "pbem-unit" in (g.get("class") or "")}


# --- geometry: the drawing agrees with hexmap ------------------------------------------------------------------

@pytest.mark.parametrize("hex_", [(5, 5), (6, 6), (1, 1), (2, 1), (17, 30)])
@pytest.mark.parametrize("facing", range(6))
def test_design_7_1_each_neighbour_is_drawn_one_hex_away_in_its_facing(hex_: tuple[int, int], facing: int) -> None:
    """Columns vertical, even columns half a hex lower, A straight up, B..F clockwise: the centre of
    hexmap.neighbour(h, f) lies one hex height from h's centre, exactly in the direction of facing f."""
    x0, y0 = tactical_svg.centre(hex_)
    x1, y1 = tactical_svg.centre(hexmap.neighbour(hex_, facing))
    vx, vy = tactical_svg.facing_vector(facing)
    assert math.isclose(x1 - x0, HEIGHT * vx, abs_tol=1e-9) and math.isclose(y1 - y0, HEIGHT * vy, abs_tol=1e-9)


def test_design_7_1_facing_a_points_straight_up_and_the_examples_hold() -> None:
    """From 0505: A 0504, B 0604, C 0605, D 0506, E 0405, F 0404 (DESIGN §7.1), as drawn."""
    assert tactical_svg.facing_vector(0) == (0.0, -1.0)
    x, y = tactical_svg.centre((5, 5))
    drawn = {}
    for name in ("0504", "0604", "0605", "0506", "0405", "0404"):
        nx, ny = tactical_svg.centre(hexmap.parse_hex(name))
        drawn[name] = round(math.degrees(math.atan2(nx - x, -(ny - y)))) % 360  # bearing, clockwise from up
    assert drawn == {"0504": 0, "0604": 60, "0605": 120, "0506": 180, "0405": 240, "0404": 300}


@pytest.mark.parametrize("hex_", [(5, 5), (6, 6)])
@pytest.mark.parametrize("facing", range(6))
def test_neighbours_share_the_side_between_them(hex_: tuple[int, int], facing: int) -> None:
    """The hexes tile the plane: the side towards a neighbour is the neighbour's side back towards us."""
    mine = tactical_svg.edge(hex_, facing)
    theirs = tactical_svg.edge(hexmap.neighbour(hex_, facing), hexmap.opposite(facing))
    rounded = {tuple(round(c, 6) for c in p) for p in mine}
    assert rounded == {tuple(round(c, 6) for c in p) for p in theirs}


@pytest.mark.parametrize("radius", [0, 1, 2, 5, 8])
def test_a_range_ring_is_every_hex_within_range(radius: int) -> None:
    region = tactical_svg.within((10, 11), radius)
    assert len(region) == 3 * radius * (radius + 1) + 1
    assert all(hexmap.distance(h, (10, 11)) <= radius for h in region)
    box = {(c, r) for c in range(10 - radius - 1, 10 + radius + 2) for r in range(11 - radius - 2, 11 + radius + 3)}
    assert {h for h in box if hexmap.distance(h, (10, 11)) <= radius} == region


# --- the tactical map ------------------------------------------------------------------------------------------

def test_the_map_shows_every_hex_with_its_number_and_each_unit_with_its_facing() -> None:
    state = game(8, 6, ship("CA", "fed", "0203", "B"), ship("D7", "kli", "0605", "E"))
    root = parse(tactical_svg.render(state, title="a small map"))
    numbers = hex_numbers(root)
    assert len(numbers) == 8 * 6 and "0101" in numbers and "0806" in numbers
    for name, (x, y) in numbers.items():  # each number sits at the top of its own hex
        cx, cy = tactical_svg.centre(hexmap.parse_hex(name))
        assert math.isclose(x, cx, abs_tol=0.06) and cy - HEIGHT / 2 < y < cy
    drawn = units_drawn(root)
    assert set(drawn) == {"CA", "D7"}
    assert (drawn["CA"].get("data-hex"), drawn["CA"].get("data-facing"), drawn["CA"].get("data-owner")) == \
        ("0203", "B", "fed")
    assert (drawn["D7"].get("data-hex"), drawn["D7"].get("data-facing")) == ("0605", "E")
    # the facing arrow's tip lies from the unit's centre in the facing's direction
    tip = drawn["CA"].find(f"{SVG}polygon").get("points").split()[0].split(",")
    cx, cy = tactical_svg.centre((2, 3))
    bearing = math.degrees(math.atan2(float(tip[0]) - cx, -(float(tip[1]) - cy))) % 360
    assert round(bearing) == 60
    assert root.find(f"{SVG}title").text == "a small map"


def test_units_out_of_play_are_not_drawn_and_seeking_weapons_look_different() -> None:
    """Disengaged and destroyed units are off the map (DESIGN §7.1); a seeking weapon in flight is drawn, as a
    dashed diamond rather than a disc."""
    state = game(12, 12, ship("CA", "fed", "0505", "B"), ship("D7", "kli", "0606", "D"),
                 ship("KR", "rom", "1010"), ship("F1", "rom", "1111"))
    at = RULES.parse_time("1.1.activity")
    state, _ = RULES.apply(state, at, [Action(at, "kli", "D7", {"launch": {"weapon": "dr1", "as": "S1"}})])
    units = tuple(dataclasses.replace(u, status=DESTROYED, hex=None) if u.id == "KR" else
                  dataclasses.replace(u, status=DISENGAGED, hex=None) if u.id == "F1" else u for u in state.units)
    state = dataclasses.replace(state, units=units)
    drawn = units_drawn(parse(tactical_svg.render(state)))
    assert set(drawn) == {"CA", "D7", "S1"}
    assert "pbem-seeking" in drawn["S1"].get("class") and "pbem-seeking" not in drawn["D7"].get("class")
    assert drawn["S1"].find(f"{SVG}circle") is None and drawn["D7"].find(f"{SVG}circle") is not None
    assert drawn["S1"].get("data-hex") == drawn["D7"].get("data-hex") == "0606"  # sharing a hex, both shown
    lines = {uid: g.find(f"{SVG}line") for uid, g in drawn.items()}
    assert (lines["S1"].get("x1"), lines["S1"].get("y1")) != (lines["D7"].get("x1"), lines["D7"].get("y1"))


def test_a_large_map_is_cropped_to_the_units_and_keeps_its_hex_numbers() -> None:
    state = game(42, 30, ship("CA", "fed", "1015", "B"), ship("D7", "kli", "1812", "F"))
    root = parse(tactical_svg.render(state))
    numbers = hex_numbers(root)
    columns = sorted({int(n[:2]) for n in numbers})
    rows = sorted({int(n[2:]) for n in numbers})
    margin = tactical_svg.MARGIN
    assert columns == list(range(10 - margin, 18 + margin + 1))
    assert rows == list(range(12 - margin, 15 + margin + 1))
    for name, (x, _y) in numbers.items():  # numbers stay where their hex is: nothing renumbered
        assert math.isclose(x, tactical_svg.centre(hexmap.parse_hex(name))[0], abs_tol=0.06)
    assert len(hex_numbers(parse(tactical_svg.render(state, crop=False)))) == 42 * 30


def test_a_crop_near_the_edge_stays_on_the_map() -> None:
    state = game(42, 30, ship("CA", "fed", "0101", "C"), ship("D7", "kli", "0202", "F"))
    numbers = hex_numbers(parse(tactical_svg.render(state)))
    assert "0101" in numbers
    assert min(int(n[:2]) for n in numbers) == 1 and min(int(n[2:]) for n in numbers) == 1
    assert len({n[:2] for n in numbers}) >= tactical_svg.MIN_VIEW[0]


def test_range_conditions_become_rings_around_their_players_units() -> None:
    """DESIGN §4.3 `{range: N}` (optionally `mine: UNIT`): every hex within N of each of his units."""
    state = game(30, 30, ship("CA", "fed", "1015", "B"), ship("NCL", "fed", "0810"), ship("D7", "kli", "1812"))
    rings = tactical_svg.range_rings(state, {"fed": [{"range": 4}, {"fire": {}}, {"range": 2, "mine": "NCL"}],
                                             "kli": []})
    assert rings == [RangeRing("fed", "CA", 4, "fed: range 4"), RangeRing("fed", "NCL", 4, "fed: range 4"),
                     RangeRing("fed", "NCL", 2, "fed: range 2")]
    root = parse(tactical_svg.render(state, rings))
    drawn = [g for g in root.iter(f"{SVG}g") if g.get("class") == "pbem-ring"]
    assert [(g.get("data-unit"), g.get("data-range")) for g in drawn] == [("CA", "4"), ("NCL", "4"), ("NCL", "2")]
    for g in drawn:  # the outline of a hex-shaped region of radius N has 6 (2N + 1) sides
        radius = int(g.get("data-range"))
        assert g.find(f"{SVG}path").get("d").count("M") == 6 * (2 * radius + 1)
    # the crop keeps whole rings in view
    numbers = hex_numbers(root)
    assert "1011" in numbers and "1019" in numbers  # 4 up and 4 down from CA


def test_the_picture_is_deterministic() -> None:
    state = game(42, 30, ship("CA", "fed", "1015", "B"), ship("D7", "kli", "2815", "F"))
    rings = tactical_svg.range_rings(state, {"kli": [{"range": 8}]})
    assert tactical_svg.render(state, rings, title="t") == tactical_svg.render(state, rings, title="t")


# --- the Diplomacy board ---------------------------------------------------------------------------------------

def test_dow_board_with_orders_and_relationships() -> None:
    """DESIGN §7.2: the engine's map, the phase's orders as arrows and in words, the relationship matrix by
    colour, and with a viewer the other powers' territory coloured by their state with him."""
    rules = DowRuleset()
    state = rules.initial_state({"map": "standard"}, POWERS)
    state, refusal = rules.recognise(state, {"by": "france", "declare": {"to": "germany", "state": "HOSTILE"}},
                                     "france")
    assert refusal is None
    orders = {"france": ["A PAR - BUR", "A MAR S A PAR - BUR", "F BRE H"], "england": ["F LON - NTH"],
              "germany": ["F KIE C A BER - DEN"]}
    svg = dow_svg.render(state, orders, "S1901M", viewer="germany", title="dow test")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    root = ET.fromstring(svg)
    cells = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "pbem-relation"]
    assert len(cells) == 7 * 6
    assert all(c.get("data-state") == "NEUTRAL" for c in cells)  # a declaration takes effect at the retreats
    assert "france–germany: neutral → hostile" in svg
    texts = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "pbem-order"]
    assert texts == ["F LON - NTH", "A PAR - BUR", "A MAR S A PAR - BUR", "F BRE H", "F KIE C A BER - DEN"]
    layer = next(g for g in root.iter(f"{SVG}g") if g.get("id") == "pbem-orders")
    kinds = [(g.get("class") or "").split()[3] for g in layer if "order" in (g.get("class") or "").split()]
    assert sorted(kinds) == ["convoy", "hold", "move", "move", "support"]
    lines = list(layer.iter(f"{SVG}line"))
    assert len([p for p in layer.iter(f"{SVG}polygon") if p.get("class") == "pbem-head"]) == 3  # moves, convoy
    assert sum(1 for line in lines if line.get("stroke-dasharray")) == 1  # the support
    assert sum(1 for path in layer.iter(f"{SVG}path") if path.get("stroke-dasharray")) == 1  # the convoy
    assert 'class="pbem-rel-neutral"' in svg and 'class="pbem-own"' in svg  # his own: "yours", not a state
    assert 'class="france"' not in svg  # France's territory shown by its state with Germany
    plain = dow_svg.render(state)
    assert 'class="france"' in plain and "pbem-rel-" not in plain


# --- `pbem render` in a real game ------------------------------------------------------------------------------

def test_pbem_render_draws_the_board_at_the_firm_point(played: Table, tmp_path: Any) -> None:
    """fed holds control at 1.9.move: the ships where replay stopped, and fed's `{range: 8}` as rings."""
    out = tmp_path / "board.svg"
    done = played.cli("render", "--out", str(out), who="kli")
    assert done.exit_code == 0, done.output
    assert f"wrote {out}" in done.output
    root = parse(out.read_text())
    drawn = units_drawn(root)
    assert set(drawn) == {"CA", "D7"}
    state_summary = {u["id"]: u for u in played_summary(played)}
    for uid, g in drawn.items():
        assert (g.get("data-hex"), g.get("data-facing")) == (state_summary[uid]["hex"], state_summary[uid]["facing"])
    rings = [(g.get("data-player"), g.get("data-unit"), g.get("data-range")) for g in root.iter(f"{SVG}g")
             if g.get("class") == "pbem-ring"]
    assert rings == [("fed", "CA", "8")]
    assert "firm to 1.9.move, fed in control" in root.find(f"{SVG}title").text
    printed = played.cli("render", "--at", "HEAD~1", who="kli")
    assert printed.exit_code == 0 and printed.output.startswith("<svg")
    assert "firm to 1.0.alloc, kli in control" in printed.output


def played_summary(table: Table) -> list[dict[str, Any]]:
    from pbem.services.workspace import Workspace

    last = Workspace.open(table.repo_dir).history().last
    assert last is not None and last.stop is not None
    return last.game.manifest.ruleset.state_summary(last.stop.checkpoint.state)


def test_pbem_render_refusals(started: Table, outside: Any) -> None:
    bad = started.cli("render", "--at", "no-such-branch", who="fed")
    assert bad.exit_code == 2 and "repo.bad-revision" in bad.output
    nowhere = started.cli("render", who="fed", cwd=outside)
    assert nowhere.exit_code == 2
    early = started.cli("render", "--at", "HEAD~1", who="fed")  # kli's join: not started yet
    assert early.exit_code != 0 and "render.not-started" in early.output


# --- the map of each ruleset, by name (render/maps.py) ----------------------------------------------------------

def test_every_builtin_ruleset_has_its_renderer_and_the_services_read_its_map_for_it() -> None:
    from pbem import rulesets
    from pbem.render.maps import RENDERERS
    from pbem.services.pictures import DRAWERS

    assert set(RENDERERS) == set(rulesets.names())
    assert {name: draw for name, (_read, draw) in DRAWERS.items()} == RENDERERS
