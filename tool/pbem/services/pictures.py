"""Pictures of a game: `pbem render`, `pbem log --html` and the terminal screen of `pbem status`.

This module reads the history (verified, commit by commit) and hands plain data to the pure renderers in
`pbem.render`. The map of a commit is drawn from where replay stopped there (`Verified.stop.checkpoint.state`:
the state at the firm point), so every handoff shows the board as the player who got control saw it.

Map drawers are looked up by ruleset name (`DRAWERS`: what this module reads the map from, and its renderer in
`pbem.render.maps.RENDERERS`); a ruleset without one simply has no map.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable, TypedDict

from pbem.errors import PbemError
from pbem.render import html_log, tactical_svg
from pbem.render.maps import RENDERERS
from pbem.render.html_log import DiceRow, EntryRow, GameLog, HandoffView, PressRow, SecretRow
from pbem.render.status_screen import StatusView
from pbem.protocol.model import ROLL
from pbem.services import gitstate, report, results, tactical_board
from pbem.store.repo import GameRepo
from pbem.verify import history
from pbem.verify.history import HistoryResult
from pbem.protocol.verified import Verified

# --- history with the state at every commit --------------------------------------------------------------------

def walk(repo: GameRepo, tip: str | None = None) -> tuple[HistoryResult, list[Verified | None]]:
    """Verify the history to `tip` (default HEAD) as `pbem verify` does, keeping what is known after each
    commit (None for a commit that could not be judged)."""
    tip = tip or repo.head_oid()
    if tip is None:
        raise PbemError("repo.empty", "this repository has no commits yet")
    sequence, history_findings = history.turn_sequence(repo, tip)
    verifier = history.Verifier(repo)
    results = []
    known: list[Verified | None] = []
    for oid in sequence:
        # the verifier's own per-commit step, so the pictures can never disagree with `pbem verify`
        prev = verifier.verified
        results.append(verifier.step(oid))
        known.append(verifier.verified if verifier.verified is not prev else None)
    return HistoryResult(results, history_findings, verifier.verified, verifier.files), known


def resolve(repo: GameRepo, revision: str | None) -> str | None:
    """A revision (branch, tag, commit, HEAD~3) as a commit id (rule `repo.bad-revision`); None for HEAD."""
    return repo.resolve(revision) if revision is not None else None


# --- maps ------------------------------------------------------------------------------------------------------

class Board:
    """Draws the maps of one game; a map whose inputs equal the previous one's is not drawn again (a long game
    hands over many times at one firm point: press, dice, sealed orders)."""

    def __init__(self, viewer: str | None = None, with_control: bool = True) -> None:
        self.viewer = viewer
        self.with_control = with_control  # the title names who holds control (a page says it beside the map)
        self._last: tuple[Any, str] | None = None
        self._memo: dict[str, Any] = {}  # what a drawer keeps from one map of this game to the next

    def svg(self, verified: Verified) -> str | None:
        """The map where replay stopped after this commit, or None (setting up, or a ruleset without a map)."""
        if verified.stop is None:
            return None
        drawer = DRAWERS.get(verified.game.manifest.ruleset_name)
        if drawer is None:
            return None
        prepare, draw = drawer
        inputs = (verified.game.manifest.ruleset_name, prepare(verified, self.viewer, self._memo),
                  self._title(verified))
        if self._last is None or self._last[0] != inputs:
            self._last = (inputs, draw(*inputs[1], title=inputs[2]))
        return self._last[1]

    def _title(self, verified: Verified) -> str:
        status = verified.status or verified.game.status
        game_id = verified.game.manifest.id
        if status is None or status.over:
            ending = results.outcome(verified) if status is not None else None
            return f"{game_id}: the game is over" + (f". {ending}" if ending else "")
        control = f", {status.control} in control" if self.with_control else ""
        return f"{game_id}: firm to {status.firm}{control}"


def board_svg(verified: Verified, viewer: str | None = None) -> str | None:
    """The map where replay stopped after this commit, or None (setting up, or a ruleset without a map)."""
    return Board(viewer).svg(verified)


def _tactical(verified: Verified, viewer: str | None, memo: dict[str, Any] | None = None) -> tuple[Any, ...]:
    """The state, rings for the `range` conditions of every player holding a pending break (DESIGN §4.3), and
    what the last impulses did (services/tactical_board.py)."""
    assert verified.stop is not None
    state = verified.stop.checkpoint.state
    status = verified.status or verified.game.status
    players = verified.game.manifest.players
    holding = [] if status is None else [p for p in players if any(b.player == p for b in status.pending)]
    breaks = {p: verified.game.inputs.of(p).breaks for p in holding}
    return state, tuple(tactical_svg.range_rings(state, breaks)), tactical_board.step_view(verified, memo)


def _dow(verified: Verified, viewer: str | None, memo: dict[str, Any] | None = None) -> tuple[Any, ...]:
    """The last phase whose orders were revealed before the firm point, after its adjudication, on the board
    at the firm point (pbem.services.dow.maps)."""
    from pbem.services.dow import maps as dow_maps  # imported only for a Diplomacy map

    return dow_maps.map_inputs(verified, viewer, memo)


# ruleset name -> what its map is read from here; how it is drawn is render.maps
MAP_INPUTS: dict[str, Callable[..., tuple[Any, ...]]] = {"tactical/1": _tactical, "dow/1": _dow}
DRAWERS: dict[str, tuple[Callable[..., tuple[Any, ...]], Callable[..., str]]] = {
    name: (read, RENDERERS[name]) for name, read in MAP_INPUTS.items()}


def render_at(repo: GameRepo, revision: str | None = None, viewer: str | None = None, phase: str | None = None,
              moment: str | None = None) -> str:
    """`pbem render`: the map at a revision (default HEAD) as SVG; Diplomacy: with `phase` and/or `moment`
    ("before"/"after" its adjudication) that phase's map (pbem.services.dow.maps.phase_svg)."""
    result = history.verify_history(repo, resolve(repo, revision))
    last = result.last
    if last is None or last.stop is None:
        raise PbemError("render.not-started", "the game has not started yet: there is no map to draw "
                        "(pbem start --first ID)")
    if phase is not None or moment is not None:
        from pbem.services.dow import maps as dow_maps  # imported only for a Diplomacy map

        return dow_maps.phase_svg(last, phase, moment or "after", viewer)
    svg = board_svg(last, viewer)
    if svg is None:
        raise PbemError("render.no-map", f"ruleset {last.game.manifest.ruleset_name} has no map to draw")
    return svg


def picture_lines(ruleset_name: str, board: Path | None = None, site: str = "game-site", repo: Path | None = None
                  ) -> list[str]:
    """The closing lines of `pbem yield` and `pbem demo` that name the game's pictures: the map file when one was
    written (else how to draw it) and how to write the game page; none for a ruleset without a map."""
    if ruleset_name not in DRAWERS:
        return []
    drawn = f"the map now: {board}" if board is not None else "the map now: pbem render --out board.svg"
    write = f"cd {repo} && pbem site {site}" if repo is not None else f"pbem site {site}"
    return [f"pictures: {drawn}; every commit with its map: {write} (then open {site}/index.html)"]


def demo_pictures(result: HistoryResult, folder: Path) -> list[str]:
    """`pbem demo`: the map at the end written to FOLDER/board.svg, and the lines that name it."""
    last = result.last
    svg = board_svg(last) if last is not None else None
    if last is None or svg is None:
        return []
    board = folder / "board.svg"
    board.write_text(svg, encoding="utf-8")
    return picture_lines(last.game.manifest.ruleset_name, board, str(folder / "site"), folder / "game")


# --- the HTML page ---------------------------------------------------------------------------------------------

def game_log(repo: GameRepo, revision: str | None = None) -> GameLog:
    """Everything `pbem log --html` shows, to `revision` (default HEAD)."""
    result, known = walk(repo, resolve(repo, revision))
    last = result.last
    if last is None:
        raise PbemError("log.no-game", "this repository holds no game yet (pbem init)")
    game = last.game
    manifest = game.manifest
    ruleset = manifest.ruleset
    firm = last.stop.checkpoint.point if last.stop is not None and not last.stop.over else None
    table = manifest.players
    listed = _listed(game)
    rows = tuple(EntryRow(text, by, unit, _doing(do), ruleset.period_of(at), firm is None or at < firm)
                 for at, text, by, unit, do, _key in listed)
    # in recognition order (the order of the commits that sent them, DESIGN §7.2); undated messages after them
    dated = [m for messages in game.inputs.press.values() for m in messages]
    undated = [m for path in sorted(game.press) for m in game.press[path] if m.at is None]
    press = tuple(PressRow(m.file.removeprefix("press/").removesuffix(".yaml"), m.at or "", m.by,
                           " ".join(f"{k} {_plain(v)}" for k, v in m.body.items() if k not in ("by", "at")))
                  for m in [*dated, *undated])
    commits = []
    turn = 0
    board = Board(with_control=False)
    written = _Written()
    for commit, verified in zip(result.commits, known):
        status = commit.status
        if status is not None:
            turn += 1
        commits.append(HandoffView(
            number=turn, oid=commit.oid, actor=commit.actor or "founder", summary=commit.summary,
            control=status.control if status is not None else None, over=bool(status and status.over),
            firm=status.firm if status is not None else None,
            pending=tuple(f"{b.player}{f' at {b.at}' if b.at else ''}: {b.why}" for b in status.pending) if status else (),
            note=status.note if status is not None and status.yielded_by == commit.actor else "",
            svg=board.svg(verified) if verified is not None and status is not None else None,
            findings=tuple(f.text() for f in commit.findings),
            lines=written.lines(verified) if verified is not None else (),
            period=_period(ruleset, status.firm if status is not None else None)))
    units: tuple[tuple[str, ...], ...] = ()
    summary = ruleset.summary
    if last.stop is not None and summary is not None:
        standing = summary.state_summary(last.stop.checkpoint.state)
        if standing:
            head = tuple(standing[0])
            units = (head, *(tuple(_plain(u.get(k)) for k in head) for u in standing))
    names = {s.id: s.name for s in manifest.seats}
    around = game.inputs.players if game.inputs.ordered_by_dice else tuple(names)  # seed §2.A: as the dice sat them
    return GameLog(
        title=manifest.title, game_id=manifest.id, ruleset=manifest.ruleset_name,
        players=tuple((p, names[p]) for p in around), standing=tuple(_standing(game.status, game)),
        firm=ruleset.format_time(firm) if firm is not None else None, entries=rows, press=press,
        over=bool(last.stop is not None and last.stop.over),
        dice=tuple(_dice_row(b) for _, b in sorted(game.batches.items())),
        secrets=tuple(_secret_row(s) for _, s in sorted(game.secrets.items())),
        commits=tuple(commits), tip=result.commits[-1].oid if result.commits else "",
        text=report.log_text(result), units=units, shots=tuple(results.shots(last)), outcome=results.outcome(last),
        colours=tactical_svg.colours(manifest.players) if manifest.ruleset_name == "tactical/1" else {})


def _listed(game: Any) -> list[tuple[Any, str, str, str, Mapping[str, Any], bytes]]:
    """The report entries and the revealed sealed inputs (DESIGN §4.7, such as Diplomacy orders) in game-time
    and table order: (at, at as written, by, unit, what, identity)."""
    ruleset, table = game.manifest.ruleset, game.manifest.players
    listed = [(e.at, e.at_text, e.by, e.unit or "", e.do, e.key) for e in game.inputs.entries]
    for (phase, player), given in game.inputs.sealed.items():
        if given.revealed and isinstance(given.value, Mapping) and any(given.value.values()):
            listed.append((ruleset.parse_time(phase), phase, player, "", given.value,
                           f"{phase}/{player}".encode()))
    listed.sort(key=lambda e: (e[0], table.index(e[2]) if e[2] in table else 99))
    return listed


def _doing(do: Mapping[str, Any]) -> str:
    return " ".join(f"{k} {_plain(v)}" for k, v in do.items())


class _Written:
    """The report lines each commit wrote: those of its game not in the previous commit's (by entry identity)."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()
        self._entries: Any = None

    def lines(self, verified: Verified) -> tuple[str, ...]:
        game = verified.game
        if game.inputs.entries is self._entries and not game.inputs.sealed:
            return ()
        self._entries = game.inputs.entries
        listed = _listed(game)
        new = tuple(" ".join(p for p in (text, by, unit) if p) + f": {_doing(do)}"
                    for _at, text, by, unit, do, key in listed if key not in self._seen)
        self._seen = {e[5] for e in listed}
        return new


def _period(ruleset: Any, firm: str | None) -> str:
    if not firm:
        return ""
    try:
        return str(ruleset.period_of(ruleset.parse_time(firm)))
    except (ValueError, TypeError, AttributeError):
        return ""


def html_at(repo: GameRepo, revision: str | None = None) -> str:
    """`pbem log --html`: the page."""
    return html_log.html_page(game_log(repo, revision))


def _standing(status: Any, game: Any = None) -> list[str]:
    if status is None:
        return ["Setting up: seats are being claimed."]
    if status.over:
        from pbem.services.agreements import result

        ended = result(game) if game is not None else None
        return ["The game is over." + (f" Result: {ended}." if ended else "")]
    lines = [f"{status.control} holds control; firm to {status.firm}."]
    lines += [f"Break for {b.player} at {b.at}: {b.why}" for b in status.pending]
    if status.note:
        lines.append(f"Note from {status.yielded_by}: “{status.note}”")
    return lines


def _dice_row(batch: Any) -> DiceRow:
    raw = batch.raw
    void = raw.get("void")
    return DiceRow(batch.id, batch.roller, batch.mode, batch.sides,
                   tuple(str(r.get("for", "")) for r in raw.get("rolls") or ()),
                   tuple(batch.results) if batch.results is not None else None,
                   str(void.get("reason", "")) if isinstance(void, Mapping) else None, str(raw.get("at", "")))


def _secret_row(secret: Any) -> SecretRow:
    raw = secret.raw
    content = ""
    if secret.revealed:
        try:
            content = json.dumps(secret.value(), ensure_ascii=False, sort_keys=True)
        except PbemError as exc:
            content = f"does not open: {exc}"
    return SecretRow(secret.id, secret.owner, str(raw.get("kind", "")), str(raw.get("concerns", "")),
                     str(raw.get("end", raw.get("step", ""))), secret.revealed, content)


def _plain(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, Mapping):
        return " ".join(f"{k}={_plain(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    return str(value)


# --- the status screen -------------------------------------------------------------------------------------------

# ruleset -> (how its sealed input is given, how a sealed input is revealed); default: pbem seal / pbem yield
# how a ruleset's sealed input is given (with what it is, in words) and how a secret due is revealed
COMMANDS = {"dow/1": ("pbem orders orders.yaml", "pbem orders --reveal", "your orders (in orders.yaml)"),
            "tactical/1": ("pbem seal allocation allocation.yaml && pbem yield", "pbem yield",
                           "your energy allocation (written in allocation.yaml, format in docs/tactical.md)")}


def status_view(ws: Any, me: str | None) -> StatusView:
    """What the terminal screen of `pbem status` shows to seat `me` (None: a key with no seat)."""
    head = ws.head()
    if head is None:
        raise PbemError("setup.not-started", "this repository has no game yet (pbem init)")
    game = head.game
    manifest = game.manifest
    status = game.status
    mine = game.inputs.of(me) if me in manifest.players else None
    report_file = None
    if status is not None and status.firm is not None:
        try:
            report_file = f"report/{manifest.ruleset.period_of(manifest.ruleset.parse_time(status.firm))}.yaml"
        except ValueError:
            report_file = None
    units: tuple[tuple[str, ...], ...] = ()
    summary = manifest.ruleset.summary
    if head.stop is not None and summary is not None:
        listed = [u for u in summary.state_summary(head.stop.checkpoint.state) if u.get("status", "active") == "active"]
        keys = [k for k in ("id", "owner", "hex", "facing", "speed", "hull") if listed and k in listed[0]]
        if listed and keys:
            units = (tuple(keys), *(tuple(_plain(u.get(k)) for k in keys) for u in listed[:8]))
    from pbem.services.chance import withheld_listing
    from pbem.services.errata import listing
    from pbem.services.setup import start_todo

    oid = ws.repo.head_oid()
    # the raw message, not the strict parse of a turn: HEAD may be a pull request's merge commit (DESIGN §3)
    message = ws.repo.repo[oid].raw_message.decode("utf-8", "replace").strip() if oid else ""
    last = f"{oid[:10]} {message.splitlines()[0]}" if oid and message else ""
    return StatusView(
        title=manifest.title, game_id=manifest.id, ruleset=manifest.ruleset_name, status=status, me=me,
        players=manifest.players, open_seats=tuple(s.id for s in manifest.seats if s.key is None),
        report_file=report_file, horizon=mine.through_text if mine is not None else None,
        breaks=tuple(_condition(c) for c in mine.breaks) if mine is not None else (), last=last, units=units,
        errata=tuple(listing(game, with_applied=False)),
        behind=gitstate.behind_line(ws.repo), sides=_sides(manifest.ruleset, status),
        voids=tuple(v.text() for v in _my_voids(head, me)), withheld=tuple(withheld_listing(game)),
        setup_todo=start_todo(game, me) if status is None else None, **_agreements(ws, game, me),
        **_commands(manifest.ruleset_name))


def _agreements(ws: Any, game: Any, me: str | None) -> dict[str, Any]:
    """The agreements waiting for my signature and the waits of owed items (DESIGN §4.8)."""
    from pbem.protocol.kinds import describe
    from pbem.services import agreements, deadlines

    mine = [a for a in sorted(game.agreements.values(), key=lambda a: a.id)
            if game.status is not None and a.kind != "start" and me in agreements.unsigned(game, a)]
    oid = ws.repo.head_oid()
    waits = tuple(w.text() for w in deadlines.waits(ws.repo, oid)) if oid and game.status is not None else ()
    return {"agreements": tuple((a.id, describe(a)) for a in mine), "waits": waits}


def _my_voids(head: Any, me: str | None) -> tuple[Any, ...]:
    from pbem.services.turn import SHOWN_VOIDS, voids_of

    return voids_of(head, me)[-SHOWN_VOIDS:]


def _sides(ruleset: Any, status: Any) -> int:
    """The die of the first roll I may owe (every die of a ruleset is alike so far)."""
    rolls = [b for b in (status.pending if status is not None else ()) if b.kind == ROLL]
    if not rolls or ruleset.dice is None:
        return 6
    ref = rolls[0].why.removeprefix("dice owed for ").split(",")[0].split(" (")[0].strip()
    try:
        return int(ruleset.dice.dice_sides(ref))
    except (AttributeError, TypeError, ValueError):
        return 6


class _Commands(TypedDict, total=False):
    """The ruleset's own spelling of the status screen's commands (`StatusView` has the defaults)."""

    sealed_command: str
    reveal_command: str
    sealed_what: str


def _commands(ruleset: str) -> _Commands:
    if ruleset not in COMMANDS:
        return {}
    sealed, reveal, what = COMMANDS[ruleset]
    return {"sealed_command": sealed, "reveal_command": reveal, "sealed_what": what}


def _condition(condition: Mapping[str, Any]) -> str:
    def flow(value: Any) -> str:
        if isinstance(value, Mapping):
            return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in value.items()) + "}"
        return str(value)

    return flow(condition)

