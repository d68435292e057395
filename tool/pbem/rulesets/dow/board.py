"""The position on the board of a `dow/1` game (DESIGN §7.2): units, dislodged units, centres and influence.

A `Board` is what the verifier compares after re-adjudicating a phase (positions, not the engine's
result codes). Everything is immutable and sorted, so two boards are equal exactly when the positions are:

* `units`: (power, unit) pairs, a unit written as the engine writes it: "A PAR", "F STP/SC";
* `dislodged`: (power, unit, retreat options) for units dislodged in the last movement phase, the options as
  the engine computed them ("BEL", "SPA/NC", ...);
* `centres`: (power, supply centres) for every power, also powers that own none;
* `influence`: (power, provinces) for every power: the provinces coloured the power's colour (the engine keeps
  the colour of the last power whose unit stood there; DESIGN §7.2 "territory" reads it); always provinces,
  also where the engine writes a coast.

Provinces are three upper-case letters ("PAR", "STP"); a unit's province is its location without the coast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

Pairs = tuple[tuple[str, tuple[str, ...]], ...]


def province_of(location: str) -> str:
    """The province of a location or unit location: "STP/SC" -> "STP", "PAR" -> "PAR"."""
    return location[:3].upper()


def unit_province(unit: str) -> str:
    """The province a unit stands in: "F STP/SC" -> "STP"."""
    return province_of(unit[2:])


@dataclass(frozen=True)
class Board:
    """One position; build it with `Board.of` (which sorts), never mutate it."""

    units: tuple[tuple[str, str], ...]
    dislodged: tuple[tuple[str, str, tuple[str, ...]], ...]
    centres: Pairs
    influence: Pairs

    @classmethod
    def of(
        cls,
        powers: Iterable[str],
        units: Mapping[str, Iterable[str]],
        centres: Mapping[str, Iterable[str]],
        influence: Mapping[str, Iterable[str]],
        dislodged: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
    ) -> Board:
        """A board from per-power collections (any order); every power of `powers` gets a centres and an
        influence entry, also when empty."""
        names = sorted(powers)
        return cls(
            units=tuple(sorted((p, u) for p in names for u in units.get(p, ()))),
            dislodged=tuple(sorted(
                (p, u, tuple(sorted(options)))
                for p in names for u, options in (dislodged or {}).get(p, {}).items()
            )),
            centres=tuple((p, tuple(sorted(set(centres.get(p, ()))))) for p in names),
            # provinces, never coasts: after a fleet retreats onto a coast the engine colours "STP/SC", which it
            # then refuses in the next phase (docs/dow.md, the engine corrections)
            influence=tuple((p, tuple(sorted({province_of(c) for c in influence.get(p, ())}))) for p in names),
        )

    # --- reading ---------------------------------------------------------------------------------------------
    @property
    def powers(self) -> tuple[str, ...]:
        return tuple(p for p, _ in self.centres)

    def units_of(self, power: str) -> tuple[str, ...]:
        """The power's units on the board (not the dislodged ones)."""
        return tuple(u for p, u in self.units if p == power)

    def dislodged_of(self, power: str) -> tuple[str, ...]:
        """The power's dislodged units, which must retreat or disband."""
        return tuple(u for p, u, _ in self.dislodged if p == power)

    def centres_of(self, power: str) -> tuple[str, ...]:
        return dict(self.centres).get(power, ())

    def influence_of(self, power: str) -> tuple[str, ...]:
        return dict(self.influence).get(power, ())

    def unit_in(self, province: str) -> tuple[str, str] | None:
        """(power, unit) of the unit standing in a province (not a dislodged one), or None."""
        for power, unit in self.units:
            if unit_province(unit) == province:
                return power, unit
        return None

    def centre_owner(self, province: str) -> str | None:
        for power, owned in self.centres:
            if province in owned:
                return power
        return None

    def colour_of(self, province: str) -> str | None:
        """The power whose colour a province has (the engine's influence), or None when uncoloured."""
        for power, coloured in self.influence:
            if province in coloured:
                return power
        return None

    def territory_owners(self, province: str) -> frozenset[str]:
        """Seed 001: "A country's territories are defined as anything they have a unit in, or is colored their
        color." The powers whose territory this province is (none for an uncoloured, empty province)."""
        owners = {p for p, u in self.units if unit_province(u) == province}
        owners |= {p for p, u, _ in self.dislodged if unit_province(u) == province}
        colour = self.colour_of(province)
        if colour is not None:
            owners.add(colour)
        return frozenset(owners)

    def is_alive(self, power: str) -> bool:
        """Whether a power is still in the game: it has units or centres."""
        return bool(self.units_of(power) or self.dislodged_of(power) or self.centres_of(power))

    # --- changing (a new board) --------------------------------------------------------------------------------
    def with_gift(self, giver: str, taker: str, province: str) -> Board:
        """The board after `giver` gifts `province` to `taker` (seed 001, ALLIED): its colour and, if it is a
        supply centre the giver owns, the centre."""
        influence = {p: set(c) for p, c in self.influence}
        centres = {p: set(c) for p, c in self.centres}
        for coloured in influence.values():
            coloured.discard(province)
        influence[taker].add(province)
        if province in centres.get(giver, set()):
            centres[giver].discard(province)
            centres[taker].add(province)
        return Board.of(
            self.powers,
            {p: self.units_of(p) for p in self.powers},
            centres,
            influence,
            {p: {u: o for q, u, o in self.dislodged if q == p} for p in self.powers},
        )

    def as_data(self) -> dict[str, Any]:
        """The position as plain data for a result file: {units: {power: [...]}, dislodged: {power: {unit:
        [options]}}, centres: {power: [...]}, influence: {power: [...]}}; every list sorted."""
        return {
            "units": {p: list(self.units_of(p)) for p in self.powers},
            "dislodged": {p: {u: list(o) for q, u, o in self.dislodged if q == p} for p in self.powers},
            "centres": {p: list(c) for p, c in self.centres},
            "influence": {p: list(c) for p, c in self.influence},
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Board:
        """The inverse of `as_data` (ValueError for a malformed position)."""
        try:
            powers = sorted(data["centres"])
            return cls.of(powers, data["units"], data["centres"], data["influence"], data.get("dislodged") or {})
        except (KeyError, TypeError, AttributeError) as err:
            raise ValueError(f"a position needs units, centres and influence per power ({err})") from None
