"""The map of each ruleset, by ruleset name (DESIGN §7.1, §7.2): how it is drawn. What it is drawn from is read
from the game by the services (pbem.services.pictures); a ruleset without a renderer here has no map."""

from __future__ import annotations

from typing import Callable

from pbem.render import dow_phase, tactical_svg

RENDERERS: dict[str, Callable[..., str]] = {
    "tactical/1": tactical_svg.render,
    "dow/1": dow_phase.render_phase,
}
