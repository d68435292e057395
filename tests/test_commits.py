"""Raw commits against one strict layout (DESIGN §3): what git writes for `git commit -S`, nothing else."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitutil import fixed_key
from pbem.crypto import sshsig
from pbem.errors import PbemError
from pbem.store.commits import (
    Ident,
    commit_payload,
    format_ident,
    parse_commit,
    parse_ident,
    with_signature,
)

TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
P1 = "1" * 40
P2 = "2" * 40
IDENT = "Alice <alice@example.org> 1700000000 +0000"
KEY = fixed_key("alice")


def signed(parents: list[str] = [P1], message: bytes = b"turn 3\n") -> bytes:  # noqa: B006 - read only
    payload = commit_payload(TREE, parents, IDENT, IDENT, message)
    return with_signature(payload, sshsig.sign(KEY, payload))


def rule(raw: bytes) -> str:
    with pytest.raises(PbemError) as exc:
        parse_commit(raw)
    assert exc.value.exit_code == 1
    return exc.value.finding.rule


# -- building -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("parents", [0, 1, 2])
@pytest.mark.parametrize("message", ["turn 1\n", "", "no newline", "Zürich\n\nbody\n"])
def test_payload_equals_libgit2_create_commit_string(tmp_path: Path, parents: int, message: str) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"))
    who = pygit2.Signature("Alice", "alice@example.org", 1700000000, 0)
    tree = repo.TreeBuilder().write()
    # libgit2 wants the parents to exist: make that many real commits first.
    real = [str(repo.create_commit(None, who, who, f"p{i}\n", tree, [])) for i in range(parents)]
    expected = repo.create_commit_string(who, who, message, tree, [pygit2.Oid(hex=p) for p in real])
    assert commit_payload(str(tree), real, IDENT, IDENT, message) == str(expected).encode()


def test_format_ident() -> None:
    assert format_ident("Alice", "alice@example.org", 1700000000) == IDENT
    assert parse_ident(IDENT) == Ident("Alice", "alice@example.org", 1700000000, "+0000")
    for name, email in [("A<b", "e"), ("A", "e>"), ("A\nB", "e"), ("", "e"), (" A", "e")]:
        with pytest.raises(PbemError) as exc:
            format_ident(name, email, 1)
        assert exc.value.finding.rule == "commit.ident"


def test_with_signature_refuses_a_final_newline() -> None:
    with pytest.raises(ValueError):
        with_signature(commit_payload(TREE, [], IDENT, IDENT, "m\n"), sshsig.sign(KEY, b"x") + "\n")


# -- parsing ------------------------------------------------------------------------------------------------


def test_round_trip() -> None:
    raw = signed([P1, P2])
    commit = parse_commit(raw)
    assert (commit.tree, commit.parents, commit.author, commit.committer) == (TREE, (P1, P2), IDENT, IDENT)
    assert commit.message == b"turn 3\n"
    assert commit.signed_payload() == commit_payload(TREE, [P1, P2], IDENT, IDENT, "turn 3\n")
    assert commit.signature is not None and not commit.signature.endswith("\n")
    assert sshsig.verify(commit.signature, commit.signed_payload()).same_key(KEY.public)
    assert commit.author_ident.time == 1700000000


def test_message_may_contain_header_like_text() -> None:
    raw = signed(message=b"gpgsig fake\n\nparent " + P2.encode() + b"\n")
    assert parse_commit(raw).parents == (P1,)


def insert_header(raw: bytes, line: bytes, before: bytes) -> bytes:
    at = raw.index(before)
    return raw[:at] + line + b"\n" + raw[at:]


def swap_lines(raw: bytes, first: bytes, second: bytes) -> bytes:
    lines = raw.split(b"\n")
    i = next(n for n, line in enumerate(lines) if line.startswith(first))
    j = next(n for n, line in enumerate(lines) if line.startswith(second))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def test_unsigned_commit() -> None:
    assert rule(commit_payload(TREE, [P1], IDENT, IDENT, "m\n")) == "signature.missing"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda r: insert_header(r, b"encoding ISO-8859-1", b"gpgsig "), "encoding header"),
        (lambda r: insert_header(r, b"mergetag object " + P1.encode(), b"gpgsig "), "mergetag header"),
        (lambda r: insert_header(r, b"x-custom yes", b"author "), "unknown header"),
        (lambda r: r.replace(b"\n\nturn", b"\ngpgsig-sha256 -----BEGIN SSH SIGNATURE-----\n\nturn"), "sha256 sig"),
        (lambda r: r.replace(b"\n\nturn", b"\n" + r[r.index(b"gpgsig") : r.index(b"\n\n")] + b"\n\nturn"), "2 sigs"),
        (lambda r: insert_header(r, b"parent " + P2.encode(), b"committer "), "parent after author"),
        (lambda r: swap_lines(r, b"author ", b"committer "), "committer before author"),
        (lambda r: swap_lines(r, b"tree ", b"parent "), "parent before tree"),
        (lambda r: r.replace(b"tree ", b"tree  ", 1), "bad tree"),
        (lambda r: r.replace(TREE.encode(), TREE.upper().encode(), 1), "uppercase tree id"),
        (lambda r: r.replace(b"parent " + P1.encode(), b"parent " + P1[:39].encode(), 1), "short parent"),
        (lambda r: r.replace(b"tree " + TREE.encode() + b"\n", b"", 1), "no tree"),
        (lambda r: r.replace(b"\ncommitter " + IDENT.encode(), b"", 1), "no committer"),
        (lambda r: r.replace(b"1700000000 +0000", b"01700000000 +0000", 1), "zero-padded date"),
        (lambda r: r.replace(b"Alice <", b"<", 1), "empty name"),
        (lambda r: r.replace(b"+0000", b"+00", 1), "short tz"),
        (lambda r: r.replace(b"Alice", b"Al\xffce", 1), "non-UTF-8 author"),
        (lambda r: r.replace(b"\n\nturn", b"turn"), "no blank line"),
        (lambda r: r.replace(b"-----END SSH", "-----ÉND SSH".encode(), 1), "non-ASCII signature"),
    ],
)
def test_layout_violations_are_malformed(change, why: str) -> None:  # type: ignore[no-untyped-def]
    assert rule(change(signed())) == "commit.malformed", why


def test_oid_is_attached_to_the_finding() -> None:
    with pytest.raises(PbemError) as exc:
        parse_commit(b"junk", oid="a" * 40)
    assert exc.value.finding.commit == "a" * 40


_valid = signed([P1, P2])
_header_lines = _valid[: _valid.index(b"\n\n")].split(b"\n")


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=600))
def test_parse_commit_on_arbitrary_bytes_raises_only_pbem_errors(raw: bytes) -> None:
    with contextlib.suppress(PbemError):
        parse_commit(raw)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(_header_lines + [b"encoding x", b" cont", b"", b"parent"]), max_size=12),
    st.binary(max_size=40),
)
def test_parse_commit_on_shuffled_headers_raises_only_pbem_errors(lines: list[bytes], message: bytes) -> None:
    raw = b"\n".join(lines) + b"\n\n" + message
    try:
        commit = parse_commit(raw)
    except PbemError:
        return
    # Whatever parses must have the layout: re-serialising gives back the same bytes.
    assert commit.signature is not None
    assert with_signature(commit.signed_payload(), commit.signature) == raw


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([P1, P2, "a" * 40]), max_size=3),
    st.text(
        alphabet=st.characters(blacklist_characters="<>\n\x00", blacklist_categories=["Cs"]), min_size=1, max_size=20
    )
    .map(str.strip)
    .filter(bool),
    st.integers(0, 2**40),
    st.binary(max_size=80),
)
def test_write_then_read_round_trips(parents: list[str], name: str, when: int, message: bytes) -> None:
    ident = format_ident(name, "p@example.org", when)
    payload = commit_payload(TREE, parents, ident, ident, message)
    commit = parse_commit(with_signature(payload, sshsig.sign(KEY, payload)))
    assert (commit.parents, commit.author, commit.message) == (tuple(parents), ident, message)
    assert commit.signed_payload() == payload


def _reading(parse, raw: bytes) -> object:  # type: ignore[no-untyped-def]
    try:
        return parse(raw)
    except PbemError as exc:
        return exc.finding.rule, exc.finding.message


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(_header_lines + [b"encoding x", b" cont", b" ", b"", b"parent", b"author \xff <a> 1 +0000"]),
             max_size=12),
    st.binary(max_size=40),
    st.integers(0, 400), st.integers(0, 255),
)
def test_the_pattern_reads_what_the_line_reader_reads(lines: list[bytes], message: bytes, at: int, byte: int) -> None:
    """A commit of the one layout is read by one pattern (`_LAYOUT`); any bytes get the same commit, or the same
    finding, as read line by line."""
    from pbem.store import commits

    for raw in (b"\n".join(lines) + b"\n\n" + message, _valid, _valid[:at] + bytes([byte]) + _valid[at + 1:]):
        assert _reading(commits._parse, raw) == _reading(commits._parse_lines, raw)
    assert commits._LAYOUT.match(_valid) is not None
