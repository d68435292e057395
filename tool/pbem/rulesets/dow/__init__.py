"""`dow/1` — Diplomacy with public relationship states, "Declaration of War" (DESIGN §7.2, seed 001)."""

from pbem.rulesets.dow.ruleset import DowRuleset

__all__ = ["DowRuleset"]
