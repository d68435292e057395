"""Dice batches in the protocol (DESIGN §5, seed 000 §2.D): who owes what, and what one commit may change.

A batch is announced before anything about its rolls can be known. In commit-reveal mode every other player
then owes a contribution (at a table of three or more, first a commitment to it, and the contribution itself
once every commitment is in, so that no coalition can choose its contribution knowing the honest ones), and
once all are in the roller owes his reveal; in escrow mode the escrow owes its signature. While anything is owed
the game waits: those obligations come before the game's own breaks.

A batch is bound to the rules (DESIGN §5 "Binding", protocol.dice_binding): it rolls only for refs owed now, with
the ruleset's die for each, one standing batch per ref, and a scored batch is never voided.

A part owed and never given is settled by the agreement that found its player absent (nmr) or let him go
(resign), in the commit that completes it (`withheld`, `settlement_findings`): a withheld contribution is left out
of the seed (the die is made from the others'), a withheld reveal loses the roll (the ruleset scores it as a miss,
never as a re-roll); what was withheld is never given later (`dice.withheld`).

Results are "knowable" as soon as someone could compute them: in commit-reveal mode when every contribution is
in (the roller knows his own secret), in escrow mode when the escrow has signed. From then on a batch may be
voided only with every other player's signature of the void (a roller may never choose to void after seeing
results); before, the roller alone may void it, with a reason, and re-roll it whole.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

import nacl.exceptions
import nacl.signing

from pbem.crypto import dice as dice_crypto
from pbem.crypto import sshsig
from pbem.crypto.keys import PublicKey
from pbem.errors import Finding, PbemError
from pbem.formats.canonical import dumps as canonical
from pbem.protocol.ids import author_of
from pbem.protocol.model import Break
from pbem.rulesets.base import Withheld

ESCROW = "escrow"  # the pseudo-seat that owes escrow signatures; no player may take this id
DICE = "dice"
ANNOUNCED = ("id", "roller", "mode", "sides", "rolls", "at", "replaces", "contributors", "commit", "owner_box")
VOID_NAMESPACE = "pbem"
# the field of a batch file each rule is about: the line a finding names (DESIGN §11: file, line and rule)
RULE_FIELD = {"dice.bad-results": "results", "dice.bad-reveal": "reveal", "dice.bad-contribution": "contributions",
              "ownership.id-author": "id",
              "dice.bad-escrow": "escrow", "dice.bad-void": "void", "dice.bad-withheld": "withheld"}


@dataclass(frozen=True)
class Batch:
    """One dice batch as read from dice/<id>.yaml."""

    raw: Mapping[str, Any] = field(repr=False)
    file: str = ""
    lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)  # top-level field -> line

    @property
    def id(self) -> str:
        return self.raw["id"]

    def line_of(self, key: str | None) -> int | None:
        """The line of a top-level field of the batch file, if it was read from one and has it."""
        return self.lines.get(key) if key is not None else None

    @property
    def roller(self) -> str:
        return self.raw["roller"]

    @property
    def mode(self) -> str:
        return self.raw["mode"]

    @property
    def sides(self) -> int:
        return self.raw["sides"]

    @property
    def each_sides(self) -> list[int]:
        """Each roll's die, in roll order: the batch's `sides`, or a roll's own (the start's table order)."""
        return [purpose.get("sides", self.sides) for purpose in self.raw["rolls"]]

    def sides_of(self, ref: str) -> int:
        """The die of the (first) roll for `ref`."""
        return next(p.get("sides", self.sides) for p in self.raw["rolls"] if p.get("ref") == ref)

    @property
    def contributions(self) -> Mapping[str, str]:
        return self.raw.get("contributions") or {}

    @property
    def contribution_commits(self) -> Mapping[str, str]:
        return self.raw.get("contribution_commits") or {}

    @property
    def withheld(self) -> Mapping[str, str]:
        """Player -> the agreement (nmr, resign or seat) that settled the part he owed and never gave (DESIGN §4.8)."""
        return self.raw.get("withheld") or {}

    def lost(self, seat_changes: Collection[str] = ()) -> Withheld | None:
        """The roller's withheld reveal, if an agreement settled it (an nmr, his resign, or one of `seat_changes`, the
        ids of the game's `seat` agreements): the batch's rolls are lost (never rolled)."""
        agreement = self.withheld.get(self.roller)
        if agreement is None:
            return None
        # a resign is its own player's agreement; an nmr is never signed, let alone proposed, by its subject
        kind = "seat" if agreement in seat_changes else "resign" if author_of(agreement) == self.roller else "nmr"
        return Withheld(self.roller, agreement, kind)

    def contributors(self, players: Sequence[str]) -> list[str]:
        """The other players whose contributions enter the seed, in table order: all but the withheld ones."""
        return [p for p in self.others(players) if p not in self.withheld]

    def committed_first(self, players: Sequence[str]) -> bool:
        """Whether contributions are committed before any is revealed: commit-reveal dice at a table where two
        or more players contribute (DESIGN §5 binding; docs/dice.md "Three or more players")."""
        return self.mode == "commit-reveal" and len(self.others(players)) >= 2

    def all_committed(self, players: Sequence[str]) -> bool:
        """Whether every contributor's commitment is in (always, where contributions are not committed first)."""
        return not self.committed_first(players) or all(p in self.contribution_commits
                                                        for p in self.contributors(players))

    @property
    def results(self) -> list[int] | None:
        return self.raw.get("results")

    @property
    def voided(self) -> bool:
        return "void" in self.raw

    @property
    def refs(self) -> list[str]:
        """The refs this batch rolls for, in roll order (a roll without a ref is a table die the rules never
        read)."""
        return [purpose["ref"] for purpose in self.raw["rolls"] if "ref" in purpose]

    def announcement(self) -> bytes:
        """The canonical announced content (what a void's co-signatures cover)."""
        return canonical({k: self.raw[k] for k in ("id", "roller", "mode", "sides", "rolls", "at", "replaces",
                                                   "contributors") if k in self.raw})

    def others(self, players: Sequence[str]) -> list[str]:
        """The players other than the roller, in table order (the order contributions enter the seed): those the
        batch names as its `contributors` (the seats still playing when it was announced, written where a seat
        had resigned: protocol.dice_contributors), else all."""
        named = self.raw.get("contributors")
        return [p for p in players if p != self.roller and (named is None or p in named)]

    def fixed(self, players: Sequence[str]) -> bool:
        """Whether the results are fixed, so that some players together could know them before the others: once
        every contribution (at a table of three or more, every commitment) is in. From then on the roller alone
        may not void the batch: he or an accomplice might have seen the dice (seed §2.D)."""
        if self.committed_first(players):
            return self.all_committed(players)
        return self.knowable(players)

    def knowable(self, players: Sequence[str]) -> bool:
        """Whether somebody could compute the results now."""
        if self.mode == "escrow":
            return "escrow" in self.raw
        return all(p in self.contributions for p in self.contributors(players))


def void_message(game_id: str, batch: Batch, reason: str) -> bytes:
    """What every other player signs to agree to a void once results were knowable."""
    digest = hashlib.sha256(batch.announcement()).digest()
    return b"pbem-void-v1" + game_id.encode() + b"\0" + batch.id.encode() + b"\0" + digest + b"\0" + reason.encode()


def derive(game_id: str, players: Sequence[str], batch: Batch) -> list[int] | None:
    """The batch's rolls as DESIGN §5 defines them, or None while they cannot be derived yet."""
    count = len(batch.raw["rolls"])
    if batch.mode == "escrow":
        if "escrow" not in batch.raw:
            return None
        seed = dice_crypto.seed_escrow(base64.b64decode(batch.raw["escrow"]))
    else:
        if "reveal" not in batch.raw or not batch.knowable(players):
            return None  # a reveal before every contribution (dice.bad-reveal) derives nothing
        secret = bytes.fromhex(batch.raw["reveal"])
        # a withheld contribution is left out: the seed takes the others' in table order (docs/dice.md)
        parts = [bytes.fromhex(batch.contributions[p]) for p in batch.contributors(players)]
        seed = dice_crypto.seed_commit_reveal(game_id, batch.id, secret, parts)
    each = batch.each_sides
    if all(sides == batch.sides for sides in each):
        return dice_crypto.rolls(seed, batch.sides, count)
    return [dice_crypto.roll(seed, sides, j) for j, sides in enumerate(each)]  # roll j keeps its own die


def owed(players: Sequence[str], batches: Sequence[Batch], at: str | None) -> list[Break]:
    """What is owed for open batches, in batch order: contributions (table order after the roller), then the
    roller's reveal; or the escrow's signature (DESIGN §4.2 point 4)."""
    out: list[Break] = []
    for batch in sorted(batches, key=lambda b: b.id):
        if batch.voided or batch.results is not None or batch.lost() is not None:
            continue
        if batch.mode == "escrow":
            out.append(Break(ESCROW, at, DICE, f"escrow signature owed for dice {batch.id}"))
            continue
        seats = list(players)
        start = seats.index(batch.roller) + 1 if batch.roller in seats else 0
        around = seats[start:] + seats[:start]
        # settled by an agreement, or not playing when it was announced: owes nothing
        around = [p for p in around if p not in batch.withheld and (p == batch.roller or p in batch.others(players))]
        uncommitted = [p for p in around if p != batch.roller and p not in batch.contribution_commits]
        if batch.committed_first(players) and uncommitted:
            for player in uncommitted:
                out.append(Break(player, at, DICE, f"contribution commitment owed to dice {batch.id} of "
                                 f"{batch.roller}"))
            continue
        missing = [p for p in around if p != batch.roller and p not in batch.contributions]
        for player in missing:
            out.append(Break(player, at, DICE, f"contribution owed to dice {batch.id} of {batch.roller}"))
        if not missing:
            out.append(Break(batch.roller, at, DICE, f"reveal owed for dice {batch.id}"))
    return out


def batch_findings(
    game_id: str,
    players: Sequence[str],
    keys: Mapping[str, PublicKey],
    escrow_key: PublicKey | None,
    before: Mapping[str, Batch],
    after: Mapping[str, Batch],
    committer: str,
    settled: Mapping[str, str] | None = None,
    seats: Collection[str] = (),
    absent: Collection[str] = (),
) -> list[Finding]:
    """Every rule a commit's changes to dice/ must keep (DESIGN §5); `committer` is a player id or ESCROW.
    `settled`: player -> the nmr, resign or seat (`seats`: those players) agreement this commit completes (§4.8);
    `absent`: the player an nmr this commit completes found absent (with his seat: `how_settled`)."""
    findings: list[Finding] = []
    for batch_id in sorted(set(before) | set(after)):
        old, new = before.get(batch_id), after.get(batch_id)
        if new is None:
            findings.append(_f("dice.changed", f"dice batch {batch_id} was removed", old.file if old else None))
            continue
        if old is not None and old.raw == new.raw:
            continue
        try:
            findings.extend(f.at(line=new.line_of(RULE_FIELD.get(f.rule)))
                            for f in _changes(game_id, players, keys, escrow_key, old, new, committer,
                                              settled or {}, seats, absent))
        except PbemError as exc:  # malformed hex or base64 that slipped past the schema
            findings.append(exc.finding.at(file=new.file))
    return findings


def _changes(game_id: str, players: Sequence[str], keys: Mapping[str, PublicKey], escrow_key: PublicKey | None,
             old: Batch | None, new: Batch, committer: str, settled: Mapping[str, str],
             seats: Collection[str] = (), absent: Collection[str] = ()) -> list[Finding]:
    f = new.file
    raw = new.raw
    out: list[Finding] = []
    if f != f"dice/{new.id}.yaml":
        out.append(_f("dice.bad-batch", f"batch {new.id} must live in dice/{new.id}.yaml", f))
    if old is None:
        if author_of(new.id) != new.roller:
            out.append(Finding("ownership.id-author", f"batch {new.id} is rolled by {new.roller}: its id must "
                               f"carry its roller ({new.roller}-NNNN)", file=f, line=new.line_of("id")))
        if committer != new.roller:
            out.append(_f("dice.bad-batch", f"{committer} announced a batch with roller {new.roller}", f))
        if new.roller not in players:
            out.append(_f("dice.bad-batch", f"roller {new.roller!r} is not a player", f))
        extra = sorted(k for k in set(raw) - set(ANNOUNCED) if not k.startswith("x-"))
        if extra:
            out.append(_f("dice.bad-batch", f"a new batch is only announced (no {', '.join(extra)} yet): nothing "
                          "about its rolls may be known when it is announced", f))
        if new.mode == "commit-reveal" and not ("commit" in raw and "owner_box" in raw):
            out.append(_f("dice.bad-batch", "a commit-reveal batch needs the roller's commit and owner_box", f))
        if new.mode == "escrow" and escrow_key is None:
            out.append(_f("dice.bad-batch", "escrow dice need dice.escrow_key in game.yaml", f))
        if new.mode == "escrow" and ("commit" in raw or "owner_box" in raw):
            out.append(_f("dice.bad-batch", "an escrow batch has no roller's commitment", f))
        return out
    changed = [k for k in ANNOUNCED if old.raw.get(k) != raw.get(k)]
    if changed and (committer != new.roller or old.contributions or old.contribution_commits
                    or old.knowable(players) or {"id", "roller", "mode"} & set(changed)):
        out.append(_f("dice.changed", f"batch {new.id}: {', '.join(changed)} changed; only the roller may correct "
                      "an announcement, and only before any contribution", f))
    if old.voided and old.raw.get("void") != raw.get("void"):
        out.append(_f("dice.changed", f"batch {new.id}: a void cannot be changed or withdrawn", f))
    for key in ("reveal", "escrow", "results"):
        if key in old.raw and old.raw.get(key) != raw.get(key):
            out.append(_f("dice.changed", f"batch {new.id}: {key} cannot change once written", f))
    withheld = _withheld(players, old, new, settled, seats, absent)
    if withheld:
        return out + withheld
    out.extend(_contributions(players, old, new, committer))
    out.extend(_reveal(game_id, players, escrow_key, old, new, committer))
    out.extend(_void(game_id, players, keys, old, new, committer))
    return out


def owes(players: Sequence[str], batch: Batch, player: str) -> bool:
    """Whether `player` owes something to `batch` now: a contribution, its commitment, or the roller's reveal."""
    return any(b.player == player for b in owed(players, [batch], None))


def involved(players: Sequence[str], batch: Batch, player: str) -> bool:
    """Whether `player` still has a part to give in open `batch`, owed now or later: a resign settles these."""
    return _open_to(batch, player) and (player == batch.roller or (player in batch.others(players)
                                                                  and player not in batch.contributions))


def sealed(players: Sequence[str], batch: Batch, player: str) -> bool:
    """Whether `player`'s key sealed a part of open `batch` not opened yet (his reveal as its roller, a contribution
    he committed to): a seat given to a new key settles these; what the old key never committed to, the new gives."""
    return _open_to(batch, player) and (player == batch.roller or (player in batch.contribution_commits
                                                                  and player not in batch.contributions))


def _open_to(batch: Batch, player: str) -> bool:
    """Whether commit-reveal `batch` still waits for parts and `player`'s was not settled by an agreement."""
    return not (batch.voided or batch.results is not None or batch.mode != "commit-reveal"
                or player in batch.withheld or batch.lost() is not None)


NMR_SETTLES, RESIGN_SETTLES, SEAT_SETTLES, SEAT_AND_NMR = "nmr", "resign", "seat", "seat+nmr"


def how_settled(player: str, agreement: str, seats: Collection[str] = (), absent: Collection[str] = ()) -> str:
    """How `agreement` settles `player`'s parts: his seat given to a new key (`seats`), his resign, or an nmr.
    An nmr against him completed in the same commit as his seat (`absent`) yields to the seat (its id marks the
    parts), and both settle: what the old key sealed and what he owes now (SEAT_AND_NMR), so nothing of the old
    key is waited on and the nmr's effect is not lost."""
    if player in seats:
        return SEAT_AND_NMR if player in absent else SEAT_SETTLES
    return RESIGN_SETTLES if author_of(agreement) == player else NMR_SETTLES


def part_due(players: Sequence[str], batch: Batch, player: str, how: str) -> bool:
    """Whether an agreement settling `player` as `how` (`how_settled`) settles his part of `batch` (DESIGN §4.8)."""
    if how in (SEAT_SETTLES, SEAT_AND_NMR):
        return sealed(players, batch, player) or (how == SEAT_AND_NMR and owes(players, batch, player))
    return involved(players, batch, player) if how == RESIGN_SETTLES else owes(players, batch, player)


def _withheld(players: Sequence[str], old: Batch, new: Batch, settled: Mapping[str, str],
              seats: Collection[str] = (), absent: Collection[str] = ()) -> list[Finding]:
    """DESIGN §4.8: a `withheld` mark is written only by the commit that completes the nmr or resign agreement
    settling that player's part (`settled`), only where he had one, and never changes (dice.bad-withheld); what
    was withheld is never given afterwards, nor is the batch voided and rolled again (dice.withheld)."""
    out = []
    for player, agreement in sorted(new.withheld.items()):
        if old.withheld.get(player) == agreement:
            continue
        if player in old.withheld:
            out.append(_f("dice.bad-withheld", f"batch {new.id}: {player}'s withheld part cannot change once "
                          "settled", new.file))
        elif settled.get(player) != agreement:
            out.append(_f("dice.bad-withheld", f"batch {new.id} marks {player}'s part withheld by {agreement}, "
                          "which this commit does not complete (only the last signature of an nmr against him, "
                          "or his own resign, settles it)", new.file))
        elif not part_due(players, old, player, how_settled(player, agreement, seats, absent)):
            # a resign settles every part he still had to give; an nmr only what he owes now; a seat change
            # what the old key sealed
            out.append(_f("dice.bad-withheld", f"batch {new.id}: {player} owes it nothing now to withhold",
                          new.file))
    for player in sorted(set(old.withheld) - set(new.withheld)):
        out.append(_f("dice.bad-withheld", f"batch {new.id}: {player}'s withheld part was unmarked", new.file))
    late = [p for p in old.withheld if old.contributions.get(p) != new.contributions.get(p)
            or old.contribution_commits.get(p) != new.contribution_commits.get(p)]
    for player in late:
        out.append(_f("dice.withheld", f"batch {new.id}: {player}'s part was settled by {old.withheld[player]} "
                      "(withheld): it is firm, and nothing of his is added to this batch afterwards", new.file))
    if old.lost() is not None:
        for key in ("reveal", "results", "void", "contributions", "contribution_commits"):
            if new.raw.get(key) != old.raw.get(key):
                out.append(_f("dice.withheld", f"batch {new.id}: {new.roller}'s reveal was settled by "
                              f"{old.withheld[new.roller]} (withheld): its rolls are lost, firm, and never "
                              f"revealed, rolled or voided afterwards (no {key})", new.file))
    return out


def settlement_findings(players: Sequence[str], before: Mapping[str, Batch], after: Mapping[str, Batch],
                        settled: Mapping[str, str], resigned: Collection[str],
                        seats: Collection[str] = (), absent: Collection[str] = ()) -> list[Finding]:
    """DESIGN §4.8: the commit completing an nmr marks every part of its batches the absent player owes now as
    withheld by it; the one completing a resign, every part its player still had to give (he never will).
    A seat given to a new key (`seats`), every part its old key sealed and never opened (`sealed`). A part left
    unmarked would keep the game waiting for somebody the table let go (dice.bad-withheld)."""
    out = []
    for player, agreement in sorted(settled.items()):
        for batch in sorted(before.values(), key=lambda b: b.id):
            how = how_settled(player, agreement, seats, absent) if player in seats \
                else RESIGN_SETTLES if player in resigned else NMR_SETTLES
            due = part_due(players, batch, player, how)
            now = after.get(batch.id)
            if due and (now is None or now.withheld.get(player) != agreement):
                out.append(Finding("dice.bad-withheld", f"{agreement} settles what {player} owes, and batch "
                                   f"{batch.id} waits for him: its commit writes `withheld: {{{player}: "
                                   f"{agreement}}}` there (pbem sign does)", file=batch.file,
                                   line=batch.line_of("withheld")))
    return out


def _contribution_commits(players: Sequence[str], old: Batch, new: Batch, committer: str) -> list[Finding]:
    """At a table of three or more, each contributor first commits to his contribution, with it sealed to his
    own key (`contribution_commits`, `contribution_boxes`), in his own name, once, while the batch is open."""
    out = []
    boxes_old, boxes_new = old.raw.get("contribution_boxes") or {}, new.raw.get("contribution_boxes") or {}
    for player in sorted(set(old.contribution_commits) | set(boxes_old)):
        if (old.contribution_commits.get(player) != new.contribution_commits.get(player)
                or boxes_old.get(player) != boxes_new.get(player)):
            out.append(_f("dice.bad-contribution", f"{player}'s contribution commitment to {new.id} cannot change "
                          "once written", new.file))
    for player in sorted((set(new.contribution_commits) | set(boxes_new))
                         - (set(old.contribution_commits) | set(boxes_old))):
        if player != committer:
            out.append(_f("dice.bad-contribution", f"{committer} wrote a contribution commitment in {player}'s "
                          "name", new.file))
        elif not new.committed_first(players) or player not in new.others(players):
            out.append(_f("dice.bad-contribution", f"{player} owes no contribution commitment to {new.id} (only "
                          "the other players of a table of three or more commit first)", new.file))
        elif old.voided or old.results is not None:
            out.append(_f("dice.bad-contribution", f"batch {new.id} is closed", new.file))
        elif player not in new.contribution_commits or player not in boxes_new:
            out.append(_f("dice.bad-contribution", f"{player}'s commitment to {new.id} needs both "
                          "contribution_commits and contribution_boxes (pbem yield writes them)", new.file))
        elif sum(1 for v in new.contribution_commits.values() if v == new.contribution_commits[player]) > 1:
            out.append(_f("dice.bad-contribution", f"{player}'s contribution commitment copies another: each must "
                          "commit to a fresh secret", new.file))
    return out


def _contributions(players: Sequence[str], old: Batch, new: Batch, committer: str) -> list[Finding]:
    out = _contribution_commits(players, old, new, committer)
    for player, value in new.contributions.items():
        if old.contributions.get(player) == value:
            continue
        if player in old.contributions:
            out.append(_f("dice.bad-contribution", f"{player} contributed to {new.id} twice", new.file))
        elif player != committer:
            out.append(_f("dice.bad-contribution", f"{committer} wrote a contribution in {player}'s name", new.file))
        elif player == new.roller or player not in players or new.mode == "escrow":
            out.append(_f("dice.bad-contribution", f"{player} owes no contribution to {new.id}", new.file))
        elif player not in new.others(players):
            out.append(_f("dice.bad-contribution", f"{player} is no contributor of {new.id}: he had left the game "
                          f"when it was announced (its contributors: {', '.join(new.others(players))})", new.file))
        elif old.voided or old.results is not None:
            out.append(_f("dice.bad-contribution", f"batch {new.id} is closed", new.file))
        elif sum(1 for v in new.contributions.values() if v == value) > 1 or value == new.raw.get("commit"):
            out.append(_f("dice.bad-contribution", f"{player}'s contribution copies another value: each must be a "
                          "fresh secret", new.file))
        elif not new.all_committed(players):
            waiting = [p for p in new.others(players) if p not in new.contribution_commits]
            out.append(_f("dice.bad-contribution", f"{player} revealed his contribution to {new.id} before every "
                          f"contribution was committed (still owed by {', '.join(waiting)}): at a table of three "
                          "or more, no contribution may be chosen knowing another", new.file))
        elif new.committed_first(players) and _opens(value) != new.contribution_commits.get(player):
            out.append(_f("dice.bad-contribution", f"{player}'s contribution to {new.id} does not match his "
                          "commitment", new.file))
    for player in old.contributions:
        if player not in new.contributions:
            out.append(_f("dice.bad-contribution", f"{player}'s contribution to {new.id} was removed", new.file))
    return out


def _reveal(game_id: str, players: Sequence[str], escrow_key: PublicKey | None, old: Batch, new: Batch,
            committer: str) -> list[Finding]:
    raw = new.raw
    out = []
    if "reveal" in raw and "reveal" not in old.raw:
        if committer != new.roller:
            out.append(_f("dice.bad-reveal", f"only the roller {new.roller} reveals batch {new.id}", new.file))
        if not new.knowable(players) or new.mode != "commit-reveal":
            out.append(_f("dice.bad-reveal", f"batch {new.id} revealed before every contribution was in", new.file))
        if dice_crypto.commitment(bytes.fromhex(raw["reveal"])).hex() != raw.get("commit"):
            out.append(_f("dice.bad-reveal", f"batch {new.id}: the reveal does not match the roller's commitment",
                          new.file))
    if "escrow" in raw and "escrow" not in old.raw:
        if new.mode != "escrow" or escrow_key is None:
            out.append(_f("dice.bad-escrow", f"batch {new.id} is not an escrow batch", new.file))
        else:
            message = dice_crypto.escrow_message(game_id, new.id, dice_crypto.announced_batch(new.raw))
            try:
                nacl.signing.VerifyKey(escrow_key.raw).verify(message, base64.b64decode(raw["escrow"]))
            except (nacl.exceptions.BadSignatureError, binascii.Error, ValueError):
                out.append(_f("dice.bad-escrow", f"batch {new.id}: not the escrow key's signature of this batch",
                              new.file))
    if raw.get("results") != old.raw.get("results"):
        if out:
            return out
        expected = derive(game_id, players, new)
        if expected is None or list(raw.get("results") or []) != expected:
            wanted = f"the derivation {expected}" if expected is not None else "nothing: it cannot be rolled yet"
            out.append(_f("dice.bad-results", f"batch {new.id}: results {raw.get('results')} differ from {wanted}",
                          new.file))
    elif ("reveal" in raw and "reveal" not in old.raw) or ("escrow" in raw and "escrow" not in old.raw):
        out.append(_f("dice.bad-results", f"batch {new.id}: write the results with the reveal (pbem does)",
                      new.file))
    return out


def _void(game_id: str, players: Sequence[str], keys: Mapping[str, PublicKey], old: Batch, new: Batch,
          committer: str) -> list[Finding]:
    if not new.voided or old.voided:
        return []
    out = []
    if committer != new.roller:
        out.append(_f("dice.bad-void", f"only the roller {new.roller} voids batch {new.id}", new.file))
    if not old.fixed(players) and old.results is None:
        return out
    reason = new.raw["void"]["reason"]
    cosign = new.raw["void"].get("cosign") or {}
    message = void_message(game_id, new, reason)
    for player in new.others(players):
        if player not in cosign:
            out.append(_f("dice.bad-void", f"batch {new.id} was voided after its results were knowable without "
                          f"{player}'s co-signature (pbem dice cosign)", new.file))
            continue
        try:
            signer = sshsig.verify(cosign[player], message, VOID_NAMESPACE)
        except PbemError:
            signer = None
        if signer is None or player not in keys or not signer.same_key(keys[player]):
            out.append(_f("dice.bad-void", f"{player}'s co-signature of the void of {new.id} does not verify",
                          new.file))
    return out


def _opens(value: str) -> str:
    """The contribution commitment a revealed contribution (hex) opens."""
    return dice_crypto.contribution_commitment(bytes.fromhex(value)).hex()


def _f(rule: str, message: str, file: str | None) -> Finding:
    return Finding(rule, message, file=file)
