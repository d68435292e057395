"""Issue 5, bad input: every refusal of a Declaration of War game names its rule id, and a refused command
writes nothing. Press the rules refuse (seed 001) is refused by the command; what a player could only do
around pbem with plain git (orders sealed in another power's name, a reveal that does not match its seal,
recorded results that differ from the engine's, a phase adjudicated before every power had sealed) is found by
`pbem verify` at the commit that did it.

The bases and the `Dow` helper come from tests/test_dow_flow.py: `first_half` is a started game at S1901P,
`second_half` the same game at S1901M (every power sealed and revealed an empty set for the first half).
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from pbem.crypto import seal
from pbem.formats.canonical import dumps as canonical
from pbem.formats.writer import dump_mapping
from pbem.services import chance
from pbem.protocol.control import expected_after
from test_dow_flow import (POWERS, Dow, base_first_half, base_second_half, copy_dow,  # noqa: F401 (fixtures)
                           first_half, second_half)


def test_press_no_proposal__an_acceptance_without_a_matching_proposal(first_half: Dow) -> None:
    """Seed 001: a raise needs one side's public proposal, then the other's acceptance."""
    out = first_half.refused("accept", "france", "ALLIED", who="germany", rule="press.no-proposal")
    assert "france has no standing proposal to germany" in out
    first_half.ok("propose", "germany", "FRIENDLY", who="france")
    out = first_half.refused("accept", "france", "ALLIED", who="germany", rule="press.no-proposal")
    assert "france's standing proposal to germany is FRIENDLY" in out  # exactly the proposed state


def test_press_one_sided_raise__a_raise_announced_by_one_side_only(first_half: Dow) -> None:
    """Seed 001: "To change status towards a higher number both parties must agree"."""
    out = first_half.refused("declare", "germany", "ALLIED", who="france", rule="press.one-sided-raise")
    assert "france proposes it and germany accepts it" in out


def test_press_forced_state__raising_c_b_above_hostile_while_a_is_allied_to_c_and_at_war_with_b(
        first_half: Dow) -> None:
    """Seed 001: "For as long as you remain allied to one country and at-war with another, those two may only
    ever be in a states 1, 2 or *". A = france, C = italy, B = germany."""
    first_half.ok("propose", "france", "ALLIED", who="italy")
    first_half.ok("accept", "italy", "ALLIED", who="france")
    first_half.ok("declare", "germany", "WAR", who="france")  # italy-germany: NEUTRAL -> HOSTILE (cascade)
    out = first_half.refused("propose", "italy", "NEUTRAL", who="germany", rule="press.forced-state")
    assert "while france is allied to italy and at war with germany" in out
    first_half.refused("propose", "germany", "FRIENDLY", who="italy", rule="press.forced-state")


@pytest.mark.parametrize("args, rule, code", [
    (("propose", "germany", "LIMBO"), "usage.bad-state", 2),
    (("declare", "france", "WAR"), "press.self", 1),
    (("declare", "prussia", "WAR"), "press.unknown-power", 1),
    (("propose", "germany", "NEUTRAL"), "press.no-change", 1),
    (("gift", "germany", "MAR"), "press.gift-not-allied", 1),
    (("warn", "germany", "--reason", "rude", "--phase", "S1901M", "--order", "A MUN H"), "press.not-director", 1),
    (("warn", "germany", "--reason", "rude"), "usage.warn", 2),
    (("warn", "germany", "--reason", "rude", "--order", "A MUN H"), "usage.warn", 2),
])
def test_press_refusals_name_their_rule(first_half: Dow, args: tuple[str, ...], rule: str, code: int) -> None:
    first_half.refused(*args, who="france", rule=rule, code=code)


@pytest.mark.parametrize("message, rule", [
    ({"by": "france", "at": "S1901M", "say": "from the future"}, "press.bad-time"),
    ({"by": "england", "at": "S1901P", "say": "France speaks for England"}, "press.foreign"),
])
def test_press_written_by_hand_is_dated_now_and_by_its_signer(first_half: Dow, message: dict, rule: str) -> None:
    files = first_half.ws().head_files()
    files["press/global.yaml"] = dump_mapping({"messages": [message]}).encode()
    bad = first_half.sneak("france", files, "france: press by hand")
    assert (rule, bad) in first_half.verify()


def test_press_no_proposal__a_refused_message_written_by_hand_is_found_at_its_own_commit(first_half: Dow) -> None:
    files = first_half.ws().head_files()
    files["press/global.yaml"] = dump_mapping({"messages": [
        {"by": "germany", "at": "S1901P", "accept": {"from": "france", "state": "ALLIED"}}]}).encode()
    bad = first_half.sneak("germany", files, "germany: press by hand")
    assert ("press.no-proposal", bad) in first_half.verify()


def test_a_refused_message_written_by_hand_is_blamed_on_its_own_commit_only(first_half: Dow) -> None:
    """The refusal is the posting commit's finding; the history then does not verify, so pbem builds nothing
    on it (CI and the hook would have refused that push), and no later commit is blamed for it."""
    files = first_half.ws().head_files()
    files["press/global.yaml"] = dump_mapping({"messages": [
        {"by": "germany", "at": "S1901P", "accept": {"from": "france", "state": "ALLIED"}}]}).encode()
    bad = first_half.sneak("germany", files, "germany: press by hand")
    found = first_half.verify()
    assert ("press.no-proposal", bad) in found
    assert all(commit == bad for _rule, commit in found)


# --- sealed orders (DESIGN §6, §4.7) -------------------------------------------------------------------------------

def _secret_file(sid: str, owner: str, step: str, sealed: seal.Sealed, commit: bytes | None = None) -> bytes:
    return dump_mapping({"id": sid, "owner": owner, "kind": "orders", "end": step, "step": step,
                         "box": base64.b64encode(sealed.box).decode(),
                         "commit": (commit or sealed.commit).hex(),
                         "owner_box": base64.b64encode(sealed.owner_box).decode()}).encode()


def test_secret_not_owner__orders_sealed_by_someone_else_for_a_power(second_half: Dow) -> None:
    """Germany seals a set of orders in France's name (owner: france), signed with Germany's key."""
    france = second_half.me("france").public
    sealed = seal.seal(canonical({"orders": []}), france)
    files = second_half.ws().head_files()
    files["secrets/france-0001.yaml"] = _secret_file("france-0001", "france", "S1901M", sealed)
    bad = second_half.sneak("germany", files, "germany: france's orders")
    assert ("secret.not-owner", bad) in second_half.verify()


def test_secret_not_owner__revealing_another_power_s_orders_is_refused(second_half: Dow) -> None:
    second_half.seal("france")
    second_half.refused("reveal", "france-0001", who="germany", rule="secret.not-owner")


def test_secret_bad_key__a_revealed_order_set_the_key_does_not_open(second_half: Dow) -> None:
    for power in POWERS:
        second_half.seal(power)
    files = second_half.ws().head_files()
    raw = files["secrets/france-0001.yaml"].decode()
    assert "owner: france" in raw
    files["secrets/france-0001.yaml"] = (raw + f"key: \"{'00' * 32}\"\n").encode()
    bad = second_half.sneak("france", files, "france: a key that opens nothing", status="keep")
    assert ("secret.bad-key", bad) in second_half.verify()


def test_secret_commit_mismatch__a_revealed_order_set_that_does_not_match_its_seal(second_half: Dow) -> None:
    """France seals a box holding "A PAR - BUR" under a commitment to "A PAR - PIC" (a SecretBox alone is not
    key-committing, DESIGN §6): the reveal opens the box, but the hash gives the cheat away."""
    france = second_half.me("france")
    key = bytes(range(32))
    sealed = seal.seal(canonical({"orders": ["A PAR - BUR"]}), france.public, key)
    announced = seal.seal_commitment(key, canonical({"orders": ["A PAR - PIC"]}))
    files = second_half.ws().head_files()
    files["secrets/france-0001.yaml"] = _secret_file("france-0001", "france", "S1901M", sealed, announced)
    second_half.sneak("france", files, "france: orders sealed by hand")
    for power in second_half.owing():
        second_half.seal(power)
    assert "france" in second_half.owing("secret")
    second_half.refused("orders", "--reveal", who="france", rule="secret.commit-mismatch")
    files = second_half.ws().head_files()
    files["secrets/france-0001.yaml"] += f"key: \"{key.hex()}\"\n".encode()
    bad = second_half.sneak("france", files, "france: reveal by hand", status="keep")
    assert ("secret.commit-mismatch", bad) in second_half.verify()


# --- results and adjudication -----------------------------------------------------------------------------------------

def test_result_mismatch__recorded_results_that_differ_from_the_engine(second_half: Dow) -> None:
    """status.yaml records the position after each adjudication (DESIGN §7.2); the verifier re-adjudicates with
    the engine and compares. Turkey reveals last, so its commit resolves S1901M; it records France's army as still
    in Paris although the engine moves it to Picardy."""
    for power in POWERS:
        second_half.seal(power, ["A PAR - PIC"] if power == "france" else [])
    for power in POWERS[:-1]:
        second_half.reveal(power)
    ws = second_half.ws()
    files = ws.head_files()
    chance.reveal_secret(files, ws.game_of(files), second_half.me("turkey"), "turkey", "turkey-0001")
    status = expected_after(ws.head(), ws.game_of(files), "turkey")[1].to_data()
    assert "A PIC" in status["position"]["units"]["france"]
    status["position"]["units"]["france"] = sorted(u.replace("A PIC", "A PAR") for u in
                                                   status["position"]["units"]["france"])
    files["status.yaml"] = dump_mapping(status).encode()
    bad = second_half.sneak("turkey", files, "turkey: reveal, and a result of my own", status="keep")
    assert second_half.verify() == [("result.mismatch", bad)]
    out = second_half.pbem("verify").stdout
    assert "units of france: recorded ['A MAR', 'A PAR', 'F BRE'], engine ['A MAR', 'A PIC', 'F BRE']" in out


def test_status_mismatch__a_phase_adjudicated_before_every_power_had_sealed(second_half: Dow, tmp_path: Path) -> None:
    """Turkey, who has not sealed, commits a status.yaml that says S1901M was adjudicated (copied from a game in
    which it had): the verifier's replay still waits for Turkey's orders at S1901M."""
    other = copy_dow(second_half, tmp_path / "other")
    other.phase({"france": ["A PAR - PIC"]})
    forged = (other.repo_dir / "status.yaml").read_bytes()
    assert other.status()["firm"] == "F1901M"
    for power in POWERS[:-1]:
        second_half.seal(power)
    files = second_half.ws().head_files()
    files["status.yaml"] = forged
    bad = second_half.sneak("turkey", files, "turkey: S1901M is over", status="keep")
    findings = second_half.verify()
    assert ("status.mismatch", bad) in findings
    assert second_half.pbem("verify").returncode == 1
    assert "firm: expected 'S1901M', got 'F1901M'" in second_half.pbem("verify").stdout


def test_orders_file_that_is_not_orders_is_refused_and_nothing_is_sealed(second_half: Dow) -> None:
    bad = second_half.root / "bad.yaml"
    bad.write_text('orders: "A PAR - BUR"\n')
    out = second_half.refused("orders", str(bad), who="france", rule="schema.invalid", code=1)
    assert "bad.yaml" in out
