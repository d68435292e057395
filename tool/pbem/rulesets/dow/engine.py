"""The adapter to the `diplomacy` package (DESIGN §7.2): with package.py, which loads the package, the only
modules of pbem that import it.

We do not write an adjudicator: the standard map and DATC-compliant adjudication come from `diplomacy==1.1.2`
(pinned in pyproject). The package keeps a 4,500-line game object with printing, clocks and randomness mixed
in, so this module wraps it tightly and hands the rest of pbem only immutable data:

* the package is imported lazily, once, with its warnings silenced: only its engine (not its __init__, which
  loads a network client and server and wires a logger to stderr at DEBUG level), its logger turned off;
  its standard map is built once per process with the adjacency answered on demand and the convoy paths
  recorded in convoys.py (package.py): loading the engine costs some 0.025 s of CPU, not 0.16, which is most of
  what a commit that adjudicates costs beyond any other;
* a `Game` is built from an immutable `Board` (fixed game id: the engine would otherwise draw one from
  os.urandom) once per position and phase: building one costs more than judging a power's orders, and a phase
  judges the orders of seven powers and then adjudicates them. The built game is kept (`_position`, bounded,
  left clean after each check) for the checks, and handed over to the adjudication, which consumes it. Its
  rules: IGNORE_ERRORS (no printing of order errors) and DONT_SKIP_PHASES (the engine then walks the same phase
  sequence as pbem: S M, S R, F M, F R, W A);
* the standard map (powers, provinces, centres, homes, the start) is recorded as data (standard.py), so that
  only adjudication and order checks import the engine;
* every order is checked to have been accepted: the engine drops an invalid order silently into `game.error`,
  so each order is fed one at a time and refused with the engine's own message when `error` grows or the order
  does not appear among the power's orders;
* what the engine returns unordered (units, centres, influence, results) is sorted; wall-clock timestamps and
  the zobrist hash are dropped; the engine's version is returned with every adjudication.

Unknown names are refused before they reach the engine (`set_centers` drops unknown centres silently).

Where the engine departs from DATC v3.0 (2023 rulebook), its orders are corrected first where their situation
applies (datc.py: 6.B.9, 6.G.8, 6.J; skipped by `edition: "2000"`), and its wrong movement steps are replaced
inside its Game (corrections.py: 6.D.12, 6.F.4, 6.F.5, 6.G.11, 6.H.6 after convoys). A support it would read
for another coast is refused by `check_orders` (`Checked.rewritten`), never silently carried out.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from pbem.rulesets.dow import datc, standard
from pbem.rulesets.dow.board import Board, province_of, unit_province
# the package, imported once and lean (package.py); its names are the adapter's own
from pbem.rulesets.dow.package import MAP_NAME, PINNED, EngineError, load as _package, quiet as _quiet  # noqa: F401

GAME_ID = "pbem-dow"
RULES = ("SOLITAIRE", "NO_PRESS", "IGNORE_ERRORS", "POWER_CHOICE", "DONT_SKIP_PHASES")
COMPLETED = "COMPLETED"
_CODE = re.compile(r"^[0-9]+:")


@dataclass(frozen=True)
class Checked:
    """One order as checked by the engine: its normal form (e.g. "A PAR S A MAR - BUR") or why it was refused."""

    order: str
    normal: str | None
    reason: str | None
    rewritten: bool = False  # refused because the engine would read it with another meaning (DATC 6.B.9)


@dataclass(frozen=True)
class Adjudication:
    """What one adjudicated phase gave: the new board, the engine's next phase ("S1901R", or "COMPLETED" when the
    engine ended the game), the result codes per unit (informative only: a saved phase does not keep every
    result, so the verifier compares boards), who dislodged whom, and the engine version."""

    phase: str
    next_phase: str
    board: Board
    results: tuple[tuple[str, tuple[str, ...]], ...]
    dislodged: tuple[tuple[str, str, str | None], ...]  # (owner, unit, the power whose unit took its place)
    engine: str


@dataclass(frozen=True)
class MapInfo:
    """The standard map as pbem needs it: powers (lower-case ids, standard order), provinces, their names,
    supply centres, home centres and the starting position."""

    powers: tuple[str, ...]
    provinces: frozenset[str]
    names: Mapping[str, str]
    supply_centres: frozenset[str]
    homes: Mapping[str, tuple[str, ...]]
    start: Board

    def name(self, province: str) -> str:
        """A province's name for messages: "Munich", "Mid-Atlantic Ocean"."""
        return self.names.get(province, province)


def version() -> str:
    """The installed engine's version, e.g. "1.1.2"."""
    return str(_package()[0])


def engine_name() -> str:
    """What a game records as its engine: "diplomacy 1.1.2"; EngineError when not the pinned version."""
    found = version()
    if found != PINNED:
        raise EngineError(f"dow/1 needs diplomacy=={PINNED}; found {found} (install the pinned version)")
    return f"diplomacy {found}"


@lru_cache(maxsize=1)
def standard_map() -> MapInfo:
    """The standard map: the engine's data as recorded in standard.py (tests check it against the engine's own
    map). Reading it does not import the engine, which with its map costs more than a second in a fresh
    process: a commit that adjudicates nothing (press, a sealed or revealed order) never loads the engine."""
    data = standard.DATA
    powers = tuple(data["powers"])
    start = data["start"]
    board = Board.of(powers, start["units"], start["centres"], start["influence"], start["dislodged"])
    return MapInfo(powers, frozenset(data["provinces"]), MappingProxyType(dict(data["names"])),
                   frozenset(data["supply_centres"]), MappingProxyType({p: tuple(h) for p, h in data["homes"].items()}),
                   board)


def map_data(info: MapInfo) -> dict[str, Any]:
    """A MapInfo as the plain data of standard.py (every collection sorted)."""
    return {"powers": list(info.powers), "provinces": sorted(info.provinces), "names": dict(sorted(info.names.items())),
            "supply_centres": sorted(info.supply_centres), "homes": {p: list(h) for p, h in info.homes.items()},
            "start": info.start.as_data()}


def engine_map() -> MapInfo:
    """The standard map as the engine gives it (what standard.py records)."""
    _, game_class, map_class = _package()
    board_map = _quiet(map_class, MAP_NAME)
    powers = tuple(p.lower() for p in board_map.powers)
    provinces = frozenset(
        loc.upper() for loc in board_map.locs if "/" not in loc and board_map.area_type(loc) != "SHUT"
    )
    names = {}
    for name, abbrev in board_map.loc_name.items():
        if abbrev in provinces:
            names[abbrev] = " ".join(w.lower() if w == "OF" else w.title() for w in name.split())
    homes = {p.lower(): tuple(sorted(h)) for p, h in board_map.homes.items()}
    start_game = _new_game()
    state = start_game.get_state()
    start = _board_from_state(state, powers)
    return MapInfo(powers, provinces, MappingProxyType(names), frozenset(board_map.scs),
                   MappingProxyType(homes), start)


# --- building a game from a board ------------------------------------------------------------------------------

def _new_game() -> Any:
    _, game_class, _ = _package()
    return _quiet(lambda: game_class(game_id=GAME_ID, map_name=MAP_NAME, rules=list(RULES)))


POSITIONS_KEPT = 4  # a phase's position, and a few more for a player checking orders of several phases
_positions: "OrderedDict[tuple[Board, str], Any]" = OrderedDict()


def _position(board: Board, phase: str) -> Any:
    """The engine game holding `board` at `phase`, built once and kept (bounded) for the order checks of every
    power; each check leaves it as it found it (no orders, no new errors)."""
    key = (board, phase)
    game = _positions.get(key)
    if game is None:
        game = _game(board, phase)
        _positions[key] = game
        while len(_positions) > POSITIONS_KEPT:
            _positions.popitem(last=False)
    else:
        _positions.move_to_end(key)
    return game


def _take_position(board: Board, phase: str) -> Any:
    """The kept game of `_position` for an adjudication, which processes it: no longer kept after this."""
    game = _positions.pop((board, phase), None)
    return game if game is not None else _game(board, phase)


def _game(board: Board, phase: str, victory: int | None = None) -> Any:
    """A fresh engine game at `phase` holding exactly `board` (names checked first: the engine drops unknown
    ones silently)."""
    info = standard_map()
    _check_names(board, info)
    game = _new_game()
    upper = {p: p.upper() for p in info.powers}
    state = {
        "name": phase,
        "units": {upper[p]: list(board.units_of(p)) + [f"*{u}" for u in board.dislodged_of(p)]
                  for p in info.powers},
        "retreats": {upper[p]: {u: list(o) for q, u, o in board.dislodged if q == p} for p in info.powers},
        "centers": {upper[p]: list(board.centres_of(p)) for p in info.powers},
        "influence": {upper[p]: list(board.influence_of(p)) for p in info.powers},
        "civil_disorder": {upper[p]: 0 for p in info.powers},
    }
    _quiet(game.set_state, state)
    if game.error:
        raise EngineError(f"the engine refused the position: {_messages(game.error)}")
    if victory is not None:
        game.win = victory
    placed = _board_from_state(game.get_state(), info.powers)
    if placed != board:
        raise EngineError("the engine did not take the position as given (a unit on a wrong coast or terrain?)")
    return game


def _check_names(board: Board, info: MapInfo) -> None:
    if set(board.powers) != set(info.powers):
        raise EngineError(f"a position needs exactly the powers {', '.join(info.powers)}")
    for unit in (*(u for _, u in board.units), *(u for _, u, _ in board.dislodged)):
        if not re.fullmatch(r"[AF] [A-Z]{3}(/[NESW]C)?", unit) or unit_province(unit) not in info.provinces:
            raise EngineError(f"unknown unit {unit!r}")
    for _, places in (*board.centres, *board.influence):
        for place in places:
            if place not in info.provinces:
                raise EngineError(f"unknown province {place!r}")
    for _, owned in board.centres:
        for centre in owned:
            if centre not in info.supply_centres:
                raise EngineError(f"{centre} is not a supply centre")


def _board_from_state(state: Mapping[str, Any], powers: Iterable[str]) -> Board:
    units = {p.lower(): [u for u in us if not u.startswith("*")] for p, us in state["units"].items()}
    dislodged = {p.lower(): {u: list(o) for u, o in rs.items()} for p, rs in state["retreats"].items()}
    centres = {p.lower(): list(c) for p, c in state["centers"].items()}
    influence = {p.lower(): list(c) for p, c in state["influence"].items()}
    return Board.of(powers, units, centres, influence, dislodged)


def _messages(errors: Sequence[Any]) -> str:
    """The engine's messages without codes and without the order it quotes: "convoying unit must reach coast"."""
    return "; ".join(_CODE.sub("", str(e)).split(": ")[0].strip().lower() for e in errors)


def _orders_of(game: Any, power: str) -> list[str]:
    """The orders the engine holds for a power, WAIVE included (the engine's get_orders hides it)."""
    engine_power = game.get_power(power.upper())
    if game.phase_type == "M":
        return [f"{unit} {order}" for unit, order in engine_power.orders.items()]
    return [o for o in engine_power.adjust if o.split()[0] != "VOID"]


def _set(game: Any, power: str, orders: Sequence[str]) -> None:
    _quiet(game.clear_orders, power.upper())
    if orders:
        _quiet(game.set_orders, power.upper(), list(orders))


# --- checking and adjudicating ----------------------------------------------------------------------------------

def check_orders(board: Board, phase: str, power: str, orders: Sequence[str]) -> tuple[Checked, ...]:
    """Each order of `power` at `phase`, in the context of the orders before it: its normal form or the reason
    the engine refuses it (a unit not his, a move to a province that does not border, a second order for one
    unit, a build on an occupied or foreign centre, more builds or disbands than due, ...)."""
    return _check_orders(board, phase, power, tuple(orders))


@lru_cache(maxsize=512)
def _check_orders(board: Board, phase: str, power: str, orders: tuple[str, ...]) -> tuple[Checked, ...]:
    game = _position(board, phase)
    adjusting = phase.endswith("A")
    due = adjustment_due(board, power) if adjusting else 0
    provinces: set[str] = set()
    taken = 0
    out: list[Checked] = []
    for order in orders:
        reason, normal = _try(game, power, order)
        if reason is None and normal is not None and "/" in order:
            normal, reason, rewritten = datc.keep_support_coast(order, normal, _fleet_reaches)
            if reason is not None:
                out.append(Checked(order, None, reason, rewritten))
                continue
        if reason is None and normal is not None:
            unit = " ".join(normal.split()[:2]) if normal != "WAIVE" else None
            if unit is not None and unit_province(unit) in provinces:
                reason = f"a second order for the unit in {unit_province(unit)}"
            elif adjusting and taken + 1 > abs(due):
                what = "builds" if due > 0 else "disbands"
                reason = f"more {what} than due ({abs(due)})" if due else "no builds or disbands are due"
            elif unit is not None:
                provinces.add(unit_province(unit))
        if reason is None:
            taken += 1
            out.append(Checked(order, normal, None))
        else:
            out.append(Checked(order, None, reason))
    return tuple(out)


def _fleet_reaches(location: str, coast: str) -> bool:
    """Whether a fleet at `location` ("MAO", "SPA/SC") can move to `coast` ("SPA/NC")."""
    return bool(_map().abuts("F", location, "-", coast))


@lru_cache(maxsize=1)
def _map() -> Any:
    return _quiet(_package()[2], MAP_NAME)


@lru_cache(maxsize=1)
def _neighbours() -> Mapping[str, tuple[str, ...]]:
    """Province to neighbouring provinces, over land and sea alike (DATC 6.J, 2023 civil disorder distance)."""
    out: dict[str, set[str]] = {}
    for here, theirs in _map().loc_abut.items():
        for there in theirs:
            a, b = here[:3].upper(), there[:3].upper()
            if a != b:
                out.setdefault(a, set()).add(b)
                out.setdefault(b, set()).add(a)
    return MappingProxyType({p: tuple(sorted(n)) for p, n in out.items()})


def _try(game: Any, power: str, order: str) -> tuple[str | None, str | None]:
    """Feed one order alone; (None, its normal form) when the engine took it, else (reason, None).

    One at a time is enough: the engine judges each order against the position only (a second order for one
    unit, and the number of builds, are checked by the caller)."""
    if order.strip().upper() == "WAIVE" and game.phase_type != "A":
        return "WAIVE is only given at adjustments", None
    before = len(game.error)
    try:
        _set(game, power, [order])
        held = _real(_orders_of(game, power))
    except Exception as err:  # the engine raises on some malformed orders (e.g. a bare "WAIVE" at movement)
        del game.error[before:]  # the game is kept for the next check (`_position`)
        return f"the engine cannot read it ({type(err).__name__})", None
    finally:
        _set(game, power, [])
    if len(game.error) > before:
        reason = _messages(game.error[before:])
        del game.error[before:]
        return reason, None
    if order.strip().upper() == "WAIVE" and not held and game.phase_type == "A":
        return None, "WAIVE"
    if len(held) != 1:
        return "the engine did not take it", None
    return None, held[0]


def _real(orders: Sequence[str]) -> list[str]:
    """Orders without the WAIVEs the engine adds by itself for powers nobody controls."""
    return [o for o in orders if o != "WAIVE"]


EDITIONS = ("2023", "2000")  # the rulebook where DATC v3.0 offers alternatives; 2023 is DATC's preference


def adjudicate(board: Board, phase: str, orders: Mapping[str, Sequence[str]], victory: int,
               edition: str = "2023") -> Adjudication:
    """Adjudicate one phase: every power's orders (normal forms, all of them accepted by `check_orders`) on a
    fresh game holding `board`; EngineError if the engine refuses any of them.

    `edition` "2023" (default) applies DATC v3.0's preferred rulings where the engine departs from them
    (datc.py); "2000" keeps the engine's own older-rulebook choices (coasts in supports ignored, a move via
    convoy falls back to the land route, civil disorder by distance to home centres)."""
    if edition not in EDITIONS:
        raise EngineError(f"unknown rulebook edition {edition!r} (known: {', '.join(EDITIONS)})")
    return _adjudicate(board, phase, tuple(sorted((p, tuple(sorted(o))) for p, o in orders.items() if o)), victory,
                       edition)


@lru_cache(maxsize=64)
def _adjudicate(
    board: Board, phase: str, orders: tuple[tuple[str, tuple[str, ...]], ...], victory: int, edition: str = "2023"
) -> Adjudication:
    info = standard_map()
    game = _take_position(board, phase)
    game.win = victory
    game.land_fallback = edition == "2000"  # 6.G.11: the 2023 rulebook has none
    for power, _given in orders:
        if power not in info.powers:
            raise EngineError(f"orders for unknown power {power!r}")
    fed = _corrected(board, phase, dict(orders), edition)
    _feed(game, fed)
    if edition == "2023" and phase.endswith("M") and any(o.endswith(" VIA") for given in fed.values() for o in given):
        carried = datc.no_land_fallback(fed, lambda start, end: _carried(fed, start, end))
        if carried is not None:
            _feed(game, carried)
    try:
        _quiet(game.process)
    except Exception as err:  # pragma: no cover - the engine failing on accepted orders is a bug to report
        raise EngineError(f"the engine failed adjudicating {phase}: {type(err).__name__}: {err}") from None
    after = _board_from_state(game.get_state(), info.powers)
    raw_results = game.result_history[phase] if phase in game.result_history else {}
    results = tuple(sorted(
        (str(unit), tuple(sorted(_CODE.sub("", str(code)).strip() for code in codes)))
        for unit, codes in raw_results.items()
    ))
    dislodged = tuple(sorted(
        (power, unit, (board_unit[0] if (board_unit := after.unit_in(unit_province(unit))) else None))
        for power, unit, _ in after.dislodged
    ))
    next_phase = game.get_current_phase()
    return Adjudication(phase, next_phase, after, results, dislodged, engine_name())


def _feed(game: Any, orders: Mapping[str, Sequence[str]]) -> None:
    for power, given in orders.items():
        before = len(game.error)
        _set(game, power, given)
        held = _orders_of(game, power)
        if len(game.error) > before or sorted(_real(held)) != sorted(_real(given)):
            raise EngineError(f"the engine did not accept all orders of {power}: {_messages(game.error[before:])}"
                              f" (held {held}, given {list(given)})")


def _corrected(board: Board, phase: str, orders: dict[str, Sequence[str]], edition: str) -> dict[str, list[str]]:
    """The orders the engine is given, corrected where its rules depart from DATC v3.0 (see datc.py); each
    correction runs only when its situation is there. The 2000 edition only drops the coasts of supports."""
    out = {p: list(o) for p, o in orders.items()}
    if any(datc.has_support_coast(o) for given in out.values() for o in given):
        if edition != "2023":
            return {p: [datc.strip_support_coast(o) for o in given] for p, given in out.items()}
        out = datc.void_unmatched_coast_supports(out)
    if edition == "2023" and phase.endswith("A"):
        for power in standard_map().powers:
            due = adjustment_due(board, power)
            given = out.get(power, [])
            short = -due - sum(1 for o in given if o.endswith(" D"))
            if due < 0 and short > 0:
                removed = {" ".join(o.split()[:2]) for o in given if o.endswith(" D")}
                kept = [u for u in board.units_of(power) if u not in removed]
                owned = board.centres_of(power)
                out[power] = given + [f"{u} D" for u in datc.civil_disorder_disbands(
                    kept, owned, short, _neighbours(), standard_map().name)]
    return out


def _carried(orders: Mapping[str, Sequence[str]], start: str, end: str) -> bool:
    return datc.carried(orders, start, end, _neighbours(), lambda place: _map().area_type(place) == "WATER")


def unit_locations() -> tuple[str, ...]:
    """Every unit the standard map allows where it stands, as the engine writes it ("A PAR", "F STP/SC")."""
    board_map = _map()
    return tuple(sorted({unit for loc in board_map.locs for unit in (f"A {loc.upper()}", f"F {loc.upper()}")
                         if board_map.is_valid_unit(unit)}))


def possible_orders(board: Board, phase: str) -> Mapping[str, tuple[str, ...]]:
    """Every order the engine would take at `phase`, by the location of the unit (random play, benchmarks)."""
    game = _position(board, phase)
    return {loc: tuple(sorted(o)) for loc, o in _quiet(game.get_all_possible_orders).items() if o}


def build_sites(board: Board, power: str) -> tuple[str, ...]:
    """The home centres where `power` could build now: owned and empty (the engine's rule)."""
    homes = standard_map().homes.get(power, ())
    occupied = {unit_province(u) for _, u in board.units}
    return tuple(h for h in homes if h in board.centres_of(power) and h not in occupied)


def adjustment_due(board: Board, power: str) -> int:
    """Builds (> 0, at most the free build sites) or disbands (< 0) due at the Winter adjustments."""
    need = len(board.centres_of(power)) - len(board.units_of(power))
    return min(need, len(build_sites(board, power))) if need > 0 else need


def render_svg(board: Board, phase: str) -> str:
    """The board as SVG, drawn by the engine's renderer (for `pbem render`)."""
    game = _game(board, phase if phase[-1] != "P" else phase[:-1] + "M")
    return str(_quiet(lambda: game.render(incl_orders=False, output_format="svg")))


def normal_province(text: str) -> str | None:
    """A province code from user text ("par", "STP/NC" -> "PAR", "STP"), or None if the map has none."""
    code = province_of(text.strip()) if isinstance(text, str) and len(text.strip()) >= 3 else ""
    return code if code in standard_map().provinces else None
