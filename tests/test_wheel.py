"""The wheel carries everything pbem needs at run time (issue 2, point 1): schemas, game templates and the
workflow template. Built from this tree, installed into a fresh venv outside it, it plays and verifies a game."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True)
    (found,) = out.glob("pbem-*.whl")
    return found


def test_wheel_ships_schemas_templates_and_workflow(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in (ROOT / "schemas").glob("*.json"):
        assert f"pbem/schemas/{schema.name}" in names
    assert "pbem/games/tactical-duel/game.yaml" in names
    assert "pbem/games/tactical-duel/demo.yaml" in names
    assert "pbem/github/pbem.yml" in names
    assert not any(n.startswith(("tests/", "tool/")) for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    assert "AGPL-3.0-or-later" in zipfile.ZipFile(wheel).read(meta).decode()


def test_installed_wheel_plays_and_verifies_a_game_outside_the_source_tree(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PBEM_KEY")}
    env["HOME"] = str(tmp_path)
    where = subprocess.run([str(python), "-c", "import pbem; print(pbem.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(env_dir) in where and str(ROOT) not in where
    demo = subprocess.run([str(env_dir / "bin" / "pbem"), "demo", str(work / "duel")], cwd=work, env=env,
                          capture_output=True, text=True)
    assert demo.returncode == 0, demo.stderr
    assert "<-- firm to here -->" in demo.stdout or "game is over" in demo.stdout
    verify = subprocess.run([str(env_dir / "bin" / "pbem"), "verify"], cwd=work / "duel" / "game", env=env,
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    counted = re.match(r"ok: (\d+) commits verified", verify.stdout)
    assert counted and int(counted.group(1)) >= 30
