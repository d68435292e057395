"""Issue 5 end to end: Declaration of War (dow/1, seed 001) played with the real commands in real repositories.

Seven powers hold seven keys; Italy is the game director and plays (seed 001: "Gamedirector: Player5 (is playing
too)"). Each power seals its orders for the phase with `pbem orders FILE` (no control needed: DESIGN §4.7) and
reveals them with `pbem orders --reveal` once every power owing orders has sealed; the last reveal resolves the
phase. Press (`pbem say`, `propose`, `accept`, `declare`, `warn`, `lift`, `draw`) is one line of
the power's own press/<power>.yaml dated with the phase open now, committed at once. `pbem relations` prints the matrix in force
and what is recognised but not yet realised.

Bases, built once per module through the services (fast) and copied per test: `first_half` (started, at the
press-only first half S1901P) and `second_half` (every power said `ready`, nothing sealed: at S1901M, nothing
recognised). The command under test runs through the real CLI (typer's runner in-process, or the installed
`pbem` where exit codes matter).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest
from typer.testing import CliRunner

from conftest import built_once
from gitutil import clean_env
from pbem.crypto.keys import PrivateKey, write_keypair
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping
from pbem.services import setup
from pbem.services.dow import orders as dow_orders, press as dow_press
from pbem.services.workspace import Identity, Workspace, load_identity
from pbem.store.repo import GameRepo
from pbem.store.signer import signer_for
from pbem.verify.history import verify_history
from pbem.protocol.control import expected_after

PBEM = Path(sys.executable).with_name("pbem")
POWERS = ("austria", "england", "france", "germany", "italy", "russia", "turkey")
CODE = "IReadTheGameDescription"  # seed 001: 'The invite code is "IReadTheGameDescription"'
DIRECTOR = "italy"


@dataclass
class Dow:
    """One dow game folder: the repository (`game/`), the seven powers' keys (`keys/`) and a clean HOME."""

    root: Path

    @property
    def repo_dir(self) -> Path:
        return self.root / "game"

    def key(self, power: str) -> Path:
        return self.root / "keys" / f"{power}_ed25519"

    def me(self, power: str) -> Identity:
        return replace(load_identity(str(self.key(power)), self.root), author=(power.title(), f"{power}@dow.test"))

    def ws(self) -> Workspace:
        return Workspace.open(self.repo_dir)

    # --- the real commands ------------------------------------------------------------------------------
    def cli(self, *args: str, who: str | None = None) -> Any:
        """`pbem ARGS` through typer's runner in this process, with `who`'s key, in the repository."""
        from pbem.cli import app

        env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("GIT_", "SSH_", "PBEM_"))}
        env.update(clean_env(self.root / "home", {"PBEM_KEY": str(self.key(who))} if who else {}))
        old = Path.cwd()
        os.chdir(self.repo_dir)
        try:
            return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(old)

    def pbem(self, *args: str, who: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """The installed `pbem` in a subprocess: exit codes and stderr exactly as a player sees them."""
        env = clean_env(self.root / "home", {"PBEM_KEY": str(self.key(who))} if who else {})
        return subprocess.run([str(PBEM), *args], cwd=cwd or self.repo_dir, env=env, capture_output=True, text=True,
                              check=False)

    def ok(self, *args: str, who: str | None = None) -> str:
        done = self.cli(*args, who=who)
        assert done.exit_code == 0, done.output
        return done.output

    def refused(self, *args: str, who: str, rule: str, code: int = 1) -> str:
        """The command is refused with `rule` and exit `code`, and writes nothing (HEAD, files)."""
        before = self.head(), self.files()
        done = self.cli(*args, who=who)
        assert done.exit_code == code, done.output
        assert f"[{rule}]" in done.output, done.output
        assert (self.head(), self.files()) == before
        return done.output

    def orders_file(self, orders: Sequence[str], name: str = "orders.yaml") -> str:
        path = self.root / name
        path.write_text(dump_mapping({"orders": list(orders)}) if orders else "orders: []\n")
        return str(path)

    # --- fast moves through the services ------------------------------------------------------------------
    def seal(self, power: str, orders: Sequence[str] = ()) -> dow_orders.SealedOrders:
        return dow_orders.seal_orders(self.ws(), self.me(power), json.dumps({"orders": list(orders)}).encode(),
                                     f"{power}'s orders", anyway=True)  # as given: the rules void what is void

    def reveal(self, power: str) -> dow_orders.RevealedOrders:
        return dow_orders.reveal_orders(self.ws(), self.me(power))

    def say(self, power: str, **body: Any) -> dow_press.Posted:
        return dow_press.post(self.ws(), self.me(power), body)

    def phase(self, orders: Mapping[str, Sequence[str]] | None = None) -> None:
        """Every power still owing orders seals (`orders`, else an empty set), then each reveals; in the press-only
        S1901P every power says `ready` instead."""
        if self.owing("ready"):
            for power in self.owing("ready"):
                self.say(power, ready=True)
            return
        for power in self.owing():
            self.seal(power, (orders or {}).get(power, ()))
        for power in self.owing("secret"):
            self.reveal(power)

    # --- reading ----------------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return yamlsafe.load((self.repo_dir / "status.yaml").read_bytes(), "status.yaml").data

    def owing(self, kind: str = "sealed") -> list[str]:
        return [b["player"] for b in self.status()["pending"] if b["kind"] == kind]

    def data(self, rel: str) -> Any:
        return yamlsafe.load((self.repo_dir / rel).read_bytes(), rel).data

    def head(self) -> str:
        return GameRepo.open(self.repo_dir).head_oid() or ""

    def files(self) -> dict[str, bytes]:
        return {p.relative_to(self.repo_dir).as_posix(): p.read_bytes() for p in self.repo_dir.rglob("*")
                if p.is_file() and ".git" not in p.relative_to(self.repo_dir).parts}

    def verify(self) -> list[tuple[str, str]]:
        """(rule, commit) of every finding in the whole history."""
        return [(f.rule, f.commit or "") for f in verify_history(GameRepo.open(self.repo_dir)).findings()]

    # --- committing around pbem (the plain-git way to make a bad commit) ----------------------------------------
    def sneak(self, power: str, files: Mapping[str, bytes], message: str = "sneaked", *,
              status: str = "computed") -> str:
        """Commit `files` signed by `power`'s key WITHOUT pbem judging them; status.yaml as replay computes it
        ("computed"), or as given in `files` ("keep"). Returns the new commit id."""
        files = dict(files)
        if status == "computed":
            ws = self.ws()
            prev = ws.history().last
            assert prev is not None
            computed = expected_after(prev, ws.game_of(files), power)[1]
            files["status.yaml"] = dump_mapping(computed.to_data()).encode()
        repo = GameRepo.open(self.repo_dir)
        oid = repo.commit_tree(files, [self.head()], message, signer_for(self.key(power)),
                               ("Sneaky", "sneaky@example.org"))
        repo.update_branch_and_worktree(oid)
        return oid


def copy_dow(source: Dow, dest: Path) -> Dow:
    shutil.copytree(source.root, dest, symlinks=True)
    return Dow(dest)


def new_dow(root: Path, director: str | None = DIRECTOR, join: bool = True, start: bool = True) -> Dow:
    """init from games/dow-standard (founder: austria), the director named, seven keys join with the code, start."""
    dow = Dow(root)
    (root / "home" / ".ssh").mkdir(parents=True)
    for i, power in enumerate(POWERS):
        write_keypair(dow.key(power), PrivateKey.from_seed(bytes([0x40 + i]) * 32, f"{power}@dow.test"))
    ws = setup.init(dow.repo_dir, "dow-standard", "dow-e2e", dow.me("austria"))
    if director:
        files = ws.head_files()
        files["game.yaml"] = files["game.yaml"].replace(b"setup:\n", f"setup:\n  director: {director}\n".encode(), 1)
        ws.commit(files, dow.me("austria"), f"setup: {director} directs the game")
    if join:
        for power in POWERS:
            setup.join(ws, power, dow.me(power), CODE)
    if start:
        for power in POWERS:  # the start by consent: austria proposes, the others sign, the last run starts
            setup.begin(ws, dow.me(power), first="austria")
    return dow


# Built once per run (`built_once`: eight modules import them, on either worker) and only read: each test plays in
# its own copy (`copy_dow`).
@pytest.fixture(scope="session")
def base_first_half(tmp_path_factory: pytest.TempPathFactory) -> Dow:
    return Dow(built_once(tmp_path_factory, "dow-first-half", new_dow))


def _second_half(dow: Dow) -> None:
    dow.phase()
    assert dow.status()["firm"] == "S1901M"


@pytest.fixture(scope="session")
def base_second_half(base_first_half: Dow, tmp_path_factory: pytest.TempPathFactory) -> Dow:
    return Dow(built_once(tmp_path_factory, "dow-second-half",
                          lambda into: _second_half(copy_dow(base_first_half, into))))


@pytest.fixture
def first_half(base_first_half: Dow, tmp_path: Path) -> Dow:
    return copy_dow(base_first_half, tmp_path / "dow")


@pytest.fixture
def second_half(base_second_half: Dow, tmp_path: Path) -> Dow:
    return copy_dow(base_second_half, tmp_path / "dow")


# --- joining: seed 001 'The invite code is "IReadTheGameDescription"' -------------------------------------------------

def test_join_needs_the_invite_code_which_the_repository_keeps_only_hashed(tmp_path: Path) -> None:
    dow = new_dow(tmp_path / "dow", join=False, start=False)
    assert CODE not in dow.data("game.yaml")["setup"]["invite_hash"]  # ed25519:SALT:KEY
    assert "[setup.invite-code]" in dow.refused("join", "--as", "france", who="france", rule="setup.invite-code",
                                                code=2)
    dow.refused("join", "--as", "france", "--code", "IDidNotReadIt", who="france", rule="setup.bad-invite-code")
    done = dow.pbem("join", "--as", "france", "--code", CODE, who="france")
    assert done.returncode == 0 and "you hold seat france" in done.stdout, done.stderr
    assert dow.pbem("verify").returncode == 0


# --- orders: sealed per phase, revealed when all have sealed (DESIGN §4.7) ---------------------------------------------

def test_the_first_half_is_press_only_and_ends_when_every_power_is_ready(first_half: Dow) -> None:
    """Seed 001: Spring 1901 "extended one phase length" for press; nothing is sealed or revealed in it."""
    assert first_half.owing("ready") == list(POWERS) and first_half.owing() == []
    first_half.refused("orders", first_half.orders_file([]), who="france", rule="orders.not-owed")
    for power in POWERS[:-1]:
        assert "is ready" in first_half.ok("ready", who=power)
    assert first_half.status()["firm"] == "S1901P" and first_half.owing("ready") == ["turkey"]
    first_half.ok("ready", who="turkey")
    assert first_half.status()["firm"] == "S1901M" and first_half.owing() == list(POWERS)
    assert not any(p.startswith("secrets/") for p in first_half.files())
    first_half.refused("ready", who="france", rule="press.wrong-phase")
    assert first_half.verify() == []


def test_orders_seals_for_the_phase_open_now_without_holding_control(second_half: Dow) -> None:
    assert second_half.status()["control"] == "austria"
    out = second_half.ok("orders", second_half.orders_file([]), who="france")
    assert "sealed france-0001: your orders for S1901M (0)" in out
    secret = second_half.data("secrets/france-0001.yaml")
    assert (secret["owner"], secret["kind"], secret["step"], "key" in secret) == ("france", "orders", "S1901M", False)
    assert "france" not in second_half.owing() and len(second_half.owing()) == 6
    assert second_half.pbem("verify").returncode == 0


def test_sealed_orders_cannot_change_and_are_revealed_only_when_all_have_sealed(second_half: Dow) -> None:
    second_half.ok("orders", second_half.orders_file([]), who="france")
    assert "waiting for austria, england, germany, italy, russia, turkey" in second_half.refused(
        "orders", "--reveal", who="france", rule="orders.not-yet")
    for power in POWERS:
        if power != "france":
            second_half.seal(power)
    # replaceable until the last power has sealed (tests/test_dow_reseal.py), never after
    second_half.refused("orders", second_half.orders_file([]), who="france", rule="orders.already-sealed")
    assert second_half.owing("secret") == list(POWERS)
    out = second_half.ok("orders", "--reveal", who="france")
    assert "revealed france-0001: your orders for S1901M: none" in out
    assert second_half.data("secrets/france-0001.yaml")["key"]
    for power in POWERS:
        if power != "france":
            second_half.reveal(power)
    assert second_half.status()["firm"] == "F1901M"
    assert second_half.verify() == []


def test_orders_refuses_orders_that_will_not_stand_and_seals_them_with_anyway(second_half: Dow) -> None:
    """Seed 001: a forbidden order earns "a one time warning for an honest mistake"; pbem checks every order
    before sealing and refuses a forbidden (`orders.forbidden`) or invalid (`orders.invalid`) one, naming the file
    and line, sealing nothing; told `--anyway` it seals them as asked (the rules, not the tool, void them)."""
    asked = ["F TRI - VEN", "A VIE - TYX", "A BUD - SER"]
    block = second_half.root / "block.yaml"
    block.write_text("orders:\n  - A BUD - SER\n  - A VIE - TYX\n  - F TRI - VEN\n")
    path = second_half.orders_file(asked)
    before = second_half.head()
    refused = second_half.pbem("orders", str(block), who="austria")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "orders.forbidden" in refused.stderr and f"{block}:4" in refused.stderr, refused.stderr
    assert "1 more order will not stand" in refused.stderr and "--anyway" in refused.stderr
    invalid = second_half.pbem("orders", second_half.orders_file(["A VIE - TYX"], "typo.yaml"), who="austria")
    assert invalid.returncode == 1 and "orders.invalid" in invalid.stderr, invalid.stderr
    assert second_half.head() == before
    done = second_half.pbem("orders", path, "--anyway", who="austria")
    assert done.returncode == 0, done.stderr
    assert "'F TRI - VEN' is forbidden by the relationship states: austria may not move into Venice: Italy's " \
           "territory, and Austria and Italy are NEUTRAL" in done.stderr
    assert "'A VIE - TYX' is not a valid order" in done.stderr
    second_half.phase()
    assert second_half.data("secrets/austria-0001.yaml")["owner"] == "austria"
    results = second_half.ok("results", "S1901M")
    assert "orders   austria  F TRI - VEN; A VIE - TYX; A BUD - SER" in results
    assert "WARNING  austria: 'F TRI - VEN' void" in results and "(offence 1)" in results
    assert "void     austria: 'A VIE - TYX'" in results
    assert "warnings: austria 1" in second_half.ok("relations")
    assert second_half.verify() == []


def test_retreats_and_builds_are_owed_only_by_the_powers_concerned(second_half: Dow) -> None:
    """A phase where a power owes nothing needs no seal from it (owing_players decides); a phase nobody owes
    anything in resolves by itself."""
    second_half.say("france", declare={"to": "germany", "state": "WAR"})  # in force from S1901R
    second_half.phase({"germany": ["A MUN - BUR"], "france": ["A PAR - PIC"]})
    assert second_half.status()["firm"] == "F1901M"  # S1901R: no dislodged unit, resolved by itself
    second_half.phase({"france": ["A PIC - BUR", "A MAR S A PIC - BUR", "F BRE - MAO"], "germany": ["A BUR H"]})
    assert second_half.status()["firm"] == "F1901R"
    assert second_half.owing() == ["germany"]
    second_half.refused("orders", second_half.orders_file([]), who="france", rule="orders.not-owed")
    second_half.phase({"germany": ["A BUR R RUH"]})
    assert second_half.status()["firm"] == "S1902M"  # W1901A: nobody gained or lost a centre
    assert "dislodged germany's A BUR by france; may retreat to" in second_half.ok("results", "F1901M")
    assert "retreats germany: - A BUR, + A RUH" in second_half.ok("results", "F1901R")
    assert second_half.ok("results", "W1901A").startswith("W1901A: nobody owed orders (resolved by itself)")
    assert second_half.verify() == []


# --- press: one line, dated with the phase, committed at once (DESIGN §2, seed 001) -------------------------------------

def test_press_commands_commit_one_signed_line_each_dated_with_the_phase(first_half: Dow) -> None:
    steps = [("say", "Peace in our time", "england"), ("propose", "germany", "ALLIED", "france"),
             ("accept", "france", "ALLIED", "germany"), ("declare", "england", "HOSTILE", "france")]
    for *args, who in steps:
        head = first_half.head()
        out = first_half.ok(*args, who=who)
        assert out.startswith("posted at S1901P:"), out
        repo = GameRepo.open(first_half.repo_dir)
        assert repo.parents(first_half.head()) == [head]
    # each power posts in its own file (DESIGN §2), one line per message
    assert first_half.data("press/england.yaml")["messages"] == [
        {"by": "england", "at": "S1901P", "say": "Peace in our time"}]
    assert first_half.data("press/france.yaml")["messages"] == [
        {"by": "france", "at": "S1901P", "propose": {"to": "germany", "state": "ALLIED"}},
        {"by": "france", "at": "S1901P", "declare": {"to": "england", "state": "HOSTILE"}},
    ]
    assert first_half.data("press/germany.yaml")["messages"] == [
        {"by": "germany", "at": "S1901P", "accept": {"from": "france", "state": "ALLIED"}}]
    assert (first_half.repo_dir / "press/france.yaml").read_text().count("\n") == 3
    assert not (first_half.repo_dir / "press/global.yaml").exists()
    assert first_half.pbem("verify").returncode == 0


def test_accept_says_what_it_recognised_now(first_half: Dow) -> None:
    first_half.ok("propose", "germany", "allied", who="france")
    out = first_half.ok("accept", "france", "ALLIED", who="germany")
    assert "recognised now: france-germany NEUTRAL -> ALLIED" in out


def test_press_keeps_the_player_s_other_edits_in_his_working_tree(first_half: Dow) -> None:
    """A press command commits HEAD's files plus its one line; what else the player was editing stays as it was
    in his working tree, uncommitted."""
    draft = first_half.repo_dir / "players" / "france.yaml"
    draft.parent.mkdir(exist_ok=True)
    draft.write_text("breaks: [{phase: {}}]\n")
    first_half.ok("say", "Bonjour", who="france")
    assert draft.read_text() == "breaks: [{phase: {}}]\n"
    assert "players/france.yaml" not in GameRepo.open(first_half.repo_dir).tree_files(first_half.head())


def test_allies_gift_a_province_publicly_and_it_is_realised_with_the_states(first_half: Dow) -> None:
    """Seed 001, State 5: "You may also (publicly) gift territories to your allies"."""
    first_half.ok("propose", "germany", "ALLIED", who="france")
    first_half.ok("accept", "france", "ALLIED", who="germany")
    assert "posted at S1901P: france gifts BRE to germany" in first_half.ok("gift", "germany", "bre", who="france")
    first_half.phase()
    results = first_half.ok("results", "S1901P")
    assert "gift     france -> germany: BRE" in results and "centre   BRE: france -> germany" in results
    orders = first_half.root / "list.yaml"
    orders.write_text("[]\n")  # a bare list of orders is read as {orders: [...]}
    first_half.ok("orders", str(orders), who="austria")


def test_relations_shows_the_matrix_in_force_and_the_changes_pending(second_half: Dow) -> None:
    """Seed 001: changes "only occur at the beginning of Spring Retreats and Fall Retreats"."""
    second_half.say("france", propose={"to": "germany", "state": "FRIENDLY"})
    second_half.say("germany", accept={"from": "france", "state": "FRIENDLY"})
    second_half.say("russia", propose={"to": "turkey", "state": "ALLIED"})
    data = json.loads(second_half.ok("relations", "--format", "json"))
    assert data["phase"] == "S1901M"
    assert data["in_force"]["france"]["germany"] == "NEUTRAL"
    assert data["pending"] == [["france", "germany", "NEUTRAL", "FRIENDLY"]]
    assert data["proposals"] == [{"by": "russia", "to": "turkey", "state": "ALLIED"}]
    text = second_half.ok("relations")
    assert "france-germany: NEUTRAL -> FRIENDLY" in text
    assert "proposal standing: russia -> turkey: ALLIED" in text
    second_half.phase()
    data = json.loads(second_half.ok("relations", "--format", "json"))
    assert data["phase"] == "F1901M" and data["in_force"]["france"]["germany"] == "FRIENDLY" and not data["pending"]


def test_war_between_two_allies_of_a_third_puts_it_into_limbo_with_both(first_half: Dow) -> None:
    """Seed 001, State 1: "If two of your allies enter war, you enter limbo with both countries"; an ally of one
    side only goes HOSTILE with the other. Recognised in the first half, realised for the second."""
    for by, to in (("england", "france"), ("england", "germany"), ("italy", "france")):
        first_half.ok("propose", to, "ALLIED", who=by)
        first_half.ok("accept", by, "ALLIED", who=to)
    out = first_half.ok("declare", "germany", "WAR", who="france")
    assert ("recognised now: england-france ALLIED -> LIMBO, england-germany ALLIED -> LIMBO, france-germany "
            "NEUTRAL -> WAR, germany-italy NEUTRAL -> HOSTILE") in out
    first_half.phase()
    for args in (("relations",), ("relations", "--at", "S1901M")):
        data = json.loads(first_half.ok(*args, "--format", "json"))
        assert data["phase"] == "S1901M"
        assert (data["in_force"]["england"]["france"], data["in_force"]["england"]["germany"],
                data["in_force"]["italy"]["germany"]) == ("LIMBO", "LIMBO", "HOSTILE")
    assert "* LIMBO" in first_half.ok("relations")
    # leaving limbo: reaffirming ALLIED with both would be a new conflict; ALLIED and HOSTILE is not
    first_half.refused("reaffirm", "france=ALLIED", "germany=ALLIED", who="england", rule="press.forced-state")
    out = first_half.ok("reaffirm", "france=ALLIED", "germany=HOSTILE", who="england")
    assert "recognised now: england-france LIMBO -> ALLIED, england-germany LIMBO -> HOSTILE" in out


def test_the_director_warns_for_recorded_offences_through_press(second_half: Dow) -> None:
    """Seed 001: "Any country disobeying these rules will be given a one time warning ... and then sent into CD
    for the second offense"; the director decides (DESIGN §7.2), bounded: he cites an offence the game recorded,
    a void order, once; never a message; never his own power; and no warning is lifted."""
    second_half.say("turkey", say="Russia will burn")
    second_half.phase({"turkey": ["A SMY - MOS", "F ANK - ROM"], "italy": ["A ROM - PAR"]})  # all three void
    second_half.refused("warn", "turkey", "--reason", "threats", "--phase", "S1901M", "--order", "A CON - BUL",
                        who=DIRECTOR, rule="press.warn-no-offence")  # Turkey gave no such order
    assert second_half.pbem("warn", "turkey", "--reason", "threats", "--message", "1", who=DIRECTOR).returncode == 2
    second_half.ok("warn", "turkey", "--reason", "an impossible order", "--phase", "S1901M", "--order",
                   "A SMY - MOS", who=DIRECTOR)
    assert "warnings: turkey 1" in second_half.ok("relations")
    second_half.refused("warn", "turkey", "--reason", "still", "--phase", "S1901M", "--order", "A SMY - MOS",
                        who=DIRECTOR, rule="press.warn-twice")
    second_half.refused("warn", "italy", "--reason", "mine", "--phase", "S1901M", "--order", "A ROM - PAR",
                        who=DIRECTOR, rule="press.self-warn")
    second_half.refused("warn", "turkey", "--reason", "I do not like Turkey", "--phase", "S1901M", "--order",
                        "F ANK - ROM", who="germany", rule="press.not-director")
    second_half.ok("warn", "turkey", "--reason", "again", "--phase", "S1901M", "--order", "F ANK - ROM",
                   who=DIRECTOR)
    assert "civil disorder from the next phase (second offence): turkey" in second_half.ok("relations")
    assert second_half.pbem("lift", "turkey", who=DIRECTOR).returncode == 2  # no such command
    assert second_half.pbem("verify").returncode == 0


def test_a_draw_by_unanimous_signed_proposal_ends_the_game(first_half: Dow) -> None:
    """Issue 5: draws by unanimous signed proposal; a vote stands until its power withdraws it."""
    for power in POWERS[:-1]:
        first_half.ok("draw", who=power)
    first_half.ok("draw", "--withdraw", who="france")
    first_half.phase()
    assert first_half.status()["over"] is False
    first_half.ok("draw", who="turkey")
    assert first_half.status()["over"] is False  # france withdrew
    first_half.ok("draw", who="france")
    first_half.phase()
    assert first_half.status()["over"] is True and first_half.status()["control"] is None
    assert "GAME OVER draw: austria, england, france, germany, italy, russia, turkey" in first_half.ok(
        "results", "S1901M")
    assert first_half.verify() == []
    first_half.refused("say", "good game", who="france", rule="game.over")


def test_press_and_orders_commands_belong_to_diplomacy(started: Any) -> None:
    """The tactical duel (tests/conftest.py) has no relationships, orders or press."""
    for args in (("relations",), ("say", "hello"), ("results",)):
        done = started.cli(*args, who="fed")
        assert done.exit_code == 2 and "[usage.not-diplomacy]" in done.output, done.output


# --- what is still wrong elsewhere (another engineer owns these modules) ------------------------------------------------

def test_yield_reveals_the_orders_a_power_owes(second_half: Dow) -> None:
    for power in POWERS:
        second_half.seal(power)
    done = second_half.cli("yield", who="austria")
    assert done.exit_code == 0, done.output
    assert "key" in second_half.data("secrets/austria-0001.yaml")


def test_status_tells_every_power_to_say_ready_in_the_first_half(first_half: Dow) -> None:
    out = first_half.ok("status", who="germany")
    assert "you (germany) owe: nothing" not in out and "pbem ready" in out


def test_status_tells_every_power_that_it_owes_orders(second_half: Dow) -> None:
    out = second_half.ok("status", who="germany")
    assert "you (germany) owe: nothing" not in out and "pbem orders" in out
