"""The wheel carries everything pbem needs at run time (issue 2, point 1): schemas, game templates and the
workflow template. Built from this tree, installed into a fresh venv outside it, it plays and verifies a game.

The distributions are built as a release builds them (`python -m build`: the sdist, then the wheel from the
sdist, so the sdist is complete) and pass `twine check --strict`: the `pbem==X` that game workflows pin can be
published as it is (.github/workflows/release.yml)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

import pbem
from conftest import Dist

ROOT = Path(__file__).resolve().parents[1]
VERSION = pbem.__version__


@pytest.fixture(scope="module")
def dist(pbem_dist: Dist) -> Path:
    """`python -m build` of this tree (once per run: conftest.pbem_dist): dist/ with the sdist and the wheel
    built from it."""
    assert not pbem_dist.failed, pbem_dist.failed
    return pbem_dist.folder


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("pbem-*.whl")
    return found


def test_the_distributions_pass_twine_check(dist: Path) -> None:
    """What PyPI would refuse (bad metadata, a README that does not render) fails here first."""
    files = sorted(str(p) for p in dist.iterdir())
    assert [Path(f).name for f in files] == [f"pbem-{VERSION}-py3-none-any.whl", f"pbem-{VERSION}.tar.gz"]
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_the_sdist_holds_what_the_wheel_is_built_from(dist: Path) -> None:
    (sdist,) = dist.glob("pbem-*.tar.gz")
    names = set(tarfile.open(sdist).getnames())
    root = f"pbem-{VERSION}"
    for path in ("pyproject.toml", "README.md", "LICENSE", ".github/game-template/pbem.yml", "tool/pbem/cli/__init__.py",
                 "schemas/status.json", "games/tactical-duel/game.yaml", "tests/test_wheel.py"):
        assert f"{root}/{path}" in names, path


def test_wheel_ships_schemas_templates_and_workflow(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in (ROOT / "schemas").rglob("*.json"):  # the game files' and, in output/, `--format json`'s
        assert f"pbem/schemas/{schema.relative_to(ROOT / 'schemas').as_posix()}" in names
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
