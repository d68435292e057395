"""The judge's shape (ARCHITECTURE §4.1): the protocol's names where the protocol is, one rule module per DESIGN
step, each citing its section, and the judge small enough to read like the rules."""

from __future__ import annotations

from pbem.protocol import model
from pbem.protocol import dice, secrets
from pbem.protocol.model import OWED, READY, SEALED


def test_owed_names_the_break_kinds_of_dice_and_secrets() -> None:
    """What is owed out of turn (DESIGN §5, §6) spells the break kinds their own modules write."""
    assert OWED == (dice.DICE, secrets.SECRET, SEALED, READY)


def test_every_rule_module_cites_its_design_step_and_is_run() -> None:
    """One module per DESIGN step (ARCHITECTURE §4.1): each says which section it enforces, and each is run by
    some kind of commit (a rule module no kind runs is a rule nobody enforces)."""
    import importlib
    import pkgutil
    import re

    from pbem.verify import commit, rules

    run = {rule.__module__ for kinds in (commit.RULES.values(), [commit.PLAYED, commit.BEFORE_START])
           for rules_of in kinds for rule in rules_of}
    for info in pkgutil.iter_modules(rules.__path__):
        module = importlib.import_module(f"pbem.verify.rules.{info.name}")
        assert re.search(r"(DESIGN|[Ss]eed 000) §\d", module.__doc__ or ""), f"{info.name} cites no section"
        assert module.__name__ in run, f"no kind of commit runs rules.{info.name}"


def test_the_judge_stays_small() -> None:
    """The judge reads like the rules: the state machine in one short file, no rule module over 600 lines."""
    from pathlib import Path

    from pbem.verify import commit

    folder = Path(commit.__file__).parent
    assert len(Path(commit.__file__).read_text(encoding="utf-8").splitlines()) <= 250
    for path in [folder / "change.py", *sorted((folder / "rules").glob("*.py"))]:
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 600, path.name


def test_a_commit_kind_picks_its_rules() -> None:
    """The kinds of commit in play and the rules they skip (DESIGN §4.8: press and agreements are no turn, so
    no progress is owed by them; only a turn's entries are judged for legality)."""
    from pbem.verify import commit
    from pbem.verify.change import AGREEMENT, PRESS, SETTLE, TURN
    from pbem.verify.rules import legality, progress

    assert progress.check in commit.RULES[TURN] and progress.check in commit.RULES[SETTLE]
    assert progress.check not in commit.RULES[PRESS] and progress.check not in commit.RULES[AGREEMENT]
    assert [k for k, rules in commit.RULES.items() if legality.check in rules] == [TURN]
