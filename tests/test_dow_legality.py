"""Order legality by relationship state (DESIGN §7.2 table; seed 001 "The Relationship States" and "Further
Definitions"): a table of (states in force, territories, order) -> legal, or the reason. Orders are in the
engine's normal form; the board is the standard opening with the changes each case names."""

from __future__ import annotations

from typing import Any

import pytest

from pbem.rulesets.dow import engine, legality
from pbem.rulesets.dow.board import Board
from pbem.rulesets.dow.relations import Matrix

INFO = engine.standard_map()
START = INFO.start


def board(units: dict[str, list[str]] | None = None, colours: dict[str, list[str]] | None = None) -> Board:
    """The opening position plus extra units (their provinces take the owner's colour) and extra colours."""
    all_units = {p: list(START.units_of(p)) for p in INFO.powers}
    influence = {p: set(START.influence_of(p)) for p in INFO.powers}
    for power, extra in (units or {}).items():
        all_units[power] += extra
        for unit in extra:
            for coloured in influence.values():
                coloured.discard(unit[2:5])
            influence[power].add(unit[2:5])
    for power, provinces in (colours or {}).items():
        for province in provinces:
            for coloured in influence.values():
                coloured.discard(province)
            influence[power].add(province)
    return Board.of(INFO.powers, all_units, {p: START.centres_of(p) for p in INFO.powers}, influence)


def states(**pairs: str) -> Matrix:
    """states(france_germany="WAR") -> the matrix with those pairs set, all others NEUTRAL."""
    return Matrix.neutral(INFO.powers).with_states({tuple(k.split("_")): v for k, v in pairs.items()})


GERMAN_BUR = {"germany": ["A BUR"]}
GERMAN_COLOUR_BUR = {"germany": ["BUR"]}
NEED_WAR = "(moves into a power's territory need WAR)"
NEED_HOSTILE = "(supporting or convoying a move into a power's territory needs HOSTILE or WAR)"
NEED_FRIENDLY = "needs FRIENDLY or ALLIED"
NEED_ALLIED = "into the territory of a power hostile to France needs France and Germany ALLIED"

# (seed sentence / DESIGN row, states, units, colours, power, order, None (legal) or a fragment of the reason)
CASES: list[tuple[str, Matrix, dict[str, Any] | None, dict[str, Any] | None, str, str, str | None]] = [
    ("NEUTRAL: can't interact other than bouncing in neutral (uncolored) territories",
     states(), None, None, "france", "A PAR - BUR", None),
    ("a move into a province coloured Y's colour needs WAR (NEUTRAL)",
     states(), None, GERMAN_COLOUR_BUR, "france", "A PAR - BUR",
     "france may not move into Burgundy: Germany's territory, and France and Germany are NEUTRAL " + NEED_WAR),
    ("HOSTILE: you may not directly attack said country",
     states(france_germany="HOSTILE"), None, GERMAN_COLOUR_BUR, "france", "A PAR - BUR", NEED_WAR),
    ("FRIENDLY: no moves into their territory", states(france_germany="FRIENDLY"), GERMAN_BUR, None, "france",
     "A PAR - BUR", NEED_WAR),
    ("ALLIED: no moves into their territory (gift it instead)", states(france_germany="ALLIED"), GERMAN_BUR, None,
     "france", "A PAR - BUR", NEED_WAR),
    ("WAR: no limits to moves into their territories", states(france_germany="WAR"), GERMAN_BUR, None, "france",
     "A PAR - BUR", None),
    ("LIMBO: moves as if hostile to both", states(france_germany="LIMBO"), GERMAN_BUR, None, "france",
     "A PAR - BUR", "are in LIMBO (which moves as HOSTILE) " + NEED_WAR),
    ("territory: anything they have a unit in (the engine's start colours are home units)",
     states(), None, None, "italy", "A VEN - TRI",
     "italy may not move into Trieste: Austria's territory, and Italy and Austria are NEUTRAL"),
    ("territory: Y's unit on Z's colour is the territory of both; WAR with Y alone is not enough",
     states(france_germany="WAR"), {"germany": ["A PIC"]}, {"england": ["PIC"]}, "france", "A PAR - PIC",
     "Picardy: England's territory, and France and England are NEUTRAL"),
    ("territory: Y's unit on Z's colour, at WAR with both",
     states(france_germany="WAR", england_france="WAR"), {"germany": ["A PIC"]}, {"england": ["PIC"]}, "france",
     "A PAR - PIC", None),
    ("a retreat is a move: into Y's territory only at WAR",
     states(france_germany="HOSTILE"), None, GERMAN_COLOUR_BUR, "france", "A PAR R BUR",
     "france may not retreat into Burgundy"),
    ("a move into one's own coloured province is free", states(), None, {"france": ["BUR"]}, "france",
     "A PAR - BUR", None),
    ("HOSTILE: you can support moves into their territories",
     states(france_germany="HOSTILE"), GERMAN_BUR, None, "france", "A MAR S A PAR - BUR", None),
    ("WAR: support into their territories", states(france_germany="WAR"), GERMAN_BUR, None, "france",
     "A MAR S A PAR - BUR", None),
    ("LIMBO: supports into their territory as if hostile", states(france_germany="LIMBO"), GERMAN_BUR, None,
     "france", "A MAR S A PAR - BUR", None),
    ("NEUTRAL: no support into their territory", states(), GERMAN_BUR, None, "france", "A MAR S A PAR - BUR",
     "Burgundy is Germany's territory, and France and Germany are NEUTRAL " + NEED_HOSTILE),
    ("FRIENDLY: no support of an attack on a friend", states(france_germany="FRIENDLY"), GERMAN_BUR, None,
     "france", "A MAR S A PAR - BUR", NEED_HOSTILE),
    ("FRIENDLY: you may support hold units of the other country", states(france_germany="FRIENDLY"), GERMAN_BUR,
     None, "france", "A PAR S A BUR", None),
    ("ALLIED: same as friendly (support hold)", states(france_germany="ALLIED"), GERMAN_BUR, None, "france",
     "A PAR S A BUR", None),
    ("NEUTRAL: no support hold", states(), GERMAN_BUR, None, "france", "A PAR S A BUR",
     "france may not support Germany's A BUR: France and Germany are NEUTRAL"),
    ("HOSTILE: no support hold", states(france_germany="HOSTILE"), GERMAN_BUR, None, "france", "A PAR S A BUR",
     NEED_FRIENDLY),
    ("LIMBO: no support hold (hostile to both)", states(france_germany="LIMBO"), GERMAN_BUR, None, "france",
     "A PAR S A BUR", NEED_FRIENDLY),
    ("WAR: no limits to the interactions you may have with their units (support hold)",
     states(france_germany="WAR"), GERMAN_BUR, None, "france", "A PAR S A BUR", None),
    ("WAR: no limits to interactions with their units (support them into uncoloured land)",
     states(france_germany="WAR"), GERMAN_BUR, None, "france", "A PAR S A BUR - PIC", None),
    ("WAR with the mover, but the territory of a third power still needs HOSTILE or WAR with it",
     states(france_germany="WAR"), {"germany": ["A BUR"], "england": ["A PIC"]}, None, "france",
     "A PAR S A BUR - PIC", "Picardy is England's territory, and France and England are NEUTRAL"),
    ("support hold of one's own unit is free", states(), None, None, "france", "A PAR S A MAR", None),
    ("FRIENDLY: you may support their units to a neutral territory", states(france_germany="FRIENDLY"),
     GERMAN_BUR, None, "france", "A PAR S A BUR - PIC", None),
    ("FRIENDLY: you may support their units to a territory they own", states(france_germany="FRIENDLY"),
     GERMAN_BUR, {"germany": ["PIC"]}, "france", "A PAR S A BUR - PIC", None),
    ("NEUTRAL: no help to their units", states(), GERMAN_BUR, None, "france", "A PAR S A BUR - PIC",
     "helping another power's unit into its own or uncoloured territory " + NEED_FRIENDLY),
    ("HOSTILE: no help to their units", states(france_germany="HOSTILE"), GERMAN_BUR, None, "france",
     "A PAR S A BUR - PIC", NEED_FRIENDLY),
    ("ALLIED: help into territories of hostile countries",
     states(france_germany="ALLIED", england_france="HOSTILE"), {"germany": ["A BUR"], "england": ["A PIC"]},
     None, "france", "A PAR S A BUR - PIC", None),
    ("ALLIED: help into territories of countries at war with you",
     states(france_germany="ALLIED", england_france="WAR"), {"germany": ["A BUR"], "england": ["A PIC"]},
     None, "france", "A PAR S A BUR - PIC", None),
    ("FRIENDLY: no help into territories of hostile countries (only ALLIED)",
     states(france_germany="FRIENDLY", england_france="HOSTILE"), {"germany": ["A BUR"], "england": ["A PIC"]},
     None, "france", "A PAR S A BUR - PIC", NEED_ALLIED + " (they are FRIENDLY)"),
    ("ALLIED: no help into the territory of a country not hostile to you",
     states(france_germany="ALLIED"), {"germany": ["A BUR"], "england": ["A PIC"]}, None, "france",
     "A PAR S A BUR - PIC", "Picardy is England's territory, and France and England are NEUTRAL " + NEED_HOSTILE),
    ("helping another's unit into one's own territory is not in the table",
     states(france_germany="ALLIED"), GERMAN_BUR, {"france": ["PIC"]}, "france", "A PAR S A BUR - PIC",
     "Picardy is France's own territory"),
    ("FRIENDLY: you may convoy their units to a neutral territory", states(england_france="FRIENDLY"),
     {"france": ["F ENG"]}, None, "france", "F ENG C A LON - PIC", None),
    ("NEUTRAL: no convoy of their units", states(), {"france": ["F ENG"]}, None, "france", "F ENG C A LON - PIC",
     "france may not convoy England's A LON - PIC"),
    ("HOSTILE: you can convoy allied (State 5) units into their territories",
     states(germany_france="ALLIED", england_france="HOSTILE"), {"france": ["F ENG"], "germany": ["A PIC"]},
     None, "france", "F ENG C A PIC - LON", None),
    ("HOSTILE: convoy only allied units into their territories, not friendly ones",
     states(germany_france="FRIENDLY", england_france="HOSTILE"), {"france": ["F ENG"], "germany": ["A PIC"]},
     None, "france", "F ENG C A PIC - LON", NEED_ALLIED),
    ("ALLIED: convoy into territories of hostile countries",
     states(germany_france="ALLIED", england_france="HOSTILE"), {"france": ["F NTH"], "germany": ["A YOR"]},
     None, "france", "F NTH C A YOR - EDI", None),
    ("convoying one's own army into a hostile country's territory",
     states(england_france="HOSTILE"), {"france": ["F ENG", "A PIC"]}, None, "france", "F ENG C A PIC - LON",
     None),
    ("LIMBO counts as HOSTILE for convoys into their territory",
     states(england_france="LIMBO"), {"france": ["F ENG", "A PIC"]}, None, "france", "F ENG C A PIC - LON", None),
    ("holds are free", states(), None, None, "france", "A PAR H", None),
    ("disbands are free", states(), None, None, "france", "A PAR D", None),
    ("builds are free", states(), None, None, "france", "A PAR B", None),
    ("waives are free", states(), None, None, "france", "WAIVE", None),
]


@pytest.mark.parametrize("name, matrix, units, colours, power, order, expected", CASES,
                         ids=[c[0][:60] for c in CASES])
def test_order_legality(name: str, matrix: Matrix, units: Any, colours: Any, power: str, order: str,
                        expected: str | None) -> None:
    reason = legality.forbidden(power, order, board(units, colours), matrix, INFO.name)
    if expected is None:
        assert reason is None, reason
    else:
        assert reason is not None and expected in reason, reason


@pytest.mark.parametrize("normal, kind", [
    ("A PAR H", "hold"), ("A PAR - BUR", "move"), ("A LON - BRE VIA", "move"), ("A PAR S A MAR", "support_hold"),
    ("A PAR S A MAR H", "support_hold"), ("A PAR S A MAR - BUR", "support_move"), ("F ENG C A LON - BRE", "convoy"),
    ("A BUR R RUH", "retreat"), ("F STP/NC B", "build"), ("A PAR D", "disband"), ("WAIVE", "waive"),
])
def test_parse_normal_orders(normal: str, kind: str) -> None:
    assert legality.parse(normal).kind == kind


@pytest.mark.parametrize("bad", ["", "A", "A PAR", "A PAR X", "A PAR S", "A PAR - ", "A PAR C A LON"])
def test_parse_refuses_non_orders(bad: str) -> None:
    with pytest.raises(ValueError):
        legality.parse(bad)
