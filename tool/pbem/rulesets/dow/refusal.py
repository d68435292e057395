"""A refusal: why the rules refuse a press message or a recorded result, with a stable rule id (DESIGN §8)."""

from __future__ import annotations


class Refusal(str):
    """The reason text (a str, so it reads like any reason), with its rule id in `.rule`."""

    rule: str

    def __new__(cls, rule: str, message: str) -> Refusal:
        refusal = super().__new__(cls, message)
        refusal.rule = rule
        return refusal
