"""The gate's clock and strict times (DESIGN §4.8, revised): the record `$GIT_DIR/pbem/accepted`, GitHub's
activity JSON, a clone's reflog (services.gateclock), the calendar behind every time field (formats.times), and
`pbem deadlines RANGE --clock FILE` as the game workflow calls it. The attacks through a hooked server are in
tests/test_attacks.py ("The gate's clock")."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import FED_TURN_1, Table
from pbem.errors import PbemError
from pbem.formats import times
from pbem.services import deadlines, gateclock
from pbem.store.repo import GameRepo
from test_dice_flow import cli, refused

UTC = timezone.utc
OID_A, OID_B = "a" * 40, "b" * 40


def rule_of(call, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(PbemError) as err:
        call(*args, **kwargs)
    return err.value.finding.rule


# --- formats.times: real calendar times or time.invalid --------------------------------------------------------

@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)))
def test_an_instant_reads_back_what_was_written(when: datetime) -> None:
    when = when.replace(microsecond=0, tzinfo=UTC)
    assert times.parse_instant(times.format_instant(when)) == when


@given(st.dates(), st.integers(0, 23), st.integers(0, 59), st.booleans())
def test_a_pause_reads_as_its_utc_minute(day, hour: int, minute: int, with_time: bool) -> None:  # type: ignore[no-untyped-def]
    text = f"{day.year:04d}-{day.month:02d}-{day.day:02d}" + (f"T{hour:02d}:{minute:02d}Z" if with_time else "")
    expected = datetime(day.year, day.month, day.day, hour if with_time else 0, minute if with_time else 0,
                        tzinfo=UTC)
    assert times.parse_pause(text) == expected


@given(st.integers(0, 9999), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99))
def test_every_date_the_calendar_lacks_is_time_invalid(year: int, month: int, day: int, hour: int,
                                                       minute: int) -> None:
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}Z"
    try:
        real = datetime(year, month, day, hour, minute)
    except ValueError:
        real = None
    if real is None:
        assert rule_of(times.parse_pause, text) == "time.invalid"
        assert rule_of(times.parse_instant, text[:-1] + ":00Z") == "time.invalid"
    else:
        assert times.parse_pause(text) == real.replace(tzinfo=UTC)


@given(st.one_of(st.text(max_size=40), st.integers(), st.none(), st.floats()))
def test_any_value_is_a_time_or_time_invalid_never_a_crash(value: object) -> None:
    for parse in (times.parse_pause, times.parse_instant, times.parse_duration):
        try:
            parse(value)
        except PbemError as exc:
            assert exc.finding.rule == "time.invalid"


@pytest.mark.parametrize("text", ["2027-02-30", "2027-02-29", "2027-01-10T24:00Z", "2027-13-01", "0000-01-01",
                                  "2027-1-10", "2027-01-10T18:00", "2027-01-10 18:00Z", "2027-04-31T00:00Z"])
def test_impossible_pauses_are_refused(text: str) -> None:
    assert rule_of(times.parse_pause, text) == "time.invalid"


def test_offsets_fractions_and_overflow() -> None:
    assert times.parse_instant("2026-12-01T23:05:07.5+02:00") == datetime(2026, 12, 1, 21, 5, 7, 500000, UTC)
    assert times.parse_instant("2026-12-01T21:05:07z") == datetime(2026, 12, 1, 21, 5, 7, tzinfo=UTC)
    assert rule_of(times.parse_instant, "2026-12-01T21:05:60Z") == "time.invalid"  # no leap second
    assert rule_of(times.parse_instant, "2026-12-01T21:05:07+24:00") == "time.invalid"
    assert times.parse_duration("72h") == timedelta(hours=72) and times.parse_duration("3d") == timedelta(days=3)
    assert rule_of(times.parse_duration, "0d") == "time.invalid"
    end = times.later(times.parse_pause("9999-12-31"), times.parse_duration("99999d"))
    assert end.year == 9999  # a deadline past the calendar's end is the end, not an OverflowError


# --- the hook's record -----------------------------------------------------------------------------------------

def test_the_record_s_first_line_for_an_oid_wins() -> None:
    text = f"{OID_A} 2026-12-01T21:05:07Z\n{OID_B} 2026-12-02T00:00:00Z\n{OID_A} 2026-12-05T00:00:00Z\n"
    got = gateclock.parse_record(text, "accepted")
    assert got == {OID_A: datetime(2026, 12, 1, 21, 5, 7, tzinfo=UTC), OID_B: datetime(2026, 12, 2, tzinfo=UTC)}
    assert gateclock.parse_record("", "accepted") == {}


OIDS = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)
INSTANTS = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1)).map(
    lambda d: d.replace(microsecond=0, tzinfo=UTC))


@given(st.lists(st.tuples(OIDS, INSTANTS), max_size=20))
def test_a_written_record_reads_back_first_line_winning(lines: list[tuple[str, datetime]]) -> None:
    text = "".join(gateclock.record_line(oid, when) for oid, when in lines)
    expected: dict[str, datetime] = {}
    for oid, when in lines:
        expected.setdefault(oid, when)
    assert gateclock.parse_record(text, "accepted") == expected


@given(st.one_of(st.text(max_size=200), st.lists(st.tuples(OIDS, INSTANTS), min_size=1, max_size=5).flatmap(
    lambda ls: st.integers(0, 90 * len(ls)).map(
        lambda cut: "".join(gateclock.record_line(o, w) for o, w in ls)[:cut]))))
def test_any_record_text_reads_or_is_clock_corrupt(text: str) -> None:
    try:
        gateclock.parse_record(text, "accepted")
    except PbemError as exc:
        assert exc.finding.rule == "clock.corrupt" and exc.finding.line is not None


@pytest.mark.parametrize("text, line", [
    (f"{OID_A} 2026-12-01T21:05:07Z", 1),  # cut short: no newline
    (f"{OID_A} 2026-12-01T21:05:07Z\n{OID_B} 2026-02-30T00:00:00Z\n", 2),
    (f"{OID_A} 2026-12-01T24:00:00Z\n", 1),
    (f"{OID_A[:39]} 2026-12-01T21:05:07Z\n", 1),
    (f"{OID_A.upper()} 2026-12-01T21:05:07Z\n", 1),
    (f"{OID_A}  2026-12-01T21:05:07Z\n", 1),
    ("\n", 1),
])
def test_a_corrupt_record_names_its_line(text: str, line: int) -> None:
    with pytest.raises(PbemError) as err:
        gateclock.parse_record(text, "accepted")
    assert (err.value.finding.rule, err.value.finding.line) == ("clock.corrupt", line)


def test_reading_appending_and_what_a_missing_record_means(tmp_path: Path) -> None:
    assert rule_of(gateclock.read_record, tmp_path) == "clock.missing"
    when = datetime(2026, 12, 1, 21, 5, 7, tzinfo=UTC)
    assert gateclock.append(tmp_path, [OID_A], when) == 0  # a missing record stays missing
    assert not gateclock.record_path(tmp_path).exists()
    assert gateclock.append(tmp_path, [OID_A, OID_A], when, create=True) == 1
    assert gateclock.append(tmp_path, [OID_A, OID_B], when + timedelta(days=1)) == 1
    assert gateclock.read_record(tmp_path) == {OID_A: when, OID_B: when + timedelta(days=1)}
    gateclock.record_path(tmp_path).write_bytes(b"\xff\n")
    assert rule_of(gateclock.read_record, tmp_path) == "clock.corrupt"
    clock = gateclock.hook_clock(tmp_path, when, [OID_A])
    assert clock.problem is not None and clock.problem.rule == "clock.corrupt"
    assert clock.accepted(OID_A) == when and clock.accepted(OID_B) is None


# --- GitHub's activity record ----------------------------------------------------------------------------------

def activity(before: str, after: str, when: str, ref: str = "refs/heads/main", kind: str = "push") -> dict:
    return {"id": 1, "node_id": "x", "before": before, "after": after, "ref": ref, "timestamp": when,
            "activity_type": kind, "actor": {"login": "octocat"}}


def commits_of(table: Table) -> list[str]:
    return table.git("rev-list", "--reverse", "HEAD").stdout.decode().split()


def test_activity_pages_concatenated_by_gh_paginate(started: Table) -> None:
    """`gh api --paginate` writes one JSON array per page, back to back: each commit gets the time of the first
    activity that put it on main (newest first in the pages, as GitHub lists them); other refs are ignored."""
    started.turn("fed", **FED_TURN_1)
    first, *middle, last = commits_of(started)
    repo = GameRepo.open(started.repo_dir)
    zero = gateclock.ZERO
    pages = (json.dumps([activity(middle[-1], last, "2026-12-03T10:00:00Z"),
                         activity(zero, last, "2026-11-01T00:00:00Z", ref="refs/heads/side")]) + "\n"
             + json.dumps([activity(zero, middle[-1], "2026-12-01T09:00:00Z", kind="branch_creation")]))
    found = gateclock.parse_activity(pages, "activity.json", "refs/heads/main")
    assert [a.when.day for a in found] == [1, 3]
    got = gateclock.activity_times(repo, found)
    assert got[first] == got[middle[-1]] == datetime(2026, 12, 1, 9, tzinfo=UTC)
    assert got[last] == datetime(2026, 12, 3, 10, tzinfo=UTC)


@pytest.mark.parametrize("text", ["[{\"before\": 1}]", "[", "{\"message\": \"Not Found\"}",
                                  json.dumps([activity("a" * 40, "b" * 40, "2026-02-30T00:00:00Z")])])
def test_activity_that_is_not_github_s_is_corrupt(text: str) -> None:
    assert rule_of(gateclock.parse_activity, text, "activity.json", "refs/heads/main") == "clock.corrupt"


def test_the_workflow_s_call_judges_by_github_s_times(started: Table) -> None:
    """The game workflow runs, in the checkout `game/`: `pbem deadlines "$range" --clock activity.json`. By
    GitHub's time for fed's turn (the push that landed it), kli's nmr is early a day later and lands eight days
    later; a commit GitHub's record does not know finds nobody absent (clock.unknown); --now is checked."""
    started.turn("fed", **FED_TURN_1)
    *earlier, turn = commits_of(started)
    base = started.head()
    cli(started, "agree", "nmr", "--player", "kli", who="fed")
    log = started.root / "activity.json"
    log.write_text(json.dumps([activity(earlier[-1], turn, "2026-12-01T12:00:00Z"),
                               activity(gateclock.ZERO, earlier[-1], "2026-11-30T12:00:00Z")]))

    def judged(now: str, clock: Path = log) -> tuple[int, str]:
        done = started.cli("deadlines", f"{base}..HEAD", "--clock", str(clock), "--now", now)
        assert "Traceback" not in done.output
        return done.exit_code, done.output

    code, out = judged("2026-12-02T12:00:00Z")
    assert code == 1 and "[agreement.nmr-early]" in out and "runs out at 2026-12-08 12:00 UTC" in out, out
    assert judged("2026-12-09T12:00:00Z") == (0, judged("2026-12-09T12:00:00Z")[1])
    log.write_text(json.dumps([activity(gateclock.ZERO, earlier[-1], "2026-11-30T12:00:00Z")]))
    code, out = judged("2026-12-09T12:00:00Z")
    assert code == 1 and "[clock.unknown]" in out, out
    log.write_text("[")
    code, out = judged("2026-12-09T12:00:00Z")
    assert code == 1 and "[clock.corrupt]" in out, out
    code, out = judged("2026-12-09T12:00:00Z", started.root / "nowhere.json")
    assert code == 1 and "[clock.missing]" in out, out
    code, out = judged("2026-12-32T00:00:00Z")
    assert code == 1 and "[time.invalid]" in out and "--now" in out, out


# --- a clone's own knowledge -----------------------------------------------------------------------------------

def test_status_shows_waits_by_this_clone_s_reflog_never_a_commit_date(started: Table) -> None:
    """A turn dated ten days back: `pbem deadlines` and `pbem status` count kli's wait from when this clone
    first had the commit (its reflog), and say so; nobody is overdue."""
    from test_attacks import _redate

    started.turn("fed", **FED_TURN_1)
    _redate(started, "fed", -10)
    out = cli(started, "deadlines")
    assert "kli owes since" in out and "this clone's own reflog" in out and "overdue" not in out, out
    when = datetime.now(UTC) - timedelta(days=10)
    assert f"{when:%Y-%m-%d}" not in out
    status = cli(started, "status", "--plain", who="kli")
    assert "reflog" in status and "left" in status, status
    waits = deadlines.waits(GameRepo.open(started.repo_dir), started.head())
    assert [w.player for w in waits] == ["kli"] and not waits[0].overdue


# --- strict time fields in game files --------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["2027-02-30", "2027-01-10T24:00Z", "2027-13-01"])
def test_an_amend_to_an_impossible_pause_is_refused(started: Table, value: str) -> None:
    refused(started, "agree", "amend", "--pause-until", value, who="fed", rule="time.invalid",
            where="agreements/draft.yaml")


@pytest.mark.parametrize("field, value, valid", [
    ("paused_until", "2027-01-10", True), ("paused_until", "2027-01-10T18:00Z", True),
    ("paused_until", "2027-01-10T24:00Z", False), ("paused_until", "2027-13-01", False),
    ("paused_until", "2027-01-32", False), ("paused_until", "2027-01-10T18:60Z", False),
    ("deadline", "72h", True), ("deadline", "0h", False), ("deadline", "3w", False)])
def test_the_schemas_check_the_shape_of_every_time_field(field: str, value: str, valid: bool) -> None:
    """The patterns the schemas share (pbem/common/1 pause_time, duration) in game.yaml and in an amend; the
    calendar itself (February 30) is formats.times's."""
    from pbem.formats import schemas

    game = {"format": "pbem/1", "id": "g", "ruleset": "tactical/1", "players": [{"id": "fed"}], field: value}
    amend = {"id": "fed-0002", "kind": "amend", "by": "fed", "content": {"changes": {field: value}},
             "signatures": {}}
    for schema, data in (("pbem/game/1", game), ("pbem/agreement/1", amend)):
        if valid:
            schemas.validate(schema, data, file="x.yaml")
        else:
            assert rule_of(schemas.validate, schema, data, file="x.yaml") == "schema.invalid"


def test_a_game_yaml_with_an_impossible_pause_is_a_finding_and_no_crash(started: Table) -> None:
    """game.yaml edited by hand to pause until February 30: `pbem verify` names it (time.invalid), and
    `pbem deadlines` and `pbem status` say one line with the rule, never a traceback."""
    text = started.read("game.yaml")
    started.write("game.yaml", text + 'paused_until: "2027-02-30"\n')
    started.sneak("fed", "fed: pause", status="keep")
    done = started.pbem("verify")
    assert done.returncode == 1 and "[time.invalid]" in done.stdout + done.stderr, done.stdout + done.stderr
    for args in (("deadlines",), ("status", "--plain")):
        done = started.pbem(*args, who="kli")
        assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
        assert "[time.invalid]" in done.stdout + done.stderr, done.stdout + done.stderr


def test_a_range_into_history_judges_each_agreement_when_the_gate_accepted_it(started: Table) -> None:
    """A scheduled run judges the whole history (`pbem deadlines HEAD --clock …`): an nmr the record shows
    accepted eight days after the turn that made kli owe was on time then, whatever `--now` says; one the record
    shows a day after was early, and stays so."""
    started.turn("fed", **FED_TURN_1)
    cli(started, "agree", "nmr", "--player", "kli", who="fed")
    *earlier, turn, nmr = commits_of(started)
    record = started.root / "accepted"

    def run(nmr_day: int) -> tuple[int, str]:
        record.write_text("".join(f"{oid} 2026-12-01T00:00:00Z\n" for oid in [*earlier, turn])
                          + f"{nmr} 2026-12-{nmr_day:02d}T00:00:00Z\n")
        done = started.cli("deadlines", "HEAD", "--clock", str(record), "--now", "2027-06-01T00:00:00Z")
        return done.exit_code, done.output

    assert run(9)[0] == 0
    code, out = run(2)
    assert code == 1 and "[agreement.nmr-early]" in out, out


def test_install_adds_the_post_receive_hook_and_seeds_the_record(started: Table, tmp_path: Path) -> None:
    """`pbem hook install` writes hooks/post-receive beside pre-receive, refuses one pbem did not write (exit 2,
    hook.exists, nothing written) unless --force, and records what the game branch already holds as accepted at
    the install; a push then appends exactly the commits it put on main."""
    import subprocess

    from pbem.services import hook

    server = tmp_path / "server.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(started.repo_dir), str(server)], check=True,
                   capture_output=True)
    theirs = server / "hooks" / "post-receive"
    theirs.parent.mkdir(exist_ok=True)
    theirs.write_text("#!/bin/sh\nexit 0\n")
    done = started.cli("hook", "install", str(server))
    assert done.exit_code == 2 and "[hook.exists]" in done.output, done.output
    assert not (server / "hooks" / "pre-receive").exists() and not gateclock.record_path(server).exists()
    before = datetime.now(UTC).replace(microsecond=0)
    assert started.cli("hook", "install", "--force", str(server)).exit_code == 0
    assert hook.HOOK_MARK in theirs.read_text() and "hook post-receive" in theirs.read_text()
    seeded = gateclock.read_record(server)
    assert set(seeded) == set(commits_of(started)) and min(seeded.values()) >= before
    started.git("remote", "add", "origin", server)
    started.turn("fed", **FED_TURN_1)
    done = started.git("push", "origin", "main")
    assert done.returncode == 0, done.stderr
    assert set(gateclock.read_record(server)) == set(commits_of(started))
    assert gateclock.record_path(server).read_text().count("\n") == len(commits_of(started))
    gateclock.record_path(server).unlink()
    started.turn("kli", through="1.12.damage")
    done = started.git("push", "origin", "main")
    assert done.returncode == 0 and "time record" in done.stderr.decode() and "missing" in done.stderr.decode()
    assert not gateclock.record_path(server).exists()
