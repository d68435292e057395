"""The command line of its ecosystem (DESIGN §8): `--help` in panels, with or without rich, ruleset-only commands
marked; `pbem --version`; `--format json` on every command that reads the game, each output versioned
(`format: pbem-json/1`), with every key present (null, never absent) and valid against schemas/output/; every
error of the machine (a full disk, a missing folder, a permission denied) one line and exit 2, and a reader who
stops reading (a closed pipe) a quiet end.
"""

from __future__ import annotations

import functools
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


# --- `--format json` on every command that reads the game ----------------------------------------------------------

OUTPUTS = Path(pbem.cli.__file__).resolve().parents[3] / "schemas" / "output"


@functools.cache
def output_validators() -> dict[str, Any]:
    """One validator per schemas/output/<command>.json, resolving `pbem-json/1/common` among them."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    docs = {p.stem: json.loads(p.read_text()) for p in OUTPUTS.glob("*.json")}
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs.values())
    for doc in docs.values():
        Draft202012Validator.check_schema(doc)
    return {name: Draft202012Validator(doc, registry=registry) for name, doc in docs.items() if name != "common"}


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    return output_validators()


def checked_json(name: str, stdout: str) -> dict[str, Any]:
    """A `--format json` output, checked: its format, schemas/output/NAME.json, and every key of it present."""
    data = json.loads(stdout)
    assert data["format"] == "pbem-json/1"
    validator = output_validators()[name]
    errors = list(validator.iter_errors(data))
    assert not errors, (name, [e.message for e in errors])
    assert set(data) == _schema_keys(validator.schema)  # every key, even when it has nothing to say
    return data


def _schema_keys(schema: dict[str, Any]) -> set[str]:
    return set(schema.get("properties", {}))


def _read(validators: dict[str, Any], name: str, run: Any, *args: str) -> dict[str, Any]:
    """Run `pbem ARGS --format json`, check it against schemas/output/NAME.json, and return it."""
    done = run(*args, "--format", "json")
    assert done.exit_code in (0, 1), done.output
    return checked_json(name, done.stdout)


TACTICAL = [("verify", ()), ("status", ()), ("check", ()), ("log", ()), ("summary", ()), ("allowed-signers", ()),
            ("agreements", ()), ("deadlines", ()), ("erratum-show", ())]


@pytest.mark.parametrize("state", ["base_started", "base_opened", "base_played"])
def test_every_reading_command_of_a_tactical_game_gives_its_schema(validators: dict[str, Any], state: str,
                                                                   request: pytest.FixtureRequest) -> None:
    table: Table = request.getfixturevalue(state)
    run = lambda *args: table.cli(*args, who="fed")  # noqa: E731 - the reading needs no copy of the table
    for name, args in TACTICAL:
        _read(validators, name, run, *(name.split("-", 1) if name == "erratum-show" else [name]), *args)
    verify = _read(validators, "verify", run, "verify")
    assert verify["findings"] == [] and verify["ok"] is True
    status = _read(validators, "status", run, "status")["status"]
    assert status is not None and set(status) >= {"note", "position", "table"}  # null, never left out
    assert status["position"] is None and status["table"] is None
    log = _read(validators, "log", run, "log")
    assert log["game"] == "duel-e2e" and [p["id"] for p in log["players"]] == ["fed", "kli"]
    assert len(log["handoffs"]) == int(table.git("rev-list", "--count", "HEAD").stdout.decode())


def test_a_range_and_a_batch_in_json(validators: dict[str, Any], base_played: Table) -> None:
    run = lambda *args: base_played.cli(*args, who="kli")  # noqa: E731
    summary = _read(validators, "summary", run, "summary", "HEAD~1..HEAD")
    assert len(summary["commits"]) == 1 and summary["base"] is not None
    deadlines = _read(validators, "deadlines", run, "deadlines", "HEAD~1..HEAD")
    assert deadlines["range"] == "HEAD~1..HEAD" and deadlines["commits"] == 1 and deadlines["waits"] == []
    waits = _read(validators, "deadlines", run, "deadlines")
    assert waits["range"] is None and waits["commits"] is None and waits["waits"]
    assert all(w["overdue"] is False for w in waits["waits"])


def test_findings_keep_every_key(validators: dict[str, Any], played: Table) -> None:
    """A forged status: the finding names file, rule and commit; what it does not know is null, not absent."""
    played.sneak("kli")
    data = _read(validators, "verify", lambda *a: played.cli(*a), "verify")
    assert data["ok"] is False and data["findings"]
    assert all(set(f) == {"rule", "message", "file", "line", "commit", "hint"} for f in data["findings"])


def test_every_schema_has_a_command_and_every_reading_command_a_schema(validators: dict[str, Any]) -> None:
    tested = {name for name, _ in TACTICAL} | {"dice-show"}
    diplomacy = {"results", "relations", "inbox"}  # tests/test_dow_demo.py, on its demo game
    assert set(validators) == tested | diplomacy


def test_dice_show_in_json(validators: dict[str, Any], tmp_path: Path) -> None:
    """A stored game whose batch was rolled and revealed (tests/golden/repos/dice-revealed.bundle)."""
    import golden

    repo = golden.unpack("dice-revealed", tmp_path / "game", "main")
    batches = sorted(p.stem for p in (repo / "dice").glob("*.yaml"))
    assert batches

    def run(*args: str) -> Any:
        old = Path.cwd()
        os.chdir(repo)
        try:
            return CliRunner().invoke(pbem.cli.app, list(args), catch_exceptions=False)
        finally:
            os.chdir(old)

    for batch in batches:
        shown = _read(validators, "dice-show", run, "dice", "show", batch)["batch"]
        assert shown["id"] == batch and shown["rolls"]
        assert all(set(r) == {"for", "ref", "sides", "result"} for r in shown["rolls"])
    assert run("dice", "show", "nobody-0009", "--format", "json").exit_code == 2


def test_json_output_is_data_never_a_terminal_or_workflow_command(capsys: pytest.CaptureFixture[str]) -> None:
    from pbem.cli.options import emit_json

    emit_json({"note": "\x1b[2J\x1b]0;owned\x07 done\n::error file=x::forged\r\x7f\u202e", "list": ["\n::warning::x"]})
    out = capsys.readouterr().out
    assert out.isascii() and all(c == "\n" or c.isprintable() for c in out)
    assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert json.loads(out)["note"].startswith("\x1b[2J")  # the text itself is kept, only escaped


def test_before_the_start_every_key_is_there_too(validators: dict[str, Any], started: Table) -> None:
    """Setting up (the start signed but not made; then only the seats claimed): no status, no entries, no
    handoff control, and still every key of every reading."""
    run = lambda *args: started.cli(*args, who="kli")  # noqa: E731
    for back in ("HEAD~1", "HEAD~2"):  # the start proposed and signed; then the seats claimed, nothing proposed
        started.git("reset", "-q", "--hard", back)
        for name, args in TACTICAL:
            if name != "check":  # with nothing to commit before the start, check refuses (a usage error)
                _read(validators, name, run, *(name.split("-", 1) if name == "erratum-show" else [name]), *args)
        assert _read(validators, "status", run, "status")["status"] is None
        log = _read(validators, "log", run, "log")
        assert log["entries"] == [] and log["status"] is None and log["firm"] is None
        assert all(h["control"] is None for h in log["handoffs"])
    refused = run("check", "--format", "json")
    assert refused.exit_code == 2 and refused.stdout == "" and "[setup.not-started]" in refused.output
