"""The gate's lock: pbem and every package it runs with, each pinned by version and by the SHA-256 of the files
the game workflow's runner may install (DESIGN §9 revised: "the gate's own pbem is pinned with hashes").

The versions are the ones this pbem runs with (its installed dependencies, followed through their own
requirements with the runner's markers: CPython 3.11 on Linux x86_64); the hashes come from the package index
named by the host (`pbem init --index-url URL`), read through its simple API (PEP 691 JSON, else the PEP 503
page's `#sha256=` links). Only files the runner can use are listed: wheels for CPython 3.11 (or any Python) on
manylinux x86_64 (or any platform), and a package's source archive only where it has no such wheel. The lock is
written into the workflow itself, so GitHub reads it from the base branch with the rest of the check: a pull
request cannot change what the check installs.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from importlib import metadata
from typing import Callable, Iterable

import pbem
from pbem.errors import PbemError

PUBLIC_INDEX = "https://pypi.org/simple/"
RUNNER_PYTHON = "3.11"  # what the workflow's setup-python step installs
RUNNER_MARKERS = {"python_version": RUNNER_PYTHON, "python_full_version": f"{RUNNER_PYTHON}.0",
                  "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
                  "os_name": "posix", "implementation_name": "cpython", "platform_python_implementation": "CPython",
                  "platform_release": "", "platform_version": "", "implementation_version": f"{RUNNER_PYTHON}.0",
                  "extra": ""}
WHEEL_RE = re.compile(r"(?P<name>[^-]+)-(?P<version>[^-]+)(?:-[0-9][^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)"
                      r"-(?P<plat>[^-]+)\.whl\Z")
SDIST_SUFFIXES = (".tar.gz", ".zip")

Fetch = Callable[[str], tuple[str, bytes]]  # url -> (content type, body)


@dataclass(frozen=True)
class Pin:
    name: str  # normalized (PEP 503)
    version: str
    hashes: tuple[str, ...]  # sha256 hex of each usable file
    source_only: bool  # no usable wheel: pip builds the source archive on the runner


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_versions(root: str = "pbem") -> dict[str, str]:
    """`root` and everything it requires on the runner, at the versions installed here."""
    from packaging.requirements import Requirement

    versions: dict[str, str] = {}
    todo = [root]
    while todo:
        name = todo.pop()
        if normalize(name) in versions:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise PbemError("gate.lock", f"{name} is required but not installed here: pbem cannot pin it") from None
        versions[normalize(name)] = pbem.__version__ if normalize(name) == "pbem" else dist.version
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(RUNNER_MARKERS):
                todo.append(requirement.name)
    return versions


def usable_wheel(filename: str) -> bool:
    """Whether the runner's CPython 3.11 on Linux x86_64 can install this wheel."""
    m = WHEEL_RE.match(filename)
    if m is None:
        return False
    pythons, abis, platforms = (set(m.group(k).split(".")) for k in ("py", "abi", "plat"))
    py_ok = bool(pythons & {"py3", "py311", "cp311"}) or ("abi3" in abis and any(
        re.fullmatch(r"cp3([0-9]+)", p) and int(p[3:]) <= 11 for p in pythons))
    abi_ok = bool(abis & {"none", "abi3", "cp311"})
    plat_ok = "any" in platforms or any(re.fullmatch(r"(many)?linux[0-9_]*_x86_64", p) for p in platforms)
    return py_ok and abi_ok and plat_ok


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []  # (filename, href)
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.links.append((data.strip(), self._href))
            self._href = None


def files_of(index_url: str, name: str, fetch: Fetch) -> list[tuple[str, str]]:
    """(filename, sha256) of every file the index lists for `name`."""
    url = index_url.rstrip("/") + f"/{name}/"
    kind, body = fetch(url)
    if "json" in kind:
        data = json.loads(body)
        return [(f["filename"], f.get("hashes", {}).get("sha256", "")) for f in data.get("files", [])]
    parser = _Links()
    parser.feed(body.decode("utf-8", "replace"))
    found = []
    for filename, href in parser.links:
        m = re.search(r"#sha256=([0-9a-f]{64})", href)
        found.append((filename, m.group(1) if m else ""))
    return found


def pin(index_url: str, name: str, version: str, fetch: Fetch) -> Pin:
    """The hashes of `name==version`'s files the runner can use (module docstring)."""
    files = [(f, h) for f, h in files_of(index_url, name, fetch) if _version_of(f, name) == version]
    if any(not h for _f, h in files):
        raise PbemError("gate.lock", f"the index {index_url} gives no sha256 for some files of {name}=={version}")
    wheels = sorted(h for f, h in files if usable_wheel(f))
    if wheels:
        return Pin(name, version, tuple(wheels), False)
    sources = sorted(h for f, h in files if f.endswith(SDIST_SUFFIXES))
    if not sources:
        raise PbemError("gate.lock", f"the index {index_url} has no file of {name}=={version} that a "
                        f"CPython {RUNNER_PYTHON} runner on Linux x86_64 can install")
    return Pin(name, version, tuple(sources), True)


def _version_of(filename: str, name: str) -> str | None:
    m = WHEEL_RE.match(filename)
    if m:
        return m.group("version") if normalize(m.group("name")) == name else None
    for suffix in SDIST_SUFFIXES:
        if filename.endswith(suffix):
            stem = filename[: -len(suffix)]
            base, _, version = stem.rpartition("-")
            return version if normalize(base) == name else None
    return None


def lock_text(pins: Iterable[Pin], index_url: str) -> str:
    """A pip requirements file for `pip install --require-hashes --no-deps -r`."""
    pins = list(pins)
    lines = [f"# pbem {pbem.__version__} and what it runs with, for CPython {RUNNER_PYTHON} on Linux x86_64: "
             "written by `pbem init --index-url`", f"--index-url {index_url}"]
    built = [p.name for p in pins if p.source_only]
    lines.append("--only-binary :all:")  # never a build on the runner, but for what has no wheel at all:
    if built:
        lines.append(f"--no-binary {','.join(built)}")
    for p in pins:
        lines.append(f"{p.name}=={p.version} " + " ".join(f"--hash=sha256:{h}" for h in p.hashes))
    return "\n".join(lines) + "\n"


def http_fetch(url: str) -> tuple[str, bytes]:
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json, "
                                                              "text/html;q=0.1", "User-Agent": "pbem"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - the host names the index
            return answer.headers.get("Content-Type", ""), answer.read()
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise PbemError("gate.index", f"cannot read {url}: {reason}",
                        hint="pbem init --index-url URL of an index that holds this pbem and its dependencies "
                             "(docs/github.md)") from None


def lock(index_url: str, fetch: Fetch = http_fetch) -> str:
    """The lock for this pbem, its hashes read from `index_url`."""
    if not re.match(r"https?://", index_url):
        raise PbemError("usage.index-url", f"--index-url {index_url!r}: give the http(s) URL of a simple index")
    pins = [pin(index_url, name, version, fetch) for name, version in sorted(pinned_versions().items())]
    return lock_text(pins, index_url)
