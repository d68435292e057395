"""Tactical games of 2-4 players played in memory through the pure judge, to look for stuck states (DESIGN §4.2:
"no sequence of legal commits may leave a game where the player who holds control cannot make a legal
commit"; §4.8: "every state in which someone owes something has a signed exit").

A game is started once through the real CLI (init, joins, the start by consent: `build`); from there every
commit is worked out on a mapping of files as `pbem yield` does it (the player's edits, then `services.turn.settle`
for the dice and reveals he owes, then the status replay computes) and judged by `verify.commit.judge`, the
verifier's own per-commit judge, without git. A `Play` keeps the files and the judge's `Verified` of the last
accepted commit.

`honest(play, player, choice)` is one move of an honest player who holds control or owes something: the least
he must do (seal his allocation, announce his dice, pass, give orders to the step he holds), plus what `choice`
adds (orders far into the future, shots, break conditions of every kind of the catalog, a speed). `stuck(play)`
lists each such player whose least move is refused: what must never be.
"""

from __future__ import annotations

import json
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from conftest import PBEM, Table
from gitutil import Sandbox
from pbem.errors import Finding
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping, dump_report
from pbem.protocol import kinds
from pbem.protocol.model import HORIZON
from pbem.services import chance
from pbem.services import turn as turns
from pbem.services.agreements import dump as dump_agreement
from pbem.services.agreements import signature
from pbem.services.workspace import Identity, Workspace
from pbem.store.signer import signer_for
from pbem.files.game import read_files
from pbem.files.parsecache import ParseCache
from pbem.protocol.game import Game
from pbem.protocol.control import expected_after, takes_turn
from pbem.protocol.model import OWED
from pbem.protocol.verified import Verified
from pbem.protocol.ways_out import agreement_effect, seated, settled_now, settlement_parts
from pbem.verify.commit import judge

SEATS = ("alice", "bob", "carol", "dave")  # seat id = key name (tests/gitutil.py SEEDS)
HEXES = ("0808", "0812", "1108", "1112")
STATUS = "status.yaml"
REPORT = "report/turn-01.yaml"
# every kind of break condition of tactical/1's catalog (rulesets/tactical/conditions.py), as a player writes it
CONDITIONS: tuple[dict[str, Any], ...] = (
    {"fire": {}}, {"fire": {"heavy": True}}, {"range": 3}, {"range": 1}, {"damage": {}}, {"turn": {}},
    {"speed": {}}, {"launch": {}}, {"shield_down": {}}, {"system": {}}, {"fire": {}, "by": "any"},
)


def template(players: int, turns: int = 1) -> str:
    """game.yaml of a small battle: one ship a player, in range of each other, sealed allocations, a drone rack
    each (launches and reply launches at the activity step)."""
    units = "\n".join(
        f"    - {{id: S{i}, owner: {SEATS[i]}, hex: \"{HEXES[i]}\", facing: A, speed: 0, turn_mode: 2, "
        f"shields: [20, 20, 20, 20, 20, 20], hull: 30, power: 10, weapons: [{{id: ph1, type: long, arcs: "
        f"[A, B, C, D, E, F]}}, {{id: ph2, type: long, arcs: [A, B, C, D, E, F]}}, {{id: hv1, type: heavy, "
        f"arcs: [A, B, C, D, E, F]}}, {{id: dr1, type: drone, arcs: [A, B, C, D, E, F]}}]}}"
        for i in range(players))
    seats = "\n".join(f"  - {{id: {SEATS[i]}, name: {SEATS[i].title()}}}" for i in range(players))
    return f"""\
format: pbem/1
id: stuck-search
title: "A small battle, played at random"
ruleset: tactical/1
pbem: "0.1.0"
players:
{seats}
dice: {{mode: commit-reveal}}
setup:
  map: {{columns: 20, rows: 20}}
  turns: {turns}
  allocation: sealed
  units:
{units}
  weapons:
    long: {{heavy: false, max_range: 15, energy: 1, brackets: [[0, 15]], damage: [[3, 3, 2, 2, 1, 1]]}}
    heavy: {{heavy: true, max_range: 15, energy: 2, brackets: [[0, 15]], damage: [[6, 5, 4, 0, 0, 0]]}}
    drone: {{heavy: false, seeking: true, speed: 8, turn_mode: 1, warhead: 3, energy: 0}}
  costs: {{speed_point: 1}}
"""


def build(root: Path, players: int, turns: int = 1) -> Path:
    """A started game through the real CLI (subprocesses): init, each seat joins, the start by consent.
    Returns the table folder (game/, keys/, home/)."""
    box = Sandbox(root)
    for name in SEATS[:players]:
        box.new_key(name)
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(template(players, turns))
    table = Table(root)

    def ok(*args: str, who: str, cwd: Path | None = None) -> None:
        done = subprocess.run([str(PBEM), *args], cwd=cwd or table.repo_dir, env=table.env(who),
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr

    ok("init", str(table.repo_dir), "--template", str(root / "template"), "--id", "stuck-search",
       who=SEATS[0], cwd=root)
    for name in SEATS[:players]:
        ok("join", "--as", name, who=name)
    ok("start", "--first", SEATS[0], who=SEATS[0])
    for name in SEATS[1:players]:
        ok("sign", f"{SEATS[0]}-0001", who=name)
    ok("start", "--first", SEATS[0], who=SEATS[0])
    return root


@dataclass
class Play:
    """A game in memory: its files, the judge's view of its last commit, the players' keys."""

    files: dict[str, bytes]
    head: Verified
    keys: dict[str, Identity]
    cache: ParseCache = field(default_factory=ParseCache)
    commits: int = 0
    refused: int = 0  # random moves the judge refused (a generator's guess, never a stuck state)
    log: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, table_root: Path, key_of: Callable[[str], Path] | None = None) -> "Play":
        """The game at HEAD of `table_root`/game; each seat's key at `key_of(seat)` (else keys/<seat>_ed25519)."""
        ws = Workspace.open(table_root / "game")
        head = ws.head()
        assert head is not None and head.started
        keys = {}
        for seat in head.game.manifest.players:
            path = key_of(seat) if key_of is not None else table_root / "keys" / f"{seat}_ed25519"
            signer = signer_for(path)
            keys[seat] = Identity(path, signer, signer.public)
        return cls(ws.head_files(), head, keys)

    def game_of(self, files: dict[str, bytes]) -> Game:  # what services.turn.settle asks of a workspace
        return read_files(files, self.cache)

    @property
    def game(self) -> Game:
        return self.head.game

    def try_commit(self, player: str, edit: Callable[[dict[str, bytes]], None],
                   settle: bool = True) -> tuple[list[Finding], Verified, dict[str, bytes]]:
        """`player`'s commit of `edit` as `pbem yield` makes it, judged; nothing kept."""
        files = dict(self.files)
        edit(files)
        me = self.keys[player]
        if settle:
            turns.settle(self, self.head, files, me, player)  # type: ignore[arg-type]
        status = expected_after(self.head, self.game_of(files), player)[1]
        files[STATUS] = dump_mapping(status.to_data()).encode()
        changed = {p for p in set(files) | set(self.files) if files.get(p) != self.files.get(p)}
        findings, verified = judge(self.head, self.game_of(files), changed, me.public)
        return findings, verified, files

    def commit(self, player: str, edit: Callable[[dict[str, bytes]], None], what: str,
               settle: bool = True) -> list[Finding]:
        """Make the commit if the judge accepts it; its findings (none when made)."""
        findings, verified, files = self.try_commit(player, edit, settle)
        if not findings:
            self.files, self.head = files, verified
            self.commits += 1
            self.log.append(f"{player}: {what}")
        return findings

    # --- what the game asks --------------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.head.status is None or self.head.status.over

    def acting(self) -> list[str]:
        """Each player who holds control or owes something now, in serving order."""
        status = self.head.status
        if status is None or status.over:
            return []
        out = [status.pending[0].player] if status.pending else []
        out += [b.player for b in status.pending if b.kind in OWED and b.player not in out]
        return out

    def data(self, path: str) -> Any:
        return yamlsafe.load(self.files[path], path).data if path in self.files else None


def stuck(play: Play) -> list[str]:
    """Each player who holds control or owes something and whose least honest move the judge refuses, with the
    findings: a stuck state."""
    out = []
    for player in play.acting():
        findings = play.try_commit(player, lambda files, p=player: least(play, p, files))[0]
        if findings:
            out.append(f"{player}: " + "; ".join(f"[{f.rule}] {f.message}" for f in findings))
    return out


def least(play: Play, player: str, files: dict[str, bytes]) -> None:
    """The least an honest `player` must write now (settling dice and reveals is left to `settle`)."""
    status = play.head.status
    assert status is not None
    mine = [b for b in status.pending if b.player == player]
    ruleset = play.game.manifest.ruleset
    for brk in mine:
        if brk.kind == "sealed":
            seal_allocation(play, player, files, brk.at, speed=0)
        elif brk.kind == "roll" and takes_turn(play.head, player):  # dice are announced in one's own turn
            announce(play, player, files)
    head = status.pending[0] if status.pending else None
    if head is not None and head.player == player and head.kind == "clarify" and head.options:
        _add_entry(files, {"at": head.at, "by": player, "unit": head.unit, "do": dict(head.options[0])})
    if head is not None and head.player == player and head.kind == HORIZON and not any(b.kind in OWED
                                                                                       for b in status.pending):
        mine_file = dict(play.data(f"players/{player}.yaml") or {})
        mine_file["through"] = ruleset.format_time(ruleset.parse_time(head.at))
        files[f"players/{player}.yaml"] = dump_mapping(mine_file).encode()


def seal_allocation(play: Play, player: str, files: dict[str, bytes], at: str, speed: int,
                    weapons: int = 6) -> None:
    """His sealed allocation for the turn of `at`: `speed`, energy for every shot he may fire."""
    ruleset = play.game.manifest.ruleset
    unit = next(u["id"] for u in play.game.manifest.setup["units"] if u["owner"] == player)
    value = {"turn": ruleset.turn_of(ruleset.parse_time(at)),
             "units": {unit: {"speed": speed, "weapons": min(weapons, 10 - speed)}}}
    chance.seal_secret(files, play.game_of(files), play.keys[player], player, "allocation",
                       json.dumps(value).encode(), "end", "", at)


def announce(play: Play, player: str, files: dict[str, bytes]) -> None:
    """His batch for the dice owed at the step replay stopped at (one die per shot of his: `pbem roll`)."""
    game = play.game_of(files)
    ruleset = game.manifest.ruleset
    assert play.head.stop is not None
    state = play.head.stop.checkpoint.state
    refs = [r for r in play.head.stop.dice_refs
            if ruleset.owner_of(state, r.split("/")[1]) == player and r not in game.inputs.dice]
    if refs:
        chance.announce(files, game, play.keys[player], player, list(refs), list(refs), ruleset.dice_sides(refs[0]))


def honest(play: Play, player: str, rng: random.Random) -> tuple[Callable[[dict[str, bytes]], None], list[str]]:
    """One honest move of `player` (who holds control or owes something), with random choices: the least he
    must write, plus, when he holds control, orders far into the future (a horizon, shots of every weapon,
    break conditions of the catalog) and, when he seals, a speed."""
    status = play.head.status
    assert status is not None
    ruleset = play.game.manifest.ruleset
    setup = play.game.manifest.setup
    in_control = takes_turn(play.head, player)
    sealing = [b for b in status.pending if b.player == player and b.kind == "sealed"]
    notes: list[str] = []

    def edit(files: dict[str, bytes]) -> None:
        for brk in sealing:
            seal_allocation(play, player, files, brk.at, speed=rng.choice((0, 0, 1, 2)))
        if in_control and status.pending[0].kind == "roll":
            announce(play, player, files)
        if not in_control:
            notes.append("settles")
            return
        head = status.pending[0]
        notes.append(head.kind)
        firm = ruleset.parse_time(status.firm) if status.firm else ruleset.parse_time(head.at)
        mine = dict(play.data(f"players/{player}.yaml") or {})
        through = ruleset.parse_time(mine["through"]) if mine.get("through") else None
        if through is None or through < firm or rng.random() < 0.6:
            point = firm
            for _ in range(rng.choice((0, 1, 4, 12, 40, 200))):
                nxt = ruleset.next_step(setup, point)
                if nxt is None:
                    break
                point = nxt
            if through is None or point > through:
                mine["through"] = ruleset.format_time(point)
                notes.append(f"through {mine['through']}")
        if rng.random() < 0.4:
            mine["breaks"] = [dict(c) for c in rng.sample(CONDITIONS, rng.choice((0, 1, 2)))]
            notes.append(f"breaks {mine['breaks']}")
        replying = head.kind == "auction" and str(head.at).endswith(".activity")  # asked in a launch's auction
        launched = _launch(play, player, files, firm, ruleset.parse_time(mine["through"]), head, rng) \
            if head.kind != "clarify" and rng.random() < (0.6 if replying else 0.15) else None
        if launched is not None:
            entry, plan, target = launched
            mine["plans"] = [*mine.get("plans", []), plan]
            _add_entry(files, entry)
            chance.seal_secret(files, play.game_of(files), play.keys[player], player, "target",
                               json.dumps({"unit": plan["unit"], "target": target}).encode(), "end", plan["unit"])
            notes.append(f"launches {plan['unit']} at {entry['at']}" + (" in reply" if replying else ""))
        files[f"players/{player}.yaml"] = dump_mapping(mine).encode()
        if rng.random() < 0.5 and head.kind != "clarify":
            shot = _shot(play, player, files, firm, ruleset.parse_time(mine["through"]), head, rng)
            if shot is not None:
                _add_entry(files, shot)
                notes.append(f"fires {shot['do']['fire']['weapon']} at {shot['at']}")

    return edit, notes  # what the move did, filled in once it is made


def _shot(play: Play, player: str, files: dict[str, bytes], firm: Any, through: Any, head: Any,
          rng: random.Random) -> dict[str, Any] | None:
    """A shot of one of his weapons not fired yet this turn, at a fire step from the firm point to his horizon
    (at the firm step itself only when he is asked in its auction or may reply there)."""
    ruleset = play.game.manifest.ruleset
    setup = play.game.manifest.setup
    unit = next(u["id"] for u in setup["units"] if u["owner"] == player)
    targets = [u["id"] for u in setup["units"] if u["owner"] != player]
    entries = (yamlsafe.load(files[REPORT], REPORT).data or {}).get("entries", []) if REPORT in files else []
    used = {e["do"]["fire"]["weapon"] for e in entries if e.get("unit") == unit and "fire" in e.get("do", {})}
    free = [w for w in ("ph1", "ph2", "hv1") if w not in used]
    steps = []
    point = firm
    while point is not None and point <= through and len(steps) < 400:
        if ruleset.format_time(point).endswith(".fire") and (point > firm or head.kind in ("auction", "reply")):
            steps.append(point)
        point = ruleset.next_step(setup, point)
    if not free or not steps or not targets:
        return None
    at = rng.choice(steps[:6] if rng.random() < 0.7 else steps)
    return {"at": ruleset.format_time(at), "by": player, "unit": unit,
            "do": {"fire": {"weapon": rng.choice(free), "target": rng.choice(targets)}}}


def _add_entry(files: dict[str, bytes], entry: dict[str, Any]) -> None:
    old = (yamlsafe.load(files[REPORT], REPORT).data or {}).get("entries", []) if REPORT in files else []
    files[REPORT] = dump_report([*old, entry]).encode()


def _launch(play: Play, player: str, files: dict[str, bytes], firm: Any, through: Any, head: Any,
            rng: random.Random) -> tuple[dict[str, Any], dict[str, Any], str] | None:
    """A launch of his drone rack (once a game: the battle lasts one turn) at an activity step from the firm point
    to his horizon (at the firm step itself only when he is asked in its auction: a reply launch), with the plan
    that pursues its target by name and the target to seal in the same commit: (entry, plan, target)."""
    ruleset = play.game.manifest.ruleset
    setup = play.game.manifest.setup
    unit = next(u["id"] for u in setup["units"] if u["owner"] == player)
    name = "M" + unit[1:]  # one drone a ship
    state = play.head.stop.checkpoint.state if play.head.stop is not None else None
    targets = [u.id for u in state.units if u.owner != player and u.active and u.seeking is None] if state else []
    entries = (yamlsafe.load(files[REPORT], REPORT).data or {}).get("entries", []) if REPORT in files else []
    if not targets or any(e.get("unit") == unit and "launch" in e.get("do", {}) for e in entries) or \
            (state is not None and state.unit(name) is not None):
        return None
    steps = []
    point = firm
    while point is not None and point <= through and len(steps) < 6:
        if ruleset.format_time(point).endswith(".activity") and (point > firm or head.kind == "auction"):
            steps.append(point)
        point = ruleset.next_step(setup, point)
    if not steps:
        return None
    at = steps[0] if head.kind == "auction" else rng.choice(steps)
    target = rng.choice(targets)
    plan = {"unit": name, "from": ruleset.format_time(ruleset.next_step(setup, ruleset.next_step(setup, at))),
            "until": "1.32.move", "do": {"pursue": target}}
    entry = {"at": ruleset.format_time(at), "by": player, "unit": unit,
             "do": {"launch": {"weapon": "dr1", "as": name}}}
    return entry, plan, target


def sign_agreement(play: Play, player: str, kind: str, content: dict[str, Any]) -> list[Finding]:
    """`player` proposes an agreement of `kind` (or signs the open one of that kind), in one commit as `pbem agree`
    and `pbem sign` write it: with game.yaml as an amend or seat completed by it says, and the withheld marks of
    what a resign or nmr completed by it settles."""
    game = play.game
    open_one = next((a for a in game.agreements.values() if a.kind == kind and player not in a.signatures
                     and dict(a.content) == content and kind != kinds.RESIGN), None)
    if open_one is not None:
        raw = dict(open_one.raw)
        raw["signatures"] = {**open_one.signatures, player: signature(game, raw, play.keys[player])}
        path = open_one.file
    else:
        numbers = [int(a.id.rsplit("-", 1)[1]) for a in game.agreements.values() if a.id.startswith(player + "-")]
        agreement_id = f"{player}-{(max(numbers) + 1) if numbers else 1:04d}"
        raw = {"id": agreement_id, "kind": kind, "by": player, "content": content, "signatures": {}}
        raw["signatures"] = {player: signature(game, raw, play.keys[player])}
        path = f"agreements/{agreement_id}.yaml"

    def edit(files: dict[str, bytes]) -> None:
        files[path] = dump_agreement(raw)
        effect = agreement_effect(play.head, play.game_of(files), {path}, player)
        if effect is not None:
            files["game.yaml"] = dump_mapping(effect).encode()
        settled = settled_now(play.head, play.game_of(files))
        if settled:
            seats = seated(play.game_of(files), settled)
            chance.withhold(files, play.head.game, settlement_parts(play.head, settled, seats), settled)

    return play.commit(player, edit, f"{kind} {content} ({'signs' if open_one else 'proposes'})", settle=False)


def resigned(play: Play) -> frozenset[str]:
    return kinds.resigned(play.game.agreements, play.game.manifest.keys) if play.game.agreements \
        else frozenset()


def new_key(play: Play, folder: Path, seed: int) -> Identity:
    """A fresh key (for a replacement player), written as `pbem keygen` would."""
    from pbem.crypto.keys import PrivateKey, write_keypair

    path = folder / f"new-{seed}_ed25519"
    if not path.exists():
        write_keypair(path, PrivateKey.from_seed(seed.to_bytes(32, "big"), f"new-{seed}@pbem.test"))
    signer = signer_for(path)
    return Identity(path, signer, signer.public)


def active(play: Play) -> list[str]:
    return [p for p in play.game.manifest.players if p not in resigned(play)]


@dataclass
class Figures:
    """What the search ran and found, for the report."""

    games: int = 0
    commits: int = 0
    refused: int = 0
    agreements: int = 0
    kinds: set[str] = field(default_factory=set)  # the break kinds the games met
    stuck: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (f"{self.games} games, {self.commits} commits ({self.agreements} agreement commits, {self.refused} "
                f"random moves refused and replaced by the least move), break kinds met: "
                f"{', '.join(sorted(self.kinds))}; stuck states: {len(self.stuck)}")


def play_step(play: Play, rng: random.Random, figures: Figures, keys_folder: Path) -> None:
    """One random step of an honest table: mostly a move of a player who holds control or owes something;
    sometimes a resignation, an nmr against a player who owes something (signed by every other active player,
    one commit each) or a vacant seat given to a replacement."""
    status = play.head.status
    assert status is not None
    figures.kinds |= {b.kind for b in status.pending}
    roll = rng.random()
    before = play.commits
    if roll < 0.03 and len(active(play)) > 1:
        who = rng.choice(active(play))
        assert not sign_agreement(play, who, kinds.RESIGN, {}), "pbem resign must always land"
    elif roll < 0.06:
        from pbem.protocol.ways_out import consent_table

        table = consent_table(play.game, True, status)
        owing = sorted(p for p in table.owing if p in active(play))
        if owing:
            absent = rng.choice(owing)
            for signer in [p for p in active(play) if p != absent]:
                if sign_agreement(play, signer, kinds.NMR, {"player": absent}):
                    break  # e.g. he settled before the last signature: the nmr is moot
    elif roll < 0.08 and resigned(play):
        seat = rng.choice(sorted(resigned(play)))
        key = new_key(play, keys_folder, rng.randrange(1, 1 << 30))
        content = {"seat": seat, "key": key.public.to_line().split(" ", 2)[0] + " "
                   + key.public.to_line().split(" ", 2)[1], "why": "replacement"}
        for signer in [p for p in active(play) if p != seat]:
            if sign_agreement(play, signer, kinds.SEAT, content):
                break
        else:
            play.keys[seat] = key
    else:
        acting = play.acting()
        who = rng.choice(acting)
        edit, _notes = honest(play, who, rng)
        if play.commit(who, edit, "move: " + "; ".join(_notes)):
            figures.refused += 1
            assert not play.commit(who, lambda files: least(play, who, files), "least move"), \
                f"{who}'s least move is refused"
    made = play.log[len(play.log) - (play.commits - before):] if play.commits > before else []
    figures.agreements += sum(1 for line in made if line.endswith(("(proposes)", "(signs)")))
