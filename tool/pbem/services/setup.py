"""Setting a game up: `pbem init`, `pbem join`, `pbem start` (DESIGN §2, §8)."""

from __future__ import annotations

import re
from pathlib import Path

import pbem
from pbem.errors import ILLEGAL, PbemError
from pbem.formats import resources, yamlsafe
from pbem.formats.writer import dump_flow, dump_mapping
from pbem.services.workspace import Identity, Workspace
from pbem.store.repo import GameRepo
from pbem.verify.gamefiles import GAME, README, STATUS, WORKFLOW
from pbem.verify.turns import expected_start, start_batch, start_choice, who

ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}\Z")


def template_dir(template: str) -> Path:
    """A template by name (a folder of games/) or by path."""
    path = Path(template)
    if not path.is_dir():
        path = resources.games_dir() / template
    if not (path / GAME).is_file():
        known = sorted(p.name for p in resources.games_dir().iterdir() if (p / GAME).is_file())
        raise PbemError("usage.template", f"no game template {template!r}; known: {', '.join(known)}")
    return path


def workflow_text(spec: str | None = None) -> str:
    """The enforcing workflow (DESIGN §9), pinned to this pbem version."""
    here = Path(pbem.__file__).parent
    for candidate in (here / "github" / "pbem.yml", here.parents[1] / ".github" / "game-template" / "pbem.yml"):
        if candidate.is_file():
            text = candidate.read_text()
            break
    else:  # pragma: no cover - a broken installation
        raise PbemError("install.broken", "the workflow template is missing from this pbem installation")
    text = text.replace("install pbem {version}", f"install pbem {pbem.__version__}")
    return text.replace('"pbem=={version}"', f'"{spec or f"pbem=={pbem.__version__}"}"')


def init(directory: Path, template: str, game_id: str, me: Identity, pbem_spec: str | None = None) -> Workspace:
    """Create a new game repository from a template, with README and workflow, as one signed commit."""
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
    yamlsafe.load(game_text.encode(), GAME)
    readme = (source / README).read_text() if (source / README).is_file() else f"# {game_id}\n"
    files = {
        GAME: game_text.encode(),
        README: readme.replace("{id}", game_id).encode(),
        WORKFLOW: workflow_text(pbem_spec).encode(),
    }
    directory.mkdir(parents=True, exist_ok=True)
    ws = Workspace(GameRepo.init(directory))
    ws.commit(files, me, f"{game_id}: new game from template {source.name}")
    return ws


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
    files[GAME] = _replace_seat_line(files[GAME], doc.line_of(("players", index)), seat, doc.data)
    return ws.commit(files, me, f"join: {seat_id} takes a seat")


def check_invite(invite_hash: object, code: str | None) -> None:
    """Refuse a join without the right invite code when the game has one (stored salted and hashed, so the
    public repository does not give it away; see pbem.rulesets.dow.invite). The code never enters the repository:
    this is the game's door, checked by the joining player's pbem, not a rule the verifier can re-check."""
    if invite_hash is None:
        return
    from pbem.rulesets.dow import invite

    if code is None:
        raise PbemError("setup.invite-code", "this game is joined with the invite code from its description",
                        hint="pbem join --as ID --code CODE")
    if not invite.matches(str(invite_hash), code):
        raise PbemError("setup.bad-invite-code", "that is not this game's invite code (read the game description)",
                        file=GAME, exit_code=1)


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


def start_roll(ws: Workspace, me: Identity) -> tuple[str, str | None]:
    """`pbem start --roll`: decide who starts by dice (seed 000 §2.A), in two steps. The first call announces
    a batch of one die with as many sides as players; once every other player has contributed (`pbem yield`)
    and the roller revealed (`pbem yield`), or the escrow signed, the second call starts the game with the
    player the die names. Returns (commit id, the first player once started)."""
    files = ws.head_files()
    game = ws.game_of(files)
    if STATUS in files:
        raise PbemError("setup.started", "the game has already started", exit_code=1)
    batch = start_batch(game)
    if batch is None:
        player = who(game, me.public)
        if player not in game.manifest.players:
            raise PbemError("signature.unknown-key", "only a seated player rolls for who starts", exit_code=1)
        from pbem.services import chance

        batch_id = chance.announce(files, game, me, player, ["who starts"], ["start"], len(game.manifest.players))
        return ws.commit(files, me, f"start --roll: dice {batch_id} decide who starts"), None
    if batch.results is None:
        from pbem.protocol.dice import owed

        waiting = "; ".join(f"{b.player}: {b.why}" for b in owed(game.manifest.players, [batch], None))
        raise PbemError("dice.owed", f"dice {batch.id} for who starts are not rolled yet ({waiting}); each runs "
                        "`pbem yield` (or the escrow `pbem escrow sign`)")
    first = start_choice(batch, game.manifest.players)
    if first is None:
        raise PbemError("dice.bad-sides", f"dice {batch.id} for who starts roll a d{batch.sides}, but the table has "
                        f"{len(game.manifest.players)} seats: void it (pbem dice void) and roll again",
                        file=batch.file, line=batch.line_of("sides"), exit_code=ILLEGAL)
    return start(ws, first, me), first
