"""`pbem results` for every closed phase (DESIGN §7.2, docs/dow.md): also phases closed after a power resigned,
whose orders are then not owed, told as the verifier resolved them."""

from __future__ import annotations

import pytest

from test_dow_flow import Dow, base_first_half, base_second_half, second_half  # noqa: F401


def test_results_tell_the_phase_a_resigned_power_no_longer_owed(second_half: Dow) -> None:  # noqa: F811
    second_half.ok("resign", "--note", "called away", who="turkey")
    second_half.phase({"france": ["A PAR - BUR"], "russia": ["A WAR - GAL"]})
    told = second_half.ok("results", "S1901M")
    assert "S1901M: sealed by" in told and "turkey" not in told.splitlines()[0], told
    assert "A PAR - BUR" in told and "A WAR - GAL" in told, told
    later = second_half.ok("results")
    assert "S1901R" in later or "F1901M" in later, later
    assert second_half.pbem("verify").returncode == 0


def test_results_tell_a_phase_an_nmr_closed(second_half: Dow) -> None:  # noqa: F811
    """Turkey never seals; the others reveal, then sign an nmr against him: the phase resolves with his units
    holding, and `pbem results` tells it (it used to stop there: his orders were never revealed)."""
    others = [p for p in second_half.owing() if p != "turkey"]
    for power in others:
        second_half.seal(power, ["A PAR - BUR"] if power == "france" else [])
    proposed = second_half.ok("agree", "nmr", "--player", "turkey", who=others[0])
    agreement = next(w for w in proposed.split() if w.startswith(f"{others[0]}-"))
    for power in others[1:]:
        second_half.ok("sign", agreement, who=power)
    for power in second_half.owing("secret"):
        second_half.ok("yield", who=power)  # reveals what he owes (`pbem orders --reveal` waits for turkey)
    told = second_half.ok("results", "S1901M")
    assert "A PAR - BUR" in told and "turkey" not in told.splitlines()[0], told
    assert second_half.pbem("verify").returncode == 0
