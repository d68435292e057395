"""`tactical/1` — impulse hex combat in the style of Star Fleet Battles (DESIGN §7.1)."""

from pbem.rulesets.tactical.ruleset import TacticalRuleset

__all__ = ["TacticalRuleset"]
