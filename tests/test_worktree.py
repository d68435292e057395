"""The working tree as a player's commands read it (services/worktree.py): only what git lists as changed is
read from disk, everything else is HEAD's; the result is the plain reader's, edit for edit.

The duel of tests/conftest.py after two turns (`played`: fed holds control at 1.9.move). Each change a player
can make to his working tree must be seen by `pbem check` exactly as the plain reader (every file read) sees it,
including an edit that keeps the file's size and mtime (git's stat alone cannot tell it), and files outside the
game's layout must stay ignored.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Table, copy_table
from pbem.services import worktree
from pbem.services.workspace import Workspace
from pbem.store.repo import GameRepo

OLD = time.time() - 3600  # an mtime well before the index's: git trusts such a file's stat


def _settle(table: Table) -> None:
    """Every file an hour old and the index refreshed now (as after a while of play): git's status then trusts
    the files' stat, and only a real stat change makes it look at a file's content."""
    for folder, dirs, names in os.walk(table.repo_dir):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            os.utime(Path(folder) / name, (OLD, OLD))
    time.sleep(0.01)
    table.git("update-index", "--really-refresh")


def _fast(table: Table) -> dict[str, bytes]:
    ws = Workspace.open(table.repo_dir)
    return worktree.changed_files(ws.repo, ws.root, ws.head_files())


def _same_size_edit(path: Path, old: bytes, new: bytes) -> None:
    """Replace `old` by `new` (same length) in place, and put the file's times back as they were."""
    assert len(old) == len(new)
    before = path.stat()
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns


def test_edit_keeping_size_and_mtime_is_seen(played: Table) -> None:
    _settle(played)
    assert "schema.bad-time" not in played.cli("check", who="fed").output
    target = played.repo_dir / "players" / "fed.yaml"
    _same_size_edit(target, b"1.8.damage", b"1.8.damagX")  # no game time: check must refuse it
    assert _fast(played)["players/fed.yaml"] == target.read_bytes()
    done = played.pbem("check", who="fed")
    assert done.returncode == 1 and "schema.bad-time" in done.stdout + done.stderr
    assert "players/fed.yaml" in done.stdout + done.stderr


def test_racily_clean_edit_is_seen(played: Table) -> None:
    """Edited in the same second as the index was written, size and mtime kept: read whatever git says."""
    target = played.repo_dir / "players" / "fed.yaml"
    played.git("update-index", "--really-refresh")
    _same_size_edit(target, b"1.8.damage", b"1.8.damagX")
    assert _fast(played) == worktree.plain_files(played.repo_dir)
    assert _fast(played)["players/fed.yaml"] == target.read_bytes()


def test_bad_line_in_an_edited_report_file_is_named(played: Table) -> None:
    """A report file edited in one line is read in that line on top of HEAD's version; a bad line is named."""
    report = played.repo_dir / "report" / "turn-01.yaml"
    lines = report.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace("speed: 12", "speed: twelve")
    report.write_text("".join(lines))
    done = played.pbem("check", who="fed")
    assert done.returncode == 1 and "report/turn-01.yaml:2" in done.stdout + done.stderr
    assert played.cli("check", who="fed").exit_code == 1  # in-process: cached and fresh reads agree


def test_new_untracked_report_file_is_seen(played: Table) -> None:
    _settle(played)
    played.write("report/turn-09.yaml", "entries:\n  - {at: \"9.0.alloc\", by: fed, unit: CA, do: {speed: 99}}\n")
    assert "report/turn-09.yaml" in _fast(played)
    done = played.pbem("check", who="fed")
    assert done.returncode == 1 and "report/turn-09.yaml" in done.stdout + done.stderr


def test_new_file_in_an_ignored_folder_is_seen(played: Table) -> None:
    """pbem commits game files whatever .gitignore says; git lists an ignored folder whole."""
    _settle(played)
    (played.repo_dir / ".git" / "info" / "exclude").write_text("errata/\nsecrets/\n")
    played.write("secrets/fed-0001.yaml", "not: a secret\n")
    assert "secrets/fed-0001.yaml" in _fast(played)
    assert _fast(played) == worktree.plain_files(played.repo_dir)
    done = played.pbem("check", who="fed")
    assert done.returncode == 1 and "secrets/fed-0001.yaml" in done.stdout + done.stderr


def test_deleted_file_is_seen(played: Table) -> None:
    _settle(played)
    (played.repo_dir / "players" / "kli.yaml").unlink()
    assert "players/kli.yaml" not in _fast(played)
    done = played.pbem("check", who="fed")
    assert done.returncode == 1 and "players/kli.yaml" in done.stdout + done.stderr


def test_files_outside_the_game_are_ignored(played: Table) -> None:
    _settle(played)
    before, said = _fast(played), played.pbem("check", who="fed")
    played.write("notes.txt", "my plan\n")
    played.write("report/notes.md", "what kli did\n")
    played.write("misc/turn-01.yaml", "entries: []\n")
    played.write("report/deep/turn-01.yaml", "entries: []\n")
    (played.repo_dir / "report" / "turn-09.yaml").symlink_to(played.repo_dir / "report" / "turn-01.yaml")
    assert _fast(played) == before == worktree.plain_files(played.repo_dir)
    again = played.pbem("check", who="fed")
    assert (again.returncode, again.stdout, again.stderr) == (said.returncode, said.stdout, said.stderr)


def test_staged_edit_then_reverted_in_the_tree(played: Table) -> None:
    """An edit staged with `git add` and then undone in the working tree: the tree is what counts."""
    _settle(played)
    target = played.repo_dir / "players" / "fed.yaml"
    original = target.read_bytes()
    target.write_bytes(original + b"# staged\n")
    played.git("add", "players/fed.yaml")
    target.write_bytes(original)
    assert _fast(played)["players/fed.yaml"] == original
    assert _fast(played) == worktree.plain_files(played.repo_dir)


# --- random sets of edits: the fast reader gives the plain reader's map ---------------------------------------
GAME_PATHS = ["players/fed.yaml", "players/kli.yaml", "report/turn-01.yaml", "status.yaml", "game.yaml",
              "report/turn-02.yaml", "dice/fed-0001.yaml", "secrets/kli-0001.yaml", "README.md"]
OTHER_PATHS = ["notes.txt", "report/x.md", "players/fed.yml", "dice/deep/fed-0001.yaml"]
EDITS = st.lists(st.tuples(st.sampled_from(["same-size", "append", "delete", "write", "stage", "link"]),
                           st.sampled_from(GAME_PATHS + OTHER_PATHS), st.binary(min_size=1, max_size=8)),
                 max_size=6)


def _apply(root: Path, table: Table, kind: str, rel: str, data: bytes) -> None:
    path = root / rel
    if kind == "same-size" and path.is_file() and not path.is_symlink() and path.stat().st_size:
        body = path.read_bytes()
        _same_size_edit(path, body[:1], bytes([body[0] ^ 1]))
    elif kind == "append" and path.is_file() and not path.is_symlink():
        path.write_bytes(path.read_bytes() + data)
    elif kind == "delete" and (path.is_file() or path.is_symlink()):
        path.unlink()
    elif kind == "write" and not path.is_symlink():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    elif kind == "stage" and path.exists():
        table.git("add", "-f", rel)
    elif kind == "link" and not path.exists() and not path.is_symlink():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(root / "game.yaml")


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_fast_reader_agrees_with_plain_reader(base_played: Table, edits: list[tuple[str, str, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        table = copy_table(base_played, Path(scratch) / "table")
        _settle(table)
        for kind, rel, data in edits:
            _apply(table.repo_dir, table, kind, rel, data)
        repo = GameRepo.open(table.repo_dir)
        head = Workspace(repo).head_files()
        assert worktree.changed_files(repo, table.repo_dir, head) == worktree.plain_files(table.repo_dir)
