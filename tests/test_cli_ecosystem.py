"""The command line of its ecosystem (DESIGN §8): `--help` in panels, with or without rich, ruleset-only commands
marked; `pbem --version`; `--format json` on every command that reads the game, each output versioned
(`format: pbem-json/1`), with every key present (null, never absent) and valid against schemas/output/; every
error of the machine (a full disk, a missing folder, a permission denied) one line and exit 2, and a reader who
stops reading (a closed pipe) a quiet end.
"""

from __future__ import annotations

import json
import os
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

import pbem
import pbem.cli
from conftest import PBEM, Table

# --- grouped help -----------------------------------------------------------------------------------------------


def _app_commands() -> set[str]:
    return set(typer.main.get_command(pbem.cli.app).commands)  # type: ignore[attr-defined]


def test_every_command_is_in_exactly_one_panel() -> None:
    placed = [name for rows in pbem.cli.PANELS.values() for name, _ in rows]
    assert len(placed) == len(set(placed))
    assert set(placed) == _app_commands()
    assert all(len(line) <= 58 for rows in pbem.cli.PANELS.values() for _, line in rows)


def _help(rich: bool) -> str:
    env = {**os.environ, "TYPER_USE_RICH": "1" if rich else "0", "COLUMNS": "80", "TERM": "dumb"}
    done = subprocess.run([str(PBEM), "--help"], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "plain"])
def test_help_shows_the_panels_in_order_and_marks_the_diplomacy_commands(rich: bool) -> None:
    text = _help(rich)
    at = [text.index(panel) for panel in pbem.cli.PANELS]
    assert at == sorted(at), "the panels in the order a player needs them"
    reading = text[text.index("Reading"):text.index("Hosting")]
    for name in ("results", "relations", "inbox"):
        line = next(row for row in reading.splitlines() if f" {name} " in row)
        assert "[Diplomacy]" in line and "\\[" not in line, line
    diplomacy = text[text.index("Diplomacy (dow/1 games only)"):text.index("Reading")]
    for name in ("orders", "say", "whisper", "warn"):
        assert f" {name} " in diplomacy
    assert " status " not in diplomacy
    assert max(len(line) for line in text.splitlines()) <= 80


def test_version_is_the_installed_distribution() -> None:
    for args in (["--version"], ["version"]):
        done = CliRunner().invoke(pbem.cli.app, args)
        assert done.exit_code == 0
        assert done.output == metadata.version("pbem") + "\n"
    assert metadata.version("pbem") == pbem.__version__  # pyproject.toml and the package say the same


# --- every error of the machine: one line, exit 2 ---------------------------------------------------------------


def _one_line(stderr: str, rule: str) -> None:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    first, *rest = stderr.splitlines()
    assert first.startswith(f"pbem: [{rule}] "), stderr
    assert all(line.startswith("  hint: ") for line in rest), stderr


@pytest.mark.parametrize("args", [["allowed-signers"], ["log"], ["verify"], ["status", "--format", "json"]],
                         ids=" ".join)
def test_a_full_disk_is_one_line_and_exit_2(base_played: Table, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([str(PBEM), *args], cwd=base_played.repo_dir, env=base_played.env("fed"),
                              stdout=full, stderr=subprocess.PIPE, text=True, check=False)
    assert done.returncode == 2
    _one_line(done.stderr, "system.disk-full")
    assert "standard output" in done.stderr


@pytest.mark.parametrize("args", [["log"], ["verify", "--format", "json"], ["allowed-signers"]], ids=" ".join)
def test_a_reader_who_stops_reading_ends_the_command_quietly(base_played: Table, args: list[str]) -> None:
    """`pbem log | head -1`: the pipe is closed before pbem writes; no traceback, no "Exception ignored"."""
    proc = subprocess.Popen([str(PBEM), *args], cwd=base_played.repo_dir, env=base_played.env("fed"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait() == 2
    assert stderr == ""


def test_a_missing_folder_is_one_line_and_changes_nothing(base_played: Table, tmp_path: Path) -> None:
    before = base_played.snapshot()
    done = base_played.pbem("log", "--out", str(tmp_path / "no" / "such" / "log.txt"), who="fed")
    assert done.returncode == 2
    _one_line(done.stderr, "system.no-such-file")
    assert str(tmp_path / "no" / "such" / "log.txt") in done.stderr
    assert base_played.snapshot() == before


def test_a_current_folder_removed_is_one_line(base_played: Table, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.Popen(["sh", "-c", f"cd {gone} && rmdir {gone} && exec {PBEM} status"],
                            env=base_played.env("fed"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    assert proc.returncode == 2, (out, err)
    _one_line(err, "system.no-such-file")
    assert "the current folder" in err


def _unwritable(tmp_path: Path) -> Path:
    """A path this process may not write: a read-only folder, or (as root, whom no mode stops) a kernel file."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir(mode=0o500)
        return folder / "log.txt"
    for path in (Path("/sys/kernel/notes"), Path("/proc/sys/kernel/ostype")):
        try:
            path.open("w").close()
        except PermissionError:
            return path
        except OSError:
            continue
    pytest.skip("no file here refuses root with EACCES")


def test_a_permission_denied_is_one_line(base_played: Table, tmp_path: Path) -> None:
    target = _unwritable(tmp_path)
    done = base_played.pbem("log", "--out", str(target), who="fed")
    assert done.returncode == 2
    _one_line(done.stderr, "system.permission")
    assert str(target) in done.stderr


def test_any_other_error_of_the_machine_is_one_line_too() -> None:
    """An errno without a rule of its own (here: a folder given where a file is read) still says what failed."""
    from pbem.errors import os_error

    err = os_error(IsADirectoryError(21, "Is a directory", "/tmp"))
    assert err.finding.rule == "system.os-error"
    assert str(err).startswith("[system.os-error] /tmp: Is a directory")
