"""Fetch what each commit brings, ahead of the judging, on the machine's other core.

Verifying a long history is two kinds of work. Checking a commit's signature, listing what its tree changed and
reading the changed blobs depend on nothing but the commit and the tree before it; reading the files and
judging the turn depend on everything before. The first kind runs in a second process, a chunk of commits
ahead of the second: the judge receives, per commit, what `check_signature` found, the paths that changed and
their contents (a report file that grew as its growth), and does the rest itself, exactly as without a helper.
While the helper is far enough ahead (`LEAD`), it also reads status.yaml, the players files and the lines
appended to report files, which the judge then takes as read, so the work shares itself out between the two
cores. If the helper stops early, for any reason, the judge goes on alone from where it got to.

Only worth it for long histories (starting a process costs some milliseconds); below `PIPELINE_MIN` commits a
thread checks the signatures ahead instead (`signatures_ahead`).
"""

from __future__ import annotations

import os
import pickle
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Callable, Optional

from pbem.crypto import sshsig
from pbem.crypto.keys import PublicKey
from pbem.errors import Finding, PbemError
from pbem.store.commits import parse_commit
from pbem.store.repo import GameRepo
from pbem.store.trees import TreeWalker
from pbem.protocol.model import Status
from pbem.files.layout import GAME, PLAYERS_RE, REPORT_RE, STATUS
from pbem.files.lines import LineKey, entries_ahead
from pbem.files.readers import read_manifest, read_players, read_status
from pbem.protocol.model import Entry, PlayerInputs
from pbem.rulesets.base import Ruleset

PIPELINE_MIN = int(os.environ.get("PBEM_PIPELINE_MIN", "1000"))  # tests lower it to run the pipeline on small games
CHUNK = 64
PIPE_BYTES = 1 << 20  # Linux's most for a pipe by default (/proc/sys/fs/pipe-max-size)
LEAD = 2 * CHUNK  # commits the helper keeps ahead of the judge before it takes on more of the work (`_helper`)
SENT = 32  # status.yaml versions the helper remembers having sent

Signed = tuple[str, Optional[str], Optional[PublicKey], Optional[Finding]]  # summary, tree, signer, finding
Files = Mapping[str, tuple[str, int]]
RulesetOf = Callable[[Files], Optional[Ruleset]]  # the ruleset a tree's game.yaml names, None if it does not read


@dataclass
class Fetched:
    """What one commit brings: its signature check, then the tree's changes against the tree fetched before it
    (path -> (blob id, mode), None when gone) or the finding why the tree cannot be read, and the changed
    blobs' contents by id."""

    signed: Signed
    changes: dict[str, Optional[tuple[str, int]]] | None = None
    problem: Finding | None = None
    blobs: dict[str, bytes] = field(default_factory=dict)
    # A report file that only grew is sent as what it appended to its version before: blob id -> (its path,
    # the earlier version's blob id, the appended bytes). Most of a commit's bytes are its report file.
    grown: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)
    statuses: dict[str, Status] = field(default_factory=dict)  # status.yaml read, by blob id (if it reads)
    lines: dict[LineKey, Entry] = field(default_factory=dict)  # the entries of the lines a report file appended
    players: dict[tuple[str, str, str], PlayerInputs] = field(default_factory=dict)  # by blob, path, ruleset


def check_signature(repo: GameRepo, oid: str) -> Signed:
    """The commit's first message line, its tree, and the key that signed it, or the finding why not (DESIGN
    §3: strict layout, SSHSIG). Depends on nothing but the commit, so it may run ahead of the judging."""
    summary, tree = "", None
    try:
        commit = parse_commit(repo.raw_commit(oid))
        tree = commit.tree
        summary = commit.message.decode("utf-8", "replace").strip().splitlines()[0:1][0] \
            if commit.message.strip() else ""
        if commit.signature is None:
            raise PbemError("signature.missing", "the commit is not signed", exit_code=1)
        return summary, tree, sshsig.verify(commit.signature, commit.signed_payload()), None
    except PbemError as exc:
        return summary, tree, None, exc.finding.at(commit=oid)


def fetch(repo: GameRepo, walker: TreeWalker, oid: str, reports: dict[str, tuple[str, bytes]] | None = None,
          read_status_too: bool = True, sent: dict[str, None] | None = None,
          rules: RulesetOf | None = None) -> Fetched:
    """One commit's `Fetched`, moving `walker` on to its tree (it stays put when the tree cannot be read).
    `reports`: the report files as last fetched (path -> (blob id, content)), to send only their growth;
    with `rules`, the entries of the lines they appended and the players files, as read by the ruleset of the
    commit's game.yaml;
    `read_status_too`: read status.yaml here as well, unless it is a version among `sent` (the last ones read
    and sent: the judge keeps what it was sent by blob id, and most commits rewrite status.yaml into a version
    a commit shortly before had)."""
    signed = check_signature(repo, oid)
    try:
        files, changed = walker.advance(oid, signed[1] or repo.tree_id(oid))
    except PbemError as exc:
        return Fetched(signed, problem=exc.finding.at(commit=oid))
    fetched = Fetched(signed, {p: files.get(p) for p in changed})
    for path in changed:
        if path not in files:
            continue
        blob = files[path][0]
        try:
            data = repo.read_blob(blob)
        except PbemError:
            continue  # the judge reads it again and meets the same finding there
        report = reports is not None and REPORT_RE.match(path) is not None
        before = reports.get(path) if report else None  # type: ignore[union-attr]
        if before is not None and len(data) > len(before[1]) and data.startswith(before[1]):
            fetched.grown[blob] = (path, before[0], data[len(before[1]):])
            ruleset = rules(files) if rules is not None else None
            if ruleset is not None:  # the lines the judge would read now, read here while it judges
                fetched.lines.update(entries_ahead(path, before[1], data[len(before[1]):], ruleset))
        else:
            fetched.blobs[blob] = data
            ruleset = rules(files) if rules is not None and PLAYERS_RE.match(path) else None
            if ruleset is not None:  # a player's horizon: most commits move one
                try:
                    fetched.players[(blob, path, ruleset.name)] = read_players(data, path, ruleset)
                except PbemError:
                    pass  # the judge reads it again and meets the same finding there
        if report:
            reports[path] = (blob, data)  # type: ignore[index]
        if path == STATUS and read_status_too and (sent is None or blob not in sent):
            try:  # the one file every commit changes: work to share out
                fetched.statuses[blob] = read_status(data)
            except PbemError:
                continue
            if sent is not None:
                sent[blob] = None
                if len(sent) > SENT:
                    del sent[next(iter(sent))]
    return fetched


def can_fetch_ahead() -> bool:
    """A second core, and processes started by fork (the helper inherits the commit list, nothing is sent)."""
    import multiprocessing  # here: one new commit on a kept state needs neither processes nor threads

    return (os.cpu_count() or 1) > 1 and "fork" in multiprocessing.get_all_start_methods()


def fetched_ahead(repo: GameRepo, oids: list[str], start: Files) -> Iterator[Fetched]:
    """`fetch` of each commit in order, by a second process; `start`: the files of the tree before the first.
    Ends early (yielding fewer than `oids`) if the helper stops; the caller goes on alone."""
    import multiprocessing

    rules = ruleset_of(repo)
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    _widen(send)
    taken = context.Value("q", 0, lock=False)  # commits the judge has judged: how far ahead the helper is
    helper = context.Process(target=_helper, args=(repo, oids, dict(start), send, taken, rules), daemon=True)
    helper.start()
    send.close()
    _first_ruleset(repo, rules, oids[0], start)
    try:
        done = 0
        while done < len(oids):
            try:
                chunk = pickle.loads(receive.recv_bytes())  # noqa: S301 - our own child, through our own pipe
            except (EOFError, OSError, pickle.UnpicklingError):
                return
            for item in chunk:
                yield item
                done += 1  # asked for the next: this one is judged
                taken.value = done
    finally:
        receive.close()
        helper.join(timeout=1)
        if helper.is_alive():
            helper.terminate()


def _widen(pipe: object) -> None:
    """Room in the pipe for some chunks (Linux's default holds about one), so that the helper can get far enough
    ahead to take work off the judge (`LEAD`); elsewhere it stays as it is."""
    import fcntl

    try:
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        pass


def _first_ruleset(repo: GameRepo, rules: RulesetOf, oid: str, start: Files) -> None:
    """The ruleset of the first commit's game, read by the judge while the helper fetches the first chunk: its
    modules, the YAML loader and the manifest's schema (some 25 ms) are then imported while the judge would
    otherwise wait, not at its first commit. Anything that does not read is left to the judge to name."""
    try:
        files = start if GAME in start else repo.tree_files(oid)
    except PbemError:
        return
    rules(files)


def _helper(parent: GameRepo, oids: list[str], start: dict, send: object, taken: object,
            rules: RulesetOf) -> None:
    try:
        repo = parent.reopen()
        walker = TreeWalker(repo)
        walker.files = start
        reports: dict[str, tuple[str, bytes]] = {}
        sent: dict[str, None] = {}
        chunk: list[Fetched] = []
        for i, oid in enumerate(oids):
            # The work is shared out as it goes, commit by commit: the helper reads status.yaml, the players
            # files and the appended report lines too while it is more than `LEAD` commits ahead of the judge (the judge being the
            # slower), and leaves them to the judge otherwise.
            spare = i - taken.value > LEAD  # type: ignore[attr-defined]
            chunk.append(fetch(repo, walker, oid, reports, spare, sent, rules if spare else None))
            if len(chunk) == CHUNK or i == len(oids) - 1:
                send.send_bytes(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL))  # type: ignore[attr-defined]
                chunk = []
    except BaseException:  # noqa: BLE001 - the judge notices the early end and goes on alone
        pass
    finally:
        os._exit(0)  # a forked child: no atexit handlers, no flushing of the parent's buffers


def ruleset_of(repo: GameRepo) -> RulesetOf:
    """`RulesetOf` for the trees of `repo`, reading game.yaml again only when it changed."""
    known: dict[str, Optional[Ruleset]] = {}

    def of(files: Files) -> Optional[Ruleset]:
        game = files.get(GAME)
        if game is None:
            return None
        if game[0] not in known:
            known.clear()
            try:
                known[game[0]] = read_manifest(repo.read_blob(game[0])).ruleset
            except PbemError:
                known[game[0]] = None
        return known[game[0]]
    return of


def signatures_ahead(repo: GameRepo, oids: list[str], chunk: int = 256) -> Iterator[Signed]:
    """`check_signature` of each commit, in order, worked out by a second thread a few hundred commits ahead:
    the signature check (libsodium, which lets go of the interpreter lock) runs on the other core while this
    one judges. The thread reads through its own handle on the repository (libgit2 handles are not shared
    between threads); memory stays bounded by the chunks in flight."""
    if len(oids) < 2 * chunk:
        for oid in oids:
            yield check_signature(repo, oid)
        return
    from concurrent.futures import ThreadPoolExecutor

    def work(part: list[str]) -> list[Signed]:
        mine = repo.reopen()
        return [check_signature(mine, oid) for oid in part]

    with ThreadPoolExecutor(max_workers=1) as pool:
        parts = [oids[i:i + chunk] for i in range(0, len(oids), chunk)]
        pending = deque(pool.submit(work, part) for part in parts[:2])
        for i in range(len(parts)):
            done = pending.popleft().result()
            if i + 2 < len(parts):
                pending.append(pool.submit(work, parts[i + 2]))
            yield from done
