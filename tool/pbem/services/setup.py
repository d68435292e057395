"""Setting a game up: `pbem init`, `pbem join`, `pbem start` (DESIGN §2, §8).

The start is by mutual consent (seed 000 §2.A; DESIGN §2 Setup): before it, anyone seated may change game.yaml,
but the start commit is accepted only with a `start` agreement over game.yaml exactly as it is then, signed by
every seat, and control goes to the player it names (or to the one the start roll names, for `roll: true`).
`pbem start --first ID` / `--roll` does the next step towards that: it proposes the agreement (signed by me) or
signs the one with those terms, and once everyone has signed it starts (or, by dice, rolls first).
"""

from __future__ import annotations

import re
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pbem
from pbem.errors import ILLEGAL, PbemError
from pbem.formats import resources, yamlsafe
from pbem.formats.writer import dump_flow, dump_mapping
from pbem.protocol import kinds
from pbem.protocol.agreements import Agreement
from pbem.protocol.serving import ORDER_REF, START_REF, order_refs, start_sides
from pbem.services import agreements, gitstate
from pbem.services.gateworkflow import workflow_text
from pbem.services.workspace import Identity, Workspace
from pbem.store.repo import GameRepo
from pbem.files.layout import GAME, README, STATUS, WORKFLOW
from pbem.protocol.game import Game
from pbem.protocol.control import expected_start, start_batch, start_choice, who

ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}\Z")
WAIT = "pbem pull && pbem status"  # nothing to do yet: bring the clone up to date and look again


def template_dir(template: str) -> Path:
    """A template by name (a folder of games/) or by path."""
    path = Path(template)
    if not path.is_dir():
        path = resources.games_dir() / template
    if not (path / GAME).is_file():
        known = sorted(p.name for p in resources.games_dir().iterdir() if (p / GAME).is_file())
        raise PbemError("usage.template", f"no game template {template!r}; known: {', '.join(known)}")
    return path


def init(directory: Path, template: str, game_id: str, me: Identity, pbem_spec: str | None = None,
         lock: str | None = None, code: str | None = None) -> Workspace:
    """Create a new game repository from a template, with README and workflow, as one signed commit. `code`: a
    fresh invite code for a template that has one (`setup.invite_hash`), stored only salted and hashed."""
    if not ID_RE.match(game_id):
        raise PbemError("usage.bad-id", f"game id {game_id!r}: use lower-case letters, digits and '-'")
    if directory.exists() and any(directory.iterdir()):
        raise PbemError("usage.not-empty", f"{directory} exists and is not empty")
    source = template_dir(template)
    game_text = (source / GAME).read_text()
    game_text, n = re.subn(r"(?m)^id: .*$", f"id: {game_id}", game_text, count=1)
    if n != 1:
        raise PbemError("usage.template", f"{source / GAME} has no top-level `id:` line")
    game_text = re.sub(r"(?m)^pbem: .*$", f'pbem: "{pbem.__version__}"', game_text, count=1)
    if code is not None:
        game_text = with_invite_code(game_text, code, source / GAME)
    yamlsafe.load(game_text.encode(), GAME)
    readme = (source / README).read_text() if (source / README).is_file() else f"# {game_id}\n"
    files = {
        GAME: game_text.encode(),
        README: readme.replace("{id}", game_id).encode(),
        WORKFLOW: workflow_text(pbem_spec, lock).encode(),
    }
    directory.mkdir(parents=True, exist_ok=True)
    ws = Workspace(GameRepo.init(directory))
    ws.commit(files, me, f"{game_id}: new game from template {source.name}")
    return ws


_INVITE_LINE = re.compile(r"(?m)^((?:  #.*\n)*)(  invite_hash: ).*$")


def with_invite_code(game_text: str, code: str, where: Path) -> str:
    """game.yaml's text with a fresh invite code: its salted hash (a new random salt; the form every verifier
    checks joins against, pbem.rulesets.dow.invite) in place of the template's, which the comment above it named."""
    from pbem.rulesets.dow import invite

    if not code or code != code.strip() or any(c < " " for c in code):
        raise PbemError("usage.invite-code", "--code: give a non-empty code without control characters or "
                        "spaces at either end")
    if _INVITE_LINE.search(game_text) is None:
        raise PbemError("usage.invite-code", f"{where} has no invite code to replace (setup.invite_hash): this "
                        "game is joined without one; leave out --code")
    hashed = invite.key_code(code, secrets.token_hex(16))
    comment = "  # the invite code, salted and hashed (pbem init --code): every verifier checks each join against it\n"
    return _INVITE_LINE.sub(lambda m: f'{comment}{m[2]}"{hashed}"', game_text, count=1)


def invite_advice(ws: Workspace, code: str | None) -> str:
    """What `pbem init` tells the founder the players run: `pbem join --as ID`, with the invite code where the
    game has one (seed 001: the code is given in the game description, never in the repository)."""
    doc = yamlsafe.load(ws.head_files()[GAME], GAME)
    if (doc.data.get("setup") or {}).get("invite_hash") is None:
        return "players now run `pbem join --as ID` there"
    if code is not None:
        return (f"players now run `pbem join --as ID --code {shlex.quote(code)}` there (give them the code with the game "
                "description: the repository keeps only its salted hash)")
    return ("players now run `pbem join --as ID --code CODE` there, CODE being the invite code of the game "
            "description (this template's is named in game.yaml's comment; `pbem init --code NEW` sets a fresh one)")


def join(ws: Workspace, seat_id: str, me: Identity, code: str | None = None) -> str:
    """Claim seat `seat_id` with my key: a commit signed by that key that only fills in the seat's key. A game
    whose setup has an `invite_hash` (seed 001: 'The invite code is "..."') is joined only with its code."""
    files = ws.head_files()
    doc = yamlsafe.load(files[GAME], GAME)
    check_invite((doc.data.get("setup") or {}).get("invite_hash"), code)
    seats = doc.data["players"]
    index = next((i for i, s in enumerate(seats) if s["id"] == seat_id), None)
    if index is None:
        raise PbemError("usage.no-seat", f"no seat {seat_id!r}; seats: {', '.join(s['id'] for s in seats)}")
    if seats[index].get("key"):
        raise PbemError("setup.seat-taken", f"seat {seat_id!r} is already claimed", file=GAME,
                        line=doc.line_of(("players", index)), exit_code=1)
    mine = next((s["id"] for s in seats if s.get("key") and _same_key(s["key"], me)), None)
    if mine:
        raise PbemError("setup.seat-taken", f"your key already holds seat {mine!r}", exit_code=1)
    seat = dict(seats[index])
    seat["key"] = me.public.to_line()
    claim = _invite_proof(doc.data, seat_id, seat["key"], code)
    if claim is not None:
        seat["invite"] = claim  # the verifier checks it (verify/invitation.py)
    files[GAME] = _replace_seat_line(files[GAME], doc.line_of(("players", index)), seat, doc.data)
    return ws.commit(files, me, f"join: {seat_id} takes a seat")


def check_invite(invite_hash: object, code: str | None) -> None:
    """Refuse a join without the right invite code when the game has one (stored salted and hashed, so the
    public repository does not give it away; see pbem.rulesets.dow.invite). The code never enters the repository;
    with an invite hash of the ed25519 form the join carries the code's signature, which every verifier checks."""
    if invite_hash is None:
        return
    from pbem.rulesets.dow import invite

    if code is None:
        raise PbemError("setup.invite-code", "this game is joined with the invite code from its description",
                        hint="pbem join --as ID --code CODE")
    if not invite.matches(str(invite_hash), code):
        raise PbemError("setup.bad-invite-code", "that is not this game's invite code (read the game description)",
                        file=GAME, exit_code=1)


def _invite_proof(data: dict, seat_id: str, key_line: str, code: str | None) -> str | None:
    """The code's signature over this claim, where the game's invite hash is one the verifier checks."""
    invite_hash = (data.get("setup") or {}).get("invite_hash")
    if invite_hash is None or code is None:
        return None
    from pbem.rulesets.dow import invite

    return invite.proof(str(invite_hash), code, str(data.get("id")), seat_id, key_line)


def _same_key(line: str, me: Identity) -> bool:
    from pbem.crypto.keys import PublicKey

    return PublicKey.from_line(line).same_key(me.public)


def _replace_seat_line(text: bytes, line: int, seat: dict, whole: dict) -> bytes:
    """Rewrite one seat's line (templates write one seat per line); otherwise re-dump the whole file."""
    lines = text.decode().split("\n")
    original = lines[line - 1]
    if original.lstrip().startswith("- {") and original.rstrip().endswith("}"):
        indent = original[: len(original) - len(original.lstrip())]
        lines[line - 1] = indent + "- " + dump_flow(seat)
        return "\n".join(lines).encode()
    whole = dict(whole)
    whole["players"] = [seat if s["id"] == seat["id"] else s for s in whole["players"]]
    return dump_mapping(whole).encode()


def start(ws: Workspace, first: str, me: Identity) -> str:
    """Freeze game.yaml and give control to `first` (seed 000 §2.A: by consent or by die roll)."""
    files = ws.head_files()
    game = ws.game_of(files)
    if first not in game.manifest.players:
        raise PbemError("usage.no-seat", f"no player {first!r}; players: {', '.join(game.manifest.players)}")
    if STATUS in files:
        raise PbemError("setup.started", "the game has already started", exit_code=1)
    _, status = expected_start(game, first)
    files[STATUS] = dump_mapping(status.to_data()).encode()
    return ws.commit(files, me, f"start: {first} has control")


# where each ruleset's orders, conditions and actions are described for players (the starter files point there)
RULES_DOC = {"tactical/1": "docs/tactical.md", "dow/1": "docs/dow.md"}


def write_starters(ws: Workspace, player: str | None) -> list[str]:
    """Starter files for the turn `player` holds now, written into his working tree (not committed) where
    neither HEAD nor the working tree has them: his players/<id>.yaml (no orders yet: `through: null`, no
    breaks) and the report file of the firm point (no entries yet), each with comments that explain its fields,
    so that "edit players/ID.yaml" is true when `pbem status` says it. Only for the player holding control for a
    turn: nobody else writes those files before his next commit, so no pull ever finds them in its way. Comments
    are no data: committed as they are, replay reads the same inputs as from no file (DESIGN §2, §4.1, §4.3).
    Returns the paths written."""
    from pbem.render.status_screen import holds_turn

    head = ws.head()
    status = head.status if head is not None else None
    if head is None or status is None or status.over or not status.firm or not holds_turn(status, player):
        return []
    assert player is not None
    ruleset = head.game.manifest.ruleset
    try:
        report = f"report/{ruleset.period_of(ruleset.parse_time(status.firm))}.yaml"
    except ValueError:
        return []
    doc = RULES_DOC.get(head.game.manifest.ruleset_name, "docs/protocol.md")
    wanted = {f"players/{player}.yaml": _players_text(player, status.firm, doc, report),
              report: _report_text(report, player, status.firm, doc)}
    there = ws.head_files()
    written = [path for path in wanted if path not in there and not (ws.root / path).exists()]
    ws.write_files({path: wanted[path].encode() for path in written})
    return written


def _players_text(player: str, firm: str, doc: str, report: str | None) -> str:
    entries = f" in {report} (and the report files after it)" if report else ""
    return "".join(line + "\n" for line in (
        f"# players/{player}.yaml: {player}'s orders, edited when you hold control (pbem status says when), then",
        "# committed with `pbem check && pbem yield -m NOTE` (docs/protocol.md, Horizon and break conditions).",
        f'# through: the last game time your entries{entries} reach, e.g. "{firm}";',
        "#   replay gives you control back there (null: nothing written yet).",
        f'# breaks: when you want control back earlier, e.g. {{at: "{firm}"}} or a condition of the ruleset',
        f"#   ({doc}), one flow mapping per item.",
        "through: null",
        "breaks: []"))


def _report_text(report: str, player: str, firm: str, doc: str) -> str:
    return "".join(line + "\n" for line in (
        f"# {report}: the entries of this period, in pbem's layout: a line `entries:`, then one entry per",
        "# line, each a flow mapping of the game time, its player, the unit and what it does, e.g.",
        "#   entries:",
        f'#     - {{at: "{firm}", by: {player}, unit: UNIT, do: {{...}}}}',
        f"# The actions of this game: {doc}. Entries before the firm point (pbem status) can no longer change."))


def start_roll(ws: Workspace, me: Identity, first: str | None = None, order: bool = False
               ) -> tuple[str, str | None]:
    """`pbem start --roll` (and `--order-by-dice`): decide who starts, or the order around the table, or both, by
    dice (seed 000 §2.A), in two steps. The first call announces one batch: a die with as many sides as players
    for who starts (unless `first` starts by consent), and for the order, dice of n, n-1, …, 2 sides; once every
    other player has contributed (`pbem yield`) and the roller revealed (`pbem yield`), or the escrow signed,
    the second call starts the game with the player the dice (or the consent) name, in the order they give.
    Returns (commit id, the first player once started)."""
    files = ws.head_files()
    game = ws.game_of(files)
    if STATUS in files:
        raise PbemError("setup.started", "the game has already started", exit_code=1)
    batch = start_batch(game)
    seats = game.manifest.players
    what = " and ".join(([] if first is not None else ["who starts"]) + (["the order around the table"] if order
                                                                        else []))
    if batch is None:
        player = who(game, me.public)
        if player not in seats:
            raise PbemError("signature.unknown-key", "only a seated player rolls for who starts", exit_code=1)
        from pbem.services import chance

        refs = ([] if first is not None else [START_REF]) + (order_refs(len(seats)) if order else [])
        purposes = [f"the order around the table: seat {ref[len(ORDER_REF):]} of {len(seats)}"
                    if ref != START_REF else "who starts" for ref in refs]
        each = [start_sides(ref, len(seats)) or len(seats) for ref in refs]
        batch_id = chance.announce(files, game, me, player, purposes, refs, each[0], each=each)
        return ws.commit(files, me, f"start: dice {batch_id} decide {what}"), None
    if batch.results is None:
        from pbem.protocol.dice import owed

        waiting = "; ".join(f"{b.player}: {b.why}" for b in owed(seats, [batch], None))
        raise PbemError("dice.owed", f"dice {batch.id} for {what} are not rolled yet ({waiting}); each runs "
                        "`pbem yield` (or the escrow `pbem escrow sign`)")
    if order and not game.inputs.ordered_by_dice:
        raise PbemError("dice.bad-sides", f"dice {batch.id} do not roll the order around the table as the start "
                        f"agreed (dice of {', '.join(str(start_sides(r, len(seats))) for r in order_refs(len(seats)))}"
                        " sides for start/order/1 …): void them (pbem dice void) and roll again",
                        file=batch.file, exit_code=ILLEGAL)
    if first is not None:
        return start(ws, first, me), first
    first = start_choice(batch, seats)
    if first is None and batch.raw["rolls"][0].get("ref") != START_REF:
        raise PbemError("dice.start-mismatch", f"dice {batch.id} roll only the order around the table, not who "
                        "starts: start with the player agreed (pbem start --first ID --order-by-dice)",
                        file=batch.file, exit_code=ILLEGAL)
    if first is None:
        raise PbemError("dice.bad-sides", f"dice {batch.id} for who starts roll a d{batch.sides}, but the table has "
                        f"{len(game.manifest.players)} seats: void it (pbem dice void) and roll again",
                        file=batch.file, line=batch.line_of("sides"), exit_code=ILLEGAL)
    return start(ws, first, me), first


# --- the start by consent (DESIGN §2 Setup, seed 000 §2.A) ---------------------------------------------------

@dataclass(frozen=True)
class StartStep:
    """One thing `pbem start` did: `proposed` or `signed` a start agreement, announced the dice (`rolling`), or
    `started` the game; `message` says it, and what comes next, in one sentence."""

    step: str
    message: str
    commit: str
    agreement: str | None = None
    first: str | None = None


def terms(first: str | None, roll: bool, order: bool = False) -> dict[str, Any]:
    """A start agreement's terms (without the game.yaml hash): `{first: ID}` or `{roll: true}`, with `order:
    roll` when the dice decide the order around the table too."""
    if roll == (first is not None):
        raise PbemError("usage.start", "give either --first ID or --roll")
    return ({"roll": True} if roll else {"first": first}) | ({"order": "roll"} if order else {})


def current_starts(game: Game) -> list[Agreement]:
    """The start agreements over game.yaml as it is (older ones are stale), by id."""
    return sorted((a for a in game.agreements.values()
                   if a.kind == kinds.START and a.content["game"] == game.manifest.digest), key=lambda a: a.id)


def _matching(game: Game, wanted: dict[str, Any]) -> list[Agreement]:
    return [a for a in current_starts(game) if {k: v for k, v in a.content.items() if k != "game"} == wanted]


def begin(ws: Workspace, me: Identity, first: str | None = None, roll: bool = False,
          order: bool = False) -> list[StartStep]:
    """`pbem start --first ID | --roll [--order-by-dice]`: the next steps towards the start that I can take now.
    Consent first: sign the start agreement with these terms that has the most signatures, or propose one; once
    every seat has signed, start (by dice: announce the dice first, and start once they are rolled). Refused with
    `agreement.unsigned` when I signed already and others have not."""
    wanted = terms(first, roll, order)
    head, player = agreements.seat(ws, me)
    game = head.game
    if head.started:
        raise PbemError("setup.started", "the game has already started", exit_code=ILLEGAL)
    found = gitstate.behind_ahead(ws.repo)
    if found is not None and found[1]:  # the others' joins, start proposals or signatures may be there
        raise PbemError("setup.behind", f"your clone is behind {found[0].where} by {found[1]} commit(s), which may "
                        "hold the others' seats, start proposals or signatures: pull first",
                        hint="pbem pull, then the same pbem start", exit_code=ILLEGAL)
    if first is not None and first not in game.manifest.players:
        raise PbemError("usage.no-seat", f"no player {first!r}; players: {', '.join(game.manifest.players)}")
    if order and len(game.manifest.players) < 3:
        raise PbemError("usage.start", f"{len(game.manifest.players)} players sit in the only order there is: who "
                        "starts fixes who follows (--order-by-dice is for three or more)")
    open_seats = [s.id for s in game.manifest.seats if s.key is None]
    if open_seats:
        raise PbemError("setup.seats-open", f"seats {', '.join(open_seats)} are not claimed yet: the start needs "
                        "every seat's consent", hint=f"pbem join --as {open_seats[0]}")
    batch = start_batch(game)
    if batch is not None and first is not None and batch.raw["rolls"][0].get("ref") == START_REF:
        # the dice decide: `--first` is only the result they gave
        rolled = start_choice(batch, game.manifest.players)
        if rolled != first:
            raise PbemError("dice.start-mismatch", f"dice {batch.id} decide who starts: "
                            f"{rolled or 'not rolled yet'}, not {first}", file=STATUS, exit_code=ILLEGAL,
                            hint="pbem start --roll")
        first, wanted = None, terms(None, True, order)
    steps: list[StartStep] = []
    candidates = _matching(game, wanted)
    done = [a for a in candidates if not agreements.unsigned(game, a)]
    if not done:
        mine = [a for a in candidates if player not in a.signatures]
        if mine:
            best = sorted(mine, key=lambda a: (-len(a.signatures), a.id))[0]
            signed = agreements.sign(ws, me, best.id)
        elif not candidates:
            content = {"game": game.manifest.digest, **wanted}
            signed = agreements.propose(ws, me, kinds.START, content,
                                        f"start, {kinds.start_terms(_draft(content))}")
        else:
            best = max(candidates, key=lambda a: len(a.signatures))
            missing = agreements.unsigned(game, best)
            raise PbemError("agreement.unsigned", f"start agreement {best.id} "
                            f"({kinds.start_terms(best)}) waits for the signature of {', '.join(missing)}; "
                            "the start needs every seat's", file=best.file, exit_code=ILLEGAL,
                            hint=f"{', '.join(missing)}: pbem sign {best.id}")
        verb = "signed" if signed.agreement in {a.id for a in candidates} else "proposed"
        if signed.unsigned:
            who_ = ", ".join(signed.unsigned)
            return [StartStep(verb, f"{verb} start agreement {signed.agreement}; waiting for the signature of "
                              f"{who_} (each runs `pbem sign {signed.agreement}`)", signed.commit, signed.agreement)]
        steps.append(StartStep(verb, f"{verb} start agreement {signed.agreement}: every seat has signed",
                               signed.commit, signed.agreement))
    if first is not None and not order:
        oid = start(ws, first, me)
        return steps + [StartStep("started", f"started: {first} has control{_starters(ws, player)}", oid,
                                  first=first)]
    oid, chosen = start_roll(ws, me, first, order)
    again = f"pbem start {f'--first {first}' if first is not None else '--roll'}" + (" --order-by-dice"
                                                                                    if order else "")
    if chosen is None:
        what = " and ".join((["who starts"] if first is None else []) + (["the order around the table"] if order
                                                                          else []))
        return steps + [StartStep("rolling", f"dice for {what} announced: every other player runs `pbem "
                                  "yield` to contribute, then the roller `pbem yield` to reveal; then "
                                  f"`{again}` again", oid)]
    said = f"started: the dice chose {chosen}, who has control" if first is None else f"started: {chosen} has control"
    if order:
        said += "; around the table: " + ", ".join(ws.game_of(ws.head_files()).inputs.players)
    return steps + [StartStep("started", said + _starters(ws, player), oid, first=chosen)]


def _starters(ws: Workspace, player: str | None) -> str:
    """The starter files written for my first turn, said in the line that says the game started."""
    written = write_starters(Workspace.open(ws.root), player)
    return (f"; wrote {' and '.join(written)} for your turn (with comments: edit them, then `pbem check && pbem "
            "yield`)" if written else "")


def _draft(content: dict[str, Any]) -> Agreement:
    return Agreement({"id": "x-0000", "kind": kinds.START, "by": "x", "content": content, "signatures": {}}, "")


def before_start(game: Game, me: str | None) -> str:
    """What `pbem status` tells a player before the start, in one sentence with the command to paste: the
    seats to claim, whose signature the start waits for, or that everyone signed and the game can start."""
    what, command = start_todo(game, me)
    return f"{what}: `{command}`"


def start_todo(game: Game, me: str | None) -> tuple[str, str]:
    """Before the start, what I do next towards it and the exact command (for `pbem status`, plain and on the
    terminal screen)."""
    manifest = game.manifest
    open_seats = [s.id for s in manifest.seats if s.key is None]
    if open_seats and me is not None:  # seated already: the others claim theirs (a key holds one seat)
        return (f"the game has not started: seats {', '.join(open_seats)} are open; the other players claim them "
                "(each runs `pbem join --as ID` in his clone), then every seat consents to start", WAIT)
    if open_seats:
        return (f"the game has not started: seats {', '.join(open_seats)} are open (then every seat consents to "
                "start)", f"pbem join --as {open_seats[0]}")
    starts = current_starts(game)
    stale = sorted(a.id for a in game.agreements.values() if a.kind == kinds.START and a not in starts)
    if not starts:
        return ("the game has not started: nobody has proposed the start over game.yaml as it is"
                + (f" ({', '.join(stale)} are stale: game.yaml changed since)" if stale else "")
                + "; review game.yaml, then propose it (to let a die decide: `pbem start --roll`)",
                "pbem start --first ID")
    ready = [a for a in starts if not agreements.unsigned(game, a)]
    if ready:
        how = f"--first {ready[0].content['first']}" if "first" in ready[0].content else "--roll"
        how += " --order-by-dice" if ready[0].content.get("order") == "roll" else ""
        return f"every seat signed start agreement {ready[0].id} ({kinds.start_terms(ready[0])})", f"pbem start {how}"
    for agreement in starts:
        if me in agreements.unsigned(game, agreement):
            return (f"your signature on start agreement {agreement.id} by {agreement.by} "
                    f"({kinds.start_terms(agreement)}, over game.yaml as it is): review game.yaml, then sign it",
                    f"pbem sign {agreement.id}")
    waiting = "; ".join(f"start agreement {a.id} ({kinds.start_terms(a)}) waits for "
                        f"{', '.join(agreements.unsigned(game, a))}" for a in starts)
    return f"nothing yet: {waiting}", f"pbem sign {starts[0].id}"
