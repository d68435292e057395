"""No way in (issue 7): every way a player could cheat or break a game, tried for real, each refused with its rule
id and changing nothing. docs/threats.md is the catalogue: threat, defence, and the test below that proves it.

Each attack is built the way a cheater would build it, with plain tools and his own key: a hand-edited file
committed with `git commit -S` or signed in-process (GameRepo.commit_tree), a raw commit or tree object written
straight into the object database (pygit2), a signature made with `ssh-keygen` or assembled byte by byte. Then:

* `pbem verify` (as CI and the pre-receive hook run it) exits 1, names the rule and the bad commit, prints no
  traceback, and writes nothing (repository snapshot before == after); no finding lands on an honest commit;
* where the cheater could try the same through pbem (`pbem yield`), pbem refuses it and changes nothing;
* pushed to a bare repository with pbem's pre-receive hook, the push is refused and the server's ref stays.

Attacks that are NOT refused (or crash the verifier) are real bugs: they are marked
`xfail(strict=True, reason="BUG: …")` with the problem and the proposed fix, and the assertion is left as it
should be.

The game is the duel of tests/conftest.py: seats fed (alice's key) and kli (bob's key); carol and dave hold no
seat. In `played`, fed holds control at 1.9.move (his horizon ended), the 1.0.alloc entries are firm, kli's
orders reach 1.12.damage; "through 1.16.damage" is fed's legal next turn.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import nacl.secret
import pygit2
import pytest
from pygit2.enums import ObjectType

from conftest import SEATS, Table, built_from, built_once, copy_table
from gitutil import clean_env, fixed_key, run
from pbem.crypto import dice as dice_crypto
from pbem.crypto import seal, sshsig, wire
from pbem.crypto.keys import PrivateKey, allowed_signers_line
from pbem.formats.writer import dump_mapping
from pbem.store.commits import commit_payload, format_ident, parse_commit, with_signature
from pbem.store.repo import GameRepo
from pbem.store.signer import KeySigner
from test_dice_flow import (announce_out_of_turn, batch, cli, derived, pending, private, refused, sneak_as,
                            write_batch)
from test_hook import push, serve, server_ref
from test_hook import refused as push_refused

FED_GOES_ON = dict(through="1.16.damage")  # fed's legal turn in `played`
KLI_GOES_ON = dict(through="1.24.damage")  # kli's legal turn once fed went on
WORKFLOW = ".github/workflows/pbem.yml"
ANY = object()


# --- helpers: keys, raw objects ---------------------------------------------------------------------------------

def key(who: str) -> PrivateKey:
    """The private key of a seat (fed, kli) or of a key holding none (carol, dave)."""
    return fixed_key(SEATS.get(who, who))


def odb(table: Table) -> pygit2.Repository:
    return pygit2.Repository(str(table.repo_dir))


def raw_commit(table: Table, rev: str = "HEAD") -> bytes:
    return table.git("cat-file", "commit", rev).stdout


def write_object(table: Table, kind: ObjectType, data: bytes) -> str:
    """Write any bytes as an object of `kind`, unchecked: what a cheater's own tool could push."""
    return str(odb(table).odb.write(kind, data))


def land(table: Table, raw: bytes) -> str:
    """Write a raw commit object and point main at it (HEAD follows); the working tree is left alone."""
    oid = write_object(table, ObjectType.COMMIT, raw)
    table.git("update-ref", "refs/heads/main", oid)
    return oid


def signed(payload: bytes, signer: PrivateKey, namespace: str = "git") -> bytes:
    return with_signature(payload, sshsig.sign(signer, payload, namespace))


def payload_of(table: Table, rev: str = "HEAD") -> bytes:
    return parse_commit(raw_commit(table, rev)).signed_payload()


def replace_header(payload: bytes, name: bytes, value: bytes) -> bytes:
    """The payload with header `name`'s (first) value replaced."""
    head, _, message = payload.partition(b"\n\n")
    lines = head.split(b"\n")
    i = next(n for n, line in enumerate(lines) if line.startswith(name + b" "))
    lines[i] = name + b" " + value
    return b"\n".join(lines) + b"\n\n" + message


def sshsig_armor(public_blob: bytes, sig: bytes, namespace: bytes = b"git", hash_name: bytes = b"sha512",
                 width: int = wire.ARMOR_WIDTH) -> str:
    """An SSHSIG assembled field by field (PROTOCOL.sshsig): any key blob, namespace, hash and signature."""
    blob = (b"SSHSIG" + wire.u32(1) + wire.string(public_blob) + wire.string(namespace) + wire.string(b"")
            + wire.string(hash_name) + wire.string(wire.string(b"ssh-ed25519") + wire.string(sig)))
    lines = wire.wrap_base64(blob, width)
    return "\n".join(["-----BEGIN SSH SIGNATURE-----", *lines, "-----END SSH SIGNATURE-----"])


def signed_data(message: bytes, namespace: bytes = b"git", hash_name: str = "sha512") -> bytes:
    return (b"SSHSIG" + wire.string(namespace) + wire.string(b"") + wire.string(hash_name.encode())
            + wire.string(hashlib.new(hash_name, message).digest()))


Entry = tuple[tuple[bytes, ...], str, int]  # path parts, object id, mode


def tree_entries(table: Table, commit: str) -> list[Entry]:
    """A commit's files as (path parts, oid, mode), for rebuilding its tree with changes."""
    files = GameRepo.open(table.repo_dir).tree_files(commit)
    return [(tuple(p.encode("utf-8", "surrogateescape").split(b"/")), oid, mode) for p, (oid, mode) in files.items()]


def write_tree(table: Table, entries: Sequence[Entry]) -> str:
    """Raw tree objects for `entries`, written without any of git's or libgit2's checks (names with '/', '..',
    duplicates, any mode on any object): a cheater's own tool can write them, and a server without
    receive.fsckObjects stores them."""
    leaves: list[tuple[bytes, int, str]] = []
    folders: dict[bytes, list[Entry]] = {}
    for parts, oid, mode in entries:
        if len(parts) == 1:
            leaves.append((parts[0], mode, oid))
        else:
            folders.setdefault(parts[0], []).append((parts[1:], oid, mode))
    leaves += [(name, 0o40000, write_tree(table, sub)) for name, sub in folders.items()]
    leaves.sort(key=lambda e: e[0] + (b"/" if e[1] == 0o40000 else b""))  # git's order (stable for twins)
    data = b"".join(f"{mode:o}".encode() + b" " + name + b"\0" + bytes.fromhex(oid) for name, mode, oid in leaves)
    return write_object(table, ObjectType.TREE, data)


def blob(table: Table, data: bytes) -> str:
    return write_object(table, ObjectType.BLOB, data)


def with_tree(table: Table, commit: str, change: Callable[[list[Entry]], list[Entry]], who: str = "fed") -> str:
    """`commit` again, same parent and message, with its tree changed by `change`, signed by `who`; main → it."""
    tree = write_tree(table, change(tree_entries(table, commit)))
    return land(table, signed(replace_header(payload_of(table, commit), b"tree", tree.encode()), key(who)))


# --- helpers: turns and verdicts -------------------------------------------------------------------------------

def legal_turn(table: Table, **edits: Any) -> str:
    """fed's legal next turn in `played` (by default: orders on to 1.16.damage), committed signed by fed."""
    table.edit("fed", **(edits or FED_GOES_ON))
    return table.sneak("fed", "fed: straight on")


def verdict(table: Table, *revision: str) -> tuple[int, list[dict[str, Any]], str]:
    """`pbem verify --format json` in this process (typer's runner, catch_exceptions=False: any exception but a
    PbemError would propagate and fail the test, exactly where the real CLI would print a traceback): exit
    code, findings, all output."""
    done = table.cli("verify", "--format", "json", *revision)
    output = done.output
    assert "Traceback" not in output, output
    try:
        findings = json.loads(done.stdout)["findings"]
    except ValueError:
        raise AssertionError(f"pbem verify printed no JSON (exit {done.exit_code}):\n{output}") from None
    return done.exit_code, findings, output


def rejected(table: Table, bad: str, rule: str, file: Any = ANY, also: Iterable[str] = ()) -> set[str]:
    """`pbem verify` exits 1, names `rule` (in `file`) for commit `bad`, finds nothing on any other commit (but
    `also`), prints no traceback and changes nothing in the repository. Returns the rules found in `bad`."""
    before = table.snapshot()
    code, findings, output = verdict(table)
    assert code == 1, output
    assert findings, output
    assert {f.get("commit") for f in findings} <= {bad, *also}, findings
    assert any(f["rule"] == rule and f.get("commit") == bad and (file is ANY or f.get("file") == file)
               for f in findings), findings
    assert table.snapshot() == before, "pbem verify changed the repository"
    return {f["rule"] for f in findings if f.get("commit") == bad}


def assert_clean(table: Table) -> None:
    code, findings, output = verdict(table)
    assert (code, findings) == (0, []), output


# === 1. Signatures and commit objects (DESIGN §3) ===============================================================

def test_forged_signature__fed_s_signature_over_a_tree_he_never_signed(played: Table) -> None:
    """Threat: fed's genuine signature (right key id, real bytes) kept on a commit whose content changed: here the
    tree of a turn that rewrites his firm speed. Defence: the signature covers the whole commit text
    (signature.invalid)."""
    honest = legal_turn(played)
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml").replace("{speed: 12}", "{speed: 20}", 1))
    other = played.sneak("fed", "the tree I want")
    commit = parse_commit(raw_commit(played, honest))
    forged = with_signature(replace_header(commit.signed_payload(), b"tree", parse_commit(raw_commit(
        played, other)).tree.encode()), commit.signature or "")
    bad = land(played, forged)
    assert rejected(played, bad, "signature.invalid") == {"signature.invalid"}


def test_key_confusion__fed_s_public_key_in_a_signature_made_with_kli_s_private_key(played: Table) -> None:
    """Threat: kli (not in control) signs a turn but writes fed's public key into the SSHSIG blob, so that the
    signature seems to name the player in control. Defence: the signature is checked against the key it names
    (signature.invalid); only then is that key looked up in game.yaml."""
    legal_turn(played)
    payload = payload_of(played)
    armored = sshsig_armor(key("fed").public.blob(), key("kli").sign_raw(signed_data(payload)))
    bad = land(played, with_signature(payload, armored))
    assert rejected(played, bad, "signature.invalid") == {"signature.invalid"}


def test_replayed_signature__kli_s_signed_turn_replayed_onto_another_parent(played: Table) -> None:
    """Threat: a valid signed turn lifted from one history (another game, or a branch) and replayed onto another:
    kli's turn re-parented straight onto the start, skipping fed's turn. Defence: the signature covers the
    `parent` line (signature.invalid); a signed turn cannot move (DESIGN §3)."""
    kli_turn = parse_commit(raw_commit(played))
    start = played.git("rev-parse", "HEAD~2").stdout.decode().strip()
    replayed = with_signature(replace_header(kli_turn.signed_payload(), b"parent", start.encode()),
                              kli_turn.signature or "")
    bad = land(played, replayed)
    assert rejected(played, bad, "signature.invalid") == {"signature.invalid"}


@pytest.mark.parametrize("how, rule", [("carol-signs", "signature.unknown-key"), ("unsigned", "signature.missing")])
def test_stranger__a_turn_committed_by_someone_without_a_seat(played: Table, how: str, rule: str) -> None:
    """Threat: a stranger's commit (a kibitzer with push access, a compromised CI token): signed with a key that
    holds no seat, or not signed at all, with fed's name as author. Defence: identity is the key in game.yaml,
    never the author line (signature.unknown-key, signature.missing)."""
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed", "a stranger's turn")
    bad = played.git_commit("fed: straight on", signer="carol" if how == "carol-signs" else None)
    assert rejected(played, bad, rule) == {rule}


def test_key_confusion__a_stranger_writes_her_own_key_into_game_yaml_in_the_same_commit(played: Table) -> None:
    """Threat: carol replaces kli's key with hers in game.yaml and signs that very commit, hoping the verifier
    reads the keys from the commit it judges. Defence: key validity comes from game.yaml at the parent
    (signature.unknown-key), and game.yaml is frozen anyway (protected.changed)."""
    text = played.read("game.yaml")
    kli_key = key("kli").public.to_line().split()[1]
    assert kli_key in text
    played.write("game.yaml", text.replace(kli_key, key("carol").public.to_line().split()[1]))
    played.edit("kli", through="1.24.damage")
    played.write_status("fed")
    bad = played.sneak("carol", "kli: my new key", status="keep")
    assert rejected(played, bad, "signature.unknown-key") == {"signature.unknown-key", "protected.changed"}


def test_key_confusion__fed_swaps_kli_s_key_for_his_accomplice_s(played: Table) -> None:
    """Threat: fed, in control, swaps kli's key in game.yaml for dave's, so that dave can play kli's turns.
    Defence: game.yaml is frozen after the start (protected.changed); `pbem yield` refuses it and changes
    nothing."""
    kli_key = key("kli").public.to_line().split()[1]
    played.write("game.yaml", played.read("game.yaml").replace(kli_key, key("dave").public.to_line().split()[1]))
    played.edit("fed", **FED_GOES_ON)
    refused(played, "yield", who="fed", rule="protected.changed", where="game.yaml")
    swap = played.sneak("fed", "fed: straight on")
    assert rejected(played, swap, "protected.changed", "game.yaml") == {"protected.changed"}


def test_key_confusion__a_refused_key_swap_does_not_seat_the_accomplice(played: Table) -> None:
    """Threat: fed's key swap above is refused, but what do later commits get judged against? dave plays kli's
    next turn; a pull request's check verifies only the commits after the swap."""
    kli_key = key("kli").public.to_line().split()[1]
    played.write("game.yaml", played.read("game.yaml").replace(kli_key, key("dave").public.to_line().split()[1]))
    swap = legal_turn(played)
    played.edit("kli", **KLI_GOES_ON)
    played.write_status("kli")
    dave = _commit_at(played, "dave", 1700000000, "kli (really dave): on")
    played.write_status("kli", "dave again")
    again = _commit_at(played, "dave", 1700000060, "kli (really dave): on and on")  # the swap never takes hold
    code, findings, output = verdict(played)
    flagged = {(f["rule"], f.get("commit")) for f in findings}
    assert {("signature.unknown-key", dave), ("signature.unknown-key", again)} <= flagged, findings
    code, findings, output = verdict(played, f"{swap}..HEAD")
    assert code == 1 and {f["rule"] for f in findings} == {"signature.unknown-key"}, output


def test_not_in_control__kli_signs_a_turn_while_fed_holds_control(played: Table) -> None:
    """Threat: a player moves out of turn (seed 000 §3: only the player in control commits). Defence: control is
    recomputed by replay (signature.not-in-control); `pbem yield` refuses it and changes nothing."""
    played.edit("kli", through="1.24.damage")
    refused(played, "yield", who="kli", rule="signature.not-in-control", where="status.yaml")
    bad = played.sneak("kli", "kli: my turn anyway")
    assert rejected(played, bad, "signature.not-in-control", "status.yaml") == {"signature.not-in-control"}


def _add_header(payload: bytes, header: bytes) -> bytes:
    head, _, message = payload.partition(b"\n\n")
    return head + b"\n" + header + b"\n\n" + message


def _duplicate_sig(raw: bytes) -> bytes:
    start, end = raw.index(b"gpgsig "), raw.index(b"\n\n")
    return raw[:end] + b"\n" + raw[start:end] + raw[end:]


def _sha256_sig(raw: bytes) -> bytes:
    start, end = raw.index(b"gpgsig "), raw.index(b"\n\n")
    return raw[:end] + b"\ngpgsig-sha256" + raw[start + len(b"gpgsig"):end] + raw[end:]


HEADER_TRICKS: dict[str, Callable[[bytes, PrivateKey], bytes]] = {
    "encoding": lambda p, k: signed(_add_header(p, b"encoding ISO-8859-1"), k),
    "mergetag": lambda p, k: signed(_add_header(p, b"mergetag object " + b"1" * 40 + b"\n type commit"), k),
    "unknown-header": lambda p, k: signed(_add_header(p, b"x-pbem-control fed"), k),
    "second-gpgsig": lambda p, k: _duplicate_sig(signed(p, k)),
    "gpgsig-sha256": lambda p, k: _sha256_sig(signed(p, k)),
}


@pytest.mark.parametrize("trick", sorted(HEADER_TRICKS))
def test_commit_layout__an_extra_header_or_a_second_signature_is_malformed(played: Table, trick: str) -> None:
    """Threat: a commit git reads one way and a naive parser another: an `encoding` header (the message is then
    Latin-1 to git), a `mergetag`, an unknown header, a second `gpgsig` or a `gpgsig-sha256` beside it, all with
    fed's valid signature. Defence: one strict layout (DESIGN §3), stricter than git (commit.malformed)."""
    legal_turn(played)
    bad = land(played, HEADER_TRICKS[trick](payload_of(played), key("fed")))
    assert rejected(played, bad, "commit.malformed") == {"commit.malformed"}


def test_non_canonical_armor__fed_s_signature_rewrapped_at_76_columns(played: Table) -> None:
    """Threat: the same signature re-encoded (armor wrapped at 76 columns instead of ssh-keygen's 70) gives a
    different commit id that git still calls a good signature: one turn, two ids. Defence: only the canonical
    armor is accepted (signature.malformed), even where `git verify-commit` says "Good"."""
    legal_turn(played)
    payload = payload_of(played)
    armored = sshsig.sign(key("fed"), payload)
    body = "".join(armored.splitlines()[1:-1])
    rewrapped = "\n".join([armored.splitlines()[0], *(body[i:i + 76] for i in range(0, len(body), 76)),
                           armored.splitlines()[-1]])
    bad = land(played, with_signature(payload, rewrapped))
    signers = played.root / "allowed_signers"
    signers.write_text(allowed_signers_line("fed", key("fed").public) + "\n")
    git_says = played.git("-c", f"gpg.ssh.allowedSignersFile={signers}", "verify-commit", bad, check=False)
    assert git_says.returncode == 0 and b"Good" in git_says.stderr, git_says.stderr
    assert rejected(played, bad, "signature.malformed") == {"signature.malformed"}


@pytest.mark.parametrize("namespace, hash_name, rule", [
    (b"file", "sha512", "signature.namespace"),
    (b"pbem", "sha512", "signature.namespace"),
    (b"git", "sha256", "signature.hash"),
], ids=["namespace-file", "namespace-pbem", "hash-sha256"])
def test_signature_parameters__another_namespace_or_hash_is_refused(played: Table, namespace: bytes,
                                                                   hash_name: str, rule: str) -> None:
    """Threat: a signature fed made for something else (`ssh-keygen -Y sign -n file`, or pbem's own void
    co-signatures in namespace "pbem") replayed as a commit signature; or a weaker hash. Defence: namespace
    `git` and hash `sha512` only (signature.namespace, signature.hash)."""
    legal_turn(played)
    payload = payload_of(played)
    sig = key("fed").sign_raw(signed_data(payload, namespace, hash_name))
    bad = land(played, with_signature(payload, sshsig_armor(key("fed").public.blob(), sig, namespace,
                                                            hash_name.encode())))
    assert rejected(played, bad, rule) == {rule}


@pytest.mark.parametrize("kind", ["rsa", "ecdsa"])
def test_key_type__an_rsa_or_ecdsa_signature_made_by_ssh_keygen(played: Table, kind: str) -> None:
    """Threat: a key type pbem does not vouch for (RSA, ECDSA) slipped in through plain `ssh-keygen -Y sign`.
    Defence: ssh-ed25519 only (signature.key-type)."""
    legal_turn(played)
    payload = payload_of(played)
    path = played.root / "keys" / f"evil_{kind}"
    run(["ssh-keygen", "-q", "-t", kind, *(["-b", "2048"] if kind == "rsa" else []), "-N", "", "-C", "evil",
         "-f", path], home=played.home)
    done = run(["ssh-keygen", "-Y", "sign", "-n", "git", "-f", path], home=played.home, input=payload)
    bad = land(played, with_signature(payload, done.stdout.decode().rstrip("\n")))
    assert rejected(played, bad, "signature.key-type") == {"signature.key-type"}


# --- timestamps ------------------------------------------------------------------------------------------------

def _commit_at(table: Table, who: str, when: int, message: str) -> str:
    from pbem.services.workspace import Workspace

    files = Workspace.open(table.repo_dir).worktree_files()
    repo = GameRepo.open(table.repo_dir)
    oid = repo.commit_tree(files, [table.head()], message, KeySigner(key(who)), ("Time Traveller", "tt@example.org"),
                           when=when)
    repo.update_branch_and_worktree(oid)
    return oid


@pytest.mark.parametrize("when", [0, 1, 4102444800, 253402300799], ids=["1970", "1970+1s", "2100", "9999"])
def test_timestamps__a_commit_dated_in_the_past_or_the_future_changes_nothing(played: Table, when: int) -> None:
    """Threat: dates as an argument ("I committed before the deadline", a key valid "at that time"). Defence:
    nothing in pbem reads a date: key validity comes from game.yaml at the parent, control from replay, dice
    from committed secrets (DESIGN §3, §5). fed's legal turn verifies whatever its date; kli's out-of-turn
    commit dated before the game began is still out of turn."""
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed")
    _commit_at(played, "fed", when, "fed: straight on")
    assert_clean(played)
    status = played.data("status.yaml")
    played.edit("fed", through="1.20.damage")  # kli holds control now
    bad = _commit_at(played, "fed", 1, "fed: backdated, so still my turn?")
    assert rejected(played, bad, "signature.not-in-control") == {"signature.not-in-control"}
    assert status["control"] == "kli"


def test_timestamps__a_date_git_cannot_represent_is_malformed_not_a_crash(played: Table) -> None:
    """Threat: a date no tool can parse, to break the verifier instead of fooling it."""
    legal_turn(played)
    payload = payload_of(played)
    for header in (b"author", b"committer"):
        ident = format_ident("Time Traveller", "tt@example.org", 1).encode()
        payload = replace_header(payload, header, ident.replace(b" 1 +0000", b" 9999999999999999999 +0000"))
    bad = land(played, signed(payload, key("fed")))
    done = played.pbem("verify")
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-600:]
    assert done.returncode == 1 and "[commit.malformed]" in done.stdout and bad[:10] in done.stdout


# === 2. History: rewritten, rolled back, merged (DESIGN §3, §9) ===============================================

def test_history_rewritten__an_old_turn_edited_and_the_later_turns_replayed(played: Table) -> None:
    """Threat (force-push, fed alone): fed edits his first turn (speed 12 → 20) and replays kli's later turn on
    top of it. Defence: kli's signature covers its parent, so the replayed turn no longer verifies
    (signature.invalid); fed cannot re-sign it as kli."""
    kli_turn = parse_commit(raw_commit(played))
    fed_turn = parse_commit(raw_commit(played, "HEAD~1"))
    played.git("reset", "-q", "--hard", "HEAD~2")
    played.write("report/turn-01.yaml", "entries:\n  - {at: \"1.0.alloc\", by: fed, unit: CA, do: {speed: 20}}\n")
    played.edit("fed", through="1.8.damage", breaks=[{"range": 8}])
    rewritten = played.sneak("fed", "fed: speed 20, closing")
    assert rewritten != fed_turn
    replayed = with_signature(replace_header(kli_turn.signed_payload(), b"parent", rewritten.encode()),
                              kli_turn.signature or "")
    bad = land(played, replayed)
    assert rejected(played, bad, "signature.invalid") == {"signature.invalid"}


def test_history_rewritten__the_later_turns_re_signed_by_the_rewriter(played: Table) -> None:
    """Threat: as above, but fed re-signs kli's replayed turn with his own key. Defence: a turn by fed at a point
    where kli holds control (signature.not-in-control)."""
    kli_turn = parse_commit(raw_commit(played))
    played.git("reset", "-q", "--hard", "HEAD~2")
    played.write("report/turn-01.yaml", "entries:\n  - {at: \"1.0.alloc\", by: fed, unit: CA, do: {speed: 20}}\n")
    played.edit("fed", through="1.8.damage", breaks=[{"range": 8}])
    rewritten = played.sneak("fed", "fed: speed 20, closing")
    bad = land(played, signed(replace_header(kli_turn.signed_payload(), b"parent", rewritten.encode()), key("fed")))
    assert rejected(played, bad, "signature.not-in-control") == {"signature.not-in-control"}


def test_history_rewritten__a_firm_entry_changed_in_a_later_turn(played: Table) -> None:
    """Threat: rewriting the past in a new commit instead: fed's next turn quietly changes his firm 1.0.alloc
    speed. Defence: entries before the firm marker never change (firm.changed, seed 000 §3.C)."""
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml").replace("{speed: 12}", "{speed: 20}", 1))
    bad = legal_turn(played)
    assert rejected(played, bad, "firm.changed", "report/turn-01.yaml") == {"firm.changed"}


def test_rollback__a_reset_and_a_different_turn_is_refused_by_the_hook(played: Table) -> None:
    """Threat (rollback): kli regrets his landed turn, resets main to before it and plays another. The verifier
    alone sees a different but consistent history (nothing in a repository says what was published), so the
    defence is the server's: the pre-receive hook (and branch protection on GitHub) lets main only move forward
    (history.rewritten), and the server's main stays where it was."""
    server = serve(played)
    landed = server_ref(server)
    played.git("reset", "-q", "--hard", "HEAD~1")
    played.turn("kli", through="1.20.damage", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 20}}])
    assert_clean(played)  # consistent on its own
    push_refused(push(played, "+main"), "history.rewritten")
    assert server_ref(server) == landed


def test_merge__a_merge_that_changes_content(played: Table) -> None:
    """Threat: an unjudged change smuggled into a merge commit (kli's orders shortened while merging fed's turn
    branch). Defence: only the pull-request button's transparent merge is accepted (history.bad-merge)."""
    played.git("switch", "-q", "-c", "turn")
    played.turn("fed", note="straight on", **FED_GOES_ON)
    played.git("switch", "-q", "main")
    played.git("merge", "-q", "--no-ff", "--no-commit", "turn")
    played.write("players/kli.yaml", played.read("players/kli.yaml").replace('"1.12.damage"', '"1.10.damage"'))
    played.git("add", "players/kli.yaml")
    played.git("commit", "-q", "--no-gpg-sign", "-m", "Merge branch 'turn'")
    merge = played.head()
    assert rejected(played, merge, "history.bad-merge") == {"history.bad-merge"}


def test_merge__an_octopus_merge(played: Table) -> None:
    """Threat: a merge of three branches, whose extra parents a reader following two would never judge.
    Defence: history.bad-merge."""
    played.git("switch", "-q", "-c", "turn")
    played.turn("fed", note="straight on", **FED_GOES_ON)
    played.git("switch", "-q", "main")
    octopus = played.git("commit-tree", "turn^{tree}", "-p", "main", "-p", "turn", "-p", "main~1", "-m",
                         "Merge branches").stdout.decode().strip()
    played.git("merge", "-q", "--ff-only", octopus)
    assert rejected(played, octopus, "history.bad-merge") == {"history.bad-merge"}


def test_merge__a_second_root_merged_in_transparently(played: Table) -> None:
    """Threat: carol grows a history of her own from a new root (her tree: the game as she would like it) and
    merges it with a merge whose tree is her side's, so the merge looks transparent and the verifier would
    follow her chain. Defence: the merge's first parent must lie on the merged branch (history.bad-merge)."""
    tree = played.git("rev-parse", "HEAD^{tree}").stdout.decode().strip()
    ident = format_ident("Carol", "carol@example.org", 1700000000)
    root = write_object(played, ObjectType.COMMIT, signed(commit_payload(tree, [], ident, ident, "a new game\n"),
                                                          key("carol")))
    merge = played.git("commit-tree", f"{root}^{{tree}}", "-p", "main", "-p", root, "-m",
                       "Merge branch 'mine'").stdout.decode().strip()
    played.git("update-ref", "refs/heads/main", merge)
    code, findings, output = verdict(played)
    assert code == 1, output
    assert ("history.bad-merge", merge) in {(f["rule"], f.get("commit")) for f in findings}
    assert {f.get("commit") for f in findings} <= {merge, root}


# === 3. Dice (DESIGN §5, seed 000 §2.D) =========================================================================

@pytest.fixture(scope="session")
def base_dice_owed(base_played: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed announced fed-0001 in a turn that left control with himself: kli owes his contribution out of turn."""
    return Table(built_once(tmp_path_factory, "attacks-base_dice_owed",
                            lambda into: announce_out_of_turn(base_played, into)))


@pytest.fixture(scope="session")
def base_reveal_owed(base_dice_owed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """kli contributed: fed owes the reveal; the results are knowable to fed (his secret is his)."""

    def build(table: Table) -> None:
        cli(table, "yield", who="kli")

    return built_from(tmp_path_factory, "attacks-base_reveal_owed", base_dice_owed, build)


@pytest.fixture(scope="session")
def base_rolled(base_reveal_owed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed revealed; fed-0001 has its result; fed holds control for a turn."""

    def build(table: Table) -> None:
        cli(table, "yield", who="fed")
        assert batch(table)["results"]

    return built_from(tmp_path_factory, "attacks-base_rolled", base_reveal_owed, build)


@pytest.fixture
def dice_owed(base_dice_owed: Table, tmp_path: Path) -> Table:
    return private(base_dice_owed, tmp_path)


@pytest.fixture
def reveal_owed(base_reveal_owed: Table, tmp_path: Path) -> Table:
    return private(base_reveal_owed, tmp_path)


@pytest.fixture
def rolled(base_rolled: Table, tmp_path: Path) -> Table:
    return private(base_rolled, tmp_path)


B0001 = "dice/fed-0001.yaml"


def test_dice_grinding__the_roller_voids_after_the_results_were_knowable(reveal_owed: Table) -> None:
    """Threat (grinding): fed, who can compute the results once kli contributed, voids the batch to re-roll it.
    Defence: after results are knowable a void needs every other player's co-signature (dice.bad-void)."""
    write_batch(reveal_owed, {**batch(reveal_owed), "void": {"reason": "the D7 was out of arc"}})
    bad = sneak_as(reveal_owed, "fed", "fed: void fed-0001")
    assert rejected(reveal_owed, bad, "dice.bad-void", B0001) == {"dice.bad-void"}


def test_dice_grinding__the_roller_swaps_his_commitment_after_seeing_the_contribution(reveal_owed: Table) -> None:
    """Threat (grinding): fed, having seen kli's contribution, tries secrets until the dice suit him and writes a
    new commitment with its reveal and the true results. Defence: the announcement, commitment included, is fixed
    once a contribution is in (dice.changed)."""
    raw = batch(reveal_owed)
    secret = next(s for s in (bytes([i]) * 32 for i in range(256))
                  if derived({**raw, "reveal": s.hex()}) == [6])  # a six, found by grinding
    ground = {**raw, "commit": dice_crypto.commitment(secret).hex(), "reveal": secret.hex()}
    write_batch(reveal_owed, {**ground, "results": derived(ground)})
    bad = sneak_as(reveal_owed, "fed", "fed: revealed fed-0001")
    assert rejected(reveal_owed, bad, "dice.changed", B0001) == {"dice.changed"}


def test_dice_withholding__the_roller_who_never_reveals_keeps_the_game_waiting(reveal_owed: Table) -> None:
    """Threat (withholding): fed dislikes what he computed and simply never reveals. Defence: he owes the reveal;
    control stays his (kind dice) and nobody else may take a turn (signature.not-in-control); `pbem yield`
    refuses kli and changes nothing."""
    assert pending(reveal_owed)[0][:2] == ("fed", "dice")
    assert reveal_owed.data("status.yaml")["control"] == "fed"
    reveal_owed.edit("kli", through="1.24.damage")
    refused(reveal_owed, "yield", who="kli", rule="signature.not-in-control", where="status.yaml")
    bad = sneak_as(reveal_owed, "kli", "kli: on without the dice")
    assert rejected(reveal_owed, bad, "signature.not-in-control") == {"signature.not-in-control"}


def test_dice_copied_contribution__kli_contributes_the_roller_s_own_value(dice_owed: Table) -> None:
    """Threat: a contribution that copies another value (with XOR it would cancel out). Defence: each
    contribution must be a fresh secret, never another published value (dice.bad-contribution); and values are
    concatenated into the hash, never XORed (docs/dice.md)."""
    raw = batch(dice_owed)
    write_batch(dice_owed, {**raw, "contributions": {"kli": raw["commit"]}})
    bad = sneak_as(dice_owed, "kli", "kli: my contribution")
    assert rejected(dice_owed, bad, "dice.bad-contribution", B0001) == {"dice.bad-contribution"}


def test_dice_bad_reveal__a_reveal_that_does_not_match_the_commitment(reveal_owed: Table) -> None:
    """Threat: fed reveals a secret of his choosing (with the results it gives). Defence: the reveal must hash to
    the commitment (dice.bad-reveal)."""
    forged = {**batch(reveal_owed), "reveal": "ab" * 32}
    write_batch(reveal_owed, {**forged, "results": derived(forged)})
    bad = sneak_as(reveal_owed, "fed", "fed: revealed fed-0001")
    assert rejected(reveal_owed, bad, "dice.bad-reveal", B0001) == {"dice.bad-reveal"}


def test_dice_results_edited__a_result_changed_after_it_was_written(rolled: Table) -> None:
    """Threat: fed edits the recorded result in a later turn. Defence: results never change once written
    (dice.changed), and are re-derived anyway (dice.bad-results)."""
    raw = batch(rolled)
    write_batch(rolled, {**raw, "results": [raw["results"][0] % 6 + 1]})
    rolled.edit("fed", **FED_GOES_ON)
    refused(rolled, "yield", who="fed", rule="dice.changed", where=B0001)
    bad = sneak_as(rolled, "fed", "fed: on")
    assert rejected(rolled, bad, "dice.changed", B0001) == {"dice.changed", "dice.bad-results"}


# === 4. Secrets (DESIGN §6, seed 000 §2.C) =====================================================================

_MASK = 0xFFFFFFFF
_SIGMA = [int.from_bytes(b"expand 32-byte k"[i:i + 4], "little") for i in range(0, 16, 4)]
_P1305 = (1 << 130) - 5


def _rotl(v: int, c: int) -> int:
    v &= _MASK
    return ((v << c) & _MASK) | (v >> (32 - c))


def _salsa_rounds(x: list[int]) -> list[int]:
    x = list(x)
    for _ in range(10):
        for a, b, c, d in ((0, 4, 8, 12), (5, 9, 13, 1), (10, 14, 2, 6), (15, 3, 7, 11),
                           (0, 1, 2, 3), (5, 6, 7, 4), (10, 11, 8, 9), (15, 12, 13, 14)):
            x[b] ^= _rotl(x[a] + x[d], 7)
            x[c] ^= _rotl(x[b] + x[a], 9)
            x[d] ^= _rotl(x[c] + x[b], 13)
            x[a] ^= _rotl(x[d] + x[c], 18)
    return x


def _salsa_state(key32: bytes, middle: bytes) -> list[int]:
    k = [int.from_bytes(key32[i:i + 4], "little") for i in range(0, 32, 4)]
    m = [int.from_bytes(middle[i:i + 4], "little") for i in range(0, 16, 4)]
    return [_SIGMA[0], *k[:4], _SIGMA[1], *m, _SIGMA[2], *k[4:], _SIGMA[3]]


def xsalsa20_stream(key32: bytes, nonce: bytes, n: int) -> bytes:
    """XSalsa20's key stream (HSalsa20 subkey, then Salsa20/20), in pure Python: what nacl's SecretBox uses."""
    out = _salsa_rounds(_salsa_state(key32, nonce[:16]))
    sub = b"".join(w.to_bytes(4, "little") for w in (out[0], out[5], out[10], out[15], *out[6:10]))
    stream = b""
    for counter in range((n + 63) // 64):
        s = _salsa_state(sub, nonce[16:24] + counter.to_bytes(8, "little"))
        stream += b"".join(((a + b) & _MASK).to_bytes(4, "little") for a, b in zip(_salsa_rounds(s), s))
    return stream[:n]


def two_faced_box(k1: bytes, k2: bytes, blocks: int = 3) -> bytes:
    """One SecretBox (nonce || tag || ciphertext) that opens under both k1 and k2, to different plaintexts: a
    Poly1305 multi-key collision (the "invisible salamanders" attack; SecretBox is not key-committing). The
    last ciphertext block is solved for so that both one-time keys give the same tag."""
    nonce = bytes(24)
    (r1, s1), (r2, s2) = ((int.from_bytes(ks[:16], "little") & 0x0ffffffc0ffffffc0ffffffc0fffffff,
                           int.from_bytes(ks[16:32], "little"))
                          for ks in (xsalsa20_stream(k, nonce, 32) for k in (k1, k2)))
    rng = random.Random(2024)
    for _ in range(1000):
        fixed = [rng.getrandbits(128) + (1 << 128) for _ in range(blocks - 1)]
        a1 = a2 = 0
        for n in fixed:
            a1, a2 = (a1 + n) * r1 % _P1305, (a2 + n) * r2 % _P1305
        for target in ((s2 - s1) % (1 << 128) + j * (1 << 128) for j in (-2, -1, 0, 1)):
            n = (target - (a1 * r1 - a2 * r2)) * pow(r1 - r2, -1, _P1305) % _P1305
            h1, h2 = (a1 + n) * r1 % _P1305, (a2 + n) * r2 % _P1305
            if (1 << 128) <= n < (1 << 129) and h1 - h2 == target:
                tag = (h1 + s1) % (1 << 128)
                body = b"".join((m - (1 << 128)).to_bytes(16, "little") for m in [*fixed, n])
                return nonce + tag.to_bytes(16, "little") + body
    raise AssertionError("no Poly1305 collision found")


def secret_file(table: Table, owner: str, plaintext: bytes, *, box: bytes | None = None, key32: bytes | None = None,
                end: str = "end", sid: str | None = None) -> tuple[dict[str, Any], bytes]:
    """A sealed secret as `pbem seal` writes it (or with a given box), sealed to `owner`'s key, by default as
    secrets/<owner>-0009.yaml; and its key."""
    sealed = seal.seal(plaintext, key(owner).public, key32)
    raw = {"id": sid or f"{owner}-0009", "owner": owner, "kind": "note", "concerns": f"{owner}'s plan", "end": end,
           "box": base64.b64encode(box or sealed.box).decode(), "commit": sealed.commit.hex(),
           "owner_box": base64.b64encode(sealed.owner_box).decode()}
    return raw, sealed.key


def write_secret(table: Table, raw: Mapping[str, Any]) -> None:
    table.write(f"secrets/{raw['id']}.yaml", dump_mapping(dict(raw)))


def test_two_faced_box__a_key_that_opens_the_box_to_another_plaintext(played: Table) -> None:
    """Threat: fed seals a box that opens under two keys to two plaintexts (a Poly1305 collision, so the box is
    genuine for both) and chooses which key to reveal once he sees how the game went. Defence: the key-committing
    hash `commit = BLAKE2b(key || plaintext)` sealed with the box (secret.commit-mismatch)."""
    k1, k2 = bytes(range(32)), bytes(range(32, 64))
    box = two_faced_box(k1, k2)
    first, second = nacl.secret.SecretBox(k1).decrypt(box), nacl.secret.SecretBox(k2).decrypt(box)
    assert first != second  # the box really is two-faced
    raw, _ = secret_file(played, "fed", first, box=box, key32=k1, end="1.10.move")
    assert seal.open_sealed(box, k1, bytes.fromhex(raw["commit"])) == first
    write_secret(played, raw)
    legal_turn(played)
    assert pending(played)[0][:2] == ("fed", "secret")  # due at 1.10.move: fed owes the reveal
    write_secret(played, {**raw, "key": k2.hex()})
    bad = sneak_as(played, "fed", "fed: revealed fed-0009")
    assert rejected(played, bad, "secret.commit-mismatch", "secrets/fed-0009.yaml") == {"secret.commit-mismatch"}


def test_secret_revealed_by_another_player(played: Table) -> None:
    """Threat: kli learnt fed's key (over fed's shoulder) and reveals fed's secret to force his hand. Defence: only
    the owner reveals (secret.not-owner)."""
    raw, k = secret_file(played, "fed", b'{"text":"I turn to starboard at range 8"}')
    write_secret(played, raw)
    legal_turn(played)
    write_secret(played, {**raw, "key": k.hex()})
    played.edit("kli", **KLI_GOES_ON)
    bad = sneak_as(played, "kli", "kli: fed's plan, revealed")
    assert rejected(played, bad, "secret.not-owner", "secrets/fed-0009.yaml") == {"secret.not-owner"}


def test_secret_changed_after_sealing__the_box_swapped_while_revealing(played: Table) -> None:
    """Threat: fed, revealing, swaps the box and commitment for a plan of hindsight, with a matching key.
    Defence: a sealed secret never changes but for its key (secret.changed)."""
    raw, _ = secret_file(played, "fed", b'{"text":"I hold my course"}', end="1.10.move")
    write_secret(played, raw)
    legal_turn(played)
    hindsight, k = secret_file(played, "fed", b'{"text":"I turn to port at 1.9"}', end="1.10.move")
    write_secret(played, {**hindsight, "key": k.hex()})
    bad = sneak_as(played, "fed", "fed: revealed fed-0009")
    assert rejected(played, bad, "secret.changed", "secrets/fed-0009.yaml") == {"secret.changed"}


def test_orders_sealed_for_another_power(played: Table) -> None:
    """Threat: fed seals "orders" in kli's name (owner kli, sealed to kli's key) to fill kli's sealed slot with
    something kli never chose. Defence: a secret is sealed by its owner (secret.not-owner)."""
    raw, _ = secret_file(played, "kli", b'{"text":"I surrender"}')
    write_secret(played, raw)
    bad = legal_turn(played)
    assert rejected(played, bad, "secret.not-owner", "secrets/kli-0009.yaml") == {"secret.not-owner"}


# === 5. Files: YAML bombs, huge files (DESIGN §2 strict loader) =================================================

BOMBS = {
    "yaml.alias": ("billion laughs", "".join(
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9) if i else ', '.join(['lol'] * 9)}]\n" for i in range(9))),
    "yaml.too-deep": ("deep nesting", "through: " + "[" * 5000 + "]" * 5000 + "\n"),
    "yaml.too-many-nodes": ("too many nodes", "breaks: [" + "0, " * 200_001 + "0]\n"),
    "yaml.too-large": ("a 2 MiB file", 'through: "1.16.damage"\n' + "#" * (2 * 1024 * 1024) + "\n"),
    "yaml.duplicate-key": ("duplicate keys", 'through: "1.16.damage"\nthrough: "1.32.final"\n'),
    "yaml.tag": ("a python tag", 'through: !!python/object/apply:os.system ["echo pwned"]\n'),
}


@pytest.mark.parametrize("rule", sorted(BOMBS), ids=[BOMBS[r][0].replace(" ", "-") for r in sorted(BOMBS)])
def test_yaml_bombs__refused_by_the_strict_loader(played: Table, rule: str) -> None:
    """Threat: a file that eats the verifier's memory or time (billion laughs, deep nesting, a huge file), runs
    code (python tags) or reads two ways (duplicate keys). Defence: the strict loader refuses anchors, aliases
    and tags and caps size, depth and nodes (yaml.*, DESIGN §2)."""
    played.write("players/fed.yaml", BOMBS[rule][1])
    bad = played.sneak("fed", status="keep")
    assert rejected(played, bad, rule, "players/fed.yaml") == {rule}


def test_huge_report__an_entries_list_past_the_schema_cap(played: Table) -> None:
    """Threat: a report with more entries than the schema allows, to slow every later verification."""
    row = "  - {at: 1.9.move, by: fed, do: {pass: true}}\n"
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml") + row * 20_000)
    assert len(played.read("report/turn-01.yaml")) < 1024 * 1024
    played.edit("fed", **FED_GOES_ON)
    bad = played.sneak("fed", status="keep")
    code, findings, output = verdict(played)
    assert code == 1, output
    assert ("schema.invalid", bad, "report/turn-01.yaml") in {(f["rule"], f.get("commit"), f.get("file"))
                                                            for f in findings}, findings


# === 6. Trees: paths, modes, twins (DESIGN §3 Trees) ============================================================

TRAVERSALS: dict[str, tuple[tuple[bytes, ...], bytes]] = {
    "dot-dot-folder": ((b"..", b"game.yaml"), b"format: pbem/1\n"),
    "slashes-in-one-name": ((b"players/../game.yaml",), b"through: \"1.32.final\"\n"),
    "backslashes": ((b"players\\..\\game.yaml",), b"through: \"1.32.final\"\n"),
    "dot-git": ((b".git", b"hooks", b"post-checkout"), b"#!/bin/sh\necho pwned\n"),
    "gitattributes": ((b".gitattributes",), b"*.yaml filter=evil\n"),
    "gitmodules": ((b".gitmodules",), b"[submodule \"x\"]\n\tpath = report\n\turl = ../evil\n"),
    "second-workflow": ((b".github", b"workflows", b"evil.yml"), b"on: push\njobs: {}\n"),
    "zero-width-twin": ((b"report", "turn-01.yaml\u200b".encode()), b"entries: []\n"),
}


@pytest.mark.parametrize("name", sorted(TRAVERSALS))
def test_path_traversal__a_tree_entry_outside_the_layout(played: Table, name: str) -> None:
    """Threat: a file outside the game's layout: `..`, a name holding `/` or `\\` (written as one raw tree entry),
    `.git/hooks`, `.gitattributes` (filters that rewrite files on checkout), `.gitmodules`, a second workflow that
    runs what it likes, a look-alike of a report name. Defence: only the layout's paths (tree.unexpected-path)."""
    honest = legal_turn(played)
    parts, content = TRAVERSALS[name]
    bad = with_tree(played, honest, lambda entries: [*entries, (parts, blob(played, content), 0o100644)])
    assert rejected(played, bad, "tree.unexpected-path") == {"tree.unexpected-path"}


@pytest.mark.parametrize("path, mode", [("players/fed.yaml", 0o120000), ("report/turn-01.yaml", 0o160000),
                                        ("players/fed.yaml", 0o100755)], ids=["symlink", "submodule", "executable"])
def test_tree_modes__a_link_a_submodule_or_an_executable(played: Table, path: str, mode: int) -> None:
    """Threat: a game file that is a symbolic link (to game.yaml, or out of the checkout), a submodule (content
    from elsewhere) or executable. Defence: regular files only, mode 100644 (tree.bad-mode)."""
    honest = legal_turn(played)
    head = played.head()
    target = {0o120000: blob(played, b"../game.yaml"), 0o160000: head}.get(mode)

    def change(entries: list[Entry]) -> list[Entry]:
        return [(p, target or oid, mode) if b"/".join(p).decode() == path else (p, oid, m) for p, oid, m in entries]

    bad = with_tree(played, honest, change)
    assert "tree.bad-mode" in rejected(played, bad, "tree.bad-mode", path)


def test_tree_case_twins__players_fed_and_players_FED(played: Table) -> None:
    """Threat: two files that are one on a case-insensitive checkout (macOS, Windows): which one a player sees
    depends on his machine. Defence: tree.case-twin."""
    honest = legal_turn(played)
    bad = with_tree(played, honest, lambda entries: [*entries, *[((b"players", b"FED.yaml"), oid, m)
                                                                 for p, oid, m in entries
                                                                 if p == (b"players", b"fed.yaml")]])
    assert "tree.case-twin" in rejected(played, bad, "tree.case-twin", "players/fed.yaml")


def test_tree_duplicate_entries__git_shows_one_file_the_verifier_judges_another(played: Table) -> None:
    """Threat: fed's tree holds report/turn-01.yaml twice: first a copy with his firm speed changed (what git
    checks out), then the honest one (what the verifier reads)."""
    honest = legal_turn(played)
    text = played.read("report/turn-01.yaml")
    forged = blob(played, text.replace("{speed: 12}", "{speed: 20}", 1).encode())

    def change(entries: list[Entry]) -> list[Entry]:
        out = []
        for p, oid, m in entries:
            if p == (b"report", b"turn-01.yaml"):
                out.append((p, forged, m))
            out.append((p, oid, m))
        return out

    bad = with_tree(played, honest, change)
    shown = played.git("show", f"{bad}:report/turn-01.yaml").stdout.decode()
    assert "{speed: 20}" in shown  # what every player's git shows
    assert rejected(played, bad, "tree.duplicate-entry", "report/turn-01.yaml")


def test_non_utf8_path__is_a_finding_not_a_crash(played: Table) -> None:
    """Threat: a file name that is not UTF-8, to crash the verifier (and so the check) instead of fooling it."""
    honest = legal_turn(played)
    bad = with_tree(played, honest, lambda entries: [*entries, ((b"caf\xe9.yaml",), blob(played, b"x: 1\n"),
                                                                0o100644)])
    done = played.pbem("verify", env=played.env(extra={"PYTHONIOENCODING": "utf-8:strict"}))
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-400:]
    assert done.returncode == 1 and "[tree.unexpected-path]" in done.stdout and bad[:10] in done.stdout


@pytest.mark.parametrize("what", ["blob-as-folder", "missing-folder"])
def test_tree_entry_of_the_wrong_type__is_a_finding_not_a_crash(played: Table, what: str) -> None:
    """Threat: a damaged tree (a 'folder' that is a file, or that does not exist), to crash the check."""
    honest = legal_turn(played)
    target = blob(played, b"x: 1\n") if what == "blob-as-folder" else "0123456789abcdef0123456789abcdef01234567"
    with_tree(played, honest, lambda entries: [*entries, ((b"press",), target, 0o40000)])
    done = played.pbem("verify")
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-400:]
    assert done.returncode in (1, 2) and "[repo." in done.stdout + done.stderr


def test_deep_tree__a_folder_nested_thousands_deep_is_a_finding_not_a_crash(played: Table) -> None:
    """Threat: a tree nested deeper than the verifier's stack, to crash the check instead of passing it."""
    honest = legal_turn(played)
    inner = write_object(played, ObjectType.TREE, b"100644 x.yaml\0" + bytes.fromhex(blob(played, b"x: 1\n")))
    for _ in range(3000):
        inner = write_object(played, ObjectType.TREE, b"40000 a\0" + bytes.fromhex(inner))
    bad = with_tree(played, honest, lambda entries: [*entries, ((b"deep",), inner, 0o40000)])
    done = played.pbem("verify")
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-400:]
    assert done.returncode == 1 and "[tree.unexpected-path]" in done.stdout and bad[:10] in done.stdout


# === 7. Identities: seats and look-alikes (DESIGN §3, schemas: ASCII ids) =======================================

def before_start(base_started: Table, dest: Path, undo: int) -> Table:
    """The duel before its start (and before anyone consented to it): undo=1 both seats claimed, 2 only fed's,
    3 nobody's (just `pbem init`)."""
    table = copy_table(base_started, dest)
    commits = table.git("rev-list", "--first-parent", "--reverse", "HEAD").stdout.decode().split()
    table.git("reset", "-q", "--hard", commits[3 - undo])
    return table


def edit_game(table: Table, change: Callable[[dict[str, Any]], None]) -> None:
    data = dict(table.data("game.yaml"))
    data["players"] = [dict(s) for s in data["players"]]
    change(data)
    table.write("game.yaml", dump_mapping(data))


@pytest.mark.parametrize("seat", ["f\u0435d", "escrow"], ids=["cyrillic-e", "escrow"])
def test_seat_ids__a_look_alike_or_reserved_seat_id(base_started: Table, tmp_path: Path, seat: str) -> None:
    """Threat: a seat id that looks like another (Cyrillic е in "fеd": entries "by: fеd" would read as fed's), or
    that takes the dice escrow's name. Defence: ids are ASCII by schema, `escrow` is reserved (schema.invalid)."""
    table = before_start(base_started, tmp_path / "t", 3)

    def change(data: dict[str, Any]) -> None:
        data["players"].append({"id": seat, "name": "Federation"})

    edit_game(table, change)
    bad = table.git_commit("setup: one more seat", signer="fed")
    assert rejected(table, bad, "schema.invalid", "game.yaml") == {"schema.invalid"}


def test_lookalike_author__an_entry_by_f_cyrillic_e_d(played: Table) -> None:
    """Threat: an entry "by: fеd" (Cyrillic е) that a reader takes for fed's. Defence: ASCII ids
    (schema.invalid)."""
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml")
                 + '  - {at: "1.10.move", by: f\u0435d, unit: CA, do: {move: TL}}\n')
    played.edit("fed", **FED_GOES_ON)
    bad = played.sneak("fed", status="keep")
    assert rejected(played, bad, "schema.invalid", "report/turn-01.yaml") == {"schema.invalid"}


def test_join__a_joiner_who_also_changes_another_seat_s_key(base_started: Table, tmp_path: Path) -> None:
    """Threat: carol claims the open seat (kli) and, in the same commit, replaces fed's key with her accomplice
    dave's. Defence: a claimed seat keeps its key (setup.seat-taken), and a join changes nothing but the joiner's
    own seat (signature.unknown-key)."""
    table = before_start(base_started, tmp_path / "t", 2)

    def change(data: dict[str, Any]) -> None:
        data["players"][1]["key"] = key("carol").public.to_line()
        data["players"][0]["key"] = key("dave").public.to_line()

    edit_game(table, change)
    bad = table.git_commit("join: kli takes a seat", signer="carol")
    assert rejected(table, bad, "setup.seat-taken", "game.yaml") == {"setup.seat-taken", "signature.unknown-key"}


def test_join__one_key_for_two_seats(base_started: Table, tmp_path: Path) -> None:
    """Threat: fed claims kli's seat too, with his own key, to play both sides (or to make his key ambiguous).
    Defence: two seats never share a key (schema.invalid)."""
    table = before_start(base_started, tmp_path / "t", 2)

    def change(data: dict[str, Any]) -> None:
        data["players"][1]["key"] = key("fed").public.to_line()

    edit_game(table, change)
    bad = table.git_commit("join: kli takes a seat", signer="fed")
    assert rejected(table, bad, "schema.invalid", "game.yaml") == {"schema.invalid"}


def test_unknown_player__a_players_file_for_a_seat_that_does_not_exist(played: Table) -> None:
    """Threat: standing orders for a player who is not at the table. Defence: players.unknown."""
    played.write("players/carol.yaml", 'through: "1.32.final"\n')
    played.edit("fed", **FED_GOES_ON)
    bad = played.sneak("fed", status="keep")
    assert rejected(played, bad, "players.unknown", "players/carol.yaml") == {"players.unknown"}


# === 8. Protected files and the status (DESIGN §2, §3 Trees) ====================================================

PROTECTED = {
    "game.yaml": ("two cruisers close in", "two cruisers part ways"),
    WORKFLOW: ("pbem verify", "true || pbem verify"),
    "README.md": ("pbem", "PBEM"),
}


@pytest.mark.parametrize("path", sorted(PROTECTED))
def test_protected__a_turn_that_changes_the_game_its_check_or_its_readme(played: Table, path: str) -> None:
    """Threat: a turn that changes the game after the start, or disables its own check (the workflow), or
    rewrites the players' instructions. Defence: frozen after the start (protected.changed); `pbem yield`
    refuses and changes nothing."""
    old, new = PROTECTED[path]
    played.write(path, played.read(path).replace(old, new, 1))
    played.edit("fed", **FED_GOES_ON)
    refused(played, "yield", who="fed", rule="protected.changed", where=path)
    bad = played.sneak("fed", "fed: straight on")
    assert rejected(played, bad, "protected.changed", path) == {"protected.changed"}


def test_status_forged__fed_writes_himself_back_into_control(played: Table) -> None:
    """Threat: a status.yaml of one's own making ("still my turn"). Defence: status.yaml must equal replay
    (status.mismatch)."""
    played.edit("fed", **FED_GOES_ON)
    bad = played.sneak("fed", "fed: still mine", status="keep")
    assert rejected(played, bad, "status.mismatch", "status.yaml") == {"status.mismatch"}


# === 9. Press (DESIGN §2 press/<channel>.yaml) ==================================================================

def post(table: Table, *messages: Mapping[str, Any]) -> None:
    path = table.repo_dir / "press" / "global.yaml"
    old = table.data("press/global.yaml")["messages"] if path.exists() else []
    table.write("press/global.yaml", dump_mapping({"messages": [*old, *map(dict, messages)]}))


def test_press__a_message_posted_in_another_player_s_name(played: Table) -> None:
    """Threat: kli posts "I resign" as fed. Defence: each message by its author's key (press.foreign)."""
    post(played, {"by": "fed", "at": "1.9.move", "say": "I resign."})
    bad = sneak_as(played, "kli", "kli: press")
    assert rejected(played, bad, "press.foreign", "press/global.yaml") == {"press.foreign"}


def test_press__a_message_edited_later(played: Table) -> None:
    """Threat: kli edits what fed said earlier. Defence: press is append-only (press.changed)."""
    post(played, {"by": "fed", "at": "1.9.move", "say": "I accept your surrender."})
    honest = sneak_as(played, "fed", "fed: press")
    data = played.data("press/global.yaml")
    played.write("press/global.yaml", dump_mapping({"messages": [{**data["messages"][0], "say": "I surrender."}]}))
    bad = sneak_as(played, "kli", "kli: press")
    assert bad != honest
    assert rejected(played, bad, "press.changed", "press/global.yaml") == {"press.changed"}


def test_press__a_stranger_posts(played: Table) -> None:
    """Threat: a kibitzer with push access posts. Defence: press needs a seat's key (signature.unknown-key)."""
    post(played, {"by": "fed", "at": "1.9.move", "say": "Draw?"})
    played.write_status("fed")
    bad = played.sneak("carol", "carol: press", status="keep")
    assert rejected(played, bad, "signature.unknown-key") == {"signature.unknown-key"}


# === 10. The server: every attack pushed to a repository with pbem's pre-receive hook ===========================

def _push_forged(table: Table) -> str:
    honest = legal_turn(table)
    commit = parse_commit(raw_commit(table, honest))
    land(table, with_signature(commit.signed_payload().replace(b"straight on", b"straight on!"),
                               commit.signature or ""))
    return "signature.invalid"


def _push_header(table: Table) -> str:
    legal_turn(table)
    land(table, HEADER_TRICKS["encoding"](payload_of(table), key("fed")))
    return "commit.malformed"


def _push_symlink(table: Table) -> str:
    honest = legal_turn(table)
    link = blob(table, b"../game.yaml")
    with_tree(table, honest, lambda es: [(p, link, 0o120000) if p == (b"players", b"fed.yaml") else (p, o, m)
                                         for p, o, m in es])
    return "tree.bad-mode"


def _push_bomb(table: Table) -> str:
    table.write("players/fed.yaml", BOMBS["yaml.alias"][1])
    table.sneak("fed", status="keep")
    return "yaml.alias"


def _push_stranger(table: Table) -> str:
    table.edit("fed", **FED_GOES_ON)
    table.write_status("fed")
    table.sneak("carol", "fed: straight on", status="keep")
    return "signature.unknown-key"


@pytest.mark.parametrize("attack", [_push_forged, _push_header, _push_symlink, _push_bomb, _push_stranger],
                         ids=["forged-signature", "encoding-header", "symlink", "billion-laughs", "stranger"])
def test_server__the_pre_receive_hook_refuses_the_attack_and_main_does_not_move(
        played: Table, attack: Callable[[Table], str]) -> None:
    """DESIGN §9: the same check on the server. The push is refused with the rule on a `remote:` line, and the
    server's main stays where it was."""
    server = serve(played)
    before = server_ref(server)
    rule = attack(played)
    done = push(played)
    push_refused(done, rule)
    assert "Traceback" not in done.stderr
    assert server_ref(server) == before


# === Press files and the order press is recognised in (DESIGN §2 press/<author>.yaml, §7.2) ===================
# Each seat posts in its own press/<seat>.yaml, written only by that seat's key, append-only; messages are
# recognised in the order of the commits that added them, never by file name. press/global.yaml of older games
# stays valid (each message in its author's name).

def post_in(table: Table, path: str, *messages: Mapping[str, Any]) -> None:
    """Append messages to a press file by hand, one per line, as pbem writes them."""
    old = table.data(path)["messages"] if (table.repo_dir / path).exists() else []
    table.write(path, dump_mapping({"messages": [*old, *map(dict, messages)]}))


def test_press_file__kli_posts_in_fed_s_file(played: Table) -> None:
    """Threat: kli writes in press/fed.yaml (his own words, or words he puts in fed's file). Defence: a press file
    is written only by its seat's key (ownership.foreign-press)."""
    post_in(played, "press/fed.yaml", {"by": "kli", "at": "1.9.move", "say": "fed concedes."})
    bad = sneak_as(played, "kli", "kli: press")
    assert rejected(played, bad, "ownership.foreign-press", "press/fed.yaml") == {"ownership.foreign-press"}


def test_press_file__a_message_in_fed_s_name_in_fed_s_file_signed_by_kli(played: Table) -> None:
    """Threat: the message says by fed and stands in fed's file, but kli signed the commit. Defence: the file's
    seat must be the signer (ownership.foreign-press); the author must be the signer (press.foreign)."""
    post_in(played, "press/fed.yaml", {"by": "fed", "at": "1.9.move", "say": "I resign."})
    bad = sneak_as(played, "kli", "kli: press")
    assert rejected(played, bad, "ownership.foreign-press", "press/fed.yaml") == {"ownership.foreign-press"}
    played.git("reset", "-q", "--hard", "HEAD~1")
    post_in(played, "press/kli.yaml", {"by": "fed", "at": "1.9.move", "say": "I resign."})  # in his own file
    bad = sneak_as(played, "kli", "kli: press")
    assert rejected(played, bad, "press.foreign", "press/kli.yaml") == {"press.foreign"}


@pytest.mark.parametrize("path", ["press/a.yaml", "press/sub/x.yaml", "press/Fed.yaml"])
def test_press_file__a_press_file_at_a_path_no_seat_owns(played: Table, path: str) -> None:
    """Threat: a file of one's own naming sorts before the others (press/a.yaml) or hides in a folder. Defence:
    the only press files are press/<seat>.yaml (tree.unexpected-path)."""
    post_in(played, path, {"by": "kli", "at": "1.9.move", "say": "first!"})
    played.write_status("kli")
    bad = played.git_commit("kli: press", signer="kli")  # plain git: pbem would not even pick the file up
    assert "tree.unexpected-path" in rejected(played, bad, "tree.unexpected-path", path)


def _edit_first(table: Table, path: str) -> None:
    data = table.data(path)
    table.write(path, dump_mapping({"messages": [{**data["messages"][0], "say": "I never said that."},
                                                 *data["messages"][1:]]}))


def _remove_first(table: Table, path: str) -> None:
    data = table.data(path)
    table.write(path, dump_mapping({"messages": data["messages"][1:]}))


def _remove_file(table: Table, path: str) -> None:
    (table.repo_dir / path).unlink()


@pytest.mark.parametrize("change", [_edit_first, _remove_first, _remove_file], ids=["edited", "removed", "file-gone"])
def test_press_file__fed_takes_back_what_he_said(played: Table, change: Callable[[Table, str], None]) -> None:
    """Threat: fed edits or removes a message he sent (his own file, his own key), through plain git and through
    pbem. Defence: press is append-only (press.changed); pbem refuses it and changes nothing."""
    post_in(played, "press/fed.yaml", {"by": "fed", "at": "1.9.move", "say": "I will not fire."},
            {"by": "fed", "at": "1.9.move", "say": "Promise."})
    sneak_as(played, "fed", "fed: press")
    change(played, "press/fed.yaml")
    before = played.snapshot()
    done = played.cli("yield", who="fed")
    assert done.exit_code == 1 and "[press.changed]" in done.output, done.output
    assert played.snapshot() == before
    bad = sneak_as(played, "fed", "fed: press")
    assert rejected(played, bad, "press.changed", "press/fed.yaml") == {"press.changed"}


def test_press_file__a_foreign_press_file_pushed_to_the_hooked_server(played: Table) -> None:
    """DESIGN §9: kli's message in fed's file, pushed to a bare repository with pbem's pre-receive hook: refused,
    the server's main stays."""
    server = serve(played)
    before = server_ref(server)
    post_in(played, "press/fed.yaml", {"by": "fed", "at": "1.9.move", "say": "I resign."})
    sneak_as(played, "kli", "kli: press")
    done = push(played)
    push_refused(done, "ownership.foreign-press")
    assert server_ref(server) == before


def test_press_file__old_games_press_global_yaml_still_verifies(played: Table) -> None:
    """Games from before per-author press: every seat appended to press/global.yaml in its own name. It stays
    valid, recognised in commit order (each message by the signer, else press.foreign)."""
    post_in(played, "press/global.yaml", {"by": "kli", "at": "1.9.move", "say": "Qapla'!"})
    sneak_as(played, "kli", "kli: press")
    post_in(played, "press/global.yaml", {"by": "fed", "at": "1.9.move", "say": "Good hunting."})
    sneak_as(played, "fed", "fed: press")
    assert_clean(played)


# --- the press-order attack in a Diplomacy game (seed 001: the order press was sent in is the public order) --------

@pytest.fixture(scope="module")
def base_dow_allied(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A dow game at S1901P where England proposed ALLIED to France and France accepted (through the CLI)."""
    from test_dow_flow import new_dow

    dow = new_dow(tmp_path_factory.mktemp("press-order") / "dow")
    dow.ok("propose", "france", "ALLIED", who="england")
    dow.ok("accept", "england", "ALLIED", who="france")
    return dow


@pytest.fixture
def dow_allied(base_dow_allied: Any, tmp_path: Path) -> Any:
    from test_dow_flow import copy_dow

    return copy_dow(base_dow_allied, tmp_path / "dow")


def _recognised(dow: Any) -> dict[tuple[str, str], str]:
    """The recognised state of each pair of powers after the press sent so far (pbem relations --format json)."""
    from pbem.services.dow import seat as dow_seat

    head = dow.ws().head()
    relations = head.game.manifest.ruleset.relations(dow_seat.current_state(head)).recognised
    return {(a, b): relations.get(a, b) for a, b in [("england", "france"), ("austria", "england"),
                                                     ("austria", "france")]}


@pytest.mark.parametrize("how", ["cli", "git"])
def test_press_order__a_later_declaration_in_an_alphabetically_earlier_file(dow_allied: Any, how: str) -> None:
    """Threat (seen): a declaration of war posted after an alliance was accepted, in a file that sorts first
    (press/austria.yaml before press/england.yaml and press/france.yaml), was recognised before the alliance,
    so the acceptance already made became illegal and the war took effect without its cascade. Defence: press
    is recognised in the order of the commits that added it (DESIGN §7.2): the alliance stands, and the war
    forces France's ally England into HOSTILE with Austria."""
    assert _recognised(dow_allied)[("england", "france")] == "ALLIED"
    if how == "cli":
        dow_allied.ok("declare", "france", "WAR", who="austria")
    else:
        files = dow_allied.ws().head_files()
        files["press/austria.yaml"] = (b"messages:\n  - {by: austria, at: S1901P, declare: "
                                       b"{to: france, state: WAR}}\n")
        dow_allied.sneak("austria", files, "austria: press")
    assert _recognised(dow_allied) == {("england", "france"): "ALLIED", ("austria", "england"): "HOSTILE",
                                       ("austria", "france"): "WAR"}
    assert dow_allied.verify() == []
    assert dow_allied.pbem("verify").returncode == 0


def test_press_order__the_declaration_in_a_file_of_one_s_own_naming(dow_allied: Any) -> None:
    """Threat (seen): the same declaration in press/a.yaml, a name no seat has. Defence: refused
    (tree.unexpected-path); nothing in it is recognised."""
    files = dow_allied.ws().head_files()
    files["press/a.yaml"] = b"messages:\n  - {by: austria, at: S1901P, declare: {to: france, state: WAR}}\n"
    bad = dow_allied.sneak("austria", files, "austria: press")
    assert ("tree.unexpected-path", bad) in dow_allied.verify()
    done = dow_allied.pbem("verify")
    assert done.returncode == 1 and "[tree.unexpected-path]" in done.stdout + done.stderr

# === Dice bound to the rules (DESIGN §5 "Binding"; docs/dice.md, docs/threats.md "Dice bound to the rules") ======
# The tactical game of tests/test_tactical_cli_bad_input.py: fed's CA and kli's D7 three hexes apart. In `armed`
# fed holds control at 1.4.move and nobody has declared a shot; in `both_owed` both declared ph1 at 1.4.fire, the
# auction is over (fed's pass closed it: kli, who added last, is not asked again) and each firer owes the die for
# his shot (ref 1.4.fire/UNIT/ph1, a d6), kli first (served after fed's pass); in `fire_owed` kli's die is in
# (rolled, contributed, revealed) and fed holds control, owing his own; in `shot_resolved` both dice were rolled
# and 1.4.fire is resolved (fed holds control at 1.9.move).

from test_dice_bad_input import honest_reveal  # noqa: E402
from test_tactical_cli_bad_input import base_armed, base_auction, base_game, base_resolved  # noqa: E402,F401
from pbem.crypto.keys import load_private_key  # noqa: E402
from pbem.protocol import dice as dice_protocol  # noqa: E402

SHOT = "1.4.fire/CA/ph1"
FED_DIE = "dice/fed-0001.yaml"


@pytest.fixture
def armed(base_armed: Table, tmp_path: Path) -> Table:
    return private(base_armed, tmp_path)


@pytest.fixture(scope="module")
def base_fed_roll_owed(base_auction: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """`base_auction` once kli's die is in: kli, served first, rolls for his shot, fed contributes, kli reveals;
    fed holds control and owes the die of his own shot."""
    table = copy_table(base_auction, tmp_path_factory.mktemp("fed-roll-owed") / "table")
    cli(table, "roll", "--for", "D7 ph1", "--ref", "1.4.fire/D7/ph1", who="kli")
    cli(table, "yield", who="kli")
    cli(table, "yield", who="fed")  # his contribution to kli's die
    cli(table, "yield", who="kli")  # the reveal
    assert [(who, kind) for who, kind, _ in pending(table)] == [("fed", "roll")], pending(table)
    return table


@pytest.fixture
def fire_owed(base_fed_roll_owed: Table, tmp_path: Path) -> Table:
    return private(base_fed_roll_owed, tmp_path)


@pytest.fixture
def both_owed(base_auction: Table, tmp_path: Path) -> Table:
    return private(base_auction, tmp_path)


@pytest.fixture
def shot_resolved(base_resolved: Table, tmp_path: Path) -> Table:
    return private(base_resolved, tmp_path)


def hand_batch(table: Table, roller: str, batch_id: str, refs: Sequence[str], sides: int = 6,
               secret: bytes = bytes(range(32)), **more: Any) -> dict[str, Any]:
    """A commit-reveal batch announced by hand (no pbem), as a cheater's editor would write it: the roller's
    commitment, and his secret sealed to his own key."""
    public = load_private_key(table.key(roller)).public
    return {"id": batch_id, "roller": roller, "mode": "commit-reveal", "sides": sides,
            "rolls": [{"for": f"shot {ref}", "ref": ref} for ref in refs],
            "commit": dice_crypto.commitment(secret).hex(),
            "owner_box": base64.b64encode(seal.seal_to(secret, public)).decode(), **more}


def one_line(done: Any, rule: str) -> str:
    """A refused command's output: exit 1, no traceback, one `pbem: … [rule] …` line (a hint may follow)."""
    text = done.stdout + done.stderr
    assert done.returncode == 1, text
    assert "Traceback" not in text, text
    errors = [line for line in done.stderr.splitlines() if line.startswith("pbem: ")]
    assert len(errors) == 1 and f"[{rule}]" in errors[0], text
    return errors[0]


def test_dice_bound__pbem_roll_refuses_a_d2_for_a_d6_shot(fire_owed: Table) -> None:
    """Threat: fed announces a d2 for his phaser shot (a d2 always scores the top rows of the damage table).
    Defence: the die has the sides the rules give the ref (`dice_sides`): `pbem roll` refuses it at once."""
    line = refused(fire_owed, "roll", "--for", "CA ph1", "--ref", SHOT, "--sides", "2", who="fed",
                   rule="dice.bad-sides")
    assert "d6" in line


def test_dice_bound__a_d2_for_a_d6_shot_written_by_hand_is_found_and_refused_by_the_hook(fire_owed: Table) -> None:
    """The same d2 written by hand: `pbem yield` refuses it, `pbem verify` finds it (naming the `sides` line),
    and a server with the hook refuses the push."""
    server = serve(fire_owed)
    before = server_ref(server)
    write_batch(fire_owed, hand_batch(fire_owed, "fed", "fed-0001", [SHOT], sides=2))
    refused(fire_owed, "yield", who="fed", rule="dice.bad-sides", where=FED_DIE + ":4")
    bad = sneak_as(fire_owed, "fed", "fed: my die")
    assert rejected(fire_owed, bad, "dice.bad-sides", FED_DIE) == {"dice.bad-sides"}
    done = push(fire_owed)
    push_refused(done, "dice.bad-sides")
    assert server_ref(server) == before


def test_dice_bound__a_d1000_for_a_d6_shot_rolled_to_the_end_gives_one_line_not_a_traceback(
        fire_owed: Table) -> None:
    """Threat: a d1000 batch for a d6 shot carried through to its results (a result of 7 to 1000 once crashed
    yield, verify, status and log). Defence: replay never scores a shot with a die of another size (the step
    waits: dice.bad-sides); each command says so in one line and changes nothing."""
    fed_secret = next(s for s in (bytes([i]) * 32 for i in range(256))
                      if derived({**hand_batch(fire_owed, "fed", "fed-0001", [SHOT], 1000, s),
                                  "reveal": s.hex(), "contributions": {"kli": "77" * 32}})[0] > 6)
    raw = hand_batch(fire_owed, "fed", "fed-0001", [SHOT], sides=1000, secret=fed_secret)
    write_batch(fire_owed, raw)
    announced = sneak_as(fire_owed, "fed", "fed: my die")
    raw = {**raw, "contributions": {"kli": "77" * 32}}
    write_batch(fire_owed, raw)
    sneak_as(fire_owed, "kli", "kli: contributed")
    revealed = {**raw, "reveal": fed_secret.hex()}
    write_batch(fire_owed, {**revealed, "results": derived(revealed)})
    sneak_as(fire_owed, "fed", "fed: revealed")
    assert batch(fire_owed, "fed-0001")["results"][0] > 6
    code, found_, output = verdict(fire_owed)
    assert code == 1 and ("dice.bad-sides", announced) in {(f["rule"], f.get("commit")) for f in found_}, output
    fire_owed.edit("kli", through="1.32.final")
    before = fire_owed.snapshot()
    done = fire_owed.pbem("verify")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if "[" in line] == [
        f"{FED_DIE}:4: [dice.bad-sides] batch fed-0001 rolls a d1000 for {SHOT}, which the rules roll with a d6 "
        f"(commit {announced[:10]})"]
    for args in (("status",), ("yield",)):
        assert "a d1000" in one_line(fire_owed.pbem(*args, who="kli"), "dice.bad-sides")
    done = fire_owed.pbem("log")  # the report as it stands: the step waits, the d1000 scores nothing
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "a d1000 where the rules roll a d6: void it" in done.stdout
    assert fire_owed.snapshot() == before


def test_dice_bound__a_die_rolled_before_the_shot_is_declared_is_refused(armed: Table) -> None:
    """Threat (pre-rolling): fed rolls for a shot he has not declared, and declares it only if the die is good.
    Defence: a batch rolls only for refs owed now, the declared shots of the step being resolved
    (dice.unbound-ref): refused by `pbem yield`, found by `pbem verify`, refused by the hook."""
    server = serve(armed)
    before = server_ref(server)
    armed.edit("fed", through="1.8.damage")
    refused(armed, "roll", "--for", "CA ph1 at D7, before I decide", "--ref", SHOT, who="fed",
            rule="dice.unbound-ref")  # `pbem roll` itself refuses a ref nothing owes
    write_batch(armed, hand_batch(armed, "fed", "fed-0001", [SHOT]))
    line = refused(armed, "yield", who="fed", rule="dice.unbound-ref", where=ANY_LINE(FED_DIE))
    assert "never before it is declared" in line
    bad = sneak_as(armed, "fed", "fed: a die for later")
    assert "dice.unbound-ref" in rejected(armed, bad, "dice.unbound-ref", FED_DIE)
    push_refused(push(armed), "dice.unbound-ref")
    assert server_ref(server) == before


def ANY_LINE(file: str) -> str:  # noqa: N802 (reads like the `where` it builds)
    from test_dice_flow import A_LINE
    return file + A_LINE


def test_dice_bound__a_second_batch_for_the_same_shot_is_refused(fire_owed: Table) -> None:
    """Threat (re-rolling): fed announces a second batch for his shot and keeps whichever die he likes.
    Defence: one batch that stands per ref (dice.rebound-ref): `pbem roll` refuses the second, and one
    written by hand is found."""
    cli(fire_owed, "roll", "--for", "CA ph1", "--ref", SHOT, who="fed")
    line = refused(fire_owed, "roll", "--for", "CA ph1 again", "--ref", SHOT, who="fed", rule="dice.rebound-ref")
    assert "fed-0001" in line
    write_batch(fire_owed, hand_batch(fire_owed, "fed", "fed-0002", [SHOT], secret=bytes([9]) * 32))
    refused(fire_owed, "yield", who="fed", rule="dice.rebound-ref", where=ANY_LINE("dice/fed-0002.yaml"))
    bad = sneak_as(fire_owed, "fed", "fed: two dice for one shot")
    assert rejected(fire_owed, bad, "dice.rebound-ref", "dice/fed-0002.yaml") == {"dice.rebound-ref"}


def test_dice_bound__a_re_roll_goes_through_a_void_made_before_anything_was_knowable(fire_owed: Table) -> None:
    """The legal way to replace a batch: fed voids his own before any contribution (alone, with a reason), and
    announces the re-roll whole; the game goes on and every commit verifies."""
    cli(fire_owed, "roll", "--for", "CA ph1", "--ref", SHOT, who="fed")
    cli(fire_owed, "yield", who="fed")
    cli(fire_owed, "yield", who="kli")  # kli contributes: fed could know his die now, he owes the reveal
    reason = "announced with the wrong purpose text"
    sig = fire_owed.root / "kli.sig"
    sig.write_text(cli(fire_owed, "dice", "cosign", "fed-0001", "--reason", reason, who="kli"))
    cli(fire_owed, "dice", "void", "fed-0001", "--reason", reason, "--cosign", f"kli={sig}", who="fed")
    cli(fire_owed, "yield", who="fed")
    assert ("fed", "roll") in [(p, k) for p, k, _ in pending(fire_owed)]  # the shot waits for its die again
    for _ in range(12):  # each firer rolls, the other contributes, the roller reveals: 1.4.fire resolves
        (who, kind, _why), *_ = pending(fire_owed)
        if kind == "horizon":
            break
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(fire_owed, "roll", "--for", f"{unit} ph1 at last", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(fire_owed, "yield", who=who)
    assert batch(fire_owed, "fed-0002")["rolls"] == [{"for": "CA ph1 at last", "ref": SHOT}]
    assert batch(fire_owed, "fed-0002")["results"]
    assert_clean(fire_owed)


def test_dice_bound__a_shot_already_resolved_is_not_rolled_again(shot_resolved: Table) -> None:
    """Threat (re-scoring): fed rolls a new die for his shot at 1.4.fire, already resolved, hoping a later
    erratum replays it with the new die. Defence: no batch for a resolved step (dice.unbound-ref, "resolved"),
    and a scored batch cannot be voided (dice.bad-void), even with every co-signature."""
    shot_resolved.edit("fed", through="1.16.damage")
    write_batch(shot_resolved, hand_batch(shot_resolved, "fed", "fed-0002", [SHOT], secret=bytes([5]) * 32))
    line = refused(shot_resolved, "yield", who="fed", rule="dice.unbound-ref", where=ANY_LINE("dice/fed-0002.yaml"))
    assert "resolved already" in line
    bad = sneak_as(shot_resolved, "fed", "fed: a new die for an old shot")
    assert "dice.unbound-ref" in rejected(shot_resolved, bad, "dice.unbound-ref", "dice/fed-0002.yaml")


def test_dice_bound__a_scored_batch_cannot_be_voided_even_with_every_co_signature(shot_resolved: Table,
                                                                                  tmp_path: Path) -> None:
    reason = "let us roll that again"
    (tmp_path / "kli.sig").write_text(cli(shot_resolved, "dice", "cosign", "fed-0001", "--reason", reason,
                                          who="kli"))
    cli(shot_resolved, "dice", "void", "fed-0001", "--reason", reason, "--cosign", f"kli={tmp_path / 'kli.sig'}",
        who="fed")
    shot_resolved.edit("fed", through="1.16.damage")
    refused(shot_resolved, "yield", who="fed", rule="dice.bad-void", where=ANY_LINE(FED_DIE))
    bad = sneak_as(shot_resolved, "fed", "fed: void a scored die")
    assert "dice.bad-void" in rejected(shot_resolved, bad, "dice.bad-void", FED_DIE)


def test_dice_bound__after_an_erratum_replays_the_fire_step_each_shot_keeps_its_die(shot_resolved: Table) -> None:
    """DESIGN §5: replay resolves each step with the batch bound to it then. An erratum (both sign) corrects
    fed's shot at 1.4.fire to his ph2; replay restarts from the start and the fire step waits for the die of the
    corrected shot only: kli's shot keeps kli-0001, and a new die for it is refused (dice.rebound-ref)."""
    from test_errata import propose

    kept = batch(shot_resolved, "kli-0001")["results"]
    out = propose(shot_resolved, "fed", "unit: CA, do: {fire: {weapon: ph1, target: D7}}",
                  "unit: CA, do: {fire: {weapon: ph2, target: D7}}", "I fired ph2, not ph1")
    erratum = out.split("erratum ", 1)[1].split(":", 1)[0]  # an agreement of kind erratum: fed-NNNN
    assert "applied" in cli(shot_resolved, "erratum", "sign", erratum, who="kli")
    status = shot_resolved.data("status.yaml")
    assert status["firm"] == "1.4.fire"  # the step waits for the corrected shot's die (its auction is not re-run)
    assert status["pending"][0]["player"] == "fed" and status["pending"][0]["kind"] == "roll", status
    cli(shot_resolved, "roll", "--for", "CA ph2", "--ref", "1.4.fire/CA/ph2", who="fed")
    cli(shot_resolved, "yield", who="fed")  # kli now owes his contribution to it
    write_batch(shot_resolved, hand_batch(shot_resolved, "kli", "kli-0002", ["1.4.fire/D7/ph1"],
                                          secret=bytes([3]) * 32))
    bad = sneak_as(shot_resolved, "kli", "kli: a new die for my old shot")
    assert "dice.rebound-ref" in rejected(shot_resolved, bad, "dice.rebound-ref", "dice/kli-0002.yaml",
                                          also=())
    assert batch(shot_resolved, "kli-0001")["results"] == kept


def test_dice_bound__a_start_die_with_more_sides_than_seats_gives_one_line(base_started: Table,
                                                                          tmp_path: Path) -> None:
    """Threat: before the start fed announces the die for who starts with five sides at a table of two (a 3, 4
    or 5 once crashed `pbem start --roll`). Defence: a start die has as many sides as seats (dice.bad-sides):
    found by `pbem verify`, and `pbem start --roll` says so in one line, changing nothing."""
    from test_dice_flow import joined

    table = joined(base_started, tmp_path / "joined")
    secret = next(s for s in (bytes([i]) * 32 for i in range(256))
                  if derived({**hand_batch(table, "fed", "fed-0001", ["start"], 5, s), "reveal": s.hex(),
                              "contributions": {"kli": "66" * 32}})[0] > 2)
    raw = hand_batch(table, "fed", "fed-0001", ["start"], sides=5, secret=secret)
    write_batch(table, raw)
    table.git_commit("fed: who starts", signer="fed")
    raw = {**raw, "contributions": {"kli": "66" * 32}}
    write_batch(table, raw)
    table.git_commit("kli: contributed", signer="kli")
    revealed = {**raw, "reveal": secret.hex()}
    write_batch(table, {**revealed, "results": derived(revealed)})
    table.git_commit("fed: revealed", signer="fed")
    code, found_, output = verdict(table)
    assert code == 1 and "dice.bad-sides" in {f["rule"] for f in found_}, output
    before = table.snapshot()
    done = table.pbem("start", "--roll", who="fed")
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
    assert len([line for line in done.stderr.splitlines() if line.startswith("pbem: ")]) == 1, done.stderr
    assert table.snapshot() == before


def test_ownership_id_author__a_batch_whose_id_names_another_player(fire_owed: Table) -> None:
    """Threat: fed writes his batch as dice/kli-0001.yaml (a path kli will write when he rolls, or one that
    misleads a reader). Defence: an id made out of turn carries its author (ownership.id-author); the hook
    refuses the push."""
    server = serve(fire_owed)
    before = server_ref(server)
    write_batch(fire_owed, hand_batch(fire_owed, "fed", "kli-0009", [SHOT]))
    bad = sneak_as(fire_owed, "fed", "fed: my die, under kli's name")
    assert "ownership.id-author" in rejected(fire_owed, bad, "ownership.id-author", "dice/kli-0009.yaml")
    push_refused(push(fire_owed), "ownership.id-author")
    assert server_ref(server) == before


# --- collusion: at a table of three, contributions are committed before any is revealed ------------------------

@pytest.fixture(scope="module")
def base_melee_dice(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """The three-player melee (tests/test_errata.py): fed announces a table die in his first turn; kli and rom
    owe their contribution commitments."""
    from test_errata import _melee

    table = _melee(tmp_path_factory.mktemp("attacks") / "melee")
    table.edit("fed", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}])
    cli(table, "roll", "--for", "boarding party", who="fed")
    cli(table, "yield", who="fed")
    assert [(b["player"], b["why"]) for b in table.data("status.yaml")["pending"]][:2] == [
        ("kli", "contribution commitment owed to dice fed-0001 of fed"),
        ("rom", "contribution commitment owed to dice fed-0001 of fed")]
    return table


@pytest.fixture
def melee_dice(base_melee_dice: Table, tmp_path: Path) -> Table:
    return private(base_melee_dice, tmp_path)


MELEE = ["fed", "kli", "rom"]


def test_collusion__pbem_yield_commits_then_reveals_each_contribution(melee_dice: Table) -> None:
    """The honest flow costs one handoff more than at two: kli commits; rom commits and, every other
    contribution being committed, reveals in the same commit; kli reveals; fed reveals; all verify."""
    cli(melee_dice, "yield", who="kli")
    assert set(batch(melee_dice)) >= {"contribution_commits", "contribution_boxes"}
    assert "contributions" not in batch(melee_dice)
    cli(melee_dice, "yield", who="rom")
    assert set(batch(melee_dice)["contributions"]) == {"rom"}
    assert melee_dice.data("status.yaml")["pending"][0]["why"] == "contribution owed to dice fed-0001 of fed"
    cli(melee_dice, "yield", who="kli")
    cli(melee_dice, "yield", who="fed")
    raw = batch(melee_dice)
    for player in ("kli", "rom"):
        opened = dice_crypto.contribution_commitment(bytes.fromhex(raw["contributions"][player])).hex()
        assert opened == raw["contribution_commits"][player]
    assert raw["results"] == derived(raw, "melee-e2e", MELEE)
    assert_clean(melee_dice)


def test_collusion__the_last_contributor_cannot_choose_his_contribution_after_the_others(
        melee_dice: Table) -> None:
    """Threat (hole 4): kli, told fed's secret, waits for rom's contribution and grinds his own until the die
    suits them. Defence: every contribution is committed before any is revealed: a plain contribution written
    before every commitment is in is found (dice.bad-contribution), and so is a reveal that does not open its
    commitment or a commitment changed after rom revealed; the hook refuses the push."""
    server = serve(melee_dice)
    before = server_ref(server)
    write_batch(melee_dice, {**batch(melee_dice), "contributions": {"kli": "42" * 32}})
    bad = sneak_as(melee_dice, "kli", "kli: my contribution, in the clear")
    assert "dice.bad-contribution" in rejected(melee_dice, bad, "dice.bad-contribution", "dice/fed-0001.yaml")
    push_refused(push(melee_dice), "dice.bad-contribution")
    assert server_ref(server) == before


def test_collusion__a_reveal_must_open_its_commitment(melee_dice: Table) -> None:
    cli(melee_dice, "yield", who="kli")
    cli(melee_dice, "yield", who="rom")  # rom commits and reveals: now kli, with fed's secret, could grind
    fed_secret = seal.recover_key(base64.b64decode(batch(melee_dice)["owner_box"]),
                                  load_private_key(melee_dice.key("fed")))
    raw = batch(melee_dice)
    ground = next(v for v in (bytes([i]) * 32 for i in range(256))
                  if derived({**raw, "reveal": fed_secret.hex(),
                              "contributions": {**raw["contributions"], "kli": v.hex()}}, "melee-e2e",
                             MELEE)[0] == 6)
    write_batch(melee_dice, {**raw, "contributions": {**raw["contributions"], "kli": ground.hex()}})
    bad = sneak_as(melee_dice, "kli", "kli: my contribution (ground)")
    assert "dice.bad-contribution" in rejected(melee_dice, bad, "dice.bad-contribution", "dice/fed-0001.yaml")


def test_collusion__a_commitment_cannot_change_and_the_roller_cannot_void_alone_once_all_are_in(
        melee_dice: Table) -> None:
    cli(melee_dice, "yield", who="kli")
    cli(melee_dice, "yield", who="rom")
    raw = batch(melee_dice)
    changed = {**raw, "contribution_commits": {**raw["contribution_commits"], "kli": "ab" * 32}}
    write_batch(melee_dice, changed)
    bad = sneak_as(melee_dice, "kli", "kli: a new commitment")
    assert "dice.bad-contribution" in rejected(melee_dice, bad, "dice.bad-contribution", "dice/fed-0001.yaml")
    # fed and kli could know the die now (rom revealed, kli holds his own): fed may not void it alone. He cannot
    # commit now at all (kli owes his reveal); the batch rule holds whenever he could
    before = {raw["id"]: dice_protocol.Batch(raw, "dice/fed-0001.yaml")}
    after = {raw["id"]: dice_protocol.Batch({**raw, "void": {"reason": "wrong purpose"}}, "dice/fed-0001.yaml")}
    got = dice_protocol.batch_findings("melee-e2e", MELEE, {}, None, before, after, "fed")
    assert {f.rule for f in got} == {"dice.bad-void"}
    fresh = {k: v for k, v in raw.items() if k not in ("contributions", "contribution_commits",
                                                        "contribution_boxes")}
    before = {raw["id"]: dice_protocol.Batch(fresh, "dice/fed-0001.yaml")}
    after = {raw["id"]: dice_protocol.Batch({**fresh, "void": {"reason": "wrong purpose"}}, "dice/fed-0001.yaml")}
    assert dice_protocol.batch_findings("melee-e2e", MELEE, {}, None, before, after, "fed") == []


def test_collusion__who_starts_at_a_table_of_three_is_rolled_with_committed_contributions(tmp_path: Path) -> None:
    """`pbem start --roll` at three seats: a d3, kli commits, rom commits and reveals, kli reveals, fed reveals
    (each with `pbem yield`), and the game starts with the seat the die names; every commit verifies."""
    import shutil

    from gitutil import Sandbox
    from pbem.crypto.keys import write_keypair
    from test_dice_flow import ok

    root = tmp_path / "melee"
    template = tmp_path / "template"
    template.mkdir()
    (template / "game.yaml").write_text(
        (Path(__file__).resolve().parents[1] / "games" / "tactical-melee" / "game.yaml").read_text())
    box = Sandbox(root)
    shutil.rmtree(box.home / ".ssh")
    for name in ("alice", "bob", "carol"):
        box.new_key(name)
    write_keypair(root / "keys" / "rom_ed25519", fixed_key("dave"))
    table = Table(root)
    ok(table, "init", str(table.repo_dir), "--template", str(template), "--id", "melee-e2e", who="fed", cwd=root,
       real=True)
    for seat in MELEE:
        ok(table, "join", "--as", seat, who=seat)
    for who in ("kli", "rom", "fed"):  # consent first (kli proposes, rom signs); fed signs last and rolls
        ok(table, "start", "--roll", who=who)
    assert batch(table)["sides"] == 3
    for who in ("kli", "rom", "kli", "fed"):
        ok(table, "yield", who=who)
    raw = batch(table)
    assert set(raw["contribution_commits"]) == set(raw["contributions"]) == {"kli", "rom"}
    first = MELEE[raw["results"][0] - 1]
    assert ok(table, "start", "--roll", who="rom").strip().startswith(
        f"started: the dice chose {first}, who has control")
    assert_clean(table)

# === 12. Entries planted to block the next player (DESIGN §4.2 "Entries and time") ==============================
# A player who wants to win writes, past the firm point, an entry that replay will find illegal only once his
# opponent's turn reaches it: before, that refused the opponent's own clean commit, and nobody could fix it (the
# opponent may not edit it; its owner no longer holds control). Now what its author alone could know is refused in
# his own commit (rules.illegal-action, at his line), and what only others' later actions make impossible is void
# when replay reaches it: the game goes on, and the void is shown to its owner (pbem status, pbem log).
# In `played` fed holds control at 1.9.move; CA moves at speed 12 (impulses 3, 6, 8, 11, 14, …); once fed gives
# orders to 1.16.damage, kli's turn replays 1.13 and 1.14 (where a range 8 break stops it).

REPORT_1 = "report/turn-01.yaml"


def plant_raw(table: Table, line: str) -> int:
    """Append one entry line to turn 1's report exactly as written (e.g. a YAML float); its line number."""
    text = table.read(REPORT_1)
    table.write(REPORT_1, text + ("" if text.endswith("\n") else "\n") + f"  - {line}\n")
    return len(table.read(REPORT_1).splitlines())


def _turn_where_it_does_not_move(table: Table) -> tuple[int, str]:
    table.edit("fed", **FED_GOES_ON, entries=[{"at": "1.13.move", "unit": "CA", "do": {"move": "TL"}}])
    return len(table.read(REPORT_1).splitlines()), "does not move in impulse 13"


def _the_enemy_s_unit(table: Table) -> tuple[int, str]:
    table.edit("fed", **FED_GOES_ON, entries=[{"at": "1.13.move", "unit": "D7", "do": {"move": "TL"}}])
    return len(table.read(REPORT_1).splitlines()), "D7 belongs to kli, not to fed"


def _a_unit_that_does_not_exist(table: Table) -> tuple[int, str]:
    table.edit("fed", **FED_GOES_ON, entries=[{"at": "1.14.move", "unit": "XX", "do": {"move": "F"}}])
    return len(table.read(REPORT_1).splitlines()), "there is no unit XX"


def _speed_as_a_float(table: Table) -> tuple[int, str]:
    table.edit("fed", **FED_GOES_ON)
    return plant_raw(table, '{at: "1.13.activity", by: fed, unit: CA, do: {speed: 1.2e1}}'), "got 12.0"


def _a_second_het(table: Table) -> tuple[int, str]:
    table.edit("fed", **FED_GOES_ON, entries=[{"at": "1.10.activity", "unit": "CA", "do": {"het": "C"}},
                                              {"at": "1.13.activity", "unit": "CA", "do": {"het": "D"}}])
    return len(table.read(REPORT_1).splitlines()), "already made a high energy turn in turn 1"


PLANTS = {"turn-where-it-does-not-move": _turn_where_it_does_not_move, "the-enemy-s-unit": _the_enemy_s_unit,
          "a-unit-that-does-not-exist": _a_unit_that_does_not_exist, "speed-as-a-float": _speed_as_a_float,
          "a-second-HET": _a_second_het}


@pytest.mark.parametrize("plant", PLANTS.values(), ids=PLANTS.keys())
def test_blocking_entry__refused_in_its_author_s_own_yield_and_check(
        played: Table, plant: Callable[[Table], tuple[int, str]]) -> None:
    """Threat: fed plants an entry that kli's turn would meet. Defence: what fed alone could know is judged when he
    writes it: `pbem check` and `pbem yield` refuse it at his line (rules.illegal-action), nothing changes."""
    line, says = plant(played)
    error = refused(played, "yield", who="fed", rule="rules.illegal-action", where=f"{REPORT_1}:{line}")
    assert says in error, error
    check = played.pbem("check", who="fed")
    assert check.returncode == 1 and f"{REPORT_1}:{line}: [rules.illegal-action]" in check.stdout, check.stdout


@pytest.mark.parametrize("plant", PLANTS.values(), ids=PLANTS.keys())
def test_blocking_entry__plain_git_the_finding_is_on_the_planter_s_commit_and_the_next_turn_is_clean(
        played: Table, plant: Callable[[Table], tuple[int, str]]) -> None:
    """The same entry committed with plain git and fed's own key, then kli's honest turn on top (which replays the
    step of the planted entry): `pbem verify` finds rules.illegal-action on fed's commit only; kli's is clean."""
    line, _ = plant(played)
    bad = sneak_as(played, "fed", "fed: a trap for kli")
    played.edit("kli", **KLI_GOES_ON)
    sneak_as(played, "kli", "kli: on")
    assert pending(played)[0][0] == "fed"  # kli's turn replayed past the planted step: a range 8 break
    assert rejected(played, bad, "rules.illegal-action", REPORT_1) == {"rules.illegal-action"}


def test_blocking_entry__the_hook_refuses_the_planted_turn_and_the_game_goes_on(played: Table) -> None:
    """Pushed into a hooked bare repository, the planted turn is refused (main stays); the honest turn lands."""
    server = serve(played)
    before = server_ref(server)
    _turn_where_it_does_not_move(played)
    sneak_as(played, "fed", "fed: a trap for kli")
    push_refused(push(played), "rules.illegal-action")
    assert server_ref(server) == before
    played.git("reset", "-q", "--hard", before)
    played.turn("fed", **FED_GOES_ON)
    assert push(played).returncode == 0 and server_ref(server) == played.head()


VOID_ARC = """\
format: pbem/1
id: void-arc
title: "A shot pre-plotted at a ship that will not stay in the arc"
ruleset: tactical/1
pbem: "0.1.0"
players:
  - {id: fed, name: Federation}
  - {id: kli, name: Klingon}
dice: {mode: commit-reveal}
setup:
  map: {columns: 20, rows: 20}
  turns: 1
  units:
    - {id: CA, owner: fed, hex: "1010", facing: A, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 30, power: 10, weapons: [{id: fwd, type: long, arcs: [A]}]}
    - {id: D7, owner: kli, hex: "1007", facing: C, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, 20, 20],
       hull: 30, power: 10, weapons: []}
  weapons:
    long: {heavy: false, max_range: 15, energy: 1, brackets: [[0, 15]], damage: [[3, 3, 2, 2, 1, 1]]}
  costs: {speed_point: 1}
"""
PLOTTED_SHOT = {"at": "1.4.fire", "unit": "CA", "do": {"fire": {"weapon": "fwd", "target": "D7"}}}


@pytest.fixture(scope="module")
def base_void_arc(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """CA (fed) at 1010 facing A, its `fwd` gun bearing dead ahead on D7 (kli) three hexes off at 1007, facing C;
    both at speed 0. fed holds control at 1.0.alloc."""
    from conftest import GAME_ID, _build

    root = tmp_path_factory.mktemp("void-arc")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(VOID_ARC)
    return _build(root / "started", str(root / "template"), GAME_ID)


@pytest.fixture
def void_arc(base_void_arc: Table, tmp_path: Path) -> Table:
    return copy_table(base_void_arc, tmp_path / "table")


def test_blocking_entry__a_pre_plotted_shot_whose_target_leaves_the_arc_is_void_and_the_game_goes_on(
        void_arc: Table) -> None:
    """Threat: fed pre-plots a shot at 1.4.fire while D7 sits in his arc; kli runs at speed 16 and is out of the
    arc by then. Defence: the shot is void when kli's turn replays 1.4.fire (fed could not know; kli did nothing
    wrong): kli's commit lands, `pbem verify` is clean, fed reads the void in `pbem status` and `pbem log`."""
    void_arc.turn("fed", through="1.4.damage", entries=[PLOTTED_SHOT])  # legal when written: D7 is dead ahead
    void_arc.turn("kli", through="1.4.damage", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 16}}])
    assert void_arc.data("status.yaml")["firm"] == "1.5.move"
    line = next(n for n, text in enumerate(void_arc.read(REPORT_1).splitlines(), 1) if "fwd" in text)
    status = void_arc.cli("status", "--plain", who="fed")
    assert status.exit_code == 0
    (void,) = [text for text in status.output.splitlines() if text.startswith("void: ")]
    assert void.startswith(f"void: {REPORT_1}:{line}: fed's entry at 1.4.fire is void: CA cannot fire fwd at D7")
    assert "outside fwd's arcs A" in void
    assert "void:" not in void_arc.cli("status", "--plain", who="kli").output  # shown to its owner
    assert "void: " in void_arc.cli("status", "--rich", who="fed").output  # the terminal screen too
    log = void_arc.cli("log", who="kli").output
    assert "Void entries" in log and f"{REPORT_1}:{line}: fed's entry at 1.4.fire is void" in log
    code, findings, output = verdict(void_arc)
    assert code == 0 and not findings, output


def test_blocking_entry__the_void_shot_through_a_hooked_hub(void_arc: Table) -> None:
    """The same two turns pushed to a hooked bare repository: both land (the void is no finding)."""
    server = serve(void_arc)
    void_arc.turn("fed", through="1.4.damage", entries=[PLOTTED_SHOT])
    assert push(void_arc).returncode == 0
    void_arc.turn("kli", through="1.4.damage", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 16}}])
    done = push(void_arc)
    assert done.returncode == 0, done.stderr
    assert server_ref(server) == void_arc.head()


def test_blocking_entry__his_own_later_speed_change_voids_his_turn_and_blocks_nobody(played: Table) -> None:
    """fed writes TL at 1.19.move (CA moves there at speed 12), then in a later turn slows to 10 from 1.15, where
    CA no longer moves at 1.19. The old entry is not judged again (only what a commit adds is); replay voids it
    in whoever's turn reaches it, and that turn lands."""
    played.turn("fed", through="1.12.damage", entries=[{"at": "1.19.move", "unit": "CA", "do": {"move": "TL"}}])
    assert pending(played)[0][0] == "kli"
    played.turn("kli", through="1.24.damage")
    while pending(played)[0][0] != "fed":
        played.turn(pending(played)[0][0])
    played.turn("fed", through="1.24.damage",
                entries=[{"at": "1.14.activity", "unit": "CA", "do": {"speed": 10}}])
    for _ in range(8):  # whoever holds control goes on until 1.19 is resolved
        status = played.data("status.yaml")
        if _past(status.get("firm"), (1, 19, 1)):
            break
        played.turn(status["control"], through="1.32.final")
    assert "fed's entry at 1.19.move is void: CA cannot turn left" in played.cli("log", who="kli").output
    code, findings, output = verdict(played)
    assert code == 0 and not findings, output


def _past(firm: str | None, point: tuple[int, int, int]) -> bool:
    from pbem.rulesets.tactical import TacticalRuleset

    return firm is None or TacticalRuleset().parse_time(firm) > point


# === DATC v3.0: orders the engine would carry out with another meaning (rules.order-rewritten) ==================

def test_a_support_the_engine_would_count_for_another_coast_is_refused_when_sealed(tmp_path: Path) -> None:
    """Russia's fleet in Rumania reaches only Bulgaria's east coast. Turkey's "F BLA S F RUM - BUL/SC" names the
    south coast; the engine would silently read it as a support to the east coast (DATC 6.B.9: a coast given
    in a support must match). `pbem orders` refuses it, naming the order, and writes nothing; the verifier voids
    it if it is sealed around pbem (resolve.judge verdict "rewritten", tests/test_datc.py)."""
    from test_dow_flow import new_dow

    game = new_dow(tmp_path / "datc")
    game.phase()  # S1901P: press only
    game.phase({"turkey": ["F ANK - BLA"], "russia": ["F SEV - RUM"]})
    assert game.status()["firm"] == "F1901M"
    out = game.refused("orders", game.orders_file(["F BLA S F RUM - BUL/SC"]), who="turkey",
                       rule="rules.order-rewritten")
    assert "F BLA S F RUM - BUL/SC" in out and "another coast" in out
    # the right coast is a valid order, though a forbidden one while Turkey and Russia are NEUTRAL: sealed as written
    game.ok("orders", game.orders_file(["F BLA S F RUM - BUL/EC"]), "--anyway", who="turkey")

# === Secrets: sealed steps, seeking-weapon targets and secret ids (DESIGN §4.7, §6, §7.1) =======================
#
# The game of tests/test_tactical_cli_bad_input.py: fed's CA and kli's D7 (with a drone, dr1) three hexes apart,
# every turn's energy allocation sealed (`allocation: sealed`), one turn. Each cheat is tried through pbem (refused,
# nothing changed), then committed with plain git (pbem verify finds it) and, where said, pushed to a hooked server.

from test_tactical_cli_bad_input import TEMPLATE as SEALED_DUEL  # noqa: E402
from test_tactical_cli_bad_input import seal as seal_allocation  # noqa: E402

S1_LAUNCH = {"at": "1.1.activity", "unit": "D7", "do": {"launch": {"weapon": "dr1", "as": "S1"}}}


def cheat_refused(table: Table, *args: str, who: str, rule: str, code: int = 1) -> str:
    """`pbem ARGS` (the real one) exits `code` naming `rule`, without a traceback, and changes nothing."""
    before = table.snapshot()
    done = table.pbem(*args, who=who)
    assert done.returncode == code and f"[{rule}]" in done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert table.snapshot() == before
    return done.stderr


def seal_file(table: Table, who: str, kind: str, value: Mapping[str, Any], *options: str) -> str:
    """`pbem seal KIND FILE [OPTIONS]` as `who`; returns pbem's line."""
    source = table.root / f"{who}-{kind}-{random.getrandbits(32)}.json"
    source.write_text(json.dumps(value))
    return cli(table, "seal", kind, str(source), *options, who=who)


@pytest.fixture(scope="session")
def base_sealed_duel(tmp_path_factory: pytest.TempPathFactory) -> Table:
    from conftest import GAME_ID, _build

    def build(root: Path) -> None:
        (root / "template").mkdir(parents=True)
        (root / "template" / "game.yaml").write_text(SEALED_DUEL)
        table = _build(root / "started", str(root / "template"), GAME_ID)
        table.turn("fed", through="1.32.final", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 4}}])

    return Table(built_once(tmp_path_factory, "attacks-base_sealed_duel", build) / "started")


@pytest.fixture(scope="session")
def base_drone_out(base_sealed_duel: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """kli launched S1 at 1.1.activity with its target (the CA) sealed in the same commit, as pbem does it; both
    now owe their sealed allocations."""

    def build(table: Table) -> None:
        table.edit("kli", through="1.32.final", entries=[S1_LAUNCH])
        assert "kli-0001" in seal_file(table, "kli", "target", {"unit": "S1", "target": "CA"}, "--concerns", "S1")
        table.turn("kli", note="a drone, its target sealed")
        assert {(p, k) for p, k, _ in pending(table)} == {("fed", "sealed"), ("kli", "sealed")}

    return built_from(tmp_path_factory, "attacks-base_drone_out", base_sealed_duel, build)


def test_energy_audit_dodged__an_allocation_that_says_turn_999(base_sealed_duel: Table, tmp_path: Path) -> None:
    """Threat: fed seals his turn-1 allocation saying `turn: 999` (speed 0, although his CA runs at speed 4): the
    audit used to trust that turn and check it against a turn where nothing happened, so the real turn 1 was
    never audited. Defence: the audit is bound to the step the secret answers (its `step`, 1.0.alloc): the reveal
    is refused (secret.wrong-step) and turn 1's record is audited all the same (rules.allocation)."""
    table = copy_table(base_sealed_duel, tmp_path / "table")
    table.turn("kli", through="1.32.final")
    seal_allocation(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
    seal_allocation(table, "fed", {"turn": 999, "units": {"CA": {"speed": 0}}})
    assert table.data("secrets/fed-0001.yaml")["step"] == "1.0.alloc"
    assert [k for p, k, _ in pending(table) if p == "fed"] == ["secret"]  # the turn is over: reveal owed
    error = cheat_refused(table, "yield", who="fed", rule="secret.wrong-step")
    assert "says turn 999, but it was sealed for 1.0.alloc" in error, error
    cli(table, "reveal", "fed-0001", who="fed")
    bad = sneak_as(table, "fed", "fed: revealing my allocation")
    rules = rejected(table, bad, "secret.wrong-step", "secrets/fed-0001.yaml")
    assert rules == {"secret.wrong-step", "rules.allocation"}, rules  # the real turn is audited: speed 4 unpaid


def test_energy_audit_dodged__an_allocation_sealed_without_its_step(played: Table) -> None:
    """Threat: in a game whose allocations are open, fed seals an "allocation" in his own turn with no step, to
    show later as proof of honest play for whatever turn suits him. Defence: an allocation names the sealed step
    it answers (secret.wrong-step); `pbem seal` does not even offer the kind here."""
    raw, _ = secret_file(played, "fed", b'{"turn":1,"units":{"CA":{"speed":12}}}', sid="fed-0001")
    write_secret(played, {**raw, "kind": "allocation"})
    bad = legal_turn(played)
    assert rejected(played, bad, "secret.wrong-step", "secrets/fed-0001.yaml") == {"secret.wrong-step"}
    source = played.root / "alloc.json"
    source.write_text('{"turn": 1, "units": {"CA": {"speed": 12}}}')
    played.git("reset", "-q", "--hard", "HEAD~1")
    error = cheat_refused(played, "seal", "allocation", str(source), who="fed", rule="usage.secret-kind", code=2)
    assert "no secret kind 'allocation' in this game. You can seal: note (" in error, error


def test_foreign_seeking_target__the_prey_seals_a_target_for_the_drone(base_drone_out: Table,
                                                                         tmp_path: Path) -> None:
    """Threat: fed, the drone's prey, seals a "target" for kli's S1 (naming the D7, kli's own ship) with his
    allocation: found by the free-text unit it concerns, it used to override kli's and leave fed owing its reveal,
    able to stall the game. Defence: only the weapon's owner seals its target, in the launch commit
    (secret.foreign-target); replay looks a target up by (owner, weapon). Refused by pbem, by `pbem verify`, and by
    a hooked server."""
    table = copy_table(base_drone_out, tmp_path / "table")
    server = serve(table)
    seal_file(table, "fed", "target", {"unit": "S1", "target": "D7"}, "--concerns", "S1")
    seal_file(table, "fed", "allocation", {"turn": 1, "units": {"CA": {"speed": 4}}})
    error = cheat_refused(table, "yield", who="fed", rule="secret.foreign-target")
    assert "S1 is kli's seeking weapon; only kli seals its target" in error, error
    bad = sneak_as(table, "fed", "fed: my allocation")
    assert "secret.foreign-target" in rejected(table, bad, "secret.foreign-target", "secrets/fed-0001.yaml")
    push_refused(push(table), "secret.foreign-target")
    assert server_ref(server) != bad
    # even in a history holding it, replay finds S1's target by (owner, weapon): kli's, never fed's
    from pbem.services.workspace import Workspace

    targets = Workspace.open(table.repo_dir).history().last.game.inputs.targets
    assert [(owner, unit, sealed.secret) for (owner, unit), sealed in targets.items()] == [
        ("fed", "S1", "fed-0001"), ("kli", "S1", "kli-0001")]


def test_second_seeking_target__the_owner_seals_two_targets_for_one_drone(base_sealed_duel: Table,
                                                                            tmp_path: Path) -> None:
    """Threat: kli seals two targets for S1 in its launch commit (CA, and a decoy), and reveals whichever the
    drone happens to meet. Defence: one target per seeking weapon (secret.duplicate-target)."""
    table = copy_table(base_sealed_duel, tmp_path / "table")
    table.edit("kli", through="1.32.final", entries=[S1_LAUNCH])
    seal_file(table, "kli", "target", {"unit": "S1", "target": "CA"}, "--concerns", "S1")
    seal_file(table, "kli", "target", {"unit": "S1", "target": "D7"}, "--concerns", "S1")
    cheat_refused(table, "yield", who="kli", rule="secret.duplicate-target")
    bad = sneak_as(table, "kli", "kli: a drone with two targets")
    assert rejected(table, bad, "secret.duplicate-target", "secrets/kli-0002.yaml") == {"secret.duplicate-target"}


def test_late_seeking_target__a_target_sealed_a_commit_after_the_launch(base_sealed_duel: Table,
                                                                        tmp_path: Path) -> None:
    """Threat: kli launches S1 without a target and seals one a commit later, once he sees where the drone
    goes (or a second one after an honest launch). Defence: a launch needs its target sealed in the same commit
    (secret.missing-target), and a target sealed after its launch commit is refused (secret.late-target)."""
    table = copy_table(base_sealed_duel, tmp_path / "table")
    table.edit("kli", through="1.32.final", entries=[S1_LAUNCH])
    error = cheat_refused(table, "yield", who="kli", rule="secret.missing-target")
    assert "pbem seal target FILE --concerns S1" in error, error
    launch = sneak_as(table, "kli", "kli: a drone, target to follow")
    # pbem no longer builds on a history with findings: the cheater writes the next files by hand
    target, _ = secret_file(table, "kli", b'{"target":"CA","unit":"S1"}', sid="kli-0001")
    write_secret(table, {**target, "kind": "target", "concerns": "S1"})
    allocation, _ = secret_file(table, "kli", b'{"turn":1,"units":{"D7":{"speed":0}}}', sid="kli-0002")
    write_secret(table, {**allocation, "kind": "allocation", "step": "1.0.alloc"})
    late = sneak_as(table, "kli", "kli: my allocation, and S1's target after all")
    code, found, output = verdict(table)
    assert code == 1 and "Traceback" not in output
    assert {(f["rule"], f.get("commit")) for f in found} >= {("secret.missing-target", launch),
                                                               ("secret.late-target", late)}, found


def test_late_seeking_target__a_second_target_after_an_honest_launch(base_drone_out: Table, tmp_path: Path) -> None:
    table = copy_table(base_drone_out, tmp_path / "table")
    seal_file(table, "kli", "target", {"unit": "S1", "target": "D7"}, "--concerns", "S1")
    seal_file(table, "kli", "allocation", {"turn": 1, "units": {"D7": {"speed": 0}}})
    cheat_refused(table, "yield", who="kli", rule="secret.late-target")
    bad = sneak_as(table, "kli", "kli: my allocation")
    assert "secret.late-target" in rejected(table, bad, "secret.late-target", "secrets/kli-0002.yaml")


def test_secret_id_author__a_secret_whose_id_names_another_player(played: Table) -> None:
    """Threat: fed seals a note as `secrets/kli-0001.yaml` (owner fed), taking the path kli's next secret would
    use, or making his secret look like kli's in a listing. Defence: a secret's id carries its owner
    (ownership.id-author); refused by `pbem verify` and by a hooked server. `pbem seal` writes fed-0001 itself;
    an id naming nobody (`s0007`) is no path of the layout (tree.unexpected-path)."""
    server = serve(played)
    raw, _ = secret_file(played, "fed", b'{"text":"I turn to starboard at range 8"}', sid="kli-0001")
    write_secret(played, raw)
    bad = legal_turn(played)
    assert rejected(played, bad, "ownership.id-author", "secrets/kli-0001.yaml") == {"ownership.id-author"}
    push_refused(push(played), "ownership.id-author")
    assert server_ref(server) != bad
    played.git("reset", "-q", "--hard", "HEAD~1")
    assert "sealed secret fed-0001 (note)" in seal_file(played, "fed", "note", {"text": "my plan"})
    legal_turn(played)
    assert_clean(played)
    assert push(played).returncode == 0
    raw, _ = secret_file(played, "fed", b'{"text":"an id naming nobody"}', sid="s0007")
    write_secret(played, raw)
    played.edit("fed", through="1.20.damage")
    bad = played.git_commit("fed: straight on", signer="fed")  # plain git: pbem commits no such path
    assert "tree.unexpected-path" in rejected(played, bad, "tree.unexpected-path", "secrets/s0007.yaml")


@pytest.mark.parametrize(("rule", "files"), [
    ("secret.wrong-kind", [("fed-0001", "note", b'{"text":"no allocation this turn"}')]),
    ("secret.bad-secret", [("fed-0001", "allocation", b'{"turn":1,"units":{"CA":{"speed":4}}}'),
                           ("fed-0002", "allocation", b'{"turn":1,"units":{"CA":{"speed":0}}}')]),
], ids=["a note as the allocation", "two allocations for one step"])
def test_energy_audit_dodged__the_step_answered_by_something_else(base_sealed_duel: Table, tmp_path: Path,
                                                                   rule: str, files: list) -> None:
    """Threat: fed answers 1.0.alloc with a note (so no allocation of his is ever audited for turn 1), or with two
    allocations, to reveal the one that suits. Defence: a sealed step takes one input of its kind
    (secret.wrong-kind, secret.bad-secret)."""
    table = copy_table(base_sealed_duel, tmp_path / "table")
    table.turn("kli", through="1.32.final")
    for sid, kind, plaintext in files:
        raw, _ = secret_file(table, "fed", plaintext, sid=sid)
        write_secret(table, {**raw, "kind": kind, "step": "1.0.alloc"})
    bad = sneak_as(table, "fed", "fed: my allocation")
    assert rule in rejected(table, bad, rule, f"secrets/{files[-1][0]}.yaml")


def test_seeking_target_for_another_weapon__the_revealed_target_names_another_unit(base_drone_out: Table,
                                                                                    tmp_path: Path) -> None:
    """Threat: kli seals S1's target in its launch commit but writes another weapon in it (`unit: S9`), to argue
    at the reveal which weapon it was for. Defence: a revealed target names the weapon it was sealed for
    (secret.bad-target, at the reveal's key line)."""
    table = copy_table(base_drone_out, tmp_path / "table")
    raw = dict(table.data("secrets/kli-0001.yaml"))
    wrong, key32 = secret_file(table, "kli", b'{"target":"CA","unit":"S9"}', sid="kli-0001")
    table.git("reset", "-q", "--hard", "HEAD~1")  # the launch commit again, with this target instead
    table.edit("kli", through="1.32.final", entries=[S1_LAUNCH])
    write_secret(table, {**raw, **{k: wrong[k] for k in ("box", "commit", "owner_box")}})
    table.turn("kli", note="a drone, its target sealed")
    seal_file(table, "kli", "allocation", {"turn": 1, "units": {"D7": {"speed": 0}}})
    write_secret(table, {**table.data("secrets/kli-0001.yaml"), "key": key32.hex()})
    bad = sneak_as(table, "kli", "kli: my allocation, and S1's target shown early")
    assert "secret.bad-target" in rejected(table, bad, "secret.bad-target", "secrets/kli-0001.yaml")


@pytest.mark.parametrize(("rule", "plaintext", "key_hex"), [
    ("secret.bad-key", b'{"turn":1,"units":{"CA":{"speed":4}}}', "00" * 32),
    ("schema.invalid", b'[1, 2, 3]', None),
], ids=["a key that opens nothing", "a box holding no allocation"])
def test_energy_audit_dodged__an_allocation_that_cannot_be_audited(base_sealed_duel: Table, tmp_path: Path,
                                                                   rule: str, plaintext: bytes,
                                                                   key_hex: str | None) -> None:
    """Threat: fed's revealed allocation cannot be read (a key that opens nothing, a box holding a list), hoping
    the audit skips it or the verifier crashes. Defence: the reveal is refused with its rule, one line, no
    traceback."""
    table = copy_table(base_sealed_duel, tmp_path / "table")
    table.turn("kli", through="1.32.final")
    seal_allocation(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
    raw, key32 = secret_file(table, "fed", plaintext, sid="fed-0001")
    write_secret(table, {**raw, "kind": "allocation", "step": "1.0.alloc"})
    sneak_as(table, "fed", "fed: my allocation")
    write_secret(table, {**raw, "kind": "allocation", "step": "1.0.alloc", "key": key_hex or key32.hex()})
    bad = table.sneak("fed", "fed: revealing it", status="keep")  # pbem cannot even compute a status for it
    assert rule in rejected(table, bad, rule, "secrets/fed-0001.yaml")

# === Setup: the start by mutual consent (DESIGN §2 Setup, §4.8; seed 000 §2.A) ================================
# Before the start anyone seated may change game.yaml, but the start commit needs a `start` agreement over exactly
# the game.yaml it starts with, signed by every seat, and control must go where it says. The base games: `joined`
# (both seats claimed, nobody consented yet) and `consented` (fed proposed the start, kli signed it: fed-0001 over
# the honest game.yaml, first fed).

AGREEMENT = "agreements/fed-0001.yaml"


def setup_point(base_started: Table, dest: Path, index: int) -> Table:
    """The duel at its commit number `index` (0 init, 1 and 2 the joins, 3 fed proposes, 4 kli signs, 5 start)."""
    table = copy_table(base_started, dest)
    commits = table.git("rev-list", "--first-parent", "--reverse", "HEAD").stdout.decode().split()
    assert len(commits) == 6, commits
    table.git("reset", "-q", "--hard", commits[index])
    return table


def start_alone(table: Table, first: str = "fed", signer: str = "fed") -> str:
    """Write the status.yaml a start with `first` in control computes (as pbem would) and commit it with plain
    `git commit -S`, signed by `signer`, with no consent gathered."""
    from pbem.files.game import read_files
    from pbem.protocol.control import expected_start

    from pbem.services.workspace import Workspace

    game = read_files(Workspace.open(table.repo_dir).worktree_files())
    table.write("status.yaml", dump_mapping(expected_start(game, first)[1].to_data()))
    return table.git_commit(f"start: {first} has control", signer=signer)


def takeover(table: Table) -> None:
    """fed's rewrite of game.yaml after everyone joined: his cruiser ten times stronger, and the "neutral" dice
    escrow's key replaced by a second key of his own (dave's), in escrow mode."""
    text = table.read("game.yaml")
    text = text.replace("shields: [30, 24, 24, 20, 24, 24], hull: 40, power: 30",
                        "shields: [300, 240, 240, 200, 240, 240], hull: 400, power: 300", 1)
    text = text.replace("dice: {mode: commit-reveal}",
                        f'dice: {{mode: escrow, escrow_key: "{key("dave").public.to_line()}"}}', 1)
    assert "hull: 400" in text and "escrow_key" in text
    table.write("game.yaml", text)


def agreement_sign(raw: Mapping[str, Any], signer: str, game_id: str = "duel-e2e") -> str:
    """A signature over `raw` (without its signatures) in game `game_id`, made outside pbem with `signer`'s key,
    over the message docs/protocol.md gives."""
    body = {k: v for k, v in raw.items() if k != "signatures"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    message = b"pbem-agreement-v1" + game_id.encode() + b"\0" + hashlib.sha256(canonical).digest()
    return sshsig.sign(key(signer), message, "pbem")


def game_hash(table: Table) -> str:
    return hashlib.sha256((table.repo_dir / "game.yaml").read_bytes()).hexdigest()


def test_setup_takeover__game_yaml_rewritten_after_everyone_consented_then_started_alone(
        base_started: Table, tmp_path: Path) -> None:
    """Threat (the setup takeover): after both joined and kli signed the start over the honest game.yaml, fed
    rewrites it (his ship ten times stronger, the escrow key his own) and starts the game alone with himself
    first, to grind escrow dice offline. Defence: the start needs every seat's signature over the exact
    game.yaml it starts with; kli's is over the old one (agreement.stale). The rewrite itself is a legal
    proposal before the start; it simply cannot become the game without kli's consent."""
    table = setup_point(base_started, tmp_path / "t", 4)
    takeover(table)
    rewrite = table.git_commit("setup: a few corrections", signer="fed")
    bad = start_alone(table)
    assert rejected(table, bad, "agreement.stale", "game.yaml") == {"agreement.stale"}
    assert rewrite not in {f.get("commit") for f in verdict(table)[1]}


def test_setup_takeover__started_alone_without_any_agreement(base_started: Table, tmp_path: Path) -> None:
    """Threat: the same rewrite right after the joins, and a start commit nobody else agreed to (no agreement at
    all). Defence: setup.no-consent."""
    table = setup_point(base_started, tmp_path / "t", 2)
    takeover(table)
    table.git_commit("setup: a few corrections", signer="fed")
    bad = start_alone(table)
    assert rejected(table, bad, "setup.no-consent", "game.yaml") == {"setup.no-consent"}


def test_setup_takeover__through_pbem_the_start_waits_for_kli_over_the_new_game_yaml(
        base_started: Table, tmp_path: Path) -> None:
    """Through pbem: fed proposed the start, then rewrites game.yaml before kli signed. kli's `pbem sign` of the
    old agreement is refused (agreement.stale, exit 1, nothing changed); fed's `pbem start --first fed` does not
    start the game, it proposes the start over the new game.yaml (fed-0002), and `pbem status` asks kli to
    review game.yaml and sign; run again, fed's `pbem start` is refused (agreement.unsigned, exit 1, nothing
    changed)."""
    from test_dice_flow import A_LINE

    table = setup_point(base_started, tmp_path / "t", 3)
    takeover(table)
    table.git_commit("setup: a few corrections", signer="fed")
    refused(table, "sign", "fed-0001", who="kli", rule="agreement.stale", where=AGREEMENT + A_LINE)
    out = table.pbem("start", "--first", "fed", who="fed")
    assert out.returncode == 0 and "proposed start agreement fed-0002" in out.stdout, out.stdout + out.stderr
    assert not (table.repo_dir / "status.yaml").exists()
    status = table.pbem("status", "--plain", who="kli")
    assert "`pbem sign fed-0002`" in status.stdout and "review game.yaml" in status.stdout, status.stdout
    refused(table, "start", "--first", "fed", who="fed", rule="agreement.unsigned",
            where="agreements/fed-0002.yaml")
    assert_clean(table)


def test_setup_takeover__pushed_to_a_hooked_server_is_refused(base_started: Table, tmp_path: Path) -> None:
    """DESIGN §9: the same takeover pushed to a bare repository with pbem's pre-receive hook: refused with
    agreement.stale on a `remote:` line; the server's main does not move."""
    table = setup_point(base_started, tmp_path / "t", 4)
    server = serve(table)
    before = server_ref(server)
    takeover(table)
    table.git_commit("setup: a few corrections", signer="fed")
    start_alone(table)
    done = push(table)
    push_refused(done, "agreement.stale")
    assert "Traceback" not in done.stderr and server_ref(server) == before


def test_start_with_one_signature_missing(base_started: Table, tmp_path: Path) -> None:
    """Threat: fed proposes the start and starts before kli signed. Defence: agreement.unsigned; `pbem start`
    refuses the same (exit 1, nothing changed)."""
    table = setup_point(base_started, tmp_path / "t", 3)
    refused(table, "start", "--first", "fed", who="fed", rule="agreement.unsigned", where=AGREEMENT)
    bad = start_alone(table)
    assert rejected(table, bad, "agreement.unsigned", AGREEMENT) == {"agreement.unsigned"}


def test_start_against_the_agreement__control_to_another_player(base_started: Table, tmp_path: Path) -> None:
    """Threat: both signed "fed starts", kli starts with himself in control. Defence: setup.no-consent."""
    table = setup_point(base_started, tmp_path / "t", 4)
    bad = start_alone(table, first="kli", signer="kli")
    assert rejected(table, bad, "setup.no-consent", "status.yaml") == {"setup.no-consent"}


def test_signature_over_another_game_yaml(base_started: Table, tmp_path: Path) -> None:
    """Threat: kli's signature made over the start of another game.yaml (here: the rewritten one), pasted into
    fed-0001. Defence: the signature covers the agreement's content, the game.yaml hash in it included
    (agreement.signature). A whole agreement over another game.yaml, fully signed, is stale at once."""
    table = setup_point(base_started, tmp_path / "t", 3)
    raw = dict(table.data(AGREEMENT))
    other = {**raw, "content": {**raw["content"], "game": hashlib.sha256(b"another game.yaml").hexdigest()}}
    table.write(AGREEMENT, dump_mapping({**raw, "signatures": {**raw["signatures"],
                                                               "kli": agreement_sign(other, "kli")}}))
    bad = table.git_commit("kli: signs fed-0001", signer="kli")
    assert rejected(table, bad, "agreement.signature", AGREEMENT) == {"agreement.signature"}


def test_signature_over_another_game_yaml__proposed_over_a_hash_that_is_not_this_game_yaml(
        base_started: Table, tmp_path: Path) -> None:
    table = setup_point(base_started, tmp_path / "t", 2)
    raw: dict[str, Any] = {"id": "fed-0001", "kind": "start", "by": "fed",
                           "content": {"game": hashlib.sha256(b"another game.yaml").hexdigest(), "first": "fed"},
                           "signatures": {}}
    table.write(AGREEMENT, dump_mapping({**raw, "signatures": {"fed": agreement_sign(raw, "fed")}}))
    bad = table.git_commit("fed: proposes fed-0001", signer="fed")
    assert rejected(table, bad, "agreement.stale", AGREEMENT) == {"agreement.stale"}


@pytest.mark.parametrize(("name", "signer", "committer", "rule", "also"), [
    ("kli", "carol", "kli", "agreement.signature", set()),
    ("carol", "carol", "fed", "agreement.foreign-signature", set()),
    ("carol", "carol", "carol", "agreement.foreign-signature", {"signature.unknown-key"}),
], ids=["kli-name-carol-key", "carol-signs-in-fed-commit", "carol-commits"])
def test_signature_by_a_key_that_holds_no_seat(base_started: Table, tmp_path: Path, name: str, signer: str,
                                               committer: str, rule: str, also: set[str]) -> None:
    """Threat: a signature made by carol's key, which holds no seat: under kli's name in kli's own commit, under
    her own name in fed's commit, or committed by carol herself. Defence: a signature must verify under the
    named seat's key in game.yaml (agreement.signature), and only a seated player signs, for himself
    (agreement.foreign-signature; a stranger's commit is signature.unknown-key)."""
    table = setup_point(base_started, tmp_path / "t", 3)
    raw = dict(table.data(AGREEMENT))
    table.write(AGREEMENT, dump_mapping({**raw, "signatures": {**raw["signatures"],
                                                               name: agreement_sign(raw, signer)}}))
    bad = table.git_commit(f"{committer}: signs fed-0001", signer=committer)
    assert rejected(table, bad, rule, AGREEMENT) - {"signature.unknown-key"} <= {rule} | also


@pytest.mark.parametrize("how", ["replayed", "forged"])
def test_forged_or_replayed_signature_from_another_game(base_started: Table, tmp_path: Path, how: str) -> None:
    """Threat: kli's genuine signature of the same agreement in another game (same id, kind, content) replayed
    here, or a forged one (random bytes in valid armor). Defence: the game id is part of what is signed
    (agreement.signature); and fed pasting it in is writing in kli's name (agreement.foreign-signature), so a
    start by fed with it is refused too."""
    table = setup_point(base_started, tmp_path / "t", 3)
    raw = dict(table.data(AGREEMENT))
    if how == "replayed":
        sig = agreement_sign(raw, "kli", game_id="another-duel")
    else:
        sig = sshsig_armor(key("kli").public.blob(), random.Random(7).randbytes(64), b"pbem")
    table.write(AGREEMENT, dump_mapping({**raw, "signatures": {**raw["signatures"], "kli": sig}}))
    bad = table.git_commit("kli: signs fed-0001", signer="kli")
    assert rejected(table, bad, "agreement.signature", AGREEMENT) == {"agreement.signature"}
    table.git("reset", "-q", "--hard", "HEAD~1")
    table.write(AGREEMENT, dump_mapping({**raw, "signatures": {**raw["signatures"], "kli": sig}}))
    start_alone(table)
    rules = rejected(table, table.head(), "agreement.foreign-signature", AGREEMENT)
    assert rules == {"agreement.foreign-signature", "agreement.unsigned"}


def test_agreement_in_another_player_s_name__id_and_by_name_the_proposer(base_started: Table,
                                                                        tmp_path: Path) -> None:
    """Threat: fed proposes the start as if kli had (agreements/kli-0001.yaml, by: kli). Defence: an id and its
    `by` name the proposer (ownership.id-author)."""
    table = setup_point(base_started, tmp_path / "t", 2)
    raw: dict[str, Any] = {"id": "kli-0001", "kind": "start", "by": "kli",
                           "content": {"game": game_hash(table), "first": "fed"}, "signatures": {}}
    table.write("agreements/kli-0001.yaml", dump_mapping({**raw, "signatures": {"fed": agreement_sign(raw, "fed")}}))
    bad = table.git_commit("fed: proposes kli-0001", signer="fed")
    assert rejected(table, bad, "ownership.id-author", "agreements/kli-0001.yaml") == {"ownership.id-author"}


def test_consent_withdrawn_or_changed__a_signed_agreement_edited_or_removed(base_started: Table,
                                                                            tmp_path: Path) -> None:
    """Threat: after kli signed "fed starts", fed edits the agreement to "the dice decide" keeping kli's
    signature, or removes it. Defence: nothing signed changes or disappears (agreement.changed)."""
    table = setup_point(base_started, tmp_path / "t", 4)
    raw = dict(table.data(AGREEMENT))
    table.write(AGREEMENT, dump_mapping({**raw, "content": {"game": raw["content"]["game"], "roll": True}}))
    bad = table.git_commit("fed: on second thoughts", signer="fed")
    assert "agreement.changed" in rejected(table, bad, "agreement.changed", AGREEMENT)
    table.git("reset", "-q", "--hard", "HEAD~1")
    table.git("rm", "-q", AGREEMENT)
    bad = table.git_commit("fed: never mind", signer="fed")
    assert rejected(table, bad, "agreement.changed", AGREEMENT) == {"agreement.changed"}


def test_start_agreement_after_the_start__closed(played: Table) -> None:
    """Threat: a new start agreement (or a late signature) once the game runs, e.g. to claim consent to another
    first player afterwards. Defence: a start agreement is open only before the start (agreement.closed)."""
    raw: dict[str, Any] = {"id": "fed-0002", "kind": "start", "by": "fed",
                           "content": {"game": game_hash(played), "first": "fed"}, "signatures": {}}
    played.write("agreements/fed-0002.yaml", dump_mapping({**raw, "signatures": {"fed": agreement_sign(raw, "fed")}}))
    bad = played.sneak("fed", "fed: proposes fed-0002")
    assert rejected(played, bad, "agreement.closed", "agreements/fed-0002.yaml") == {"agreement.closed"}


def test_agreement_file_and_id_disagree__a_signed_proposal_copied_to_another_file(base_started: Table,
                                                                                   tmp_path: Path) -> None:
    """Threat: fed-0001, signed by both, copied to agreements/fed-0002.yaml (a second "agreement" for free), or
    a proposal whose file does not match its id. Defence: an agreement lives at agreements/<its id>.yaml
    (agreement.malformed)."""
    table = setup_point(base_started, tmp_path / "t", 4)
    table.write("agreements/fed-0002.yaml", table.read(AGREEMENT))
    bad = table.git_commit("fed: a copy", signer="fed")
    assert "agreement.malformed" in rejected(table, bad, "agreement.malformed", "agreements/fed-0002.yaml")

# === Gates: the game branch by name, a check the branch cannot replace, output is data (DESIGN §9) ==========

from test_escape import DANGEROUS, runner_parse  # noqa: E402
from test_hook import plain_server  # noqa: E402
from actions_runner import FakeGitHub as ActionsHub, Runner, pull_request_event  # noqa: E402


def test_rollback__on_a_server_whose_head_names_master_main_still_only_moves_forward(played: Table) -> None:
    """Threat: the host made the server with plain `git init --bare` (HEAD names master); a hook that guarded
    HEAD's branch answered ok to a force-push that took back turns landed on main. Defence: the hook guards the
    game branch by name (`main`, or `pbem hook install --branch`), whatever HEAD says, and warns at install
    (history.rewritten)."""
    server, installed = plain_server(played)
    assert "HEAD names refs/heads/master" in installed.output
    assert push(played).returncode == 0
    legal_turn(played)
    assert push(played).returncode == 0
    landed = server_ref(server)
    played.git("reset", "-q", "--hard", "HEAD~1")
    played.edit("fed", through="1.12.damage")
    played.sneak("fed", "fed: a different turn")
    push_refused(push(played, "+main"), "history.rewritten")
    push_refused(push(played, ":main"), "history.rewritten")
    assert server_ref(server) == landed


def test_gate__a_branch_that_edits_its_own_check_is_judged_by_the_base_s_check(played: Table,
                                                                             tmp_path: Path) -> None:
    """Threat: on `pull_request` GitHub runs the workflow file of the pull request's merge commit, so a turn
    branch that edits it to `pbem verify || true` passed its own required check. Defence: the game's workflow
    runs as `pull_request_target`, GitHub's base-branch copy of it (what `pbem init` wrote), which checks the
    branch out as data; its verify step fails on the edit (protected.changed), and `pbem yield` refuses it."""
    base = played.head()
    played.git("switch", "-q", "-c", "fed-turn")
    played.write(WORKFLOW, played.read(WORKFLOW).replace("run: pbem verify --format github",
                                                         "run: pbem verify --format github || true", 1))
    played.edit("fed", **FED_GOES_ON)
    refused(played, "yield", who="fed", rule="protected.changed", where=WORKFLOW)
    head = played.sneak("fed", "fed: straight on")
    assert "|| true" in played.read(WORKFLOW)  # the branch's copy would pass: it is not the one that runs
    hub = ActionsHub.hosting(played.repo_dir, tmp_path / "github")  # main as it was: `base`
    assert hub.tip() == base
    hub.push(played.repo_dir, "HEAD", "refs/pull/1/head")
    main_copy = played.git("show", f"{base}:{WORKFLOW}").stdout.decode()
    job = Runner(hub, tmp_path / "runner", home=played.home).run(main_copy, pull_request_event(
        hub, 1, head, "fed-turn"))
    verify = job.step("verify every commit")
    assert verify.exit_code == 1
    assert f"::error file={WORKFLOW},line=1,title=protected.changed::" in verify.stdout
    assert job.step("summary of the new commits").exit_code == 1
    assert "**protected.changed**" in job.summary
    assert [s["state"] for s in hub.posted_statuses()] == ["pending", "failure"]


INJECTED_NAME = b"x\n::stop-commands::pbem\n::error::all fine.yaml"  # one tree entry: hides later annotations
PAINTED_NAME = b"\x1b[2K\r\x1b[32mok: 9 commits verified\x1b[0m\x1b[8m.yaml"  # paints green ok, hides the rest
PAINTED_NOTE = b"\x1b[2K\rok \x1b[32mall legal\x1b[0m ##[stop-commands]pbem \xe2\x80\xae"


def assert_inert(output: str) -> None:
    """No control character a terminal obeys, and no workflow command pbem did not write itself."""
    assert DANGEROUS.search(output) is None, repr(output)
    assert "##[" not in output, output
    assert all(parsed is None or parsed[0] == "error" for parsed in map(runner_parse, output.splitlines())), output


def _painted_commit(table: Table) -> str:
    """fed's legal turn, with two extra tree entries (the injecting and the painting names) and an ESC sequence
    in its commit message, signed by fed: what a cheater's own tool can push."""
    honest = legal_turn(table)
    entries = [*tree_entries(table, honest), ((INJECTED_NAME,), blob(table, b"a: 1\n"), 0o100644),
               ((b"players", PAINTED_NAME), blob(table, b"through: 1.16.damage\n"), 0o100644)]
    payload = replace_header(payload_of(table, honest), b"tree", write_tree(table, entries).encode())
    return land(table, signed(payload.replace(b"fed: straight on", b"fed: " + PAINTED_NOTE, 1), key("fed")))


def test_output_injection__a_newline_and_stop_commands_in_a_file_name(played: Table) -> None:
    """Threat: file names and commit messages were printed raw. A newline in `::error file=…` started a command
    of the cheater's (`::stop-commands::` hides every later annotation); ESC sequences painted a green "ok" over
    a real FAILED in a terminal and in `pbem summary`. Defence: every string from the repository is escaped for
    GitHub's workflow commands and stripped of terminal controls (shown as `\\x1b`); every annotation appears."""
    bad = _painted_commit(played)
    code, findings, _ = verdict(played)
    assert code == 1 and [f["rule"] for f in findings].count("tree.unexpected-path") == 2
    github = played.pbem("verify", "--format", "github", who="fed")
    assert github.returncode == 1 and "Traceback" not in github.stderr
    assert_inert(github.stdout + github.stderr)
    annotations = [runner_parse(line) for line in github.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == len(findings) and all(a is not None and a[0] == "error" for a in annotations)
    files = {a[1].get("file") for a in annotations if a is not None}
    assert "x\\x0a::stop-commands::pbem\\x0a::error::all fine.yaml" in files
    assert "players/\\x1b[2K\\x0d\\x1b[32mok: 9 commits verified\\x1b[0m\\x1b[8m.yaml" in files
    text = played.pbem("verify", who="fed")
    assert text.returncode == 1 and text.stdout.splitlines()[-1].startswith("FAILED:")
    assert_inert(text.stdout + text.stderr)
    for args in (("summary", "HEAD~1..HEAD", "--markdown"), ("summary", "HEAD~1..HEAD"), ("log",)):
        done = played.pbem(*args, who="fed")
        assert "Traceback" not in done.stderr, done.stderr
        assert_inert(done.stdout + done.stderr)
        assert "fed: \\x1b" in done.stdout, (args, done.stdout)  # the message's ESC shown, not obeyed
    markdown = played.pbem("summary", "HEAD~1..HEAD", "--markdown", who="fed").stdout
    assert markdown.startswith("## pbem: ") and "❌" in markdown.splitlines()[0] and bad[:10] in markdown


@pytest.mark.parametrize("note, rule", [('"\\e[2K\\rok \\e[32mall legal\\e[0m"', "yaml.encoding"),
                                        ('"ok\\r\\u202eFAILED"', "schema.invalid")], ids=["escape", "return-and-bidi"])
def test_output_injection__an_escape_sequence_in_a_yield_note(played: Table, note: str, rule: str) -> None:
    """Threat: a yield note (data every player reads) holding ESC sequences, a carriage return or a bidi
    override. Defence: `pbem yield -m` refuses a control character in one line and changes nothing
    (note.control-character, exit 2: newlines and tabs are fine); a note written by hand into status.yaml is
    refused by the strict loader (C0, C1: yaml.encoding) or the status schema (a carriage return, a bidi
    override: schema.invalid), and every output shows it escaped."""
    played.edit("fed", **FED_GOES_ON)
    before = played.snapshot()
    done = played.pbem("yield", "-m", PAINTED_NOTE.decode(), who="fed")
    assert done.returncode == 2 and "[note.control-character]" in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2 and "Traceback" not in done.stderr  # the line and a hint
    assert_inert(done.stdout + done.stderr)
    assert played.snapshot() == before
    assert played.cli("yield", "-m", "line one\n\tline two", who="fed").exit_code == 0  # newline and tab: fine
    played.git("reset", "-q", "--hard", "HEAD~1")
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed", "NOTE")
    played.write("status.yaml", played.read("status.yaml").replace("note: NOTE", f"note: {note}", 1))
    bad = played.sneak("fed", "fed: straight on", status="keep")
    assert rule in rejected(played, bad, rule, "status.yaml")
    for args in (("verify", "--format", "github"), ("verify",), ("summary", "--markdown"), ("log",),
                 ("status", "--plain"), ("status", "--format", "json")):
        done = played.pbem(*args, who="fed")
        assert "Traceback" not in done.stderr, (args, done.stderr)
        assert_inert(done.stdout + done.stderr)


def test_codeowners__set_up_before_the_start_and_frozen_after_it(started: Table) -> None:
    """GitHub's required review of `.github/` needs a CODEOWNERS file in the game (docs/github.md): it is part
    of the layout, may be written while the game is set up, and is frozen from the start like the workflow it
    guards (protected.changed): a turn cannot remove the other players' review of its own check."""
    started.git("reset", "-q", "--hard", "HEAD~1")  # before the start
    started.write(".github/CODEOWNERS", "/.github/ @alice-gh @bob-gh\n")
    started.git_commit("who reviews .github/", signer="fed")
    assert started.cli("start", "--first", "fed", who="fed").exit_code == 0
    assert_clean(started)
    started.write(".github/CODEOWNERS", "/.github/ @alice-gh\n")
    started.edit("fed", **FED_TURN_1_EDITS)
    refused(started, "yield", who="fed", rule="protected.changed", where=".github/CODEOWNERS")
    bad = started.sneak("fed", "fed: speed 12")
    assert rejected(started, bad, "protected.changed", ".github/CODEOWNERS") == {"protected.changed"}


FED_TURN_1_EDITS = dict(through="1.8.damage", breaks=[{"range": 8}],
                        entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}])

# === Cost, entries' x- fields and unreadable trees (DESIGN §2, §9 "Cost is bounded") =============================

import subprocess  # noqa: E402

from conftest import KLI_TURN_1  # noqa: E402
from gitutil import clean_env  # noqa: E402
from test_dice_flow import A_LINE  # noqa: E402

def _with_note(table: Table, path: str, who: str, note: Mapping[str, Any]) -> None:
    """Add `note` (x- fields) to the first entry of `who`'s in `path`, as a hand edit would."""
    lines = table.read(path).splitlines()
    i = next(n for n, line in enumerate(lines) if f"by: {who}" in line)
    fields = ", ".join(f"{k}: {json.dumps(v)}" for k, v in note.items())
    lines[i] = lines[i][:-1] + f", {fields}}}"
    table.write(path, "\n".join(lines) + "\n")


def test_x_fields__kli_writes_a_note_into_fed_s_entry(opened: Table) -> None:
    """Threat: kli, in his own turn, adds an `x-` field to fed's entry ("x-conceded: true"), or changes one fed
    wrote: a note in fed's name that no rule would check. Defence: an entry's `x-` fields are part of its
    identity, so only its author changes them (ownership.foreign-entry); pbem yield refuses it too."""
    opened.edit("kli", **{k: v for k, v in KLI_TURN_1.items() if k != "note"})
    _with_note(opened, "report/turn-01.yaml", "fed", {"x-conceded": True})
    refused(opened, "yield", who="kli", rule="ownership.foreign-entry", where="report/turn-01.yaml" + A_LINE)
    bad = opened.sneak("kli", "kli: orders")
    assert rejected(opened, bad, "ownership.foreign-entry", "report/turn-01.yaml") == {"ownership.foreign-entry"}


def test_x_fields__a_note_on_a_firm_entry_is_a_firm_change(played: Table) -> None:
    """Threat: fed adds a note to his own firm entry (or to kli's). Defence: firm entries are frozen with their
    `x-` fields (firm.changed), and kli's stays kli's (ownership.foreign-entry)."""
    played.edit("fed", **FED_GOES_ON)
    _with_note(played, "report/turn-01.yaml", "fed", {"x-why": "I meant 20"})
    bad = played.sneak("fed", "fed: straight on")
    assert rejected(played, bad, "firm.changed", "report/turn-01.yaml") == {"firm.changed"}
    played.git("reset", "-q", "--hard", "HEAD~1")
    played.edit("fed", **FED_GOES_ON)
    _with_note(played, "report/turn-01.yaml", "kli", {"x-why": "kli bluffs"})
    bad = played.sneak("fed", "fed: straight on")
    assert rejected(played, bad, "firm.changed", "report/turn-01.yaml") == {"firm.changed", "ownership.foreign-entry"}


def test_x_fields__the_author_keeps_his_own_notes_after_the_firm_point(played: Table) -> None:
    """What stays allowed: fed writes a note on his own entry after the firm point and changes it in a later
    turn while that entry is still not firm."""
    played.edit("fed", through="1.16.damage")
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml")
                 + '  - {at: "1.30.move", by: fed, unit: CA, do: {move: TL}, x-why: "to port"}\n')
    played.turn("fed")
    played.turn("kli", through="1.24.damage")
    assert played.data("status.yaml")["control"] == "fed"
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml").replace('"to port"', '"hard to port"'))
    played.turn("fed", through="1.20.damage")
    assert_clean(played)


def _malformed(table: Table, how: str) -> bytes:
    """A tree object's bytes that libgit2 refuses to parse, as only a hostile tool writes them."""
    honest = GameRepo.open(table.repo_dir).tree_files(table.head())["players/fed.yaml"][0]
    entry = bytes.fromhex(honest)
    return {"empty-name": b"100644 \0" + entry,
            "mode-999999": b"999999 fed.yaml\0" + entry,
            "truncated-entry": b"100644 fed.yaml\0" + entry[:10],
            "trailing-bytes": b"100644 fed.yaml\0" + entry + b"\0junk"}[how]


def _with_malformed_players_folder(table: Table, how: str) -> str:
    """fed's legal turn again, its players/ folder replaced by a malformed tree object."""
    honest = legal_turn(table)
    folder = write_object(table, ObjectType.TREE, _malformed(table, how))
    return with_tree(table, honest, lambda entries: [e for e in entries if e[0][0] != b"players"]
                     + [((b"players",), folder, 0o40000)])


@pytest.mark.parametrize("how", ["empty-name", "mode-999999", "truncated-entry", "trailing-bytes"])
def test_malformed_tree__a_tree_libgit2_cannot_parse_is_a_finding_not_a_crash(played: Table, how: str) -> None:
    """Threat: a folder's tree object written byte by byte so that libgit2 cannot parse it (an empty name, mode
    999999, an entry cut short, bytes after the last entry), to crash the check instead of passing it. Only a
    hostile tool or remote makes one. Defence: tree.malformed naming the folder, exit 1, nothing changed."""
    bad = _with_malformed_players_folder(played, how)
    assert rejected(played, bad, "tree.malformed", "players/") == {"tree.malformed"}
    done = played.pbem("verify")
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-400:]
    assert done.returncode == 1 and "[tree.malformed]" in done.stdout and bad[:10] in done.stdout


@pytest.mark.parametrize("how", ["empty-name", "trailing-bytes"])
def test_malformed_tree__pushed_to_the_hook_is_refused_without_a_traceback(played: Table, how: str) -> None:
    """The same tree pushed to a server with pbem's hook: the push is refused (by git's own checks or the hook's
    tree.malformed), no traceback, and main stays where it was."""
    server = serve(played)
    before = server_ref(server)
    _with_malformed_players_folder(played, how)
    done = push(played)
    assert done.returncode != 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert server_ref(server) == before
    if "pre-receive hook declined" in done.stderr:
        assert "[tree.malformed]" in done.stderr, done.stderr


@pytest.mark.parametrize("how", ["empty-name", "mode-999999", "truncated-entry", "trailing-bytes"])
def test_malformed_tree__the_hook_itself_refuses_it(played: Table, how: str) -> None:
    """git's own pack-objects will not send such a tree, but a hostile client's tool may: the server's hook,
    given the objects (here through an alternate object folder, as git's quarantine gives them), refuses the
    update with tree.malformed on one line, no traceback."""
    server = serve(played)
    before = server_ref(server)
    bad = _with_malformed_players_folder(played, how)
    (server / "objects" / "info" / "alternates").write_text(str(played.repo_dir / ".git" / "objects") + "\n")
    done = subprocess.run([str(server / "hooks" / "pre-receive")], input=f"{before} {bad} refs/heads/main\n",
                          cwd=server, env=clean_env(played.home), capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "[tree.malformed]" in done.stderr and "players/" in done.stderr, done.stderr
    assert server_ref(server) == before


def test_cost_caps__a_report_one_entry_past_its_cap(played: Table) -> None:
    """Threat: a report file so long that every later verification slows down (DESIGN §9). Defence: at most
    5,000 entries in one period's file (schema.invalid, naming the file and the line of the first one too
    many), whether the file is read line by line or whole."""
    rows = played.read("report/turn-01.yaml").count("\n") - 1
    row = "  - {at: 1.9.move, by: fed, do: {pass: true}}\n"
    played.write("report/turn-01.yaml", played.read("report/turn-01.yaml") + row * (5_001 - rows))
    played.edit("fed", **FED_GOES_ON)
    bad = played.sneak("fed", status="keep")
    code, findings, output = verdict(played)
    assert code == 1, output
    assert ("schema.invalid", bad, "report/turn-01.yaml", 5_002) in {
        (f["rule"], f.get("commit"), f.get("file"), f.get("line")) for f in findings}, findings


@pytest.mark.parametrize("field, value", [("turns", 101), ("units", 61)])
def test_cost_caps__a_setup_past_the_caps_on_turns_and_units(base_started: Table, tmp_path: Path, field: str,
                                                             value: int) -> None:
    """Threat: a legal game built to be slow: `turns: 999` and 198 units at speed 0, both horizons at the last
    step, so that replay walks every step of every turn for every unit (24–42 s before this cap). Defence:
    tactical setups have at most 100 turns and 60 units (schema.invalid naming game.yaml and the line)."""
    table = before_start(base_started, tmp_path / "t", 3)

    def change(data: dict[str, Any]) -> None:
        setup = dict(data["setup"])
        if field == "turns":
            setup["turns"] = value
        else:
            unit = dict(setup["units"][0])
            setup["units"] = [{**unit, "id": f"U{i}", "hex": f"{1 + i % 40:02d}{1 + i // 40:02d}"}
                              for i in range(value)]
        data["setup"] = setup

    edit_game(table, change)
    bad = table.git_commit("setup: a longer game", signer="fed")
    code, findings, output = verdict(table)
    assert code == 1, output
    found = [f for f in findings if f["rule"] == "schema.invalid" and f.get("commit") == bad]
    assert found and found[0]["file"] == "game.yaml" and found[0].get("line"), findings
    assert field in found[0]["message"] or str(value) in found[0]["message"], found


# --- private press and the director (DESIGN §7.2: private press sealed to its recipients, recognising nothing;
# --- seed 001: a director's warning for an offence; civil disorder for the second) ------------------------------

def _dow_files_with(dow: Any, power: str, message: Mapping[str, Any]) -> dict[str, bytes]:
    """HEAD's files with `message` appended, one line, to press/<power>.yaml (as plain git would write it)."""
    from pbem.formats.writer import dump_flow

    files = dow.ws().head_files()
    path = f"press/{power}.yaml"
    line = f"  - {dump_flow(dict(message))}\n".encode()
    files[path] = files.get(path, b"messages:\n") + line
    return files


def _whisper_of(dow: Any, wid: str) -> dict[str, Any]:
    from pbem.protocol.whisper import find

    sent = find(dow.ws().head().game.press, wid)
    assert sent is not None
    return dict(sent.body["whisper"])


@pytest.fixture(scope="module")
def base_dow_whisper(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A dow game at S1901P (Italy directs and plays) where England whispered to France through the CLI."""
    from test_dow_flow import new_dow

    dow = new_dow(tmp_path_factory.mktemp("whisper") / "dow")
    out = dow.ok("whisper", "france", "Between us: Belgium is yours", who="england")
    assert "whispered england-0001 to france" in out
    return dow


@pytest.fixture
def dow_whisper(base_dow_whisper: Any, tmp_path: Path) -> Any:
    from test_dow_flow import copy_dow

    return copy_dow(base_dow_whisper, tmp_path / "dow")


def test_private_press__a_third_power_cannot_read_someone_else_s_whisper(dow_whisper: Any) -> None:
    """Threat: Russia reads England's whisper to France. Defence: the text is in a SecretBox whose key is sealed
    to France's and England's X25519 keys only: Russia's inbox is empty, his key opens no copy of the message
    key, the text is nowhere in the clear, and he cannot disclose it."""
    from pbem.crypto import whisper as crypto
    from pbem.crypto.keys import load_private_key

    assert "Between us: Belgium is yours" in dow_whisper.ok("inbox", who="france")
    assert "Between us: Belgium is yours" in dow_whisper.ok("inbox", who="england")
    assert dow_whisper.ok("inbox", who="russia").strip() == "no whispers for you"
    whisper = _whisper_of(dow_whisper, "england-0001")
    assert set(whisper["keys"]) == {"england", "france"}
    russia = load_private_key(dow_whisper.key("russia"))
    assert all(crypto.recover_key(k, russia) is None for k in whisper["keys"].values())
    assert not any(b"Belgium" in data for data in dow_whisper.files().values())
    dow_whisper.refused("disclose", "england-0001", who="russia", rule="press.bad-disclosure")


@pytest.mark.parametrize("trick, rule", [
    ("copied", "press.whisper-signature"),  # England's box and signature under Germany's own id
    ("id", "ownership.id-author"),          # Germany's whisper filed under an id of England's
    ("by", "press.foreign"),                # a whisper in England's name in Germany's file
])
def test_private_press__forging_a_sender(dow_whisper: Any, trick: str, rule: str) -> None:
    """Threat: Germany passes a whisper off as England's (to have France 'disclose' England's words) or England's
    as his own. Defence: a whisper is signed by its sender (SSHSIG, namespace pbem, over the game id and the
    whole message), its id carries its sender, and it stands only in its sender's own press file."""
    whisper = _whisper_of(dow_whisper, "england-0001")
    if trick == "copied":
        keys = {"germany": whisper["keys"]["england"], "france": whisper["keys"]["france"]}
        message = {"by": "germany", "at": "S1901P", "whisper": {**whisper, "id": "germany-0001", "keys": keys}}
    elif trick == "id":
        message = {"by": "germany", "at": "S1901P", "whisper": {**whisper, "id": "england-0002"}}
    else:
        message = {"by": "england", "at": "S1901P", "whisper": {**whisper, "id": "england-0002"}}
    bad = dow_whisper.sneak("germany", _dow_files_with(dow_whisper, "germany", message), "germany: whisper")
    assert (rule, bad) in dow_whisper.verify()
    done = dow_whisper.pbem("verify")
    assert done.returncode == 1 and f"[{rule}]" in done.stdout + done.stderr


def test_private_press__a_forged_sender_pushed_into_a_hooked_hub_is_refused(dow_whisper: Any) -> None:
    """The same forgery through a real push: the hub's pre-receive hook refuses it and keeps its main."""
    from test_dow_press import hub_for

    hub = hub_for(dow_whisper, dow_whisper.root)
    before = server_ref(hub)
    whisper = _whisper_of(dow_whisper, "england-0001")
    keys = {"germany": whisper["keys"]["england"], "france": whisper["keys"]["france"]}
    message = {"by": "germany", "at": "S1901P", "whisper": {**whisper, "id": "germany-0001", "keys": keys}}
    dow_whisper.sneak("germany", _dow_files_with(dow_whisper, "germany", message), "germany: whisper")
    done = subprocess.run(["git", "push", "origin", "main"], cwd=dow_whisper.repo_dir, capture_output=True,
                          text=True, env=clean_env(dow_whisper.root / "home"))
    push_refused(done, "press.whisper-signature")
    assert server_ref(hub) == before


def test_private_press__disclosing_a_message_that_was_never_sent(dow_whisper: Any) -> None:
    """Threat: France 'discloses' a whisper England never sent, to put words in England's mouth. Defence: a
    disclosure names a whisper that was sent (press.bad-disclosure otherwise), by pbem and by plain git."""
    dow_whisper.refused("disclose", "england-0009", who="france", rule="press.bad-disclosure")
    message = {"by": "france", "at": "S1901P",
               "disclose": {"id": "england-0009", "key": "11" * 32, "text": "England will attack Germany"}}
    bad = dow_whisper.sneak("france", _dow_files_with(dow_whisper, "france", message), "france: disclose")
    assert ("press.bad-disclosure", bad) in dow_whisper.verify()


@pytest.mark.parametrize("trick", ["wrong key", "other text", "not a recipient"])
def test_private_press__a_forged_disclosure(dow_whisper: Any, trick: str) -> None:
    """Threat: a disclosure with a key that does not open the box, with the right key but other words, or by a
    power the whisper was not sealed to. Defence: the verifier opens the box with the disclosed key, checks the
    key-committing hash (as §6's `commit`) and that the plaintext is this game's, this id's and this text."""
    from pbem.crypto import whisper as crypto
    from pbem.crypto.keys import load_private_key

    whisper = _whisper_of(dow_whisper, "england-0001")
    key = crypto.recover_key(whisper["keys"]["france"], load_private_key(dow_whisper.key("france")))
    assert key is not None
    who, body = "france", {"id": "england-0001", "key": key.hex(), "text": "Between us: Belgium is yours"}
    if trick == "wrong key":
        body["key"] = "22" * 32
    elif trick == "other text":
        body["text"] = "Between us: Munich is yours"
    else:
        who = "germany"
    message = {"by": who, "at": "S1901P", "disclose": body}
    bad = dow_whisper.sneak(who, _dow_files_with(dow_whisper, who, message), f"{who}: disclose")
    assert ("press.bad-disclosure", bad) in dow_whisper.verify()


def test_private_press__an_honest_disclosure_is_verified_by_all(dow_whisper: Any) -> None:
    """The control: France discloses what England sent; everybody's verifier checks it, nothing changes in the
    relationships (private press recognises nothing)."""
    before = dow_whisper.ok("relations", "--format", "json")
    out = dow_whisper.ok("disclose", "england-0001", who="france")
    assert "disclosed england-0001" in out and "Belgium is yours" in out
    assert "(disclosed by france)" in dow_whisper.ok("inbox", who="england")
    assert dow_whisper.ok("relations", "--format", "json") == before
    assert dow_whisper.verify() == []


def test_private_press__a_whisper_to_a_power_that_is_out_or_not_seated(dow_whisper: Any) -> None:
    """Bad input: a whisper to no seat (refused before anything is sealed, and by the verifier when written by
    hand) or to a power out of the game (the ruleset: press.whisper-recipient)."""
    from dataclasses import replace as replaced

    from pbem.rulesets.dow.board import Board
    from pbem.services.dow import seat as dow_seat

    whisper = _whisper_of(dow_whisper, "england-0001")
    head = dow_whisper.ws().head()
    state = dow_seat.current_state(head)
    data = state.board.as_data()
    out = replaced(state, board=Board.from_data({part: {p: v for p, v in data[part].items() if p != "turkey"}
                                                 for part in data}))
    _, refusal = head.game.manifest.ruleset.recognise(out, {"by": "england", "whisper": {**whisper, "to": ["turkey"]}},
                                                      "england")
    assert refusal is not None and refusal.rule == "press.whisper-recipient"
    dow_whisper.refused("whisper", "prussia", "hello", who="england", rule="press.whisper-recipient")
    message = {"by": "england", "at": "S1901P", "whisper": {**whisper, "id": "england-0002", "to": ["prussia"],
                                                            "keys": {"england": whisper["keys"]["england"],
                                                                     "prussia": whisper["keys"]["france"]}}}
    bad = dow_whisper.sneak("england", _dow_files_with(dow_whisper, "england", message), "england: whisper")
    assert ("press.whisper-recipient", bad) in dow_whisper.verify()


def _back_to_parent(dow: Any) -> None:
    """Drop the sneaked commit on top (branch and working tree back to its parent)."""
    from pbem.store.repo import GameRepo

    repo = GameRepo.open(dow.repo_dir)
    repo.update_branch_and_worktree(repo.parents(dow.head())[0])


def _void_orders_played(dow: Any) -> str:
    """S1901P ended and S1901M played with Russia's and Italy's impossible orders (void, on record); the phase
    open now."""
    dow.phase()
    dow.phase({"russia": ["A MOS - BER", "F SEV - ROM"], "italy": ["A ROM - PAR"]})
    return dow.status()["firm"]


def test_director__a_warning_without_an_offence(dow_whisper: Any) -> None:
    """Threat (seen): a director who also plays put a rival into civil disorder with two `warn`s citing a greeting
    and a legal proposal. Defence: an offence is only a breach the game recorded, a void order of the warned
    power; a message never is, nor is an order it never gave (press.warn-no-offence), by pbem and by plain git."""
    dow_whisper.ok("say", "Hello all", who="france")
    dow_whisper.refused("warn", "france", "--reason", "I say so", "--phase", "S1901M", "--order", "A PAR - BUR",
                        who="italy", rule="press.warn-no-offence")
    for offence in ({}, {"offence": {"press": 1}}, {"offence": {"phase": "S1901M", "order": "A PAR H"}}):
        message = {"by": "italy", "at": "S1901P", "warn": "france", "reason": "I say so", **offence}
        bad = dow_whisper.sneak("italy", _dow_files_with(dow_whisper, "italy", message), "italy: warn")
        assert ("press.warn-no-offence", bad) in dow_whisper.verify(), offence
        _back_to_parent(dow_whisper)


def test_director__a_second_warning_for_one_offence(dow_whisper: Any) -> None:
    """Threat: two warnings for one offence, the second being civil disorder. Defence: press.warn-twice."""
    at = _void_orders_played(dow_whisper)
    dow_whisper.ok("warn", "russia", "--reason", "an impossible order", "--phase", "S1901M", "--order",
                   "A MOS - BER", who="italy")
    dow_whisper.refused("warn", "russia", "--reason", "and again", "--phase", "S1901M", "--order", "A MOS - BER",
                        who="italy", rule="press.warn-twice")
    message = {"by": "italy", "at": at, "warn": "russia", "reason": "again",
               "offence": {"phase": "S1901M", "order": "A MOS - BER"}}
    bad = dow_whisper.sneak("italy", _dow_files_with(dow_whisper, "italy", message), "italy: warn")
    assert ("press.warn-twice", bad) in dow_whisper.verify()


def test_director__a_self_warning_or_a_lift(dow_whisper: Any) -> None:
    """Threat (seen): the director, who also plays Italy, lifted his own warning; or warns his own power for a
    harmless void order to steer its count. Defence: the director never warns his own power (press.self-warn)
    and lifts nothing (press.no-lift; `pbem lift` does not exist), by pbem and by plain git."""
    at = _void_orders_played(dow_whisper)
    dow_whisper.refused("warn", "italy", "--reason", "by my own rules", "--phase", "S1901M", "--order",
                        "A ROM - PAR", who="italy", rule="press.self-warn")
    for message, rule in (({"by": "italy", "at": at, "warn": "italy", "reason": "mine",
                            "offence": {"phase": "S1901M", "order": "A ROM - PAR"}}, "press.self-warn"),
                          ({"by": "italy", "at": at, "lift": "russia"}, "press.no-lift")):
        bad = dow_whisper.sneak("italy", _dow_files_with(dow_whisper, "italy", message), "italy: director")
        assert (rule, bad) in dow_whisper.verify(), message
        _back_to_parent(dow_whisper)


def test_private_press__two_powers_whisper_at_once_and_pbem_push_lands_both(tmp_path: Path) -> None:
    """Concurrency (DESIGN §4.9): England and Germany whisper from their own clones of one hooked hub at the same
    moment; each whisper is in its sender's own file, so `pbem push` rebases, re-signs (the whisper's own
    signature covers the message, not the commit) and lands both, and the hub verifies."""
    from test_dow_flow import new_dow
    from test_dow_press import clone_for, hub_for

    dow = new_dow(tmp_path / "founder")
    hub = hub_for(dow, tmp_path)
    clones = {power: clone_for(dow, hub, power) for power in ("england", "germany")}
    clones["england"].ok("whisper", "france", "From London", who="england")
    clones["germany"].ok("whisper", "france", "russia", "From Berlin", who="germany")
    for power in ("england", "germany"):
        done = clones[power].cli("push", who=power)
        assert done.exit_code == 0, done.output
    last = clones["germany"]
    inbox = last.ok("inbox", who="france")
    assert "england-0001" in inbox and "From London" in inbox and "germany-0001" in inbox and "From Berlin" in inbox
    assert "From London" not in last.ok("inbox", who="russia") and "From Berlin" in last.ok("inbox", who="russia")
    assert last.pbem("verify", cwd=hub).returncode == 0


# === Secret speeds and a seeking weapon's nature (seed 000 §2.C) ================================================
#
# Secret speeds: the game above with `speeds: sealed`: each ship's speed for the turn is in its owner's sealed
# allocation, revealed with everyone's at T.0.alloc. A seeking weapon's nature (real or dummy) is sealed with its
# target in the launch commit (base_drone_out: kli's S1, a real drone at the CA).

SECRET_SPEED_DUEL = SEALED_DUEL.replace("  allocation: sealed\n", "  allocation: sealed\n  speeds: sealed\n")


@pytest.fixture(scope="module")
def base_secret_speeds(tmp_path_factory: pytest.TempPathFactory) -> Table:
    from conftest import GAME_ID, _build

    root = tmp_path_factory.mktemp("secret-speed-attacks")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(SECRET_SPEED_DUEL)
    return _build(root / "started", str(root / "template"), GAME_ID)


def test_speed_shown_first__a_speed_entry_in_a_sealed_speed_game(base_secret_speeds: Table, tmp_path: Path) -> None:
    """Threat: kli gives his speed as a public entry at 1.0.alloc, or (going second) reads fed's and picks his own
    to suit; in a sealed-speed game every speed must stay secret until all are revealed together. Defence: a speed
    entry at the allocation step is refused in its author's own commit (rules.sealed-speed), through pbem, plain
    git and a hooked server; the game's speeds come only from the revealed allocations."""
    table = copy_table(base_secret_speeds, tmp_path / "table")
    table.turn("fed", through="1.32.final")
    server = serve(table)
    table.edit("kli", through="1.32.final", entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 20}}])
    error = cheat_refused(table, "yield", who="kli", rule="rules.sealed-speed")
    assert f"{REPORT_1}:" in error and "speeds are sealed in this game" in error, error
    bad = sneak_as(table, "kli", "kli: my speed in the clear")
    assert rejected(table, bad, "rules.sealed-speed", REPORT_1) == {"rules.sealed-speed"}
    push_refused(push(table), "rules.sealed-speed")
    assert server_ref(server) != bad


def test_speed_shown_first__an_allocation_whose_speed_does_not_pay(base_secret_speeds: Table, tmp_path: Path) -> None:
    """Threat: with speeds sealed, fed plots speed 12 on a ship of power 10, revealed before the turn is played,
    hoping nobody checks it before the end. Defence: `pbem seal` refuses it (every line counted, at its line);
    sealed by hand, its speeds are opened and the speed is void (docs/tactical.md "A bad allocation found when
    opened"): the CA stops, and nobody's commit is refused for it."""
    from test_tactical_secret_speeds import hand_seal, speeds

    table = copy_table(base_secret_speeds, tmp_path / "table")
    table.turn("fed", through="1.32.final")
    table.turn("kli", through="1.32.final", breaks=[{"at": "1.2.move"}])
    seal_allocation(table, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    source = table.root / "too-fast.json"
    source.write_text(json.dumps({"turn": 1, "units": {"CA": {"speed": 12}}}))
    error = cheat_refused(table, "seal", "allocation", str(source), who="fed", rule="rules.allocation")
    assert "allocates 12 energy" in error and "its power is 10" in error, error
    hand_seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 12}}})
    cli(table, "yield", who="kli")  # kli opens his speeds
    cli(table, "yield", who="fed")  # fed's opening lands
    assert speeds(table) == {"CA": 0, "D7": 2}
    assert_clean(table)


def test_dummy_claimed_real__a_second_target_after_the_launch(base_sealed_duel: Table, tmp_path: Path) -> None:
    """Threat: kli launches S1 as a dummy (cheap bluff), then, seeing it close on the CA, seals a second target
    saying it is real. Defence: the nature is sealed with the target in the launch commit, one per weapon; a later
    one is refused (secret.late-target)."""
    table = copy_table(base_sealed_duel, tmp_path / "table")
    table.edit("kli", through="1.32.final", entries=[S1_LAUNCH])
    seal_file(table, "kli", "target", {"unit": "S1", "target": "CA", "nature": "dummy"}, "--concerns", "S1")
    table.turn("kli", note="a drone, its target and nature sealed")
    seal_file(table, "kli", "target", {"unit": "S1", "target": "CA", "nature": "real"}, "--concerns", "S1")
    seal_file(table, "kli", "allocation", {"turn": 1, "units": {"D7": {"speed": 0}}})
    cheat_refused(table, "yield", who="kli", rule="secret.late-target")
    bad = sneak_as(table, "kli", "kli: my allocation")
    assert "secret.late-target" in rejected(table, bad, "secret.late-target", "secrets/kli-0002.yaml")


@pytest.mark.parametrize("claimed", ["dummy", "real"])
def test_nature_changed__revealing_a_nature_that_does_not_match_its_commitment(base_drone_out: Table, tmp_path: Path,
                                                                              claimed: str) -> None:
    """Threat: kli's S1 was sealed real (base_drone_out); he reveals it as a dummy when it is about to be shot
    down for nothing, or as real what was sealed a dummy, by replacing the sealed box with one of his liking (or by
    revealing a key for another plaintext). Defence: a secret never changes once sealed (secret.changed), and a
    reveal must open the committed box (secret.bad-key / secret.commit-mismatch)."""
    table = copy_table(base_drone_out, tmp_path / "table")
    sealed = table.data("secrets/kli-0001.yaml")
    other, key32 = secret_file(table, "kli", json.dumps({"target": "CA", "unit": "S1", "nature": claimed},
                                                        separators=(",", ":"), sort_keys=True).encode(),
                               sid="kli-0001")
    write_secret(table, {**sealed, **{k: other[k] for k in ("box", "commit", "owner_box")}, "key": key32.hex()})
    bad = table.sneak("kli", f"kli: S1 was {claimed} all along", status="keep")
    assert "secret.changed" in rejected(table, bad, "secret.changed", "secrets/kli-0001.yaml")
    # the honest box with the other plaintext's key: it opens nothing
    table.git("reset", "-q", "--hard", "HEAD~1")
    write_secret(table, {**sealed, "key": key32.hex()})
    bad = table.sneak("kli", f"kli: S1 was {claimed} all along", status="keep")
    found = rejected(table, bad, "secret.bad-key", "secrets/kli-0001.yaml")
    assert found & {"secret.bad-key", "secret.commit-mismatch"}, found

# === The tactical game as the seed plays it: no dice while an action auction is open, damage replies, shield
# reinforcement, special breaks (docs/tactical.md, docs/threats.md "The tactical game as the seed plays it") ======
# From `armed` (tests/test_tactical_cli_bad_input.py): fed declares ph1 at 1.4.fire, which meets kli's {fire: {}}:
# the action auction asks kli. While it is open, nobody may roll or reveal (seed §7.B, §7.F).

KLI_SHOT = {"at": "1.4.fire", "unit": "D7", "do": {"fire": {"weapon": "ph1", "target": "CA"}}}
FED_SHOT = {"at": "1.4.fire", "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}}


def asked(table: Table) -> list[tuple[str, str]]:
    """(player, kind) of each pending break, in serving order."""
    return [(b["player"], b["kind"]) for b in table.data("status.yaml")["pending"]]


@pytest.fixture
def auction_open(base_armed: Table, tmp_path: Path) -> Table:
    table = private(base_armed, tmp_path)
    table.turn("fed", through="1.8.damage", entries=[FED_SHOT])
    assert asked(table) == [("kli", "auction")]
    return table


def test_auction_open__kli_adds_his_shot_and_rolls_for_it_in_the_same_commit(auction_open: Table) -> None:
    """Threat: kli, asked in the auction, adds a shot and rolls his die at once; the die (and fed's, rolled
    next) would be known before fed decides in round 2 whether to add more. Defence: `pbem yield` refuses any
    dice while the auction stays open (`dice.auction-open`), naming the batch file; nothing changes."""
    auction_open.edit("kli", entries=[KLI_SHOT])
    cli(auction_open, "roll", "--for", "D7 ph1", "--ref", "1.4.fire/D7/ph1", who="kli")
    line = refused(auction_open, "yield", who="kli", rule="dice.auction-open", where="dice/kli-0001.yaml:5")
    assert "auction" in line


def test_auction_open__the_same_roll_by_plain_git_is_found_and_refused_by_the_hook(auction_open: Table) -> None:
    """The same shot and die written by hand and committed with plain git: the verifier finds it, a hooked hub
    refuses the push and keeps its ref."""
    server = serve(auction_open)
    before = server_ref(server)
    auction_open.edit("kli", entries=[KLI_SHOT])
    write_batch(auction_open, hand_batch(auction_open, "kli", "kli-0001", ["1.4.fire/D7/ph1"]))
    bad = sneak_as(auction_open, "kli", "kli: me too, and my die")
    assert "dice.auction-open" in rejected(auction_open, bad, "dice.auction-open", "dice/kli-0001.yaml")
    push_refused(push(auction_open), "dice.auction-open")
    assert server_ref(server) == before


def test_auction_open__the_initiator_rolls_with_his_declaration(armed: Table) -> None:
    """Threat: fed declares his shot and rolls for it in the commit that opens the auction, so kli decides
    knowing fed's result. Defence: the same finding at the batch (refused by `pbem yield`)."""
    armed.edit("fed", through="1.8.damage", entries=[FED_SHOT])
    cli(armed, "roll", "--for", "CA ph1", "--ref", "1.4.fire/CA/ph1", who="fed")
    refused(armed, "yield", who="fed", rule="dice.auction-open", where=FED_DIE + ":5")


def test_auction_open__the_closing_pass_may_roll(auction_open: Table) -> None:
    """Not a threat: the player whose pass ends the auction may roll in that commit; the auction is over."""
    auction_open.turn("kli", entries=[KLI_SHOT])
    cli(auction_open, "roll", "--for", "CA ph1", "--ref", "1.4.fire/CA/ph1", who="fed")
    cli(auction_open, "yield", who="fed")  # passes: kli added last, nothing came since: the auction is over
    assert {kind for _, kind in asked(auction_open)} <= {"roll", "dice"}


# From `damaged` (tests/test_tactical_seed_play.py): fed's ph1 hit kli's D7 at 1.4.fire; kli watches for damage,
# so the step is held with a `reply` break for kli AT 1.4.fire (seed §6.C.1). kli allocated 4 for reinforcement.

from test_tactical_cli_bad_input import seal as seal_allocation  # noqa: E402
from test_tactical_seed_play import base_damaged, settle  # noqa: E402,F401
from test_dice_flow import A_LINE  # noqa: E402


@pytest.fixture
def damaged(base_damaged: Table, tmp_path: Path) -> Table:
    return private(base_damaged, tmp_path)


def reinforce_entry(points: int, shield: int = 2) -> dict[str, Any]:
    return {"at": "1.4.fire", "unit": "D7", "do": {"reinforce": {"shield": shield, "points": points}}}


def test_damage_reply__a_reinforcement_larger_than_allocated_is_refused_at_the_reveal(damaged: Table) -> None:
    """Threat: kli allocated 4 for reinforcement (sealed) and reinforces by 6 at his damage break. Defence: the
    allocation is audited when revealed: `pbem yield` refuses kli's reveal at the secret's line, and the same
    reveal committed with plain git is found by `pbem verify` (`rules.allocation`)."""
    damaged.turn("kli", entries=[reinforce_entry(6)], note="reinforcing by 6")
    damaged.turn("fed", through="1.32.final")
    mine = next(p.name for p in (damaged.repo_dir / "secrets").iterdir()
                if damaged.data(f"secrets/{p.name}")["owner"] == "kli")
    while asked(damaged)[0] != ("kli", "secret"):
        cli(damaged, "yield", who=asked(damaged)[0][0])
    cli(damaged, "reveal", mine[:-len(".yaml")], who="kli")
    line = refused(damaged, "yield", who="kli", rule="rules.allocation", where=f"secrets/{mine}" + A_LINE)
    assert "reinforcement used 6, 4 allocated" in line
    bad = sneak_as(damaged, "kli", "kli: revealed")
    assert "rules.allocation" in rejected(damaged, bad, "rules.allocation", f"secrets/{mine}")


def test_damage_reply__a_reinforcement_beyond_the_ship_s_power_is_refused_when_written(damaged: Table) -> None:
    """Threat: a reinforcement of 50 points on a ship of power 10 (only the end-of-game audit would see it in a
    sealed game, none at all in an open one). Defence: judged when written (`rules.illegal-action`)."""
    damaged.edit("kli", entries=[reinforce_entry(50)])
    line = refused(damaged, "yield", who="kli", rule="rules.illegal-action", where="report/turn-01.yaml" + A_LINE)
    assert "more than its power 10" in line


def test_damage_reply__someone_else_adds_at_the_held_step(damaged: Table) -> None:
    """Threat: fed, who is not the damaged player, adds a second shot at the held step while kli holds his reply
    break. Defence: only kli holds control (`signature.not-in-control`), by pbem and by plain git alike."""
    damaged.edit("fed", entries=[{"at": "1.4.fire", "unit": "CA", "do": {"fire": {"weapon": "ph2", "target": "D7"}}}])
    refused(damaged, "yield", who="fed", rule="signature.not-in-control", where="status.yaml")
    bad = sneak_as(damaged, "fed", "fed: one more shot")
    assert "signature.not-in-control" in rejected(damaged, bad, "signature.not-in-control")


@pytest.fixture
def both_fired(base_game: Table, tmp_path: Path) -> Table:
    """kli pre-plotted his own shot at 1.4.fire and watches for damage: both shots are rolled and scored, and the
    step is held for kli's reply."""
    table = private(base_game, tmp_path)
    table.turn("fed", through="1.3.damage")
    table.turn("kli", through="1.32.final", breaks=[{"damage": {}}], entries=[KLI_SHOT])
    seal_allocation(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "weapons": 1}}})
    seal_allocation(table, "fed", {"turn": 1, "units": {"CA": {"speed": 0, "weapons": 2}}})
    table.turn("fed", through="1.8.damage", entries=[FED_SHOT])
    settle(table, "reply")
    return table


def test_damage_reply__withdrawing_a_scored_shot_of_one_s_own_at_the_reply(both_fired: Table) -> None:
    """Threat: kli's own pre-plotted shot rolled badly; at his damage reply he withdraws it (and would roll
    afresh for a new one). Defence: a held step was resolved once with its entries: they may be added to, not
    withdrawn (`firm.changed`), by pbem and by plain git alike."""
    text = both_fired.read("report/turn-01.yaml")
    kept = "\n".join(x for x in text.splitlines() if not ("unit: D7" in x and "fire" in x)) + "\n"
    both_fired.write("report/turn-01.yaml", kept)
    refused(both_fired, "yield", who="kli", rule="firm.changed", where="report/turn-01.yaml" + A_LINE)
    bad = sneak_as(both_fired, "kli", "kli: never mind my shot")
    assert "firm.changed" in rejected(both_fired, bad, "firm.changed")


from test_tactical_seed_play import base_own_clarify  # noqa: E402,F401


def test_clarify__kli_answers_fed_s_special_break_for_him(base_own_clarify: Table, tmp_path: Path) -> None:
    """Threat: fed's pursuit of the D7 ties at 1.2.move (a `clarify` break for fed, seed §5.C); kli answers it
    for him with the move that suits kli, by plain git and pushed to a hooked hub. Defence: only fed holds
    control: the verifier finds it and the hook refuses the push (`signature.not-in-control`)."""
    table = private(base_own_clarify, tmp_path)
    server = serve(table)
    before = server_ref(server)
    table.edit("kli", entries=[{"at": "1.2.move", "unit": "CA", "do": {"move": "SR"}}])
    bad = sneak_as(table, "kli", "kli: fed slips right")
    assert "signature.not-in-control" in rejected(table, bad, "signature.not-in-control")
    push_refused(push(table), "signature.not-in-control")
    assert server_ref(server) == before

# === Free text from players (DESIGN §9 "output is data") ==========================================================

import os  # noqa: E402

from test_dow_flow import Dow, copy_dow, new_dow  # noqa: E402

ESC_TEXT = "\x1b[2K\rok \x1b[32mall legal\x1b[0m"  # the writer refuses it (C0): it crashed with a ValueError
BIDI_TEXT = "ok\r\u202eFAILED"  # the writer would write it: only the text check refuses it
TACTICAL_TEXT = [  # (what, pbem's arguments with TEXT where the text goes, who runs it)
    ("roll --for", ("roll", "--for", "TEXT"), "fed"),
    ("seal --concerns", ("seal", "note", "SOURCE", "--concerns", "TEXT"), "fed"),
    ("dice void --reason", ("dice", "void", "fed-0001", "--reason", "TEXT"), "fed"),
    ("dice cosign --reason", ("dice", "cosign", "fed-0001", "--reason", "TEXT"), "kli"),
    ("erratum propose --reason", ("erratum", "propose", "--reason", "TEXT"), "fed"),
]
DOW_TEXT = [
    ("say", ("say", "TEXT"), "france"),
    ("propose POWER", ("propose", "TEXT", "ALLIED"), "france"),
    ("declare POWER", ("declare", "TEXT", "HOSTILE"), "france"),
    ("accept POWER", ("accept", "TEXT", "ALLIED"), "france"),
    ("gift PROVINCE", ("gift", "england", "TEXT"), "france"),
    ("warn --reason", ("warn", "turkey", "--reason", "TEXT", "--phase", "S1901M", "--order", "A CON - BUL"), "italy"),
    ("whisper", ("whisper", "england", "TEXT"), "france"),
]


def _with_text(args: Sequence[str], text: str, source: str = "") -> list[str]:
    return [text if a == "TEXT" else source if a == "SOURCE" else a for a in args]


@pytest.mark.parametrize("text", [ESC_TEXT, BIDI_TEXT], ids=["escape", "return-and-bidi"])
@pytest.mark.parametrize("what, args, who", TACTICAL_TEXT, ids=[t[0] for t in TACTICAL_TEXT])
def test_free_text__a_control_character_in_a_text_option_is_refused(dice_owed: Table, what: str,
                                                                    args: Sequence[str], who: str,
                                                                    text: str) -> None:
    """Threat: free text a player gives (a dice purpose, what a secret concerns, a void's reason, an erratum's
    reason) holding ESC sequences, a carriage return or a bidi override, to paint over what other players' pbem
    prints; before, the writer crashed with a traceback on C0. Defence: one line, exit 2, nothing changed
    (text.control-character); newlines and tabs are fine."""
    source = dice_owed.root / "note.json"
    source.write_text(json.dumps({"text": "I turn to starboard"}))
    error = cheat_refused(dice_owed, *_with_text(args, text, str(source)), who=who, rule="text.control-character",
                          code=2)
    assert len(error.strip().splitlines()) <= 2, error  # the line and a hint
    assert_inert(error)


def _dow_snapshot(dow: Dow) -> tuple[str, str, dict[str, str]]:
    files: dict[str, str] = {}
    for folder, _dirs, names in os.walk(dow.repo_dir):
        for name in names:
            path = Path(folder) / name
            rel = path.relative_to(dow.repo_dir).as_posix()
            if not rel.startswith(".git/pbem/"):
                files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    refs = subprocess.run(["git", "show-ref", "--head"], cwd=dow.repo_dir, env=clean_env(dow.root / "home"),
                          capture_output=True, text=True, check=False).stdout
    return (dow.repo_dir / ".git" / "HEAD").read_text(), refs, files


@pytest.fixture(scope="module")
def base_free_text_dow(tmp_path_factory: pytest.TempPathFactory) -> Dow:
    return new_dow(tmp_path_factory.mktemp("free-text") / "dow")


@pytest.fixture
def free_text_dow(base_free_text_dow: Dow, tmp_path: Path) -> Dow:
    return copy_dow(base_free_text_dow, tmp_path / "dow")


@pytest.mark.parametrize("text", [ESC_TEXT, BIDI_TEXT], ids=["escape", "return-and-bidi"])
@pytest.mark.parametrize("what, args, who", DOW_TEXT, ids=[t[0] for t in DOW_TEXT])
def test_free_text__a_control_character_in_press_is_refused(free_text_dow: Dow, what: str, args: Sequence[str],
                                                            who: str, text: str) -> None:
    """Threat: press (every power reads it, in `pbem results` and the log) holding ESC sequences or a bidi
    override; before, the writer crashed with a traceback. Defence: one line, exit 2, nothing posted
    (text.control-character)."""
    before = _dow_snapshot(free_text_dow)
    done = free_text_dow.pbem(*_with_text(args, text), who=who)
    assert done.returncode == 2 and "[text.control-character]" in done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr and len(done.stderr.strip().splitlines()) <= 2
    assert_inert(done.stdout + done.stderr)
    assert _dow_snapshot(free_text_dow) == before


def test_free_text__a_control_character_written_by_hand_into_a_dice_file(played: Table) -> None:
    """Threat: a dice purpose with a carriage return and a bidi override written by hand (plain git), past
    `pbem roll`'s check, to paint over what `pbem dice show` and `pbem log` print. Defence: the dice schema
    refuses it (schema.invalid, naming the file; C0 and C1 are refused by the strict loader already), and every
    output shows it escaped."""
    assert played.cli("roll", "--for", "PURPOSE", who="fed").exit_code == 0
    played.edit("fed", **FED_GOES_ON)
    played.write_status("fed", "straight on")  # status.yaml as `pbem yield` writes it, before the edit by hand
    played.write(B0001, played.read(B0001).replace("for: PURPOSE", 'for: "ok\\r\\u202eFAILED"', 1))
    bad = played.sneak("fed", "fed: straight on", status="keep")
    assert "schema.invalid" in rejected(played, bad, "schema.invalid", B0001)
    for args in (("verify",), ("verify", "--format", "github"), ("dice", "show", "fed-0001"), ("log",),
                 ("summary", "--markdown"), ("erratum", "show")):
        done = played.pbem(*args, who="fed")
        assert "Traceback" not in done.stdout + done.stderr, (args, done.stderr)
        assert_inert(done.stdout + done.stderr)


@pytest.mark.parametrize("part", [
    "pbem/dice/1#/properties/rolls/items/properties/for", "pbem/dice/1#/properties/void/properties/reason",
    "pbem/secret/1#/properties/concerns", "pbem/press/message/1#/properties/say", "pbem/dow/press/1#/$defs/text",
    "pbem/agreement/1#/$defs/erratum/properties/reason", "pbem/status/1#/properties/note"],
    ids=["dice-for", "dice-void-reason", "secret-concerns", "press-say", "dow-press-text", "erratum-reason",
         "status-note"])
def test_free_text__the_schemas_refuse_a_control_character_written_by_hand(part: str) -> None:
    """Every free-text field pbem prints refuses what `pbem yield -m` and the text options refuse (a carriage
    return, a bidi override, ESC, a line separator), so a file written by hand cannot hold it either; plain
    text with a newline passes."""
    from pbem.errors import PbemError
    from pbem.formats import schemas

    for text in ("ok\r\u202eFAILED", "\x1b[32mok", "a\u2028b"):
        with pytest.raises(PbemError) as refused_text:
            schemas.validate(part, text, file="hand.yaml")
        assert refused_text.value.finding.rule == "schema.invalid"
    schemas.validate(part, "plain text, with\na newline", file="hand.yaml")


def test_free_text__markup_in_a_note_and_a_purpose_is_shown_as_text_in_html_and_svg(played: Table) -> None:
    """Threat: `<script>` in a dice purpose and a yield note (both legal text), run by whoever opens the game's
    HTML page or map. Defence: `pbem log --html` and `pbem render` escape every text from the repository."""
    script = "<script>alert(1)</script>"
    assert played.cli("roll", "--for", f"{script} purpose", who="fed").exit_code == 0
    played.edit("fed", **FED_GOES_ON)
    assert played.cli("yield", "-m", f"{script} note", who="fed").exit_code == 0
    page = played.pbem("log", "--html", who="fed")
    assert page.returncode == 0 and "<script>alert" not in page.stdout
    assert "&lt;script&gt;alert(1)&lt;/script&gt; purpose" in page.stdout
    svg = played.pbem("render", who="fed")
    assert svg.returncode == 0 and "<script" not in svg.stdout


# === Acting at the same time: pbem push and pbem pull (DESIGN §4.9, §8) =============================================
# Each player has his own clone of one hooked hub (tests/test_sync.py helpers). What `pbem push` replays is only
# ever the pusher's own commits, onto the hub's tip, never forced; what `pbem pull` takes is only a fast-forward
# of what the clone knew.

from test_sync import Seat, fed_turn, hub_head, start_game, tactical  # noqa: E402


@pytest.fixture(scope="module")
def base_hub_duel(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Seat], Path]:
    """Built once: a started duel on a hooked hub; fed holds control, both clones up to date."""
    from conftest import TEACHING_DUEL

    seats, hub = tactical(tmp_path_factory.mktemp("hub-duel"), str(TEACHING_DUEL), ("fed", "kli"))  # speeds as entries
    start_game(seats["fed"].ws(), "fed", seats["fed"].me, [seats["kli"].me])
    assert seats["fed"].push().code == 0
    seats["kli"].pull()
    return seats, hub


@pytest.fixture
def hub_duel(base_hub_duel: tuple[dict[str, Seat], Path], tmp_path: Path) -> tuple[Seat, Seat, Path]:
    """A private copy of the started duel on its hooked hub (`base_hub_duel`)."""
    from test_sync import copy_seats

    seats, hub = copy_seats(*base_hub_duel, tmp_path / "hub-duel")
    return seats["fed"], seats["kli"], hub


def _refused_push(seat: Seat, rule: str) -> str:
    """`pbem push` refuses with `rule`, one line, and moves neither the branch nor the working tree."""
    from pbem.errors import PbemError

    before = seat.head(), seat.git("status", "--porcelain").stdout
    try:
        outcome = seat.push()
    except PbemError as exc:
        assert exc.finding.rule == rule, exc.finding.text()
        said = exc.finding.text()
    else:
        assert outcome.code != 0 and any(f.rule == rule for f in outcome.findings) or f"[{rule}]" in outcome.message, \
            (outcome.message, [f.text() for f in outcome.findings])
        said = outcome.message
    assert (seat.head(), seat.git("status", "--porcelain").stdout) == before
    return said


def test_push__replaying_someone_elses_commit_re_signed_by_me(hub_duel: tuple[Seat, Seat, Path]) -> None:
    """Threat: kli holds fed's unpublished turn A (fetched from fed's machine); fed then lands another turn B.
    kli runs `pbem push`, hoping it re-signs A as his own on top of B. Defence: push re-signs only commits
    already signed by the pusher's key (push.not-mine); nothing is pushed, nothing moves."""
    fed, kli, hub = hub_duel
    fed_turn(fed)  # A, unpublished
    kli.git("fetch", "-q", str(fed.repo_dir), "main:refs/heads/from-fed")
    kli.git("reset", "-q", "--hard", "from-fed")
    fed.git("reset", "-q", "--hard", "HEAD~1")
    (fed.repo_dir / "players").mkdir(exist_ok=True)
    (fed.repo_dir / "players" / "fed.yaml").write_text('through: "1.4.damage"\n')
    from pbem.services import turn as turn_service

    turn_service.yield_turn(fed.ws(), fed.me, "B")
    assert fed.push().code == 0
    landed = hub_head(hub)
    assert "[push.not-mine]" in _refused_push(kli, "push.not-mine")
    assert hub_head(hub) == landed


def test_push__a_rebase_never_drops_another_players_landed_commit(hub_duel: tuple[Seat, Seat, Path]) -> None:
    """Threat: kli resets away fed's landed turn in his clone and pushes, hoping his history replaces the
    hub's. Defence: pbem push only ever adds on top of the hub's tip (here: "nothing to push", the hub is
    ahead); a forced plain `git push` meets the hook (history.rewritten). fed's turn stays."""
    fed, kli, hub = hub_duel
    fed_turn(fed)
    assert fed.push().code == 0
    landed = hub_head(hub)
    kli.pull()
    kli.git("reset", "-q", "--hard", "HEAD~1")  # drop fed's turn locally
    outcome = kli.push()
    assert outcome.code == 0 and "nothing to push" in outcome.message and "pbem pull" in outcome.message
    forced = kli.git("push", "--force", "origin", "main", check=False)
    assert forced.returncode != 0 and "history.rewritten" in forced.stderr, forced.stderr
    assert hub_head(hub) == landed


def test_push__pbem_never_forces_over_a_rewritten_local_history(hub_duel: tuple[Seat, Seat, Path]) -> None:
    """Threat: fed amends his own landed turn (new content, re-signed by himself) and runs `pbem push`, which a
    careless tool would force. Defence: the amended commit is replayed onto the hub's tip, where it is no longer
    legal (or clashes), so push refuses, keeps it on a pbem-saved branch, and the hub keeps the original."""
    fed, _kli, hub = hub_duel
    fed_turn(fed)
    assert fed.push().code == 0
    landed = hub_head(hub)
    fed.git("reset", "-q", "--hard", "HEAD~1")
    (fed.repo_dir / "players").mkdir(exist_ok=True)
    (fed.repo_dir / "players" / "fed.yaml").write_text('through: "1.4.damage"\n')
    from pbem.services import turn as turn_service

    turn_service.yield_turn(fed.ws(), fed.me, "a different turn")
    said = _refused_push(fed, "push.conflict")
    assert "pbem-saved-" in said and hub_head(hub) == landed


def test_push__re_signing_a_landed_commit_after_changing_it(hub_duel: tuple[Seat, Seat, Path]) -> None:
    """Threat: kli takes fed's landed turn, changes its content and signs the result with his own key, then
    pushes it (plain git, forced) or lets pbem push replay it. Defence: the hook refuses the rewrite
    (history.rewritten) and a commit by a player out of control (signature.not-in-control); pbem push replays it
    onto the tip where it clashes with the original, and refuses."""
    fed, kli, hub = hub_duel
    fed_turn(fed)
    assert fed.push().code == 0
    landed = hub_head(hub)
    kli.pull()
    kli.git("reset", "-q", "--soft", "HEAD~1")
    (kli.repo_dir / "players" / "fed.yaml").write_text('through: "1.2.damage"\nbreaks: [{range: 8}]\n')
    kli.git("add", "-A")
    kli.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={kli.me.path}", "commit", "-q", "-S", "-m", "fed: x")
    forced = kli.git("push", "--force", "origin", "main", check=False)
    assert forced.returncode != 0 and "history.rewritten" in forced.stderr, forced.stderr
    assert hub_head(hub) == landed
    said = _refused_push(kli, "push.conflict")
    assert "pbem-saved-" in said and hub_head(hub) == landed


def test_pull__a_remote_that_rewrote_history_is_not_fast_forwarded(hub_duel: tuple[Seat, Seat, Path]) -> None:
    """Threat: whoever controls the hub rewrites main (a forced update past the hook) to take back a landed
    turn. Defence: pbem pull and pbem push compare with what the clone had fetched, refuse (pull.rewritten,
    push.rewritten) and move nothing: neither the branch nor the remote-tracking ref."""
    import subprocess

    from pbem.errors import PbemError

    fed, kli, hub = hub_duel
    fed_turn(fed)
    assert fed.push().code == 0
    kli.pull()
    landed = hub_head(hub)
    subprocess.run(["git", "update-ref", "refs/heads/main", f"{landed}~1"], cwd=hub, check=True)
    before = kli.head(), kli.git("rev-parse", "origin/main").stdout
    for action, rule in ((kli.pull, "pull.rewritten"), (kli.push, "push.rewritten")):
        with pytest.raises(PbemError) as refused:
            action()
        assert refused.value.finding.rule == rule and "rewritten" in refused.value.finding.message
    assert (kli.head(), kli.git("rev-parse", "origin/main").stdout) == before
    done = kli.pbem("pull")
    assert done.returncode == 1 and "[pull.rewritten]" in done.stderr and "Traceback" not in done.stderr


# === 12. Agreements: the ways out of a stalled game (DESIGN §4.8: amend, seat, resign, nmr, end) =================
# What would a player who wants to win do with each kind? Sign in another's name or with the wrong key, carry a
# signature over to other terms, find an opponent absent who owes nothing (or before his deadline), take a seat
# nobody left, rewrite the game's identity by amend, end a game twice, or take the opponent's game or seat
# unsigned. Each is built with plain git and keys outside pbem, and found by `pbem verify` or the hook.

from pbem.crypto.keys import public_path  # noqa: E402


def _propose(table: Table, who: str, number: int, kind: str, content: Mapping[str, Any],
             signer: str | None = None) -> str:
    """Write agreements/<who>-000N.yaml by hand, signed outside pbem by `signer` (default: `who`) in `who`'s
    name, and commit it with status.yaml as pbem would compute it. Returns the commit."""
    raw: dict[str, Any] = {"id": f"{who}-{number:04d}", "kind": kind, "by": who, "content": dict(content),
                           "signatures": {}}
    raw["signatures"] = {who: agreement_sign(raw, signer or who)}
    table.write(f"agreements/{raw['id']}.yaml", dump_mapping(raw))
    return table.sneak(who, f"{who}: proposes {raw['id']}")


def _carol_key(table: Table) -> str:
    return " ".join(public_path(table.key("carol")).read_text().split()[:2])


def test_agreement_signed_with_the_wrong_key(started: Table) -> None:
    """Threat: fed proposes a draw in his own name, but the signature is carol's (a key with no seat), or kli
    signs in fed's name. Defence: each signature must verify under its player's key (agreement.signature), and
    each player adds only his own (agreement.foreign-signature)."""
    bad = _propose(started, "fed", 2, "end", {"result": "draw"}, signer="carol")
    assert "agreement.signature" in rejected(started, bad, "agreement.signature", "agreements/fed-0002.yaml")


def test_agreement_signature_carried_over_to_other_terms(started: Table) -> None:
    """Threat: kli signed fed's amend of the deadline to 96h; fed copies kli's signature onto his own new amend
    that sets 1h, to claim kli's consent. Defence: the signature covers the whole agreement (its id, kind and
    content) in this game; over other content it does not verify (agreement.signature)."""
    cli(started, "agree", "amend", "--deadline", "96h", who="fed")
    cli(started, "sign", "fed-0002", who="kli")
    kli_signature = dict(started.data("agreements/fed-0002.yaml"))["signatures"]["kli"]
    raw: dict[str, Any] = {"id": "fed-0003", "kind": "amend", "by": "fed", "content": {"changes": {"deadline": "1h"}},
                           "signatures": {}}
    raw["signatures"] = {"fed": agreement_sign(raw, "fed"), "kli": kli_signature}
    started.write("agreements/fed-0003.yaml", dump_mapping(raw))
    bad = started.sneak("fed", "fed: proposes fed-0003")
    got = rejected(started, bad, "agreement.foreign-signature", "agreements/fed-0003.yaml")
    assert "agreement.unsigned" not in got
    started.git("reset", "-q", "--hard", "HEAD~1")
    raw2 = {**raw, "signatures": {"fed": raw["signatures"]["fed"]}}
    started.write("agreements/fed-0003.yaml", dump_mapping(raw2))
    started.sneak("fed", "fed: proposes fed-0003")
    started.write("agreements/fed-0003.yaml", dump_mapping({**raw2, "signatures": {**raw2["signatures"],
                                                                                   "kli": kli_signature}}))
    bad = started.sneak("kli", "kli: signs fed-0003")
    assert rejected(started, bad, "agreement.signature", "agreements/fed-0003.yaml") == {"agreement.signature"}


def test_nmr_against_a_player_who_owes_nothing(started: Table) -> None:
    """Threat: the player in control finds his opponent absent (who owes nothing: it is not his turn) to have
    his turns passed by default. Defence: an nmr names a player who owes something now
    (agreement.nmr-owes-nothing)."""
    control = started.data("status.yaml")["control"]
    other = "kli" if control == "fed" else "fed"
    bad = _propose(started, control, 2, "nmr", {"player": other})
    assert "agreement.nmr-owes-nothing" in rejected(started, bad, "agreement.nmr-owes-nothing",
                                                    f"agreements/{control}-0002.yaml")


def test_seat_taken_that_is_not_vacant_by_agreement(started: Table) -> None:
    """Threat: fed gives kli's seat to carol's key as a "replacement", though kli never resigned, and writes
    the new key into game.yaml in the same commit. Defence: a replacement takes only a seat left by a resign
    (agreement.seat-not-vacant); the game.yaml change is no agreed effect and never takes effect."""
    raw: dict[str, Any] = {"seat": "kli", "key": _carol_key(started), "why": "replacement"}
    text = started.read("game.yaml")
    kli_key = " ".join(public_path(started.key("kli")).read_text().split()[:2])
    assert kli_key in text
    started.write("game.yaml", text.replace(kli_key, raw["key"]))
    bad = _propose(started, "fed", 2, "seat", raw)
    got = rejected(started, bad, "agreement.seat-not-vacant", "agreements/fed-0002.yaml")
    assert "agreement.effect" in got or "protected.changed" in got


def test_amend_that_touches_the_game_id(started: Table) -> None:
    """Threat: an amend that renames the game (so signatures made for another game carry over) or swaps a key.
    Defence: an amend changes only title, rules, deadline and paused_until (agreement.frozen); pbem refuses to
    propose it, and written by hand it is a finding."""
    refused(started, "agree", "amend", "--set", "id=another-game", who="fed", rule="agreement.frozen",
            where="agreements/draft.yaml")
    bad = _propose(started, "fed", 2, "amend", {"changes": {"id": "another-game"}})
    assert "agreement.frozen" in rejected(started, bad, "agreement.frozen", "agreements/fed-0002.yaml")


def test_amend_applied_with_more_than_was_agreed(started: Table) -> None:
    """Threat: kli adds the last signature to an amend of the deadline and, in the same commit, slips another
    change into game.yaml (a house rule in his favour). Defence: the commit that completes an amend writes
    exactly the agreed change (agreement.effect), and a refused change never takes effect."""
    cli(started, "agree", "amend", "--deadline", "96h", who="fed")
    raw = dict(started.data("agreements/fed-0002.yaml"))
    raw["signatures"] = {**raw["signatures"], "kli": agreement_sign(raw, "kli")}
    started.write("agreements/fed-0002.yaml", dump_mapping(raw))
    game = dict(started.data("game.yaml"))
    started.write("game.yaml", dump_mapping({**game, "deadline": "96h", "rules": {"kli-fires-twice": True}}))
    bad = started.sneak("kli", "kli: signs fed-0002")
    assert "agreement.effect" in rejected(started, bad, "agreement.effect", "game.yaml")


def test_a_second_end(started: Table) -> None:
    """Threat: the game ended in kli's forfeit; kli then proposes (by hand) a draw, to overwrite the result.
    Defence: a game ends once (agreement.second-end), and nothing follows its end (game.over)."""
    cli(started, "agree", "end", "--result", "forfeit", "--player", "kli", who="fed")
    bad = _propose(started, "kli", 2, "end", {"result": "draw"})
    got = rejected(started, bad, "agreement.second-end", "agreements/kli-0002.yaml")
    assert got == {"agreement.second-end", "game.over"}


def test_resign_in_another_player_s_name(started: Table) -> None:
    """Threat: fed writes kli's resignation (id kli-0001, by kli) signed with his own key, to have kli's units
    leave the map. Defence: a proposal's id and `by` name its proposer (ownership.id-author), and only kli's own
    signature verifies for kli (agreement.signature / agreement.foreign-signature)."""
    raw: dict[str, Any] = {"id": "kli-0002", "kind": "resign", "by": "kli", "content": {}, "signatures": {}}
    raw["signatures"] = {"kli": agreement_sign(raw, "fed")}
    started.write("agreements/kli-0002.yaml", dump_mapping(raw))
    bad = started.sneak("fed", "fed: kli resigns")
    got = rejected(started, bad, "ownership.id-author", "agreements/kli-0002.yaml")
    assert "agreement.foreign-signature" in got


def test_unsigned_forfeit_or_seat_swap_in_a_duel_is_refused_by_the_gates_until_overdue(started: Table) -> None:
    """Threat: in a duel, "every active player but the subject" is the proposer alone: fed could end the game
    by kli's forfeit, or give kli's seat to a key of his own ("lost key"), without kli's signature, while kli
    plays on. Defence: the verifier cannot judge time and accepts both; the gates (pre-receive hook) refuse any
    agreement that takes a player's game or seat unsigned unless he owes something and is past his deadline by
    the server's clock (agreement.not-overdue; an nmr: agreement.nmr-early)."""
    server = serve(started)
    tip = server_ref(server)
    control = started.data("status.yaml")["control"]
    other = "kli" if control == "fed" else "fed"
    cli(started, "agree", "end", "--result", "forfeit", "--player", other, who=control)
    assert verdict(started)[0] == 0
    push_refused(push(started), "agreement.not-overdue")
    started.git("reset", "-q", "--hard", tip)
    cli(started, "agree", "seat", "--seat", other, "--new-key", _carol_key(started), "--why", "lost-key",
        who=control)
    push_refused(push(started), "agreement.not-overdue")
    assert server_ref(server) == tip

# --- pbem watch: the autopilot decides nothing, re-signs nothing of others, follows no rewrite -------------------

from test_push import base_race, race, server_main, signer_of  # noqa: E402,F401


def _watch_once(table: Table, who: str) -> Any:
    return table.pbem("watch", "--once", env=table.env(who))


def test_watch__a_complete_turn_in_the_working_tree_is_not_yielded_for_its_player(race: Any) -> None:
    """Threat: an autopilot that commits whatever lies in the working tree takes the player's decisions (a draft
    turn, orders not yet meant). Defence: pbem watch builds its commits from HEAD alone, only what needs no
    decision (dice, due reveals), and puts the draft back untouched; control is told, never taken."""
    fed, kli, escrow, server = race
    for table, who in ((kli, "kli"), (escrow, "escrow"), (fed, "fed"), (kli, "kli")):
        assert _watch_once(table, who).returncode == 0
    holder = fed if fed.data("status.yaml")["control"] == "fed" else kli
    name = holder.root.name
    holder.git("pull", "-q", "--ff-only")
    draft = "through: 9.8.damage\nbreaks: [{range: 8}]\n"
    holder.write(f"players/{name}.yaml", draft)
    before = server_main(server), holder.head()
    done = _watch_once(holder, name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (server_main(server), holder.head()) == before
    assert holder.read(f"players/{name}.yaml") == draft


def test_watch__another_keys_commit_is_never_re_signed_or_pushed_as_mine(race: Any) -> None:
    """Threat: someone slips a commit signed by another key into my clone (or my watch would launder it): when
    the hub moved, replaying it would sign it with MY key. Defence: pbem push (which watch uses) re-signs only
    commits signed by my key: push.not-mine, exit 1, the hub unchanged."""
    fed, kli, escrow, server = race
    kli.write("players/kli.yaml", "through: 1.8.damage\n")
    kli.sneak("fed", "fed: slipped into kli's clone")
    assert _watch_once(escrow, "escrow").returncode == 0
    landed = server_main(server)
    done = _watch_once(kli, "kli")
    assert done.returncode == 1
    assert "push.not-mine" in done.stdout and "Traceback" not in done.stderr
    assert server_main(server) == landed and signer_of(escrow, landed) == "escrow"


def test_watch__a_rewritten_remote_is_not_followed(race: Any) -> None:
    """Threat: whoever controls the hub rewrites main to take back a landed contribution, hoping the players'
    autopilots follow it. Defence: watch pulls with pbem pull: pull.rewritten, exit 1, neither the branch nor
    the hub moved by it, nothing settled on top of it."""
    import subprocess

    _fed, kli, _escrow, server = race
    assert _watch_once(kli, "kli").returncode == 0
    landed = server_main(server)
    subprocess.run(["git", "update-ref", "refs/heads/main", f"{landed}~1"], cwd=server, check=True)
    rewritten = server_main(server)
    done = _watch_once(kli, "kli")
    assert done.returncode == 1 and "pull.rewritten" in done.stdout
    assert kli.head() == landed and server_main(server) == rewritten != landed

# === Resign: its effect is the ruleset's (tactical: his units leave the map; Diplomacy: civil disorder) ==========
# What would a player who resigned (or wants another gone) do? Keep giving orders after resigning, hoping his
# units act on; the resignation of another player is test_resign_in_another_player_s_name above.


def test_resign__a_resigned_player_s_orders_after_resigning_are_refused(tmp_path: Path) -> None:
    """Threat: kli resigns in a three-cornered melee (his ship leaves the map), then commits orders anyway, by
    pbem and by plain git, to steer it on. Defence: a resigned player never holds control again (his breaks are
    served with no orders; signature.not-in-control), and his units are already off the map."""
    from test_errata import _melee

    table = _melee(tmp_path / "melee")
    cli(table, "resign", who="kli")
    table.write("players/kli.yaml", "through: 1.3.damage\nbreaks: [{fire: {}}]\n")
    done = table.cli("yield", "-m", "still here", who="kli")
    assert done.exit_code == 1 and "[signature.not-in-control]" in done.output, done.output
    bad = table.sneak("kli", "kli: orders after resigning")
    rejected(table, bad, "signature.not-in-control", "status.yaml")


def test_resign__a_resigned_power_owes_and_seals_no_orders(tmp_path: Path) -> None:
    """Threat: Turkey resigns (civil disorder), then seals orders for the open phase to move his armies after
    all. Defence: a power in civil disorder owes no orders; pbem orders refuses (orders.not-owed), nothing
    written."""
    from test_dow_flow import new_dow

    dow = new_dow(tmp_path / "dow")
    dow.phase()
    dow.ok("resign", who="turkey")
    dow.refused("orders", dow.orders_file(["A CON - BUL"]), who="turkey", rule="orders.not-owed")


# erratum agreements
# An erratum is an agreement of kind erratum (agreements/<author>-NNNN.yaml), signed by every active player; the
# commit adding the last signature changes the report by exactly its entries. What would a player who wants to
# win do with one? Sign for the other player, reuse a signature, smuggle a further change into the correcting
# commit, correct what is not firm, propose one after resigning, write the old errata/ form, or race two errata
# over the same step. (`played`: fed holds control at 1.9.move; fed's CA speed 12 at 1.0.alloc is firm.)

CA_12 = {"at": "1.0.alloc", "by": "fed", "unit": "CA", "do": {"speed": 12}}
ERRATUM_FILE = "agreements/fed-0002.yaml"


def _ca_erratum(speed: int, reason: str = "CA was allocated less") -> dict[str, Any]:
    return {"reason": reason, "removed": [CA_12], "added": [{**CA_12, "do": {"speed": speed}}]}


def _erratum_signed_by(table: Table, signer: str, *, name: str = "kli", reason: str | None = None) -> str:
    """fed's erratum fed-0002 (CA speed 10) gets a signature in `name`'s name made with `signer`'s key (over
    another reason, if given) and, as the last signature, the report change it agrees to; committed by `name`."""
    raw = dict(table.data(ERRATUM_FILE))
    signed = raw if reason is None else {**raw, "content": {**raw["content"], "reason": reason}}
    raw["signatures"] = {**raw["signatures"], name: agreement_sign(signed, signer)}
    table.write(ERRATUM_FILE, dump_mapping(raw))
    text = table.read("report/turn-01.yaml")
    table.write("report/turn-01.yaml", text.replace("unit: CA, do: {speed: 12}", "unit: CA, do: {speed: 10}", 1))
    return table.sneak(name, f"{name}: signs fed-0002")


@pytest.fixture
def erratum_proposed(played: Table) -> Table:
    text = played.read("report/turn-01.yaml")
    played.write("report/turn-01.yaml", text.replace("unit: CA, do: {speed: 12}", "unit: CA, do: {speed: 10}", 1))
    assert "to sign: kli" in cli(played, "erratum", "propose", "--reason", "CA was allocated less", who="fed")
    assert played.data(ERRATUM_FILE)["kind"] == "erratum"
    return played


def test_erratum__signed_by_the_wrong_key(erratum_proposed: Table) -> None:
    """Threat: fed completes his own erratum by writing kli's signature, made with fed's key or with carol's
    (who holds no seat), and commits it as kli would. Defence: a signature in kli's name counts only when kli's
    own key in game.yaml made it, in kli's own commit (agreement.signature, agreement.foreign-signature)."""
    base = erratum_proposed.head()
    bad = _erratum_signed_by(erratum_proposed, "carol")
    assert "agreement.signature" in rejected(erratum_proposed, bad, "agreement.signature", ERRATUM_FILE)
    erratum_proposed.git("reset", "-q", "--hard", base)
    bad = _erratum_signed_by(erratum_proposed, "fed", name="kli")
    rejected(erratum_proposed, bad, "agreement.signature", ERRATUM_FILE)
    erratum_proposed.git("reset", "-q", "--hard", base)
    raw = dict(erratum_proposed.data(ERRATUM_FILE))
    raw["signatures"] = {**raw["signatures"], "kli": agreement_sign(raw, "fed")}
    erratum_proposed.write(ERRATUM_FILE, dump_mapping(raw))
    bad = erratum_proposed.sneak("fed", "fed: signs for kli")
    rejected(erratum_proposed, bad, "agreement.foreign-signature", ERRATUM_FILE)


def test_erratum__a_signature_over_other_content(erratum_proposed: Table) -> None:
    """Threat: kli's genuine signature over an erratum with another reason (or another game's) is copied onto
    fed-0002. Defence: the signature covers the agreement's id, kind and whole content and the game id
    (agreement.signature)."""
    bad = _erratum_signed_by(erratum_proposed, "kli", reason="another reason")
    rejected(erratum_proposed, bad, "agreement.signature", ERRATUM_FILE)


def test_erratum__the_correcting_commit_changes_more_than_the_erratum(erratum_proposed: Table) -> None:
    """Threat: kli's last signature comes with a further firm change (D7 faster), or with an edit of game.yaml,
    or with no change of the report at all (the signature counts, the correction never happens). Defence: the
    commit completing an erratum changes the report by exactly its entries (erratum.mismatch names the extra
    entry or the missing one); game.yaml changes only by amend or seat (agreement.effect)."""
    base = erratum_proposed.head()
    text = erratum_proposed.read("report/turn-01.yaml")
    erratum_proposed.write("report/turn-01.yaml",
                           text.replace("unit: D7, do: {speed: 12}", "unit: D7, do: {speed: 20}", 1))
    bad = _erratum_signed_by(erratum_proposed, "kli")
    hits = rejected(erratum_proposed, bad, "erratum.mismatch", "report/turn-01.yaml")
    assert hits == {"erratum.mismatch"}, hits
    erratum_proposed.git("reset", "-q", "--hard", base)
    erratum_proposed.write("game.yaml", erratum_proposed.read("game.yaml") + "# deadline: never\n")
    bad = _erratum_signed_by(erratum_proposed, "kli")
    rejected(erratum_proposed, bad, "agreement.effect", "game.yaml")
    erratum_proposed.git("reset", "-q", "--hard", base)
    raw = dict(erratum_proposed.data(ERRATUM_FILE))
    raw["signatures"] = {**raw["signatures"], "kli": agreement_sign(raw, "kli")}
    erratum_proposed.write(ERRATUM_FILE, dump_mapping(raw))
    bad = erratum_proposed.sneak("kli", "kli: signs fed-0002 and leaves the report as it was")
    rejected(erratum_proposed, bad, "erratum.mismatch", ERRATUM_FILE)


def test_erratum__a_correction_of_what_is_not_firm(played: Table) -> None:
    """Threat: kli proposes an erratum of fed's entry after the firm marker (fed's own to change in his turn),
    to make fed sign away an order he may still change. Defence: an erratum corrects only entries before the firm
    marker (erratum.not-firm), naming the line in the agreement file."""
    later = {"at": "1.20.move", "by": "fed", "unit": "CA", "do": {"move": "TL"}}
    bad = _propose(played, "kli", 1, "erratum", {"reason": "later", "removed": [], "added": [later]})
    rejected(played, bad, "erratum.not-firm", "agreements/kli-0001.yaml")


def test_erratum__proposed_by_a_player_who_resigned(tmp_path: Path) -> None:
    """Threat: kli resigned from the melee, then proposes an erratum to change the past in his favour (its
    signers are the active players only, so his proposal would need no signature of his that counts). Defence:
    only active players propose errata (agreement.not-a-signer), by pbem and by plain git."""
    from test_errata import _melee

    table = _melee(tmp_path / "melee")
    for seat, unit in (("fed", "CA"), ("kli", "D7"), ("rom", "KR")):
        table.turn(seat, through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": unit, "do": {"speed": 12}}])
    cli(table, "resign", who="kli")
    text = table.read("report/turn-01.yaml")
    table.write("report/turn-01.yaml", text.replace("unit: CA, do: {speed: 12}", "unit: CA, do: {speed: 4}", 1))
    refused(table, "erratum", "propose", "--reason", "CA was slower", who="kli", rule="agreement.not-a-signer",
            where="agreements/kli-0002.yaml:4")
    table.git("checkout", "--", ".")
    raw: dict[str, Any] = {"id": "kli-0002", "kind": "erratum", "by": "kli",
                           "content": _ca_erratum(4, "CA was slower"), "signatures": {}}
    raw["signatures"] = {"kli": agreement_sign(raw, "kli", game_id="melee-e2e")}
    table.write("agreements/kli-0002.yaml", dump_mapping(raw))
    bad = table.sneak("kli", "kli: proposes kli-0002")
    rejected(table, bad, "agreement.not-a-signer", "agreements/kli-0002.yaml")


def test_erratum__an_old_style_errata_file_is_refused(played: Table) -> None:
    """Threat: errata/e0001.yaml, the older form, written by hand to get around the agreement rules (signed by
    its proposer alone, marked applied, the report changed by it). Defence: errata/ is no part of a game's layout
    (tree.unexpected-path, with a hint to propose the correction as an erratum agreement); pbem reads nothing
    from it, so the report change it carries is a plain change of firm entries (firm.changed)."""
    raw: dict[str, Any] = {"id": "e0001", "by": "fed", "reason": "CA was allocated less", "removed": [CA_12],
                           "added": [{**CA_12, "do": {"speed": 10}}], "signatures": {}, "applied": True}
    played.write("errata/e0001.yaml", dump_mapping(raw))
    text = played.read("report/turn-01.yaml")
    played.write("report/turn-01.yaml", text.replace("unit: CA, do: {speed: 12}", "unit: CA, do: {speed: 10}", 1))
    bad = played.git_commit("fed: applies e0001 alone", signer="fed")  # plain git: pbem commits no errata/
    assert {"tree.unexpected-path", "firm.changed"} <= rejected(played, bad, "tree.unexpected-path",
                                                               "errata/e0001.yaml")


def test_erratum__a_second_erratum_over_the_same_step_races_the_first(erratum_proposed: Table) -> None:
    """Threat: kli proposes his own erratum of the same entry (CA speed 12 -> 14) while fed's (12 -> 10) waits;
    both get signed, each hoping his lands last. Defence: the first to complete changes the report; the second's
    last signature must change the report by exactly its entries, and the entry it removes is gone: pbem refuses
    it before writing anything, and by hand it is erratum.mismatch. The race is decided by who completes first,
    and the loser's erratum stays open (propose a new one over the corrected report)."""
    table = erratum_proposed
    text = table.read("report/turn-01.yaml")
    table.write("report/turn-01.yaml", text.replace("unit: CA, do: {speed: 12}", "unit: CA, do: {speed: 14}", 1))
    assert "to sign: fed" in cli(table, "erratum", "propose", "--reason", "CA was faster", who="kli")
    assert "every signer has signed" in cli(table, "sign", "fed-0002", who="kli")
    assert "unit: CA, do: {speed: 10}" in table.read("report/turn-01.yaml")
    refused(table, "sign", "kli-0001", who="fed", rule="erratum.mismatch", where="*")
    raw = dict(table.data("agreements/kli-0001.yaml"))
    raw["signatures"] = {**raw["signatures"], "fed": agreement_sign(raw, "fed")}
    table.write("agreements/kli-0001.yaml", dump_mapping(raw))
    text = table.read("report/turn-01.yaml")
    table.write("report/turn-01.yaml", text.replace("unit: CA, do: {speed: 10}", "unit: CA, do: {speed: 14}", 1))
    bad = table.sneak("fed", "fed: signs kli-0001 over the corrected report")
    rejected(table, bad, "erratum.mismatch")


def test_erratum__through_the_hook(erratum_proposed: Table) -> None:
    """The signing-and-correcting commit passes a hooked server; the same commit with kli's signature made by
    fed's key is refused there and the server's ref stays."""
    server = serve(erratum_proposed)
    bad_table = copy_table(erratum_proposed, erratum_proposed.root.parent / "bad")
    cli(erratum_proposed, "sign", "fed-0002", who="kli")
    done = push(erratum_proposed)
    assert done.returncode == 0, done.stderr
    assert server_ref(server) == erratum_proposed.head()
    _erratum_signed_by(bad_table, "fed")
    pushed = bad_table.git("push", str(server), "HEAD:refs/heads/sneaky", check=False)
    assert pushed.returncode != 0 and b"agreement.signature" in pushed.stderr, pushed.stderr
    assert server_ref(server, "refs/heads/sneaky") is None

# === nmr settles withheld reveals (DESIGN §4.8, §5; docs/dice.md "A part withheld") ============================
# The tactical duel of `fire_owed` (both declared ph1 at 1.4.fire, each owes the die for his shot). What would a
# player do who sees a bad die coming? Withhold his reveal and hope the table re-rolls; reveal after all once
# the nmr took effect; have someone else write a reveal; find a player absent who owes no reveal; sign the nmr
# against himself. Each is built with the CLI and with plain git, and found by `pbem verify` or the hook.

from test_dice_flow import pending as dice_pending  # noqa: E402


def _to_reveal(table: Table, roller: str = "fed") -> None:
    """Drive the fire step (each firer rolls, the other contributes) until `roller` owes the reveal of his die
    and nothing else is owed before it."""
    for _ in range(12):
        (who, kind, why), *_ = dice_pending(table)
        if who == roller and kind == "dice" and why.startswith("reveal owed"):
            return
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(table, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(table, "yield", who=who)
    raise AssertionError(dice_pending(table))


def _resolve_fire(table: Table) -> None:
    """Play on (dice, contributions, reveals) until 1.4.fire is resolved and a player needs orders, or the battle
    is over (an nmr covers its player up to his next decision: in a one-turn battle he has none left)."""
    for _ in range(12):
        owed = dice_pending(table)
        if not owed:
            return
        (who, kind, _why), *_ = owed
        if kind == "horizon":
            return
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(table, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(table, "yield", who=who)
    raise AssertionError(dice_pending(table))


def test_nmr_reveal__the_roller_who_withholds_a_bad_die_misses_and_never_rolls_again(fire_owed: Table) -> None:
    """Threat: fed knows his die once kli contributed (he holds his secret); it is bad, so he withholds his
    reveal, hoping the stalled table voids the batch and rolls again. Defence: kli's nmr settles it: its commit
    marks fed's reveal withheld (nmr kli-0001); the shot misses (no damage), the log and status say why, and
    play goes on; fed can neither reveal late nor void and re-roll (dice.withheld)."""
    _to_reveal(fire_owed)
    cli(fire_owed, "agree", "nmr", "--player", "fed", who="kli")
    assert batch(fire_owed, "fed-0001")["withheld"] == {"fed": "kli-0001"}
    assert "results" not in batch(fire_owed, "fed-0001")
    assert_clean(fire_owed)
    assert not any(who == "fed" and kind == "dice" for who, kind, _ in dice_pending(fire_owed))
    _resolve_fire(fire_owed)
    assert_clean(fire_owed)
    log = cli(fire_owed, "log")
    assert "CA ph1 at D7, range 3: missed: fed's reveal withheld, nmr kli-0001" in log, log
    status = cli(fire_owed, "status", "--plain", who="kli")
    assert "withheld: dice fed-0001: missed: fed's reveal withheld, nmr kli-0001" in status, status
    from pbem.services import pictures
    from pbem.services.workspace import Workspace

    view = pictures.status_view(Workspace.open(fire_owed.repo_dir), "fed")
    assert any("fed's reveal withheld, nmr kli-0001" in line for line in view.withheld), view.withheld
    assert "Withheld (owed, never given" in log


@pytest.fixture(scope="module")
def base_reveal_withheld(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Built once: the duel of `fire_owed` in a battle of two turns (so fed has a next decision after the nmr:
    his orders for turn 2); fed withheld his reveal, kli's nmr settled it, and 1.4.fire was resolved without
    his die."""
    from conftest import GAME_ID, _build
    from test_tactical_cli_bad_input import TEMPLATE, arm, declare_both

    root = tmp_path_factory.mktemp("two-turns")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(TEMPLATE.replace("turns: 1\n", "turns: 2\n"))
    table = declare_both(arm(_build(root / "started", str(root / "template"), GAME_ID)))
    _to_reveal(table)
    cli(table, "agree", "nmr", "--player", "fed", who="kli")
    _resolve_fire(table)
    # kli, served first after the closing pass of the auction, gives his orders for turn 2: fed holds control
    assert dice_pending(table)[0][:2] == ("kli", "horizon"), dice_pending(table)
    table.turn("kli", through="2.32.final")
    return table


@pytest.fixture
def reveal_withheld(base_reveal_withheld: Table, tmp_path: Path) -> Table:
    return private(base_reveal_withheld, tmp_path)


def test_nmr_reveal__the_absent_roller_reveals_late_after_the_nmr_took_effect(reveal_withheld: Table) -> None:
    """Threat: once the nmr took effect, fed reveals after all (the die turned out good), in his next turn with
    plain git, or voids the batch to roll again; pbem yield would not. Defence: the nmr's settlement is firm:
    nothing is revealed, rolled or voided in a batch whose reveal was withheld (dice.withheld), and the step
    it resolved stays resolved (his late batch for the shot is unbound: dice.unbound-ref)."""
    table = reveal_withheld
    before = batch(table, "fed-0001")
    # the nmr covered fed to his next decision: his orders for turn 2, which he now owes in control
    assert dice_pending(table)[0] == ("fed", "horizon", "needs orders from 2.0.alloc"), dice_pending(table)
    assert table.data("status.yaml")["control"] == "fed" and not table.data("status.yaml")["over"]
    write_batch(table, honest_reveal(table, before))
    table.edit("fed", through="2.8.damage")
    bad = sneak_as(table, "fed", "fed: my reveal after all")
    assert "dice.withheld" in rejected(table, bad, "dice.withheld", "dice/fed-0001.yaml")
    table.git("reset", "-q", "--hard", "HEAD~1")
    write_batch(table, {**before, "void": {"reason": "the reveal came too late"}})
    bad = sneak_as(table, "fed", "fed: void it and roll again")
    assert "dice.withheld" in rejected(table, bad, "dice.withheld", "dice/fed-0001.yaml")


def test_nmr_reveal__a_reveal_forged_by_someone_else_after_the_nmr(reveal_withheld: Table) -> None:
    """Threat: kli, who cannot know fed's secret, writes a reveal and results of his own choosing into fed's
    withheld batch; or fed, in his own turn, drops the withheld mark so that he owes the reveal again and
    gives it now that he likes the die. Defence: nobody settles anything in a batch after the nmr (kli owes
    nothing: signature.not-in-control; and in any commit: dice.withheld), and a mark never changes
    (dice.bad-withheld)."""
    table = reveal_withheld
    before = batch(table, "fed-0001")
    forged = {**before, "reveal": "ab" * 32, "results": [6]}
    write_batch(table, forged)
    bad = sneak_as(table, "kli", "kli: fed's reveal, as I like it")
    assert rejected(table, bad, "dice.withheld", FED_DIE) == {"dice.withheld", "signature.not-in-control"}
    table.git("reset", "-q", "--hard", "HEAD~1")
    write_batch(table, {k: v for k, v in honest_reveal(table, before).items() if k != "withheld"})
    table.edit("fed", through="2.8.damage")
    bad = sneak_as(table, "fed", "fed: I owe it again, here it is")
    assert "dice.bad-withheld" in rejected(table, bad, "dice.bad-withheld", "dice/fed-0001.yaml")


def test_nmr_reveal__an_nmr_against_a_player_who_owes_no_reveal(fire_owed: Table) -> None:
    """Threat: fed owes the reveal of his die; to have kli's contribution to his next batch left out (or kli's
    turn passed), fed finds kli absent, who owes nothing now, and marks a part of kli's withheld by hand.
    Defence: an nmr names a player who owes something now (agreement.nmr-owes-nothing), and a withheld mark
    is written only by the commit completing the nmr that settles it (dice.bad-withheld)."""
    _to_reveal(fire_owed)
    refused(fire_owed, "agree", "nmr", "--player", "kli", who="fed", rule="agreement.nmr-owes-nothing",
            where="agreements/draft.yaml")
    bad = _propose(fire_owed, "fed", 2, "nmr", {"player": "kli"})
    assert "agreement.nmr-owes-nothing" in rejected(fire_owed, bad, "agreement.nmr-owes-nothing",
                                                    "agreements/fed-0002.yaml")
    fire_owed.git("reset", "-q", "--hard", "HEAD~1")
    write_batch(fire_owed, {**batch(fire_owed, "fed-0001"), "withheld": {"kli": "fed-0002"}})
    bad = sneak_as(fire_owed, "fed", "fed: kli's part withheld")
    assert "dice.bad-withheld" in rejected(fire_owed, bad, "dice.bad-withheld", "dice/fed-0001.yaml")


def test_nmr_reveal__an_nmr_signed_by_the_absent_player_himself(fire_owed: Table) -> None:
    """Threat: fed, who owes the reveal of a bad die, finds himself absent (his own nmr, or his signature on
    kli's) so that his shot counts as withheld the moment he likes. Defence: the absent player never signs the
    nmr against him (agreement.malformed for his own, agreement.not-a-signer on another's); his way out is to
    resign, which settles the same part the same way (the shot misses) and costs him the game."""
    _to_reveal(fire_owed)
    refused(fire_owed, "agree", "nmr", "--player", "fed", who="fed", rule="agreement.malformed",
            where="agreements/draft.yaml")
    bad = _propose(fire_owed, "fed", 2, "nmr", {"player": "fed"})
    assert "agreement.malformed" in rejected(fire_owed, bad, "agreement.malformed", "agreements/fed-0002.yaml")
    fire_owed.git("reset", "-q", "--hard", "HEAD~1")
    cli(fire_owed, "agree", "nmr", "--player", "fed", "--note", "not yet", who="kli")
    fire_owed.git("reset", "-q", "--hard", "HEAD~1")  # kli's proposal, without his signature: fed signs it
    raw: dict[str, Any] = {"id": "kli-0001", "kind": "nmr", "by": "kli", "content": {"player": "fed"},
                           "signatures": {}}
    raw["signatures"] = {"kli": agreement_sign(raw, "kli"), "fed": agreement_sign(raw, "fed")}
    fire_owed.write("agreements/kli-0001.yaml", dump_mapping(raw))
    bad = fire_owed.sneak("fed", "fed: signs the nmr against himself")
    assert "agreement.not-a-signer" in rejected(fire_owed, bad, "agreement.not-a-signer",
                                                "agreements/kli-0001.yaml") | \
        rejected(fire_owed, bad, "agreement.foreign-signature", "agreements/kli-0001.yaml")


def test_nmr_reveal__the_hook_accepts_the_settlement_once_the_roller_is_overdue(fire_owed: Table) -> None:
    """The honest way out, through a hooked server: fed has owed his reveal for eight days (by the server's own
    record of when the commit that made him owe it landed; the deadline is the default 7d); kli's nmr, with its
    withheld mark, is accepted by the pre-receive hook, and a fresh clone verifies."""
    server = serve(fire_owed)
    _to_reveal(fire_owed)
    assert push(fire_owed).returncode == 0
    _age_record(server, 8)  # eight days pass at the gate (tests/test_attacks.py, "The gate's clock")
    cli(fire_owed, "agree", "nmr", "--player", "fed", who="kli")
    done = push(fire_owed)
    assert done.returncode == 0, done.stderr
    assert server_ref(server) == fire_owed.head()
    from test_hook import clone_for

    fresh = clone_for(fire_owed, server, "fresh")
    assert_clean(fresh)
    assert batch(fresh, "fed-0001")["withheld"] == {"fed": "kli-0001"}


def _until(table: Table, who_: str, start: str) -> None:
    """Drive the fire step until `who_`'s first pending break's why starts with `start`."""
    for _ in range(12):
        (who, kind, why), *_ = dice_pending(table)
        if who == who_ and why.startswith(start):
            return
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(table, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(table, "yield", who=who)
    raise AssertionError(dice_pending(table))


def test_nmr_reveal__the_target_withholds_his_contribution_to_stall_the_shot(fire_owed: Table) -> None:
    """Threat: kli, the target of fed's shot, never contributes to fed's die, so that it can never be rolled
    (and hopes the table gives up on the shot). Defence: fed's nmr leaves kli's contribution out: the die is
    made from the others' (here fed's secret alone, which fed committed before he could know kli would stay
    away), fed reveals, the shot is scored; kli's late contribution is refused (dice.withheld). What kli lost is
    his share in the die's randomness (docs/dice.md "A part withheld")."""
    from pbem.crypto import dice as dice_crypto

    _until(fire_owed, "kli", "contribution owed to dice fed-0001")
    cli(fire_owed, "agree", "nmr", "--player", "kli", who="fed")
    assert batch(fire_owed, "fed-0001")["withheld"] == {"kli": "fed-0002"}
    assert_clean(fire_owed)
    late = {**batch(fire_owed, "fed-0001"), "contributions": {"kli": "cd" * 32}}
    _until(fire_owed, "fed", "reveal owed for dice fed-0001")
    cli(fire_owed, "yield", who="fed")
    rolled = batch(fire_owed, "fed-0001")
    game_id = fire_owed.data("game.yaml")["id"]
    seed = dice_crypto.seed_commit_reveal(game_id, "fed-0001", bytes.fromhex(rolled["reveal"]), [])
    assert rolled["results"] == dice_crypto.rolls(seed, 6, 1)
    assert_clean(fire_owed)
    fire_owed.git("reset", "-q", "--hard", "HEAD~1")
    write_batch(fire_owed, late)
    bad = sneak_as(fire_owed, "kli", "kli: my contribution after all")
    assert "dice.withheld" in rejected(fire_owed, bad, "dice.withheld", "dice/fed-0001.yaml")


def test_nmr_reveal__a_resigned_roller_s_die_is_lost_and_the_game_goes_on(fire_owed: Table) -> None:
    """fed owes the reveal of his die and resigns instead: his resign settles it (withheld, resign fed-0002):
    never rolled, nobody waits for it, and the history verifies."""
    _to_reveal(fire_owed)
    cli(fire_owed, "resign", who="fed")
    assert batch(fire_owed, "fed-0001")["withheld"] == {"fed": "fed-0002"}
    assert not any(who == "fed" and kind == "dice" for who, kind, _ in dice_pending(fire_owed))
    assert_clean(fire_owed)


from test_tactical_cli_bad_input import base_contact  # noqa: E402,F401


def test_nmr_reveal__a_seeking_weapon_whose_owner_withholds_its_target(base_contact: Table, tmp_path: Path) -> None:
    """Threat: kli's drone S1 meets fed's CA; kli owes the reveal of its sealed target and withholds it (the
    drone slipped away from its target earlier, which the reveal would show: rules.pursuit). Defence: fed's nmr
    settles it: the target is lost, so the drone has none and is removed, as a dummy would be (no damage, no
    pursuit to check); kli's late reveal is refused (secret.withheld)."""
    table = private(base_contact, tmp_path)
    secret = next(s for s in table.data("status.yaml")["pending"] if s["kind"] == "secret")["why"].split()[3]
    secret = secret.rstrip(":")
    cli(table, "agree", "nmr", "--player", "kli", who="fed")
    assert table.data(f"secrets/{secret}.yaml")["withheld"] == "fed-0002"
    assert_clean(table)
    from pbem.services.workspace import Workspace

    state = Workspace.open(table.repo_dir).history().last.stop.checkpoint.state
    drone, ca = state.unit("S1"), state.unit("CA")
    assert drone.status == "dummy" and ca.shields == (20,) * 6, (drone, ca)
    assert f"withheld: secret {secret} (target, S1): kli's reveal withheld, nmr fed-0002" in \
        cli(table, "status", "--plain", who="fed")
    raw = dict(table.data(f"secrets/{secret}.yaml"))
    from pbem.crypto import seal as seal_crypto

    key = seal_crypto.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(table.key("kli")))
    table.write(f"secrets/{secret}.yaml", dump_mapping({**raw, "key": key.hex()}))
    bad = sneak_as(table, "kli", "kli: S1's target after all")
    assert "secret.withheld" in rejected(table, bad, "secret.withheld", f"secrets/{secret}.yaml")


def test_nmr_reveal__a_power_that_sealed_orders_and_never_reveals_holds(tmp_path: Path) -> None:
    """Threat: France seals an attack on Burgundy, sees the other six powers' orders revealed and withholds his
    own, hoping the phase waits for him for ever. Defence: the nmr of the six others settles it: its last
    signature marks France's sealed orders withheld, they count as none (France holds: A PAR stays), the phase
    resolves, and France's late reveal is refused (secret.withheld). Not defended: France chose between his
    sealed orders and holding after seeing the others' (docs/threats.md)."""
    from test_dow_flow import POWERS, new_dow

    dow = new_dow(tmp_path / "dow")
    dow.phase()  # S1901P: press only
    dow.seal("france", ["A PAR - BUR"])
    for power in POWERS:
        if power != "france":
            dow.seal(power)
    for power in POWERS:
        if power != "france":
            dow.reveal(power)
    assert dow.owing("secret") == ["france"]
    dow.ok("agree", "nmr", "--player", "france", who="austria")
    nmr = max(p.stem for p in (dow.repo_dir / "agreements").iterdir() if p.stem.startswith("austria-"))
    for power in POWERS:
        if power not in ("france", "austria"):
            dow.ok("sign", nmr, who=power)
    sealed = next(p for p in (dow.repo_dir / "secrets").iterdir() if p.stem.startswith("france-"))
    assert dow.data(f"secrets/{sealed.name}")["withheld"] == nmr
    assert dow.status()["firm"] != "S1901M"
    assert "A PAR" in json.dumps(dow.status()["position"]) and "BUR" not in json.dumps(dow.status()["position"])
    assert dow.verify() == []
    files = dow.files()
    raw = dict(dow.data(f"secrets/{sealed.name}"))
    from pbem.crypto import seal as seal_crypto

    key = seal_crypto.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(dow.key("france")))
    files[f"secrets/{sealed.name}"] = dump_mapping({**raw, "key": key.hex()}).encode()
    dow.sneak("france", files, "france: my orders after all")
    assert "secret.withheld" in {rule for rule, _ in dow.verify()}


def test_nmr_reveal__a_secret_speed_withheld_after_seeing_the_other_s(tmp_path: Path) -> None:
    """Threat: with secret speeds, kli opens his speeds (speed 4); fed, who sealed speed 8, sees them and
    withholds his own, stalling the turn. Defence: kli's nmr marks fed's allocation withheld: it counts as none
    (the CA moves at the speed of no allocation, 0), the turn goes on, and fed's late reveal is refused
    (secret.withheld)."""
    from conftest import GAME_ID, _build
    from test_tactical_cli_bad_input import pending as tactical_pending, seal
    from test_tactical_secret_speeds import SECRET_SPEEDS, speeds

    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "game.yaml").write_text(SECRET_SPEEDS)
    table = _build(tmp_path / "t", str(tmp_path / "template"), GAME_ID)
    table.turn("fed", through="1.32.final")
    table.turn("kli", through="1.32.final", breaks=[{"at": "1.2.move"}])
    seal(table, "kli", {"turn": 1, "units": {"D7": {"speed": 4}}})
    seal(table, "fed", {"turn": 1, "units": {"CA": {"speed": 8, "reserve": 2}}})
    cli(table, "yield", who="kli")
    assert tactical_pending(table) == [("fed", "secret")]
    cli(table, "agree", "nmr", "--player", "fed", who="kli")
    sealed = next(p.name for p in (table.repo_dir / "secrets").iterdir() if p.name.startswith("fed-"))
    assert table.data(f"secrets/{sealed}")["withheld"] == "kli-0001"
    assert table.data("status.yaml")["firm"] != "1.0.alloc"
    assert speeds(table) == {"CA": 0, "D7": 4}
    assert_clean(table)
    raw = dict(table.data(f"secrets/{sealed}"))
    from pbem.crypto import seal as seal_crypto

    key = seal_crypto.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(table.key("fed")))
    table.write(f"secrets/{sealed}", dump_mapping({**raw, "key": key.hex()}))
    bad = sneak_as(table, "fed", "fed: my speed after all")
    assert "secret.withheld" in rejected(table, bad, "secret.withheld", f"secrets/{sealed}")

# === table order by dice (seed 000 §2.A: the order around the table, "determine by die rolls") ==================
# What would a player who wants to sit elsewhere around the table do? Roll the order with dice of the wrong size,
# write another order than the dice gave into the start, change it once the game runs, or roll it again until he
# likes it. The melee of tests/test_table_order.py: fed starts by consent, the dice decide the order.


@pytest.fixture(scope="module")
def base_order_signed(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Every seat signed `start --first fed --order-by-dice` except rom, whose run would announce the dice."""
    from test_table_order import joined_melee

    table = joined_melee(tmp_path_factory.mktemp("attacks") / "order-signed")
    for seat in ("fed", "kli"):
        cli(table, "start", "--first", "fed", "--order-by-dice", who=seat)
    return table


@pytest.fixture(scope="module")
def base_order_rolled(base_order_signed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """rom signed (his run announced the order dice, rom-0001: a d3 and a d2) and the dice are rolled; the game
    has not started."""
    from test_table_order import roll_start_dice

    table = copy_table(base_order_signed, tmp_path_factory.mktemp("attacks") / "order-rolled")
    cli(table, "start", "--first", "fed", "--order-by-dice", who="rom")
    roll_start_dice(table)
    return table


def _hand_batch(table: Table, who: str, batch_id: str, rolls: list[dict[str, Any]], sides: int) -> None:
    """A batch announced by hand (plain git): the roller's commitment and his secret sealed to his own key."""
    from pbem.crypto.keys import load_private_key

    secret = dice_crypto.fresh_secret()
    public = load_private_key(table.key(who)).public
    write_batch(table, {"id": batch_id, "roller": who, "mode": "commit-reveal", "sides": sides, "rolls": rolls,
                        "commit": dice_crypto.commitment(secret).hex(),
                        "owner_box": base64.b64encode(seal.seal_to(secret, public)).decode()})


ORDER_ROLLS = [{"for": "seat 1 of 3", "ref": "start/order/1"}, {"for": "seat 2 of 3", "ref": "start/order/2"}]


def test_table_order__rolled_with_dice_of_the_wrong_size(base_order_signed: Table, tmp_path: Path) -> None:
    """Threat: rom rolls the order with two d3 (the second die must be a d2: with a d3 some orders come up more
    often than others, or a 3 names nobody). Defence: the start dice are bound to their refs with the die the
    rules name (n, n-1, …, 2): dice.bad-sides, by pbem roll at once and by the verifier for plain git."""
    table = copy_table(base_order_signed, tmp_path / "table")
    error = refused(table, "roll", "--for", "seat 1", "--for", "seat 2", "--ref", "start/order/1", "--ref",
                    "start/order/2", "--sides", "3", who="rom", rule="dice.bad-sides")
    assert "the rules roll it with a d2" in error, error
    _hand_batch(table, "rom", "rom-0001", ORDER_ROLLS, 3)
    bad = table.sneak("rom", "rom: the order with two d3", status="keep")
    rejected(table, bad, "dice.bad-sides", "dice/rom-0001.yaml")


def test_table_order__the_start_writes_another_order_than_the_dice_give(base_order_rolled: Table,
                                                                        tmp_path: Path) -> None:
    """Threat: fed makes the start commit by hand with the table order he likes (and the pending breaks served in
    it). Defence: status.yaml must be what the start computes, table order included: status.mismatch."""
    from pbem.services.workspace import Workspace
    from pbem.protocol.control import expected_start

    table = copy_table(base_order_rolled, tmp_path / "table")
    ws = Workspace.open(table.repo_dir)
    _stop, status = expected_start(ws.game_of(ws.head_files()), "fed")
    assert status.table is not None
    mine = (status.table[0], status.table[2], status.table[1])  # the other way round the table
    data = status.to_data()
    data["table"] = list(mine)
    data["pending"] = sorted(data["pending"], key=lambda b: mine.index(b["player"]))
    table.write("status.yaml", dump_mapping(data))
    bad = table.sneak("fed", "start: fed has control, around the table as fed likes it", status="keep")
    rejected(table, bad, "status.mismatch", "status.yaml")


def test_table_order__changed_after_the_start(base_order_rolled: Table, tmp_path: Path) -> None:
    """Threat: once the game runs, the player in control writes another table order into status.yaml (or
    reorders the seats of game.yaml) so that breaks are served to him sooner. Defence: every status shows the
    order the start fixed and must equal replay (status.mismatch); game.yaml is frozen (protected.changed)."""
    table = copy_table(base_order_rolled, tmp_path / "table")
    cli(table, "start", "--first", "fed", "--order-by-dice", who="fed")
    rolled = table.data("status.yaml")["table"]
    other = [rolled[0], rolled[2], rolled[1]]
    game = copy_table(table, tmp_path / "game-yaml")
    table.edit("fed", through="1.0.alloc")
    table.write_status("fed")
    data = table.data("status.yaml")
    data["table"] = other
    table.write("status.yaml", dump_mapping(data))
    bad = table.sneak("fed", "fed: my turn, and another order", status="keep")
    rejected(table, bad, "status.mismatch", "status.yaml")
    text = game.read("game.yaml")
    lines = text.splitlines(keepends=True)
    seats = [i for i, line in enumerate(lines) if line.lstrip().startswith("- {id: ") and "key:" in line]
    lines[seats[1]], lines[seats[2]] = lines[seats[2]], lines[seats[1]]
    game.write("game.yaml", "".join(lines))
    game.edit("fed", through="1.0.alloc")
    bad = game.sneak("fed", "fed: the seats reordered", status="keep")
    rejected(game, bad, "protected.changed", "game.yaml")


def test_table_order__a_player_rolls_the_order_again(base_order_rolled: Table, tmp_path: Path) -> None:
    """Threat: kli dislikes the order the dice gave and rolls it again: before the start with pbem roll or by
    hand, or after it; or rom, the roller, voids his rolled batch to roll anew. Defence: one batch per ref
    (dice.rebound-ref), the order dice are owed only before the start (dice.unbound-ref), and a batch whose
    results are knowable is voided only with every other player's co-signature (dice.bad-void)."""
    table = copy_table(base_order_rolled, tmp_path / "table")
    refused(table, "roll", "--for", "seat 1", "--for", "seat 2", "--ref", "start/order/1", "--ref",
            "start/order/2", "--sides", "3", who="kli", rule="dice.rebound-ref")
    before = copy_table(table, tmp_path / "before")
    _hand_batch(before, "kli", "kli-0001", [ORDER_ROLLS[0], {**ORDER_ROLLS[1], "sides": 2}], 3)
    bad = before.sneak("kli", "kli: the order again", status="keep")
    rejected(before, bad, "dice.rebound-ref", "dice/kli-0001.yaml")
    voided = copy_table(table, tmp_path / "voided")
    raw = dict(voided.data("dice/rom-0001.yaml"))
    raw["void"] = {"reason": "I did not like it"}
    write_batch(voided, raw)
    bad = voided.sneak("rom", "rom: void the order", status="keep")
    rejected(voided, bad, "dice.bad-void", "dice/rom-0001.yaml")
    cli(table, "start", "--first", "fed", "--order-by-dice", who="fed")
    table.edit("fed", through="1.0.alloc")
    _hand_batch(table, "fed", "fed-0001", [ORDER_ROLLS[0], {**ORDER_ROLLS[1], "sides": 2}], 3)
    table.write_status("fed")
    bad = table.sneak("fed", "fed: my turn, and the order again", status="keep")
    rejected(table, bad, "dice.unbound-ref", "dice/fed-0001.yaml")


def test_table_order__the_start_skips_the_agreed_dice(base_order_signed: Table, tmp_path: Path) -> None:
    """Threat: every seat agreed that dice decide the order; fed, who likes game.yaml's, signs last and starts
    at once by hand, before any order die is rolled. Defence: the start must be the one agreed, its table order
    included: setup.no-consent."""
    from pbem.services import agreements as agreeing
    from pbem.services.workspace import Workspace, load_identity
    from pbem.protocol.control import expected_start

    table = copy_table(base_order_signed, tmp_path / "table")
    ws = Workspace.open(table.repo_dir)
    agreeing.sign(ws, load_identity(str(table.key("rom")), table.repo_dir), "fed-0001")
    _stop, status = expected_start(ws.game_of(ws.head_files()), "fed")
    assert status.table is None  # no order dice: game.yaml's order
    table.write("status.yaml", dump_mapping(status.to_data()))
    bad = table.sneak("fed", "start: fed has control", status="keep")
    rejected(table, bad, "setup.no-consent", "status.yaml")


# === The gate's clock: waits run from when the gate first accepted a commit, never from its date (DESIGN §4.8) ===
# The duel of `started` on a server with pbem's hooks (pre-receive judges, post-receive keeps SERVER/pbem/accepted).
# A cheater backdates (or future-dates) his own commits with plain tools: the commit re-signed with his key and
# other dates. The record's lines are aged by hand where a test needs days to pass at the gate: that stands for
# the gate's own clock moving on, never for anything a pusher can do.

import time as _time  # noqa: E402
from datetime import datetime as _datetime, timezone as _timezone  # noqa: E402

from gitutil import resign as _resign  # noqa: E402
from test_hook import age_record as _age_record  # noqa: E402
from pbem.services import gateclock as _gateclock  # noqa: E402

_DAY = 86400


def _redate(table: Table, who: str, days: float) -> str:
    """Re-sign HEAD by `who` with author and committer dates moved by `days` (negative: backdated); main and
    HEAD follow, the working tree is the same tree."""
    stamp = str(int(_time.time() + days * _DAY)).encode()

    def change(payload: bytes) -> bytes:
        for name in (b"author", b"committer"):
            head = payload.split(b"\n\n", 1)[0]
            value = next(line for line in head.split(b"\n") if line.startswith(name + b" "))[len(name) + 1:]
            ident, _old, zone = value.rsplit(b" ", 2)
            payload = replace_header(payload, name, b" ".join([ident, stamp, zone]))
        return payload

    return land(table, _resign(raw_commit(table), key(who), change))


def _record(server: Path) -> dict[str, _datetime]:
    return _gateclock.read_record(server)


def _fed_turn_backdated(started: Table, days: float = -8) -> Path:
    """fed (in control) takes his first turn, giving kli control, dated `days` off; nothing pushed yet."""
    from conftest import FED_TURN_1

    server = serve(started)
    started.turn("fed", **FED_TURN_1)
    _redate(started, "fed", days)
    assert started.data("status.yaml")["control"] == "kli"
    return server


def test_clock__a_forfeit_behind_a_turn_backdated_eight_days_is_refused(started: Table) -> None:
    """Threat: fed backdates his turn by eight days, so kli seems to have owed his turn for eight days the moment
    he gets it, and in the same push signs kli's forfeit (in a duel fed alone signs it). Defence: kli's wait runs
    from when the gate first accepted fed's turn (now, it arrives in this push): agreement.not-overdue; main stays.
    The record knows no backdating: after an honest push its time for fed's turn is the push's."""
    server = _fed_turn_backdated(started)
    tip = server_ref(server)
    cli(started, "agree", "end", "--result", "forfeit", "--player", "kli", who="fed")
    _redate(started, "fed", -8)
    assert verdict(started)[0] == 0  # the verifier cannot judge time: the gate must
    done = push(started)
    push_refused(done, "agreement.not-overdue")
    assert "Traceback" not in done.stderr and server_ref(server) == tip
    started.git("reset", "-q", "--hard", "HEAD~1")
    before = _datetime.now(_timezone.utc).replace(microsecond=0)
    assert push(started).returncode == 0
    assert _record(server)[started.head()] >= before


def test_clock__a_seat_taken_by_a_second_key_behind_a_backdated_turn_is_refused(started: Table) -> None:
    """Threat: fed backdates his turn by eight days and gives kli's seat to a second key of his own (carol's),
    "kli lost his key". Defence: as for a forfeit, kli's wait starts at the gate's acceptance of fed's turn:
    agreement.not-overdue, and the seat stays kli's."""
    server = _fed_turn_backdated(started)
    tip = server_ref(server)
    cli(started, "agree", "seat", "--seat", "kli", "--new-key", _carol_key(started), "--why", "lost-key",
        who="fed")
    _redate(started, "fed", -8)
    push_refused(push(started), "agreement.not-overdue")
    assert server_ref(server) == tip


def test_clock__a_contribution_marked_withheld_behind_a_backdated_announcement_is_refused(fire_owed: Table) -> None:
    """Threat: fed announces his dice batch (kli now owes a contribution) dated eight days back, and at once signs
    an nmr against kli, which marks kli's contribution withheld: fed's die would be his own secret alone, pre-
    ground. Defence: kli's contribution is owed from when the gate accepted the announcement: agreement.nmr-early;
    main stays. Every commit of the attack is backdated, so no date in it tells the truth."""
    server = serve(fire_owed)
    tip = server_ref(server)
    for _ in range(12):
        (who, kind, why), *_ = dice_pending(fire_owed)
        if who == "kli" and kind == "dice" and why.startswith("contribution"):
            break
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(fire_owed, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(fire_owed, "yield", who=who)
        _redate(fire_owed, who, -8)
    else:
        raise AssertionError(dice_pending(fire_owed))
    cli(fire_owed, "agree", "nmr", "--player", "kli", who="fed")
    _redate(fire_owed, "fed", -8)
    assert verdict(fire_owed)[0] == 0
    push_refused(push(fire_owed), "agreement.nmr-early")
    assert server_ref(server) == tip


def test_clock__a_future_dated_turn_neither_delays_nor_hastens_the_deadline(opened: Table) -> None:
    """Threat: a commit dated a month ahead, so that the wait it starts (by its date) never runs out. Defence:
    the wait starts when the gate accepted it: right after, kli's nmr against fed is early; once the gate's
    record shows eight days passed, the same nmr lands."""
    from conftest import KLI_TURN_1

    server = serve(opened)
    opened.turn("kli", **KLI_TURN_1)
    _redate(opened, "kli", 30)
    assert push(opened).returncode == 0
    cli(opened, "agree", "nmr", "--player", "fed", who="kli")
    push_refused(push(opened), "agreement.nmr-early")
    _age_record(server, 8)
    done = push(opened)
    assert done.returncode == 0, done.stderr
    assert server_ref(server) == opened.head()


def test_clock__a_turn_parked_on_another_branch_counts_from_its_arrival_on_main(started: Table) -> None:
    """Threat: fed pushes his turn to a branch of his own, lets eight days pass with kli unaware (main does not
    show it), then pushes it to main with kli's forfeit. Defence: the record holds what landed on the game branch,
    timed when it landed there: the turn arrives on main in this push, so kli's wait has just begun
    (agreement.not-overdue). Pushed to main alone, it is recorded at that push, not at the branch's."""
    from conftest import FED_TURN_1

    server = serve(started)
    tip = server_ref(server)
    started.turn("fed", **FED_TURN_1)
    turn = started.head()
    assert push(started, "HEAD:refs/heads/side").returncode == 0
    assert turn not in _record(server)
    _age_record(server, 8)
    cli(started, "agree", "end", "--result", "forfeit", "--player", "kli", who="fed")
    push_refused(push(started), "agreement.not-overdue")
    assert server_ref(server) == tip
    started.git("reset", "-q", "--hard", turn)
    before = _datetime.now(_timezone.utc).replace(microsecond=0)
    assert push(started).returncode == 0
    assert _record(server)[turn] >= before


def _overdue_kli(started: Table) -> Path:
    """fed's honest turn landed and the gate's record shows eight days since: kli is really overdue."""
    from conftest import FED_TURN_1

    server = serve(started)
    started.turn("fed", **FED_TURN_1)
    assert push(started).returncode == 0
    _age_record(server, 8)
    return server


def test_clock__an_honest_nmr_lands_once_the_gate_s_record_shows_the_deadline_passed(started: Table) -> None:
    """The control of the attacks above: the same nmr, with kli truly absent for eight days by the gate's record,
    lands."""
    server = _overdue_kli(started)
    cli(started, "agree", "nmr", "--player", "kli", who="fed")
    done = push(started)
    assert done.returncode == 0, done.stderr
    assert server_ref(server) == started.head()


@pytest.mark.parametrize("damage", ["deleted", "corrupt", "cut-short", "forgotten"])
def test_clock__a_missing_or_corrupt_record_finds_nobody_absent(started: Table, damage: str) -> None:
    """Threat: the record is lost or damaged (a disk, a careless host, a restore without pbem/), and a gate that
    guessed (a commit date, "long ago") would let anything through. Defence: without a trustworthy time for the
    commit that made kli owe, the gate finds nobody absent: clock.missing, clock.corrupt, clock.unknown, one
    line each; main stays. A deleted record stays missing (post-receive does not restart it) until the host runs
    `pbem hook install` again, after which every wait restarts from then."""
    server = _overdue_kli(started)
    record = _gateclock.record_path(server)
    rule = {"deleted": "clock.missing", "corrupt": "clock.corrupt", "cut-short": "clock.corrupt",
            "forgotten": "clock.unknown"}[damage]
    if damage == "deleted":
        record.unlink()
    elif damage == "corrupt":
        record.write_text(record.read_text() + f"{'a' * 40} 2026-02-30T00:00:00Z\n")
    elif damage == "cut-short":
        record.write_text(record.read_text()[:-1])
    else:
        record.write_text("".join(line + "\n" for line in record.read_text().splitlines()
                                  if not line.startswith(started.head())))
    tip = server_ref(server)
    cli(started, "agree", "nmr", "--player", "kli", who="fed")
    done = push(started)
    push_refused(done, rule)
    assert "Traceback" not in done.stderr and server_ref(server) == tip
    if damage == "deleted":
        started.git("reset", "-q", "--hard", "HEAD~1")
        assert not record.exists()
        assert started.cli("hook", "install", str(server)).exit_code == 0
        assert set(_record(server)) >= {tip}  # restored, every commit on main accepted as of now
        cli(started, "agree", "nmr", "--player", "kli", who="fed")
        push_refused(push(started), "agreement.nmr-early")


def test_clock__a_prompt_player_answering_break_after_break_is_never_found_absent(opened: Table) -> None:
    """Threat: kli orders far ahead, so fed answers break after break alone, each within three days; counted
    from the first break of the run, he would be "absent" after a week of prompt play. Defence: each owed item
    has its own clock, and fed's own commit answering one starts the next: kli's nmr is early three days after
    fed's last answer, and lands only once fed really let eight days pass."""
    server = serve(opened)
    opened.turn("kli", through="2.32.final", breaks=[],
                entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 12}}])
    assert push(opened).returncode == 0
    for through in ("1.12.damage", "1.16.damage", "1.20.damage", "1.24.damage"):
        _age_record(server, 3)
        assert opened.data("status.yaml")["control"] == "fed"
        opened.turn("fed", through=through)
        assert push(opened).returncode == 0
    _age_record(server, 3)  # twelve days since the run began, three since fed's last answer
    assert opened.data("status.yaml")["control"] == "fed"
    cli(opened, "agree", "nmr", "--player", "fed", who="kli")
    push_refused(push(opened), "agreement.nmr-early")
    _age_record(server, 5)
    assert push(opened).returncode == 0
# === Diplomacy: the invite code checked by every verifier (dow-engine; docs/dow.md "Joining", docs/threats.md) ====

def _plain_git_join(tmp_path: Path, power: str, invite: str | None) -> tuple[Any, str]:
    """A dow game nobody joined yet; `power` claims his seat by plain git: his key, and `invite` (or none)."""
    import re as _re

    from test_dow_flow import new_dow

    dow = new_dow(tmp_path / "dow", join=False, start=False)
    text = dow.files()["game.yaml"].decode()
    key = dow.me(power).public.to_line()
    extra = f", invite: {invite}" if invite is not None else ""
    text, n = _re.subn(rf"(?m)^(\s*- \{{id: {power})(.*)\}}$", rf"\g<1>\g<2>, key: {key}{extra}}}", text, count=1)
    assert n == 1, text
    return dow, dow.sneak(power, {**dow.files(), "game.yaml": text.encode()}, f"join: {power} takes a seat",
                          status="keep")


def _join_findings(dow: Any) -> list[dict[str, Any]]:
    done = dow.pbem("verify", "--format", "json")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    return [f for f in json.loads(done.stdout)["findings"]]


@pytest.mark.parametrize("invite", [None, "0" * 128, "a" * 64 + "b" * 64], ids=["none", "zeros", "made-up"])
def test_invite__a_join_by_plain_git_without_the_code_is_refused(tmp_path: Path, invite: str | None) -> None:
    """Threat: the code is in the game description only; a stranger reads the public repository, writes his key
    into a seat by plain git (no invite, or a made-up one) and signs. Defence: every verifier checks the code's
    signature over (game id, seat, key): setup.bad-invite-code, naming game.yaml and the seat's line."""
    dow, bad = _plain_git_join(tmp_path, "france", invite)
    [finding] = _join_findings(dow)
    assert finding["rule"] == "setup.bad-invite-code" and finding["commit"] == bad, finding
    line = dow.files()["game.yaml"].decode().splitlines()[finding["line"] - 1]
    assert finding["file"] == "game.yaml" and "id: france" in line, finding


def test_invite__a_seat_s_invite_copied_to_another_seat_is_refused(tmp_path: Path) -> None:
    """Threat: England joined with the code; a stranger copies England's `invite:` into the seat he claims.
    Defence: the signature covers the seat and the key claiming it: setup.bad-invite-code."""
    from pbem.rulesets.dow import invite
    from test_dow_flow import CODE

    dow, _ = _plain_git_join(tmp_path, "england", None)
    data = dow.data("game.yaml")
    copied = invite.proof(data["setup"]["invite_hash"], CODE, data["id"], "england",
                          dow.me("england").public.to_line())
    assert copied is not None
    dow, bad = _plain_git_join(tmp_path / "again", "france", copied)
    [finding] = _join_findings(dow)
    assert (finding["rule"], finding["commit"]) == ("setup.bad-invite-code", bad), finding


def test_invite__pbem_join_with_the_code_passes_every_verifier(tmp_path: Path) -> None:
    from test_dow_flow import CODE, new_dow

    dow = new_dow(tmp_path / "dow", join=False, start=False)
    assert dow.pbem("join", "--as", "france", "--code", CODE, who="france").returncode == 0
    assert "invite" in next(s for s in dow.data("game.yaml")["players"] if s["id"] == "france")
    assert dow.pbem("verify").returncode == 0
# === The GitHub flow: pull requests opened and merged by pbem, and refusals (docs/github.md, The one flow) =========
# A game on GitHub as docs/github.md sets it up (tests/fakegithub.py stands for GitHub: main protected, the gate's
# `pbem/verify` posted by the app github-actions, auto-merge only with the branch up to date), over the race of
# tests/test_push.py (kli owes a contribution, the escrow a signature). What would a player do with the flow?
# Push to another player's branch, send a pull request that edits the workflow, have a stale branch merged with
# content nobody signed, post the check's status himself; and a refused push must not leave a clone claiming a
# state the shared game does not have.

from fakegithub import ACTIONS, FakeGitHub  # noqa: E402
from pbem.services import github as github_api  # noqa: E402
from test_github_flow import hub  # noqa: E402,F401 (fixture: the race's server as GitHub's copy)
from test_push import base_race, race  # noqa: E402,F401 (fixtures)


@pytest.fixture
def on_github(race: Any, hub: FakeGitHub) -> Any:
    fed, kli, escrow, server = race
    return fed, kli, escrow, server, hub


def _gh_env(table: Table, who: str, fake: FakeGitHub) -> dict[str, str]:
    return table.env(who, fake.env(f"t-{who}"))


def _main(server: Path) -> str:
    return subprocess.run(["git", "rev-parse", "main"], cwd=server, capture_output=True, text=True).stdout.strip()


def _reachable(server: Path, oid: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", oid, "main"], cwd=server).returncode == 0


def _contribute(table: Table, who: str) -> str:
    from pbem.services import turn
    from pbem.services.workspace import Workspace
    from test_push import identity

    turn.yield_turn(Workspace.open(table.repo_dir), identity(table, who))
    return table.head()


def _open_by_hand(fake: FakeGitHub, token: str, branch: str) -> dict[str, Any]:
    """A pull request opened with the API directly (not by pbem), auto-merge asked for."""
    client = github_api.Client(github_api.Repository("alice", "race-1", fake.url), token)
    pull = client.open_pull(branch, "main") or client.create_pull(branch, "main", "by hand", "")
    client.auto_merge(pull)
    return pull


def test_github_flow__a_player_pushes_to_another_players_branch(on_github: Any) -> None:
    """Threat: fed force-pushes a commit of his own onto kli's branch `pbem/kli` while kli's pull request waits
    for its check, hoping it lands under kli's pull request. Defence: the gate judges the head whoever pushed it
    (the commit is fed's, signed by fed, and not his to make: the check fails and nothing merges), and kli's next
    `pbem push` puts his own commits back on his branch; fed's commit never reaches main."""
    fed, kli, _escrow, server, fake = on_github
    landed = _main(server)
    fake.paused = True
    mine = _contribute(kli, "kli")
    done = kli.pbem("push", "--no-wait", env=_gh_env(kli, "kli", fake))
    assert done.returncode == 0, done.stdout + done.stderr
    fed.write("players/kli.yaml", "through: 1.12.damage\n")
    bad = fed.sneak("fed", "fed: kli's horizon, by fed")
    fed.git("push", "-q", "--force", "origin", f"{bad}:refs/heads/pbem/kli", env=fake.env("t-fed"))
    fake.paused = False
    fake.settled()
    assert _main(server) == landed and fake.pulls[1].state == "open"
    assert not fake.passed(bad)
    again = kli.pbem("push", env=_gh_env(kli, "kli", fake))
    assert again.returncode == 0, again.stdout + again.stderr
    assert _reachable(server, mine) and not _reachable(server, bad)
    assert kli.head() == _main(server)


def test_github_flow__a_pull_request_edits_the_workflow(on_github: Any) -> None:
    """Threat: kli sends, by hand, a pull request whose commit also turns the workflow's check into
    `pbem verify || true`, asking auto-merge. Defence: the gate runs from the default branch and reads the branch
    as data: the edit itself is a finding (protected.changed), the check fails, GitHub merges nothing."""
    _fed, kli, _escrow, server, fake = on_github
    landed = _main(server)
    workflow = ".github/workflows/pbem.yml"
    kli.write(workflow, kli.read(workflow).replace("pbem verify", "pbem verify || true"))
    bad = kli.sneak("kli", "kli: a friendlier check")
    kli.git("push", "-q", "origin", f"{bad}:refs/heads/pbem/kli", env=fake.env("t-kli"))
    _open_by_hand(fake, "t-kli", "pbem/kli")
    fake.settled()
    assert _main(server) == landed and not fake.passed(bad)
    assert any("protected.changed" in s["description"] or s["state"] == "failure" for s in fake.statuses[bad])
    done = kli.pbem("push", env=_gh_env(kli, "kli", fake))
    assert done.returncode == 1 and "[protected.changed]" in done.stderr  # pbem itself never publishes it


def test_github_flow__a_branch_not_up_to_date_merged_with_content_nobody_signed(on_github: Any) -> None:
    """Threat: a pull request behind main is merged anyway (a host left "Require branches to be up to date"
    off), so the merge commit holds content that no player's signed commit has. Defence: with the documented
    setting GitHub waits and pbem replays the branch onto main (tests/test_github_flow.py, two players at once);
    a content-changing merge that landed nonetheless is refused by every clone (history.bad-merge): `pbem pull`
    builds nothing on it, for the other players and for the branch's own author alike."""
    fed, kli, _escrow, server, fake = on_github
    fake.paused = True
    landed = _main(server)
    mine = _contribute(kli, "kli")
    kli.git("push", "-q", "origin", f"{mine}:refs/heads/pbem/kli", env=fake.env("t-kli"))
    tree = fake.git("rev-parse", f"{landed}^{{tree}}")  # a merge that keeps main's tree: kli's change is lost
    merge = fake.git("commit-tree", tree, "-p", landed, "-p", mine, "-m", "Merge pull request #9 from alice/pbem/kli")
    fake.git("update-ref", "refs/heads/main", merge, landed)
    before = fed.snapshot()
    pulled = fed.pbem("pull", env=_gh_env(fed, "fed", fake))
    assert pulled.returncode == 1 and "[pull.remote-invalid]" in pulled.stderr and "history.bad-merge" in pulled.stderr
    assert fed.snapshot().head == before.head and fed.head() == landed
    pulled = kli.pbem("pull", env=_gh_env(kli, "kli", fake))  # kli too: his commit is in it, his move is not
    assert pulled.returncode == 1 and "history.bad-merge" in pulled.stderr and kli.head() == mine


@pytest.mark.parametrize("required_source", [ACTIONS, None], ids=["source-required", "any-source"])
def test_github_flow__a_forged_status_context(on_github: Any, required_source: str | None) -> None:
    """Threat: kli posts the status `pbem/verify: success` on his own illegal pull request with his own token
    (any collaborator may post statuses). Defence: branch protection requires the check from the app
    github-actions (docs/github.md), so GitHub ignores his; and where a host allowed any source and the commit
    landed, every clone refuses to build on the invalid main (pull.remote-invalid)."""
    fed, kli, _escrow, server, fake = on_github
    fake.required_source = required_source
    landed = _main(server)
    kli.edit("kli", through="1.12.damage")  # kli's turn waits: he only owes a contribution now
    bad = kli.sneak("kli", "kli: too early")
    kli.git("push", "-q", "origin", f"{bad}:refs/heads/pbem/kli", env=fake.env("t-kli"))
    _open_by_hand(fake, "t-kli", "pbem/kli")
    fake.settled()
    import json as json_
    import urllib.request

    request = urllib.request.Request(f"{fake.url}/repos/alice/race-1/statuses/{bad}", method="POST",
                                     data=json_.dumps({"state": "success", "context": "pbem/verify"}).encode(),
                                     headers={"Authorization": "Bearer t-kli", "Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).close()
    fake.settled()
    if required_source is not None:
        assert _main(server) == landed and fake.pulls[1].state == "open"
        return
    assert _reachable(server, bad)  # the misconfigured host merged it ...
    pulled = fed.pbem("pull", env=_gh_env(fed, "fed", fake))
    assert pulled.returncode == 1 and "[pull.remote-invalid]" in pulled.stderr  # ... and nobody builds on it
    assert fed.head() == landed


def test_github_flow__a_refused_push_leaves_no_false_local_state(race: Any) -> None:
    """Threat (to the player himself): the host's hook refuses a commit his own clone accepted (the gate judges
    what the clone cannot, e.g. by its own clock: a forfeit asked too early), and the clone keeps saying the game is
    in the refused state (`pbem status`: "the game is over"), while `pbem pull` answers `pbem push`, refused again.
    Defence: a verdict of the gate puts the game branch back at the remote's tip and keeps the refused commit on
    `pbem-saved-<id>`; `pbem pull` is then up to date. A refusal that says nothing about the commits (no write
    access, another hook) keeps them, unpublished. The hook here prints the pbem hook's verdict line."""
    _fed, kli, _escrow, server = race
    hook = server / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho 'clock.not-overdue: kli owes since 2 days, 7 are needed' >&2\n"
                    "echo 'pbem: refs/heads/main: REFUSED, 1 finding(s) in 1 new commit(s); nothing was changed' >&2\n"
                    "exit 1\n")
    landed = _main(server)
    mine = _contribute(kli, "kli")
    done = kli.pbem("push", who="kli")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pbem hook refused your commits" in done.stderr and "clock.not-overdue" in done.stderr
    assert "run `pbem push` again" not in done.stderr
    assert kli.head() == landed and kli.git("status", "--porcelain").stdout == b""
    assert kli.git("rev-parse", f"pbem-saved-{mine[:10]}").stdout.decode().strip() == mine
    pulled = kli.pbem("pull", who="kli")
    assert pulled.returncode == 0 and "up to date" in pulled.stdout
    # another hook's refusal (maintenance) says nothing about the commit: it stays, unpublished
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho 'closed for maintenance' >&2\nexit 1\n")
    again = _contribute(kli, "kli")
    done = kli.pbem("push", who="kli")
    assert done.returncode == 1 and "closed for maintenance" in done.stderr and "tell the host" in done.stderr
    assert kli.head() == again
# === fair-tactical: who rolls, secret allocations, sealed pursuit, advice (DESIGN §5 "Who rolls", §4.7, §7.1) =====
# The tactical duel of tests/test_tactical_cli_bad_input.py at `both_owed`: fed's CA and kli's D7 both declared ph1
# at 1.4.fire, the auction is over, and each firer owes the die for his own shot (kli, served first after fed's
# closing pass, holds control); at `fire_owed` kli's die is in and fed holds control for his.

KLI_REF = "1.4.fire/D7/ph1"  # the ref of kli's shot


def test_who_rolls__the_target_announces_the_firer_s_die_through_pbem(both_owed: Table) -> None:
    """Threat: kli, the target, announces the die of fed's shot: once fed contributes kli knows it, withholds
    the reveal, and under an nmr fed's shot misses. Defence: only the firer rolls for his shot
    (dice.wrong-roller): `pbem roll` refuses it for the player in control (kli, for fed's shot) and for the one
    out of control (fed, for kli's), and nothing is written."""
    fire_owed = both_owed
    assert fire_owed.data("status.yaml")["control"] == "kli"
    line = refused(fire_owed, "roll", "--for", "CA ph1", "--ref", SHOT, who="kli", rule="dice.wrong-roller")
    assert "fed" in line
    refused(fire_owed, "roll", "--for", "D7 ph1", "--ref", KLI_REF, who="fed", rule="dice.wrong-roller")
    cli(fire_owed, "roll", "--for", "D7 ph1", "--ref", KLI_REF, who="kli")  # his own: fine
    cli(fire_owed, "yield", who="kli")


@pytest.mark.parametrize("roller, ref, first", [("kli", SHOT, "dice.wrong-roller"),
                                                 ("fed", KLI_REF, "signature.not-in-control")])
def test_who_rolls__another_s_die_written_by_hand_is_refused_by_yield_verify_and_the_hook(
        both_owed: Table, roller: str, ref: str, first: str) -> None:
    """Threat: the same by plain git, by kli in control or by fed out of control: a batch in his own name for
    the other's shot. Defence: `pbem yield` refuses it (fed's first for acting out of turn), `pbem verify`
    finds dice.wrong-roller in the batch, the hook refuses the push, and the game goes on."""
    fire_owed = both_owed
    server = serve(fire_owed)
    before = server_ref(server)
    path = f"dice/{roller}-0001.yaml"
    write_batch(fire_owed, hand_batch(fire_owed, roller, f"{roller}-0001", [ref]))
    refused(fire_owed, "yield", who=roller, rule=first, where=ANY_LINE(path) if first.startswith("dice") else "status.yaml")
    bad = sneak_as(fire_owed, roller, f"{roller}: I roll the other's shot")
    # out of control the batch is a turn made out of turn: refused for that before anything else is judged
    rejected(fire_owed, bad, first, path if first.startswith("dice") else "status.yaml")
    push_refused(push(fire_owed), first)
    assert server_ref(server) == before


def test_advice__a_player_who_owes_a_contribution_and_must_roll_pastes_what_status_says(both_owed: Table) -> None:
    """Right advice: fed owes his contribution to kli's die (kli, served first, rolled) and must roll for his
    own shot; `pbem status` tells him to paste `pbem roll … && pbem yield`, and pasted it works: the yield
    commits his contribution and keeps his batch in the working tree until his turn (after kli's reveal), when
    his next `pbem yield` announces it."""
    import shlex

    fire_owed = both_owed
    cli(fire_owed, "roll", "--for", "D7 ph1", "--ref", KLI_REF, who="kli")
    cli(fire_owed, "yield", who="kli")
    said = cli(fire_owed, "status", who="fed")
    pasted = next(line.strip()[2:] for line in said.splitlines() if line.strip().startswith("$ pbem roll"))
    for command in pasted.split(" && "):
        out = cli(fire_owed, *shlex.split(command)[1:], who="fed")
    assert "kept in your working tree" in out, out
    kept = fire_owed.repo_dir / FED_DIE
    aside = fire_owed.root / "fed-0001.yaml"
    kept.rename(aside)  # one working tree for both seats here: kli's clone would not have fed's file
    cli(fire_owed, "yield", who="kli")  # kli reveals: his shot is rolled
    aside.rename(kept)
    cli(fire_owed, "yield", who="fed")  # fed's turn: his batch is announced now
    assert FED_DIE in fire_owed.git("ls-files", "dice/").stdout.decode()
    assert_clean(fire_owed)


def test_advice__a_wrong_batch_not_yet_committed_is_withdrawn_with_one_command(fire_owed: Table) -> None:
    """Right advice: fed announced a batch with the wrong purpose; `pbem dice withdraw ID` takes it out of his
    working tree (nothing committed), and he rolls again. kli cannot withdraw fed's; nobody withdraws a committed
    batch (dice.changed: it is voided whole instead, seed §2.D)."""
    cli(fire_owed, "roll", "--for", "CA ph2 (wrong weapon)", "--ref", SHOT, who="fed")
    assert (fire_owed.repo_dir / FED_DIE).exists()
    refused(fire_owed, "dice", "withdraw", "fed-0001", who="kli", rule="dice.wrong-roller", where=FED_DIE)
    said = cli(fire_owed, "dice", "withdraw", "fed-0001", who="fed")
    assert "withdrew fed-0001" in said and not (fire_owed.repo_dir / FED_DIE).exists()
    cli(fire_owed, "roll", "--for", "CA ph1", "--ref", SHOT, who="fed")
    cli(fire_owed, "yield", who="fed")
    refused(fire_owed, "dice", "withdraw", "fed-0001", who="fed", rule="dice.changed", where=FED_DIE)
    assert_clean(fire_owed)
# === fair-protocol: only turns move control, no honest deadlock, errata never re-open, agreed changes kept ========
# (docs/protocol.md "No honest deadlock, only turns move control"; docs/threats.md, the section of the same name).
# From `armed` (tests/test_tactical_cli_bad_input.py): fed holds control at 1.4.move; kli breaks on any fire.

from test_no_deadlock import SHOT_1 as FP_SHOT_1, SHOT_2 as FP_SHOT_2, roll_through as fp_roll_through  # noqa: E402


def _fp_hand_on(table: Table, who: str, to: str, message: str) -> str:
    """Commit the working tree as `who` by plain git with a status.yaml that hands control to `to` (what a
    signature, proposal or press counted as his turn would write)."""
    table.write_status(who, message)
    table.write("status.yaml", table.read("status.yaml").replace(f"control: {who}", f"control: {to}"))
    return table.sneak(who, message, status="keep")


def test_fp_a_signature_counted_as_the_pass_in_an_auction(armed: Table) -> None:
    """Threat: kli, asked in fed's auction at 1.4.fire, signs an agreement by plain git and writes a status in
    which his signature was his pass (the auction goes on without his answer). Defence: a signature is no turn
    (DESIGN §4.8): replay leaves him asked; the status that says otherwise is found (status.mismatch)."""
    armed.turn("fed", through="1.8.damage", entries=[FP_SHOT_1])
    cli(armed, "agree", "amend", "--deadline", "96h", who="fed")
    newest = max(p.stem for p in (armed.repo_dir / "agreements").glob("fed-*.yaml"))
    cli(armed, "sign", newest, who="kli")
    assert asked(armed)[0] == ("kli", "auction")  # through pbem: still his answer to give
    armed.git("reset", "-q", "--hard", "HEAD~1")
    cli(armed, "sign", newest, who="kli")
    armed.git("reset", "-q", "--soft", "HEAD~1")
    bad = _fp_hand_on(armed, "kli", "fed", "kli: signs, and that was my pass")
    assert "status.mismatch" in rejected(armed, bad, "status.mismatch", "status.yaml")


def test_fp_press_by_a_player_not_in_control_that_takes_control(armed: Table) -> None:
    """Threat: kli (not in control) posts press by plain git with a status that hands control to himself.
    Defence: press is no turn, whoever posts it: status.mismatch."""
    post_in(armed, "press/kli.yaml", {"by": "kli", "at": "1.4.move", "say": "your move"})
    armed.write_status("kli", "press")
    armed.write("status.yaml", armed.read("status.yaml").replace("control: fed", "control: kli"))
    bad = armed.sneak("kli", "press, and control", status="keep")
    assert "status.mismatch" in rejected(armed, bad, "status.mismatch", "status.yaml")


def test_fp_a_roll_of_the_auction_step_smuggled_in_with_an_earlier_reveal(armed: Table) -> None:
    """Threat: fed owes the reveal of his 1.4.fire die, which opens the auction of his shot plotted at 1.5.fire;
    he reveals and rolls for the 1.5.fire shot in the same commit, so kli would decide knowing that die. Defence:
    only what resolves an earlier step lands while the auction is open: the new batch is refused."""
    armed.turn("fed", through="1.8.damage", entries=[FP_SHOT_1, FP_SHOT_2])
    armed.turn("kli")
    for _ in range(4):  # up to fed's reveal: the die announced, kli's contribution in
        who, kind = asked(armed)[0]
        if who == "fed" and kind == "dice":
            break
        if kind == "roll":
            cli(armed, "roll", "--for", "CA ph1", "--ref", "1.4.fire/CA/ph1", who=who)
        cli(armed, "yield", who=who)
    assert asked(armed)[0] == ("fed", "dice")
    # pbem roll itself refuses a die for a step not being resolved (dice.unbound-ref); the verifier's own refusal
    # of a batch written by hand for an open auction step (dice.auction-open) has tests of its own
    done = armed.cli("roll", "--for", "CA ph2", "--ref", "1.5.fire/CA/ph2", who="fed")
    assert done.exit_code == 1 and "dice.unbound-ref" in done.output, done.output
    armed.git("checkout", "-q", "--", ".")
    armed.git("clean", "-qfd")
    fp_roll_through(armed, "auction")  # the honest reveal alone lands
    assert asked(armed) == [("kli", "auction")]


def test_fp_the_last_signature_of_an_amend_without_its_change(armed: Table) -> None:
    """Threat: the last signer of an amend commits his signature by plain git without writing game.yaml as
    agreed, so the amend is listed "signed by all, in effect" and its change lost. Defence: the commit that
    completes an amend or a seat must carry its change (agreement.effect)."""
    cli(armed, "agree", "amend", "--deadline", "96h", who="fed")
    newest = max(p.stem for p in (armed.repo_dir / "agreements").glob("fed-*.yaml"))
    cli(armed, "sign", newest, who="kli")
    armed.git("reset", "-q", "--soft", "HEAD~1")
    armed.git("checkout", "-q", "HEAD", "--", "game.yaml")
    bad = armed.sneak("kli", "kli: signs (and keeps game.yaml)")
    assert "agreement.effect" in rejected(armed, bad, "agreement.effect", "game.yaml")
# === the hook: refs, tree modes (DESIGN §3 Trees, §9; docs/github.md "The hook's policy") ======================
# What would a player do to get a commit past a self-hosted server, or to take back what landed there? Push the
# same bad commit under many refs (one verdict for all, and it costs one verification), delete the game branch,
# force-push a history whose firm past he rewrote, park a bad commit under a tag, or write an entry in a mode git
# reads as a submodule and pbem's libgit2 as a file, so the players' clones lose a file pbem still reads.

def test_hook__200_refs_to_one_bad_commit_with_one_legal_ref_land_nothing(played: Table) -> None:
    """Threat: a push of the legal turn to main and of a bad commit to 200 other refs, hoping one slips through
    or the hook gives up. Defence: one verdict per new commit, shared by every ref; any refusal refuses the whole
    push (git's pre-receive), so nothing lands, the legal turn neither."""
    server = serve(played)
    before = server_ref(server)
    honest = legal_turn(played)
    played.edit("fed", through="1.20.damage")  # kli holds control after fed's turn
    bad = played.sneak("fed", "fed: out of turn")
    specs = [f"{honest}:refs/heads/main", *(f"{bad}:refs/heads/t{i:03d}" for i in range(200))]
    done = push(played, *specs)
    push_refused(done, "signature.not-in-control")
    assert done.stderr.count("[signature.not-in-control]") == 1
    assert server_ref(server) == before
    assert subprocess.run(["git", "for-each-ref", "refs/heads/t*"], cwd=server, capture_output=True,
                          text=True).stdout == ""


def test_hook__deleting_the_game_branch_alone_or_with_a_replacement(played: Table) -> None:
    """Threat: delete main (the record of play), alone, or in one push with a branch of the same content under
    another name, or delete it and push it again from an older commit in the next push. Defence: the game branch
    is never deleted (history.rewritten), whatever else the push carries."""
    server = serve(played)
    landed = server_ref(server)
    push_refused(push(played, ":main"), "history.rewritten")
    push_refused(push(played, ":main", "HEAD:refs/heads/main-too"), "history.rewritten")
    assert server_ref(server) == landed and server_ref(server, "refs/heads/main-too") is None


def test_hook__a_force_push_of_a_history_whose_firm_past_was_rewritten(played: Table) -> None:
    """Threat: fed rewrites his own first turn (the firm speed 12 becomes 10), re-signs it, and force-pushes
    that history to main, where kli's turn on top of the old one had landed. Defence: the game branch only moves
    forward (history.rewritten); as a branch of its own it may exist, main is untouched."""
    server = serve(played)
    landed = server_ref(server)
    played.git("reset", "-q", "--hard", "HEAD~2")  # before fed's first turn; kli's turn on it had landed
    played.edit("fed", through="1.8.damage", breaks=[{"range": 8}],
                entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 10}}])
    rewritten = played.sneak("fed", "speed 10, closing")
    push_refused(push(played, f"+{rewritten}:refs/heads/main"), "history.rewritten")
    assert push(played, f"{rewritten}:refs/heads/rewrite").returncode == 0  # a consistent history of its own
    assert server_ref(server) == landed


def test_hook__a_tag_at_a_bad_commit_or_a_tag_moved_onto_one(played: Table) -> None:
    """Threat: the bad commit parked on the server under a tag (lightweight or annotated), where the game
    branch's guard does not look, or an existing tag moved onto it. Defence: a new tag's commits are verified
    like a branch's (signature.not-in-control), and tags never move (ref.tag-moved)."""
    server = serve(played)
    played.git("tag", "turn-2")
    assert push(played, "refs/tags/turn-2").returncode == 0
    played.edit("kli", through="1.24.damage")
    bad = played.sneak("kli", "kli: out of turn")
    played.git("tag", "-a", "-m", "mine", "annotated", bad)
    played.git("tag", "light", bad)
    push_refused(push(played, "refs/tags/annotated"), "signature.not-in-control")
    push_refused(push(played, "refs/tags/light"), "signature.not-in-control")
    played.git("tag", "-f", "turn-2", bad)
    push_refused(push(played, "+refs/tags/turn-2"), "ref.tag-moved")
    assert bad not in subprocess.run(["git", "rev-list", "--all"], cwd=server, capture_output=True,
                                     text=True).stdout


def test_hook__an_odd_mode_hides_a_report_from_git(played: Table) -> None:
    """Threat: fed's turn writes report/turn-01.yaml (same blob) as mode 150000: libgit2 reads the same regular
    file, git a submodule, so kli's clone checks out no report and GitHub shows none, while a reader trusting
    libgit2 sees no change. Defence: only modes git writes, read from the tree's bytes (tree.bad-mode), in
    `pbem verify` and through the hook."""
    from test_tree_modes import ls_tree, with_mode

    server = serve(played)
    before = server_ref(server)
    bad = with_mode(played, legal_turn(played), "report/turn-01.yaml", b"150000", "mktree")
    assert ls_tree(played, bad, "report/turn-01.yaml") == ("160000", "commit")
    assert rejected(played, bad, "tree.bad-mode", "report/turn-01.yaml") == {"tree.bad-mode"}
    push_refused(push(played), "tree.bad-mode")
    assert server_ref(server) == before
# === The gate's own repair: the `upgrade` agreement (DESIGN §4.8, §9; docs/github.md "Repairing the gate") ====
# What would a player who wants an easier check do? Replace the workflow alone, or with a signature of his own
# only; complete a real upgrade and slip another change into the same commit; write a workflow other than the one
# signed; or take the game back to an older pbem, or one whose gate has a known hole.

from pbem.protocol import upgrade as upgrade_kind  # noqa: E402
from pbem.services.setup import workflow_text as written_workflow  # noqa: E402

WORKFLOW_FILE = ".github/workflows/pbem.yml"


def _upgrade_content(version: str = "0.1.0", text: str | None = None) -> dict[str, Any]:
    body = written_workflow() if text is None else text
    return {"pbem": version, "workflow": body.replace("pbem==0.1.0", f"pbem=={version}")}


def test_an_upgrade_signed_by_every_player_replaces_the_workflow_and_nothing_else(
        started: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """The legal path, end to end, as run by a newer pbem (0.2.0): fed proposes (`pbem agree upgrade`), kli
    signs, and kli's signing commit writes the workflow exactly as signed, pinning 0.2.0; the game verifies."""
    import pbem

    old = started.read(WORKFLOW_FILE)
    monkeypatch.setattr(pbem, "__version__", "0.2.0")
    cli(started, "agree", "upgrade", who="fed")
    raw = dict(started.data("agreements/fed-0002.yaml"))
    assert raw["kind"] == "upgrade" and raw["content"] == {"pbem": "0.2.0", "workflow": written_workflow()}
    assert started.read(WORKFLOW_FILE) == old  # nothing changes until every player signed
    cli(started, "sign", "fed-0002", who="kli")
    assert started.read(WORKFLOW_FILE) == written_workflow() != old
    assert '"pbem==0.2.0"' in started.read(WORKFLOW_FILE)
    changed = started.git("show", "--name-only", "--format=", "HEAD").stdout.decode().split()
    assert sorted(changed) == [WORKFLOW_FILE, "agreements/fed-0002.yaml", "status.yaml"]
    assert verdict(started)[0] == 0


def test_the_workflow_changed_without_an_upgrade_agreement(started: Table) -> None:
    """Threat: the player in control weakens the check in his turn (`pbem verify || true`). Defence: the file is
    frozen from the start (protected.changed); only an upgrade's last signature may write it."""
    started.write(WORKFLOW_FILE, started.read(WORKFLOW_FILE).replace("pbem verify --format github",
                                                                     "pbem verify --format github || true"))
    control = started.data("status.yaml")["control"]
    bad = started.sneak(control, "a friendlier check")
    assert "protected.changed" in rejected(started, bad, "protected.changed", WORKFLOW_FILE)


def test_an_upgrade_by_one_player_alone(started: Table) -> None:
    """Threat: fed proposes an upgrade and writes the new workflow in the same commit, with only his own
    signature. Defence: an upgrade needs every active player's signature; until then the file is frozen
    (protected.changed)."""
    content = _upgrade_content(text=written_workflow().replace("pbem verify --format github",
                                                               "pbem verify --format github || true"))
    started.write(WORKFLOW_FILE, content["workflow"])
    bad = _propose(started, "fed", 2, "upgrade", content)
    got = rejected(started, bad, "protected.changed", WORKFLOW_FILE)
    assert "agreement.mixed" in got


def test_an_upgrade_that_also_edits_something_else(started: Table) -> None:
    """Threat: kli adds the last signature to a real upgrade and, in the same commit, edits game.yaml's deadline
    and the README. Defence: the completing commit writes the workflow as agreed and nothing else
    (agreement.mixed for every other file; game.yaml's change never takes effect)."""
    cli(started, "agree", "upgrade", who="fed")
    raw = dict(started.data("agreements/fed-0002.yaml"))
    raw["signatures"] = {**raw["signatures"], "kli": agreement_sign(raw, "kli")}
    started.write("agreements/fed-0002.yaml", dump_mapping(raw))
    started.write(WORKFLOW_FILE, raw["content"]["workflow"])
    started.write("README.md", started.read("README.md") + "\nkli wins ties.\n")
    bad = started.sneak("kli", "kli: signs fed-0002")
    got = rejected(started, bad, "agreement.mixed", "README.md")
    assert "protected.changed" in got  # README.md is frozen too


def test_an_upgrade_completed_with_another_workflow_than_signed(started: Table) -> None:
    """Threat: kli signs fed's upgrade, and his signing commit writes a workflow of his own making. Defence: the
    file written must be byte for byte the signed text (by its git blob id: agreement.effect), else the change
    is a protected.changed."""
    cli(started, "agree", "upgrade", who="fed")
    raw = dict(started.data("agreements/fed-0002.yaml"))
    raw["signatures"] = {**raw["signatures"], "kli": agreement_sign(raw, "kli")}
    started.write("agreements/fed-0002.yaml", dump_mapping(raw))
    started.write(WORKFLOW_FILE, raw["content"]["workflow"].replace("timeout-minutes: 20", "timeout-minutes: 1"))
    bad = started.sneak("kli", "kli: signs fed-0002")
    got = rejected(started, bad, "agreement.effect", WORKFLOW_FILE)
    assert "protected.changed" in got


def test_an_upgrade_back_to_an_older_pbem(started: Table) -> None:
    """Threat: a player talks the table into "upgrading" to an older pbem, before a hole was fixed. Defence: an
    upgrade never goes below the pbem that made the game (agreement.downgrade)."""
    bad = _propose(started, "fed", 2, "upgrade", _upgrade_content("0.0.9"))
    assert "agreement.downgrade" in rejected(started, bad, "agreement.downgrade", "agreements/fed-0002.yaml")


def test_an_upgrade_to_a_version_with_a_known_hole(started: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threat: an upgrade to a release whose gate is known to let a rule be broken. Defence: pbem carries the
    list of such versions (protocol/upgrade.KNOWN_HOLES), and an upgrade to one is refused (agreement.known-hole)
    by the verifier and before anything is written by `pbem agree upgrade`."""
    monkeypatch.setitem(upgrade_kind.KNOWN_HOLES, "0.3.1", "its hook trusted commit dates")  # type: ignore[index]
    bad = _propose(started, "fed", 2, "upgrade", _upgrade_content("0.3.1"))
    assert "agreement.known-hole" in rejected(started, bad, "agreement.known-hole", "agreements/fed-0002.yaml")


def test_an_upgrade_whose_workflow_pins_another_pbem_than_it_names(started: Table) -> None:
    """Threat: the agreement says pbem 0.2.0 (which the players trust) while its workflow installs another
    requirement. Defence: the workflow must install exactly the version named (agreement.malformed)."""
    content = {"pbem": "0.2.0", "workflow": written_workflow().replace('"pbem==0.1.0"', '"pbem-evil==0.2.0"')}
    bad = _propose(started, "fed", 2, "upgrade", content)
    assert "agreement.malformed" in rejected(started, bad, "agreement.malformed", "agreements/fed-0002.yaml")


def test_an_upgrade_with_a_workflow_no_pbem_writes_is_not_signed_by_pbem(started: Table,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Threat: fed proposes by hand an "upgrade" to pbem 0.1.0 whose workflow skips the verify step, hoping kli
    signs without reading 5 kB of YAML. Defence: `pbem sign` of an upgrade re-writes the workflow with the pbem
    it runs and refuses to sign another text (upgrade.not-ours), or one that names another pbem than it is
    (upgrade.other-version); nothing is written."""
    weak = written_workflow().replace("run: pbem verify --format github", "run: echo fine")
    _propose(started, "fed", 2, "upgrade", {"pbem": "0.1.0", "workflow": weak})
    refused(started, "sign", "fed-0002", who="kli", rule="upgrade.not-ours", where="agreements/fed-0002.yaml",
            real=False)
    import pbem

    monkeypatch.setattr(pbem, "__version__", "0.2.0")
    _propose(started, "fed", 3, "upgrade", _upgrade_content("0.2.0"))
    monkeypatch.setattr(pbem, "__version__", "0.1.0")
    refused(started, "sign", "fed-0003", who="kli", rule="upgrade.other-version", where="agreements/fed-0003.yaml",
            real=False)



# === The gate's clock in the GitHub workflow: GitHub's own record of each push, never a commit's date ===
# The game's workflow run as a runner would (tests/actions_runner.py), its `gh api …/activity` answered from
# the activity record the stand-in GitHub keeps: each push to main at the time GitHub saw it.

from actions_runner import FakeGitHub as _ActionsHub  # noqa: E402
from actions_runner import Runner as _Runner  # noqa: E402
from actions_runner import pull_request_event as _pull_request_event  # noqa: E402


@pytest.mark.parametrize("seen_days_ago", [0, 8], ids=["pushed-now", "pushed-eight-days-ago"])
def test_clock__the_workflow_judges_a_backdated_forfeit_by_github_s_record(started: Table, tmp_path: Path,
                                                                         seen_days_ago: int) -> None:
    """Threat: fed backdates his turn by eight days, pushes it to main and opens a pull request that signs kli's
    forfeit (backdated too), so kli seems eight days overdue the moment he got control. Defence: the workflow's
    deadlines step counts kli's wait from when GitHub recorded the push of fed's turn (its activity record): the
    forfeit fails the check (`agreement.not-overdue`, status pbem/verify failure on the head) while GitHub saw
    that push moments ago, and passes once GitHub's own record says eight days."""
    from datetime import datetime, timedelta, timezone

    from conftest import FED_TURN_1

    hub = _ActionsHub.hosting(started.repo_dir, tmp_path / "github")
    started.turn("fed", **FED_TURN_1)
    _redate(started, "fed", -8)
    hub.push(started.repo_dir, "main", "refs/heads/main",
             at=datetime.now(timezone.utc) - timedelta(days=seen_days_ago))
    cli(started, "agree", "end", "--result", "forfeit", "--player", "kli", who="fed")
    head = _redate(started, "fed", -8)
    hub.push(started.repo_dir, "HEAD", "refs/pull/7/head")
    workflow = subprocess.run(["git", "-C", str(hub.bare), "show", "main:.github/workflows/pbem.yml"],
                              capture_output=True, text=True, check=True).stdout
    job = _Runner(hub, tmp_path / "runner", home=started.home).run(
        workflow, _pull_request_event(hub, 7, head, "forfeit"))
    step = job.step("deadlines by the times GitHub recorded")
    said = step.stdout + step.stderr
    assert "Traceback" not in said
    assert [s.exit_code for s in job.steps][:3] == [0, 0, 0], "\n".join(f"{s.name}: {s.exit_code}: {s.stdout[-400:]} {s.stderr[-400:]}" for s in job.steps[:3])
    if seen_days_ago == 0:
        assert step.exit_code == 1 and "agreement.not-overdue" in said, said
        assert hub.posted_statuses()[-1]["state"] == "failure"
    else:
        assert step.exit_code == 0, said
        assert job.step("verify every commit").exit_code == 0
        assert hub.posted_statuses()[-1]["state"] == "success"
# === Diplomacy at a fair table: an nmr holds, orders checked, a bounded director, sealed draw votes (docs/dow.md) ===

@pytest.fixture
def dow_sealing(dow_whisper: Any) -> Any:
    """S1901M open: every power owes its orders (the director's game of the whisper fixture, past S1901P)."""
    dow_whisper.phase()
    assert dow_whisper.status()["firm"] == "S1901M"
    return dow_whisper


def _nmr_against(dow: Any, absent: str) -> str:
    from pbem.services import agreements as agreeing

    signers = [p for p in ("austria", "england", "france", "germany", "italy", "russia", "turkey") if p != absent]
    aid = agreeing.agree(dow.ws(), dow.me(signers[0]), "nmr", player=absent).agreement
    for power in signers[1:]:
        agreeing.sign(dow.ws(), dow.me(power), aid)
    return aid


def test_dow_nmr__the_absent_power_seals_late_for_the_phase_the_nmr_settled(dow_sealing: Any) -> None:
    """Threat: Turkey stays away until the others' sealed orders are revealed after the nmr, then seals orders for
    the settled phase that fit what he saw. Defence: the nmr settled S1901M for him (his units take the
    defaults); nothing more is owed there, by pbem (orders.not-owed) and by plain git; the next phase owes his
    orders as usual."""
    for power in ("austria", "england", "france", "germany", "italy", "russia"):
        dow_sealing.seal(power)
    _nmr_against(dow_sealing, "turkey")
    dow_sealing.reveal("austria")
    dow_sealing.refused("orders", dow_sealing.orders_file(["A CON - BUL"]), who="turkey", rule="orders.not-owed")
    from pbem.services import chance

    ws = dow_sealing.ws()
    files = ws.head_files()
    sid = chance.seal_secret(files, ws.game_of(files), dow_sealing.me("turkey"), "turkey", "orders",
                             b'{"orders": ["A CON - BUL"]}', "S1901M", "late", step="S1901M")
    bad = dow_sealing.sneak("turkey", files, "turkey: late orders")
    found = dow_sealing.verify()
    assert any(commit == bad for _rule, commit in found), (sid, found)


def test_dow_draw__a_sealed_vote_opened_before_every_power_has_sealed(dow_sealing: Any) -> None:
    """Threat: France seals a draw vote and opens it (his key) at once, by plain git, to press the others while
    they decide. Defence: a sealed step's reveals come only once every power has sealed: the early reveal is no
    legal commit (signature.not-in-control) and pbem refuses it (orders.not-yet)."""
    from pbem.services import chance

    dow_sealing.ok("orders", dow_sealing.orders_file([]), "--draw", who="france")
    dow_sealing.refused("orders", "--reveal", who="france", rule="orders.not-yet")
    ws = dow_sealing.ws()
    files = ws.head_files()
    chance.reveal_secret(files, ws.game_of(files), dow_sealing.me("france"), "france", "france-0001")
    bad = dow_sealing.sneak("france", files, "france: my vote, shown early")
    assert ("signature.not-in-control", bad) in dow_sealing.verify()


def test_dow_draw__a_vote_changed_after_sealing(dow_sealing: Any) -> None:
    """Threat: Germany sealed `draw: true`, sees who else sealed, and swaps his sealed set for one without the
    vote (or seals a second set). Defence: a secret never changes once sealed (secret.changed), a second sealed
    set for the phase is refused (orders.already-sealed); by plain git the commit that changes it is refused
    (signature.not-in-control: nothing is owed that it could answer; secret.changed)."""
    from pbem.crypto import seal

    dow_sealing.ok("orders", dow_sealing.orders_file([]), "--draw", who="germany")
    for power in ("austria", "england", "france", "italy", "russia", "turkey"):
        dow_sealing.seal(power)  # a set is replaced only until the last power has sealed (test_dow_reseal.py)
    dow_sealing.refused("orders", dow_sealing.orders_file([]), who="germany", rule="orders.already-sealed")
    raw = dict(dow_sealing.data("secrets/germany-0001.yaml"))
    other = seal.seal(b'{"orders":[]}', dow_sealing.me("germany").public)
    raw.update(box=base64.b64encode(other.box).decode(), commit=other.commit.hex())
    files = dow_sealing.ws().head_files()
    files["secrets/germany-0001.yaml"] = dump_mapping(raw).encode()
    bad = dow_sealing.sneak("germany", files, "germany: no vote after all")
    found = {rule for rule, commit in dow_sealing.verify() if commit == bad}
    assert "secret.changed" in found and found <= {"secret.changed", "signature.not-in-control", "progress.none"}, \
        found  # every power has sealed: germany owes his reveal, and this commit is none


def test_dow_orders__a_forbidden_order_is_not_sealed_unless_asked(dow_sealing: Any) -> None:
    """Threat (seen): an honest typo sealed and pushed becomes a public offence nothing can undo. Defence: pbem
    checks every order before sealing (orders.forbidden, orders.invalid, with the file and line) and seals
    nothing; `--anyway` seals as written."""
    before = dow_sealing.head()
    dow_sealing.refused("orders", dow_sealing.orders_file(["F TRI - VEN"]), who="austria", rule="orders.forbidden")
    dow_sealing.refused("orders", dow_sealing.orders_file(["A VIE - TYX"]), who="austria", rule="orders.invalid")
    assert dow_sealing.head() == before
    dow_sealing.ok("orders", dow_sealing.orders_file(["F TRI - VEN"]), "--anyway", who="austria")


# --- withheld sets: opened without their owner by the other powers' shares (docs/dow.md) -------------------------

def _share(dow: Any, secret_id: str, holder: str) -> str:
    """`holder`'s share of a sealed set, decrypted with his key (what `pbem open` publishes)."""
    from pbem.crypto import seal
    from pbem.crypto.keys import load_private_key

    from pbem.crypto import shares

    raw = dow.data(f"secrets/{secret_id}.yaml")
    return seal.recover_key(shares.parse(raw["shares"][holder])[1], load_private_key(dow.key(holder))).hex()


def _publish(dow: Any, holder: str, secret_id: str, share: str) -> str:
    message = {"by": holder, "at": dow.status()["firm"], "open": {"secret": secret_id, "share": share}}
    return dow.sneak(holder, _dow_files_with(dow, holder, message), f"{holder}: share of {secret_id}")


@pytest.fixture
def turkey_withholds(dow_sealing: Any) -> Any:
    """Every power sealed S1901M (Turkey: A CON - BUL), all but Turkey revealed: Turkey withholds."""
    for power in ("austria", "england", "france", "germany", "italy", "russia"):
        dow_sealing.seal(power)
    dow_sealing.seal("turkey", ["A CON - BUL"])
    for power in ("austria", "england", "france", "germany", "italy", "russia"):
        dow_sealing.reveal(power)
    return dow_sealing


def test_withheld__a_forged_share(turkey_withholds: Any) -> None:
    """Threat: Russia, who wants Turkey's set to stay shut (or to open wrong), publishes random bytes as his
    share. Defence: each share is checked against the commitment its dealer sealed with the set (share.forged);
    a power with no share of the set cannot publish one either."""
    bad = _publish(turkey_withholds, "russia", "turkey-0001", "ab" * 32)
    assert ("share.forged", bad) in turkey_withholds.verify()
    _back_to_parent(turkey_withholds)
    bad = _publish(turkey_withholds, "russia", "russia-0001", _share(turkey_withholds, "turkey-0001", "russia"))
    assert ("share.forged", bad) in turkey_withholds.verify()  # his own set: dealt to the others, not to him


def test_withheld__a_share_that_opens_another_set(turkey_withholds: Any) -> None:
    """Threat: Russia publishes, as his share of Turkey's set, his (genuine) share of England's set, hoping the
    combination opens something else or poisons the opening. Defence: a share's commitment binds it to its set
    and recipient (share.wrong-set), by pbem and by plain git."""
    bad = _publish(turkey_withholds, "russia", "turkey-0001", _share(turkey_withholds, "england-0001", "russia"))
    assert ("share.wrong-set", bad) in turkey_withholds.verify()


def test_withheld__a_share_published_before_every_power_has_sealed(dow_sealing: Any) -> None:
    """Threat: Turkey sealed first; a coalition publishes its shares before its members seal, to read his orders
    and answer them. Defence: a share is published only while its set's reveal is owed, every power having sealed
    (share.early); pbem refuses too (tests/test_dow_withheld.py)."""
    dow_sealing.seal("turkey", ["A CON - BUL"])
    bad = _publish(dow_sealing, "russia", "turkey-0001", _share(dow_sealing, "turkey-0001", "russia"))
    assert ("share.early", bad) in dow_sealing.verify()


def test_withheld__the_nmr_opens_a_set_with_a_made_up_key(turkey_withholds: Any) -> None:
    """Threat: the power completing the nmr writes `opened` with a key of his own making (or one the shares do
    not rebuild), so that a set of his choosing stands. Defence: `opened` must be the key the published shares
    rebuild and must open the box to its commitment (share.bad-opening)."""
    from pbem.formats import yamlsafe
    from pbem.services import agreements as agreeing

    powers = ("austria", "england", "france", "germany", "italy", "russia")
    aid = agreeing.agree(turkey_withholds.ws(), turkey_withholds.me("austria"), "nmr", player="turkey").agreement
    for power in powers[1:-1]:
        agreeing.sign(turkey_withholds.ws(), turkey_withholds.me(power), aid)
    ws = turkey_withholds.ws()
    files = ws.head_files()
    agreeing.sign(ws, turkey_withholds.me("russia"), aid)  # the honest last signature, to copy its files
    signed = ws.head_files()
    _back_to_parent(turkey_withholds)
    raw = yamlsafe.load(signed["secrets/turkey-0001.yaml"], "s").data
    assert "opened" not in raw  # no shares were published: nothing opened
    files.update({p: d for p, d in signed.items() if p.startswith(("agreements/", "secrets/"))})
    files["secrets/turkey-0001.yaml"] = dump_mapping({**raw, "opened": "cd" * 32}).encode()
    bad = turkey_withholds.sneak("russia", files, "russia: signs the nmr, and opens as he likes")
    assert ("share.bad-opening", bad) in turkey_withholds.verify()


# --- agreement kinds: `pbem agree KIND` takes only the options of its kind's row -------------------------------

@pytest.mark.parametrize("args", [
    ("resign", "--player", "kli"),  # a resign names nobody but its proposer: no resigning someone else
    ("nmr", "--player", "kli", "seat=fed"),  # no field of another kind smuggled into an nmr
    ("end", "--result", "forfeit", "--player", "kli", "signatures=fed"),  # nor the document's own fields
    ("amend", "--deadline"),  # an option missing its value does not swallow the next word
])
def test_agree__a_kind_takes_only_the_options_of_its_row(started: Table, args: tuple[str, ...]) -> None:
    """Threat: a player passes options the kind does not define (another kind's, or the agreement's own fields
    as KEY=VALUE) to get content past what the co-signers expect. Defence: `pbem agree` reads only the row's
    options (protocol.kinds.read_options) and refuses anything else (usage.agree, nothing written); what is
    written by hand meets the schema and the kind's rules as before."""
    line = refused(started, "agree", *args, who="fed", rule="usage.agree", code=2)
    assert f"no option of {args[0]}" in line or "--deadline needs a value" in line

# === fair-rest: an nmr settles up to the absent player's next decision, and no further (docs/protocol.md) ===
# The duel of `played`: fed holds control at 1.9.move and is gone. One nmr by kli covers him to the end of turn 1;
# his next decision is turn 2's energy allocation (2.0.alloc).

def _absent_fed_to_turn_2(played: Table) -> None:
    """kli signs the nmr against fed and plays the rest of turn 1 alone; fed holds control again at 2.0.alloc."""
    cli(played, "agree", "nmr", "--player", "fed", who="kli")
    for _ in range(12):
        if played.data("status.yaml")["control"] != "kli":
            break
        played.turn("kli", through="1.32.final")
    assert played.data("status.yaml")["firm"] == "2.0.alloc"
    assert played.data("status.yaml")["control"] == "fed"


def test_nmr__kli_plays_past_fed_s_next_decision_on_one_nmr(played: Table) -> None:
    """Threat: kli, having signed one nmr, plays on into turn 2 as if fed were still covered, so that fed's ship
    flies turn 2 without an allocation of his. Defence: the cover ends at fed's next decision; there fed holds
    control again, and kli's turn is refused (signature.not-in-control) by pbem and by plain git."""
    _absent_fed_to_turn_2(played)
    played.edit("kli", through="2.8.damage")
    refused(played, "yield", who="kli", rule="signature.not-in-control", where="status.yaml")
    bad = played.sneak("kli", "kli: fed is still away, I go on")
    assert "signature.not-in-control" in rejected(played, bad, "signature.not-in-control", "status.yaml")


def test_nmr__a_second_nmr_while_the_first_still_covers_him(played: Table) -> None:
    """Threat: kli stacks nmrs against fed while the first one covers him (fed owes nothing then), to have one in
    hand that reaches past fed's next decision. Defence: an nmr names a player who owes something now
    (agreement.nmr-owes-nothing), by pbem and by plain git."""
    cli(played, "agree", "nmr", "--player", "fed", who="kli")
    assert played.data("status.yaml")["control"] == "kli"
    refused(played, "agree", "nmr", "--player", "fed", who="kli", rule="agreement.nmr-owes-nothing",
            where="agreements/draft.yaml")


def test_nmr__an_nmr_against_the_present_player_in_control(played: Table) -> None:
    """Threat: fed, in control, signs an nmr against kli, who owes nothing, to skip kli's turns to the next turn
    start. Defence: agreement.nmr-owes-nothing; the nmr covers only a player who owed something when it landed."""
    refused(played, "agree", "nmr", "--player", "kli", who="fed", rule="agreement.nmr-owes-nothing",
            where="agreements/draft.yaml")


def test_nmr__an_nmr_before_the_deadline_is_refused_at_the_gate(played: Table) -> None:
    """Threat: kli signs the nmr the moment fed owes his orders, so that one nmr takes fed's whole turn before he
    could answer. Defence: the hook judges the deadline by its own record (agreement.nmr-early) and the server's
    ref stays."""
    from test_hook import clone_for

    server = serve(played)
    clone = clone_for(played, server, "kli")
    tip = server_ref(server)
    cli(clone, "agree", "nmr", "--player", "fed", who="kli")
    push_refused(push(clone), "agreement.nmr-early")
    assert server_ref(server) == tip


# --- fair-rest: a sealed set replaced until the phase's last seal (docs/dow.md "Replacing a sealed set") ----------

def test_reseal__replacing_after_the_last_seal(dow_sealing: Any) -> None:
    """Threat: France, last but one to seal, waits until every power has sealed and then replaces his set, to
    answer what the last sealers' timing told him. Defence: once every power has sealed the sets stand, by pbem
    (orders.already-sealed) and by plain git (secret.late-replace)."""
    from test_dow_reseal import hand_sealed

    for power in ("austria", "england", "france", "germany", "italy", "russia", "turkey"):
        dow_sealing.seal(power)
    dow_sealing.refused("orders", dow_sealing.orders_file(["A PAR - PIC"]), who="france",
                        rule="orders.already-sealed")
    bad = dow_sealing.sneak("france", hand_sealed(dow_sealing, "france", '"A PAR - PIC"', "france-0001"),
                            "france: again, after the last seal")
    assert ("secret.late-replace", bad) in dow_sealing.verify()


def test_reseal__replacing_another_power_s_set(dow_sealing: Any) -> None:
    """Threat: Germany seals a set "replacing" France's, to make France's orders count no more. Defence: a
    replacement names a set of its own owner (secret.bad-replace); France's set still counts."""
    from test_dow_reseal import hand_sealed

    dow_sealing.seal("france", ["A PAR - BUR"])
    bad = dow_sealing.sneak("germany", hand_sealed(dow_sealing, "germany", "", "france-0001"),
                            "germany: replaces france's set")
    assert ("secret.bad-replace", bad) in dow_sealing.verify()


def test_reseal__replacing_after_the_reveals_began(dow_sealing: Any) -> None:
    """Threat: Turkey reads Austria's revealed orders and replaces his own sealed set to answer them. Defence:
    reveals begin only once every power has sealed, when no set is replaced any more (secret.late-replace)."""
    from test_dow_reseal import hand_sealed

    for power in ("austria", "england", "france", "germany", "italy", "russia", "turkey"):
        dow_sealing.seal(power)
    dow_sealing.reveal("austria")
    dow_sealing.refused("orders", dow_sealing.orders_file(["A CON - BUL"]), who="turkey",
                        rule="orders.already-sealed")
    bad = dow_sealing.sneak("turkey", hand_sealed(dow_sealing, "turkey", '"A CON - BUL"', "turkey-0001"),
                            "turkey: after austria's reveal")
    assert ("secret.late-replace", bad) in dow_sealing.verify()


def test_reseal__two_seals_in_one_commit(dow_sealing: Any) -> None:
    """Threat: France commits two replacements of his set at once (or a replacement and a second fresh set), so
    that which one counts is the verifier's guess. Defence: one sealed input per step per commit (secret.bad-
    secret, a second sealed input for S1901M)."""
    from pbem.services import chance
    from test_dow_reseal import hand_sealed

    dow_sealing.seal("france", ["A PAR - BUR"])
    files = hand_sealed(dow_sealing, "france", '"A PAR - PIC"', "france-0001")
    ws = dow_sealing.ws()
    chance.seal_secret(files, ws.game_of(files), dow_sealing.me("france"), "france", "orders",
                       b'{"orders": ["A PAR - GAS"]}', "S1901M", "a third", step="S1901M")
    bad = dow_sealing.sneak("france", files, "france: two sets at once")
    assert ("secret.bad-secret", bad) in dow_sealing.verify()


# --- fair-rest: the seat takeover and the withheld contribution, backdated, through the emulated workflow --------
# As `clock__the_workflow_judges_a_backdated_forfeit_by_github_s_record` above: the game's workflow run as a
# runner would, on a pull request whose head carries the attack; GitHub's activity record says when the commit
# that made the victim owe reached main. Through the hook the same attacks are `clock__a_seat_taken_by_…` and
# `clock__a_contribution_marked_withheld_…`.

def _workflow_deadlines(table: Table, hub: Any, tmp_path: Path, head: str) -> tuple[Any, Any]:
    """The game workflow (main's copy) run on pull request 7 whose head is `head`: (its deadlines step, the job)."""
    hub.push(table.repo_dir, "HEAD", "refs/pull/7/head")
    workflow = subprocess.run(["git", "-C", str(hub.bare), "show", "main:.github/workflows/pbem.yml"],
                              capture_output=True, text=True, check=True).stdout
    job = _Runner(hub, tmp_path / "runner", home=table.home).run(workflow, _pull_request_event(hub, 7, head, "attack"))
    step = job.step("deadlines by the times GitHub recorded")
    assert "Traceback" not in step.stdout + step.stderr
    assert [s.exit_code for s in job.steps][:3] == [0, 0, 0], "\n".join(
        f"{s.name}: {s.exit_code}: {s.stdout[-400:]} {s.stderr[-400:]}" for s in job.steps[:3])
    return step, job


def _judged(step: Any, job: Any, hub: Any, seen_days_ago: int, rule: str) -> None:
    said = step.stdout + step.stderr
    if seen_days_ago == 0:
        assert step.exit_code == 1 and rule in said, said
        assert hub.posted_statuses()[-1]["state"] == "failure"
    else:
        assert step.exit_code == 0, said
        assert job.step("verify every commit").exit_code == 0
        assert hub.posted_statuses()[-1]["state"] == "success"


@pytest.mark.parametrize("seen_days_ago", [0, 8], ids=["pushed-now", "pushed-eight-days-ago"])
def test_clock__the_workflow_judges_a_backdated_seat_takeover_by_github_s_record(started: Table, tmp_path: Path,
                                                                               seen_days_ago: int) -> None:
    """Threat: fed backdates his turn by eight days, pushes it, and opens a pull request giving kli's seat to a
    second key of his own ("kli lost his key"), backdated too. Defence: kli's wait runs from when GitHub recorded
    the push of fed's turn: agreement.not-overdue while that was moments ago; once GitHub's record says eight
    days, the seat change passes."""
    from datetime import datetime, timedelta, timezone

    from conftest import FED_TURN_1

    hub = _ActionsHub.hosting(started.repo_dir, tmp_path / "github")
    started.turn("fed", **FED_TURN_1)
    _redate(started, "fed", -8)
    hub.push(started.repo_dir, "main", "refs/heads/main",
             at=datetime.now(timezone.utc) - timedelta(days=seen_days_ago))
    cli(started, "agree", "seat", "--seat", "kli", "--new-key", _carol_key(started), "--why", "lost-key",
        who="fed")
    head = _redate(started, "fed", -8)
    step, job = _workflow_deadlines(started, hub, tmp_path, head)
    _judged(step, job, hub, seen_days_ago, "agreement.not-overdue")


@pytest.mark.parametrize("seen_days_ago", [0, 8], ids=["pushed-now", "pushed-eight-days-ago"])
def test_clock__the_workflow_judges_a_backdated_withheld_contribution_by_github_s_record(
        fire_owed: Table, tmp_path: Path, seen_days_ago: int) -> None:
    """Threat: fed announces his dice batch dated eight days back (kli now owes a contribution), pushes it, and
    opens a pull request with an nmr against kli, which marks kli's contribution withheld: fed's die would be his
    own secret alone, pre-ground. Defence: kli's contribution is owed from when GitHub recorded the push of the
    announcement: agreement.nmr-early while that was moments ago; with eight days on GitHub's record it lands."""
    from datetime import datetime, timedelta, timezone

    hub = _ActionsHub.hosting(fire_owed.repo_dir, tmp_path / "github")
    for _ in range(12):
        (who, kind, why), *_ = dice_pending(fire_owed)
        if who == "kli" and kind == "dice" and why.startswith("contribution"):
            break
        if kind == "roll":
            unit = "CA" if who == "fed" else "D7"
            cli(fire_owed, "roll", "--for", f"{unit} ph1", "--ref", f"1.4.fire/{unit}/ph1", who=who)
        cli(fire_owed, "yield", who=who)
        _redate(fire_owed, who, -8)
    else:
        raise AssertionError(dice_pending(fire_owed))
    hub.push(fire_owed.repo_dir, "main", "refs/heads/main",
             at=datetime.now(timezone.utc) - timedelta(days=seen_days_ago))
    cli(fire_owed, "agree", "nmr", "--player", "kli", who="fed")
    head = _redate(fire_owed, "fed", -8)
    step, job = _workflow_deadlines(fire_owed, hub, tmp_path, head)
    _judged(step, job, hub, seen_days_ago, "agreement.nmr-early")

# === fair-tactical: allocations secret until the battle ends, only the speeds opened at once (seed 000 §2.C) ======
# The secret-speeds duel of tests/test_tactical_secret_speeds.py (fed's CA and kli's D7 three hexes apart, power
# 10, a battle of one turn): both players' orders reach the end of the turn and both owe a sealed allocation.

from test_tactical_secret_speeds import SECRET_SPEEDS, end_battle, hand_seal, key_line, speeds  # noqa: E402


@pytest.fixture(scope="module")
def base_speeds_owed(tmp_path_factory: pytest.TempPathFactory) -> Table:
    from conftest import GAME_ID, _build

    root = tmp_path_factory.mktemp("attacks-speeds")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(SECRET_SPEEDS)
    table = _build(root / "started", str(root / "template"), GAME_ID)
    table.turn("fed", through="1.32.final")
    table.turn("kli", through="1.32.final", breaks=[{"at": "1.2.move"}])
    return table


@pytest.fixture
def speeds_owed(base_speeds_owed: Table, tmp_path: Path) -> Table:
    return copy_table(base_speeds_owed, tmp_path / "table")


def _by_hand(table: Table, who: str, sid: str, what: str) -> None:
    """Write into the working tree what `pbem yield` would write to open `sid`'s speeds ("part") or its box
    ("key"), without asking whether it is due."""
    from pbem.services import chance
    from pbem.services.workspace import Workspace, load_identity

    ws = Workspace.open(table.repo_dir)
    files = ws.worktree_files()
    me = load_identity(str(table.key(who)), table.repo_dir)
    if what == "part":
        chance.open_part(files, ws.game_of(files), me, who, sid)
    else:
        chance.reveal_secret(files, ws.game_of(files), me, who, sid)
    table.write(f"secrets/{sid}.yaml", files[f"secrets/{sid}.yaml"].decode())


def test_secret_allocation__speeds_opened_before_everyone_has_sealed(speeds_owed: Table) -> None:
    """Threat: fed seals, then opens his speeds while kli has not sealed yet, to show an ally his plot (or, seen
    from kli, kli seals after seeing fed's speed). Defence: a part is opened only once every player owing input
    at the step has sealed and the step asks for it: before that fed owes nothing there, so his commit is a turn
    out of turn (signature.not-in-control: whoever still owes his seal holds control), and the opening itself is
    `secret.early-open`; pbem and plain git alike; before that fed's file shows nothing of his plot."""
    seal_allocation(speeds_owed, "fed", {"turn": 1, "units": {"CA": {"speed": 8, "weapons": 2}}})
    assert "part" not in speeds_owed.data("secrets/fed-0001.yaml")
    _by_hand(speeds_owed, "fed", "fed-0001", "part")
    # nothing fed owes asks for it, so the commit is a turn, and kli (who still owes his seal) holds control
    refused(speeds_owed, "yield", who="fed", rule="signature.not-in-control", where="status.yaml")
    bad = sneak_as(speeds_owed, "fed", "fed: my speeds, early")
    rejected(speeds_owed, bad, "signature.not-in-control", "status.yaml")
    # in a commit that is allowed to act, the opening itself is the finding (tests/test_sealed_parts.py)


def test_secret_allocation__sealing_after_seeing_the_others_speeds(speeds_owed: Table) -> None:
    """Threat: kli waits until fed's speeds are open, then seals (or seals a second allocation) to answer them.
    Defence: nothing opens before the last seal, and a second sealed input for the step is refused
    (secret.bad-secret): the plot kli sealed before he could see anything is the one that counts."""
    seal_allocation(speeds_owed, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    seal_allocation(speeds_owed, "fed", {"turn": 1, "units": {"CA": {"speed": 8}}})
    cli(speeds_owed, "yield", who="fed")  # fed's speeds opened: now kli could see them
    assert speeds_owed.data("secrets/fed-0001.yaml")["part"] == {"units": {"CA": {"speed": 8}}}
    hand_sealed = speeds_owed.root / "second"
    copy = copy_table(speeds_owed, hand_sealed)
    source = copy.root / "kli-answer.yaml"
    source.write_text(json.dumps({"turn": 1, "units": {"D7": {"speed": 9}}}))
    from pbem.services import chance
    from pbem.services.workspace import Workspace, load_identity

    ws = Workspace.open(copy.repo_dir)
    files = ws.worktree_files()
    chance.seal_secret(files, ws.game_of(files), load_identity(str(copy.key("kli")), copy.repo_dir), "kli",
                       "allocation", source.read_bytes(), "end", step="1.0.alloc")
    copy.write("secrets/kli-0002.yaml", files["secrets/kli-0002.yaml"].decode())
    bad = sneak_as(copy, "kli", "kli: a better plot, now that I know fed's")
    rejected(copy, bad, "secret.bad-secret", "secrets/kli-0002.yaml")
    cli(speeds_owed, "yield", who="kli")  # the honest way on: his own sealed plot, opened
    assert speeds_owed.data("secrets/kli-0001.yaml")["part"] == {"units": {"D7": {"speed": 2}}}


def test_secret_allocation__the_box_opened_before_the_battle_ends(speeds_owed: Table) -> None:
    """Threat: kli opens his whole allocation mid-battle (to show an ally what he kept in reserve, or to have
    his turn judged before the end). Defence: an allocation stays sealed until the battle is over
    (secret.early-reveal), by pbem and by plain git; pbem yield never opens it early."""
    seal_allocation(speeds_owed, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    seal_allocation(speeds_owed, "fed", {"turn": 1, "units": {"CA": {"speed": 8}}})
    cli(speeds_owed, "yield", who="kli")
    cli(speeds_owed, "yield", who="fed")
    assert "key" not in speeds_owed.data("secrets/kli-0001.yaml")
    assert speeds_owed.data("status.yaml")["control"] == "kli"  # in his own turn, too
    _by_hand(speeds_owed, "kli", "kli-0001", "key")
    refused(speeds_owed, "yield", who="kli", rule="secret.early-reveal", where=ANY_LINE("secrets/kli-0001.yaml"))
    bad = sneak_as(speeds_owed, "kli", "kli: my allocation, early")
    rejected(speeds_owed, bad, "secret.early-reveal", "secrets/kli-0001.yaml")


def test_secret_allocation__a_speed_other_than_the_sealed_one(speeds_owed: Table) -> None:
    """Threat: fed commits (by hand) to speed 5 beside a box that says 8, opens 5 at the turn start and plays
    with it, hoping the box is never compared. Defence: at the end his box must hold the speeds he opened
    (secret.part-mismatch at its key line, refused by pbem and found in a plain-git reveal); he owes a reveal
    that can never pass, and kli alone records his forfeit: the game ends, never stuck."""
    seal_allocation(speeds_owed, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    fives = {"units": {"CA": {"speed": 5}}}
    hand_seal(speeds_owed, "fed", {"turn": 1, "units": {"CA": {"speed": 8}}}, part=fives)
    cli(speeds_owed, "yield", who="kli")
    # pbem would open the box's speeds (8), which do not open the commitment: fed opens his 5 by hand
    refused(speeds_owed, "yield", who="fed", rule="secret.part-commit", where=ANY_LINE("secrets/fed-0001.yaml"))
    from pbem.crypto import part as parts
    from pbem.crypto import seal as sealing

    raw = dict(speeds_owed.data("secrets/fed-0001.yaml"))
    key = sealing.recover_key(base64.b64decode(raw["owner_box"]), load_private_key(speeds_owed.key("fed")))
    speeds_owed.write("secrets/fed-0001.yaml", dump_mapping({**raw, "part": fives,
                                                            "part_salt": parts.part_salt(key).hex()}))
    cli(speeds_owed, "yield", who="fed")  # the commitment holds: 5 is what was committed
    assert speeds(speeds_owed)["CA"] == 5
    speeds_owed.turn("kli", through="1.32.final", breaks=[])
    where = key_line(speeds_owed, "fed-0001")
    refused(speeds_owed, "yield", who="fed", rule="secret.part-mismatch", where=where)
    cli(speeds_owed, "yield", who="kli")
    copy = copy_table(speeds_owed, speeds_owed.root / "sneaked")
    _by_hand(copy, "fed", "fed-0001", "key")
    bad = sneak_as(copy, "fed", "fed: my allocation")
    rejected(copy, bad, "secret.part-mismatch", "secrets/fed-0001.yaml")
    cli(speeds_owed, "agree", "end", "--result", "forfeit", "--player", "fed", "--note", "speeds not sealed",
        who="kli")
    assert speeds_owed.data("status.yaml")["over"] is True


def test_secret_allocation__an_allocation_that_does_not_pay_for_what_was_done(speeds_owed: Table) -> None:
    """Threat: kli allocates nothing to weapons (nobody can see it) and fires anyway at 1.4.fire. Defence: the
    audit of his box at the end counts every shot (rules.allocation at its key line, by pbem and by plain
    git); fed then records his forfeit."""
    from test_tactical_secret_speeds import roll_all

    seal_allocation(speeds_owed, "kli", {"turn": 1, "units": {"D7": {"speed": 0}}})
    seal_allocation(speeds_owed, "fed", {"turn": 1, "units": {"CA": {"speed": 0}}})
    cli(speeds_owed, "yield", who="kli")
    cli(speeds_owed, "yield", who="fed")
    # accepted: nobody can judge it yet (his own pbem status warns him, from his own box)
    speeds_owed.turn("kli", through="1.32.final", breaks=[],
                     entries=[{"at": "1.4.fire", "unit": "D7", "do": {"fire": {"weapon": "ph1", "target": "CA"}}}])
    roll_all(speeds_owed)
    cli(speeds_owed, "yield", who="fed")
    error = refused(speeds_owed, "yield", who="kli", rule="rules.allocation", where=key_line(speeds_owed, "kli-0001"))
    assert "weapons used (ph1) cost 1, 0 allocated" in error, error
    copy = copy_table(speeds_owed, speeds_owed.root / "sneaked")
    _by_hand(copy, "kli", "kli-0001", "key")
    bad = sneak_as(copy, "kli", "kli: my allocation")
    rejected(copy, bad, "rules.allocation", "secrets/kli-0001.yaml")
    cli(speeds_owed, "agree", "end", "--result", "forfeit", "--player", "kli", "--note", "unpaid shot", who="fed")
    assert speeds_owed.data("status.yaml")["over"] is True


def test_secret_allocation__withholding_the_end_of_battle_reveal(speeds_owed: Table) -> None:
    """Threat: the battle is over and fed, who knows his box does not pay (or just sulks), never opens it, so
    the game is never complete. Defence: the game waits for him alone (kli owes nothing, and every commit of
    kli's stays legal); kli records fed's forfeit at once, signed by every active player but fed, and the game
    is over; an nmr after his deadline would settle the box as withheld, lost, as well (docs/tactical.md)."""
    seal_allocation(speeds_owed, "kli", {"turn": 1, "units": {"D7": {"speed": 2}}})
    seal_allocation(speeds_owed, "fed", {"turn": 1, "units": {"CA": {"speed": 8}}})
    end_battle(speeds_owed)
    cli(speeds_owed, "yield", who="kli")
    status = speeds_owed.data("status.yaml")
    assert [(b["player"], b["kind"]) for b in status["pending"]] == [("fed", "secret")] and not status["over"]
    cli(speeds_owed, "agree", "end", "--result", "forfeit", "--player", "fed", "--note", "allocation withheld",
        who="kli")
    assert speeds_owed.data("status.yaml")["over"] is True
    assert verdict(speeds_owed)[0] == 0


# === tac-systems: the tractor auction answered out of turn (docs/threats.md "Systems that act") ==================
# From `systems_auction`: the games/tactical-systems template; fed bids 3 to hold the D7 at 1.1.fire, which meets
# kli's {system: {name: tractor}}: the fire step's action auction asks kli, who may bid back (seed §7).

from conftest import _build as build_table  # noqa: E402
from test_dice_flow import findings as verified_findings  # noqa: E402
from test_tactical_cli_bad_input import line_of  # noqa: E402

TRACTOR_BACK = {"at": "1.1.fire", "unit": "D7", "do": {"tractor": {"target": "CA", "energy": 4}}}


@pytest.fixture(scope="module")
def base_systems_auction(tmp_path_factory: pytest.TempPathFactory) -> Table:
    table = build_table(tmp_path_factory.mktemp("systems") / "auction", "tactical-systems", "systems-attack")
    table.turn("fed", through="1.1.damage", breaks=[{"system": {"name": "tractor"}}],
               entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 4}},
                        {"at": "1.1.fire", "unit": "CA", "do": {"tractor": {"target": "D7", "energy": 3}}}])
    table.turn("kli", through="1.32.final", breaks=[{"system": {"name": "tractor"}}],
               entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 0}}])
    seal_allocation(table, "fed", {"turn": 1, "units": {"CA": {"speed": 4, "systems": 6}}})
    seal_allocation(table, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "systems": 6}}})
    assert asked(table) == [("kli", "auction")]
    return table


@pytest.fixture
def systems_auction(base_systems_auction: Table, tmp_path: Path) -> Table:
    return private(base_systems_auction, tmp_path)


def test_tractor_auction__a_bid_back_beyond_the_ships_power_is_refused(systems_auction: Table) -> None:
    """Threat: kli, asked in the auction, outbids fed with energy the D7 does not have (21 of its power 20), so
    fed gives up the hold. Defence: what a ship has spent is public, so the bid is refused in kli's own commit
    (`rules.no-energy` at the entry's line), and the sealed allocation would fail its audit at the end."""
    systems_auction.edit("kli", entries=[{**TRACTOR_BACK, "do": {"tractor": {"target": "CA", "energy": 21}}}])
    line = line_of(systems_auction, "report/turn-01.yaml", "energy: 21")
    error = refused(systems_auction, "yield", who="kli", rule="rules.no-energy", where=f"report/turn-01.yaml:{line}")
    assert "power 20" in error


def test_tractor_auction__the_same_bid_by_plain_git_is_found(systems_auction: Table) -> None:
    systems_auction.edit("kli", entries=[{**TRACTOR_BACK, "do": {"tractor": {"target": "CA", "energy": 21}}}])
    line = line_of(systems_auction, "report/turn-01.yaml", "energy: 21")
    head = sneak_as(systems_auction, "kli", "kli: 21 against your 3")
    got = [(f["rule"], f.get("file"), f.get("line"), f.get("commit")) for f in verified_findings(systems_auction)]
    assert ("rules.no-energy", "report/turn-01.yaml", line, head) in got, got


def test_tractor_auction__the_answer_lowers_the_other_sides_bid(systems_auction: Table) -> None:
    """Threat: kli, holding control only to answer, edits fed's bid from 3 down to 1 and then outbids it.
    Defence: an entry is its author's: `ownership.foreign-entry` at the edited line, nothing changed."""
    report = systems_auction.repo_dir / "report/turn-01.yaml"
    report.write_text(report.read_text().replace("energy: 3", "energy: 1"))
    systems_auction.edit("kli", entries=[TRACTOR_BACK])
    line = line_of(systems_auction, "report/turn-01.yaml", "energy: 1")
    refused(systems_auction, "yield", who="kli", rule="ownership.foreign-entry", where=f"report/turn-01.yaml:{line}")


def test_tractor_auction__an_answer_for_the_other_sides_ship(systems_auction: Table) -> None:
    """Threat: kli answers with a bid made for fed's CA (a tiny one that would count as the CA's highest bid if
    the ruleset took bids by target). Defence: a unit acts only for its owner (`rules.illegal-action`)."""
    systems_auction.edit("kli", entries=[{"at": "1.1.fire", "unit": "CA",
                                          "do": {"tractor": {"target": "D7", "energy": 1}}}])
    error = refused(systems_auction, "yield", who="kli", rule="rules.illegal-action", where="report/turn-01.yaml:5")
    assert "CA belongs to fed, not to kli" in error


def test_tractor_auction__the_bidder_raises_before_he_is_asked(systems_auction: Table) -> None:
    """Threat: fed, seeing kli asked, slips in a raise out of turn so kli answers a bid he never saw. Defence: only
    the player asked in the auction may add to it (`signature.not-in-control`)."""
    systems_auction.edit("fed", entries=[{"at": "1.1.fire", "unit": "CA",
                                          "do": {"tractor": {"target": "D7", "energy": 6}}}])
    refused(systems_auction, "yield", who="fed", rule="signature.not-in-control", where="status.yaml")


def test_tractor_auction__an_honest_answer_is_taken_and_asks_the_bidder_again(systems_auction: Table) -> None:
    """Not a threat: kli bids back 4; fed, whose {system: {name: tractor}} it meets, is asked next (a raise)."""
    systems_auction.turn("kli", entries=[TRACTOR_BACK])
    assert asked(systems_auction) == [("fed", "auction")]


# === tac-damage: damage allocation dice (docs/threats.md "Damage allocation dice"; docs/tactical.md "Damage hits
# systems") =========================================================================================================
# A duel with a damage allocation table: D7 has no shields, so fed's shot at 1.4.fire goes all to internals, and at
# 1.4.damage kli owes one die per internal point for his own ship.

DAMAGE_DUEL = (SEALED_DUEL.replace("id: tactical-bad", "id: tactical-damage").replace("  allocation: sealed\n", "")
               .replace('D7, owner: kli, hex: "0810", facing: E, speed: 0, turn_mode: 2, shields: [20, 20, 20, 20, '
                        '20, 20],', 'D7, owner: kli, hex: "0810", facing: E, speed: 0, turn_mode: 2, boxes: '
                        '{power: 2},')
               .replace("  costs: {speed_point: 1}\n", "  costs: {speed_point: 1}\n  damage_allocation:\n    rolls: "
                        "[[hull], [long], [weapon], [power], [hull], [power]]\n"))
DAMAGE_REF = "1.4.damage/D7/1"

from test_tactical_cli_bad_input import pending as tactical_pending  # noqa: E402


@pytest.fixture(scope="module")
def base_damage_owed(tmp_path_factory: pytest.TempPathFactory) -> Table:
    from conftest import GAME_ID, _build

    assert "damage_allocation" in DAMAGE_DUEL and "boxes: {power: 2}" in DAMAGE_DUEL
    root = tmp_path_factory.mktemp("damage-dice")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(DAMAGE_DUEL)
    table = _build(root / "started", str(root / "template"), GAME_ID)
    table.turn("fed", through="1.8.damage", entries=[{"at": "1.4.fire", "unit": "CA",
                                                        "do": {"fire": {"weapon": "ph1", "target": "D7"}}}])
    table.turn("kli", through="1.32.final")
    for _ in range(12):  # fed rolls his shot, kli contributes, fed reveals: the shot is scored
        who, kind = tactical_pending(table)[0]
        if kind == "roll" and who == "kli":
            break
        if kind == "roll":
            cli(table, "roll", "--for", "CA ph1", "--ref", SHOT, who="fed")
        cli(table, "yield", who=who)
    assert tactical_pending(table)[0] == ("kli", "roll"), tactical_pending(table)
    return table


@pytest.fixture
def damage_owed(base_damage_owed: Table, tmp_path: Path) -> Table:
    return private(base_damage_owed, tmp_path)


def test_damage_dice__the_firer_rolls_the_target_s_damage_allocation(damage_owed: Table) -> None:
    """Threat: fed, whose shot did the damage, announces the die that allocates it on kli's ship (he would learn
    it first, or withhold its reveal and lose the roll). Defence: the damage allocation dice are the damaged
    unit's owner's (the ref names his unit: dice.wrong-roller); `pbem roll` refuses fed, nothing is written, and
    kli, who owes them, rolls and plays on."""
    status = damage_owed.data("status.yaml")
    assert DAMAGE_REF in json.dumps(status["pending"])
    refused(damage_owed, "roll", "--for", "D7 internal", "--ref", DAMAGE_REF, who="fed", rule="dice.wrong-roller")
    assert damage_owed.data("status.yaml") == status
    cli(damage_owed, "roll", "--for", "D7 internal", "--ref", DAMAGE_REF, who="kli")
    cli(damage_owed, "yield", who="kli")
    assert tactical_pending(damage_owed)[0] != ("kli", "roll")


# === the game page: `pbem site` shows what players wrote, and writes only where it may (docs/pictures.md) =========

def test_game_page__markup_in_a_note_and_a_purpose_stays_data_in_every_file_of_the_site(played: Table,
                                                                                        tmp_path: Path) -> None:
    """Threat: `<script>` in a dice purpose and a yield note (legal text) run by whoever opens the game page, its
    CI artifact or its published copy. Defence: the data files hold it JSON-encoded with < > & escaped, the page
    sets it with textContent (tests/test_site_browser.py runs it in Chromium), index.html escapes the rest."""
    script = "<script>alert(1)</script>"
    assert played.cli("roll", "--for", f"{script} purpose", who="fed").exit_code == 0
    played.edit("fed", **FED_GOES_ON)
    assert played.cli("yield", "-m", f"{script} note", who="fed").exit_code == 0
    done = played.pbem("site", str(tmp_path / "site"), who="fed")
    assert done.returncode == 0, done.stderr
    files = [p for p in (tmp_path / "site").rglob("*") if p.is_file()]
    assert all("<script>alert" not in p.read_text() for p in files)
    assert any("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e note" in p.read_text() for p in files)


def test_game_page__the_site_written_over_the_game_repository_is_refused(played: Table) -> None:
    """Threat: `pbem site .` (or any folder of someone's files) replacing the game's clone with a web site.
    Defence: only a missing or empty folder, or one `pbem site` wrote before (its marker file), is written."""
    before = played.snapshot()
    done = played.pbem("site", ".", who="fed")
    assert done.returncode == 2 and "[render.site-not-empty]" in done.stderr
    assert played.snapshot() == before


# === msg-fix: a fresh invite code set at `pbem init --code` (DESIGN §7.2, seed 001) ===========================

def test_invite_code__joining_with_the_templates_code_where_the_founder_set_a_fresh_one(tmp_path: Path) -> None:
    """Threat: carol read the template's invite code (named in games/dow-standard/game.yaml's comment) and claims
    France in a game whose founder set a fresh code with `pbem init --code`, by pbem and by plain git with a seat
    signed by the template code's key. Defence: game.yaml holds only the fresh code's salted hash, with a salt of
    its own; pbem refuses the join, and every verifier refuses the claim the old code signed
    (setup.bad-invite-code)."""
    from gitutil import Sandbox
    from pbem.formats.writer import dump_flow
    from pbem.rulesets.dow import invite

    box = Sandbox(tmp_path)
    box.new_key("alice")
    _, carol = box.new_key("carol")
    table = Table(tmp_path)
    made = table.pbem("init", str(table.repo_dir), "--template", "dow-standard", "--id", "dow-1", "--code",
                      "a long fresh code", who="alice", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    refused = table.pbem("join", "--as", "france", "--code", "IReadTheGameDescription", who="carol")
    assert refused.returncode == 1 and "[setup.bad-invite-code]" in refused.stderr
    template = (Path(__file__).resolve().parents[1] / "games" / "dow-standard" / "game.yaml").read_text()
    old_hash = next(line.split('"')[1] for line in template.splitlines() if "invite_hash:" in line)
    key_line = carol.public.to_line()
    proof = invite.proof(old_hash, "IReadTheGameDescription", "dow-1", "france", key_line)
    assert proof is not None  # a genuine signature of the template's code over carol's claim
    text = table.read("game.yaml")
    seat = "  - {id: france, name: France}"
    assert seat in text
    table.write("game.yaml", text.replace(seat, "  - " + dump_flow(
        {"id": "france", "name": "France", "key": key_line, "invite": proof})))
    bad = table.git_commit("join: france takes a seat", signer="carol")
    rejected(table, bad, "setup.bad-invite-code", "game.yaml")


# === fair-rest: a seat's own new key, and agreements completed by signatures landing at once ======================

def test_seat__a_lost_key_seat_with_a_forged_signature_of_its_player_is_still_refused_by_the_gates(
        started: Table) -> None:
    """Threat: the gates let a `seat` (why: lost-key) through at once when the seat's own player signed it (he
    replaces a key he still holds: nothing is taken from him). fed proposes kli's seat for carol's key and writes
    a "kli" signature made with his own key, to pass as kli's consent. Defence: the gate counts only a signature
    that verifies under kli's key in game.yaml: agreement.not-overdue, and every verifier refuses the forged
    signature (agreement.signature / agreement.foreign-signature)."""
    server = serve(started)
    tip = server_ref(server)
    control = started.data("status.yaml")["control"]
    other = "kli" if control == "fed" else "fed"
    raw: dict[str, Any] = {"id": f"{control}-0002", "kind": "seat", "by": control,
                           "content": {"seat": other, "key": _carol_key(started), "why": "lost-key"},
                           "signatures": {}}
    raw["signatures"] = {control: agreement_sign(raw, control), other: agreement_sign(raw, control)}
    started.write(f"agreements/{raw['id']}.yaml", dump_mapping(raw))
    bad = started.sneak(control, f"{control}: proposes {raw['id']}")
    rejected(started, bad, "agreement.foreign-signature", f"agreements/{raw['id']}.yaml")
    push_refused(push(started), "agreement.not-overdue")
    assert server_ref(server) == tip


def test_seat__a_player_replacing_his_own_key_lands_at_once_and_nobody_else_can_sign_it_for_him(
        started: Table) -> None:
    """Threat: the other way round, a player who still holds his key and fears it was copied cannot replace it
    until he is "overdue" (he never is: he plays), so a stolen key stays good. Defence: a lost-key seat that
    its own player signed takes nothing without his signature: the gates accept it as soon as the others sign
    (here fed, the only other seat), and the new key plays; the old key is refused from then on."""
    server = serve(started)
    control = started.data("status.yaml")["control"]
    other = "kli" if control == "fed" else "fed"
    cli(started, "agree", "seat", "--seat", other, "--new-key", _carol_key(started), "--why", "lost-key",
        who=other)
    aid = f"{other}-0001"
    assert (started.repo_dir / "agreements" / f"{aid}.yaml").exists()
    cli(started, "sign", aid, who=control)
    assert push(started).returncode == 0, push(started).stderr
    assert server_ref(server) == started.head()
    assert _carol_key(started) in started.read("game.yaml")
    refused(started, "agree", "amend", "--deadline", "96h", who=other, rule="signature.unknown-key")


# === tac-audit: the whole battle's energy audit, arming and batteries across turns (docs/threats.md "The whole
# battle's energy audit") ===
# The secret-speeds duel of the fair-tactical section with CA given a photon (pt1, arms over 2 turns, unarmed at
# the start) and batteries (4, charged 3 at the start), D7 empty batteries (4): both owe their allocations at the
# end of turn 1; each test seals them, plays the one-turn battle out and opens them.

from test_tactical_audit import BATTERY_DUEL  # noqa: E402


@pytest.fixture(scope="module")
def base_battery_duel(tmp_path_factory: pytest.TempPathFactory) -> Table:
    from conftest import GAME_ID, _build

    assert "battery_charge: 3" in BATTERY_DUEL and "batteries: 4, weapons" in BATTERY_DUEL and "photon" in BATTERY_DUEL
    root = tmp_path_factory.mktemp("attacks-batteries")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(BATTERY_DUEL)
    table = _build(root / "started", str(root / "template"), GAME_ID)
    table.turn("fed", through="1.32.final")
    table.turn("kli", through="1.32.final", breaks=[{"at": "1.2.move"}])
    return table


@pytest.fixture
def battery_duel(base_battery_duel: Table, tmp_path: Path) -> Table:
    return copy_table(base_battery_duel, tmp_path / "table")


def _audited_at_the_end(table: Table, fed: dict[str, Any], kli: dict[str, Any], rule: str, who: str,
                        words: str) -> None:
    """`who`'s `pbem seal` refuses his allocation (read with the turns before it, at its unit's line), so he
    seals it by hand; the other seals with pbem; the battle is played out. `who`'s reveal is refused with `rule`
    at his box's key line by his own pbem, and found in a plain-git reveal by the verifier and the hook; the
    other's reveal lands, and he records the forfeit: the game ends."""
    sid, other = f"{who}-0001", "kli" if who == "fed" else "fed"
    values = {"fed": {"turn": 1, "units": {"CA": fed}}, "kli": {"turn": 1, "units": {"D7": kli}}}
    source = table.root / "cheat.json"
    source.write_text(json.dumps(values[who]))
    error = cheat_refused(table, "seal", "allocation", str(source), who=who, rule=rule)
    assert f"{source}:1:" in error and words in error, error
    for player in ("kli", "fed"):
        if player == who:
            hand_seal(table, who, values[who])
        else:
            seal_allocation(table, player, values[player])
    # his own pbem, alone able to open his box, warns him while the battle goes on; the other's says nothing
    said = cli(table, "status", who=who)
    assert f"warning: your sealed allocation {sid} does not add up across the battle" in said and rule in said, said
    assert "add up across the battle" not in cli(table, "status", who=other)
    end_battle(table)
    error = refused(table, "yield", who=who, rule=rule, where=key_line(table, sid))
    assert words in error, error
    copy = copy_table(table, table.root / "sneaked")
    _by_hand(copy, who, sid, "key")
    rejected(copy, sneak_as(copy, who, f"{who}: my allocation"), rule, f"secrets/{sid}.yaml")
    cli(table, "yield", who=other)
    cli(table, "agree", "end", "--result", "forfeit", "--player", who, "--note", "allocation does not add up",
        who=other)
    assert table.data("status.yaml")["over"] is True


def test_battle_audit__holding_a_weapon_never_armed(battery_duel: Table) -> None:
    """Threat: fed pays only the cheap `hold` (1) for his photon in turn 1, as if it had been armed before, so
    that it would be ready at once (each turn's own audit took a hold for an earlier arming); `pbem seal`
    refuses it, so he seals by hand. Defence: the audit at the end reads his allocations from the start: pt1
    was never armed, so the hold is rules.held-unarmed at the key line of that turn's box."""
    _audited_at_the_end(battery_duel, {"speed": 0, "arming": {"pt1": "hold"}}, {"speed": 0},
                        "rules.held-unarmed", "fed", "pt1 held, but it is not armed at the start of the turn")


def test_battle_audit__drawing_a_battery_never_charged(battery_duel: Table) -> None:
    """Threat: kli's batteries start empty; he draws 4 from them in turn 1 to allocate 14 energy on power 10,
    hoping the audit counts only his power against the lines. Defence: the charge is carried from the start
    (setup battery_charge, default 0) and every draw is checked against it: rules.battery-overdrawn."""
    _audited_at_the_end(battery_duel, {"speed": 0}, {"speed": 0, "from_batteries": 4, "reserve": 14},
                        "rules.battery-overdrawn", "kli", "draws 4 from its batteries, which carried 0 into the turn")


def test_battle_audit__charging_over_capacity(battery_duel: Table) -> None:
    """Threat: fed's batteries (4) already hold 3; he puts 3 more in, counting it as a reserve that pays his
    lines' shortfall later. Defence: what the batteries carry in counts against their room:
    rules.battery-overcharged (pbem seal alone cannot know it: the charge comes from the turns before)."""
    _audited_at_the_end(battery_duel, {"speed": 0, "batteries": 3}, {"speed": 0},
                        "rules.battery-overcharged", "fed", "puts 3 into its batteries, which hold 3 of 4 (room for 1)")


def test_battle_audit__the_honest_battery_and_arming_pass(battery_duel: Table) -> None:
    """The control: fed arms pt1 (2) and draws his 3 of stored charge beside his power 10 (13 allocated), kli
    charges 4; both reveals land and the game verifies."""
    seal_allocation(battery_duel, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "batteries": 4}}})
    seal_allocation(battery_duel, "fed", {"turn": 1, "units": {"CA": {"speed": 0, "arming": {"pt1": "arm"},
                                                                       "from_batteries": 3, "reserve": 11}}})
    end_battle(battery_duel)
    cli(battery_duel, "yield", who="fed")
    cli(battery_duel, "yield", who="kli")
    assert verdict(battery_duel)[0] == 0


# === tac-demo: the tractor auction's obvious abuses (docs/threats.md "The tractor auction: five obvious abuses") ===
# From `systems_auction` (above): fed bid 3 for the D7 at 1.1.fire, the action auction asks kli; each captain sealed
# a `systems` line of 6 for turn 1. Bidding from two clones at the same moment: tests/test_tractor_race.py.

from pbem.services.workspace import Workspace  # noqa: E402

FED_RAISE = {"at": "1.1.fire", "unit": "CA", "do": {"tractor": {"target": "D7", "energy": 5}}}
BID_AT_D7 = {"unit": "CA", "do": {"tractor": {"target": "D7", "energy": 3}}}


def tractor_uses(table: Table, unit: str) -> int:
    """The tractor points `unit` has spent (paid from its allocation's `systems` line), where replay stands."""
    head = Workspace.open(table.repo_dir).head()
    assert head is not None and head.stop is not None
    return sum(1 for _, _, name in head.stop.checkpoint.state.unit(unit).used if name == "tractor")


def close_auction(table: Table) -> None:
    """Everybody asked passes until the auction is over and 1.1.fire resolves."""
    while asked(table) and asked(table)[0][1] == "auction":
        cli(table, "yield", who=asked(table)[0][0])


def test_tractor_auction__bidding_twice_in_one_answer_counts_the_highest_once(systems_auction: Table) -> None:
    """Threat: kli answers with two bids in one commit (4 and 6), hoping both are counted against fed's 3 or that
    only the lower is paid. Defence: a unit's highest bid at the step is its bid, and it is paid once, won or lost
    (6 uses of the tractor on his record, audited against his sealed `systems` line), never 4 + 6."""
    systems_auction.turn("kli", entries=[TRACTOR_BACK, {**TRACTOR_BACK, "do": {"tractor": {"target": "CA",
                                                                                             "energy": 6}}}])
    close_auction(systems_auction)
    log = systems_auction.cli("log", who="kli").output
    assert "1.1.fire CA tractor on D7: bids CA 3, D7 6: resisted" in log, log
    assert (tractor_uses(systems_auction, "D7"), tractor_uses(systems_auction, "CA")) == (6, 3)


def test_tractor_auction__a_bid_slipped_out_of_the_auction_by_plain_git_is_found(systems_auction: Table) -> None:
    """Threat: fed, not asked (kli is), commits a raise with plain git, so kli would answer a bid he never saw
    (`pbem yield` refuses it: `tractor_auction__the_bidder_raises_before_he_is_asked`). Defence: every verifier
    finds the commit out of control (`signature.not-in-control`); the hook refuses its push
    (tests/test_tractor_race.py)."""
    systems_auction.edit("fed", entries=[FED_RAISE])
    bad = sneak_as(systems_auction, "fed", "fed: 5, before you answer")
    assert "signature.not-in-control" in rejected(systems_auction, bad, "signature.not-in-control")


def test_tractor_auction__a_bid_beyond_the_sealed_allocation_is_refused_at_the_reveal(systems_auction: Table) -> None:
    """Threat: kli outbids fed with 7 points while his sealed allocation gives the systems 6 (within the D7's power
    20, so nothing public refuses it). Defence: every point bid is a use of the tractor on his record, and his
    allocation is audited when revealed: `pbem yield` refuses the reveal at the secret's line; by plain git,
    `pbem verify` finds it (`rules.allocation`)."""
    systems_auction.turn("kli", entries=[{**TRACTOR_BACK, "do": {"tractor": {"target": "CA", "energy": 7}}}])
    close_auction(systems_auction)
    systems_auction.turn("fed", through="1.32.final")
    mine = next(p.name for p in (systems_auction.repo_dir / "secrets").iterdir()
                if systems_auction.data(f"secrets/{p.name}")["owner"] == "kli")
    while asked(systems_auction)[0] != ("kli", "secret"):
        cli(systems_auction, "yield", who=asked(systems_auction)[0][0])
    cli(systems_auction, "reveal", mine[:-len(".yaml")], who="kli")
    line = refused(systems_auction, "yield", who="kli", rule="rules.allocation", where=f"secrets/{mine}" + A_LINE)
    assert "cost 7, 6 allocated" in line, line
    bad = sneak_as(systems_auction, "kli", "kli: revealed")
    assert "rules.allocation" in rejected(systems_auction, bad, "rules.allocation", f"secrets/{mine}")


def test_tractor_auction__a_bid_for_a_ship_out_of_the_beams_range(tmp_path: Path) -> None:
    """Threat: fed bids for the D7 two hexes off, beyond setup.tractor.range 1, to hold what no beam reaches (and
    make kli answer an auction). Defence: written before the positions at 1.1.fire are known (they depend on
    kli's orders), the bid is judged when replay reaches it: void, with its reason in `pbem log`: no auction, no
    hold, no energy spent; the game verifies and fed goes on. (Where the positions are known when it is written,
    the bid is refused in its author's commit, `rules.system-range`: test_tactical_systems.py's bad input.)"""
    text = (Path(__file__).resolve().parents[1] / "games/tactical-systems/game.yaml").read_text()
    assert text.count('hex: "1016"') == 1
    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "game.yaml").write_text(text.replace('hex: "1016"', 'hex: "1017"'))
    far = build_table(tmp_path / "far", str(tmp_path / "template"), "systems-far")
    far.turn("fed", through="1.1.damage", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 4}},
                                                   {**BID_AT_D7, "at": "1.1.fire"}])
    far.turn("kli", through="1.32.final", breaks=[{"system": {"name": "tractor"}}],
             entries=[{"at": "1.0.alloc", "unit": "D7", "do": {"speed": 0}}])
    seal_allocation(far, "fed", {"turn": 1, "units": {"CA": {"speed": 4, "systems": 6}}})
    seal_allocation(far, "kli", {"turn": 1, "units": {"D7": {"speed": 0, "systems": 6}}})
    assert asked(far) == [("fed", "horizon")]  # nobody was asked in an auction
    log = far.cli("log", who="fed").output
    assert "fed's entry at 1.1.fire is void: CA cannot tractor D7 at 1.1.fire: D7 is at range 2, beyond the " \
        "tractor's range 1" in log, log
    assert tractor_uses(far, "CA") == 0 and "held" not in log
    assert far.cli("verify", who="kli").exit_code == 0
    far.turn("fed", through="1.8.damage")  # the player in control goes on


def test_tractor_auction__a_bid_after_the_auction_closed_is_refused(systems_auction: Table) -> None:
    """Threat: once the auction is over and 1.1.fire resolved (kli resisted, 4 against 3), fed, back in control,
    adds a raise at 1.1.fire to turn the result round. Defence: 1.1.fire is behind the firm marker now: its
    entries are final (`firm.changed`); nothing changes, and the tractor stays resisted."""
    systems_auction.turn("kli", entries=[TRACTOR_BACK])
    close_auction(systems_auction)
    assert asked(systems_auction)[0][0] == "fed" and systems_auction.data("status.yaml")["firm"] != "1.1.fire"
    systems_auction.edit("fed", entries=[FED_RAISE])
    line = line_of(systems_auction, "report/turn-01.yaml", "energy: 5")
    refused(systems_auction, "yield", who="fed", rule="firm.changed", where=f"report/turn-01.yaml:{line}")
    assert "bids CA 3, D7 4: resisted" in systems_auction.cli("log", who="fed").output


# === dow-rest: press raced by the end of a phase, a replacement racing the last seal (docs/threats.md "What
# `pbem push` leaves out") ==============================================================================================

def _press_files(*messages: Mapping[str, Any]) -> dict[str, bytes]:
    """press/germany.yaml holding `messages`, written as pbem writes them (one flow mapping per line)."""
    from pbem.formats.writer import dump_flow

    return {"press/germany.yaml": ("messages:\n" + "".join(f"  - {dump_flow(dict(m))}\n" for m in messages)
                                   ).encode()}


def test_press_race__a_message_backdated_into_a_closed_phase_by_plain_git_is_refused(dow_sealing: Any) -> None:
    """Threat: `pbem push` dates press again when the phase it was written for closed; germany instead keeps the
    old date by hand, so that his declaration counts as recognised in S1901M (realised with that phase's changes,
    before the retreats). Defence: the replay dates only with the phase open now, and every verifier judges the
    date of each message sent (press.bad-time)."""
    from pbem.formats.writer import dump_flow

    dow_sealing.phase()
    assert dow_sealing.status()["firm"] != "S1901M"
    files = dow_sealing.ws().head_files()
    line = dump_flow({"by": "germany", "at": "S1901M", "declare": {"to": "france", "state": "WAR"}})
    files["press/germany.yaml"] = files["press/germany.yaml"] + f"  - {line}\n".encode()
    bad = dow_sealing.sneak("germany", files, "press: germany declares WAR on france")
    assert ("press.bad-time", bad) in dow_sealing.verify()


@pytest.mark.parametrize("text", ["at: S1901M", "{by: france, at: F1901M}", "plain words, at S1901M too"])
def test_press_race__redating_changes_only_the_date_of_my_new_messages(text: str) -> None:
    """Threat: the replay that dates my press again rewrites more than the date: a message already sent (mine or
    one of an older file), or the text of the new one when it looks like a date. Defence: only the lines the
    commit appends are read, each one only when writing it back gives the same line, and only its `at` changes."""
    from pbem.services import left_out

    sent = {"by": "germany", "at": "S1901M", "say": text}
    parent = _press_files(sent)
    mine = _press_files(sent, {"by": "germany", "at": "S1901M", "say": text})
    files, written, added = left_out.redate(parent, mine, "F1901M")
    assert written == "S1901M" and [m["say"] for m in added] == [text]
    assert files == _press_files(sent, {"by": "germany", "at": "F1901M", "say": text})
    assert left_out.redate(parent, mine, "S1901M")[0] == mine  # the phase is still open: nothing changes


def test_press_race__a_commit_that_does_more_than_press_is_never_redated_nor_left_out() -> None:
    """Threat: a commit holding press and something else (a sealed set, an edit of the game) is dated again or
    silently left out of the replay, so what else it did is lost or lands in a phase it was not made for.
    Defence: only a commit that changes press files alone (status.yaml aside) is dated again or left out, and a
    sealed set only when it is nothing but a replacement refused as late; push refuses anything else
    (push.rebase-illegal)."""
    from pbem.errors import Finding
    from pbem.services import left_out

    parent = _press_files()
    mixed = {**_press_files({"by": "germany", "at": "S1901M", "say": "and my orders"}),
             "secrets/germany-0001.yaml": b"id: germany-0001\n"}
    assert left_out.redate(parent, mixed, "F1901M") == (mixed, None, [])
    late = Finding("secret.late-replace", "every player has sealed")
    assert left_out.leave_out("c0ffee", parent, mixed, [late], [], None, "F1901M") is None
    replacement = b"id: germany-0002\nkind: orders\nstep: S1901M\nreplaces: germany-0001\n"
    edited = {"secrets/germany-0002.yaml": replacement, "game.yaml": b"changed\n"}
    assert left_out.leave_out("c0ffee", {"game.yaml": b"old\n"}, edited, [late], [], None, "F1901M") is None
    alone = left_out.leave_out("c0ffee", {}, {"secrets/germany-0002.yaml": replacement}, [late], [], None, None)
    assert alone is not None and alone.replaced[0].replaces == "germany-0001"
    other = Finding("secret.bad-replace", "germany-0001 is france's")
    assert left_out.leave_out("c0ffee", {}, {"secrets/germany-0002.yaml": replacement}, [other], [], None,
                              None) is None


# === fair-launch: launches simultaneous within their step (docs/threats.md "Launches at the activity step") =======
# From `launch_auction`: kli launched S1 at 1.5.activity (its target sealed in that commit), which meets fed's
# {launch: {}}: the action auction at 1.5.activity asks fed, who may launch in reply at that very step or pass.
# fed's CA has a bay with no craft aboard; both ships carry two drone racks (dr1, dr2).

from conftest import _build as build_launch_table  # noqa: E402
from test_dice_flow import ANYWHERE  # noqa: E402
from test_simultaneous_launch import RACE_GAME, launch_turn, seal_target  # noqa: E402

LAUNCH_GAME = (RACE_GAME.replace("id: launch-race", "id: launch-attack").replace("turns: 1", "turns: 2")
               .replace("weapons: [{id: dr1, type: drone, arcs: [A]}]",
                        "weapons: [{id: dr1, type: drone, arcs: [A]}, {id: dr2, type: drone, arcs: [A]}]")
               .replace("hull: 50, weapons", "hull: 50, systems: [bay], weapons", 1))
FED_REPLY = {"at": "1.5.activity", "unit": "CA", "do": {"launch": {"weapon": "dr1", "as": "F1"}}}


@pytest.fixture(scope="module")
def base_launch_auction(tmp_path_factory: pytest.TempPathFactory) -> Table:
    root = tmp_path_factory.mktemp("launch-attack")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(LAUNCH_GAME)
    table = build_launch_table(root / "table", str(root / "template"), "launch-attack")
    table.turn("fed", through="1.32.final", breaks=[{"launch": {}}])
    table.edit("kli", through="1.32.final", breaks=[{"launch": {}}])
    launch_turn(table, "kli", "D7", "S1", "CA", root)
    assert asked(table) == [("fed", "auction")]
    return table


@pytest.fixture
def launch_auction(base_launch_auction: Table, tmp_path: Path) -> Table:
    return private(base_launch_auction, tmp_path)


def _passed(table: Table) -> None:
    """fed passes: the auction at 1.5.activity is over and the step resolved (S1 is out); kli holds control at his
    horizon, 2.0.alloc."""
    table.turn("fed")
    assert asked(table)[0] == ("kli", "horizon") and table.data("status.yaml")["firm"] == "2.0.alloc"


def test_fair_launch__a_launch_added_at_an_activity_step_already_resolved(launch_auction: Table) -> None:
    """Threat: kli, holding control later, adds a launch at 1.3.activity, a step resolved long ago, so his drone
    is out two impulses earlier than anyone could answer. Defence: entries before the firm point are firm
    (`firm.changed`), by pbem and by plain git."""
    _passed(launch_auction)
    launch_auction.edit("kli", entries=[{"at": "1.3.activity", "unit": "D7",
                                         "do": {"launch": {"weapon": "dr2", "as": "S2"}}}])
    refused(launch_auction, "yield", who="kli", rule="firm.changed", where="report/turn-01.yaml:3", real=False)
    bad = sneak_as(launch_auction, "kli", "kli: an early drone")
    rejected(launch_auction, bad, "firm.changed")


def test_fair_launch__the_closed_auction_re_opened_by_the_launcher(launch_auction: Table) -> None:
    """Threat: the auction at 1.5.activity is over (fed passed, the step resolved); kli adds a second launch there,
    to re-open it knowing fed launched nothing. Defence: the step is firm (`firm.changed`); nothing changes."""
    _passed(launch_auction)
    launch_auction.edit("kli", entries=[{"at": "1.5.activity", "unit": "D7",
                                         "do": {"launch": {"weapon": "dr2", "as": "S2"}}}])
    refused(launch_auction, "yield", who="kli", rule="firm.changed", where="report/turn-01.yaml:3", real=False)
    bad = sneak_as(launch_auction, "kli", "kli: one more at 1.5")
    rejected(launch_auction, bad, "firm.changed")


def test_fair_launch__one_rack_launched_twice_in_the_reply(launch_auction: Table, tmp_path: Path) -> None:
    """Threat: fed replies with dr1 twice at 1.5.activity (two drones from one rack), each with its target sealed.
    Defence: one action per unit and slot at a step (a rack is a slot: `("launch", "dr1")`); the second is
    refused in his own commit (`rules.duplicate-action` at its line), by pbem and by plain git."""
    twice = {**FED_REPLY, "do": {"launch": {"weapon": "dr1", "as": "F2"}}}
    launch_auction.edit("fed", entries=[FED_REPLY, twice])
    for name in ("F1", "F2"):
        seal_target(launch_auction, "fed", name, "D7", tmp_path)
    refused(launch_auction, "yield", who="fed", rule="rules.duplicate-action", where="report/turn-01.yaml:4",
            real=False)
    bad = sneak_as(launch_auction, "fed", "fed: two from one rack")
    rejected(launch_auction, bad, "rules.duplicate-action", "report/turn-01.yaml")


def test_fair_launch__a_craft_launched_from_an_empty_bay_in_the_reply(launch_auction: Table) -> None:
    """Threat: fed answers the auction with a shuttle his bay does not hold. Defence: `rules.bay-empty` at his
    entry, by pbem and by plain git."""
    launch_auction.edit("fed", entries=[{"at": "1.5.activity", "unit": "CA", "do": {"launch": {"craft": "SH1"}}}])
    refused(launch_auction, "yield", who="fed", rule="rules.bay-empty", where="report/turn-01.yaml:3", real=False)
    bad = sneak_as(launch_auction, "fed", "fed: a shuttle from nowhere")
    rejected(launch_auction, bad, "rules.bay-empty")


def test_fair_launch__a_reply_launch_by_one_who_is_not_asked(launch_auction: Table) -> None:
    """Threat: kli, the launcher, not the one asked, slips a second drone into the open auction before fed
    answers. Defence: only the player asked holds control and adds to the auction (`signature.not-in-control`,
    through pbem and by plain git alike)."""
    launch_auction.edit("kli", entries=[{"at": "1.5.activity", "unit": "D7",
                                         "do": {"launch": {"weapon": "dr2", "as": "S2"}}}])
    refused(launch_auction, "yield", who="kli", rule="signature.not-in-control", where=ANYWHERE, real=False)
    bad = sneak_as(launch_auction, "kli", "kli: me too, before he answers")
    assert rejected(launch_auction, bad, "signature.not-in-control") == {"signature.not-in-control"}


def test_fair_launch__a_reply_launch_signed_by_a_stranger(launch_auction: Table) -> None:
    """Threat: carol, who holds no seat, signs fed's reply launch by plain git. Defence: only a seat's key signs
    a turn (`signature.unknown-key`)."""
    launch_auction.edit("fed", entries=[FED_REPLY])
    bad = launch_auction.sneak("carol", "carol: a launch for the CA")
    rejected(launch_auction, bad, "signature.unknown-key")


def test_fair_launch__the_honest_reply_lands_and_asks_the_launcher(launch_auction: Table, tmp_path: Path) -> None:
    """Not a threat: fed's reply with its target sealed in the same turn is taken at 1.5.activity and meets kli's
    {launch: {}}: kli is asked there next, before anything resolves."""
    launch_turn(launch_auction, "fed", "CA", "F1", "D7", tmp_path)
    assert asked(launch_auction) == [("kli", "auction")]
    assert launch_auction.data("status.yaml")["firm"] == "1.5.activity"


def test_fair_launch__a_reply_launch_whose_target_waits_for_the_next_round(launch_auction: Table) -> None:
    """Threat: fed launches in reply without a target, to choose it in round 2 once he sees what kli does next.
    Defence: a launch's target is sealed in the launch's own commit (`secret.missing-target` at the entry)."""
    launch_auction.edit("fed", entries=[FED_REPLY])
    refused(launch_auction, "yield", who="fed", rule="secret.missing-target", where="report/turn-01.yaml:3",
            real=False)


# --- seat-dice: a seat given to a new key while its old key sealed a die (docs/dice.md "A seat given to a new key")

from test_agreement_kinds import carol_pub as _new_holder_pub  # noqa: E402
from test_seat_fair import newest as _newest_agreement  # noqa: E402


def _seat_changed_after_the_die(fire_owed: Table) -> str:
    """fed rolls for his shot, kli contributes (fed can know his die now), and fed's seat goes to carol's key
    by a lost-key seat that fed proposes himself and kli signs. Returns the seat agreement's id."""
    cli(fire_owed, "roll", "--for", "CA ph1", "--ref", SHOT, who="fed")
    cli(fire_owed, "yield", who="fed")
    cli(fire_owed, "yield", who="kli")
    assert ("fed", "dice", "reveal owed for dice fed-0001") in pending(fire_owed)
    cli(fire_owed, "agree", "seat", "--seat", "fed", "--new-key", _new_holder_pub(fire_owed), "--why", "lost-key",
        who="fed")
    seat = _newest_agreement(fire_owed, "fed")
    cli(fire_owed, "sign", seat, who="kli")
    assert batch(fire_owed)["withheld"] == {"fed": seat}
    return seat


def test_seat_dice__a_seat_change_to_escape_a_bad_die_loses_the_shot(fire_owed: Table) -> None:
    """Threat: fed sees his die will miss and arranges a seat change before he reveals, hoping the new key
    rolls the shot again. Defence: the seat change withholds the old key's reveal: the rolls are lost, so the
    shot misses (the worst his die could do); with kli's die in before (he was served first), the lost batch
    resolves the step, so no second die is rolled for the shot (dice.unbound-ref: nothing owes one), and the
    batch is never voided (dice.withheld)."""
    seat = _seat_changed_after_the_die(fire_owed)
    assert f"missed: fed's reveal withheld, seat {seat}" in cli(fire_owed, "status", "--plain", who="carol")
    refused(fire_owed, "roll", "--for", "CA ph1 again", "--ref", SHOT, who="carol", rule="dice.unbound-ref")
    raw = batch(fire_owed)
    write_batch(fire_owed, {**raw, "void": {"reason": "the old key is gone"}})
    refused(fire_owed, "yield", who="carol", rule="dice.withheld", where=FED_DIE)
    assert_clean(fire_owed)


def test_seat_dice__the_new_holder_reveals_the_old_die_with_a_forged_value(fire_owed: Table) -> None:
    """Threat: carol, who now holds fed's seat, cannot open the old key's box, so she writes a reveal and
    results of her own choosing (a hit). Defence: the withheld reveal is firm (dice.withheld): `pbem yield`
    refuses it at the batch, and the commit made by plain git is found by `pbem verify`."""
    _seat_changed_after_the_die(fire_owed)
    raw = batch(fire_owed)
    write_batch(fire_owed, {**raw, "reveal": "ab" * 32, "results": [1]})
    refused(fire_owed, "yield", who="carol", rule="dice.withheld", where=FED_DIE)
    sneak_as(fire_owed, "carol", "carol: a reveal of her own for fed's die")
    assert "dice.withheld" in {f["rule"] for f in verified_findings(fire_owed)}


# === fair-20: asked once, contributors still playing (docs/tactical.md "Commits per fire step: nobody is asked
# again for nothing"; docs/dice.md "Who contributes"; docs/threats.md "fair-20") =====================================
# `both_owed`: fed's pass closed the auction at 1.4.fire (kli, who added last, is not asked again). `f20_melee`:
# the three-player melee (tests/test_errata.py) in which rom resigned before fed announced a table die.


def test_fair20_reask__the_last_adder_not_asked_again_slips_in_a_second_shot(both_owed: Table) -> None:
    """Threat: kli added last and is no longer asked at 1.4.fire; holding control for his roll, he adds a second
    shot there, as if he were asked again. Defence: the auction is over for everybody (rules.auction at the
    entry); by plain git the commit is found, and the game goes on with his roll."""
    assert pending(both_owed)[0][:2] == ("kli", "roll")
    both_owed.edit("kli", entries=[{"at": "1.4.fire", "unit": "D7", "do": {"fire": {"weapon": "dr1", "target": "CA"}}}])
    refused(both_owed, "yield", who="kli", rule="rules.auction", where=ANY_LINE("report/turn-01.yaml"))
    bad = sneak_as(both_owed, "kli", "kli: one more at 1.4.fire")
    assert "rules.auction" in rejected(both_owed, bad, "rules.auction", "report/turn-01.yaml")
    both_owed.git("reset", "-q", "--hard", "HEAD~1")
    cli(both_owed, "roll", "--for", "D7 ph1", "--ref", "1.4.fire/D7/ph1", who="kli")
    cli(both_owed, "yield", who="kli")
    assert_clean(both_owed)


def test_fair20_reask__a_status_that_asks_the_last_adder_again_is_found(armed: Table) -> None:
    """Threat: fed, whose pass closes the auction, writes a status that asks kli again (one more round trip for
    kli, and time for fed to see his roll owed first). Defence: the status is what replay says (status.mismatch)."""
    armed.turn("fed", through="1.8.damage",
               entries=[{"at": "1.4.fire", "unit": "CA", "do": {"fire": {"weapon": "ph1", "target": "D7"}}}])
    armed.turn("kli", entries=[{"at": "1.4.fire", "unit": "D7", "do": {"fire": {"weapon": "ph1", "target": "CA"}}}])
    from pbem.formats.writer import dump_mapping

    armed.write_status("fed", "fed: I pass")
    data = json.loads(json.dumps(armed.data("status.yaml")))
    assert data["control"] == "kli" and data["pending"][0]["kind"] == "roll"
    data["pending"] = [{"player": "kli", "at": "1.4.fire", "kind": "auction",
                        "why": "simultaneous actions declared at 1.4.fire: add yours at 1.4.fire or pass (auction "
                               "round 2, seed §7)"}]
    armed.write("status.yaml", dump_mapping(data))
    bad = armed.sneak("fed", "fed: I pass", status="keep")
    assert "status.mismatch" in rejected(armed, bad, "status.mismatch", "status.yaml")


@pytest.fixture(scope="module")
def base_f20_melee(tmp_path_factory: pytest.TempPathFactory) -> Table:
    from test_errata import _melee

    table = _melee(tmp_path_factory.mktemp("f20") / "melee")
    cli(table, "resign", who="rom")
    table.edit("fed", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}])
    cli(table, "roll", "--for", "boarding party", who="fed")
    cli(table, "yield", who="fed")
    return table


@pytest.fixture
def f20_melee(base_f20_melee: Table, tmp_path: Path) -> Table:
    return private(base_f20_melee, tmp_path)


def test_fair20_resign__a_die_announced_after_a_resign_asks_only_the_seats_still_playing(f20_melee: Table) -> None:
    """Not a threat: rom resigned before fed's die, so `pbem roll` names kli alone as its contributor; nobody
    waits on rom (no nmr needed); kli contributes in the clear (one contributor commits nothing first), fed
    reveals, and the die is made of kli's part and fed's secret."""
    raw = batch(f20_melee)
    assert raw["contributors"] == ["kli"]
    assert [(b["player"], b["why"]) for b in f20_melee.data("status.yaml")["pending"]][:1] == [
        ("kli", "contribution owed to dice fed-0001 of fed")]
    assert all(b["player"] != "rom" for b in f20_melee.data("status.yaml")["pending"])
    cli(f20_melee, "yield", who="kli")
    cli(f20_melee, "yield", who="fed")
    raw = batch(f20_melee)
    assert sorted(raw["contributions"]) == ["kli"] and raw["results"] == derived(raw, "melee-e2e", ["fed", "kli"])
    assert_clean(f20_melee)


def test_fair20_resign__a_resigned_player_s_late_contribution_is_refused(f20_melee: Table) -> None:
    """Threat: rom, gone, still writes a contribution into fed's die (chosen with kli's, to steer it). Defence: he
    holds no turn (signature.not-in-control), and a batch announced after his resign is none of his to contribute
    to (dice.bad-contribution, whoever commits it: tests/test_dice_contributors.py); `pbem yield` gives nothing
    of his to it."""
    before = batch(f20_melee)
    write_batch(f20_melee, {**before, "contributions": {"rom": "42" * 32}})
    bad = sneak_as(f20_melee, "rom", "rom: my part after all")
    assert "signature.not-in-control" in rejected(f20_melee, bad, "signature.not-in-control", "status.yaml")
    f20_melee.git("reset", "-q", "--hard", "HEAD~1")
    f20_melee.pbem("yield", who="rom")  # whatever it says, it writes no part of rom's
    assert batch(f20_melee) == before


def test_fair20_resign__the_roller_names_fewer_contributors_to_choose_his_die(f20_melee: Table) -> None:
    """Threat: fed, seeing a contributor leave, announces his next die naming nobody (or leaving kli out): his own
    secret, chosen at leisure, would make the die alone. Defence: the contributors are exactly the seats still
    playing (dice.bad-batch at the batch's `contributors` line); leaving the field out, so that the die waits on
    rom, is refused the same way."""
    f20_melee.git("reset", "-q", "--hard", "HEAD~1")  # back before fed's die: fed in control again
    f20_melee.edit("fed", through="1.8.damage", entries=[{"at": "1.0.alloc", "unit": "CA", "do": {"speed": 12}}])
    for named in ([], None):
        raw = {**hand_batch(f20_melee, "fed", "fed-0001", []), "rolls": [{"for": "boarding party"}]}
        write_batch(f20_melee, raw if named is None else {**raw, "contributors": named})
        bad = sneak_as(f20_melee, "fed", "fed: my die, my contributors")
        assert "dice.bad-batch" in rejected(f20_melee, bad, "dice.bad-batch", "dice/fed-0001.yaml"), named
        f20_melee.git("reset", "-q", "--hard", "HEAD~1")


def test_fair20_resign__a_player_resigns_to_dodge_contributing(melee_dice: Table) -> None:
    """Threat: kli resigns rather than contribute to fed's die (hoping the table waits, or re-rolls without
    him). Defence: his resign withholds his part at once; rom alone contributes, fed reveals, nobody waits on kli,
    and his part is never given later (dice.withheld)."""
    cli(melee_dice, "resign", who="kli")
    assert set(batch(melee_dice)["withheld"]) == {"kli"}
    assert all(b["player"] != "kli" for b in melee_dice.data("status.yaml")["pending"])
    for _ in range(4):
        owed = melee_dice.data("status.yaml")["pending"]
        if not owed or owed[0]["kind"] != "dice":
            break
        cli(melee_dice, "yield", who=owed[0]["player"])
    assert batch(melee_dice)["results"]
    write_batch(melee_dice, {**batch(melee_dice), "contributions": {**batch(melee_dice)["contributions"],
                                                                     "kli": "42" * 32}})
    bad = sneak_as(melee_dice, "kli", "kli: my part after all")
    assert rejected(melee_dice, bad, "dice.withheld", "dice/fed-0001.yaml") & {"dice.withheld", "dice.changed",
                                                                                "dice.bad-contribution"}


def _f20_seat_and_nmr(table: Table) -> tuple[str, str]:
    """From `both_owed`: kli rolls (fed owes his contribution now), fed proposes a lost-key seat for his own seat
    (carol's key), then kli signs the nmr against fed and the seat; the two commits squashed into one that
    completes both, as two last signatures landing together would. Returns (the seat's id, the nmr's id)."""
    cli(table, "roll", "--for", "D7 ph1", "--ref", "1.4.fire/D7/ph1", who="kli")
    cli(table, "yield", who="kli")
    assert ("fed", "dice") in {(who, kind) for who, kind, _ in pending(table)}
    cli(table, "agree", "seat", "--seat", "fed", "--new-key", _new_holder_pub(table), "--why", "lost-key", who="fed")
    seat = _newest_agreement(table, "fed")
    cli(table, "agree", "nmr", "--player", "fed", who="kli")
    nmr = _newest_agreement(table, "kli")
    cli(table, "sign", seat, who="kli")
    table.git("reset", "-q", "--soft", "HEAD~2")
    return seat, nmr


def _f20_marks(table: Table) -> dict[str, Any]:
    marks: dict[str, Any] = {}
    for path in sorted((table.repo_dir / "dice").glob("*.yaml")) + sorted((table.repo_dir / "secrets").glob("*.yaml")):
        withheld = table.data(f"{path.parent.name}/{path.name}").get("withheld")
        if withheld:
            marks[f"{path.parent.name}/{path.name}"] = withheld
    return marks


def test_fair20_seat_and_nmr__one_commit_completing_both_marks_everything_with_the_seat(both_owed: Table) -> None:
    """Threat: kli completes an nmr against fed and fed's seat change in one commit, marking only what one of them
    settles (the nmr's: fed's contribution owed now; or the seat's: what the old key sealed), so that a part of
    the old key's stays waited on, or the new holder must give what the nmr took. Defence: the seat takes
    precedence and both settle: every part is marked with the seat's id (dice.bad-withheld otherwise); marked
    so, the commit verifies and nothing of fed's old key is waited on."""
    seat, nmr = _f20_seat_and_nmr(both_owed)
    marks = _f20_marks(both_owed)
    assert nmr in str(marks) and seat in str(marks), marks  # the two pbem commits marked one part each
    bad = sneak_as(both_owed, "kli", "kli: nmr and seat at once, each marking its own")
    assert "dice.bad-withheld" in rejected(both_owed, bad, "dice.bad-withheld", ANY)
    both_owed.git("reset", "-q", "--soft", "HEAD~1")
    for path, mark in marks.items():
        raw = dict(both_owed.data(path))
        raw["withheld"] = {p: seat for p in mark} if isinstance(mark, dict) else seat
        both_owed.write(path, dump_mapping(raw))
    sneak_as(both_owed, "kli", "kli: nmr and seat at once")
    assert_clean(both_owed)
    assert not any(who == "fed" and kind in ("dice", "secret") for who, kind, _ in pending(both_owed))


def test_fair20_withheld_header__the_log_names_the_seat_change_that_withheld_a_part(fire_owed: Table) -> None:
    """Not a threat: a part withheld by a seat change is listed under a header that names seat changes, as its
    line names the seat agreement (pbem log; pbem status lists the same line)."""
    seat = _seat_changed_after_the_die(fire_owed)
    log = cli(fire_owed, "log", who="carol")
    header = "Withheld (owed, never given, settled by an nmr, a resign or a seat change: what it hid is lost):"
    assert header in log, log
    assert f"seat {seat}" in log.split(header, 1)[1], log
    assert f"fed's reveal withheld, seat {seat}" in cli(fire_owed, "status", "--plain", who="carol")


# --- fair-20: craft launches declared at activity (docs/tactical.md "Launches are simultaneous within their step")

F20_BAY = "hull: 50, systems: [bay], craft: [{id: %s, type: shuttle}], weapons"
F20_CRAFT_GAME = (RACE_GAME.replace("id: launch-race", "id: f20-craft").replace("turns: 1", "turns: 2")
                  .replace("hull: 50, weapons", F20_BAY % "SH1", 1).replace("hull: 50, weapons", F20_BAY % "SH2", 1)
                  .replace("  weapons:\n    drone:", "  craft:\n    shuttle: {kind: shuttle, speed: 6, turn_mode: 1, "
                           "hull: 6, weapons: []}\n  weapons:\n    drone:"))
F20_KLI_CRAFT = {"at": "1.5.activity", "unit": "D7", "do": {"launch": {"craft": "SH2"}}}
F20_FED_CRAFT = {"at": "1.5.activity", "unit": "CA", "do": {"launch": {"craft": "SH1"}}}


@pytest.fixture(scope="module")
def base_f20_craft(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed and kli each break on an enemy craft launch; kli launches his shuttle SH2 at 1.5.activity: fed is asked
    in the action auction there, nothing of the step resolved."""
    root = tmp_path_factory.mktemp("f20-craft")
    (root / "template").mkdir()
    (root / "template" / "game.yaml").write_text(F20_CRAFT_GAME)
    table = build_launch_table(root / "table", str(root / "template"), "f20-craft")
    table.turn("fed", through="1.32.final", breaks=[{"system": {"kind": "launch"}}])
    table.turn("kli", through="1.32.final", breaks=[{"system": {"kind": "launch"}}], entries=[F20_KLI_CRAFT])
    assert asked(table) == [("fed", "auction")] and table.data("status.yaml")["firm"] == "1.5.activity"
    return table


@pytest.fixture
def f20_craft(base_f20_craft: Table, tmp_path: Path) -> Table:
    return private(base_f20_craft, tmp_path)


def test_fair20_craft__the_reply_shuttle_lands_at_the_same_impulse(f20_craft: Table) -> None:
    """Not a threat: fed, asked, launches his own shuttle in reply at 1.5.activity; it wakes kli, who passes; both
    shuttles come out together at that impulse and the history verifies."""
    f20_craft.turn("fed", entries=[F20_FED_CRAFT], note="my shuttle too")
    assert asked(f20_craft) == [("kli", "auction")]
    f20_craft.turn("kli", note="I pass")
    assert f20_craft.data("status.yaml")["firm"] != "1.5.activity"
    assert "1.5.activity CA launches shuttle SH1" in cli(f20_craft, "log", who="fed")
    assert "1.5.activity D7 launches shuttle SH2" in cli(f20_craft, "log", who="fed")
    assert_clean(f20_craft)


def test_fair20_craft__the_launcher_takes_his_launch_back_once_the_auction_opened(f20_craft: Table) -> None:
    """Threat: kli sees fed asked about his shuttle launch and withdraws it by plain git (to see fed's answer
    first and launch later). Defence: the entries that opened the auction are committed (DESIGN §4.4); kli holds
    no turn; the commit is refused."""
    f20_craft.edit("kli", entries=[])
    bad = sneak_as(f20_craft, "kli", "kli: no shuttle after all")
    found = rejected(f20_craft, bad, "signature.not-in-control", ANY)
    assert found & {"signature.not-in-control", "firm.changed"}, found


def test_fair20_craft__a_reply_shuttle_after_passing_is_refused(f20_craft: Table) -> None:
    """Threat: fed passes (the step resolves, he sees kli's shuttle out), then adds his own launch at 1.5.activity
    as if made at the same impulse. Defence: the step is resolved and firm: no entry is added before the firm
    point."""
    f20_craft.turn("fed", note="I pass")
    assert f20_craft.data("status.yaml")["firm"] != "1.5.activity"
    f20_craft.turn("kli", through="2.32.final")  # turn 2's orders: kli is served first, then fed holds control
    assert asked(f20_craft)[0] == ("fed", "horizon")
    f20_craft.edit("fed", entries=[F20_FED_CRAFT])
    bad = sneak_as(f20_craft, "fed", "fed: my shuttle at 1.5 after all")
    assert "firm.changed" in rejected(f20_craft, bad, "firm.changed", ANY)


# --- dice of a step resolved before an open auction (tests/test_no_deadlock.py `moot-batch-in-auction`) --------
# While an action auction is open, the dice of a batch whose every ref is at a step resolved before the auction's
# land (they tell the bidders nothing: that step resolved, with them or without them). What a player could try to
# slip through that opening:

from test_no_deadlock import moot_batch_in_auction  # noqa: E402


def _moot_findings(base_three: Path, player: str, edit: Callable[[Any, dict[str, bytes]], None],
                   asked: bool = False) -> list[str]:
    """The rules `player`'s commit of `edit` breaks in the auction with bob's open batch of the resolved step;
    `asked`: once the dice owed to that batch so far are in and carol alone is asked in the auction."""
    from stuck_game import least

    play = moot_batch_in_auction(base_three)
    while asked and [(b.player, b.kind) for b in play.head.status.pending] != [("carol", "auction")]:
        who = play.acting()[0]
        assert not play.commit(who, lambda files, w=who: least(play, w, files), "settles")
    findings, _verified, _files = play.try_commit(player, lambda files: edit(play, files), settle=False)
    return [f.rule for f in findings]


def _hand_written(play: Any, files: dict[str, bytes], refs: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """carol's batch for `refs`, written past pbem roll's own refusals (as by hand)."""
    from pbem.services import chance

    monkeypatch.setattr(chance, "_check_binding", lambda *args: None)
    chance.announce(files, play.game_of(files), play.keys["carol"], "carol", list(refs), list(refs), 6)


def test_moot_batch__carol_adds_fire_and_rolls_for_it_while_the_auction_goes_on(
        base_three: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threat: asked in the auction, carol adds her own shot at 1.5.fire and rolls its die in the same commit,
    so that bob, asked again, decides knowing it. Defence: only dice whose every ref is before the auction's step
    land while it is open (dice.auction-open)."""
    from stuck_game import REPORT

    def fire_and_roll(play: Any, files: dict[str, bytes]) -> None:
        from pbem.formats.writer import dump_report

        entries = list(play.data(REPORT)["entries"])
        entries.append({"at": "1.5.fire", "by": "carol", "unit": "S2", "do": {"fire": {"weapon": "ph1",
                                                                                       "target": "S1"}}})
        files[REPORT] = dump_report(entries).encode()
        _hand_written(play, files, ["1.5.fire/S2/ph1"], monkeypatch)

    rules = _moot_findings(base_three, "carol", fire_and_roll, asked=True)
    assert "dice.auction-open" in rules, rules


def test_moot_batch__carol_rolls_bob_s_die_of_the_auction_step(base_three: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Threat: carol, asked in the auction, passes and announces the die of bob's 1.5.fire shot in the same
    commit (her pass closes the auction, so its dice may be rolled now), to pick its secret herself. Defence:
    only the firer rolls his shot's die (dice.wrong-roller, DESIGN §5 "Who rolls")."""
    rules = _moot_findings(base_three, "carol", lambda play, files: _hand_written(
        play, files, ["1.5.fire/S1/ph2"], monkeypatch), asked=True)
    assert "dice.wrong-roller" in rules, rules


def test_moot_batch__carol_re_rolls_the_void_shot(base_three: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threat: a new batch for the resolved 1.3.fire shot, which the opening for earlier steps lets through the
    auction rule. Defence: a batch rolls only for refs owed now, by their firer (DESIGN §5 "Binding", "Who
    rolls")."""
    rules = _moot_findings(base_three, "carol", lambda play, files: _hand_written(
        play, files, ["1.3.fire/S1/ph1"], monkeypatch), asked=True)
    assert any(rule.startswith("dice.") for rule in rules) and "dice.auction-open" not in rules, rules


def test_moot_batch__carol_voids_bob_s_open_batch(base_three: Path) -> None:
    """Threat: carol voids bob's open batch of the resolved step instead of contributing to it. Defence: a
    batch whose step is resolved is never voided (dice.bad-void)."""
    from pbem.services import chance

    rules = _moot_findings(base_three, "carol", lambda play, files: chance.void(
        files, play.game_of(files), "bob-0001", "a better die", {}))
    assert "dice.bad-void" in rules, rules


def test_moot_batch__carol_contributes_in_plain_before_committing(base_three: Path) -> None:
    """Threat: carol writes her contribution to bob's batch in plain at once, skipping the commitment that every
    contributor owes first at a table of three. Defence: the dice protocol's order holds in the auction too."""
    from pbem.services import chance

    def plain(play: Any, files: dict[str, bytes]) -> None:
        batch = play.game.batches["bob-0001"]
        raw = {**batch.raw, "contributions": {"carol": "ab" * 32}}
        files[batch.file] = dump_mapping(chance._ordered(raw)).encode()

    rules = _moot_findings(base_three, "carol", plain)
    assert any(rule.startswith("dice.") for rule in rules) and "dice.auction-open" not in rules, rules
