"""The books a game's files make (DESIGN §5, §6, §7.2; seed 000 §2.A): every dice ref with its result, each
player's sealed input per step, each seeking weapon's sealed target, press grouped by step in recognition order,
and the order around the table when the start dice decide it. Pure functions of the game's data."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from pbem.protocol.agreements import Agreement
from pbem.protocol.kinds import SEAT, START
from pbem.protocol.dice import Batch
from pbem.protocol.game import Game, Manifest
from pbem.protocol.model import Message, PressFile, Rolled, SealedInput
from pbem.protocol.openings import opened_value
from pbem.protocol.secrets import Secret
from pbem.protocol.serving import order_refs, permutation, start_sides


def dice_book(batches: Mapping[str, Batch], agreements: Mapping[str, Agreement] | None = None) -> dict[str, Rolled]:
    """Every dice ref of the batches that stand (not voided), with its result once rolled (DESIGN §5); a lost
    one says which agreement settled it (`agreements`: the game's, for the seat changes among them)."""
    book: dict[str, Rolled] = {}
    seat_changes = {a.id for a in (agreements or {}).values() if a.kind == SEAT}
    for batch in sorted(batches.values(), key=lambda b: b.id):
        if batch.voided:
            continue
        results = batch.results or []
        for j, purpose in enumerate(batch.raw["rolls"]):
            if "ref" in purpose:
                book[purpose["ref"]] = Rolled(batch.id, batch.roller, results[j] if j < len(results) else None,
                                               purpose.get("sides", batch.sides), batch.lost(seat_changes))
    return book


def sealed_book(secrets: Mapping[str, Secret]) -> dict[tuple[str, str], SealedInput]:
    """Each player's sealed input per sealed step (secrets with a `step`), with its content once revealed."""
    book: dict[tuple[str, str], SealedInput] = {}
    replaced = {s.raw.get("replaces") for s in secrets.values()}  # a replaced input counts no more (§4.7)
    for secret in sorted(secrets.values(), key=lambda s: s.id):
        step = secret.raw.get("step")
        if step is None or (step, secret.owner) in book or secret.id in replaced:
            continue
        # a withheld set opened by the other players' shares stands as sealed (protocol.openings)
        value = secret.value() if secret.revealed else opened_value(secret)
        book[(step, secret.owner)] = SealedInput(secret.id, value, secret.revealed or value is not None,
                                                 withheld=secret.raw.get("withheld", ""), part=secret.opened_part())
    return book


def target_book(secrets: Mapping[str, Secret]) -> dict[tuple[str, str], SealedInput]:
    """Each seeking weapon's sealed target (kind `target`, `concerns` naming the weapon), revealed or not, keyed
    by (its owner, the weapon): replay looks a weapon's target up by the weapon's owner, so nobody else's secret
    can stand for it (the verifier refuses a second one, or one sealed outside the launch commit)."""
    book: dict[tuple[str, str], SealedInput] = {}
    for secret in sorted(secrets.values(), key=lambda s: s.id):
        unit = secret.raw.get("concerns")
        if secret.raw["kind"] == "target" and unit and (secret.owner, unit) not in book:
            book[(secret.owner, unit)] = SealedInput(secret.id, secret.value() if secret.revealed else None,
                                                     secret.revealed, secret.owner, secret.raw.get("withheld", ""))
    return book


def press_book(press: Mapping[str, PressFile]) -> dict[str, tuple[Message, ...]]:
    """Messages grouped by the step they were sent during, for a tree read without its history: file by file,
    in path order. The recognition order is that of the commits that added the messages (DESIGN §7.2), which
    only history knows: `press_after` puts each commit's messages after those of the commits before it."""
    return _booked({}, [m for path in sorted(press) for m in press[path]])


def _booked(book: Mapping[str, tuple[Message, ...]], more: list[Message]) -> dict[str, tuple[Message, ...]]:
    """`book` with `more` after the messages of their steps (grouped first: one tuple built per step)."""
    grown: dict[str, list[Message]] = {}
    for message in more:
        if message.at is not None:
            grown.setdefault(message.at, []).append(message)
    out = dict(book)
    for at, messages in grown.items():
        out[at] = out.get(at, ()) + tuple(messages)
    return out


def press_added(before: Mapping[str, PressFile], after: Mapping[str, PressFile]) -> list[Message] | None:
    """The messages a commit appended (file by file, in path order: one commit has one author), or None when it
    changed or removed a message already sent (press is append-only: press.changed)."""
    added: list[Message] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if new is old:
            continue
        if new is None:
            if old is not None and old.messages:
                return None
            continue
        more = new.added_since(old)
        if more is None:
            return None
        added.extend(more)
    return added


def press_after(before: Mapping[str, PressFile], book: Mapping[str, tuple[Message, ...]],
                after: Mapping[str, PressFile]) -> Mapping[str, tuple[Message, ...]]:
    """The recognition order after a commit (DESIGN §7.2): the messages already sent keep their places (`book`,
    the order before it, of the files `before`), the ones it appended come after them, in the order it added
    them; never by file name. A commit that changed or removed sent messages (refused: press.changed) keeps
    the others in their places and puts the changed files' messages last."""
    added = press_added(before, after)
    if added is not None:
        return book if not added else _booked(book, added)
    touched = {p for p in set(before) | set(after) if before.get(p) is not after.get(p)}
    kept = {at: tuple(m for m in messages if m.file not in touched) for at, messages in book.items()}
    return _booked({at: ms for at, ms in kept.items() if ms},
                   [m for path in sorted(touched) for m in after.get(path, ())])


def in_commit_order(before: Game, game: Game) -> Game:
    """`game` (read from a tree alone, e.g. a working tree) with its press in the recognition order history gives,
    `before` being the game at its parent, already in that order (DESIGN §7.2)."""
    book = press_after(before.press, before.inputs.press, game.press)
    if book is game.inputs.press or book == game.inputs.press:
        return game
    return replace(game, inputs=replace(game.inputs, press=book))


def table_order(manifest: Manifest, agreements: Mapping[str, Agreement],
                book: Mapping[str, Rolled]) -> tuple[str, ...] | None:
    """The order around the table when the start dice decide it (seed 000 §2.A): a start agreement every seat
    signed says `order: roll`, and the order dice (`start/order/1` … `n-1`, of n, n-1, …, 2 sides) are rolled;
    None otherwise (game.yaml's order). The start commit checks that the start it makes is the one agreed."""
    seats = manifest.players
    refs = order_refs(len(seats))
    if not refs or not any(a.kind == START and a.content.get("order") == "roll" and set(seats) <= set(a.signatures)
                           for a in agreements.values()):
        return None
    rolled = [book.get(ref) for ref in refs]
    dice = [r.result for ref, r in zip(refs, rolled)
            if r is not None and r.result is not None and r.sides == start_sides(ref, len(seats))]
    return permutation(seats, dice) if len(dice) == len(refs) else None
