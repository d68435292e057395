"""The rule catalog (tool/pbem/catalog.py) holds every rule id pbem raises and nothing else, docs/rules.md is
what it generates, and every rule id has a negative test naming it (ARCHITECTURE §4.4 guard b).

A rule id is raised where it is the first argument of `PbemError(...)`, `Finding(...)` or one of the helpers that
take a rule id first (RULE_TAKERS), or where it is written as a string `group.name` whose group is one of those
ids' groups (a constant such as `ILLEGAL = "rules.illegal-action"`, a choice `"a.b" if … else "a.c"`, a ruleset's
refusal). Everything is read with `ast`, so a rule id in a comment or docstring does not count.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from pbem import catalog

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tool" / "pbem"
RULE = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9][a-z0-9-]*\Z")
# callables whose first argument is a rule id
RULE_TAKERS = {"PbemError", "Finding", "_f", "_fail", "_finding", "_refuse", "refuse_rewrite"}
# `group.ext` strings that are file or host names, not rule ids (game.yaml, watch.toml, github.com)
NOT_RULES = {"yaml", "yml", "json", "toml", "txt", "md", "py", "pub", "svg", "html", "com"}

# a section of DESIGN.md (§4.8, §3 Trees) or of a seed text (seed §2.A of 000, seed 001 the Diplomacy variant)
SECTION = r"(§\d+(\.\d+)?( [A-Z][a-z]+)?|seed §\d+(\.[A-Z])?|seed 001)"

# Rule ids no test file names yet. This list may only shrink: a new rule id comes with its negative test.
WITHOUT_NEGATIVE_TEST = [
    "demo.script", "erratum.malformed", "game.unknown-ruleset", "gate.lock", "github.api",
    "github.permission", "github.unreachable", "history.root", "install.broken", "key.config-failed", "key.no-git",
    "key.unreadable", "log.no-game", "orders.already-revealed", "orders.not-sealed", "press.bad-whisper",
    "press.refused", "pull.failed", "push.dirty", "push.fetch-failed", "push.merge", "push.no-git",
    "push.remote-invalid", "push.unrelated", "render.no-map", "repo.bare", "repo.empty", "repo.shallow",
    "repo.unreadable", "report.wrong-file", "schema.bad-condition", "secret.bad-plaintext", "secret.bad-withheld",
    "secret.unknown-kind", "setup.seats-open", "setup.unexpected-file", "tree.no-game", "tree.unreadable",
    "usage.bad-id", "usage.cosign", "usage.no-erratum", "usage.no-file",
    "usage.no-seat", "usage.not-empty", "usage.orders", "usage.reaffirm", "usage.template", "usage.whisper",
]
WITHOUT_NEGATIVE_TEST_COUNT = 48


def _strings(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(first arguments of the rule takers, every other string constant shaped like a rule id)."""
    taken, shaped = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            value = node.args[0].value
            if name in RULE_TAKERS and isinstance(value, str) and RULE.match(value):
                taken.add(value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE.match(node.value):
            shaped.add(node.value)
    return taken, shaped


def raised_ids(package: Path = PACKAGE) -> set[str]:
    """Every rule id the package raises (see the module docstring)."""
    taken: set[str] = set()
    shaped: set[str] = set()
    for path in package.rglob("*.py"):
        if path.name == "catalog.py" and path.parent == package:
            continue
        one, other = _strings(ast.parse(path.read_text(encoding="utf-8")))
        taken |= one
        shaped |= other
    groups = {rule.split(".")[0] for rule in taken}
    return taken | {s for s in shaped if s.split(".")[0] in groups and s.split(".")[1] not in NOT_RULES}


def test_every_rule_raised_is_in_the_catalog_and_every_catalog_rule_is_raised() -> None:
    raised = raised_ids()
    assert len(raised) > 200, "the scan finds no rule ids: RULE_TAKERS no longer matches the code"
    assert sorted(raised - set(catalog.RULES)) == [], "rule ids raised but not in tool/pbem/catalog.py"
    assert sorted(set(catalog.RULES) - raised) == [], "rule ids in the catalog that nothing raises"


def test_every_rule_has_its_group_a_section_and_one_line_to_do() -> None:
    for rule in catalog.RULES.values():
        assert rule.group in catalog.GROUPS, rule.id
        assert re.fullmatch(f"{SECTION}(, {SECTION})*", rule.section), rule
        assert rule.do and "\n" not in rule.do and rule.do.endswith("."), rule
    assert {rule.group for rule in catalog.RULES.values()} == set(catalog.GROUPS), "a group without rules"
    assert list(catalog.RULES) == sorted(catalog.RULES), "keep the table in order of id"


def test_docs_rules_md_is_what_the_catalog_generates() -> None:
    assert catalog.DOC.read_text(encoding="utf-8") == catalog.markdown(), (
        "docs/rules.md is stale: python -m pbem.catalog --write")
    done = subprocess.run([sys.executable, "-m", "pbem.catalog"], capture_output=True, text=True, check=True)
    assert done.stdout == catalog.markdown()


def test_every_rule_has_a_negative_test_naming_it_but_the_counted_few() -> None:
    texts = [p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("test_*.py")
             if p.name != Path(__file__).name]
    named = {rule for rule in catalog.RULES if any(rule in text for text in texts)}
    without = sorted(set(catalog.RULES) - named)
    assert len(WITHOUT_NEGATIVE_TEST) == WITHOUT_NEGATIVE_TEST_COUNT, "the list and its count go down together"
    assert sorted(set(without) - set(WITHOUT_NEGATIVE_TEST)) == [], "a rule id without a negative test naming it"
    assert sorted(set(WITHOUT_NEGATIVE_TEST) - set(without)) == [], (
        "these have a negative test now: take them off WITHOUT_NEGATIVE_TEST and lower its count")


def test_the_scan_finds_takers_constants_and_choices_and_skips_file_names() -> None:
    source = ('''ILLEGAL = "rules.illegal-action"\n'''
              '''def f(x):\n    raise PbemError("usage.no-seat", "no seat")\n'''
              '''rule = "agreement.second-end" if x else "agreement.closed"\n'''
              '''Finding("rules.pursuit", "m", file="game.yaml")\n''')
    taken, shaped = _strings(ast.parse(source))
    assert taken == {"usage.no-seat", "rules.pursuit"}
    assert {"rules.illegal-action", "agreement.second-end", "agreement.closed", "game.yaml"} <= shaped
