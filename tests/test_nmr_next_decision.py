"""An nmr settles everything its absent player owes up to his next decision (DESIGN §4.8; docs/protocol.md "What
an nmr settles"): the next step the ruleset declares sealed (tactical: the next turn's energy allocation;
Diplomacy: the next phase). The protocol alone on the tiny ruleset with sealed steps every ten steps, then the
real duel through `pbem`: one nmr carries the absent player to the next turn's start.
"""

from __future__ import annotations

from typing import Any

from conftest import Table
from pbem.protocol.model import Entry, Inputs, PlayerInputs
from pbem.protocol.nmr import Cover, cover_of, covers_at, next_decision, replay_covered
from pbem.protocol.replay import start_checkpoint
from pbem.rulesets import get
from pbem.rulesets.base import Sealed
from test_dice_flow import cli, findings
from tinyrules import TinyRuleset


class Turns(TinyRuleset):
    """Tokens on a line, with a sealed step (owed by nobody: a turn's start) at steps 1, 11 and 21: the Sealed
    capability (rulesets/base.py) with nothing ever sealed, opened or revealed."""

    sealed_kinds: frozenset[str] = frozenset()
    sealed_until_end: frozenset[str] = frozenset()
    part_name = "part"
    replaceable_seals = False

    def __init__(self) -> None:
        super().__init__(last=25)

    @property
    def sealing(self) -> Sealed:
        return self

    def sealed(self, point: Any) -> bool:
        return bool(point[0] % 10 == 1)

    def owing_players(self, state: Any, point: Any) -> list[str]:
        return []

    def sealed_kind(self, point: Any) -> str | None:
        return None

    def secret_kinds(self, setup: Any) -> dict[str, str]:
        return {}

    def reveals_sealed_at(self, state: Any, point: Any) -> bool:
        return False

    def opens_part_at(self, state: Any, point: Any) -> bool:
        return False

    def sealed_part(self, kind: str, value: Any) -> Any:
        return None


RULES = Turns()
SETUP = {"start": {"a": 0, "b": 10}}
NEAR = [{"near": 5}]


def test_the_next_decision_is_the_next_sealed_step() -> None:
    assert isinstance(RULES.sealing, Sealed)  # the capability next_decision and replay read the sealed steps from
    assert next_decision(RULES, SETUP, (4,)) == (11,)
    assert next_decision(RULES, SETUP, (10,)) == (11,)
    assert next_decision(RULES, SETUP, (11,)) == (21,)
    assert next_decision(RULES, SETUP, (22,)) is None  # the game ends first
    assert cover_of(RULES, SETUP, "a", (4,)) == Cover("a", (4,), (10,))
    assert cover_of(RULES, SETUP, "a", (10,)) == Cover("a", (10,), (10,))  # the decision is the very next step
    assert cover_of(RULES, SETUP, "a", (22,)) == Cover("a", (22,), None)
    # without sealed steps every step is a decision: the nmr covers the step it landed at, no more
    assert cover_of(TinyRuleset(), SETUP, "a", (4,)) == Cover("a", (4,), (4,))


def test_a_cover_counts_from_its_nmr_until_the_decision() -> None:
    recorded = (("nmr", "a", (4,)), ("resign", "b", (2,)))
    assert covers_at(RULES, SETUP, recorded, (7,)) == (Cover("a", (4,), (10,)),)
    assert covers_at(RULES, SETUP, recorded, (11,)) == ()
    assert covers_at(RULES, SETUP, recorded, (3,)) == ()
    assert covers_at(RULES, SETUP, (), (12,), now="b") == (Cover("b", (12,), (20,)),)


def _replay(inp: Inputs, covers: tuple[Cover, ...] = ()) -> Any:
    start = start_checkpoint(RULES, SETUP, ["a", "b"])
    return replay_covered(RULES, SETUP, inp, start, None, covers=covers)


def _at(stop: Any) -> list[tuple[str, str, str]]:
    return [(b.player, b.at, b.kind) for b in stop.pending]


def test_one_nmr_settles_every_step_of_his_horizon_up_to_the_decision() -> None:
    """a's orders reach step 3; b's step 25. One step per nmr would need seven nmrs to reach step 11."""
    inp = _inputs(through={"a": "3", "b": "25"})
    assert _at(_replay(inp)) == [("a", "4", "horizon")]
    assert _at(_replay(inp, (Cover("a", (1,), (10,)),))) == [("a", "11", "horizon")]


def test_his_breaks_are_not_served_inside_the_cover_and_count_again_after_it() -> None:
    """a wrote orders to step 25 and `near 5`; b closes in at steps 5-7 (a crossing at 7, inside the cover) and
    again at 14-15 (a crossing at 15, after it). The cover settles the first; his own orders and condition stand
    past step 10, so replay stops after 15 for him, as it would have had he been there."""
    b_in = [(str(s), "b", {"step": -1}) for s in (5, 6, 7)]
    a_back = [("11", "a", {"step": -1}), ("12", "a", {"step": -1}), ("14", "a", {"step": 1})]
    b_in2 = [("14", "b", {"step": -1}), ("15", "b", {"step": -1})]
    inp = _inputs(entries=b_in + a_back + b_in2, through={"a": "25", "b": "25"}, breaks={"a": NEAR})
    assert _at(_replay(inp)) == [("a", "7", "condition")]
    stop = _replay(inp, (Cover("a", (1,), (10,)),))
    assert _at(stop) == [("a", "15", "condition")] and stop.checkpoint.point == (16,)
    # the same cover with his own horizon at step 10: the decision asks him for orders
    short = _inputs(entries=b_in, through={"a": "3", "b": "25"}, breaks={"a": NEAR})
    assert _at(_replay(short, (Cover("a", (1,), (10,)),))) == [("a", "11", "horizon")]


def _inputs(entries: Any = (), through: Any = None, breaks: Any = None) -> Inputs:
    """As tests/test_protocol.py `inputs`, on this ruleset's 25 steps."""
    per = {p: PlayerInputs(through=RULES.parse_time(through[p]), through_text=through[p],
                           breaks=tuple((breaks or {}).get(p, ())), file=f"players/{p}.yaml") for p in ("a", "b")}
    ents = tuple(Entry(RULES.parse_time(at), at, by, by, do, "report/steps.yaml", i + 2)
                 for i, (at, by, do) in enumerate(entries))
    return Inputs.of_entries(("a", "b"), ents, per)


def test_in_diplomacy_an_nmr_settles_its_phase_and_the_next_phase_owes_his_orders() -> None:
    dow = get("dow/1")
    setup: dict[str, Any] = {}
    for phase, nxt in (("S1901M", "S1901R"), ("F1901R", "W1901A"), ("W1901A", "S1902M")):
        point = dow.parse_time(phase)
        assert next_decision(dow, setup, point) == dow.parse_time(nxt)
        assert cover_of(dow, setup, "turkey", point).until == point


def test_one_nmr_carries_an_absent_duellist_to_the_next_turn_start(played: Table) -> None:
    """fed holds control at 1.9.move (his orders end at 1.8.damage) and is gone. One nmr: kli plays the rest of
    turn 1 (his own `range 8` breaks him as usual) and fed is asked again only at 2.0.alloc, his next decision.
    Served one step at a time this took an nmr for every step of the turn."""
    assert played.data("status.yaml")["control"] == "fed"
    cli(played, "agree", "nmr", "--player", "fed", who="kli")
    seen = []
    for _ in range(12):
        status = played.data("status.yaml")
        seen.append((status["control"], status["firm"]))
        if status["control"] != "kli":
            break
        played.turn("kli", through="1.32.final")
    assert status["control"] == "fed" and status["firm"] == "2.0.alloc", seen
    assert [(b["player"], b["kind"]) for b in status["pending"]] == [("fed", "horizon"), ("kli", "horizon")]
    assert all(who == "kli" for who, _ in seen[:-1]), seen
    assert findings(played) == []
