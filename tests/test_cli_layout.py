"""The command line is a package with one module per command group (pre-commit's layout): the groups share
`pbem.cli.options`, which imports none of them back, and no group imports another, so there is no import circle.
`pbem.cli.application` registers every group on the app; `pbem.cli.fast` (the commands served before the app is
built, and the output helpers both paths share) imports no group and no typer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pbem.cli

PACKAGE = Path(pbem.cli.__file__).parent
NOT_GROUPS = ("__init__", "options", "application", "fast")
GROUPS = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in NOT_GROUPS)


def imported_cli_modules(path: Path) -> set[str]:
    """The `pbem.cli.*` modules a file imports, anywhere in it (also inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("pbem.cli."):
                found.add(node.module.split(".")[2])
            elif node.module == "pbem.cli":
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("pbem.cli."))
    return found


def test_the_old_flat_modules_are_gone() -> None:
    assert not list(PACKAGE.parent.glob("cli_*.py"))
    assert not (PACKAGE.parent / "cli.py").exists()


def test_options_imports_no_command_group() -> None:
    assert imported_cli_modules(PACKAGE / "options.py") <= {"fast"}
    assert imported_cli_modules(PACKAGE / "fast.py") == set()


@pytest.mark.parametrize("group", GROUPS)
def test_a_command_group_imports_only_the_shared_options(group: str) -> None:
    assert imported_cli_modules(PACKAGE / f"{group}.py") <= {"options", "fast"}


def test_every_group_is_registered_on_the_app() -> None:
    """A group module nobody adds to the app would be a set of commands `pbem --help` never shows."""
    registered = {name for name in GROUPS if getattr(pbem.cli, name, None) is not None}
    assert registered == set(GROUPS)
    tree = ast.parse((PACKAGE / "application.py").read_text())
    added = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert set(GROUPS) <= added
