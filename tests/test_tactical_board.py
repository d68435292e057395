"""The tactical board shows the step (DESIGN §7.1; docs/pictures.md "The tactical board"): at a game point of the
duel and twirling-aces demos, the SVG holds each unit with its facing, speed, hull and a ring of six shield
segments, the trails of the last impulses, the shots with weapon, die and damage, seeking weapons' paths, and a
mark where each unit out of play was last seen; the legend has its own area, apart from the title; every name is
shown as text. And `pbem render --out` refuses a path it cannot write in one line, exit 2, writing nothing.

The demos are the stored golden repositories (tests/golden/repos), unpacked and walked once per module; each
game point's view is computed the way a page computes it (one memo, replaying on from the map before) and
compared with the view of that point alone (`pbem render --at`: a replay from the game start).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

import pytest

import golden
from conftest import Table
from pbem.protocol.verified import Verified
from pbem.render import tactical_svg
from pbem.render.tactical_geometry import centre
from pbem.render.tactical_legend import BAND
from pbem.render.tactical_step import FireLine, Gone, SeekingTarget, StepView, Trail
from pbem.rulesets.tactical import TacticalRuleset, arcs, hexmap
from pbem.rulesets.tactical.state import DESTROYED
from pbem.formats import schemas, yamlsafe
from pbem.services import pictures, tactical_board, workspace
from pbem.store.repo import GameRepo
from pbem.verify import history

SVG = "{http://www.w3.org/2000/svg}"
RULES = TacticalRuleset()


@dataclass
class Demo:
    """A demo game walked once: each game point's verified state and its view as a page computes it."""

    points: dict[str, tuple[Verified, StepView]]  # commit id -> (verified, view)
    order: list[str]

    def at(self, prefix: str) -> tuple[Verified, StepView]:
        (oid,) = [o for o in self.order if o.startswith(prefix)]
        return self.points[oid]


def _walk(name: str, root: Path) -> Demo:
    game = golden.games()[name]
    repo = GameRepo.open(golden.unpack(name, root / name, game["branch"]))
    result, known = pictures.walk(repo)
    memo: dict[str, Any] = {}
    points, order = {}, []
    for commit, verified in zip(result.commits, known):
        if verified is not None and verified.stop is not None:
            points[commit.oid] = (verified, tactical_board.step_view(verified, memo))
            order.append(commit.oid)
    return Demo(points, order)


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Demo]]:
    """Both demos walked once. tests/test_golden.py judges these very repositories with the suite's cross-checks
    (every fast path against the plain one, the differential judge); they are off here, where only the pictures
    are under test, as they cost many times the verification itself."""
    root = tmp_path_factory.mktemp("board")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(history, "LEGACY_JUDGE", None, raising=False)
        for module in (history, yamlsafe, schemas, workspace):
            patch.setattr(module, "_CROSSCHECK", False, raising=False)
        yield {name: _walk(name, root) for name in ("demo-duel", "demo-twirling-aces")}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter() if cls in (g.get("class") or "").split()]


def drawn(verified: Verified, view: StepView) -> ET.Element:
    state = verified.stop.checkpoint.state  # type: ignore[union-attr]
    return parse(tactical_svg.render(state, (), view, title="a game point"))


# --- data: what the record says, for every game point ---------------------------------------------------------

def test_a_page_and_a_single_game_point_see_the_same_step(demos: dict[str, Demo]) -> None:
    """The page replays on from the map before (memo); `pbem render --at` replays from the game start: both
    give the same view at every game point of the duel and at the key points of twirling-aces."""
    duel = demos["demo-duel"]
    for oid in duel.order:
        verified, view = duel.points[oid]
        assert tactical_board.step_view(verified) == view, oid
    aces = demos["demo-twirling-aces"]
    for prefix in ("ad47287", "78db119", "9b217da", "4967b25", "e99b5a3"):
        verified, view = aces.at(prefix)
        assert tactical_board.step_view(verified) == view, prefix


@pytest.mark.parametrize("name", ["demo-duel", "demo-twirling-aces"])
def test_every_trail_moves_hex_by_hex_and_ends_where_the_unit_is(demos: dict[str, Demo], name: str) -> None:
    """A trail is what the moves did: each stop one hex from the one before; it ends at the unit's hex (or, for
    a unit out of play, where its mark is)."""
    demo = demos[name]
    trails = 0
    for oid in demo.order:
        verified, view = demo.points[oid]
        state = verified.stop.checkpoint.state  # type: ignore[union-attr]
        gone = {g.unit: g.hex for g in view.gone}
        for trail in view.trails:
            trails += 1
            assert all(hexmap.distance(a, b) <= 1 for a, b in zip(trail.hexes, trail.hexes[1:])), (oid, trail)
            unit = state.unit(trail.unit)
            assert trail.hexes[-1] == (unit.hex if unit.active else gone.get(unit.id, trail.hexes[-1])), oid
    assert trails > len(demo.order)


def test_the_fire_of_the_step_is_the_state_s_own_shots_between_where_the_ships_stood(demos: dict[str, Demo]) -> None:
    """At 2.14.fire of twirling-aces CA and D7 exchange six shots at range 1; the view has each of them with its
    weapon, die and damage, from the attacker's hex to the target's at that step."""
    verified, view = demos["demo-twirling-aces"].at("9b217da")
    state = verified.stop.checkpoint.state  # type: ignore[union-attr]
    shots = [h for h in state.hits if h.at == (2, 14, 3)]
    assert len(shots) == 6
    assert [(f.attacker, f.weapon, f.target, f.die, f.damage) for f in view.fire] == \
        [(h.attacker, h.weapon, h.target, h.roll, h.amount) for h in shots]
    for line in view.fire:
        assert hexmap.distance(line.source, line.aim) == 1
    assert {line.source for line in view.fire if line.attacker == "CA"} == \
        {line.aim for line in view.fire if line.attacker == "D7"}


def test_a_board_whose_replay_disagrees_with_the_verifier_draws_no_trails_rather_than_wrong_ones(
        demos: dict[str, Demo]) -> None:
    verified, view = demos["demo-twirling-aces"].at("9b217da")
    stop = verified.stop
    assert stop is not None and view.trails and view.fire
    moved = replace(stop.checkpoint.state, units=tuple(replace(u, hex=(1, 1)) if u.id == "CA" else u
                                                       for u in stop.checkpoint.state.units))
    told = replace(verified, stop=replace(stop, checkpoint=replace(stop.checkpoint, state=moved)))
    wrong = tactical_board.step_view(told)
    assert (wrong.trails, wrong.fire, wrong.gone) == ((), (), ()) and wrong.until == view.until


# --- the picture ----------------------------------------------------------------------------------------------

def test_each_ship_has_facing_speed_hull_and_a_ring_of_six_shields_with_the_damaged_ones_valued(
        demos: dict[str, Demo]) -> None:
    verified, view = demos["demo-twirling-aces"].at("9b217da")
    state = verified.stop.checkpoint.state  # type: ignore[union-attr]
    root = drawn(verified, view)
    units = {g.get("data-unit"): g for g in groups(root, "pbem-unit")}
    assert set(units) == {u.id for u in state.units if u.active} == {"CA", "D7", "P1"}  # P1: rom's plasma in flight
    on_map = [u for u in state.units if u.active and u.seeking is None]
    for unit in on_map:
        g = units[unit.id]
        assert (g.get("data-facing"), g.get("data-speed"), g.get("data-hull")) == \
            (hexmap.format_facing(unit.facing), str(unit.speed), str(unit.hull))
        assert [t.text for t in g.iter(f"{SVG}tspan")] == [f"sp {unit.speed}", f"h {unit.hull}"]
        (ring,) = groups(g, "shield-ring")
        segments = groups(ring, "shield-segment")
        assert len(segments) == 6
        assert [int(s.get("data-strength")) for s in segments] == list(unit.shields)
        full = list(unit.extra["shields"])
        damaged = {int(s.get("data-shield")) for s in segments if "damaged" in s.get("class").split()}
        assert damaged == {n for n in range(1, 7) if 0 < unit.shields[n - 1] < full[n - 1]} != set()
        values = {int(t.get("data-shield")): int(t.text) for t in groups(ring, "shield-value")}
        assert values == {n: unit.shields[n - 1] for n in damaged}
        # shield #1 faces ahead: its arc is centred on the facing's bearing
        first = next(s for s in segments if s.get("data-shield") == "1")
        x, y = centre(unit.hex)
        start, end = _arc_ends(first.get("d"))
        mid = math.degrees(math.atan2((start[0] + end[0]) / 2 - x, -((start[1] + end[1]) / 2 - y))) % 360
        assert round(mid) % 360 == 60 * unit.facing


def _arc_ends(d: str) -> tuple[tuple[float, float], tuple[float, float]]:
    move, arc = d[1:].split("A")
    x0, y0 = (float(v) for v in move.split())
    parts = arc.split()
    return (x0, y0), (float(parts[-2]), float(parts[-1]))


def test_fire_lines_trails_and_the_disengaged_are_drawn(demos: dict[str, Demo]) -> None:
    verified, view = demos["demo-twirling-aces"].at("9b217da")
    state = verified.stop.checkpoint.state  # type: ignore[union-attr]
    root = drawn(verified, view)
    lines = groups(root, "fire-line")
    assert [(g.get("data-attacker"), g.get("data-weapon"), g.get("data-die"), g.get("data-damage"))
            for g in lines] == [(f.attacker, f.weapon, str(f.die), str(f.damage)) for f in view.fire]
    labels = [t.text for t in groups(root, "fire-label")]
    assert "CA ph1 die 3: 5" in labels and "D7 ds1 die 4: 4" in labels and len(labels) == 6
    trails = {g.get("data-unit"): g for g in groups(root, "trail")}
    assert set(trails) == {"CA", "D7", "KR", "P1"}
    last = trails["CA"].find(f"{SVG}polyline").get("points").split()[-1]
    assert tuple(float(v) for v in last.split(",")) == pytest.approx(centre(state.unit("CA").hex), abs=0.06)
    (kr,) = groups(root, "disengaged")
    assert (kr.get("data-unit"), kr.get("data-hex")) == ("KR", "1530")
    assert "KR left the map" in [t.text for t in kr.iter(f"{SVG}text")]


def test_seeking_weapons_show_their_path_and_their_target_only_once_revealed(demos: dict[str, Demo]) -> None:
    """In flight (1.21.move) the drones' targets are sealed: paths, no target. After the impact (2.0.alloc) the
    drone that hit shows where and whom (its target revealed at contact); the dummy shows that it vanished."""
    verified, view = demos["demo-twirling-aces"].at("ad47287")
    root = drawn(verified, view)
    paths = {g.get("data-unit") for g in groups(root, "seeking-path")}
    assert paths == {"S1", "S2"}
    assert view.targets == () and groups(root, "seeking-target") == []
    verified, view = demos["demo-twirling-aces"].at("78db119")
    root = drawn(verified, view)
    (hit,) = groups(root, "expended")
    assert hit.get("data-unit") == "S1" and "S1 impacted KR: 6" in [t.text for t in hit.iter(f"{SVG}text")]
    (dummy,) = groups(root, "dummy")
    assert dummy.get("data-unit") == "S2"
    s1 = next(t for t in view.trails if t.unit == "S1")
    assert s1.seeking and s1.hexes[-1] == hexmap.parse_hex(hit.get("data-hex"))


def test_the_duel_ends_with_the_d7_marked_where_it_left_the_map(demos: dict[str, Demo]) -> None:
    demo = demos["demo-duel"]
    verified, view = demo.points[demo.order[-1]]
    state = verified.stop.checkpoint.state  # type: ignore[union-attr]
    root = drawn(verified, view)
    (d7,) = groups(root, "disengaged")
    where = hexmap.parse_hex(d7.get("data-hex"))
    assert d7.get("data-unit") == "D7" and state.unit("D7").hex is None
    assert where[0] in (1, state.columns) or where[1] in (1, state.rows)  # it left across an edge
    assert next(t for t in view.trails if t.unit == "D7").hexes[-1] == where


def test_the_legend_has_its_own_area_under_the_title_band(demos: dict[str, Demo]) -> None:
    """The title band spans the picture; the legend and the map sit under it side by side; a long title widens
    the picture instead of running under the legend."""
    verified, view = demos["demo-twirling-aces"].at("9b217da")
    state = verified.stop.checkpoint.state  # type: ignore[union-attr]
    title = "twirling-aces: " + "a very long title for a game point " * 4
    root = parse(tactical_svg.render(state, (), view, title=title))
    left, top, width, _height = (float(v) for v in root.get("viewBox").split())
    (band,) = groups(root, "title-band")
    (heading,) = groups(root, "board-title")
    assert heading.text == title and float(heading.get("y")) < top + BAND
    (legend,) = groups(root, "legend")
    box = legend.find(f"{SVG}rect")
    assert float(box.get("y")) >= top + BAND
    (area,) = groups(root, "map-area")
    assert float(area.get("x")) + float(area.get("width")) <= float(box.get("x")) + 0.06
    assert float(box.get("x")) + float(box.get("width")) <= left + width + 0.06
    assert width >= len(title) * 17 * 0.62
    shown = [t.text for t in groups(root, "legend-unit")]
    assert any(line.startswith("CA fed 1523E sp 16") for line in shown) and "KR rom: left the map" in shown


# --- pure pictures: what the demos do not show ----------------------------------------------------------------

def _state(*units: dict[str, Any]) -> Any:
    setup = {"map": {"columns": 10, "rows": 10}, "turns": 1, "units": list(units),
             "weapons": {"drone": {"seeking": True, "speed": 16, "warhead": 12}}}
    return RULES.initial_state(setup, ["fed", "kli"])


def _ship(unit_id: str, owner: str, hex_: str) -> dict[str, Any]:
    return {"id": unit_id, "owner": owner, "hex": hex_, "facing": "A", "speed": 8, "turn_mode": 2,
            "shields": [10] * 6, "hull": 12}


def test_a_destroyed_ship_is_marked_where_it_was_and_a_revealed_target_is_joined_to_its_weapon() -> None:
    state = _state(_ship("CA", "fed", "0505"), _ship("D7", "kli", "0707"), _ship("F5", "kli", "0303"))
    units = tuple(replace(u, status=DESTROYED, hex=None, left_at=(1, 3, 3)) if u.id == "F5" else
                  replace(u, shields=(10, 0, 10, 4, 10, 10)) if u.id == "CA" else u for u in state.units)
    state = replace(state, units=units)
    lost = FireLine("1.3.fire", "D7", "kli", "ph1", "CA", (7, 7), (5, 5), 2, None, 0, 1, 0, 0)
    view = StepView("1.1.move", "1.4.move", (Trail("D7", "kli", ((7, 9), (7, 8), (7, 7))),), (lost,),
                    targets=(SeekingTarget("D7", "CA"),),
                    gone=(Gone("F5", "kli", DESTROYED, (3, 3), "1.3.fire"),))
    root = parse(tactical_svg.render(state, (), view, title="t"))
    (wreck,) = groups(root, "destroyed")
    assert (wreck.get("data-unit"), wreck.get("data-hex")) == ("F5", "0303")
    ca = next(g for g in groups(root, "shield-ring") if g.get("data-unit") == "CA")
    classes = {s.get("data-shield"): s.get("class") for s in groups(ca, "shield-segment")}
    assert classes["2"] == "shield-segment down" and classes["4"] == "shield-segment damaged"
    assert {t.text for t in groups(ca, "shield-value")} == {"0", "4"}
    assert [t.text for t in groups(root, "fire-label")] == ["D7 ph1 missed"]  # its die lost to a withheld reveal
    (line,) = groups(root, "seeking-target")
    assert (line.get("data-unit"), line.get("data-target")) == ("D7", "CA")
    assert "F5 kli: destroyed" in [t.text for t in groups(root, "legend-unit")]


@pytest.mark.parametrize("facing", range(6))
def test_each_shield_segment_sits_on_the_side_the_rules_say_it_guards(facing: int) -> None:
    """A shot from the neighbour in direction d hits the shield arcs.shields_facing names; that shield's segment
    is drawn towards d (centred on d's bearing), for every facing."""
    ship = {**_ship("CA", "fed", "0505"), "facing": hexmap.format_facing(facing)}
    state = _state(ship, _ship("D7", "kli", "0909"))
    root = parse(tactical_svg.render(state, title="t"))
    ring = next(g for g in groups(root, "shield-ring") if g.get("data-unit") == "CA")
    segments = {int(s.get("data-shield")): s.get("d") for s in groups(ring, "shield-segment")}
    x, y = centre((5, 5))
    for direction in range(6):
        (shield,) = arcs.shields_facing((5, 5), facing, hexmap.neighbour((5, 5), direction))
        start, end = _arc_ends(segments[shield])
        mid = math.degrees(math.atan2((start[0] + end[0]) / 2 - x, -((start[1] + end[1]) / 2 - y))) % 360
        assert round(mid) % 360 == 60 * direction, (facing, direction, shield)


def test_names_with_markup_are_shown_as_text() -> None:
    """A unit's id, the title and a player's name may hold anything a game file does: shown as text, never as
    markup (the SVG is embedded in the game page)."""
    evil = '<script>alert("x")</script>&<b>'
    state = _state(_ship(evil, "fed", "0505"), _ship("D7", "kli", "0707"))
    view = StepView("1.1.move", "1.2.move", (Trail(evil, "fed", ((5, 6), (5, 5))),),
                    gone=(Gone("x<i>", "kli", DESTROYED, (2, 2)),))
    svg = tactical_svg.render(state, (), view, title=f"title {evil}")
    root = parse(svg)
    assert not [e for e in root.iter() if e.tag.split("}")[-1] in ("script", "b", "i")]
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert evil in texts and f"title {evil}" in texts
    assert evil in {g.get("data-unit") for g in groups(root, "pbem-unit")}


# --- `pbem render --out` and `--at`: bad input ------------------------------------------------------------------

@pytest.mark.parametrize("target, rule", [
    ("missing-folder/x.svg", "render.out-missing-folder"),
    ("a/b/c/board.svg", "render.out-missing-folder"),
    ("game.yaml/board.svg", "render.out-unwritable"),  # its folder is a file
    (".", "render.out-unwritable"),  # a folder
    ("/proc/pbem-board.svg", "render.out-unwritable"),  # refused by the system, even to root
])
def test_an_output_path_that_cannot_be_written_is_one_line_exit_2_and_nothing_written(
        played: Table, target: str, rule: str) -> None:
    before = played.snapshot()
    done = played.cli("render", "--out", target, who="kli")
    assert done.exit_code == 2, done.output
    first = done.output.splitlines()[0]
    assert first.startswith(f"pbem: [{rule}] cannot write {target}") and "Traceback" not in done.output
    assert len(done.output.splitlines()) <= 2  # the line, and at most its hint
    assert played.snapshot() == before
    assert not (played.repo_dir / "missing-folder").exists()


def test_a_game_point_that_does_not_exist_is_one_line_and_nothing_written(played: Table) -> None:
    before = played.snapshot()
    done = played.cli("render", "--at", "no-such-point", "--out", "board.svg", who="kli")
    assert done.exit_code == 2 and done.output.startswith("pbem: [repo.bad-revision]")
    assert played.snapshot() == before and not (played.repo_dir / "board.svg").exists()


def test_a_picture_replaces_the_file_whole_and_leaves_nothing_beside_it(played: Table, tmp_path: Path) -> None:
    folder = tmp_path / "pictures"
    folder.mkdir()
    out = folder / "board.svg"
    out.write_text("old")
    done = played.cli("render", "--out", str(out), who="kli")
    assert done.exit_code == 0, done.output
    assert parse(out.read_text()).get("class") == "pbem-tactical"
    assert sorted(p.name for p in folder.iterdir()) == ["board.svg"]


def test_an_open_fire_step_shows_the_shots_declared_there_and_their_dice_once_revealed(
        demos: dict[str, Demo]) -> None:
    """At 1.12.fire of twirling-aces the shots are declared before any die (an action auction, seed §7.B), then
    the dice are revealed and the hits are known but not yet scored (seed §6.C.1): dashed lines, then dice."""
    aces = demos["demo-twirling-aces"]
    verified, view = aces.at("525d0fd")  # fed has declared phaser and photon
    assert [(f.attacker, f.weapon, f.target, f.die, f.scored) for f in view.fire] == \
        [("CA", "ph1", "D7", None, False), ("CA", "tp1", "D7", None, False)]
    verified, view = aces.at("8b2c6c6")  # every die revealed; kli may still reinforce before the hits score
    root = drawn(verified, view)
    lines = [g for g in groups(root, "fire-line") if g.get("data-declared") == "yes"]
    assert len(lines) == 3 and all(g.get("data-die") for g in lines)
    assert "CA ph1 die 2, not yet scored" in [t.text for t in groups(root, "fire-label")]
    scored, _ = aces.at("b3a2f2b")  # the reply given: 1.12.fire resolves, the same shots scored
    state = scored.stop.checkpoint.state  # type: ignore[union-attr]
    assert [(h.attacker, h.weapon, h.roll) for h in state.hits] == \
        [(f.attacker, f.weapon, f.die) for f in view.fire]


# --- the pictures of docs/pictures.md -------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[1] / "docs" / "pictures"
DOC_PICTURES = {  # file -> (demo, commit, title)
    "board-twirling-aces-fire.svg": ("demo-twirling-aces", "9b217da", "twirling-aces: after 2.14.fire"),
    "board-twirling-aces-drones.svg": ("demo-twirling-aces", "ad47287", "twirling-aces: drones in flight"),
    "board-duel-end.svg": ("demo-duel", "45d0538", "the duel: the D7 disengages"),
}


def doc_picture(demos: dict[str, Demo], name: str) -> str:
    demo, commit, title = DOC_PICTURES[name]
    verified, view = demos[demo].at(commit)
    return tactical_svg.render(verified.stop.checkpoint.state, (), view, title=title)  # type: ignore[union-attr]


@pytest.mark.parametrize("name", sorted(DOC_PICTURES))
def test_the_boards_in_the_docs_are_what_pbem_draws(demos: dict[str, Demo], name: str) -> None:
    """docs/pictures.md shows these game points; after a change to the drawing, write them again:
    .venv/bin/python tests/test_tactical_board.py --write-docs"""
    assert (DOCS / name).read_text(encoding="utf-8") == doc_picture(demos, name)


# --- the systems that act on the board: tractor beams, cloaks, internal damage (render/tactical_systems.py) -------

def _systems_board(state: Any, view: StepView | None = None) -> ET.Element:
    return parse(tactical_svg.render(state, (), view if view is not None else StepView(), title="systems"))


def _marks(root: ET.Element) -> list[str]:
    return [t.get("data-mark") for t in groups(root, "legend-mark")]  # type: ignore[misc]


def _centre_of(root: ET.Element, unit: str) -> tuple[float, float]:
    (g,) = [g for g in groups(root, "pbem-unit") if g.get("data-unit") == unit]
    circle = next(g.iter(f"{SVG}circle"))
    return float(circle.get("cx")), float(circle.get("cy"))  # type: ignore[arg-type]


def test_a_tractor_beam_joins_the_holder_to_the_held_until_it_lets_go() -> None:
    from test_tactical_systems import BASE, act, step

    held, _ = step(BASE, "1.1.fire", act("1.1.fire", "CA", {"tractor": {"target": "D7", "energy": 2}}))
    root = _systems_board(held)
    (beam,) = groups(root, "tractor-beam")
    assert (beam.get("data-holder"), beam.get("data-held")) == ("CA", "D7")
    assert "CA holds D7 in its tractor beam" in "".join(beam.itertext())
    ends = {(round(float(line.get("x1")), 1), round(float(line.get("y1")), 1),  # type: ignore[arg-type]
             round(float(line.get("x2")), 1), round(float(line.get("y2")), 1))  # type: ignore[arg-type]
            for line in beam.iter(f"{SVG}line")}
    assert ends == {(*_centre_of(root, "CA"), *_centre_of(root, "D7"))}
    assert "tractor-beam" in _marks(root)
    let_go, _ = step(held, "1.2.activity", act("1.2.activity", "CA", {"cease": "tractor"}))
    root = _systems_board(let_go)
    assert groups(root, "tractor-beam") == [] and "tractor-beam" not in _marks(root)


def test_a_cloaked_ship_is_drawn_faint_and_ringed_while_it_fades_and_once_it_is_cloaked() -> None:
    """setup.cloak.fade 2: fading out at 1.1 and 1.2, cloaked from 1.3, fading in for two impulses once dropped."""
    from test_tactical_systems import BASE, act, step

    cloaked, _ = step(BASE, "1.1.activity", act("1.1.activity", "D7", {"use": "cloak"}))
    shown = []
    for at in ("1.2.activity", "1.3.activity", "1.4.activity"):
        cloaked, _ = step(cloaked, at)
        root = _systems_board(cloaked)
        (unit,) = [g for g in groups(root, "pbem-unit") if g.get("data-unit") == "D7"]
        (mark,) = groups(root, "cloaked")
        how = mark.get("data-cloak")
        assert mark.get("data-unit") == "D7" and how in (mark.get("class") or "").split()
        shown.append((mark.get("data-cloak"), unit.get("opacity")))
        assert "cloaked" in _marks(root)
    assert shown == [("fading", "0.65"), ("cloaked", "0.40"), ("cloaked", "0.40")]
    dropped, _ = step(cloaked, "1.5.activity", act("1.5.activity", "D7", {"cease": "cloak"}))
    assert [m.get("data-cloak") for m in groups(_systems_board(dropped), "cloaked")] == ["fading"]
    visible, _ = step(dropped, "1.7.activity")
    root = _systems_board(visible)
    assert groups(root, "cloaked") == [] and "cloaked" not in _marks(root)
    assert [g.get("opacity") for g in groups(root, "pbem-unit")] == [None, None]
    assert "CA" not in {m.get("data-unit") for m in groups(_systems_board(cloaked), "cloaked")}


def test_internal_hits_are_written_beside_the_damaged_ship_and_its_lost_boxes_in_the_roster() -> None:
    """Each box the impulses shown took, once per box with its hits and what is left; a destroyed weapon bold; the
    unit keeps the list of what it lost (raids first) on its mark and in the legend's roster."""
    from pbem.render.tactical_step import InternalHit
    from pbem.rulesets.tactical import damage
    from test_tactical_systems import RULES as SYSTEMS, setup

    raw = setup(d7={"boxes": {"power": 3, "tractor": 1, "cloak": 1},
                    "weapons": [{"id": f"dr{n}", "type": "ph", "arcs": ["A"]} for n in (1, 2)]},
                ca={"boxes": {"tractor": 1, "transporter": 1, "bay": 1, "probe": 1, "esg": 1}},
                damage_allocation={"rolls": [["weapon", "hull"], ["power", "hull"], ["tractor", "hull"],
                                             ["transporter", "bay", "hull"], ["probe", "esg", "hull"],
                                             ["cloak", "hull"]]})
    start = SYSTEMS.initial_state(raw, ("a", "b"))
    d7 = start.unit("D7")
    point = SYSTEMS.parse_time("1.4.damage")
    ready = start.with_units({"D7": replace(d7, gear=replace(d7.gear, lost=("dr1",)), pending=(("a", 4),))}, point)
    rolls = dict(zip((f"1.4.damage/D7/{n}" for n in range(1, 5)), (1, 2, 2, 1)))
    after, _ = damage.allocate(ready, point, rolls)
    view = StepView(since="1.1.move", until="1.4.damage", internal=tuple(
        InternalHit("1.4.damage", h.unit, h.roll, h.hit, h.left, h.text()) for h in after.hits))
    root = _systems_board(after, view)
    labels = {t.get("data-hit"): t for t in groups(root, "internal-hit")}
    assert list(labels) == ["dr2", "power", "hull"]  # die 1 took dr2, the second die 1 found no weapon: hull
    texts = {hit: "".join(t.itertext()) for hit, t in labels.items()}
    assert texts["dr2"].endswith("dr2 destroyed") and labels["dr2"].get("font-weight") == "bold"
    assert texts["power"].endswith("power ×2: 1 left") and labels["power"].get("data-hits") == "2"
    assert "1.4.damage D7 internal: die 2, power hit (2 left)" in texts["power"]  # the log's lines: the tooltip
    assert all(t.get("data-unit") == "D7" for t in labels.values()) and "internal-hit" in _marks(root)
    (unit,) = [g for g in groups(root, "pbem-unit") if g.get("data-unit") == "D7"]
    assert unit.get("data-lost") == "dr1 dr2"
    roster = [t.text for t in groups(root, "legend-unit")]
    assert any(line.startswith("D7 b 0511A") and line.endswith("· lost dr1 dr2") for line in roster), roster
    plain = _systems_board(start)
    assert groups(plain, "internal-hit") == [] and "internal-hit" not in _marks(plain)
    assert not any("lost" in (t.text or "") for t in groups(plain, "legend-unit"))


if __name__ == "__main__":
    import sys
    import tempfile

    if sys.argv[1:] != ["--write-docs"]:
        raise SystemExit("usage: tests/test_tactical_board.py --write-docs")
    with tempfile.TemporaryDirectory() as tmp:
        walked = {name: _walk(name, Path(tmp)) for name in ("demo-duel", "demo-twirling-aces")}
        DOCS.mkdir(exist_ok=True)
        for picture in DOC_PICTURES:
            (DOCS / picture).write_text(doc_picture(walked, picture), encoding="utf-8")
            print(f"wrote docs/pictures/{picture}")
