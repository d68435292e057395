"""Fetch what each commit brings, ahead of the judging, on the machine's other core (issue 7).

Verifying a long history is two kinds of work. Checking a commit's signature, listing what its tree changed and
reading the changed blobs depend on nothing but the commit and the tree before it; reading the files and
judging the turn depend on everything before. The first kind runs in a second process, a chunk of commits
ahead of the second: the judge receives, per commit, what `check_signature` found, the paths that changed and
their contents (status.yaml's YAML loaded too, to even out the work of the two), and does the rest itself, exactly as
without a helper. If the helper stops early, for any
reason, the judge goes on alone from where it got to.

Only worth it for long histories (starting a process costs some milliseconds); below `PIPELINE_MIN` commits a
thread checks the signatures ahead instead (`signatures_ahead`).
"""

from __future__ import annotations

import os
import pickle
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Optional

from pbem.crypto import sshsig
from pbem.crypto.keys import PublicKey
from pbem.errors import Finding, PbemError
from pbem.store.commits import parse_commit
from pbem.store.repo import GameRepo
from pbem.formats import yamlsafe
from pbem.formats.yamlsafe import Document
from pbem.store.trees import TreeWalker
from pbem.verify.gamefiles import STATUS

PIPELINE_MIN = int(os.environ.get("PBEM_PIPELINE_MIN", "1000"))  # tests lower it to run the pipeline on small games
CHUNK = 64

Signed = tuple[str, Optional[str], Optional[PublicKey], Optional[Finding]]  # summary, tree, signer, finding
Files = Mapping[str, tuple[str, int]]


@dataclass
class Fetched:
    """What one commit brings: its signature check, then the tree's changes against the tree fetched before it
    (path -> (blob id, mode), None when gone) or the finding why the tree cannot be read, and the changed
    blobs' contents by id."""

    signed: Signed
    changes: dict[str, Optional[tuple[str, int]]] | None = None
    problem: Finding | None = None
    blobs: dict[str, bytes] = field(default_factory=dict)
    statuses: dict[str, Document] = field(default_factory=dict)  # status.yaml loaded, by blob id (if it loads)


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


def fetch(repo: GameRepo, walker: TreeWalker, oid: str) -> Fetched:
    """One commit's `Fetched`, moving `walker` on to its tree (it stays put when the tree cannot be read)."""
    signed = check_signature(repo, oid)
    try:
        files, changed = walker.advance(oid, signed[1] or repo.tree_id(oid))
    except PbemError as exc:
        return Fetched(signed, problem=exc.finding.at(commit=oid))
    blobs, statuses = {}, {}
    for path in changed:
        if path in files:
            try:
                blobs[files[path][0]] = repo.read_blob(files[path][0])
                if path == STATUS:  # the one file every commit changes, read here to share the work out
                    statuses[files[path][0]] = yamlsafe.load(blobs[files[path][0]], STATUS)
            except PbemError:
                pass  # the judge reads it again and meets the same finding there
    return Fetched(signed, {p: files.get(p) for p in changed}, None, blobs, statuses)


def can_fetch_ahead() -> bool:
    """A second core, and processes started by fork (the helper inherits the commit list, nothing is sent)."""
    import multiprocessing  # here: one new commit on a kept state needs neither processes nor threads

    return (os.cpu_count() or 1) > 1 and "fork" in multiprocessing.get_all_start_methods()


def fetched_ahead(repo: GameRepo, oids: list[str], start: Files) -> Iterator[Fetched]:
    """`fetch` of each commit in order, by a second process; `start`: the files of the tree before the first.
    Ends early (yielding fewer than `oids`) if the helper stops; the caller goes on alone."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    helper = context.Process(target=_helper, args=(repo, oids, dict(start), send), daemon=True)
    helper.start()
    send.close()
    try:
        done = 0
        while done < len(oids):
            try:
                chunk = pickle.loads(receive.recv_bytes())  # noqa: S301 - our own child, through our own pipe
            except (EOFError, OSError, pickle.UnpicklingError):
                return
            yield from chunk
            done += len(chunk)
    finally:
        receive.close()
        helper.join(timeout=1)
        if helper.is_alive():
            helper.terminate()


def _helper(parent: GameRepo, oids: list[str], start: dict, send: object) -> None:
    try:
        repo = parent.reopen()
        walker = TreeWalker(repo)
        walker.files = start
        for i in range(0, len(oids), CHUNK):
            send.send_bytes(pickle.dumps([fetch(repo, walker, oid) for oid in oids[i:i + CHUNK]],  # type: ignore[attr-defined]
                                         protocol=pickle.HIGHEST_PROTOCOL))
    except BaseException:  # noqa: BLE001 - the judge notices the early end and goes on alone
        pass
    finally:
        os._exit(0)  # a forked child: no atexit handlers, no flushing of the parent's buffers


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
