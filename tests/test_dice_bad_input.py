"""Every dice bad input of issue 3, one test per way of cheating, each naming its rule id (DESIGN §5, §11:
"every bad input gets one clear message naming file, line and rule, and changes nothing").

Each cheat is built directly, as a player with plain git could: the batch file edited as a cheater would,
the commit signed with the cheater's own key (GameRepo.commit_tree with his KeySigner, status.yaml as pbem
would compute it), then `pbem verify` must fail naming the rule and dice/fed-0001.yaml. Where a player could try
the same through pbem (`pbem yield` after hand-editing), pbem must refuse it with the rule and change nothing.

The game (tests/conftest.py `played`, then flow B of test_dice_flow.py): fed announced fed-0001 (one d6) in a turn
that left the game with himself, kli contributed out of turn.
* `reveal_owed`: fed owes the reveal (and his orders);
* `rolled`: fed revealed with `pbem yield`; fed-0001 has its result; fed holds control for a turn;
* `kli_turn`: fed took that turn; kli holds control.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import Table, built_from, built_once, copy_table
from gitutil import fixed_key
from pbem.crypto import seal
from pbem.crypto.keys import load_private_key
from test_dice_flow import (A_LINE, ESCROW, add_escrow, announce_out_of_turn, batch, cli, derived, escrow_message,
                            findings, found, joined, ok, private, refused, rederive, sneak_as, start_by_consent,
                            verify_text, write_batch)

B0001 = "dice/fed-0001.yaml"
B0001_LINE = B0001 + A_LINE  # the batch file and the line of the field the finding is about
FED_GOES_ON = dict(through="1.16.damage")  # fed's turn in `rolled`: progress past 1.11.move


@pytest.fixture(scope="session")
def base_reveal_owed(base_played: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    return Table(built_once(tmp_path_factory, "dice_bad_input-base_reveal_owed",
                            lambda into: cli(announce_out_of_turn(base_played, into), "yield", who="kli")))


@pytest.fixture(scope="session")
def base_rolled(base_reveal_owed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        cli(table, "yield", who="fed")
        assert table.data("status.yaml")["pending"][0]["kind"] == "horizon" and batch(table)["results"]

    return built_from(tmp_path_factory, "dice_bad_input-base_rolled", base_reveal_owed, build)


@pytest.fixture(scope="session")
def base_kli_turn(base_rolled: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        table.turn("fed", note="straight on", **FED_GOES_ON)
        assert table.data("status.yaml")["control"] == "kli"

    return built_from(tmp_path_factory, "dice_bad_input-base_kli_turn", base_rolled, build)


@pytest.fixture(scope="module")
def base_escrow_owed(base_started: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """An escrow duel (fed started), fed announced fed-0001 in escrow mode: the escrow owes its signature."""
    table = joined(base_started, tmp_path_factory.mktemp("bad") / "escrow")
    add_escrow(table)
    start_by_consent(table, "--first", "fed")
    table.edit("fed", through="1.8.damage")
    cli(table, "roll", "--for", "boarding party", who="fed")
    cli(table, "yield", who="fed")
    assert table.data("status.yaml")["control"] == ESCROW
    return table


@pytest.fixture
def reveal_owed(base_reveal_owed: Table, tmp_path: Path) -> Table:
    return private(base_reveal_owed, tmp_path)


@pytest.fixture
def rolled(base_rolled: Table, tmp_path: Path) -> Table:
    return private(base_rolled, tmp_path)


@pytest.fixture
def kli_turn(base_kli_turn: Table, tmp_path: Path) -> Table:
    return private(base_kli_turn, tmp_path)


@pytest.fixture
def escrow_owed(base_escrow_owed: Table, tmp_path: Path) -> Table:
    return private(base_escrow_owed, tmp_path)


def honest_reveal(table: Table, raw: dict[str, Any]) -> dict[str, Any]:
    """The batch with fed's true reveal and the true results, as `pbem yield` would write them: fed's secret
    recovered from owner_box with his key file."""
    secret = seal.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(table.key("fed")))
    revealed = {**raw, "reveal": secret.hex()}
    return {**revealed, "results": derived(revealed)}


def other_face(value: int, sides: int = 6) -> int:
    return value % sides + 1


# --- dice.bad-reveal ---------------------------------------------------------------------------------------------

def test_dice_bad_reveal__a_reveal_that_does_not_match_its_commitment(reveal_owed: Table) -> None:
    """DESIGN §5 step 3: the reveal must hash to the roller's commitment. fed reveals another secret (and the
    results it would give, so only the reveal is wrong): found; the independent script disagrees too."""
    raw = batch(reveal_owed)
    forged = {**raw, "reveal": "ab" * 32}
    write_batch(reveal_owed, {**forged, "results": derived(forged)})
    bad = sneak_as(reveal_owed, "fed", "fed: revealed fed-0001")
    assert found(reveal_owed, bad, "dice.bad-reveal", B0001) == {"dice.bad-reveal"}
    done = verify_text(reveal_owed)
    assert done.returncode == 1 and re.search(rf"{B0001}:\d+: \[dice.bad-reveal\] batch fed-0001: the reveal does not "
                                              "match", done.stdout), done.stdout
    assert f"(commit {bad[:10]})" in done.stdout
    script = rederive(reveal_owed.repo_dir)
    assert script.returncode == 1 and "MISMATCH fed-0001: the reveal does not match" in script.stderr


def test_dice_bad_reveal__before_every_contribution_then_results_is_found_without_a_crash(base_started: Table,
                                                                                        tmp_path: Path) -> None:
    """Before the start, fed reveals the die for who starts before kli contributed (plain `git commit -S`),
    then writes a result: both commits are findings, and the verifier does not crash on a reveal it cannot
    derive anything from (a batch missing a contribution)."""
    table = joined(base_started, tmp_path / "table")
    start_by_consent(table, "--roll")
    raw = batch(table)
    secret = seal.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(table.key("fed")))
    write_batch(table, {**raw, "reveal": secret.hex()})
    early = table.git_commit("fed: reveal, early", signer="fed")
    write_batch(table, {**raw, "reveal": secret.hex(), "results": [1]})
    late = table.git_commit("fed: and the result", signer="fed")
    got = {(f["rule"], f["commit"]) for f in findings(table) if f.get("file") == B0001}
    assert ("dice.bad-reveal", early) in got and ("dice.bad-results", late) in got
    done = table.pbem("verify")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"[dice.bad-results] batch fed-0001: results [1] differ from nothing" in done.stdout


# --- dice.bad-contribution ---------------------------------------------------------------------------------------

def test_dice_bad_contribution__the_roller_contributes_to_his_own_batch(reveal_owed: Table) -> None:
    """DESIGN §5: every *other* player contributes; the roller owes none (his secret is the commitment)."""
    revealed = honest_reveal(reveal_owed, batch(reveal_owed))
    write_batch(reveal_owed, {**revealed, "contributions": {**revealed["contributions"], "fed": "cd" * 32}})
    bad = sneak_as(reveal_owed, "fed")
    assert found(reveal_owed, bad, "dice.bad-contribution", B0001) == {"dice.bad-contribution"}


def test_dice_bad_contribution__yield_refuses_the_roller_s_own_contribution(rolled: Table) -> None:
    raw = batch(rolled)
    write_batch(rolled, {**raw, "contributions": {**raw["contributions"], "fed": "cd" * 32}})
    rolled.edit("fed", **FED_GOES_ON)
    line = refused(rolled, "yield", who="fed", rule="dice.bad-contribution", where=B0001_LINE)
    assert "fed owes no contribution to fed-0001" in line


def _contribute_twice(raw: dict[str, Any]) -> dict[str, Any]:
    return {**raw, "contributions": {"kli": "ef" * 32}}


def _contribute_for_fed(raw: dict[str, Any]) -> dict[str, Any]:
    return {**raw, "contributions": {**raw["contributions"], "fed": "ef" * 32}}


@pytest.mark.parametrize("cheat, says", [(_contribute_twice, "kli contributed to fed-0001 twice"),
                                         (_contribute_for_fed, "kli wrote a contribution in fed's name")],
                         ids=["twice", "in-the-roller-s-name"])
def test_dice_bad_contribution__kli_contributes_again_or_for_another(kli_turn: Table, cheat: Callable[..., Any],
                                                                     says: str) -> None:
    """One contribution per player per batch, made by that player (DESIGN §5): in his own turn kli may neither
    change the contribution he made nor write one in someone else's name; pbem refuses, verify finds it."""
    write_batch(kli_turn, cheat(batch(kli_turn)))
    kli_turn.edit("kli", through="1.16.damage")
    assert says in refused(kli_turn, "yield", who="kli", rule="dice.bad-contribution", where=B0001_LINE)
    bad = sneak_as(kli_turn, "kli")
    assert found(kli_turn, bad, "dice.bad-contribution", B0001) == {"dice.bad-contribution"}


# --- dice.changed: the announcement is fixed once a contribution is in ------------------------------------------

def _new_purpose(raw: dict[str, Any]) -> dict[str, Any]:
    return {**raw, "rolls": [{"for": "CA tp1 at D7, range 9"}]}


def test_dice_changed__the_roller_changes_the_purposes_after_a_contribution(reveal_owed: Table) -> None:
    """Seed §2.D "about to roll dice": what the dice are for is fixed before anybody could know them. fed,
    revealing, rewrites the purpose (his torpedo instead of a phaser): found."""
    write_batch(reveal_owed, honest_reveal(reveal_owed, _new_purpose(batch(reveal_owed))))
    bad = sneak_as(reveal_owed, "fed")
    assert found(reveal_owed, bad, "dice.changed", B0001) == {"dice.changed"}


@pytest.mark.parametrize("who", ["fed", "kli"])
def test_dice_changed__yield_refuses_new_purposes_after_the_results(request: pytest.FixtureRequest,
                                                                    who: str) -> None:
    """After the results neither the roller nor anybody else may change the purposes."""
    table: Table = request.getfixturevalue("rolled" if who == "fed" else "kli_turn")
    write_batch(table, _new_purpose(batch(table)))
    table.edit(who, through="1.16.damage" if who == "fed" else "1.20.damage")
    assert "rolls changed" in refused(table, "yield", who=who, rule="dice.changed", where=B0001)


# --- dice.bad-results -----------------------------------------------------------------------------------------

def test_dice_bad_results__results_that_differ_from_the_derivation(reveal_owed: Table) -> None:
    """pbem writes the results; the verifier re-derives them (DESIGN §5). A true reveal with a result of the
    roller's choosing is found, and the independent script names the batch."""
    revealed = honest_reveal(reveal_owed, batch(reveal_owed))
    write_batch(reveal_owed, {**revealed, "results": [other_face(revealed["results"][0])]})
    bad = sneak_as(reveal_owed, "fed")
    assert found(reveal_owed, bad, "dice.bad-results", B0001) == {"dice.bad-results"}
    script = rederive(reveal_owed.repo_dir)
    assert script.returncode == 1 and "MISMATCH fed-0001: recorded" in script.stderr


def test_dice_bad_results__the_escrow_s_true_signature_with_other_results(escrow_owed: Table) -> None:
    raw = batch(escrow_owed)
    signature = fixed_key(ESCROW).sign_raw(escrow_message(raw))
    signed = {**raw, "escrow": base64.b64encode(signature).decode()}
    write_batch(escrow_owed, {**signed, "results": [other_face(derived(signed)[0])]})
    bad = sneak_as(escrow_owed, ESCROW, "escrow: signed fed-0001")
    assert found(escrow_owed, bad, "dice.bad-results", B0001) == {"dice.bad-results"}


def test_dice_changed__yield_refuses_results_changed_once_written(rolled: Table) -> None:
    raw = batch(rolled)
    write_batch(rolled, {**raw, "results": [other_face(raw["results"][0])]})
    rolled.edit("fed", **FED_GOES_ON)
    assert "results cannot change" in refused(rolled, "yield", who="fed", rule="dice.changed", where=B0001)


# --- dice.bad-escrow -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("signer", ["fed", "escrow-other-batch"])
def test_dice_bad_escrow__a_signature_that_is_not_the_escrow_s_signature_of_this_batch(escrow_owed: Table,
                                                                                     signer: str) -> None:
    """Only the escrow key's signature of this very batch rolls an escrow batch: fed signing it himself (he
    would choose his seed) or the escrow's signature of another announcement are found."""
    raw = batch(escrow_owed)
    if signer == "fed":
        signature = fixed_key("alice").sign_raw(escrow_message(raw))
    else:
        signature = fixed_key(ESCROW).sign_raw(escrow_message({**raw, "rolls": [{"for": "something else"}]}))
    signed = {**raw, "escrow": base64.b64encode(signature).decode()}
    write_batch(escrow_owed, {**signed, "results": derived(signed)})
    bad = sneak_as(escrow_owed, ESCROW, "escrow: signed fed-0001")
    assert found(escrow_owed, bad, "dice.bad-escrow", B0001) == {"dice.bad-escrow"}


# --- dice.bad-void -----------------------------------------------------------------------------------------------

def test_dice_bad_void__the_roller_voids_instead_of_revealing_without_co_signatures(reveal_owed: Table) -> None:
    """Once every contribution is in, the roller knows the results (his secret is his): he may not void alone
    (seed §2.D: never at the roller's choice after seeing results)."""
    write_batch(reveal_owed, {**batch(reveal_owed), "void": {"reason": "I do not like it"}})
    bad = sneak_as(reveal_owed, "fed")
    assert found(reveal_owed, bad, "dice.bad-void", B0001) == {"dice.bad-void"}


def _cosign(table: Table, tmp_path: Path, who: str, reason: str) -> str:
    path = tmp_path / f"{who}.sig"
    path.write_text(ok(table, "dice", "cosign", "fed-0001", "--reason", reason, who=who))
    return f"kli={path}"


@pytest.mark.parametrize("cosign", ["none", "another-reason", "signed-by-fed"])
def test_dice_bad_void__yield_refuses_a_void_after_results_without_kli_s_co_signature(rolled: Table, tmp_path: Path,
                                                                                     cosign: str) -> None:
    """After the results a void needs every other player's co-signature of this void and this reason: none,
    kli's signature of another reason, or fed's own signature passed off as kli's are refused."""
    reason = "the D7 was cloaked"
    extra = {"none": [],
             "another-reason": ["--cosign", _cosign(rolled, tmp_path, "kli", "some other reason")],
             "signed-by-fed": ["--cosign", _cosign(rolled, tmp_path, "fed", reason)]}[cosign]
    ok(rolled, "dice", "void", "fed-0001", "--reason", reason, *extra, who="fed")
    rolled.edit("fed", **FED_GOES_ON)
    refused(rolled, "yield", who="fed", rule="dice.bad-void", where=B0001_LINE)
    bad = sneak_as(rolled, "fed")
    assert found(rolled, bad, "dice.bad-void", B0001) == {"dice.bad-void"}


def test_dice_bad_void__only_the_roller_voids_his_batch(kli_turn: Table, tmp_path: Path) -> None:
    ok(kli_turn, "dice", "void", "fed-0001", "--reason", "it went against me",
       "--cosign", _cosign(kli_turn, tmp_path, "kli", "it went against me"), who="kli")
    kli_turn.edit("kli", through="1.20.damage")
    assert "only the roller fed" in refused(kli_turn, "yield", who="kli", rule="dice.bad-void", where=B0001_LINE)


# --- through pbem while the reveal is owed --------------------------------------------------------------------------

def _forged_reveal(table: Table, raw: dict[str, Any]) -> dict[str, Any]:
    forged = {**raw, "reveal": "ab" * 32}
    return {**forged, "results": derived(forged)}


def _own_contribution(table: Table, raw: dict[str, Any]) -> dict[str, Any]:
    return {**raw, "contributions": {**raw["contributions"], "fed": "cd" * 32}}


def _purposes(table: Table, raw: dict[str, Any]) -> dict[str, Any]:
    return _new_purpose(raw)


def _results(table: Table, raw: dict[str, Any]) -> dict[str, Any]:
    revealed = honest_reveal(table, raw)
    return {**revealed, "results": [other_face(revealed["results"][0])]}


def _void(table: Table, raw: dict[str, Any]) -> dict[str, Any]:
    return {**raw, "void": {"reason": "I do not like it"}}


@pytest.mark.parametrize("cheat, rule", [(_forged_reveal, "dice.bad-reveal"),
                                         (_own_contribution, "dice.bad-contribution"),
                                         (_purposes, "dice.changed"), (_results, "dice.bad-results"),
                                         (_void, "dice.bad-void")],
                         ids=["reveal", "own-contribution", "purposes", "results", "void"])
def test_yield_refuses_a_hand_edited_batch_while_the_reveal_is_owed(reveal_owed: Table, cheat: Callable[..., Any],
                                                                   rule: str) -> None:
    """Each cheat above, tried through pbem by the roller while he owes the reveal: `pbem yield` must refuse it
    with its rule and change nothing."""
    write_batch(reveal_owed, cheat(reveal_owed, batch(reveal_owed)))
    refused(reveal_owed, "yield", who="fed", rule=rule, where=B0001 if rule == "dice.changed" else B0001_LINE,
            real=False)


# --- pbem roll refuses a batch the verifier would refuse ----------------------------------------------------------

@pytest.mark.parametrize("args, says", [
    (["--for", "a", "--sides", "1"], "a die has 2 to 1000 sides"),
    (["--for", "a", "--mode", "xor"], "dice mode 'xor'"),
    (["--for", "a", "--mode", "escrow"], "escrow dice need the escrow's key"),
], ids=["d1", "mode", "no-escrow-key"])
def test_usage_dice__roll_refuses_a_batch_it_cannot_announce_and_writes_nothing(base_rolled: Table, tmp_path: Path,
                                                                               args: list[str], says: str) -> None:
    table = private(base_rolled, tmp_path)
    assert says in refused(table, "roll", *args, who="fed", rule="usage.dice", code=2)
