"""Raw commit objects, read and written against one strict layout (DESIGN §3).

    tree <hex>
    parent <hex>            (zero or more)
    author <ident>
    committer <ident>
    gpgsig -----BEGIN SSH SIGNATURE-----
     <continuation lines, each after one space>
     -----END SSH SIGNATURE-----
    <blank line>
    <message>

This is what `git commit -S` with `gpg.format=ssh` and pbem both write. Anything else (an `encoding` or
`mergetag` header, a second or a sha256 signature, headers out of order) is refused instead of being
interpreted, so the verifier never reads a commit differently from git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pbem.errors import ILLEGAL, PbemError

_OID = re.compile(rb"\A[0-9a-f]{40}\Z")
# git fsck's ident shape: a name, " <", an email, "> ", seconds without leading zeros, " ", +hhmm/-hhmm.
_IDENT = re.compile(
    rb"\A(?P<name>[^<>\n\x00]+) <(?P<email>[^<>\n\x00]*)> (?P<time>0|[1-9][0-9]{0,18}) (?P<tz>[+-][0-9]{4})\Z"
)
_NAME_FORBIDDEN = re.compile(r"[<>\n\x00]")
_SIG_HEADER = b"gpgsig"
# The layout below as one pattern: a commit that matches it (and whose idents are git's) is read by its groups;
# anything else goes line by line through `_parse_lines`, whose findings say what is wrong.
_LAYOUT = re.compile(
    rb"tree ([0-9a-f]{40})\n((?:parent [0-9a-f]{40}\n)*)author ([^\n]*)\ncommitter ([^\n]*)\n"
    rb"gpgsig ([^\n]*(?:\n [^\n]*)*)\n\n")


@dataclass(frozen=True)
class Ident:
    """An author or committer line, split: `Name <email> 1700000000 +0000`."""

    name: str
    email: str
    time: int
    tz: str


def parse_ident(value: str) -> Ident:
    """Split an ident value as it appears after `author `/`committer ` (rule `commit.malformed`)."""
    match = _ident_match(value.encode("utf-8", errors="surrogateescape"))
    if not match:
        raise _malformed(f"bad ident {value[:80]!r}, expected 'Name <email> SECONDS +HHMM'")
    text = {k: v.decode("utf-8", errors="replace") for k, v in match.groupdict().items()}
    return Ident(text["name"], text["email"], int(text["time"]), text["tz"])


def format_ident(name: str, email: str, when: int, tz: str = "+0000") -> str:
    """`Name <email> when tz` as git writes it; refuses what git would mangle (rule `commit.ident`)."""
    if not name.strip() or _NAME_FORBIDDEN.search(name) or _NAME_FORBIDDEN.search(email):
        raise PbemError(
            "commit.ident",
            f"author {name!r} <{email}> cannot be written in a commit",
            hint="names and emails must not contain '<', '>' or line breaks",
        )
    if name != name.strip() or email != email.strip():
        # git trims these silently; we refuse so what we sign is what the user wrote.
        raise PbemError("commit.ident", f"author {name!r} <{email}> has leading or trailing spaces")
    return f"{name} <{email}> {int(when)} {tz}"


@dataclass(frozen=True)
class RawCommit:
    """A commit parsed from its raw object bytes; `signature` is the armored SSHSIG without final newline."""

    tree: str
    parents: tuple[str, ...]
    author: str
    committer: str
    signature: str | None
    message: bytes
    payload: bytes = field(repr=False)  # the object without its gpgsig header: the bytes the signature covers

    def signed_payload(self) -> bytes:
        """The commit bytes without the gpgsig header, i.e. what `git commit -S` gave ssh-keygen to sign."""
        return self.payload

    @property
    def author_ident(self) -> Ident:
        return parse_ident(self.author)

    @property
    def committer_ident(self) -> Ident:
        return parse_ident(self.committer)


def _malformed(message: str, commit: str | None = None) -> PbemError:
    return PbemError(
        "commit.malformed",
        message,
        commit=commit,
        exit_code=ILLEGAL,
        hint="make commits with `pbem yield` or plain `git commit -S` (gpg.format=ssh)",
    )


def parse_commit(raw: bytes, oid: str | None = None) -> RawCommit:
    """Parse raw commit bytes against the one layout above.

    Rules: `commit.malformed` (anything but that layout), `signature.missing` (no gpgsig header).
    `oid`, when given, is attached to the finding.
    """
    try:
        return _parse(raw)
    except PbemError as exc:
        if oid is not None:
            exc.finding = exc.finding.at(commit=oid)
        raise


def _parse(raw: bytes) -> RawCommit:
    match = _LAYOUT.match(raw)
    if match is None or not _ident_match(match[3]) or not _ident_match(match[4]) or not match[5].isascii():
        return _parse_lines(raw)
    try:
        author, committer = match[3].decode("utf-8"), match[4].decode("utf-8")
    except UnicodeDecodeError:
        return _parse_lines(raw)
    parents = tuple(line[7:].decode() for line in match[2].split(b"\n")[:-1])
    message = raw[match.end():]
    payload = raw[:match.start(5) - len(b"\ngpgsig ")] + b"\n\n" + message  # the headers before gpgsig
    return RawCommit(match[1].decode(), parents, author, committer, match[5].replace(b"\n ", b"\n").decode("ascii"),
                     message, payload)


def _parse_lines(raw: bytes) -> RawCommit:
    end = raw.find(b"\n\n")
    if end < 0:
        raise _malformed("no blank line between headers and message")
    lines = raw[:end].split(b"\n")
    message = raw[end + 2 :]
    pos = 0

    def take(name: bytes) -> bytes | None:
        nonlocal pos
        if pos < len(lines) and lines[pos].startswith(name + b" "):
            pos += 1
            return lines[pos - 1][len(name) + 1 :]
        return None

    tree = take(b"tree")
    if tree is None or not _OID.match(tree):
        raise _malformed("the first header must be 'tree <40 hex digits>'")
    parents: list[str] = []
    while (parent := take(b"parent")) is not None:
        if not _OID.match(parent):
            raise _malformed(f"bad parent id {parent[:50]!r}")
        parents.append(parent.decode())
    author, committer = take(b"author"), take(b"committer")
    if author is None or committer is None:
        raise _malformed("expected 'author' then 'committer' after the tree and parents")
    idents = [_ident_text(author, "author"), _ident_text(committer, "committer")]
    sig_start = pos
    first = take(_SIG_HEADER)
    if first is None:
        if pos == len(lines):
            raise PbemError(
                "signature.missing",
                "the commit is not signed",
                exit_code=ILLEGAL,
                hint="if it is your last commit, undo it keeping your edits (`git reset --soft HEAD~1`), then "
                "`pbem yield`, which signs (or `git commit -S` with gpg.format=ssh)",
            )
        raise _unexpected(lines[pos])
    sig_lines = [first]
    while pos < len(lines) and lines[pos].startswith(b" "):
        sig_lines.append(lines[pos][1:])
        pos += 1
    if pos < len(lines):
        raise _unexpected(lines[pos])
    try:
        signature = b"\n".join(sig_lines).decode("ascii")
    except UnicodeDecodeError:
        raise _malformed("the gpgsig header is not ASCII") from None
    # Header lines are joined by "\n"; the payload drops lines sig_start.. and keeps everything else verbatim.
    payload = b"\n".join(lines[:sig_start]) + b"\n\n" + message
    return RawCommit(tree.decode(), tuple(parents), idents[0], idents[1], signature, message, payload)


def _ident_match(value: bytes) -> re.Match[bytes] | None:
    """The ident's parts, if it is one git can represent: seconds within a signed 64-bit count (git fsck
    badDateOverflow) and a zone with minutes under 60."""
    match = _IDENT.match(value)
    if match is None or int(match["time"]) > 2**63 - 1 or int(match["tz"][3:]) >= 60:
        return None
    return match


def _ident_text(value: bytes, what: str) -> str:
    if not _ident_match(value):
        raise _malformed(f"bad {what} line {value[:80]!r}, expected 'Name <email> SECONDS +HHMM'")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise _malformed(f"{what} line is not UTF-8") from None


def _unexpected(line: bytes) -> PbemError:
    name = line.split(b" ", 1)[0].decode("utf-8", errors="replace")[:40]
    if name == _SIG_HEADER.decode():
        return _malformed("a second or malformed gpgsig header: exactly one signature is allowed")
    if name == "gpgsig-sha256":
        return _malformed("a gpgsig-sha256 header: only SHA-1 repositories with one SSH signature are supported")
    if name in ("tree", "parent", "author", "committer"):
        return _malformed(f"header {name!r} repeated or out of order")
    return _malformed(f"unexpected header {name!r}: only tree, parent, author, committer, gpgsig are allowed")


def commit_payload(tree: str, parents: list[str], author: str, committer: str, message: str | bytes) -> bytes:
    """The unsigned commit text exactly as git (and libgit2's create_commit_string without encoding) builds it.

    `author`/`committer` are ident values such as `format_ident(...)` returns.
    """
    for oid in (tree, *parents):
        if not _OID.match(oid.encode()):
            raise ValueError(f"not a 40-hex object id: {oid!r}")
    for ident in (author, committer):
        parse_ident(ident)
    body = message.encode("utf-8") if isinstance(message, str) else message
    head = [f"tree {tree}", *(f"parent {p}" for p in parents), f"author {author}", f"committer {committer}"]
    return ("\n".join(head) + "\n\n").encode("utf-8") + body


def with_signature(payload: bytes, signature: str) -> bytes:
    """The signed commit object: `payload` with the gpgsig header inserted before the blank line, as git does.

    `signature` must not end with a newline (it would add an empty continuation line and change the id).
    """
    if signature.endswith("\n") or not signature:
        raise ValueError("signature must be non-empty and without a final newline")
    end = payload.index(b"\n\n")
    header = b"gpgsig " + signature.encode("ascii").replace(b"\n", b"\n ") + b"\n"
    return payload[: end + 1] + header + payload[end + 1 :]
