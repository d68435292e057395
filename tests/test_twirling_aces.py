"""`pbem demo --game twirling-aces` plays a scripted three-player battle over three turns, all verified: in
turn 1 fire, an action auction settled before any die, a damage reply with a shield reinforcement, a special
(clarify) break and two drones (a real one and a dummy); in turn 2 the CA and the D7 come about and pass each
other again at range 1, both firing everything, while the KR breaks off and leaves the map; in turn 3 the D7
runs off the map under the CA's phasers, and fed, the only one left in play, wins. The template says
`allocation: sealed` and `speeds: sealed`, so each turn's allocation is a sealed simultaneous step (DESIGN §4.7)
whose speeds alone are opened together, and every allocation is opened and audited after the battle.

The demo is played once (module fixture), in process, through the same services the players use; the checks
read what the game left behind: status.yaml at every commit (as verify_history judged it), the report and dice
files at every commit, the final game and its replayed state. The dice are random on every run, so nothing here
depends on a roll's value: only on the rules applied to it.

The tests at the end play short scratch games on the same template: rolling for one's own shots, the auction
asking the player whose horizon reached the declared fire, a seeking weapon's impact, the verifier's audit of
an allocation that does not pay, and the script's own safeguards.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import pytest

from pbem.errors import PbemError
from pbem.formats import yamlsafe
from pbem.formats.canonical import dumps as canonical
from pbem.protocol.model import Status
from pbem.services import demo, pictures, setup, turn
from pbem.services.workspace import Identity, Workspace
from pbem.verify.history import HistoryResult, verify_history

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rederive_dice  # noqa: E402  (tests/rederive_dice.py: the dice contract re-implemented without pbem)

GAMES = Path(__file__).resolve().parents[1] / "games"
TEMPLATE = GAMES / "twirling-aces"
FIRE = "1.12.fire"


# --- the demo, played once ---------------------------------------------------------------------------------------

@dataclass
class Played:
    code: int
    lines: list[str]
    root: Path
    ws: Workspace
    result: HistoryResult

    @property
    def commits(self) -> list[tuple[str, str | None, Status | None]]:
        """(oid, actor, status.yaml as judged) of every commit, root first."""
        return [(c.oid, c.actor, c.status) for c in self.result.commits]

    def files(self, oid: str) -> dict[str, bytes]:
        return {path: self.ws.repo.read_blob(blob) for path, (blob, _mode) in self.ws.repo.tree_files(oid).items()}

    def entries(self, oid: str) -> set[bytes]:
        """The report entries at a commit, each as canonical JSON of {at, by, unit, do}."""
        out = set()
        for path, data in self.files(oid).items():
            if path.startswith("report/"):
                for e in yamlsafe.load(data, path).data["entries"]:
                    out.add(canonical({"at": e["at"], "by": e["by"], "unit": e.get("unit"), "do": e["do"]}))
        return out

    def added(self, index: int) -> list[dict[str, Any]]:
        """The entries commit `index` (in result.commits) added to the reports."""
        import json

        before = self.entries(self.result.commits[index - 1].oid)
        return [json.loads(e) for e in sorted(self.entries(self.result.commits[index].oid) - before)]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    root = tmp_path_factory.mktemp("twirling-aces")
    lines: list[str] = []
    code = demo.run_demo(root, "twirling-aces", lines.append)
    ws = Workspace.open(root / "game")
    return Played(code, lines, root, ws, verify_history(ws.repo))


def pending_of(status: Status | None) -> list[tuple[str, str]]:
    return [(b.player, b.kind) for b in status.pending] if status is not None else []


def test_the_demo_plays_to_the_end_and_every_commit_verifies(played: Played) -> None:
    assert played.code == 0, "\n".join(played.lines[-40:])
    assert played.result.findings() == []
    last = played.result.last
    assert last is not None and last.status is not None and last.status.over
    assert any(re.match(r"ok: \d+ commits verified", line) for line in played.lines)
    # no ship is destroyed, whatever the dice said (hull 200, at most 6 points a hit): the KR and the D7 leave
    # the map (disengaged), and that, not the dice, decides the battle
    state = last.stop.checkpoint.state
    assert {u.id: u.status for u in state.units} == {"CA": "active", "D7": "disengaged", "KR": "disengaged",
                                                     "S1": "expended",  # the real drone hit the KR
                                                     "S2": "dummy",  # the dummy vanished on meeting the CA
                                                     "P1": "active"}  # rom's reply plasma: it never caught the D7
    # the handoff lines name each rule as it happens
    text = "\n".join(played.lines)
    for needle in ("auction round 1", "contribution owed to dice fed-0001 of fed",
                   "is ambiguous at 1.20.move: choose one of move TL, move TR", "launch weapon=dr1 as=S1",
                   "launch weapon=dr2 as=S2", "simultaneous actions declared at 1.18.activity",
                   "S1's plan {'pursue_sealed': {}} is ambiguous at 1.19.move",
                   "Outcome: fed wins: the only one left in play (kli's units disengaged; rom's units disengaged)",
                   "-> game over"):
        assert needle in text, needle


def test_fire_waits_for_dice_named_by_their_shot_and_the_results_are_re_derived(played: Played) -> None:
    """DESIGN §5 / seed §2.D: one die per shot, each batch names the shots it resolves (`ref`); replay holds the
    fire step with a `dice` break until the results are in; the verifier re-derived every result (no finding),
    and so does tests/rederive_dice.py, written from the contract without pbem."""
    dice_breaks = [b for _, _, s in played.commits if s is not None for b in s.pending if b.kind in ("dice", "roll")]
    assert any("1.12.fire/D7/ph1" in b.why for b in dice_breaks), [b.why for b in dice_breaks]
    assert any("contribution owed" in b.why for b in dice_breaks) and any("reveal owed" in b.why for b in dice_breaks)
    game = played.result.last.game
    refs = {r["ref"]: (b.id, b.roller) for b in game.batches.values() for r in b.raw["rolls"] if "ref" in r}
    assert refs == {"1.12.fire/CA/ph1": ("fed-0001", "fed"), "1.12.fire/CA/tp1": ("fed-0001", "fed"),
                    "1.12.fire/D7/ph1": ("kli-0001", "kli"),
                    **{f"2.14.fire/CA/{w}": ("fed-0002", "fed") for w in ("ph1", "ph2", "tp1")},
                    **{f"2.14.fire/D7/{w}": ("kli-0002", "kli") for w in ("ph1", "ph2", "ds1")},
                    **{f"3.1.fire/CA/{w}": ("fed-0003", "fed") for w in ("ph1", "ph2")}}
    derived = rederive_dice.rederive(played.root / "game")
    assert derived == {b.id: b.results for b in game.batches.values()}
    # each fire step resolved with those dice: each shot did its table's damage (range 8 at 1.12.fire, 1 at
    # 2.14.fire, 18 at 3.1.fire) to the shield facing the firer, nothing more and nothing less
    setup_ = game.manifest.setup
    table = setup_["weapons"]

    def damage(kinds: tuple[str, ...], batch: str, distance: int) -> int:
        rolls = game.batches[batch].results
        assert len(rolls) == len(kinds)
        rows = [next(i for i, (lo, hi) in enumerate(table[k]["brackets"]) if lo <= distance <= hi) for k in kinds]
        return sum(table[k]["damage"][row][roll - 1] for k, row, roll in zip(kinds, rows, rolls))

    start = {u["id"]: sum(u["shields"]) + u["hull"] for u in setup_["units"]}
    end = {u.id: sum(u.shields) + u.hull for u in played.result.last.stop.checkpoint.state.units if u.id in start}
    # kli reinforced the D7's front shield by 2 at his damage reply: it took the first 2 points (seed §6.C.2)
    on_d7 = (damage(("phaser", "photon"), "fed-0001", 8) - 2 + damage(("phaser", "phaser", "photon"), "fed-0002", 1)
             + damage(("phaser", "phaser"), "fed-0003", 18))
    assert start["D7"] - end["D7"] == on_d7 >= 2 + 3 + 2
    on_ca = damage(("phaser",), "kli-0001", 8) + damage(("phaser", "phaser", "disruptor"), "kli-0002", 1)
    assert start["CA"] - end["CA"] == on_ca >= 1 + 3
    warhead = table["drone"]["warhead"]
    assert start["KR"] - end["KR"] == warhead  # nothing fired at the KR: only the drone's impact hit it


def test_declared_fire_opens_an_auction_and_a_triggered_player_adds_fire_in_it(played: Played) -> None:
    """Seed §7 / DESIGN §4.6: fed's declared fire meets kli's {fire: {}} and rom's {fire: {heavy: true}}: the
    step is not resolved; kli adds a shot ("me too"), rom passes, fed (woken by kli's shot) passes, and nobody is
    asked again (kli added last and nothing came since); then the step waits for dice and resolves."""
    commits = played.commits
    opened = next(i for i, (_, _, s) in enumerate(commits) if any(k == "auction" for _, k in pending_of(s)))
    assert commits[opened][1] == "fed"
    assert pending_of(commits[opened][2]) == [("kli", "auction"), ("rom", "auction")]
    assert [e["at"] for e in played.added(opened)] == [FIRE, FIRE]
    rounds = {}
    for i in range(opened + 1, len(commits)):
        prev = commits[i - 1][2]
        held = prev.pending[0] if prev is not None and prev.pending else None
        if held is None or held.kind != "auction" or held.at != FIRE:  # the launches' auction comes later
            continue
        rounds.setdefault(held.why, []).append((commits[i][1], played.added(i)))
    # one round: kli added, rom and fed passed; kli, who added last, had nothing new to answer and was not asked
    # again (the why names the round)
    assert len(rounds) == 1
    (round1,) = rounds.values()
    assert [who for who, _ in round1] == ["kli", "rom", "fed"]
    kli_adds = round1[0][1]
    assert kli_adds == [{"at": FIRE, "by": "kli", "unit": "D7", "do": {"fire": {"weapon": "ph1", "target": "CA"}}}]
    assert round1[1][1] == [] and round1[2][1] == []  # rom and fed passed: no new entry


def test_no_die_is_rolled_before_the_auction_is_settled(played: Played) -> None:
    """Seed §7.B (`dice.auction-open`): while the auction at 1.12.fire still asks someone, no commit adds or
    changes a dice file; fed's pass closes it (kli, who added last, is not asked again), and the first batch
    comes with kli's roll right after, fed's after that."""
    commits = played.commits

    def dice_files(i: int) -> dict[str, bytes]:
        return {p: b for p, b in played.files(commits[i][0]).items() if p.startswith("dice/")}

    open_ = [i for i, (_, _, s) in enumerate(commits)
             if s is not None and any(b.kind == "auction" and b.at == FIRE for b in s.pending)]
    assert open_ == list(range(open_[0], open_[-1] + 1)) and len(open_) == 3  # fed's fire, kli, rom
    closing = open_[-1] + 1  # fed's pass
    assert all(dice_files(i) == {} for i in range(closing + 1))
    assert commits[closing][1] == "fed" and not any(k == "auction" for _, k in pending_of(commits[closing][2]))
    assert commits[closing + 1][1] == "kli" and sorted(dice_files(closing + 1)) == ["dice/kli-0001.yaml"]


def test_the_damage_reply_comes_at_the_fire_step_and_the_reinforcement_takes_the_hits_first(played: Played) -> None:
    """Seed §6.C.1, §6.C.2: once the dice of 1.12.fire are in, kli ({damage: {kind: shield}}) is told his hits
    before they are scored, at the fire step itself; his reply reinforces the D7's front shield by 2, and those 2
    points take the CA's hits first."""
    commits = played.commits
    replies = [i for i, (_, _, s) in enumerate(commits) if s is not None and s.pending and s.pending[0].kind == "reply"]
    assert len(replies) == 1
    held = commits[replies[0]][2].pending[0]
    assert (held.player, held.at) == ("kli", FIRE) and "known, not yet scored" in held.why
    assert commits[replies[0]][2].firm == FIRE  # the step is held: the firm point is the fire step
    answer = replies[0] + 1
    assert commits[answer][1] == "kli"
    assert played.added(answer) == [{"at": FIRE, "by": "kli", "unit": "D7",
                                     "do": {"reinforce": {"shield": 1, "points": 2}}}]
    shots = "\n".join(played.lines).splitlines()  # the log is echoed as one block
    took = [int(m.group(1)) for line in shots if line.strip().startswith(FIRE + " CA")
            for m in [re.search(r"reinforcement took (\d+)", line)] if m]
    assert sum(took) == 2


def test_a_tied_plan_stops_with_a_clarify_break_answered_with_one_of_its_options(played: Played) -> None:
    """Seed §5.C / DESIGN §4.5: rom's plan `pursue D7` ties when the D7 is dead astern: replay stops before the
    step with a special break for rom listing the options; his next commit adds one of them there."""
    commits = played.commits
    asked = [i for i, (_, _, s) in enumerate(commits) if s is not None and s.pending
             and s.pending[0].kind == "clarify" and s.pending[0].why.startswith("KR's plan")]
    assert [commits[i][2].pending[0].at for i in asked] == ["1.20.move"]
    held = commits[asked[0]][2].pending[0]
    assert [dict(o) for o in held.options] == [{"move": "TL"}, {"move": "TR"}]
    assert commits[asked[0] + 1][1] == "rom"
    answer = played.added(asked[0] + 1)
    assert len(answer) == 1 and answer[0]["at"] == held.at and answer[0]["do"] in [dict(o) for o in held.options]
    assert all(b.kind != "clarify" or b.at != held.at or not b.why.startswith("KR's plan")
               for b in commits[asked[0] + 1][2].pending)  # (rom's plasma P1 ties there too: its own break)


def test_drones_steered_by_sealed_pursuit_show_nothing_of_their_targets(played: Played) -> None:
    """Seed §2.C: kli's drones fly under `pursue_sealed` plans that name no target (players/kli.yaml shows
    none). Where no move pursues both possible targets (the CA and the KR), kli gets a special break at that
    step; his bare `pbem yield` answers it from his own sealed targets, one entry per drone asked, each one of
    the options; once the targets are revealed every move is checked against pursuit of them, and none is
    found wanting (no rules.pursuit anywhere in the history)."""
    last = played.result.last
    plans = last.game.inputs.of("kli").plans
    assert {p["unit"]: dict(p["do"]) for p in plans if p["unit"] in ("S1", "S2")} == {
        "S1": {"pursue_sealed": {}}, "S2": {"pursue_sealed": {}}}
    commits = played.commits
    asked = [i for i, (_, _, s) in enumerate(commits) if s is not None and s.pending
             and s.pending[0].kind == "clarify" and s.pending[0].player == "kli"]
    assert [commits[i][2].pending[0].at for i in asked][:3] == ["1.19.move", "1.20.move", "1.21.move"]
    for i in asked:
        held = {b.why.split("'s plan")[0]: b for b in commits[i][2].pending if b.kind == "clarify"
                and b.player == "kli"}
        assert set(held) <= {"S1", "S2"} and commits[i + 1][1] == "kli"
        answers = {e["unit"]: e["do"] for e in played.added(i + 1)}
        assert set(answers) == set(held), (held, answers)
        for unit, b in held.items():
            assert "pursue_sealed" in b.why and answers[unit] in [dict(o) for o in b.options]
    assert played.result.findings() == []


def test_a_seeking_weapon_is_launched_with_its_target_sealed_and_hits_it(played: Played) -> None:
    """DESIGN §7.1, seed §2.C: `{launch: {weapon, as}}` at activity puts a new unit on the map with its target
    sealed (kind `target`); the launch counts as fire for fed's {fire: {}} and meets rom's {launch: {}}, which
    opens an action auction at 1.18.activity itself (launches are simultaneous within their step, seed §7.A):
    rom, then fed, may launch in reply there; when the drone meets the KR its owner must reveal the target, and
    it hits: warhead damage, the drone expended."""
    last = played.result.last
    flying = last.stop.checkpoint.state.unit("S1")
    assert flying is not None and flying.seeking is not None and flying.owner == "kli"
    assert flying.seeking.launched_at == last.game.manifest.ruleset.parse_time("1.18.activity")
    assert flying.status == "expended"
    asked = [[(b.player, b.kind) for b in s.pending] for _, actor, s in played.commits
             if s is not None and s.firm == "1.18.activity"]
    assert asked == [[("rom", "auction"), ("fed", "auction")],  # kli's launches declared
                     [("fed", "auction"), ("kli", "auction")],  # rom's reply launch meets fed's and kli's {fire: {}}
                     [("kli", "auction")]]  # then it resolves: rom added last, nothing came since
    reply = next(i for i, (_, actor, s) in enumerate(played.commits)
                 if s is not None and s.firm == "1.18.activity" and actor == "rom")
    assert played.added(reply) == [{"at": "1.18.activity", "by": "rom", "unit": "KR",
                                    "do": {"launch": {"weapon": "pl1", "as": "P1"}}}]
    plasma = last.stop.checkpoint.state.unit("P1")
    assert plasma.seeking.launched_at == flying.seeking.launched_at  # launched at the same impulse, together
    for unit, target_, nature in (("S1", "KR", "real"), ("S2", "CA", "dummy")):
        target = [s for s in last.game.secrets.values() if s.raw.get("concerns") == unit]
        assert len(target) == 1 and target[0].owner == "kli" and target[0].raw["kind"] == "target"
        assert target[0].revealed and target[0].value() == {"unit": unit, "target": target_, "nature": nature}


def test_a_dummy_drone_is_revealed_when_it_meets_its_target_and_vanishes(played: Played) -> None:
    """Seed §2.C (target secrets with `nature: real|dummy`): S2 pursues the CA; when it meets her, kli owes its
    sealed target, and the yield of his that moved it there reveals it at once (his pbem yield settles what he
    owes): a dummy, it vanishes (status dummy) and the CA takes no damage from it (the CA's only damage is the
    D7's phaser, checked above)."""
    commits = played.commits
    revealing = next(i for i, (oid, _, _) in enumerate(commits)
                     if b"key:" in played.files(oid).get("secrets/kli-0003.yaml", b""))
    assert commits[revealing][1] == "kli"
    target = played.result.last.game.secrets["kli-0003"]
    assert target.value() == {"unit": "S2", "target": "CA", "nature": "dummy"}
    dummy = played.result.last.stop.checkpoint.state.unit("S2")
    assert dummy is not None and dummy.status == "dummy" and dummy.owner == "kli"


def test_allocation_is_a_sealed_simultaneous_step_with_only_the_speeds_opened_together(played: Played) -> None:
    """DESIGN §4.7, seed §2.C (game.yaml `allocation: sealed`, `speeds: sealed`): once every captain's orders
    reach 1.0.alloc (no speed entry: each ship's speed is a line of its sealed allocation), replay waits for all
    three sealed allocations; each captain seals his own out of turn, in any order (rom, kli, fed), in a commit
    that changes nothing else; when all are in, every captain owes the opening of his speeds (fed, kli, rom),
    nothing of any allocation is opened before then, the turn starts only when all speeds are open, and each box
    is opened only after the battle is over (seed 000 §2.C: "retrieved and verified at the conclusion")."""
    game = played.result.last.game
    assert (game.manifest.setup["allocation"], game.manifest.setup["speeds"]) == ("sealed", "sealed")
    commits = played.commits
    waiting = [i for i, (_, _, s) in enumerate(commits) if s is not None and s.pending
               and all(b.kind == "sealed" for b in s.pending)]
    first = waiting[0]
    assert sorted(pending_of(commits[first][2])) == [("fed", "sealed"), ("kli", "sealed"), ("rom", "sealed")]
    assert {b.at for b in commits[first][2].pending} == {"1.0.alloc"}
    assert [e for e in map(json.loads, played.entries(commits[first][0])) if e["at"] == "1.0.alloc"] == []
    sealers, owed = [], {"fed", "kli", "rom"}
    for i in range(first + 1, first + 4):
        oid, actor, status = commits[i]
        before, after = played.files(commits[i - 1][0]), played.files(oid)
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        new_secret = [p for p in changed if p.startswith("secrets/")]
        assert len(new_secret) == 1 and set(changed) == {"status.yaml", *new_secret}, changed
        sealed = yamlsafe.load(after[new_secret[0]], new_secret[0]).data
        assert (sealed["owner"], sealed["kind"], sealed["step"], "key" in sealed) == (actor, "allocation",
                                                                                     "1.0.alloc", False)
        owed.discard(actor)
        assert {b.player for b in status.pending if b.kind == "sealed"} == owed
        sealers.append(actor)
    assert sealers == ["rom", "kli", "fed"]
    assert commits[first + 1][2].control == "fed"  # rom sealed while the step named fed first: no control needed
    # all sealed: every captain owes the opening of his speeds, and nothing was opened before
    assert pending_of(commits[first + 3][2]) == [("fed", "secret"), ("kli", "secret"), ("rom", "secret")]
    assert all("open the speeds" in b.why for b in commits[first + 3][2].pending)
    allocations = sorted((s for s in game.secrets.values() if s.raw["kind"] == "allocation"), key=lambda s: s.id)
    opening = [i for i, (oid, _, _) in enumerate(commits) for s in allocations
               if s.file in played.files(oid) and b"part_salt:" in played.files(oid)[s.file]]
    assert min(opening) == first + 4
    assert [commits[i][1] for i in range(first + 4, first + 7)] == ["fed", "kli", "rom"]
    assert [b.kind for b in commits[first + 6][2].pending] == ["horizon"]  # all speeds open: turn 1 started
    opened = yamlsafe.load(played.files(commits[first + 6][0])["secrets/kli-0001.yaml"], "kli-0001").data
    assert opened["part"] == {"units": {"D7": {"speed": 8}}} and "key" not in opened  # nothing but the speed
    # every box opened only once the battle is over: the last three commits, one per captain
    revealing = sorted({i for i, (oid, _, _) in enumerate(commits) for s in allocations
                        if s.file in played.files(oid) and b"key:" in played.files(oid)[s.file]})
    assert revealing == [len(commits) - 3, len(commits) - 2, len(commits) - 1], (revealing, len(commits))
    assert commits[len(commits) - 4][2].pending and not commits[len(commits) - 4][2].over
    assert [(s.id, s.owner, s.revealed, s.value()["turn"]) for s in allocations] == [
        ("fed-0001", "fed", True, 1), ("fed-0002", "fed", True, 2), ("fed-0003", "fed", True, 3),
        ("kli-0001", "kli", True, 1), ("kli-0004", "kli", True, 2), ("kli-0005", "kli", True, 3),
        ("rom-0001", "rom", True, 1), ("rom-0003", "rom", True, 2)]  # rom-0002: P1's target; no ship in turn 3
    speeds = {(s.owner, s.value()["turn"]): next(iter(s.value()["units"].values()))["speed"] for s in allocations}
    assert speeds == {("fed", 1): 8, ("kli", 1): 8, ("rom", 1): 8, ("fed", 2): 16, ("kli", 2): 16, ("rom", 2): 16,
                      ("fed", 3): 12, ("kli", 3): 20}
    # the speeds are known together: each turn's first move comes after the last of its speeds is opened
    state = played.result.last.stop.checkpoint.state
    assert {u.id: u.speed for u in state.units if u.seeking is None} == {"CA": 12, "D7": 20, "KR": 16}


def test_allocations_are_audited_against_what_each_ship_did(played: Played) -> None:
    """Seed §2.C: each revealed allocation pays for what its ship did in the turn (kli's weapons line is short by
    his phaser, paid from his reserve); the verifier audits them (rules.allocation, no finding here) and the
    demo prints the audit."""
    game = played.result.last.game
    allocations = sorted((s for s in game.secrets.values() if s.raw["kind"] == "allocation"), key=lambda s: s.id)
    audits = demo.audit_results(played.result)
    assert [ok for ok, _ in audits] == [True] * 8, audits
    assert any(line.startswith("Energy allocations audited") for line in played.lines)
    ruleset, setup_ = game.manifest.ruleset, game.manifest.setup
    kli = next(s for s in allocations if s.owner == "kli").value()
    record = ruleset.turn_record(played.result.last.stop.checkpoint.state, "kli", 1)
    without_reserve = {"turn": 1, "units": {"D7": {**kli["units"]["D7"], "reserve": 0}}}
    assert ruleset.audit_allocation(setup_, record, without_reserve)  # the reserve is what pays for the phaser
    # at 2.14.fire each captain fires three weapons in one step: his weapons line pays for all three together
    # (1 + 1 + 2), and one point less does not pay
    for owner, unit, fired in (("fed", "CA", ["ph1", "ph2", "tp1"]), ("kli", "D7", ["ph1", "ph2", "ds1"])):
        second = next(s for s in allocations if s.owner == owner and s.value()["turn"] == 2).value()
        record = ruleset.turn_record(played.result.last.stop.checkpoint.state, owner, 2)
        assert [list(u.fired) for u in record.units if u.unit == unit] == [fired]
        assert second["units"][unit]["weapons"] == 4 and not ruleset.audit_allocation(setup_, record, second)
        short = {"turn": 2, "units": {unit: {**second["units"][unit], "weapons": 3, "reserve": 0}}}
        assert ruleset.audit_allocation(setup_, record, short)


def test_the_battle_lasts_three_turns_the_ships_pass_twice_and_it_ends_decisively(played: Played) -> None:
    """Games worth playing: the template lasts 4 turns on a 40×30 map; in the demo the CA and the D7 close from
    14 columns apart, pass each other in turn 1 (fire at range 8), come about and pass again in turn 2 (fire at
    range 1), and in turn 3 the D7 runs east off the map under fire. The KR left the map in turn 2. The game ends
    there, before its last turn, with an outcome that no die decides: fed, the only one left in play, wins."""
    game = played.result.last.game
    assert (game.manifest.setup["turns"], game.manifest.setup["map"]) == (4, {"columns": 40, "rows": 30})
    _history, known = pictures.walk(played.ws.repo)
    ruleset = game.manifest.ruleset
    at_turn_start: dict[int, Any] = {}
    for verified in known:
        if verified is not None and verified.stop is not None and verified.stop.checkpoint.point is not None:
            point = ruleset.format_time(verified.stop.checkpoint.point)
            if point.endswith(".0.alloc"):
                at_turn_start.setdefault(int(point.split(".")[0]), verified.stop.checkpoint.state)
    assert sorted(at_turn_start) == [1, 2, 3]  # no 4.0.alloc: the game ended in turn 3

    def column(state: Any, unit: str) -> int:
        return state.unit(unit).hex[0]

    # which side of the D7 the CA is on, turn by turn: it changes twice, so they passed each other twice
    sides = [column(at_turn_start[t], "CA") < column(at_turn_start[t], "D7") for t in (1, 2, 3)]
    assert sides == [True, False, True]
    # the shots at each pass, with their ranges, as the log lists them
    text = "\n".join(played.lines)
    for shot in ("1.12.fire CA tp1 at D7, range 8", "2.14.fire CA tp1 at D7, range 1",
                 "2.14.fire D7 ds1 at CA, range 1", "3.1.fire CA ph2 at D7, range 18"):
        assert shot in text, shot
    # the end: the KR and the D7 disengaged, the CA alone in play, in turn 3 of 4
    last = played.result.last
    assert last.status.over  # and turn 4 never started (at_turn_start above): the ships ended it, not the clock
    state = last.stop.checkpoint.state
    assert [(u.id, u.status, u.hex) for u in state.units if u.seeking is None] == [
        ("CA", "active", state.unit("CA").hex), ("D7", "disengaged", None), ("KR", "disengaged", None)]
    assert ruleset.outcome(state) == \
        "fed wins: the only one left in play (kli's units disengaged; rom's units disengaged)"


def test_the_closing_note_says_how_to_see_each_feature(played: Played) -> None:
    """The demo ends with the verification ("ok: N commits verified") and the allocation audit, then `see`: a
    command for each feature the battle shows."""
    verified = next(i for i, line in enumerate(played.lines) if re.fullmatch(r"ok: \d+ commits verified", line))
    see = next(i for i, line in enumerate(played.lines) if line.startswith("see it yourself"))
    assert verified < see
    notes = "\n".join(played.lines[see + 1:])
    for needle in ("auction round", "open the speeds of [a-z]*-0001", "reinforce", "nature", "status=dummy",
                   "Outcome", "status=disengaged", "2.14.fire", "pbem dice show fed-0002", "ambiguous"):
        assert needle in notes, needle


def test_the_duel_demo_still_plays(tmp_path: Path) -> None:
    lines: list[str] = []
    assert demo.run_demo(tmp_path, "tactical-duel", lines.append) == 0, "\n".join(lines[-30:])


# --- scratch games on the same template -----------------------------------------------------------------------

def _template(tmp: Path, game_text: str | None = None) -> Path:
    folder = tmp / "template"
    folder.mkdir()
    # the scratch games keep speeds public (an entry at 1.0.alloc); the demo's sealed speeds are tested above;
    # and they play turn 1 only, so that the game ends (and the allocations are revealed) after it
    lines = (TEMPLATE / "game.yaml").read_text().splitlines()
    public = "\n".join(re.sub(r"^(\s*turns:) \d+", r"\1 1", line) for line in lines
                       if not line.strip().startswith("speeds: sealed")) + "\n"
    assert "\n  turns: 1 " in public
    (folder / "game.yaml").write_text(game_text or public)
    return folder


def _play(tmp: Path, template: Path, turns: list[dict[str, Any]]) -> tuple[Workspace, dict[str, Identity]]:
    """The demo's way of playing, on a scratch template: init, join, fed starts, then the scripted turns."""
    keys = tmp / "keys"
    keys.mkdir()
    seats = [s["id"] for s in yamlsafe.load((template / "game.yaml").read_bytes(), "game.yaml").data["players"]]
    players = {seat: demo._make_key(keys, seat, seat) for seat in seats}
    ws = setup.init(tmp / "game", str(template), "scratch", players[seats[0]])
    for seat, me in players.items():
        setup.join(ws, seat, me)
    for me in players.values():  # the start by consent: the first proposes, the others sign, the last starts
        setup.begin(ws, me, first=seats[0])
    for number, step in enumerate(turns, 1):
        demo._expect(step, demo.play_turn(ws, players[step["player"]], step, number), number)
    return ws, players


def _finish(ws: Workspace, players: Mapping[str, Identity], most: int = 30) -> Status:
    """Every player's orders reach the end: whoever is asked next yields as he stands (settling what he owes), or
    answers a special break with its first option."""
    for number in range(most):
        head = ws.head()
        assert head is not None and head.status is not None
        if head.status.over:
            return head.status
        held = head.status.pending[0]
        if held.kind == "clarify":
            answer = {"at": held.at, "unit": held.unit, "do": dict(held.options[0])}
            demo.play_turn(ws, players[held.player], {"player": held.player, "entries": [answer]}, number)
        else:
            turn.yield_turn(ws, players[held.player])
    raise AssertionError("the game did not end")


ALL_ORDERS = [
    {"player": "fed", "through": "1.32.final", "entries": [{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 8}}]},
    {"player": "kli", "through": "1.32.final", "entries": [{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 8}}]},
    {"player": "rom", "through": "1.32.final", "entries": [{"at": "1.0.alloc", "unit": "KR", "do": {"speed": 8}}]},
]


def sealing(who: str, unit: str, **lines: int) -> dict[str, Any]:
    """`who` seals his allocation for turn 1 (the template's sealed step at 1.0.alloc), out of turn."""
    return {"player": who, "seal": {"kind": "allocation",
                                    "value": {"turn": 1, "units": {unit: lines or {"speed": 8, "weapons": 3}}}}}


# every captain's allocation for 1.0.alloc: speed 8 and 3 for weapons pay for all these tests do
SEALS = [sealing("fed", "CA"), sealing("kli", "D7"), sealing("rom", "KR")]


def test_a_firer_rolls_for_his_shots_when_replay_asks_him(tmp_path: Path) -> None:
    turns = [
        {"player": "fed", "through": "1.11.damage", "entries": [{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 8}}]},
        {"player": "kli", "through": "1.16.damage", "entries": [{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 8}}]},
        {"player": "rom", "through": "1.16.damage", "entries": [{"at": "1.0.alloc", "unit": "KR", "do": {"speed": 8}}]},
        *SEALS,
        {"player": "fed", "through": "1.16.damage",
         "entries": [{"at": FIRE, "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}}],
         "expect": "roll"},  # nobody has a fire break: no auction, the step waits for fed to roll his die
        {"player": "fed", "roll": {"for": ["CA ph1 at D7"], "ref": ["1.12.fire/CA/ph1"]}},  # refused today
        # three players: kli commits, rom commits and reveals, kli reveals (docs/dice.md), fed reveals
        {"player": "kli"}, {"player": "rom"}, {"player": "kli"}, {"player": "fed", "expect": "horizon"},
    ]
    ws, _players = _play(tmp_path, _template(tmp_path), turns)
    assert verify_history(ws.repo).findings() == []


def test_the_player_whose_horizon_reaches_declared_fire_is_asked_in_the_auction(tmp_path: Path) -> None:
    turns = [
        {"player": "fed", "through": "1.16.damage", "breaks": [{"fire": {}}],
         "entries": [{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 8}},
                     {"at": FIRE, "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}}]},
        {"player": "kli", "through": "1.16.damage", "breaks": [{"fire": {}}],
         "entries": [{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 8}}]},
        {"player": "rom", "through": "1.16.damage", "breaks": [{"fire": {}}],
         "entries": [{"at": "1.0.alloc", "unit": "KR", "do": {"speed": 8}}]},
        *SEALS,
    ]
    ws, _players = _play(tmp_path, _template(tmp_path), turns)
    head = ws.head()
    assert head is not None
    assert pending_of(head.status) == [("kli", "auction"), ("rom", "auction")]


IMPACT_GAME = """\
format: pbem/1
id: impact
ruleset: tactical/1
pbem: "0.1.0"
players:
  - {id: kli, name: Klingon}
  - {id: rom, name: Romulan}
dice: {mode: commit-reveal}
setup:
  map: {columns: 20, rows: 20}
  turns: 1
  units:
    - {id: D7, owner: kli, hex: "0510", facing: B, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 100, power: 30, weapons: [{id: dr1, type: drone, arcs: [A]}]}
    - {id: KR, owner: rom, hex: "0910", facing: E, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 100, power: 30, weapons: []}
  weapons:
    drone: {heavy: false, seeking: true, speed: 16, turn_mode: 1, warhead: 6, energy: 0}
"""


def test_the_impact_scenario_makes_contact() -> None:
    """The scenario of the next test, by the ruleset alone: S1, launched at 1.1.activity and pursuing KR, enters
    KR's hex at 1.8.move (a `seeking_contact`), where ruleset.impact would hit KR's shield for the warhead."""
    from pbem.rulesets.base import Action
    from pbem.rulesets.tactical import TacticalRuleset

    rules = TacticalRuleset()
    game_setup = yamlsafe.load(IMPACT_GAME.encode(), "impact").data["setup"]
    state, point = rules.initial_state(game_setup, ("kli", "rom")), rules.first_step(game_setup)
    plan = {"unit": "S1", "from": "1.1.move", "until": "1.32.move", "do": {"pursue": "KR"}}
    while point <= rules.parse_time("1.8.move"):
        given = [Action(point, "kli", "D7", {"launch": {"weapon": "dr1", "as": "S1"}}, "entry")] \
            if rules.format_time(point) == "1.1.activity" else []
        moves = rules.resolve_plan(state, point, "kli", plan)
        given += moves if isinstance(moves, list) else []
        state, events = rules.apply(state, point, given)
        point = rules.next_step(game_setup, point)
    assert [(e.kind, e.data["candidates"]) for e in events if e.kind == "seeking_contact"] == [("seeking_contact", ["KR"])]
    hit, impact = rules.impact(state, "S1", "KR")
    assert [e.kind for e in impact][:2] == ["impact", "damage"] and hit.unit("S1").status == "expended"


def test_a_seeking_weapon_meeting_its_revealed_target_hits_it(tmp_path: Path) -> None:
    turns = [
        {"player": "kli", "through": "1.32.final",
         "plans": [{"unit": "S1", "from": "1.1.move", "until": "1.32.move", "do": {"pursue": "KR"}}],
         "entries": [{"at": "1.1.activity", "unit": "D7", "do": {"launch": {"weapon": "dr1", "as": "S1"}}}],
         "seal": {"kind": "target", "value": {"unit": "S1", "target": "KR"}, "concerns": "S1"}},
        {"player": "rom", "through": "1.32.final"},
    ]
    ws, players = _play(tmp_path, _template(tmp_path, IMPACT_GAME), turns)
    _finish(ws, players)
    result = verify_history(ws.repo)
    assert result.findings() == []
    state = result.last.stop.checkpoint.state
    assert state.unit("S1").status == "expended"  # it met KR in 0910 at 1.8.move (range 4, speed 16)
    assert sum(state.unit("KR").shields) == 6 * 20 - 6


def test_the_verifier_audits_a_revealed_allocation(tmp_path: Path) -> None:
    short = sealing("fed", "CA", speed=4)
    ws, players = _play(tmp_path, _template(tmp_path), [*ALL_ORDERS, short, *SEALS[1:]])
    head = ws.repo.head_oid()
    # revealing an allocation that does not pay is judged as the verifier will: refused, nothing written
    with pytest.raises(PbemError, match=r"rules\.allocation.*speed 8 used \(8\), speed 4 allocated"):
        _finish(ws, players)
    assert ws.repo.head_oid() == head


def test_a_pass_turn_may_not_add_entries(tmp_path: Path) -> None:
    turns = [{**ALL_ORDERS[0], "pass": True}]
    with pytest.raises(PbemError, match="a pass adds no entries"):
        _play(tmp_path, _template(tmp_path), turns)


def test_a_script_that_takes_another_course_fails_loudly(tmp_path: Path) -> None:
    turns = [{**ALL_ORDERS[0], "expect": "auction"}]
    with pytest.raises(PbemError, match=r"expected \['auction'\], but the pending breaks are: kli horizon"):
        _play(tmp_path, _template(tmp_path), turns)


def test_a_seeking_weapon_that_did_not_pursue_its_revealed_target_is_found(tmp_path: Path) -> None:
    """Seed §2.C / DESIGN §7.1: once the target is revealed, every earlier move of the seeking weapon is checked
    against pursuit of it: S1 slipped away from the KR at 1.2.move, so the reveal is judged illegal
    (`rules.pursuit`) and pbem refuses to commit it, changing nothing."""
    turns = [
        {"player": "kli", "through": "1.32.final",
         "plans": [{"unit": "S1", "from": "1.3.move", "until": "1.32.move", "do": {"pursue": "KR"}}],
         "entries": [{"at": "1.1.activity", "unit": "D7", "do": {"launch": {"weapon": "dr1", "as": "S1"}}},
                     {"at": "1.2.move", "unit": "S1", "do": {"move": "SL"}}],
         "seal": {"kind": "target", "value": {"unit": "S1", "target": "KR"}, "concerns": "S1"}},
        {"player": "rom", "through": "1.32.final"},
    ]
    ws, players = _play(tmp_path, _template(tmp_path, IMPACT_GAME), turns)
    head = ws.repo.head_oid()
    with pytest.raises(PbemError, match=r"rules\.pursuit.*S1 did not pursue its target KR at 1\.2\.move"):
        _finish(ws, players)
    assert ws.repo.head_oid() == head
