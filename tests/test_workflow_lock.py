"""The gate is installable and pinned (DESIGN §9 revised): `pbem init --index-url URL` writes into the workflow a
lock of pbem and every package it runs with, each by version and SHA-256, read from that index; the workflow's
install step runs `pip install --require-hashes --no-deps -r` on it.

Proven against a real index: the wheel of this pbem (`python -m build`) and its dependencies (`pip download`,
for the runner's platform) are served as a PEP 503 simple index by http.server on 127.0.0.1, and the workflow
runs through tests/actions_runner.py in a fresh Python with only pip: the install step installs from the
index, and the verify step then runs the pbem it installed. Where the files cannot be had (no network to the
public index), the install test skips and says so.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

import pbem
from actions_runner import FakeGitHub, Runner, load, push_event
from conftest import Dist, Table
from pbem.errors import PbemError
from pbem.services import gatelock

PIP = [sys.executable, "-m", "pip"]


def write_index(files: Path, root: Path) -> Path:
    """A PEP 503 simple index of every file in `files`, with `#sha256=` links."""
    simple = root / "simple"
    by_name: dict[str, list[Path]] = {}
    for f in sorted(files.iterdir()):
        name = f.name[:-4].split("-")[0] if f.name.endswith(".whl") else f.name.rsplit("-", 1)[0]
        by_name.setdefault(gatelock.normalize(name), []).append(f)
    for name, paths in by_name.items():
        page = simple / name
        page.mkdir(parents=True)
        links = "".join(f'<a href="../../{files.name}/{p.name}#sha256={hashlib.sha256(p.read_bytes()).hexdigest()}">'
                        f"{p.name}</a><br>\n" for p in paths)
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    return simple


@pytest.fixture
def serve() -> Iterator[functools.partial[str]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(root: Path) -> str:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        handler.log_message = lambda *a: None  # type: ignore[attr-defined]
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/simple/"

    yield functools.partial(start)
    for server in servers:
        server.shutdown()


# --- the lock, read from an index ----------------------------------------------------------------------------

def fake_files(folder: Path) -> Path:
    folder.mkdir()
    for name, version in gatelock.pinned_versions().items():
        stem = name.replace("-", "_")
        for suffix in (f"{version}-py3-none-any.whl", f"{version}-cp311-cp311-win_amd64.whl",
                       f"{version}-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"):
            (folder / f"{stem}-{suffix}").write_bytes(f"{stem}-{suffix}".encode())
        (folder / f"{stem}-0.0.1-py3-none-any.whl").write_bytes(b"another version")
    return folder


def test_the_lock_lists_every_package_at_this_version_with_the_hashes_of_the_runner_s_files(
        tmp_path: Path, serve: functools.partial[str]) -> None:
    files = fake_files(tmp_path / "files")
    url = serve(tmp_path) if write_index(files, tmp_path) else ""
    text = gatelock.lock(url)
    lines = text.splitlines()
    assert lines[1:3] == [f"--index-url {url}", "--only-binary :all:"]
    pins = {line.split("==")[0]: line for line in lines[3:]}
    assert set(pins) == set(gatelock.pinned_versions()) and f"pbem=={pbem.__version__} " in pins["pbem"]
    for name, version in gatelock.pinned_versions().items():
        stem = name.replace("-", "_")
        usable = sorted(hashlib.sha256(f"{stem}-{version}-{tail}".encode()).hexdigest() for tail in (
            "py3-none-any.whl", "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"))
        assert pins[name] == f"{name}=={version} " + " ".join(f"--hash=sha256:{h}" for h in usable)


def test_a_package_missing_from_the_index_or_an_unreachable_index_is_one_clear_error(
        tmp_path: Path, serve: functools.partial[str]) -> None:
    files = fake_files(tmp_path / "files")
    for f in files.glob("pbem-*"):
        f.unlink()
    write_index(files, tmp_path)
    url = serve(tmp_path)
    with pytest.raises(PbemError) as missing:
        gatelock.lock(url)
    assert missing.value.finding.rule == "gate.index" and "pbem/" in str(missing.value)
    with pytest.raises(PbemError) as bad:
        gatelock.lock("ftp://example.org/simple/")
    assert bad.value.finding.rule == "usage.index-url"


@pytest.mark.parametrize("filename, usable", [
    ("pygit2-1.21.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", True),
    ("pygit2-1.21.0-cp312-cp312-manylinux_2_17_x86_64.whl", False),
    ("pynacl-1.6.2-cp38-abi3-manylinux_2_28_x86_64.whl", True),
    ("pynacl-1.6.2-cp38-abi3-manylinux_2_28_aarch64.whl", False),
    ("rich-15.0.0-py3-none-any.whl", True),
    ("x-1-cp311-cp311-musllinux_1_1_x86_64.whl", False),
    ("x-1-cp311-cp311-macosx_11_0_arm64.whl", False),
])
def test_only_wheels_the_runner_can_install_are_pinned(filename: str, usable: bool) -> None:
    assert gatelock.usable_wheel(filename) is usable


def test_init_with_an_index_writes_the_lock_into_the_workflow(tmp_path: Path, serve: functools.partial[str],
                                                                started: Table) -> None:
    url = serve(tmp_path) if write_index(fake_files(tmp_path / "files"), tmp_path) else ""
    done = started.pbem("init", str(tmp_path / "new"), "--id", "locked", "--index-url", url, who="fed",
                        cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "new" / ".github" / "workflows" / "pbem.yml").read_text()
    assert "--require-hashes --no-deps" in text and f"--index-url {url}" in text
    assert text.count("--hash=sha256:") == 2 * len(gatelock.pinned_versions())
    install = next(s for s in load(text)["jobs"]["verify"]["steps"] if s.get("name", "").startswith("install"))
    assert "${{" not in install["run"] and "working-directory" not in install
    assert subprocess.run(["bash", "-n", "-c", install["run"]]).returncode == 0
    if shutil.which("shellcheck"):
        done = subprocess.run(["shellcheck", "-s", "bash", "-"], input=install["run"], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout
    plain = started.pbem("init", str(tmp_path / "plain"), "--id", "plain", who="fed", cwd=tmp_path)
    assert plain.returncode == 0 and "not by hash: give --index-url" in plain.stderr
    both = started.pbem("init", str(tmp_path / "both"), "--id", "both", "--index-url", url, "--pbem-spec", "x",
                        who="fed", cwd=tmp_path)
    assert both.returncode == 2 and "usage.conflict" in both.stderr and not (tmp_path / "both").exists()


# --- the install step, run as the runner runs it, from a real local index --------------------------------------

@pytest.fixture(scope="session")
def real_index_files(tmp_path_factory: pytest.TempPathFactory, pbem_dist: Dist) -> Path:
    """This pbem's wheel (conftest.pbem_dist: built once per run) and its dependencies' files for the runner, or a
    skip saying why they cannot be had."""
    folder = tmp_path_factory.mktemp("index-files")
    if pbem_dist.failed:
        pytest.skip(f"python -m build could not build the wheel: {pbem_dist.failed.strip()[-300:]}")
    (wheel,) = pbem_dist.folder.glob("pbem-*.whl")
    shutil.copy(wheel, folder)
    pins = {n: v for n, v in gatelock.pinned_versions().items() if n != "pbem"}
    wheels = [f"{n}=={v}" for n, v in pins.items() if n != "diplomacy"]
    platform = ["--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_28_x86_64",
                "--platform", "any", "--python-version", "3.11", "--implementation", "cp"]
    for args in (["--only-binary", ":all:", *platform, *wheels],
                 ["--no-binary", ":all:", f"diplomacy=={pins['diplomacy']}"],  # a source archive only
                 ["--only-binary", ":all:", "setuptools", "wheel"]):  # what building it takes
        done = subprocess.run([*PIP, "download", "-q", "--no-deps", "-d", str(folder), *args],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.skip(f"pip download could not fetch the dependencies: {done.stderr.strip()[-300:]}")
    return folder


def test_the_workflow_installs_the_pinned_gate_from_the_index_and_runs_it(
        real_index_files: Path, played: Table, tmp_path: Path, serve: functools.partial[str]) -> None:
    (tmp_path / "files").symlink_to(real_index_files)
    url = serve(tmp_path) if write_index(tmp_path / "files", tmp_path) else ""
    lock = gatelock.lock(url)
    assert "--no-binary diplomacy" in lock
    from pbem.services.setup import workflow_text

    hub = FakeGitHub.hosting(played.repo_dir, tmp_path / "github")
    head = hub.tip()
    assert head is not None
    job = Runner(hub, tmp_path / "runner", home=played.home, clean_python=True).run(
        workflow_text(None, lock), push_event("0" * 40, head))
    install = job.step("install pbem")
    assert install.exit_code == 0, install.stdout[-2000:] + install.stderr[-2000:]
    assert f"pbem-{pbem.__version__}" in install.stdout
    verify = job.step("verify every commit")
    assert verify.exit_code == 0 and verify.stdout == "pbem verify: 8 commits, 0 finding(s)\n", verify.stderr
    line = next(line for line in lock.splitlines() if line.startswith("pbem=="))
    tampered = lock.replace(line, line.split()[0] + " --hash=sha256:" + "0" * 64)  # another file than the index's
    bad = Runner(hub, tmp_path / "runner2", home=played.home, clean_python=True).run(
        workflow_text(None, tampered), push_event("0" * 40, head))
    assert bad.step("install pbem").exit_code != 0 and "HASHES" in bad.step("install pbem").stdout + \
        bad.step("install pbem").stderr
    assert bad.step("verify every commit").outcome == "skipped"
