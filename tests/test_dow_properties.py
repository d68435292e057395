"""Properties of every adjudication on random legal positions with random orders (tests/dow_random_play.py;
docs/dow.md "Corrections of the engine"): no retreat to an occupied or contested province or to the attacker's
origin (except after a convoyed attack), no convoy disrupted unless a convoying fleet is dislodged (or its
destination supports: a possible paradox), every board the adapter produces taken by the engine in the next
phase. Bounded here; `python bench/dow_properties.py` runs thousands and counts what they exercised."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dow_random_play import play


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_every_random_adjudication_keeps_the_properties(rng: random.Random) -> None:
    played = play(rng)
    assert played.findings == []
