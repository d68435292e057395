"""Commits per fire step, by hand and with `pbem watch`, in the duel and with three players (docs/tactical.md,
"Round trips per fire step"). Each game is tests/test_tactical_cli_bad_input.py's small battle (allocations
sealed, the ships a few hexes apart, a `{fire: {}}` break in everyone's orders); with three players a third ship
(rom's KR, with an all-round phaser) joins it. Every player fires his ph1 at the same step 1.4.fire: the first
declares, each other adds his shot in the action auction, everyone asked after the last addition passes, then
each firer rolls his own die (`pbem roll`), the others contribute, the firer reveals. By hand every handoff is a `pbem yield`; with the
watches, each seat's `pbem watch` settles what needs no decision (contributions, reveals) the moment it is owed
(its own settle step, on one shared clone: nothing to pull or push). Prints one table; run once:

    .venv/bin/python bench/fire_step_commits.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tool")]

THIRD = """\
  - {id: rom, name: Romulan}
"""
KR = """\
    - {id: KR, owner: rom, hex: "0812", facing: F, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 30, power: 10, weapons: [{id: ph1, type: long, arcs: [A, B, C, D, E, F]}]}
"""
UNITS = {"fed": "CA", "kli": "D7", "rom": "KR"}
TARGETS = {"fed": "D7", "kli": "CA", "rom": "D7"}


def template(three: bool) -> str:
    from test_tactical_cli_bad_input import TEMPLATE

    if not three:
        return TEMPLATE
    text = TEMPLATE.replace("  - {id: kli, name: Klingon}\n", "  - {id: kli, name: Klingon}\n" + THIRD)
    return text.replace("  weapons:\n    long:", KR + "  weapons:\n    long:")


def build(root: Path, three: bool):  # -> Table
    """The battle started by consent, through the real CLI, with fed in control at 1.0.alloc."""
    from conftest import Table
    from gitutil import Sandbox, fixed_key
    from pbem.crypto.keys import write_keypair
    from test_dice_flow import ok

    (root / "template").mkdir(parents=True)
    (root / "template" / "game.yaml").write_text(template(three))
    table_root = root / "table"
    box = Sandbox(table_root)
    shutil.rmtree(box.home / ".ssh")
    for name in ("alice", "bob", "carol"):
        box.new_key(name)
    write_keypair(table_root / "keys" / "rom_ed25519", fixed_key("dave"))
    table = Table(table_root)
    seats = ("fed", "kli", "rom") if three else ("fed", "kli")
    ok(table, "init", str(table.repo_dir), "--template", str(root / "template"), "--id", "fire-bench", who="fed",
       cwd=table_root)
    for seat in seats:
        ok(table, "join", "--as", seat, who=seat)
    for seat in (*seats, "fed"):  # fed proposes, the others sign; the run that finds every signature starts
        if (table.repo_dir / "status.yaml").exists():
            break
        ok(table, "start", "--first", "fed", who=seat)
    for starter in ("players/fed.yaml", "report/turn-01.yaml"):
        (table.repo_dir / starter).unlink(missing_ok=True)
    return table, seats


def arm(table, seats: tuple[str, ...]) -> None:
    """Orders with a {fire: {}} break for everyone, the allocations sealed: fed holds control before 1.4.fire."""
    from test_tactical_cli_bad_input import seal

    table.turn("fed", through="1.3.damage", breaks=[{"fire": {}}])
    for who in seats[1:]:
        table.turn(who, through="1.32.final", breaks=[{"fire": {}}])
    for who in seats:
        seal(table, who, {"turn": 1, "units": {UNITS[who]: {"speed": 0, "weapons": 2}}})


def fire(table, who: str) -> dict:
    return {"at": "1.4.fire", "unit": UNITS[who], "do": {"fire": {"weapon": "ph1", "target": TARGETS[who]}}}


def fire_step(table, seats: tuple[str, ...], watched: bool) -> dict[str, int]:
    """The fire step from fed's declaration to a player needing orders again."""
    from test_fire_step_commits import count, resolve

    start = count(table)
    table.turn("fed", through="1.8.damage", entries=[fire(table, "fed")])
    added = {"fed"}
    auction = 1
    while table.data("status.yaml")["pending"][0]["kind"] == "auction":  # each adds his shot once, then passes
        who = table.data("status.yaml")["pending"][0]["player"]
        table.turn(who, **({"entries": [fire(table, who)]} if who not in added else {}))
        added.add(who)
        auction += 1
    by_hand, by_watch = resolve(table, seats, UNITS, watched)
    total = count(table) - start
    assert total == auction + by_hand + by_watch, (total, auction, by_hand, by_watch)
    return {"commits": total, "auction": auction, "decisions": auction + by_hand, "by watches": by_watch}


def main() -> int:
    import conftest  # noqa: F401  (the suite's settings)
    from conftest import copy_table

    work = Path(tempfile.mkdtemp(prefix="fire-step-"))
    rows = []
    try:
        for three in (False, True):
            base, seats = build(work / ("three" if three else "duel"), three)
            arm(base, seats)
            for watched in (False, True):
                table = copy_table(base, work / f"{len(seats)}-{watched}")
                got = fire_step(table, seats, watched)
                rows.append((f"{len(seats)} players, {'with' if watched else 'without'} watch", got))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| one fire step, every player firing once | commits | auction commits | decisions | by the watches |")
    print("|---|---|---|---|---|")
    for name, got in rows:
        print(f"| {name} | {got['commits']} | {got['auction']} | {got['decisions']} | {got['by watches']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
