"""Tree entry modes (DESIGN §3 Trees): only regular files written as mode 100644 and folders written as 40000
belong in a game tree, on every path the verifier runs (`pbem verify`, its GitHub format for the workflow, the
pre-receive hook).

A mode git never writes is read differently by git and by libgit2: git maps any mode that is neither a regular
file, a link nor a folder to a submodule (150000 and 140000 become 160000 in `git ls-tree`), libgit2 to a
regular file. A turn could so make a game file (the frozen workflow) vanish for git and GitHub while a reader
that trusts libgit2's reading sees no change. Each case below is written twice, once as raw objects with pygit2
(any bytes, as a cheater's own tool may) and once with `git mktree` where git writes it, and `git ls-tree` says
how git itself reads it.
"""

from __future__ import annotations

import pygit2
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pygit2.enums import ObjectType

from conftest import Table
from test_attacks import (WORKFLOW, key, land, legal_turn, payload_of, rejected, replace_header, signed,
                          write_object)
from test_hook import push, refused, serve, server_ref

# mode as written -> (git ls-tree's reading, libgit2's reading), for an entry that names a blob
ODD = {b"150000": ("160000", 0o100644), b"140000": ("160000", 0o100644), b"100664": ("100644", 0o100644),
       b"0100644": ("100644", 0o100644), b"100744": ("100755", 0o100755)}
CANONICAL_BUT_NOT_A_FILE = [b"100755", b"120000", b"160000"]


def with_mode(table: Table, commit: str, path: str, mode: bytes, tool: str = "pygit2", who: str = "fed") -> str:
    """`commit` again (same parent, message), the entry `path` (a file, or a folder when it ends in `/`) written
    with `mode`, by raw objects (`tool="pygit2"`) or by `git mktree`; signed by `who`; main -> it."""
    repo = pygit2.Repository(str(table.repo_dir))
    parts = path.rstrip("/").split("/")
    trees = [repo[commit].tree]
    for part in parts[:-1]:
        trees.append(repo[trees[-1][part].id])
    oid = _rewritten(table, trees[-1], parts[-1], mode, tool)
    for tree, part in zip(reversed(trees[:-1]), reversed(parts[:-1])):
        oid = _rewritten(table, tree, part, None, tool, oid)
    return land(table, signed(replace_header(payload_of(table, commit), b"tree", oid.encode()), key(who)))


def _rewritten(table: Table, tree: pygit2.Tree, name: str, mode: bytes | None, tool: str,
               target: str | None = None) -> str:
    """`tree` with the entry `name` given `mode` (or pointing at `target`), as a new tree object."""
    if tool == "pygit2":
        data = b""
        for old_mode, entry, oid in raw_entries(repo_read(table, str(tree.id))):
            if entry == name.encode():
                old_mode, oid = mode if mode is not None else old_mode, bytes.fromhex(target) if target else oid
            data += old_mode + b" " + entry + b"\0" + oid
        return write_object(table, ObjectType.TREE, data)
    listing = table.git("ls-tree", str(tree.id)).stdout.decode().splitlines()
    lines = []
    for line in listing:
        meta, entry = line.split("\t", 1)
        old_mode, kind, oid = meta.split()
        if entry == name:
            old_mode = mode.decode() if mode is not None else old_mode
            oid = target or oid
            kind = {0o160000: "commit", 0o040000: "tree"}.get(int(old_mode, 8) & 0o170000, "blob")  # mktree's
        lines.append(f"{old_mode} {kind} {oid}\t{entry}")
    # made in an empty repository (mktree refuses an entry whose object it holds in another type), then stored
    # in the game's as is: `git hash-object --literally` writes what it is given
    scratch = table.root / "scratch.git"
    if not scratch.exists():
        table.git("init", "-q", "--bare", scratch)
    made = table.git("--git-dir", scratch, "mktree", "--missing",
                     input="\n".join(lines).encode() + b"\n").stdout.decode().strip()
    raw = table.git("--git-dir", scratch, "cat-file", "tree", made).stdout
    return table.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=raw).stdout.decode().strip()


def raw_entries(raw: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """A raw tree object's entries, in order: (mode as written, name, 20-byte id)."""
    out, at = [], 0
    while at < len(raw):
        space = raw.index(b" ", at)
        nul = raw.index(b"\0", space)
        out.append((raw[at:space], raw[space + 1:nul], raw[nul + 1:nul + 21]))
        at = nul + 21
    return out


def repo_read(table: Table, oid: str) -> bytes:
    return bytes(pygit2.Repository(str(table.repo_dir)).odb.read(oid)[1])


def ls_tree(table: Table, commit: str, path: str) -> tuple[str, str]:
    """git's own reading of one entry: (mode, type) as `git ls-tree` prints them."""
    line = table.git("ls-tree", commit, "--", path.rstrip("/")).stdout.decode().strip()
    mode, kind, _rest = line.split(" ", 2)
    return mode, kind


@pytest.mark.parametrize("tool", ["pygit2", "mktree"])
@pytest.mark.parametrize("mode", sorted(ODD), ids=lambda m: m.decode())
def test_a_file_in_a_mode_git_never_writes_is_refused(played: Table, mode: bytes, tool: str) -> None:
    """Each odd mode on players/fed.yaml: git reads it as `git ls-tree` says, libgit2 as ODD says, and pbem
    refuses the commit (tree.bad-mode, naming the file), whatever the two readings."""
    if tool == "mktree" and mode.startswith(b"0"):
        pytest.skip("git mktree writes modes without leading zeros: only a raw object holds 0100644")
    honest = legal_turn(played)
    bad = with_mode(played, honest, "players/fed.yaml", mode, tool)
    git_mode, libgit2_mode = ODD[mode]
    assert ls_tree(played, bad, "players/fed.yaml")[0] == git_mode
    assert pygit2.Repository(str(played.repo_dir))[bad].tree["players"]["fed.yaml"].filemode == libgit2_mode
    players = str(pygit2.Repository(str(played.repo_dir))[bad].tree["players"].id)
    assert (mode, b"fed.yaml") in [(m, n) for m, n, _ in raw_entries(repo_read(played, players))]
    assert rejected(played, bad, "tree.bad-mode", "players/fed.yaml") == {"tree.bad-mode"}


@pytest.mark.parametrize("mode", CANONICAL_BUT_NOT_A_FILE, ids=lambda m: m.decode())
def test_an_executable_a_link_or_a_submodule_made_by_git_mktree_is_refused(played: Table, mode: bytes) -> None:
    """The modes git does write but a game has no use for, made by git itself: git and libgit2 agree, and the
    layout check refuses them (tree.bad-mode)."""
    honest = legal_turn(played)
    bad = with_mode(played, honest, "players/fed.yaml", mode, "mktree")
    assert ls_tree(played, bad, "players/fed.yaml") == (mode.decode(), "commit" if mode == b"160000" else "blob")
    assert "tree.bad-mode" in rejected(played, bad, "tree.bad-mode", "players/fed.yaml")


def test_a_folder_written_as_040000_is_refused(played: Table) -> None:
    """A folder's mode zero-padded (`040000`, git fsck's zeroPaddedFilemode): a folder to git and to libgit2,
    still not what git writes (tree.bad-mode, naming the folder)."""
    honest = legal_turn(played)
    bad = with_mode(played, honest, "players/", b"040000")
    assert ls_tree(played, bad, "players") == ("040000", "tree")
    assert rejected(played, bad, "tree.bad-mode", "players") == {"tree.bad-mode"}


def test_the_workflow_as_a_submodule_for_git_is_refused_by_every_gate(played: Table) -> None:
    """The frozen workflow's entry rewritten as mode 150000, same blob: libgit2 still reads the same file, git
    reads a submodule (so GitHub would run no workflow). `pbem verify` (its trees read in this process or by
    the fetching one), its GitHub format (what the workflow runs) and the hook all refuse it (tree.bad-mode on .github/workflows/pbem.yml)."""
    server = serve(played)
    before = server_ref(server)
    honest = legal_turn(played)
    bad = with_mode(played, honest, WORKFLOW, b"150000")
    assert ls_tree(played, bad, WORKFLOW)[1] == "commit"
    assert played.git("ls-tree", "-r", "--name-only", bad).stdout.decode().count("pbem.yml") == 1
    assert rejected(played, bad, "tree.bad-mode", WORKFLOW) == {"tree.bad-mode"}
    piped = played.pbem("verify", env=played.env(extra={"PBEM_PIPELINE_MIN": "1"}))  # trees read by verify.fetch
    assert piped.returncode == 1 and f"{WORKFLOW}: [tree.bad-mode]" in piped.stdout + piped.stderr, piped.stdout
    github = played.cli("verify", "--format", "github")
    assert github.exit_code == 1
    assert f"::error file={WORKFLOW},line=1,title=tree.bad-mode::" in github.output
    done = push(played)
    refused(done, "tree.bad-mode")
    assert server_ref(server) == before


@settings(max_examples=60)
@given(mode=st.text(alphabet="01234567", max_size=7))
@example(mode="100644")
@example(mode="40000")
@example(mode="150000")
@example(mode="0100644")
@example(mode="")
def test_any_mode_written_is_read_as_git_writes_it_or_refused(tmp_path_factory: pytest.TempPathFactory,
                                                              mode: str) -> None:
    """Whatever digits a tree entry's mode holds, the strict reader lists the entry only when they are one of
    the five spellings git writes (the layout check then judges the mode), and otherwise names the entry
    (tree.bad-mode), or the folder when libgit2 cannot read the tree at all (tree.malformed); a folder's mode
    on a blob is repo.wrong-type. Never a crash, never libgit2's normalised guess."""
    from pbem.errors import PbemError
    from pbem.store.repo import CANONICAL_MODES, GameRepo

    path = tmp_path_factory.mktemp("modes")
    repo = pygit2.init_repository(str(path), bare=True)
    blob = repo.create_blob(b"x: 1\n")
    tree = repo.odb.write(ObjectType.TREE, mode.encode() + b" game.yaml\0" + blob.raw)
    who = b"t <t@example.org> 0 +0000"
    commit = str(repo.odb.write(ObjectType.COMMIT, b"tree %s\nauthor %s\ncommitter %s\n\nm\n" % (
        str(tree).encode(), who, who)))
    try:
        files = GameRepo(repo).tree_files(commit)
    except PbemError as exc:
        assert exc.finding.rule in ("tree.bad-mode", "tree.malformed", "repo.wrong-type")
        assert (exc.finding.rule == "repo.wrong-type") == (mode == "40000")
        assert exc.finding.rule != "tree.bad-mode" or mode.encode() not in CANONICAL_MODES
        if exc.finding.rule == "tree.bad-mode":
            assert exc.finding.file == "game.yaml" and mode in exc.finding.message
    else:
        assert mode.encode() in CANONICAL_MODES and mode != "40000"
        assert files["game.yaml"][1] == int(mode, 8)
