"""The house keeps its shape (DESIGN §10): the layers import only downwards, no module imports itself round a
circle, and the pure core (protocol/, rulesets/) touches no git, file system, clock, randomness or terminal.

Every import the package makes is read with `ast`, at module level and inside functions alike (a lazy import is
still an arrow). The few known exceptions are listed below with the reason each exists; the lists may only shrink:
a new exception is a design decision and belongs in review, not in a quiet edit here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tool" / "pbem"

# Top may import below, never the reverse (DESIGN §10; ARCHITECTURE §4.1). Layers of one rank may not import
# each other either: render and verify stand side by side, so do protocol and store.
RANK = {
    "cli": 10,
    "services": 9,
    "verify": 8, "render": 8,
    "files": 7,
    "protocol": 6, "store": 6,
    "crypto": 5,
    "rulesets": 4, "formats": 3,
    "errors": 2,
    "text": 1,
    "catalog": 1,  # every rule id and what to do about it: imports nothing, so errors may take hints from it
    "pbem": 0,  # the package's own __init__ (its version): imports nothing of pbem
}

KNOWN_UPWARD: set[tuple[str, str]] = set()

KNOWN_CYCLES: set[frozenset[str]] = set()

# What the pure core may not import: git, processes, files, clocks, randomness, the network, the terminal.
IMPURE = {"pygit2", "subprocess", "os", "pathlib", "shutil", "tempfile", "glob", "io", "time", "random", "secrets",
          "socket", "urllib", "http", "sys", "typer", "click", "pbem.store", "pbem.services", "pbem.verify",
          "pbem.cli", "pbem.render"}
PURE_LAYERS = ("protocol", "rulesets")
KNOWN_IMPURE = {
    # cache serials of parsed report files must not collide across the processes whose kept states meet; they
    # are identities for a cache, never part of a rule or a derivation.
    ("pbem.protocol.model", "os"),
    # the diplomacy package is imported without its heavy side modules (see the module docstring there).
    ("pbem.rulesets.dow.package", "sys"),
}


def module_name(path: Path, root: Path) -> str:
    """`pbem.protocol.replay` for tool/pbem/protocol/replay.py; a package's __init__ is the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, name: str, modules: Iterable[str]) -> set[str]:
    """Every module `path` imports (absolute names), at any depth of the file; `from pkg import mod` names the
    submodule where there is one."""
    known = set(modules)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                found.add(sub if sub in known else source)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules it imports, for every module under `root`."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    return {name: imports_of(path, name, paths) for name, path in paths.items()}


def layer(module: str) -> str:
    return module.split(".")[1] if module.count(".") else "pbem"


def upward(graph: Mapping[str, set[str]]) -> set[tuple[str, str]]:
    """Arrows from a layer to one of its own rank or above (a layer importing itself is fine)."""
    out = set()
    for source, targets in graph.items():
        for target in targets:
            if not target.startswith("pbem") or layer(source) == layer(target):
                continue
            if RANK[layer(target)] >= RANK[layer(source)]:
                out.add((source, target))
    return out


def cycles(graph: Mapping[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in graph), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.add(frozenset(group))
    return found


def impure(graph: Mapping[str, set[str]]) -> set[tuple[str, str]]:
    """Imports of the pure core that reach outside it (git, files, clock, randomness, terminal, upper layers)."""
    out = set()
    for source, targets in graph.items():
        if layer(source) not in PURE_LAYERS:
            continue
        for target in targets:
            if any(target == bad or target.startswith(bad + ".") for bad in IMPURE):
                out.add((source, target.split(".")[0] if not target.startswith("pbem") else target))
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_layers_import_only_downwards(graph: dict[str, set[str]]) -> None:
    assert upward(graph) - KNOWN_UPWARD == set()


def test_no_module_imports_itself_round_a_circle(graph: dict[str, set[str]]) -> None:
    assert cycles(graph) - KNOWN_CYCLES == set()


def test_the_pure_core_touches_no_git_files_clock_randomness_or_terminal(graph: dict[str, set[str]]) -> None:
    assert impure(graph) - KNOWN_IMPURE == set()


def test_every_layer_is_ranked(graph: dict[str, set[str]]) -> None:
    assert {layer(m) for m in graph} <= set(RANK)


def test_the_known_exceptions_still_exist(graph: dict[str, set[str]]) -> None:
    """An exception that no longer happens is taken off its list, so it cannot come back unseen."""
    assert KNOWN_UPWARD <= upward(graph)
    assert KNOWN_CYCLES <= cycles(graph)
    assert KNOWN_IMPURE <= impure(graph)


def test_the_guards_find_what_they_look_for(tmp_path: Path) -> None:
    """The checks on a made-up package: a circle, an arrow upwards, a clock in the protocol."""
    root = tmp_path / "pbem"
    files = {
        "__init__.py": "",
        "errors.py": "from pbem.verify import history\n",
        "verify/__init__.py": "",
        "verify/history.py": "from pbem.protocol import replay\n",
        "protocol/__init__.py": "",
        "protocol/replay.py": "import time\nfrom . import control\n",
        "protocol/control.py": "def f():\n    from pbem.protocol import replay\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    made = import_graph(root)
    assert upward(made) == {("pbem.errors", "pbem.verify.history")}
    assert cycles(made) == {frozenset({"pbem.protocol.replay", "pbem.protocol.control"})}
    assert impure(made) == {("pbem.protocol.replay", "time")}
