"""The ruleset contract (rulesets/base.py, DESIGN §7): every hook the protocol, the verifier and the services call
is declared there, required on `Ruleset` or in one of the capabilities a ruleset reaches as an attribute
(`ruleset.dice`, `ruleset.press`, ...); each built-in ruleset satisfies every capability it claims, and gives None
for the others. No hook is probed by name (`getattr(ruleset, "...")`): a probe anywhere fails, naming its
file."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from pbem import rulesets
from pbem.rulesets.base import CAPABILITIES, Capabilities, Ruleset

from tinyrules import TinyRuleset

PACKAGE = Path(__file__).resolve().parents[1] / "tool" / "pbem"

CLAIMS = {
    "tactical/1": {"plans", "dice", "declared", "sealing", "seeking", "audit", "seats", "foresight", "uses", "armed",
                   "summary"},
    "dow/1": {"sealing", "press", "orders", "seats", "positions"},
}

# Probes by name (none left: every hook is reached through its capability); the counts may only come down.
KNOWN_PROBES: dict[str, int] = {}
# Names probed but declared nowhere.
UNDECLARED: set[str] = set()

PROBE = re.compile(r'\b(?:getattr|hasattr)\(\s*[\w.]*?\b(?:ruleset|rules)\s*,\s*"(\w+)"')


def members(protocol: type) -> set[str]:
    """The names a Protocol declares (methods, properties, annotated attributes)."""
    names = {n for n in vars(protocol) if not n.startswith("_")}
    return names | set(getattr(protocol, "__annotations__", {}))


def contract_problems(ruleset: Any) -> list[str]:
    """What is wrong with `ruleset` against the contract: a capability that is not None and lacks a member of its
    Protocol, or whose method takes another number of parameters than declared."""
    out = []
    for attribute, protocol in CAPABILITIES.items():
        capability = getattr(ruleset, attribute)
        if capability is None:
            continue
        for name in sorted(members(protocol)):
            if not hasattr(capability, name):
                out.append(f"{attribute}: no {name}")
                continue
            declared = vars(protocol).get(name)
            if inspect.isfunction(declared):
                given = getattr(capability, name)
                want = len(inspect.signature(declared).parameters) - 1  # without self
                have = len([p for p in inspect.signature(given).parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
                if have != want:
                    out.append(f"{attribute}: {name} takes {have} arguments, the contract {want}")
        if not isinstance(capability, protocol):
            out.append(f"{attribute}: not a {protocol.__name__}")
    return out


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_each_builtin_ruleset_satisfies_the_capabilities_it_claims(name: str) -> None:
    ruleset = rulesets.get(name)
    claimed = {a for a in CAPABILITIES if getattr(ruleset, a) is not None}
    assert claimed == CLAIMS[name]
    assert contract_problems(ruleset) == []
    for required in members(Ruleset) - set(CAPABILITIES):
        assert hasattr(ruleset, required), required


def test_a_ruleset_without_capabilities_has_none_of_them() -> None:
    tiny = TinyRuleset()
    assert all(getattr(tiny, a) is None for a in CAPABILITIES)
    assert all(getattr(Capabilities(), a) is None for a in CAPABILITIES)
    assert contract_problems(tiny) == []


def test_the_check_finds_a_capability_that_falls_short() -> None:
    """A ruleset claiming dice with a roller of the wrong shape and no `dice_sides`: both are named."""
    class Short:
        def dice_needed(self, state: Any, point: Any, actions: Any) -> list[str]:
            return []

        def dice_roller(self, ref: str) -> str | None:
            return None

    class Claims(TinyRuleset):
        @property
        def dice(self) -> Any:
            return Short()

    found = contract_problems(Claims())
    assert "dice: no dice_sides" in found
    assert "dice: dice_roller takes 1 arguments, the contract 2" in found
    assert "dice: not a Dice" in found


def _probes() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("rulesets/"):
            continue
        found = PROBE.findall(path.read_text(encoding="utf-8"))
        if found:
            out[rel] = found
    return out


def test_probes_by_name_only_come_down() -> None:
    counts = {rel: len(names) for rel, names in _probes().items()}
    over = {rel: (n, KNOWN_PROBES.get(rel, 0)) for rel, n in counts.items() if n > KNOWN_PROBES.get(rel, 0)}
    assert not over, f"new probes by name (file: (now, allowed)); declare a capability instead: {over}"
    stale = {rel: (counts.get(rel, 0), n) for rel, n in KNOWN_PROBES.items() if counts.get(rel, 0) < n}
    assert not stale, f"fewer probes than listed (file: (now, listed)): lower KNOWN_PROBES: {stale}"


def test_every_name_probed_is_declared() -> None:
    declared = members(Ruleset).union(*(members(p) for p in CAPABILITIES.values()))
    probed = {name for names in _probes().values() for name in names}
    assert probed - declared == UNDECLARED
