"""The agreement kinds are one table (protocol.kinds, DESIGN §4.8): a kind is one row, and everything that asks
what a kind does (the commit rules, the words, whom it is about, its effect on game.yaml, what `pbem agree` takes)
looks it up there. A toy kind, added for the length of a test as its one row, is judged, described and read from
the command line like the shipped ones; and `pbem agree KIND` reads every kind's options from its row, in both
spellings (`--player kli` and `player=kli`).
"""

from __future__ import annotations

from typing import Any, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.errors import Finding, PbemError
from pbem.protocol import agreement_rules, agreements, kinds
from pbem.protocol.agreements import Agreement
from pbem.protocol.kinds import Kind, Option, Table

SEATS = ("fed", "kli", "rom")


def _toy_content(agreement: Agreement, table: Table) -> list[Finding]:
    if agreement.content.get("colour") not in ("red", "blue"):
        return [Finding("agreement.malformed", "a toy is red or blue", file=agreement.file)]
    return []


def _toy_draft(values: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    return {"colour": values.get("colour"), "for": values.get("child")}, f"a {values.get('colour')} toy"


def _paint(agreement: Agreement, game: Mapping[str, Any]) -> dict[str, Any]:
    return {**game, "title": f"{game['title']} ({agreement.content['colour']})"}


TOY = Kind("toy", lambda a, t: ("kli",), _toy_content, lambda a, t: [], lambda a: f"a {a.content['colour']} toy",
           subject=lambda a: a.content.get("for"), apply=_paint, help="give a toy", draft=_toy_draft,
           options=(Option("colour", "red or blue"), Option("child", "who gets it")))


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Kind:
    monkeypatch.setitem(kinds.KINDS, "toy", TOY)
    return TOY


def _table(started: bool = True) -> Table:
    return Table("toy-game", SEATS, {}, "0" * 64, started)


def _agreement(content: Mapping[str, Any], signatures: Mapping[str, str] | None = None) -> Agreement:
    raw = {"id": "fed-0001", "kind": "toy", "by": "fed", "content": dict(content),
           "signatures": dict(signatures if signatures is not None else {"fed": "x"})}
    return Agreement(raw, "agreements/fed-0001.yaml")


def test_a_toy_kind_is_one_row_and_every_question_about_it_is_answered_there(toy: Kind) -> None:
    red = _agreement({"colour": "red", "for": "rom"})
    assert kinds.describe(red) == "a red toy" and kinds.subject_of(red) == "rom"
    assert kinds.applied(red, {"title": "Duel"}) == {"title": "Duel (red)"}
    assert kinds.signed_by_all(red, _table()) is False  # its signers (kli) are its row's
    assert kinds.signed_by_all(_agreement({"colour": "red"}, {"fed": "x", "kli": "y"}), _table()) is True
    assert toy in kinds.proposable()
    assert kinds.read_options(toy, ["--colour", "red", "child=rom", "--note", "a gift"]) == {
        "colour": "red", "child": "rom", "note": "a gift"}
    assert toy.draft is not None and toy.draft({"colour": "blue"})[1] == "a blue toy"


def test_the_commit_rules_judge_a_toy_by_its_row(toy: Kind) -> None:
    """A proposal's content is the row's to judge; a signature of a player the row does not name is refused."""
    green = _agreement({"colour": "green"}, {})
    found = agreement_rules.agreement_findings(_table(), {}, {green.file: green}, "fed")
    assert ("agreement.malformed", "a toy is red or blue") in [(f.rule, f.message) for f in found]
    red = _agreement({"colour": "red"}, {})
    signed = _agreement({"colour": "red"}, {"rom": "forged"})
    found = agreement_rules.agreement_findings(_table(), {red.file: red}, {signed.file: signed}, "rom")
    assert [f.rule for f in found] == ["agreement.not-a-signer"] and "signers are kli" in found[0].message


def test_the_help_of_pbem_agree_lists_the_toy_from_the_table(toy: Kind) -> None:
    from pbem.cli.agreements import _kinds_help

    text = _kinds_help()
    assert "toy: give a toy" in text and "--colour VALUE: red or blue" in text and "--child VALUE" in text


def test_the_shipped_kinds_and_only_they_are_in_the_help() -> None:
    """`pbem agree --help` names every kind `pbem agree` proposes, each with its options (start is `pbem
    start`'s)."""
    from pbem.cli.agreements import _kinds_help

    text = _kinds_help()
    for name in ("amend", "seat", "resign", "nmr", "end", "erratum", "upgrade"):
        assert f"\n{name}: " in text
    assert "\nstart: " not in text and "--new-key VALUE" in text and "--index-url VALUE" in text


@pytest.mark.parametrize("args, values", [
    (["--deadline", "96h"], {"deadline": "96h"}),
    (["deadline=96h"], {"deadline": "96h"}),
    (["--pause-until=2027-01-10"], {"pause_until": "2027-01-10"}),
    (["pause_until=2027-01-10", "--resume"], {"pause_until": "2027-01-10", "resume": True}),
    (["--set", "title=Duel", "set=rules=x", "--unset", "deadline"], {"set": ["title=Duel", "rules=x"],
                                                                     "unset": ["deadline"]}),
])
def test_an_amend_reads_both_spellings(args: list[str], values: dict[str, Any]) -> None:
    assert kinds.read_options(kinds.KINDS["amend"], args) == values


@pytest.mark.parametrize("args, said", [
    (["--player", "kli"], "no option of amend"),
    (["--deadline"], "--deadline needs a value"),
    (["96h"], "no option of amend"),
])
def test_what_a_kind_does_not_take_is_a_usage_error(args: list[str], said: str) -> None:
    with pytest.raises(PbemError) as caught:
        kinds.read_options(kinds.KINDS["amend"], args)
    assert caught.value.finding.rule == "usage.agree" and said in caught.value.finding.message
    assert "--deadline, --pause-until, --resume, --set, --unset, --note" in caught.value.finding.message


@given(st.lists(st.text(min_size=0, max_size=12), max_size=6))
def test_any_arguments_are_read_or_refused_as_usage(args: list[str]) -> None:
    """Whatever a player types after `pbem agree nmr`, it is read into the row's options or refused with one
    usage error, never a crash."""
    try:
        values = kinds.read_options(kinds.KINDS["nmr"], args)
    except PbemError as exc:
        assert exc.finding.rule == "usage.agree"
    else:
        assert set(values) <= {"player", "note"}


def test_each_draft_says_what_its_kind_needs() -> None:
    """The drafts' usage errors, word for word as `pbem agree` has always said them."""
    for kind, said in (("amend", "an amend changes something"), ("seat", "a seat agreement names the seat"),
                       ("nmr", "an nmr names the absent player: --player ID"),
                       ("end", "an end states its result: --result draw|concession|forfeit")):
        draft = kinds.KINDS[kind].draft
        assert draft is not None
        with pytest.raises(PbemError) as caught:
            draft({})
        assert caught.value.finding.rule == "usage.agree" and said in caught.value.finding.message
    assert kinds.KINDS["nmr"].draft is not None
    assert kinds.KINDS["nmr"].draft({"player": "kli"}) == ({"player": "kli"}, "kli missed the deadline")


def test_the_old_home_still_answers() -> None:
    """protocol.agreements re-exports what moved to protocol.kinds, for code written against it."""
    assert kinds.KINDS is kinds.KINDS and kinds.Table is kinds.Table
    assert agreement_rules.agreement_findings is agreement_rules.agreement_findings


def test_the_upgrade_row_writes_the_gate_where_the_layout_has_it() -> None:
    """The upgrade's row names the file its last signature writes; it is the game's workflow file."""
    from pbem.protocol import upgrade
    from pbem.files.layout import WORKFLOW

    row = kinds.KINDS["upgrade"]
    assert row.writes is not None and upgrade.WORKFLOW == WORKFLOW
    agreement = Agreement({"id": "fed-0003", "kind": "upgrade", "by": "fed",
                           "content": {"pbem": "9.9.9", "workflow": "pip install pbem==9.9.9\n"}, "signatures": {}},
                          "agreements/fed-0003.yaml")
    assert row.writes(agreement) == ({WORKFLOW: "pip install pbem==9.9.9\n"}, "the workflow of pbem 9.9.9")
    assert [k.name for k in kinds.KINDS.values() if k.writes is not None] == ["upgrade"]
