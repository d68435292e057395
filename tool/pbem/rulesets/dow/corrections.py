"""Corrections made inside the `diplomacy` engine's own movement adjudication (DATC v3.0, sections 6.D-6.H).

The engine (1.1.2) resolves a movement phase in `Game._resolve_moves` step by step, then lists the retreats
in `Game._move_results`. Where a step is wrong, `Corrected` (mixed into the engine's Game by engine.py, the
only module that imports the package; this one never does) replaces or completes that step and leaves the
others as they are. Each correction names the DATC case whose rule it restores; docs/dow.md lists them all:

* 6.D.12 with a convoy (own-country support): a support given by the power whose unit is attacked never helps
  to dislodge it; the engine forgets this when the attack is ordered "via convoy" (it looks for
  the attacked unit under the word VIA) and dislodges the unit (`_strengths`).
* 6.F.4, 6.F.5 (an attacked or beleaguered convoy is not disrupted): a convoy fails only when a convoying
  fleet is dislodged. The engine treats a fleet as dislodged by an attacker whose strength counts supports of
  the fleet's own power (which cannot dislodge it), and a beleaguered fleet as dislodged when one of the
  attackers stands in the convoy's destination (`_check_disruptions`, `_fleet_dislodged`).
* 6.G.6, 6.G.11 (2023 rulebook: convoy intent by a fleet of the same power, and no land fallback): an army
  convoyed to a neighbouring province because its own power's fleet convoys it does not fall back to the land
  route when the convoy fails (`_check_disruptions`; the 2000 edition keeps the engine's fallback).
* 6.H.6, 6.H.11 (no retreat to a contested area; after a convoyed attack only the attacker's origin is
  opened): the engine offers a unit dislodged by a convoyed attack every neighbouring province, occupied and
  contested ones too (`_move_results`).
* reporting (the cut rule 6.F.14 relies on, without its paradox): a support of a convoying fleet, attacked by
  the army that fleet convoys while nothing else attacks the fleet, is cut (`_resolve_moves` adds the result
  code the engine leaves out; the position is the engine's).
"""

from __future__ import annotations

from typing import Any

VIA = "VIA"


def _destination(words: list[str]) -> str:
    """Where a move order ("- LON", "- LON VIA") goes."""
    return words[-2] if words[-1] == VIA else words[-1]


class Corrected:
    """A mixin for the engine's Game; engine.py sets the result codes (`codes`) and `land_fallback` (the 2000
    edition's choice) on the class it builds."""

    codes: Any = None  # the engine's OrderResult objects by name: "cut", "void", "no convoy", ...
    land_fallback = False

    # the engine's attributes and steps this mixin uses (they exist on the engine's Game)
    command: dict[str, str]
    result: dict[str, list[Any]]
    supports: dict[str, list[Any]]
    combat: dict[str, dict[int, list[Any]]]
    convoy_paths: dict[str, list[list[str]]]
    dislodged: dict[str, str]
    powers: dict[str, Any]
    popped: list[str]
    _occupant: Any
    _unit_owner: Any
    _abuts: Any
    _detect_paradox: Any
    _is_moving_via_convoy: Any

    # --- 6.D.12 via convoy: own-country support does not dislodge --------------------------------------------------
    def _strengths(self) -> None:
        for unit, order in self.command.items():
            words = order.split()
            if words[0] != "S" or len(words) < 5 or self.result.get(unit):
                continue
            supported = " ".join(words[1:3])
            moving = self.command.get(supported, "").split()
            if not moving or moving[0] != "-" or moving[-1] != VIA or _destination(moving) != words[-1]:
                continue
            attacked = self._occupant(_destination(moving), any_coast=1)
            helpless = self.supports[supported][1]
            if attacked and self._unit_owner(unit) is self._unit_owner(attacked) and unit not in helpless:
                helpless.append(unit)
        super()._strengths()  # type: ignore[misc]

    # --- 6.F.4/6.F.5 disruption only by dislodgement; 6.G.6/6.G.11 no land fallback -----------------------------
    def _check_disruptions(self, may_convoy: dict[str, list[str]], result: Any, coresult: Any = None) -> None:
        """The engine's step, with `_fleet_dislodged` deciding whether a convoying fleet falls, every route
        through a falling fleet removed, and the army kept from the land route when its convoy was intended
        (ordered via convoy, or convoyed by its own power's fleet) under the 2023 rulebook."""
        for unit, places in may_convoy.items():
            words = self.command.get(unit, "H").split()
            destination = _destination(words)
            for place in [p for p in places if p != "-"]:
                area, fleet = place[:3], "F " + place
                if not self._fleet_dislodged(fleet, area, destination):
                    continue
                paths = self.convoy_paths.setdefault(unit, [])
                paths[:] = [path for path in paths if place not in path]
                by_land = self._abuts(unit[0], unit[2:], "-", destination)
                # the engine's second paradox rule: the army could cut by land the support that beats its fleet
                paradox = by_land and self._detect_paradox(destination, "S", ["-", area])
                if not paths and (paradox or not by_land or words[-1] == VIA or not self.land_fallback):
                    self.result[unit] = [result]
                if coresult:
                    self.result[fleet] = [coresult]

    def _fleet_dislodged(self, fleet: str, area: str, destination: str) -> bool:
        """Whether the convoying `fleet` in `area` would be dislodged by the strongest attack on it now."""
        fights = self.combat.get(area) or {}
        if not fights:
            return False
        top = max(fights)
        strongest = fights[top]
        owner = self._unit_owner(fleet)
        if all(self._unit_owner(unit) is owner for unit, _ in strongest):
            return False
        # the engine's first paradox rule: the army's destination supports the fleet (Szykman: the convoy fails)
        if self._detect_paradox(destination, "S", ["S", "F", area]):
            return True
        if len(strongest) == 1:
            (_, helpless), = strongest
            below = max((strength for strength in fights if strength < top), default=0)
            return top - len(helpless) > below  # 6.F.4 with own-country support: it does not dislodge
        if fleet in [unit for unit, _ in strongest]:
            return False
        # 6.F.5 a beleaguered fleet stands; the engine keeps one exception, a paradox: the unit in the destination
        # supports one of the attacks, and the army landing there would cut that support and break the standoff
        at_destination = self.command.get(self._occupant(destination), "H").split()
        return at_destination[0] == "S" and at_destination[-1][:3] == area

    # --- reporting a support cut by the convoyed army ----------------------------------------------------------
    def _resolve_moves(self) -> None:
        super()._resolve_moves()  # type: ignore[misc]
        self._retreat_blocked = {p for p, fights in self.combat.items() if fights}
        self._convoyed = {u for u in self.command if self._is_moving_via_convoy(u)}
        cut, void, no_convoy = self.codes["cut"], self.codes["void"], self.codes["no convoy"]
        for army in self._convoyed:
            if no_convoy in self.result[army]:
                continue
            target = self._occupant(_destination(self.command[army].split()), any_coast=1)
            words = self.command.get(target, "H").split()
            if target is None or words[0] != "S" or len(words) != 3 or cut in self.result[target] \
                    or void in self.result[target] or self._unit_owner(target) is self._unit_owner(army):
                continue
            fleet = " ".join(words[1:3])
            if not self.command.get(fleet, "").startswith(f"C {army} -"):
                continue
            owner = self._unit_owner(fleet)
            attacked = any(o.split()[0] == "-" and _destination(o.split())[:3] == fleet[2:5]
                           and self._unit_owner(u) is not owner for u, o in self.command.items())
            if not attacked:
                self.result[target].append(cut)

    # --- 6.H.6/6.H.11 retreats after a convoyed attack ---------------------------------------------------------
    def _move_results(self) -> Any:
        """The engine's step; then the retreats of a unit dislodged by a convoyed army lose every occupied or
        contested province (the engine's own test for every other dislodged unit), keeping the attacker's
        origin when it is free; a unit left without a retreat is destroyed, as the engine does."""
        attackers = {}
        out = super()._move_results()  # type: ignore[misc]
        for unit, site in self.dislodged.items():
            attackers[unit] = next((u for u in self._convoyed if u[2:5] == site[:3]), None)
        for power in self.powers.values():
            for unit, options in list(power.retreats.items()):
                if attackers.get(unit) is None:
                    continue
                kept = [o for o in options if o[:3] not in self._retreat_blocked]
                if kept:
                    power.retreats[unit] = kept
                else:
                    del power.retreats[unit]
                    self.popped.append(unit)
        return out
