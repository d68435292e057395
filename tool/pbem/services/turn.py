"""Taking a turn: `pbem status`, `pbem check`, `pbem yield` (DESIGN §4, §8; seed 000 §4)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from pbem.errors import ILLEGAL, Finding, PbemError
from pbem.text import first_control, terminal
from pbem.formats.writer import dump_mapping
from pbem.protocol.model import Status, Void
from pbem.crypto import seal
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping, dump_report
from pbem.protocol.model import CLARIFY, Status, Void
from pbem.crypto.keys import PrivateKey
from pbem.protocol import secrets
from pbem.protocol.dice import ESCROW
from pbem.protocol.serving import START_REF
from pbem.services import chance, errata, results, setup
from pbem.services.workspace import Identity, PlannedCommit, Workspace
from pbem.files.layout import STATUS
from pbem.protocol.control import expected_after, takes_turn, who
from pbem.protocol.model import OWED
from pbem.protocol.verified import Verified


@dataclass
class Outlook:
    """What `pbem status` and `pbem check` tell a player."""

    status: Status | None
    me: str | None
    findings: list[Finding] = field(default_factory=list)
    would_be: Status | None = None  # the status if the working tree were committed now
    plan: "YieldPlan | None" = None  # what `pbem yield` would commit (pbem check)
    voids: tuple[Void, ...] = ()  # my entries replay found void, most recent last (DESIGN §4.2)
    setup: str | None = None  # before the start: what I owe towards it (services.setup.before_start)
    positions: tuple[str, ...] = ()  # where the units stand where replay would stop (services/results.py)
    outcome: str | None = None  # who would have won, if the commit ends the game
    warnings: tuple[str, ...] = ()  # where my own orders lead, as far as I alone can see (protocol.ahead)

    def owes(self) -> str:
        """What *I* must do next, in one sentence with the command."""
        if self.status is None:
            return self.setup or ("the game has not started: claim a seat with `pbem join --as ID`, then "
                                  "`pbem start --first ID`")
        if self.status.over:
            return "the game is over"
        if self.me is None:
            return "your key holds no seat in this game"
        mine = [b for b in self.status.pending if b.player == self.me and b.kind in OWED]
        if mine:
            first = mine[0]
            how = {"sealed": "seal your input (`pbem orders orders.yaml` in Diplomacy, `pbem seal allocation "
                             "allocation.yaml` in a tactical game)",
                   "secret": "reveal it: `pbem yield` (in Diplomacy `pbem orders --reveal`)",
                   "dice": "`pbem yield` settles it",
                   "ready": "post your press, then `pbem ready`"}.get(first.kind, "`pbem yield`")
            return f"{first.why}: {how}; you need not hold control"
        from pbem.render.status_screen import simultaneous

        owing = simultaneous(self.status)
        if owing:
            return f"nothing: waiting for {', '.join(owing)} (all at once, in any order)"
        if self.status.control != self.me:
            return f"nothing: {self.status.control} holds control"
        why = self.status.pending[0]
        return (f"you hold control ({why.why}): edit players/{self.me}.yaml (through, breaks) and your entries "
                f"in report/ from {self.status.firm} on, check with `pbem check`, then `pbem yield -m NOTE`")


def whoami(ws: Workspace, me: Identity | None) -> str | None:
    """My seat (or the escrow) in this game, by my key."""
    head = ws.head()
    if head is None or me is None:
        return None
    return who(head.game, me.public)


def outlook(ws: Workspace, me: Identity | None) -> Outlook:
    head = ws.head()
    player = whoami(ws, me)
    if head is not None and not head.started:
        return Outlook(None, player, setup=setup.before_start(head.game, player))
    return Outlook(head.game.status if head else None, player, voids=voids_of(head, player),
                   warnings=warnings_of(head, player) + own_audit(head, me, player))


def own_audit(verified: Verified | None, me: Identity | None, player: str | None) -> tuple[str, ...]:
    """Seed §2.C: my allocations still sealed, opened with my own key and audited against what my units did so
    far (from the firm point's state): what one does not pay for now, its reveal at the end will be refused
    for. Only I can see inside, so only I am told, while my later orders can still keep within it."""
    audit = verified.game.manifest.ruleset.audit if verified is not None else None
    if verified is None or verified.stop is None or me is None or player is None or audit is None:
        return ()
    out: list[str] = []
    opened = chance.own_allocations(verified, me, player)
    state, setup = verified.stop.checkpoint.state, verified.game.manifest.setup
    for turn, (sid, value) in sorted(opened.items(), key=lambda item: item[1][0]):
        for reason in audit.audit_allocation(setup, audit.turn_record(state, player, turn), value):
            out.append(f"warning: your sealed allocation {sid} does not pay for what you did: {reason} (its "
                       "reveal at the end is refused for it: keep your orders within it)")
    # the same allocations read together across the battle so far (a hold of a weapon never armed, a draw on
    # batteries never charged): what the reveal at the end is refused for
    records = [audit.turn_record(state, player, t) for t in range(1, max(opened, default=0) + 1)]
    for turn, rule, reason in audit.audit_battle(setup, records, {t: v for t, (_, v) in opened.items()}):
        out.append(f"warning: your sealed allocation {opened[turn][0]} does not add up across the battle: {reason} "
                   f"[{rule}] (its reveal at the end is refused for it)")
    return tuple(out)


def answer_sealed_pursuit(verified: Verified, files: dict[str, bytes], me: Identity, player: str) -> list[str]:
    """Seed §2.C, §5.C: each special break on a sealed pursuit of my seeking weapons where replay stopped (no move
    pursues every possible target at once) is answered, in `files`, with the move that pursues its real target,
    read from my own sealed target (nobody else can see it): the entry a player would write, one of the break's
    options. Nothing for a weapon I already answered, or a break of another kind."""
    stop = verified.stop
    ruleset: Any = verified.game.manifest.ruleset
    answer = ruleset.seeking.sealed_pursuit_answer if ruleset.seeking is not None else None
    point = stop.checkpoint.point if stop is not None else None
    if stop is None or stop.over or answer is None or point is None:
        return []
    sealed_plans = {p.get("unit") for p in verified.game.inputs.of(player).plans
                    if "pursue_sealed" in (p.get("do") or {})}
    report = f"report/{ruleset.period_of(point)}.yaml"
    when = ruleset.format_time(point)
    entries = list((yamlsafe.load(files[report], report).data or {}).get("entries") or []) if report in files else []
    done = []
    for asked in stop.pending:
        sealed = verified.game.inputs.targets.get((player, asked.unit or ""))
        secret = verified.game.secrets.get(sealed.secret) if sealed is not None else None
        if asked.player != player or asked.kind != CLARIFY or asked.unit not in sealed_plans or secret is None \
                or any(e.get("at") == when and e.get("unit") == asked.unit for e in entries):
            continue
        try:
            target = (chance.own_value(secret, me) or {}).get("target")
        except (PbemError, ValueError, OSError):
            continue  # not openable with this key file: the player answers by hand
        move = answer(stop.checkpoint.state, point, asked.unit, target, asked.options)
        if move is not None:
            entries.append({"at": when, "by": player, "unit": asked.unit, "do": move})
            done.append(f"{asked.unit} pursues its sealed target at {when}: {move}")
    if done:
        files[report] = dump_report(entries).encode()
    return done


def warnings_of(verified: Verified | None, player: str | None) -> tuple[str, ...]:
    """Where `player`'s own orders lead from the firm point of `verified`, as far as he alone can see: a unit
    taken off the map, a shot that will be void, a seeking weapon launched with no way to reach its target
    (protocol.ahead). Nothing once the game is over."""
    if verified is None or verified.stop is None or verified.stop.over or player is None:
        return ()
    from pbem.protocol import ahead

    manifest = verified.game.manifest
    return tuple(ahead.warnings(manifest.ruleset, manifest.setup, verified.game.inputs, verified.stop.checkpoint,
                                player))


SHOWN_VOIDS = 5


def voids_of(head: Verified | None, player: str | None) -> tuple[Void, ...]:
    """`player`'s entries that replay found void so far (DESIGN §4.2 "Entries and time"): what others did after
    he wrote them made them impossible. The game went on without them."""
    if head is None or head.stop is None or player is None:
        return ()
    return tuple(v for v in head.stop.checkpoint.voids if v.player == player)


def void_lines(view: Outlook) -> list[str]:
    """`pbem status` lines for my void entries: the latest few, and how to see them all."""
    lines = [f"void: {v.text()}" for v in view.voids[-SHOWN_VOIDS:]]
    if len(view.voids) > SHOWN_VOIDS:
        lines.insert(0, f"void: {len(view.voids) - SHOWN_VOIDS} earlier entries of yours are void too (pbem log)")
    return lines


def withheld_lines(ws: Workspace) -> list[str]:
    """`pbem status` lines for what an nmr, a resign or a seat change settled (DESIGN §4.8): each withheld dice part and secret,
    what became of it and the agreement that settled it."""
    head = ws.head()
    return [] if head is None else chance.withheld_listing(head.game)


def errata_lines(ws: Workspace) -> list[str]:
    """The errata not applied yet at HEAD, each with who still has to sign (DESIGN §4.8), for `pbem status`."""
    head = ws.head()
    return [] if head is None else errata.listing(head.game, with_applied=False)


TURN_FILES = ("players/", "report/")  # what only a turn changes: these may wait in the working tree for it
# what refuses a turn's files only because it is not his turn yet (a batch of his own is announced in his turn)
WAITING = {"signature.not-in-control", "dice.bad-batch"}


def _announced(base: dict[str, bytes], path: str, player: str) -> bool:
    """Whether `path` is a batch of `player`'s own that `pbem roll` announced and no commit holds yet: it waits
    for his turn like his entries (DESIGN §5: dice are announced in the firer's turn)."""
    return path.startswith(f"dice/{player}-") and path not in base


@dataclass
class YieldPlan:
    """What `pbem yield` would commit now, worked out and judged, nothing written: `pbem check` shows it,
    `pbem yield` writes it. One rule for what I owe plus my own edits (docs/protocol.md, "What pbem yield
    commits"): one commit of my edits with whatever I owe settled in it, when that is legal; else what I owe
    is settled first, in a commit of its own, and my edits follow in a second commit if they are legal then;
    if they must wait for my turn (someone else acts first), they stay in the working tree, uncommitted, and
    `waiting` says why."""

    player: str
    commits: list["_Plan"] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # why nothing would be committed
    kept: list[str] = field(default_factory=list)  # edited paths left in the working tree (they wait)
    waiting: str = ""  # why they wait
    worktree: dict[str, bytes] = field(default_factory=dict)  # the working tree's game files, as read
    judged: Verified | None = None  # the working tree as one commit, judged (shown by check even when refused)

    @property
    def status(self) -> Status | None:
        return self.commits[-1].status if self.commits else None

    def lines(self) -> list[str]:
        """What would be committed, one line per commit, and what would wait."""
        out = [f"commit {i}: {c.commit.message.splitlines()[0]}" for i, c in enumerate(self.commits, 1)]
        if self.kept:
            out.append(f"kept in your working tree, uncommitted: {', '.join(self.kept)} ({self.waiting}; "
                       "`pbem yield` again when it is your turn)")
        return out


def plan_yield(ws: Workspace, me: Identity, note: str = "") -> YieldPlan:
    """The commits `pbem yield -m NOTE` would make from the working tree now (see YieldPlan), judged exactly
    as the verifier will. Before the start: the founder's or a seated player's setup edits (game.yaml) and
    dice owed for who starts, in one commit."""
    check_note(note)
    head = ws.head()
    if head is None:
        raise PbemError("setup.not-started", "this repository has no game yet (pbem init)")
    files = ws.worktree_files()
    player = whoami(ws, me)
    if not head.started:
        return _plan_setup(ws, head, files, me, player)
    if player is None:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game", exit_code=ILLEGAL)
    plan = YieldPlan(player, worktree=files)
    base = ws.head_files()
    files = dict(files)
    answer_sealed_pursuit(head, files, me, player)
    edited = _edited(base, files)
    one = _plan_turn(ws, head, base, files, me, player, note)
    if _owes(head, player) and edited and one.findings:
        first = _plan_turn(ws, head, base, dict(base), me, player, "")
        if first.settled and not first.findings and first.verified is not None:
            merged = dict(first.commit.files)
            for path in edited:
                if path in files:
                    merged[path] = files[path]
                else:
                    merged.pop(path, None)
            if not _edited(first.commit.files, merged):
                plan.commits = [first]  # my edits were what settling writes anyway
                return plan
            second = _plan_turn(ws, first.verified, first.commit.files, merged, me, player, note)
            settled = _edited(base, first.commit.files)
            if not second.findings:
                plan.commits = [first, second]
            elif (all(f.rule in WAITING for f in second.findings)
                  and all(p.startswith(TURN_FILES) or _announced(base, p, player) for p in edited)
                  and not edited & settled):
                # only a turn's own files (his players file, his entries) can wait for his turn: anything else
                # that is refused here is refused whole, with what the one commit would have been refused for
                after = first.status
                assert after is not None  # `_plan_turn` computes the status of every commit after the start
                held = after.pending[0] if after.pending else None
                plan.commits, plan.kept = [first], sorted(edited)
                plan.waiting = (f"after it {after.control} acts first ({held.why})" if held is not None
                                else "the game waits for others first")
            else:
                plan.findings = one.findings
            return plan
    plan.judged = one.verified
    if one.findings:
        plan.findings = one.findings
    else:
        plan.commits = [one]
    return plan


def _plan_setup(ws: Workspace, head: Verified, files: dict[str, bytes], me: Identity,
                player: str | None) -> YieldPlan:
    """Before the start: dice owed for who starts, and setup edits (game.yaml by the founder or a seated
    player, e.g. `allocation: sealed`), one commit, judged as the verifier will."""
    founder = head.founder is not None and head.founder.same_key(me.public)
    if player is None and not founder:
        raise PbemError("signature.unknown-key", "your key holds no seat in this game: claim one with "
                        "`pbem join --as ID`", exit_code=ILLEGAL)
    who_ = player or "founder"
    plan = YieldPlan(who_, worktree=dict(files))
    files = dict(files)
    done: list[str] = []
    if player is not None:  # the founder without a seat owes no dice
        for _ in range(4):  # a commitment may make the contribution due at once
            step = chance.settle_dice(files, ws.game_of(files), me, player)
            if not step:
                break
            done += step
    if not _edited(ws.head_files(), files):
        raise PbemError("setup.not-started", "the game has not started yet (pbem start --first ID) and you have "
                        "nothing to commit: no dice owed, no edits")
    changed = sorted(_edited(ws.head_files(), files))
    summary = "; ".join(done) or "setup: " + ", ".join(changed)
    findings, verified = ws.judge(files, me)
    planned = _Plan(PlannedCommit(files, f"{who_}: {summary}", me), None, findings, verified, done)
    if findings:
        plan.findings = findings
    else:
        plan.commits = [planned]
    return plan


def check(ws: Workspace, me: Identity) -> Outlook:
    """The working tree judged as `pbem yield` would commit it now (the same plan: what I owe settled first,
    my edits after), with the status it would get and what would wait."""
    head = ws.head()
    plan = plan_yield(ws, me)
    status = head.game.status if head is not None else None
    last = plan.commits[-1].verified if plan.commits else plan.judged
    shown = last if last is not None and last.stop is not None else None
    player = whoami(ws, me)
    return Outlook(status, player, plan.findings, plan.status, plan, positions=tuple(results.positions(shown)),
                   outcome=results.outcome(shown), warnings=warnings_of(shown, player) + own_audit(shown, me, player))


def check_note(note: str) -> None:
    """A yield note is data every player reads, in a terminal too: newlines and tabs are fine, a control
    character (ESC, carriage return, C1, a bidi override) is refused before anything is done (rule
    `note.control-character`, a usage error). The status schema refuses the same in a note written by hand."""
    bad = first_control(note, lines=True)
    if bad is not None:
        raise PbemError("note.control-character", f"the note holds the control character U+{ord(bad):04X} "
                        f"at {note.index(bad) + 1}: {terminal(note[:60])}",
                        hint="write the note as plain text (newlines are fine)")


def yield_turn(ws: Workspace, me: Identity, note: str = "") -> tuple[str, Status | None]:
    """Settle what I owe (dice contributions and reveals, secrets due), write status.yaml as replay computes it
    and commit signed, as `plan_yield` works it out; nothing changes if the result is illegal. Edits that must
    wait for my turn stay in the working tree."""
    return write_yield(ws, plan_yield(ws, me, note))


def write_yield(ws: Workspace, plan: YieldPlan) -> tuple[str, Status | None]:
    """Write a plan of `plan_yield` (refused whole, nothing written, when it has findings)."""
    if plan.findings:
        raise PbemError.from_finding(plan.findings[0], exit_code=ILLEGAL)
    oid = ws.write_commits([c.commit for c in plan.commits])
    if plan.kept:
        # the commit was checked out (a hard reset): put the edits that wait back where they were
        for path in plan.kept:
            if path in plan.worktree:
                ws.write_files({path: plan.worktree[path]})
            elif (ws.root / path).exists():
                (ws.root / path).unlink()
    return oid, plan.status


def _edited(base: Mapping[str, bytes], files: Mapping[str, bytes]) -> set[str]:
    """Paths whose content differs (status.yaml aside: it is computed)."""
    return {p for p in set(base) | set(files) if p != STATUS and base.get(p) != files.get(p)}


@dataclass
class _Plan:
    """A commit worked out and judged, not yet written."""

    commit: PlannedCommit
    status: Status | None  # None before the start
    findings: list
    verified: Verified | None
    settled: list[str] = field(default_factory=list)  # what it settles (dice, reveals)


def _plan_turn(ws: Workspace, prev: Verified, prev_files: Mapping[str, bytes], files: Mapping[str, bytes],
               me: Identity, player: str, note: str) -> _Plan:
    """Settle what `player` owes in `files`, write the computed status, judge the result against `prev`."""
    files = dict(files)
    done = settle(ws, prev, files, me, player)
    status = expected_after(prev, ws.game_of(files), player, note)[1]
    files[STATUS] = dump_mapping(status.to_data()).encode()
    summary = note or "; ".join(done) or "yield"
    message = f"{player}: {summary}\n\nnext: {status.control or 'game over'}"
    if status.pending:
        message += f" ({status.pending[0].why})"
    if done and note:
        message += "\n" + "\n".join(done)
    findings, verified = ws.judge_after(prev, prev_files, files, me)
    return _Plan(PlannedCommit(files, message, me), status, findings, verified, done)


def _owes(head: Verified, player: str) -> bool:
    return head.status is not None and any(b.player == player and b.kind in OWED for b in head.status.pending)


def settle(ws: Workspace, head: Verified, files: dict[str, bytes], me: Identity, player: str) -> list[str]:
    """Settle, in `files`, everything `player` owes now or will owe once this commit is replayed: his dice
    contributions and reveals, and the reveals of his secrets that come due (DESIGN §5, §6)."""
    done: list[str] = []
    for _ in range(8):  # each round may make more due (a reveal completes a batch); a few rounds suffice
        game = ws.game_of(files)
        stop, status = expected_after(head, game, player)
        if not any(b.player == player and b.kind in ("dice", "secret") for b in status.pending):
            break
        step = chance.settle_dice(files, game, me, player)
        mine = [s.id for s in secrets.due(game.secrets, game.manifest.ruleset.parse_time, stop.checkpoint.point,
                                          stop.over) if s.owner == player]
        # a sealed step's input is asked for once everyone has sealed (DESIGN §4.7): replay names the step
        steps = {b.at for b in status.pending if b.player == player and b.kind == "secret"}
        units = {b.unit for b in status.pending if b.player == player and b.kind == "secret" and b.unit}
        mine += [s.id for s in game.secrets.values()
                 if s.owner == player and not s.revealed and s.id not in mine
                 and (s.raw.get("step") in steps or (s.raw["kind"] == "target" and s.raw.get("concerns") in units))]
        # a secret sealed in this very commit is not revealed by it (that would be writing it in the clear)
        mine = [sid for sid in mine if sid in head.game.secrets]
        # a step that opens a part alone (a turn's speeds) asks for that part; the rest waits for the end
        part = [sid for sid in mine if not stop.over and "part_commit" in game.secrets[sid].raw
                and not game.secrets[sid].part_opened and game.secrets[sid].raw.get("step") in steps]
        sealing = game.manifest.ruleset.sealing
        step += [f"opened the {sealing.part_name if sealing is not None else 'part'} of {sid}: "
                 f"{json.dumps(chance.open_part(files, game, me, player, sid))}" for sid in part]
        # one kept sealed until the battle ends is opened once a commit before this one ended it (it is judged
        # so: secret.early-reveal)
        until_end = sealing.sealed_until_end if sealing is not None else frozenset()
        over = head.stop is not None and head.stop.over
        step += chance.due_reveals(files, game, me, player, [
            sid for sid in mine if sid not in part
            and (over or game.secrets[sid].raw["kind"] not in until_end or "step" not in game.secrets[sid].raw)])
        if not step:
            break
        done += step
    return done


def _computed(ws: Workspace, head: Verified, files: dict[str, bytes], me: Identity, player: str | None,
              note: str = "") -> Status | None:
    if player is None:
        return None
    game = ws.game_of(files)
    return expected_after(head, game, player, note)[1]


def check_roll(ws: Workspace, files: dict[str, bytes], player: str, refs: list[str]) -> None:
    """Refuse at once, as `pbem roll`, what the verifier refuses when the batch is yielded (DESIGN §5 "Binding",
    "Who rolls"): a ref nothing owes once my working tree is committed (`dice.unbound-ref`: a mistyped ref, a
    shot not declared yet, a step resolved already), and a ref whose die another player rolls
    (`dice.wrong-roller`: the firer rolls for his own shot). The start's dice are judged by `pbem start`."""
    head = ws.head()
    refs = [r for r in refs if not r.startswith(START_REF)]
    if head is None or not head.started or head.stop is None or not refs:
        return
    game = ws.game_of(files)
    stop, _status = expected_after(head, game, player)
    owed = list(dict.fromkeys(stop.dice_refs))
    dice = game.manifest.ruleset.dice
    for ref in refs:
        if ref not in owed:
            raise PbemError("dice.unbound-ref", f"--ref {ref}: nothing owes a die for it now (dice are rolled for "
                            "a declared shot of the step being resolved)", exit_code=ILLEGAL,
                            hint=("owed now: " + ", ".join(owed)) if owed else "declare the shot first (an entry "
                            "{fire: {weapon, target}} at its fire step), then roll")
        firer = dice.dice_roller(stop.checkpoint.state, ref) if dice is not None else None
        if firer is not None and firer != player:
            raise PbemError("dice.wrong-roller", f"--ref {ref}: that die is {firer}'s to roll, not yours: only the "
                            "player whose action a die resolves announces it", exit_code=ILLEGAL,
                            hint=f"{firer} rolls it (`pbem roll … --ref {ref}`); you contribute with `pbem yield`")


def commit_escrow(ws: Workspace, me: Identity, key: PrivateKey) -> list[str]:
    """As the dice escrow: sign every open escrow batch at HEAD, write the results (and the status that
    follows), commit signed by the escrow key. Only HEAD's files are used, never a working tree's edits."""
    head = ws.head()
    if head is None:
        raise PbemError("setup.not-started", "this repository has no game yet (pbem init)")
    files = ws.head_files()
    done = chance.escrow_sign(files, ws.game_of(files), key)
    if not done:
        return []
    if head.started:
        status = expected_after(head, ws.game_of(files), ESCROW)[1]
        files[STATUS] = dump_mapping(status.to_data()).encode()
    ws.commit(files, me, "escrow: " + "; ".join(done))
    return done
