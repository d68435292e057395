"""What the systems that act leave on a unit of `tactical/1` (seed 000 §1, §6.C.5; docs/tactical.md "Systems
that act"): the tractor hold, the cloak, boarding parties, what raids destroyed, the craft in the bays, the probes
and the ESG field. One frozen `Gear` per unit (`Unit.gear`), changed only through `dataclasses.replace`.

Every number comes from game.yaml `setup`: a unit's `boarding_parties`, `probes` and `craft`, and the tables
`tractor`, `transporter`, `cloak`, `esg`, `probe` and `craft` (`table`); all optional, so a game without them
plays exactly as before. This module knows no unit type: it is imported by state.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pbem.rulesets.base import Point
from pbem.rulesets.tactical.gametime import IMPULSES

TABLES = ("tractor", "transporter", "cloak", "esg", "probe", "craft")
# the defaults of each table's numbers where game.yaml gives none (docs/tactical.md "Systems that act")
DEFAULTS: dict[str, dict[str, int]] = {
    "tractor": {"range": 1},
    "transporter": {"range": 5, "raid": 3, "board": 4},
    "cloak": {"fade": 4},
    "esg": {"radius": 1, "damage": 4, "impulses": 8},
    "probe": {"range": 10},
}


@dataclass(frozen=True)
class Gear:
    """A unit's systems state. `holding`/`held_by`: the unit it holds in a tractor beam, or is held by;
    `cloaked_at`: when its cloak went up (None: not cloaked), `uncloaked_at` when it last came down; `parties`:
    its own boarding parties aboard; `lost`: weapons and systems destroyed by raids; `bays`: the craft aboard, by
    id; `probes`: probes left; `esg_at`: when its ESG field went up (None: down)."""

    holding: str | None = None
    held_by: str | None = None
    cloaked_at: Point | None = None
    uncloaked_at: Point | None = None
    parties: int = 0
    lost: tuple[str, ...] = ()
    bays: tuple[str, ...] = ()
    probes: int = 0
    esg_at: Point | None = None
    hit_by_esg: tuple[str, ...] = ()  # the units its present field has already struck (once per field)
    locks: tuple[tuple[int, str], ...] = ()  # (turn, unit) its information probes locked on


def impulse_index(point: Point) -> int:
    """A point's impulse counted from the start of the game (turn 1 impulse 1 is 1)."""
    return (point[0] - 1) * IMPULSES + point[1]


def since(start: Point | None, now: Point | None) -> int | None:
    """Impulses from `start` to `now` (None when either is unknown)."""
    return None if start is None or now is None else impulse_index(now) - impulse_index(start)


def table(tables: Mapping[str, Any], name: str) -> dict[str, Any]:
    """One of the setup tables with its defaults filled in (a missing table: all defaults)."""
    given = tables.get(name)
    return {**DEFAULTS.get(name, {}), **(dict(given) if isinstance(given, Mapping) else {})}


def whole(value: Any, where: str, low: int = 0, high: int = 1000) -> int:
    """A whole number low..high from setup, else ValueError naming `where`."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{where} must be a whole number {low}..{high}, got {value!r}")
    return value


def check_tables(setup: Mapping[str, Any]) -> None:
    """ValueError naming the field of a setup table that is not a mapping of whole numbers (`craft` is checked
    by craft.py, `esg.damage` and `probe.damage` may be a list of six)."""
    for name in TABLES:
        given = setup.get(name)
        if given is None or name == "craft":
            continue
        if not isinstance(given, Mapping):
            raise ValueError(f"setup.{name} must be a mapping such as {{{', '.join(f'{k}: {v}' for k, v in DEFAULTS.get(name, {}).items())}}}")
        for key, value in given.items():
            if key == "damage" and isinstance(value, list) and name == "probe":
                if len(value) != 6:
                    raise ValueError(f"setup.{name}.damage must be one number or six (die 1..6), got {value!r}")
                for each in value:
                    whole(each, f"setup.{name}.damage")
            else:
                whole(value, f"setup.{name}.{key}", 1 if key in ("raid", "board") else 0)


def of_unit(raw: Mapping[str, Any], where: str) -> Gear:
    """A unit's gear at the start, from its setup: `boarding_parties`, `probes` and the ids of its `craft`."""
    carried = raw.get("craft") or []
    if not isinstance(carried, list) or not all(isinstance(c, Mapping) and isinstance(c.get("id"), str)
                                                for c in carried):
        raise ValueError(f"{where}.craft must be a list of {{id: NAME, type: CRAFT_TYPE}}")
    return Gear(parties=whole(raw.get("boarding_parties", 0), f"{where}.boarding_parties"),
                probes=whole(raw.get("probes", 0), f"{where}.probes"),
                bays=tuple(str(c["id"]) for c in carried))
