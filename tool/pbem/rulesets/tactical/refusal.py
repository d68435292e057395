"""A reason of `tactical/1` that names its own rule id (the protocol's default is `rules.illegal-action`;
pbem.protocol.legality reads `reason.rule`)."""

from __future__ import annotations


class Refusal(str):
    """A reason that names its own rule id (the protocol's default is `rules.illegal-action`)."""

    rule: str

    def __new__(cls, text: str, rule: str) -> Refusal:
        made = super().__new__(cls, text)
        made.rule = rule
        return made
