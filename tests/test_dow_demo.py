"""Issue 5, "done when": `pbem demo --game dow` plays two scripted game years with seven generated players,
including a war declaration with a cascade into limbo, an illegal order with its warning, a retreat and a build,
all verified; the note says how to see each.

`pbem demo DIR --game dow` (games/dow-standard/demo.yaml) runs once, as a real subprocess; the tests read its
output and its repository, and run the commands its closing note names.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gitutil import clean_env
from pbem.formats import yamlsafe

PBEM = Path(sys.executable).with_name("pbem")
POWERS = ("austria", "england", "france", "germany", "italy", "russia", "turkey")


class Demo:
    def __init__(self, root: Path, done: subprocess.CompletedProcess[str]) -> None:
        self.root, self.done = root, done
        self.repo = root / "game"
        self.out = done.stdout

    def section(self, phase: str) -> str:
        """The demo's output for one phase (from its heading to the next)."""
        match = re.search(rf"(?ms)^{phase}$\n(.*?)(?=^[SFW]\d{{4}}[PMRA]$|^ok: )", self.out)
        assert match, f"no section {phase} in:\n{self.out}"
        return match.group(1)

    def cli(self, *args: str) -> str:
        from pbem.cli import app

        env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("GIT_", "SSH_", "PBEM_"))}
        env.update(clean_env(self.root / "home"))
        old = Path.cwd()
        os.chdir(self.repo)
        try:
            done = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(old)
        assert done.exit_code == 0, done.output
        return done.output

    def data(self, rel: str) -> Any:
        return yamlsafe.load((self.repo / rel).read_bytes(), rel).data


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    root = tmp_path_factory.mktemp("dow-demo")
    (root / "home").mkdir()
    done = subprocess.run([str(PBEM), "demo", str(root), "--game", "dow"], cwd=root, env=clean_env(root / "home"),
                          capture_output=True, text=True, check=False, timeout=600)
    return Demo(root, done)


def test_the_demo_plays_two_years_and_every_commit_verifies(demo: Demo) -> None:
    assert demo.done.returncode == 0, demo.done.stdout + demo.done.stderr
    assert demo.done.stderr == ""
    headings = re.findall(r"(?m)^([SFW]\d{4}[PMRA])$", demo.out)
    assert headings == ["S1901P", "S1901M", "F1901M", "F1901R", "W1901A", "S1902M", "F1902M", "W1902A"]
    verified = re.search(r"(?m)^ok: (\d+) commits verified$", demo.out)
    assert verified and int(verified.group(1)) >= 100
    assert demo.data("status.yaml")["firm"] == "S1903M"  # two game years played


def test_seven_generated_players_each_sign_with_their_own_key(demo: Demo) -> None:
    keys = sorted(p.name for p in (demo.root / "keys").glob("*_ed25519"))
    assert keys == [f"{p}_ed25519" for p in POWERS]
    seats = demo.data("game.yaml")["players"]
    assert [s["id"] for s in seats] == list(POWERS) and len({s["key"] for s in seats}) == 7
    assert demo.data("game.yaml")["setup"]["director"] == "italy"
    signers = demo.root / "allowed_signers"
    signers.write_text(demo.cli("allowed-signers"))
    log = subprocess.run(["git", "-c", f"gpg.ssh.allowedSignersFile={signers}", "verify-commit", "HEAD"],
                         cwd=demo.repo, env=clean_env(demo.root / "home"), capture_output=True, text=True)
    assert log.returncode == 0 and 'Good "git" signature for france' in log.stderr, log.stderr


def test_every_power_seals_every_phase_it_owes_and_only_those(demo: Demo) -> None:
    """Every order phase is a sealed step (DESIGN §4.7); a retreat or adjustment phase where a power owes nothing
    needs no seal from it, and one where nobody owes anything (S1901R, S1902R, F1902R) resolves by itself."""
    owners: dict[str, set[str]] = defaultdict(set)
    for path in sorted((demo.repo / "secrets").glob("*.yaml")):
        secret = demo.data(f"secrets/{path.name}")
        # every order set revealed, or opened without its owner by the others' shares (Turkey, F1902M)
        assert secret["kind"] == "orders" and ("key" in secret or "opened" in secret)
        owners[secret["step"]].add(secret["owner"])
    everyone = set(POWERS)
    assert owners == {"S1901M": everyone, "F1901M": everyone, "F1901R": {"germany"},
                      "W1901A": everyone, "S1902M": everyone, "F1902M": everyone, "W1902A": {"france"}}
    assert "S1901R: nobody owed orders (resolved by itself)" in demo.out


def test_the_first_half_is_press_only_and_ends_when_every_power_is_ready(demo: Demo) -> None:
    """Seed 001: Spring 1901 is "extended one phase length" for press: nothing is sealed or revealed in it."""
    first = demo.section("S1901P")
    assert "sealed   by" not in first and "ready    austria, england, france, germany, italy, russia, turkey" in first
    assert "S1901P: press only: it ended when every power was ready" in demo.cli("results", "S1901P")
    for power in POWERS:
        assert {"by": power, "at": "S1901P", "ready": True} in demo.data(f"press/{power}.yaml")["messages"]


def test_a_whisper_is_read_by_its_recipient_only_and_disclosed_to_all(demo: Demo) -> None:
    first = demo.section("S1901P")
    assert "whisper  england whispers england-0001 to france (sealed)" in first
    assert "france's inbox: Between us: I will never ally with Germany for real." in first
    assert "Germany" not in str(demo.data("press/england.yaml"))  # the text is nowhere in the clear
    assert "no whispers for you" in demo.cli("inbox", "--key", "../keys/russia_ed25519")
    assert "(disclosed by france): Between us" in demo.cli("inbox", "--key", "../keys/france_ed25519")
    assert ('france discloses whisper england-0001: "Between us: I will never ally with Germany for real."'
            in demo.section("S1901M"))


def test_the_director_warns_for_a_recorded_offence(demo: Demo) -> None:
    """Seed 001 and a director with limits: the warning cites France's void order of S1901M."""
    assert "void     france: 'A BUR H'" in demo.section("S1901M")
    assert ("italy (director) warns france for 'A BUR H' at S1901M: orders for a unit France does not have"
            in demo.section("F1901M"))


def test_a_war_declaration_cascades_into_limbo(demo: Demo) -> None:
    """Seed 001, WAR: England, allied to both, enters LIMBO with both; Italy, allied to France, goes HOSTILE with
    Germany. Recognised in the first half of Spring 1901, in force for the second."""
    assert ("france declares WAR on germany -> recognised: england-france ALLIED -> LIMBO, england-germany ALLIED "
            "-> LIMBO, france-germany NEUTRAL -> WAR, germany-italy NEUTRAL -> HOSTILE") in demo.section("S1901P")
    assert "realised england-france NEUTRAL -> LIMBO, england-germany NEUTRAL -> LIMBO" in demo.section("S1901P")
    assert "france declares WAR on germany" in demo.cli("results", "S1901P")
    import json

    during = json.loads(demo.cli("relations", "--at", "S1901M", "--format", "json"))
    assert during["in_force"]["england"]["france"] == during["in_force"]["england"]["germany"] == "LIMBO"
    assert during["in_force"]["italy"]["germany"] == "HOSTILE"
    now = json.loads(demo.cli("relations", "--format", "json"))  # England reaffirmed; peace in 1902
    assert (now["in_force"]["england"]["france"], now["in_force"]["england"]["germany"],
            now["in_force"]["france"]["germany"]) == ("ALLIED", "HOSTILE", "NEUTRAL")


def test_an_illegal_order_earns_its_warning_and_the_director_warns_for_a_void_order(demo: Demo) -> None:
    spring = demo.section("S1901M")
    assert "austria: pbem refuses to seal (orders.forbidden: 'F TRI - VEN' is forbidden by the relationship " \
           "states" in spring
    assert "austria seals with --anyway in spite of pbem's warning: 'F TRI - VEN' is forbidden by the " \
           "relationship states" in spring
    assert ("WARNING  austria: 'F TRI - VEN' void: austria may not move into Venice: Italy's territory, and Austria "
            "and Italy are NEUTRAL (moves into a power's territory need WAR) (offence 1)") in spring
    assert "WARNING  austria" in demo.cli("results", "S1901M")
    # the director's warning cites an offence the game recorded: France's void order of S1901M
    assert "italy (director) warns france for 'A BUR H' at S1901M" in demo.section("F1901M")
    assert "warnings: austria 1, france 1" in demo.cli("relations")  # a warning stands: none is lifted


def test_a_withheld_set_is_opened_without_its_owner_and_a_draw_vote_is_sealed(demo: Demo) -> None:
    """F1902M: Turkey reads the others' orders and withholds his; the six others publish their shares and sign
    the nmr, which opens his set: A CON - SMY is carried out as he sealed it. Three powers seal a draw vote: no
    draw without every survivor."""
    fall = demo.section("F1902M")
    assert "turkey has seen the others' orders and withholds his reveal" in fall
    assert "publish their shares of turkey's sealed orders (`pbem open turkey`)" in fall
    assert "  orders   turkey   A CON - SMY" in fall and "WITHHELD turkey" in fall
    assert "draw vote (sealed, opened with the orders): england, france, germany" in fall
    assert "GAME OVER" not in demo.out
    secret = next(demo.data(f"secrets/{p.name}") for p in (demo.repo / "secrets").glob("turkey-*.yaml")
                  if demo.data(f"secrets/{p.name}")["step"] == "F1902M")
    assert secret["withheld"] and secret["opened"] and "key" not in secret


def test_a_retreat_and_the_builds(demo: Demo) -> None:
    assert "dislodged germany's A BUR by france; may retreat to BEL, GAS, MUN, PIC, RUH" in demo.section("F1901M")
    assert "retreats germany: - A BUR, + A MUN" in demo.section("F1901R")
    assert "retreats germany: - A BUR, + A MUN" in demo.cli("results", "F1901R")
    builds = demo.cli("results", "W1901A")
    assert "adjusted france: + A PAR" in builds and "adjusted russia: + A MOS, + F STP/NC" in builds
    assert "adjusted france: + A MAR, + F BRE" in demo.section("W1902A")


def test_the_outcome_is_the_same_every_time(demo: Demo) -> None:
    """Orders are data and Diplomacy rolls no dice: the demo always ends in this position."""
    position = demo.data("status.yaml")["position"]
    assert position["centres"]["france"] == ["BEL", "BRE", "MAR", "PAR", "POR", "SPA"]
    assert position["units"]["france"] == ["A BEL", "A MAR", "A PAR", "A SPA", "F BRE", "F POR"]
    assert position["units"]["germany"] == ["A BER", "A HOL", "A MUN", "F DEN", "F KIE"]
    assert {p: len(c) for p, c in position["centres"].items()} == {
        "austria": 5, "england": 4, "france": 6, "germany": 5, "italy": 4, "russia": 6, "turkey": 4}


def test_the_closing_note_names_a_command_for_each_feature_and_they_work(demo: Demo) -> None:
    tail = demo.out[demo.out.index("see it yourself"):]
    for feature in ("cascade into LIMBO", "illegal order and its warning", "the retreat", "the builds",
                    "whisper as France reads it", "the whisper disclosed", "director's warning citing",
                    "the map after Spring 1901", "the map now"):
        assert feature in tail
    for line in tail.splitlines()[1:]:
        _what, _, commands = line.partition(": ")
        for command in commands.split(" && "):
            words = shlex.split(command)
            assert Path(words[0]).name == "pbem"
            demo.cli(*words[1:])


def test_the_closing_note_shows_the_corrected_map(demo: Demo) -> None:
    """The map the closing note names: Spring 1901's orders with Austria's forbidden one and France's void one
    drawn apart from those carried out, and the game's page with a map at each handoff."""
    tail = demo.out[demo.out.index("see it yourself"):]
    line = next(line for line in tail.splitlines() if "the map after Spring 1901" in line)
    words = shlex.split(line.partition(": ")[2])
    demo.cli(*words[1:])
    svg = (demo.repo / words[words.index("--out") + 1]).read_text(encoding="utf-8")
    assert 'data-order="F TRI - VEN" data-verdict="forbidden"' in svg
    assert 'data-order="A BUR H" data-verdict="void"' in svg
    assert 'data-verdict="ok"' in svg
    assert "S1901M" in svg
    demo.cli("log", "--html", "--out", "game.html")
    assert (demo.repo / "game.html").read_text(encoding="utf-8").count("<svg") > 10


# --- machine output (cli-eco): the Diplomacy readings in `--format json`, on this demo --------------------------

def test_the_diplomacy_readings_in_json(demo: Demo) -> None:
    """results, relations and inbox (france's key) validate against schemas/output/ with every key present;
    status carries the Diplomacy position (tests/test_cli_ecosystem.py checks the tactical readings)."""
    from test_cli_ecosystem import checked_json

    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("GIT_", "SSH_", "PBEM_"))}
    env.update(clean_env(demo.root / "home"), PBEM_KEY=str(demo.root / "keys" / "france_ed25519"))

    def read(name: str, *args: str) -> Any:
        old = Path.cwd()
        os.chdir(demo.repo)
        try:
            from pbem.cli import app

            done = CliRunner().invoke(app, [*args, "--format", "json"], env=env, catch_exceptions=False)
        finally:
            os.chdir(old)
        assert done.exit_code == 0, done.output
        return checked_json(name, done.stdout)

    results = read("results", "results")
    assert results["phase"] is None and results["phases"][0]["phase"] == "S1901P"
    assert all(p["outcome"] is None for p in results["phases"][:-1])
    one = read("results", "results", "S1901M")
    assert [p["phase"] for p in one["phases"]] == ["S1901M"] and one["phases"][0]["orders"]["france"]
    read("relations", "relations")
    read("relations", "relations", "--at", "S1901M")
    inbox = read("inbox", "inbox")
    assert inbox["whispers"] and all("france" in w["to"] or w["from"] == "france" for w in inbox["whispers"])
    position = read("status", "status")["status"]["position"]  # Diplomacy keeps one
    assert isinstance(position, dict) and position
