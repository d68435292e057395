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
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import nacl.secret
import pygit2
import pytest
from pygit2.enums import ObjectType

from conftest import SEATS, Table, copy_table
from gitutil import fixed_key, run
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

@pytest.fixture(scope="module")
def base_dice_owed(base_played: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed announced b0001 in a turn that left control with himself: kli owes his contribution out of turn."""
    return announce_out_of_turn(base_played, tmp_path_factory.mktemp("attacks") / "dice-owed")


@pytest.fixture(scope="module")
def base_reveal_owed(base_dice_owed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """kli contributed: fed owes the reveal; the results are knowable to fed (his secret is his)."""
    table = copy_table(base_dice_owed, tmp_path_factory.mktemp("attacks") / "reveal-owed")
    cli(table, "yield", who="kli")
    return table


@pytest.fixture(scope="module")
def base_rolled(base_reveal_owed: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:
    """fed revealed; b0001 has its result; fed holds control for a turn."""
    table = copy_table(base_reveal_owed, tmp_path_factory.mktemp("attacks") / "rolled")
    cli(table, "yield", who="fed")
    assert batch(table)["results"]
    return table


@pytest.fixture
def dice_owed(base_dice_owed: Table, tmp_path: Path) -> Table:
    return private(base_dice_owed, tmp_path)


@pytest.fixture
def reveal_owed(base_reveal_owed: Table, tmp_path: Path) -> Table:
    return private(base_reveal_owed, tmp_path)


@pytest.fixture
def rolled(base_rolled: Table, tmp_path: Path) -> Table:
    return private(base_rolled, tmp_path)


B0001 = "dice/b0001.yaml"


def test_dice_grinding__the_roller_voids_after_the_results_were_knowable(reveal_owed: Table) -> None:
    """Threat (grinding): fed, who can compute the results once kli contributed, voids the batch to re-roll it.
    Defence: after results are knowable a void needs every other player's co-signature (dice.bad-void)."""
    write_batch(reveal_owed, {**batch(reveal_owed), "void": {"reason": "the D7 was out of arc"}})
    bad = sneak_as(reveal_owed, "fed", "fed: void b0001")
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
    bad = sneak_as(reveal_owed, "fed", "fed: revealed b0001")
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
    bad = sneak_as(reveal_owed, "fed", "fed: revealed b0001")
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
                end: str = "end", sid: str = "s0001") -> tuple[dict[str, Any], bytes]:
    """A sealed secret as `pbem seal` writes it (or with a given box), sealed to `owner`'s key; and its key."""
    sealed = seal.seal(plaintext, key(owner).public, key32)
    raw = {"id": sid, "owner": owner, "kind": "note", "concerns": f"{owner}'s plan", "end": end,
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
    bad = sneak_as(played, "fed", "fed: revealed s0001")
    assert rejected(played, bad, "secret.commit-mismatch", "secrets/s0001.yaml") == {"secret.commit-mismatch"}


def test_secret_revealed_by_another_player(played: Table) -> None:
    """Threat: kli learnt fed's key (over fed's shoulder) and reveals fed's secret to force his hand. Defence: only
    the owner reveals (secret.not-owner)."""
    raw, k = secret_file(played, "fed", b'{"text":"I turn to starboard at range 8"}')
    write_secret(played, raw)
    legal_turn(played)
    write_secret(played, {**raw, "key": k.hex()})
    played.edit("kli", **KLI_GOES_ON)
    bad = sneak_as(played, "kli", "kli: fed's plan, revealed")
    assert rejected(played, bad, "secret.not-owner", "secrets/s0001.yaml") == {"secret.not-owner"}


def test_secret_changed_after_sealing__the_box_swapped_while_revealing(played: Table) -> None:
    """Threat: fed, revealing, swaps the box and commitment for a plan of hindsight, with a matching key.
    Defence: a sealed secret never changes but for its key (secret.changed)."""
    raw, _ = secret_file(played, "fed", b'{"text":"I hold my course"}', end="1.10.move")
    write_secret(played, raw)
    legal_turn(played)
    hindsight, k = secret_file(played, "fed", b'{"text":"I turn to port at 1.9"}', end="1.10.move")
    write_secret(played, {**hindsight, "key": k.hex()})
    bad = sneak_as(played, "fed", "fed: revealed s0001")
    assert rejected(played, bad, "secret.changed", "secrets/s0001.yaml") == {"secret.changed"}


def test_orders_sealed_for_another_power(played: Table) -> None:
    """Threat: fed seals "orders" in kli's name (owner kli, sealed to kli's key) to fill kli's sealed slot with
    something kli never chose. Defence: a secret is sealed by its owner (secret.not-owner)."""
    raw, _ = secret_file(played, "kli", b'{"text":"I surrender"}')
    write_secret(played, raw)
    bad = legal_turn(played)
    assert rejected(played, bad, "secret.not-owner", "secrets/s0001.yaml") == {"secret.not-owner"}


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
    """The duel before its start: undo=1 both seats claimed, 2 only fed's, 3 nobody's (just `pbem init`)."""
    table = copy_table(base_started, dest)
    table.git("reset", "-q", "--hard", f"HEAD~{undo}")
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


# === Acting at the same time: pbem push and pbem pull (DESIGN §4.9, §8) =============================================
# Each player has his own clone of one hooked hub (tests/test_sync.py helpers). What `pbem push` replays is only
# ever the pusher's own commits, onto the hub's tip, never forced; what `pbem pull` takes is only a fast-forward
# of what the clone knew.

from test_sync import Seat, fed_turn, hub_head, start_game, tactical  # noqa: E402


@pytest.fixture
def hub_duel(tmp_path: Path) -> tuple[Seat, Seat, Path]:
    """A started duel on a hooked hub; fed holds control, both clones up to date."""
    from pbem.services import setup as setup_service

    seats, hub = tactical(tmp_path, "tactical-duel", ("fed", "kli"))
    fed, kli = seats["fed"], seats["kli"]
    assert setup_service is not None
    start_game(fed.ws(), "fed", fed.me, [kli.me])
    assert fed.push().code == 0
    kli.pull()
    return fed, kli, hub


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
