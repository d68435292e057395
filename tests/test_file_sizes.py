"""No code file over 600 lines (the project's rule, ARCHITECTURE §4.1): a module that grows past it is split along
a seam of its own. Data modules, whose length is their content, are listed by name with what they hold."""

from __future__ import annotations

from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tool"
LIMIT = 600
DATA = {
    "pbem/rulesets/dow/convoys.py": "the standard map's convoy paths, one a line, and their 10-line loader",
}


def lines_of(tree: Path) -> dict[str, int]:
    return {p.relative_to(tree).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
            for p in sorted(tree.rglob("*.py"))}


def test_no_code_file_is_over_600_lines() -> None:
    sizes = lines_of(TOOL)
    assert len(sizes) > 100, "the scan finds no modules"
    over = {path: n for path, n in sizes.items() if n > LIMIT and path not in DATA}
    assert not over, f"code files over {LIMIT} lines (split them along a seam): {over}"
    assert set(DATA) <= set(sizes), "a listed data module is gone: take it off DATA"


def test_the_guard_finds_a_long_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * LIMIT)
    assert {p: n for p, n in lines_of(tmp_path).items() if n > LIMIT} == {"pkg/long.py": LIMIT + 1}
