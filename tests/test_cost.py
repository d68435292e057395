"""Cost is bounded (DESIGN §9): the verifier's caches hold at most their byte budget, and a report file edited in
pbem's layout is read only in the lines that differ, giving exactly what reading it whole gives. No timings here
(bench/adversarial.py measures them); these tests pin the mechanisms the figures rest on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pbem.protocol.history import changed_entries
from pbem.rulesets import get as get_ruleset
from pbem.files.game import read_files
from pbem.files.lines import MAX_ENTRIES, read_report
from pbem.files.parsecache import FILE_BYTES, ITEM_BYTES, LINE_BYTES, ParseCache

TACTICAL = get_ruleset("tactical/1")
REPORT = "report/turn-01.yaml"
TIMES = [f"1.{i}.{s}" for i in range(1, 33) for s in ("move", "activity", "fire", "damage")]


def line(n: int) -> str:
    return f"  - {{at: {TIMES[n % len(TIMES)]}, by: fed, do: {{pass: true}}, x-n: {n}}}"


def as_report(rows: list[str]) -> bytes:
    return ("entries:\n" + "".join(r + "\n" for r in rows)).encode()


# --- caches bounded in bytes ------------------------------------------------------------------------------------

def test_the_parse_cache_holds_at_most_its_byte_budget() -> None:
    """DESIGN §9 "caches bounded in bytes": however many values go in, what is kept weighs at most the budget,
    the least recently used go first, and a value heavier than the whole budget is made but not kept."""
    cache = ParseCache(100_000, 0)
    for n in range(1000):
        cache.get(("blob", str(n)), lambda n=n: n, 3_000)
        assert cache.held <= cache.budget
    assert cache.count == 100_000 // (ITEM_BYTES + 3_000)
    assert cache.get(("blob", "999"), lambda: "made again") == 999  # the most recent are kept
    assert cache.get(("blob", "0"), lambda: "made again") == "made again"  # the oldest went
    assert cache.get(("huge",), lambda: "huge", 200_000) == "huge" and ("huge",) not in cache._items
    assert cache.held <= cache.budget


def test_report_lines_are_kept_within_the_line_budget() -> None:
    """The cache of report lines by their text (shared by every report a verification reads) weighs each line
    by its length and never holds more than its budget, however large the reports."""
    cache = ParseCache(1 << 20, 200_000)
    lines = cache.lines
    assert lines is not None
    rows = [line(n) for n in range(3000)]
    read_report(as_report(rows), REPORT, TACTICAL, lines)
    assert 0 < lines.held <= lines.budget
    assert lines.count <= lines.budget // (ITEM_BYTES + LINE_BYTES * len(rows[0]))


def test_read_game_weighs_each_file_by_its_size() -> None:
    """A parsed report kept by read_game counts FILE_BYTES per byte it was read from, so a few large reports
    push older ones out instead of piling up."""
    cache = ParseCache(3 * FILE_BYTES * len(as_report([line(n) for n in range(500)])), 0)
    game = (b'format: pbem/1\nid: g\nruleset: tactical/1\nplayers:\n  - {id: fed}\n  - {id: kli}\n'
            b'setup:\n  map: {columns: 10, rows: 10}\n  turns: 2\n  units:\n'
            b'    - {id: CA, owner: fed, hex: "0101", facing: A, speed: 0, turn_mode: 2}\n')
    for k in range(8):
        files = {"game.yaml": game, REPORT: as_report([line(n + k) for n in range(500)])}
        read_files(files, cache)
        assert cache.held <= cache.budget
    assert cache.count < 8 * 2


# --- a report file read in the lines that changed ---------------------------------------------------------------

edits = st.lists(st.tuples(st.sampled_from(["swap", "insert", "delete", "replace", "append"]),
                           st.integers(0, 10_000), st.integers(0, 10_000)), min_size=1, max_size=6)


@given(start=st.lists(st.integers(0, 300), min_size=1, max_size=40), steps=st.lists(edits, min_size=1, max_size=4))
def test_an_edited_report_read_on_its_previous_version_is_what_reading_it_whole_gives(
        start: list[int], steps: list[list[tuple[str, int, int]]]) -> None:
    """DESIGN §2, §9: reading only the lines that differ from the previous version gives the same entries on the
    same lines, the same index by game time, and the same (removed, added) multisets as comparing both whole."""
    rows = [line(n) for n in start]
    cache = ParseCache(1 << 20, 1 << 16)
    previous = read_report(as_report(rows), REPORT, TACTICAL, cache.lines)
    for ops in steps:
        new = list(rows)
        for op, a, b in ops:
            if op == "swap" and new:
                i, j = a % len(new), b % len(new)
                new[i], new[j] = new[j], new[i]
            elif op == "insert":
                new.insert(a % (len(new) + 1), line(b % 400))
            elif op == "delete" and len(new) > 1:
                del new[a % len(new)]
            elif op == "replace" and new:
                new[a % len(new)] = line(b % 400)
            else:
                new.append(line(b % 400))
        if new == rows:
            continue
        got = read_report(as_report(new), REPORT, TACTICAL, cache.lines, previous)
        whole = read_report(as_report(new), REPORT, TACTICAL)
        assert got.entries == whole.entries
        assert [e.line for e in got.entries] == [e.line for e in whole.entries]
        assert dict(got.by_step) == dict(whole.by_step)
        changes = got.changes_since(previous)
        if changes is not None:
            fast = changed_entries(*changes)
            plain = changed_entries(previous.entries, whole.entries)
            assert [sorted(e.key for e in side) for side in fast] == [sorted(e.key for e in side) for side in plain]
        previous, rows = got, new


def test_every_line_moved_is_no_change_and_reads_no_line_again() -> None:
    """A new line put first and the last dropped moves every entry: what changed is one entry out and one in,
    and every other entry keeps what was read of it, at its new line."""
    rows = [line(n) for n in range(300)]
    previous = read_report(as_report(rows), REPORT, TACTICAL, ParseCache().lines)
    rows2 = [line(1000)] + rows[:-1]
    got = read_report(as_report(rows2), REPORT, TACTICAL, ParseCache(1 << 20, 0).lines, previous)
    whole = read_report(as_report(rows2), REPORT, TACTICAL)
    assert got.entries == whole.entries and dict(got.by_step) == dict(whole.by_step)
    removed, added = got.changes_since(previous)  # type: ignore[misc]
    assert [e.key for e in removed] == [previous.entries[-1].key] and [e.key for e in added] == [whole.entries[0].key]
    assert all(a.do is b.do for a, b in zip(got.entries[1:], previous.entries))  # nothing read again


def test_an_edit_in_another_layout_is_read_whole() -> None:
    """An edit that leaves pbem's layout (a block mapping, a comment) is read by the whole-file reader, as
    always; reading on the previous version is only a shortcut."""
    rows = [line(n) for n in range(5)]
    previous = read_report(as_report(rows), REPORT, TACTICAL, ParseCache().lines)
    edited = as_report(rows[:2]) + b"  # a comment\n" + "".join(r + "\n" for r in rows[2:]).encode()
    got = read_report(edited, REPORT, TACTICAL, ParseCache().lines, previous)
    assert got.changes_since(previous) is None and got.entries == read_report(edited, REPORT, TACTICAL).entries


def test_a_full_report_with_a_comment_added_is_not_past_the_cap() -> None:
    """The 5,000-entry cap counts entries, not lines: a comment added to a full file leaves it valid, read on its
    previous version or whole."""
    rows = [line(n) for n in range(MAX_ENTRIES)]
    previous = read_report(as_report(rows), REPORT, TACTICAL, ParseCache().lines)
    edited = as_report(rows[:10]) + b"  # fed's notes\n" + "".join(r + "\n" for r in rows[10:]).encode()
    got = read_report(edited, REPORT, TACTICAL, ParseCache().lines, previous)
    assert len(got.entries) == MAX_ENTRIES
