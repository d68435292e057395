"""DESIGN §4.2 "Entries and time": no sequence of legal commits leaves a game where the player who holds control
cannot make a legal commit. A property test on the protocol with the tactical/1 rules (pure: no git), three
players, random legal-looking play.

Each commit is made by whoever holds control: random entries (his units, an enemy's, one that does not exist;
moves at any impulse, speeds including a float, HETs, shots at anyone, systems, passes), a random horizon from the
firm point on and random break conditions from the catalog. It is judged as the verifier judges a turn: what its
author could know (`own_findings`, refused in his commit), then replay from the firm point. Dice owed are rolled
at once. After every accepted commit:
* replay made no finding (an illegal entry is void, never a finding on anybody's commit);
* the player now in control can make a legal commit: moving his horizon on to the firm point (and passing an
  action auction) is accepted and moves the game on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.protocol.control import resume_from
from pbem.protocol.legality import own_findings
from pbem.protocol.model import AT, CONDITION, ROLL, Entry, Inputs, PlayerInputs, Rolled, Stop
from pbem.protocol.replay import replay, start_checkpoint
from pbem.rulesets.tactical import TacticalRuleset

RULES = TacticalRuleset()
PLAYERS = ("fed", "kli", "rom")
LONG = {"heavy": False, "max_range": 10, "brackets": [[0, 3], [4, 10]], "damage": [[6, 5, 4, 3, 2, 1],
                                                                                 [3, 2, 2, 1, 1, 0]]}
SETUP: dict[str, Any] = {
    "map": {"columns": 14, "rows": 14}, "turns": 2, "max_speed": 20,
    "units": [
        {"id": "CA", "owner": "fed", "hex": "0607", "facing": "B", "speed": 8, "turn_mode": 2, "shields": [1] * 6,
         "hull": 5, "systems": ["tractor"], "weapons": [{"id": "ph1", "type": "long", "arcs": ["F", "A", "B"]}]},
        {"id": "D7", "owner": "kli", "hex": "0907", "facing": "F", "speed": 8, "turn_mode": 2, "shields": [1] * 6,
         "hull": 5, "weapons": [{"id": "ph1", "type": "long", "arcs": ["E", "F", "A"]}]},
        {"id": "KR", "owner": "rom", "hex": "0710", "facing": "A", "speed": 6, "turn_mode": 1, "shields": [1] * 6,
         "hull": 5, "weapons": [{"id": "ph1", "type": "long", "arcs": ["F", "A", "B"]}]},
    ],
    "weapons": {"long": LONG},
}
UNITS = ("CA", "D7", "KR", "XX")
CONDITIONS = st.sampled_from([{"range": 2}, {"range": 5}, {"range": 0}, {"fire": {}}, {"turn": {}}, {"speed": {}},
                              {"damage": {}}, {"range": 4, "by": "any"}, {"system": {}}])
SHOTS = st.sampled_from(UNITS).map(lambda t: {"fire": {"weapon": "ph1", "target": t}})
DOS = st.one_of(
    SHOTS, SHOTS, SHOTS,
    st.sampled_from(["F", "TL", "TR", "SL", "SR"]).map(lambda m: {"move": m}),
    st.sampled_from("ABCDEF").map(lambda f: {"het": f}),
    st.one_of(st.integers(0, 20), st.just(12.0), st.just(40)).map(lambda s: {"speed": s}),
    st.just({"use": "tractor"}),
    st.just({"pass": True}),
)


STEP_OF = {"move": "move", "het": "activity", "speed": "activity", "fire": "fire", "use": "activity"}


def step_for(firm: Any, impulses: int, do: dict, aligned: bool) -> Any:
    """A step `impulses` impulses after the firm point: the one where `do`'s kind is given (or any, unaligned)."""
    point = step_after(firm, impulses * 6)
    if not aligned:
        return point
    want = STEP_OF.get(next(iter(do)), "move")
    for _ in range(7):
        if RULES.format_time(point).endswith("." + want) and point >= firm:
            return point
        point = step_after(point, 1)
    return point


def step_after(point: Any, n: int) -> Any:
    for _ in range(n):
        nxt = RULES.next_step(SETUP, point)
        if nxt is None:
            return point
        point = nxt
    return point


class Table:
    """The players' inputs as the commits left them, and where replay stopped."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.per = {p: PlayerInputs() for p in PLAYERS}
        self.dice: dict[str, Rolled] = {}
        self.last: str | None = None
        self.refused: list = []
        self.stop = replay(RULES, SETUP, self.inputs(), start_checkpoint(RULES, SETUP, PLAYERS), None)

    def inputs(self, entries: list[Entry] | None = None, per: dict[str, PlayerInputs] | None = None) -> Inputs:
        return replace(Inputs.of_entries(PLAYERS, tuple(self.entries if entries is None else entries),
                                         self.per if per is None else per), dice=dict(self.dice))

    def try_turn(self, player: str, added: list[tuple[int, bool, str, dict]], ahead: int,
                 breaks: list[dict]) -> tuple[bool, Stop | None]:
        """`player`'s turn: entries (impulses after the firm point, at the step of its kind or not, unit, do),
        horizon `ahead` steps past the firm point, his break conditions. Returns (accepted, the replay after it)."""
        firm = self.stop.checkpoint.point
        assert firm is not None
        points = [step_for(firm, k, do, aligned) for k, aligned, _unit, do in added]
        made = [Entry(at, RULES.format_time(at), player, None if unit == "-" else unit, do,
                      f"report/turn-{at[0]:02d}.yaml", len(self.entries) + i + 1)
                for i, (at, (_k, _a, unit, do)) in enumerate(zip(points, added))]
        old = self.per[player]
        through = max(old.through or firm, step_after(firm, ahead))
        per = dict(self.per)
        per[player] = PlayerInputs(through, RULES.format_time(through), tuple(breaks), (), f"players/{player}.yaml")
        inputs = self.inputs(self.entries + made, per)
        refused = own_findings(RULES, SETUP, inputs, self.stop.checkpoint, player, made)
        if refused:
            # only the author's own new entries are ever the reason (file and line of one of them)
            assert {(f.file, f.line) for f in refused} <= {(e.file, e.line) for e in made}, refused
            assert {f.rule for f in refused} <= {"rules.illegal-action", "rules.duplicate-action"}
            self.refused.append(refused)
            return False, None
        fresh = {player: tuple(c for c in breaks if c not in old.breaks)}
        after = replay(RULES, SETUP, inputs, resume_from(self.stop, player), player, player, fresh=fresh)
        assert after.problems == (), after.problems
        held = self.stop.pending[0]
        assert after.over or held not in after.pending, (held, after.pending)  # progress (seed §4.C)
        self.entries += made
        self.per = per
        self.last = player
        self.stop = after
        return True, after

    def settle_dice(self) -> None:
        """Whoever owes dice rolls them (out of turn; the game's breaks stay)."""
        held = self.stop.pending[0]
        refs = held.why.removeprefix("dice owed for ").split(" (")[0].split(", ")
        for ref in refs:
            self.dice[ref.split(" in ")[0]] = Rolled("b0001", held.player, 3)
        self.stop = replay(RULES, SETUP, self.inputs(), resume_from(self.stop, None), self.last)
        assert self.stop.problems == ()

    def can_go_on(self) -> None:
        """The player in control can make a legal commit: his horizon to the firm point, nothing else."""
        if self.stop.over:
            return
        held = self.stop.pending[0]
        if held.kind == ROLL:
            return  # settled by rolling (settle_dice)
        saved = (list(self.entries), dict(self.per), self.stop, self.last)
        ok, _ = self.try_turn(held.player, [], 0, list(self.per[held.player].breaks))
        assert ok
        self.entries, self.per, self.stop, self.last = saved


OWN = {"fed": "CA", "kli": "D7", "rom": "KR"}
ENTRY = st.tuples(st.integers(0, 8), st.booleans() | st.just(True), st.sampled_from((*UNITS, "-", "own")), DOS)
TURN = st.tuples(st.lists(ENTRY, max_size=4), st.integers(0, 60), st.lists(CONDITIONS, max_size=2, unique_by=str))


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(TURN, min_size=3, max_size=14))
def test_design_4_2_the_player_in_control_can_always_make_a_legal_commit(turns: list) -> None:
    table = Table()
    table.can_go_on()
    for added, ahead, breaks in turns:
        while not table.stop.over and table.stop.pending[0].kind == ROLL:
            table.settle_dice()
        if table.stop.over:
            break
        player = table.stop.pending[0].player
        mine = [(k, aligned, OWN[player] if unit == "own" else unit, do) for k, aligned, unit, do in added]
        accepted, _ = table.try_turn(player, mine, ahead, breaks)
        if not accepted:  # he takes out what pbem check named, as a player would, and commits the rest
            lines = {f.line - len(table.entries) - 1 for f in table.refused[-1]}
            accepted, _ = table.try_turn(player, [e for i, e in enumerate(mine) if i not in lines], ahead, breaks)
        if not accepted:
            accepted, _ = table.try_turn(player, [], ahead, breaks)
            assert accepted
        table.can_go_on()
    voids = table.stop.checkpoint.voids
    assert all(v.player in PLAYERS and v.reason for v in voids)


def test_the_kinds_of_breaks_a_pass_meets() -> None:
    """A smoke run with fixed play: each takes a turn of orders, the game reaches its end without a finding."""
    table = Table()
    for _ in range(60):
        if table.stop.over:
            break
        while not table.stop.over and table.stop.pending[0].kind == ROLL:
            table.settle_dice()
        if table.stop.over:
            break
        held = table.stop.pending[0]
        assert held.kind in ("horizon", CONDITION, AT, "auction"), held
        ok, _ = table.try_turn(held.player, [], 30, [{"range": 3}])
        assert ok
    assert table.stop.over
