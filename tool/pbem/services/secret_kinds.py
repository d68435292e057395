"""Which secrets a player can seal in this game (`pbem seal` with no or a wrong KIND; DESIGN §6).

A `note` can be sealed in every game (free text one commits to now and shows later); the ruleset adds the kinds its
rules ask for (`secret_kinds(setup)`: a tactical energy `allocation` where allocations are sealed, a seeking
weapon's `target` where a weapon type seeks, Diplomacy `orders`). The file each kind holds is shown by example;
docs/protocol.md has the same examples.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.errors import USAGE, PbemError
from pbem.protocol.game import Game

NOTE = "note"
# The file `pbem seal KIND FILE` reads for each kind (YAML or JSON; schemas/secret-<kind>.json), by example, on one
# line (a YAML flow mapping) so that a refusal stays one line and its hint another.
EXAMPLES = {
    NOTE: '{text: "I turn to starboard as soon as we are in range 8"}',
    "allocation": "{turn: 1, units: {CA: {speed: 12, het: 5, weapons: 6, systems: 2, reserve: 4}}}",
    "target": "{unit: S1, target: D7, nature: real}",
    "orders": '{orders: ["A PAR - BUR", "F BRE - MAO", "A MAR H"]}',
}


@dataclass(frozen=True)
class SecretKind:
    """One kind of secret a player can seal here: its name, when it is sealed, and its file by example."""

    name: str
    when: str
    example: str


def secret_kinds(game: Game) -> list[SecretKind]:
    """The kinds a player can seal in `game`: `note`, then the ruleset's own."""
    kinds = {NOTE: "free text you commit to now and show later, at the end or at --reveal TIME"}
    sealing = game.manifest.ruleset.sealing
    if sealing is not None:
        kinds.update(sealing.secret_kinds(game.manifest.setup))
    return [SecretKind(name, when, EXAMPLES.get(name, "")) for name, when in kinds.items()]


def listing(game: Game) -> str:
    """The kinds as one line each: name, when it is sealed, its file by example."""
    return "\n".join(f"{k.name}: {k.when}; file: {k.example}" for k in secret_kinds(game))


def require(game: Game, kind: str | None) -> None:
    """Refuse a KIND this game does not offer, naming those it does and their files by example
    (usage.secret-kind, exit 2): one line, and one hint line."""
    kinds = secret_kinds(game)
    if any(k.name == kind for k in kinds):
        return
    got = f"no secret kind {kind!r} in this game." if kind else "Which kind of secret?"
    raise PbemError("usage.secret-kind", f"{got} You can seal: " + "; ".join(f"{k.name} ({k.when})" for k in kinds),
                    hint="pbem seal KIND FILE, the file by example: " + "; ".join(f"{k.name}: {k.example}"
                                                                          for k in kinds),
                    exit_code=USAGE)


def sealed_said(game: Game, raw: dict) -> str:
    """What `pbem seal` says of a secret it sealed (its file's `raw`): when it is opened. A secret answering a
    sealed step with a part beside its box (a tactical allocation with `speeds: sealed`) opens that part at the
    step, once every player owing one there has sealed, and the whole at its `end` (DESIGN §4.7, §6)."""
    end = raw.get("end", "end")
    sealing = game.manifest.ruleset.sealing
    until_end = sealing is not None and raw["kind"] in sealing.sealed_until_end
    whole = ("the end of the battle" if until_end else "the end of the game") if end == "end" else str(end)
    head = f"sealed secret {raw['id']} ({raw['kind']})"
    if "part_commit" in raw and "step" in raw:
        part = sealing.part_name if sealing is not None else "part"
        return (f"{head} for {raw['step']}: its {part} are opened at {raw['step']} once every player owing one "
                f"there has sealed, the whole at {whole}: now `pbem yield`")
    return f"{head}; due at {whole}: now `pbem yield`"
