"""`pbem watch`: each player's autopilot on his own machine, with his own key (DESIGN §4.7, §8).

One round: fetch and fast-forward (`pbem pull`'s service); settle what needs no decision, in one signed commit
made by the same code `pbem yield` uses for what one owes (his dice contributions and commitments, the reveals
that are due, a sealed step's reveal once every side has sealed; with the escrow key, the escrow's signatures);
publish with `pbem push`'s service; and tell the player, once each, about every decision that is his (holding
control, a sealed input to write, a signature asked of him). It never writes orders, entries, press or
signatures on agreements: what it commits is computed from HEAD alone, never from the working tree, and his
uncommitted edits are put back as they were.

The loop (`watch`) is `one_round` repeated, with the clock, the sleep and the notifier injected; a network
error or a refused push is said and retried later with a bounded backoff; Ctrl-C or SIGTERM ends it.
"""

from __future__ import annotations

import json
import os
import shutil
import smtplib
import ssl
import subprocess
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from pbem.errors import PbemError
from pbem.protocol.dice import ESCROW
from pbem.protocol.model import Status
from pbem.render.status_screen import holds_turn
from pbem.services import clonelock, gitstate, stopping, turn
from pbem.services.gitstate import Git, run_git
from pbem.services.pull import pull
from pbem.services.push import push
from pbem.services.workspace import Identity, Workspace
from pbem.files.layout import STATUS

AUTOMATIC = ("dice", "secret")  # owed items settled without a decision (DESIGN §5, §6); "sealed" is a decision
STATE_FILE = "pbem-watch.json"  # in .git: the decisions already told, so each is told once
REMEMBERED = 200  # at most this many told decisions are kept (the oldest are forgotten first)
MAX_BACKOFF = 600.0  # seconds: the longest wait after repeated failures


# --- the pure decision -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    """Something only the player may decide, with a stable key (told once) and one line saying what to do."""

    key: str
    text: str


def settleable(status: Status | None, me: str | None) -> bool:
    """Whether `me` owes something at this status that needs no decision (dice, reveals; the escrow's
    signatures)."""
    if status is None or status.over or me is None:
        return False
    return any(b.player == me and (b.kind in AUTOMATIC or me == ESCROW) for b in status.pending)


def decisions(status: Status | None, me: str | None, waiting_signatures: Sequence[str] = (),
              sealed_command: str | None = None) -> list[Decision]:
    """What only `me` may decide now: each sealed input he owes (given with `sealed_command`, the ruleset's way),
    holding control for a turn, each signature asked of him (`waiting_signatures`, lines naming him). Pure."""
    if status is None or status.over or me is None or me == ESCROW:
        return []
    out: list[Decision] = []
    for b in status.pending:
        if b.player == me and b.kind not in AUTOMATIC and b.kind in turn.OWED:
            how = (f"seal it: `{sealed_command}`" if b.kind == "sealed" and sealed_command else
                   "`pbem status` says how")
            out.append(Decision(f"{b.kind}:{b.at}:{b.why}", f"{b.why}: {how}"))
    if holds_turn(status, me):
        why = status.pending[0].why if status.pending else "your turn"
        out.append(Decision(f"control:{status.firm}:{why}", f"you hold control ({why}): `pbem status`, then "
                            "`pbem yield`"))
    for line in waiting_signatures:
        out.append(Decision(f"sign:{line}", line))
    return out


# --- telling the player --------------------------------------------------------------------------------------

@dataclass
class SmtpConfig:
    """Where e-mail goes: PBEM_SMTP_HOST/PORT/USER/PASSWORD/TO/FROM/STARTTLS/CAFILE, or a [smtp] table in a TOML
    file. `cafile`: the CA certificates that sign the server's (a server of one's own), else the system's."""

    host: str
    to: str
    port: int = 25
    user: str | None = None
    password: str | None = None
    sender: str | None = None
    starttls: bool = False
    cafile: str | None = None


def smtp_config(environ: Mapping[str, str], path: Path | None = None) -> SmtpConfig | None:
    """The SMTP settings: the file's [smtp] table, overridden by the environment; None without a host and a
    recipient (no e-mail)."""
    values: dict[str, object] = {}
    if path is not None and path.is_file():
        toml = _toml()
        try:
            values.update(toml.loads(path.read_text()).get("smtp", {}))
        except (toml.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise PbemError("watch.config", f"{path}: not a TOML file ({exc})") from None
    for name in ("host", "port", "user", "password", "to", "from", "starttls", "cafile"):
        if environ.get(f"PBEM_SMTP_{name.upper()}"):
            values[name] = environ[f"PBEM_SMTP_{name.upper()}"]
    if not values.get("host") or not values.get("to"):
        return None
    flag = values.get("starttls", False)
    given = values.get("port", 25)
    try:  # a TOML array, table or date is no number either; `inf` overflows
        port = int(given) if isinstance(given, (str, int, float)) else None
    except (ValueError, OverflowError):
        port = None
    if port is None:
        raise PbemError("watch.config", f"SMTP port {given!r} is not a number")
    return SmtpConfig(str(values["host"]), str(values["to"]), port,
                      str(values["user"]) if values.get("user") else None,
                      str(values["password"]) if values.get("password") else None,
                      str(values["from"]) if values.get("from") else None,
                      flag if isinstance(flag, bool) else str(flag).lower() in ("1", "true", "yes", "on"),
                      str(values["cafile"]) if values.get("cafile") else None)


def _toml() -> Any:
    """The TOML reader: the standard library's from Python 3.11, else tomli (the same code, a declared dependency
    for 3.10)."""
    try:
        import tomllib
    except ModuleNotFoundError:
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib


@dataclass
class Notifier:
    """Tells the player: a terminal line always, a desktop notification where `notify-send` exists, an e-mail
    when SMTP is configured. Desktop and e-mail never fail the watch: a failure is one terminal line."""

    echo: Callable[[str], None]
    smtp: SmtpConfig | None = None
    desktop: bool = True

    def say(self, line: str) -> None:
        self.echo(line)

    def decision(self, game: str, text: str) -> None:
        self.echo(f"your decision: {text}")
        if self.desktop:
            self._desktop(game, text)
        if self.smtp is not None:
            try:
                send_mail(self.smtp, f"pbem {game}: your decision", text)
            except (OSError, smtplib.SMTPException) as exc:
                self.echo(f"e-mail not sent: {mail_error(exc, self.smtp)}; will not retry this one")

    def _desktop(self, game: str, text: str) -> None:
        program = shutil.which("notify-send")
        if program is None:
            return
        try:
            subprocess.run([program, f"pbem {game}", text], timeout=5, capture_output=True, check=False)
        except (OSError, subprocess.SubprocessError):
            pass  # a desktop that does not answer is no reason to stop settling the game


def send_mail(config: SmtpConfig, subject: str, body: str, timeout: float = 20.0) -> None:
    """One plain-text e-mail through SMTP (STARTTLS and login when configured). With `starttls`, a server that
    offers no STARTTLS, or whose certificate does not verify (against `cafile`, else the system's CAs), is left
    before the login: the password never travels in the clear."""
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = config.sender or config.user or f"pbem-watch@{config.host}"
    message["To"] = config.to
    message.set_content(body + "\n")
    with smtplib.SMTP(config.host, config.port, timeout=timeout) as server:
        if config.starttls:
            server.starttls(context=ssl.create_default_context(cafile=config.cafile))
        if config.user and config.password:
            _login(server, config.user, config.password)
        server.send_message(message)


def _login(server: smtplib.SMTP, user: str, password: str) -> None:
    """Log in with one mechanism, PLAIN where offered (else LOGIN, else smtplib's choice): smtplib's own login
    tries the next mechanism after a refused password, the same wrong password again."""
    server.ehlo_or_helo_if_needed()
    offered = server.esmtp_features.get("auth", "").upper().split()
    mechanism = next((m for m in ("PLAIN", "LOGIN") if m in offered), None)
    if mechanism is None:
        server.login(user, password)
        return
    server.user, server.password = user, password
    server.auth(mechanism, getattr(server, f"auth_{mechanism.lower()}"))


def mail_error(exc: BaseException, config: SmtpConfig) -> str:
    """Why an e-mail was not sent, in one line a player can act on."""
    where = f"{config.host}:{config.port}"
    if isinstance(exc, smtplib.SMTPNotSupportedError) and config.starttls:
        return (f"{where} offers no STARTTLS and the settings demand it (starttls); nothing was sent, the password "
                "neither")
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return f"{where} refused the login of {config.user!r} ({exc.smtp_code} {_reply(exc.smtp_error)})"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (f"the certificate of {where} does not verify ({exc.verify_message}): set PBEM_SMTP_CAFILE (or "
                "cafile) to the CA file that signed it")
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"{where} said {exc.smtp_code} {_reply(exc.smtp_error)}"
    return f"{where}: {exc.__class__.__name__}: {exc}"


def _reply(text: bytes | str) -> str:
    line = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return " ".join(line.split())


# --- remembering what was told -------------------------------------------------------------------------------

def _state_path(ws: Workspace) -> Path:
    return Path(ws.repo.repo.path) / STATE_FILE


def load_told(ws: Workspace) -> list[str]:
    try:
        data = json.loads(_state_path(ws).read_text())
    except (OSError, ValueError):
        return []
    told = data.get("told", []) if isinstance(data, dict) else []
    return [str(k) for k in told][-REMEMBERED:]


def save_told(ws: Workspace, told: list[str]) -> None:
    path = _state_path(ws)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"told": told[-REMEMBERED:]}))
    tmp.replace(path)


# --- one round -----------------------------------------------------------------------------------------------

@dataclass
class Round:
    """What one round did: lines said, what was settled, the decisions told, and whether something it tried
    was refused (or could not be reached)."""

    lines: list[str] = field(default_factory=list)
    settled: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)
    refused: bool = False
    unreachable: bool = False
    over: str | None = None  # the game is over: how it ended, in one line (the loop stops)


@dataclass
class Seen:
    """Where the last clean round left the clone: its HEAD and the remote's tip. A round that finds both where
    they were has nothing to pull, settle, push or tell, and costs one `git ls-remote`."""

    head: str | None = None
    remote: str | None = None

    def unchanged(self, ws: Workspace, remote: str | None, git: Git) -> bool:
        if self.head is None or self.remote is None or ws.repo.head_oid() != self.head:
            return False
        up = gitstate.upstream(ws.repo, remote, required=False)
        return up is not None and gitstate.remote_tip(ws.root, up, git) == self.remote

    def remember(self, ws: Workspace, remote: str | None, clean: bool) -> None:
        up = gitstate.upstream(ws.repo, remote, required=False) if clean else None
        self.head = ws.repo.head_oid() if up is not None else None
        self.remote = gitstate.known(ws.repo, up) if up is not None else None


def one_round(ws: Workspace, me: Identity, notifier: Notifier, remote: str | None = None,
              git: Git = run_git, seen: Seen | None = None) -> Round:
    """Pull, settle, push, tell (see the module docstring). Never raises a PbemError: it is said and counted.
    With `seen` (the loop's memory), a round that finds nothing changed since the last clean one does nothing."""
    if seen is not None and seen.unchanged(ws, remote, git):
        return Round()
    out = _round(ws, me, notifier, remote, git)
    if seen is not None:
        seen.remember(Workspace.open(ws.root), remote, not out.refused)
    return out


def _round(ws: Workspace, me: Identity, notifier: Notifier, remote: str | None, git: Git) -> Round:
    out = Round()

    def say(line: str) -> None:
        out.lines.append(line)
        notifier.say(line)

    try:
        said = pull(ws, remote, git).message
        if not said.startswith("up to date"):
            say(said)
    except PbemError as exc:
        say(f"not pulled: {exc}")
        out.unreachable = exc.finding.rule == "push.fetch-failed"
        out.refused = True
        if exc.finding.rule.endswith(".rewritten") or exc.finding.rule.endswith("remote-invalid"):
            return out  # never build on a rewritten or invalid remote
    ws = Workspace.open(ws.root)  # the pull may have moved HEAD: read it afresh
    try:
        out.settled = settle_owed(ws, me)
    except PbemError as exc:
        say(f"nothing settled: {exc}")
        out.refused = True
    if out.settled:
        say("settled: " + "; ".join(out.settled))
    if not out.unreachable and _ahead(ws):
        try:
            pushed = push(ws, me, remote, git)
            say(pushed.message.splitlines()[0] if pushed.code == 0 else
                " ".join([pushed.message.splitlines()[0], *(f.text() for f in pushed.findings),
                          *pushed.message.splitlines()[1:]]))
            out.refused = out.refused or pushed.code != 0
        except PbemError as exc:
            say(f"not pushed: {exc}")
            out.refused = True
        ws = Workspace.open(ws.root)
    tell(ws, me, notifier, out)
    return out


def _ahead(ws: Workspace) -> bool:
    found = gitstate.behind_ahead(ws.repo)
    if found is None:
        return gitstate.upstream(ws.repo, required=False) is not None and ws.repo.head_oid() is not None
    return found[2] > 0


def settle_owed(ws: Workspace, me: Identity) -> list[str]:
    """Commit what my key owes that needs no decision, from HEAD's files only (the working tree's edits are
    neither read nor lost), with the code `pbem yield` uses; the escrow key signs the open escrow batches.
    Returns what was settled (empty: nothing owed)."""
    from pbem.services import chance

    head = ws.head()
    if head is None:
        return []
    player = turn.whoami(ws, me)
    if player is None:
        return []
    if head.started and not settleable(head.status, player):
        return []
    edits = _edits(ws)
    try:
        if player == ESCROW:
            return turn.commit_escrow(ws, me, chance.private_key(me))
        base = ws.head_files()
        if not head.started:
            # before the start: the dice that decide who starts (`pbem start --roll`), as `pbem yield` settles them
            done = chance.settle_dice(base, ws.game_of(base), me, player)
            if done:
                ws.commit(base, me, f"{player}: " + "; ".join(done))
            return done
        plan = turn._plan_turn(ws, head, base, dict(base), me, player, "")
        if not plan.settled:
            return []
        if plan.findings:
            raise PbemError.from_finding(plan.findings[0])
        ws.write_commits([plan.commit])
        return plan.settled
    finally:
        _restore(ws, edits)


def _edits(ws: Workspace) -> dict[str, bytes | None]:
    """The player's uncommitted edits to game files (None: deleted), to put back after a commit."""
    head, tree = ws.head_files(), ws.worktree_files()
    return {p: tree.get(p) for p in set(head) | set(tree) if p != STATUS and head.get(p) != tree.get(p)}


def _restore(ws: Workspace, edits: dict[str, bytes | None]) -> None:
    for path, data in edits.items():
        if data is None:
            target = ws.root / path
            if target.exists():
                target.unlink()
        else:
            ws.write_files({path: data})


def tell(ws: Workspace, me: Identity, notifier: Notifier, out: Round) -> None:
    """Tell each decision that is mine once (remembered in .git/pbem-watch.json)."""
    head = ws.head()
    if head is None:
        return
    player = turn.whoami(ws, me)
    game = head.game.manifest.id
    if head.status is not None and head.status.over:
        from pbem.services.agreements import result

        out.over = f"the game is over ({result(head.game) or 'replay reached its end'})"
    waiting = [line for line in turn.errata_lines(ws)
               if player and player in line.rpartition("to sign: ")[2].split(", ")]
    told = load_told(ws)
    from pbem.services.pictures import COMMANDS

    sealed = COMMANDS.get(head.game.manifest.ruleset_name, ("pbem seal note FILE && pbem yield",))[0]
    fresh = [d for d in decisions(head.status, player, waiting, sealed) if d.key not in told]
    for d in fresh:
        notifier.decision(str(game), d.text)
        out.told.append(d.text)
    if fresh:
        save_told(ws, told + [d.key for d in fresh])


# --- the loop ------------------------------------------------------------------------------------------------

def watch(root: Path, me: Identity, notifier: Notifier, *, once: bool = False, interval: float = 60.0,
          remote: str | None = None, sleep: Callable[[float], None] = time.sleep,
          rounds: int | None = None, git: Git = run_git) -> int:
    """Run rounds until Ctrl-C or SIGTERM (or once; services/stopping.py); returns the exit code: 0, or 1 when
    `once` and something it tried was refused. After a failure the wait doubles, up to MAX_BACKOFF; a good round
    brings it back to `interval`."""
    failures = 0
    done = 0
    seen = Seen()
    try:
        with stopping.handled() as stopper:
            while True:
                with stopper.round():
                    result = locked_round(root, me, notifier, remote, git, seen)
                done += 1
                if result.over is not None and not result.refused:
                    notifier.say(f"{result.over}: nothing more to watch, pbem watch stops (read it whole: "
                                 "`pbem log --html --out game.html`)")
                    return 0
                if once:
                    return 1 if result.refused else 0
                failures = failures + 1 if result.refused else 0
                wait = min(interval * (2 ** failures), max(MAX_BACKOFF, interval)) if failures else interval
                if failures:
                    notifier.say(f"trying again in {wait:.0f} s")
                if rounds is not None and done >= rounds:
                    return 0
                sleep(wait)
    except KeyboardInterrupt:
        notifier.say("pbem watch stopped")
        return 0


def locked_round(root: Path, me: Identity, notifier: Notifier, remote: str | None = None,
                 git: Git = run_git, seen: Seen | None = None, wait: float = clonelock.WAIT) -> Round:
    """One round holding the clone's lock, so that a command the player types meanwhile waits for it (and the
    round for the command): services/clonelock.py."""
    ws = Workspace.open(root)
    try:
        with clonelock.held(ws.repo.git_dir, wait):
            return one_round(Workspace.open(root), me, notifier, remote, git, seen)
    except PbemError as exc:  # the clone stayed busy: said, and tried again after the wait
        notifier.say(f"round skipped: {exc}")
        return Round([str(exc)], refused=True)


def environment_smtp(config: Path | None) -> SmtpConfig | None:
    """SMTP settings from PBEM_WATCH_CONFIG / `config` / ~/.config/pbem/watch.toml, and the environment."""
    path = config or (Path(os.environ["PBEM_WATCH_CONFIG"]) if os.environ.get("PBEM_WATCH_CONFIG") else
                      Path.home() / ".config" / "pbem" / "watch.toml")
    return smtp_config(os.environ, path)
