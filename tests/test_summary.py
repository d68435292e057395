"""`pbem summary RANGE [--markdown]` (DESIGN §8, §9; issue 6 part 3): what a range of commits did, for a pull
request's description and the workflow's job summary. Every commit of the range is judged against the full
history before it (as `pbem verify BASE..HEAD`), and only the range is reported.

The game: the duel after two turns (conftest `played`), then fed announces two dice and seals a secret, kli
contributes, fed reveals the dice, kli plays on, fed reveals his secret and plays on.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import Table, built_from, copy_table
from gitutil import clean_env

FIRING = "firing | <b>bold</b> [link](x)"


@pytest.fixture(scope="session")
def base_summary(base_played: Table, tmp_path_factory: pytest.TempPathFactory) -> Table:

    def build(table: Table) -> None:
        plan = table.root / "plan.yaml"
        plan.write_text("text: turn to starboard at range 8\n")
        assert table.cli("roll", "--for", "CA ph1 at D7", "--for", "CA ph2 at D7", who="fed").exit_code == 0
        assert table.cli("seal", "note", str(plan), "--reveal", "end", "--concerns", "fed's plan", who="fed").exit_code == 0
        table.turn("fed", through="1.12.damage", entries=[{"at": "1.11.move", "unit": "CA", "do": {"move": "F"}}],
                   note=FIRING)
        assert table.cli("yield", who="kli").exit_code == 0  # kli's contribution
        assert table.cli("yield", who="fed").exit_code == 0  # fed's reveal: the results
        table.turn("kli", through="1.16.damage", note="on")
        assert table.cli("reveal", "fed-0001", who="fed").exit_code == 0
        table.turn("fed", through="1.20.damage", note="showing my plan")

    return built_from(tmp_path_factory, "summary-base_summary", base_played, build)


@pytest.fixture
def game(base_summary: Table, tmp_path: Path) -> Table:
    return copy_table(base_summary, tmp_path / "game")


def test_summary_text_tells_who_acted_what_changed_the_dice_the_secrets_and_who_holds_control(
        base_summary: Table) -> None:
    """One block per commit: signer, note, files, entries per player, dice announced/contributed/revealed with
    their results in order, secrets sealed and revealed; then who holds control now."""
    done = base_summary.cli("summary", "HEAD~5..HEAD")
    assert done.exit_code == 0, done.output
    out = done.stdout
    base, tip = (base_summary.git("rev-parse", rev).stdout.decode().strip() for rev in ("HEAD~5", "HEAD"))
    assert out.splitlines()[0] == (f"Tactical duel: two cruisers close in (duel-e2e, tactical/1): 5 commit(s) in "
                                   f"{base[:10]}..{tip[:10]}, no findings")
    blocks = out.split("\n    then:")
    assert f"fed      fed: {FIRING}" in out
    assert "files:   dice/fed-0001.yaml, players/fed.yaml, report/turn-01.yaml, secrets/fed-0001.yaml, status.yaml" in out
    assert "entry:   fed 1.11.move CA move F" in out
    assert "fed announced dice fed-0001 (2d6, commit-reveal)" in out
    assert "fed sealed secret fed-0001 (note, fed's plan; due end)" in out
    assert "kli contributed to fed-0001" in out
    assert "fed revealed fed-0001" in out and "dice fed-0001 results: CA ph1 at D7: " in out
    assert 'fed revealed secret fed-0001: {"text": "turn to starboard at range 8"}' in out
    assert "then:    kli (contribution owed to dice fed-0001 of fed)" in out
    assert len(blocks) == 6
    assert out.splitlines()[-2].startswith("now: kli holds control (")
    assert "firm to " in out.splitlines()[-2]


def test_summary_markdown_is_one_table_row_per_commit_with_player_text_made_inert(base_summary: Table) -> None:
    """A PR description / job summary: a heading with the verdict, a table (one row per commit), the state now.
    A player's note cannot break the table or inject HTML or links."""
    done = base_summary.cli("summary", "HEAD~5..HEAD", "--markdown")
    assert done.exit_code == 0
    lines = done.stdout.splitlines()
    assert lines[0] == "## pbem: 5 commit(s), all legal ✅"
    rows = [line for line in lines if line.startswith("| `")]
    assert len(rows) == 5
    assert all(row.count(" | ") == 6 for row in rows)  # seven cells each, no stray pipes
    assert "fed: firing \\| \\<b\\>bold\\</b\\> \\[link\\](x)" in rows[0]
    assert "`dice/fed-0001.yaml`<br>`players/fed.yaml`" in rows[0]
    assert "dice fed-0001 results:" in rows[2]
    assert any(line.startswith("**Now:** kli holds control") for line in lines)
    assert "### Findings" not in done.stdout


def test_summary_reports_the_findings_of_the_range_only(game: Table) -> None:
    """A bad commit shows in the range that holds it (exit 1, rule id, file and commit, ❌ on its row), not in an
    earlier range."""
    game.edit("fed", through="1.24.damage")
    bad = game.sneak("fed")  # kli holds control
    done = game.cli("summary", "HEAD~2..HEAD", "--markdown")
    assert done.exit_code == 1
    assert done.stdout.startswith("## pbem: 1 finding(s) in 2 commit(s) ❌")
    assert f"| ❌ `{bad[:10]}` | fed |" in done.stdout
    assert "### Findings" in done.stdout and "**signature.not-in-control**" in done.stdout
    assert f"(commit `{bad[:10]}`)" in done.stdout
    text = game.cli("summary", "HEAD~2..HEAD")
    assert text.exit_code == 1 and "[signature.not-in-control]" in text.stdout
    assert game.cli("summary", "HEAD~3..HEAD~1").exit_code == 0
    verify = game.cli("verify", "HEAD~1..HEAD")  # the same range judged the same way
    assert verify.exit_code == 1 and "[signature.not-in-control]" in verify.stdout and "in 1 commits" in verify.stdout


def test_summary_works_in_a_bare_repository_and_skips_transparent_merges(game: Table) -> None:
    """On the server (a bare repository) too; a pull request merged with a merge commit lists the turns of the
    merged branch, and counts the merge itself apart."""
    base = game.head()
    game.git("switch", "-q", "-c", "turn")
    game.turn("kli", through="1.20.damage", note="a turn on a branch")
    game.git("switch", "-q", "main")
    game.git("merge", "-q", "--no-ff", "--no-edit", "turn")
    bare = game.root / "server.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(game.repo_dir), str(bare)], check=True,
                   env=clean_env(game.home))
    done = game.cli("summary", f"{base}..main", cwd=bare)
    assert done.exit_code == 0, done.output
    assert "kli      kli: a turn on a branch" in done.stdout
    assert "(1 transparent merge(s) not listed)" in done.stdout
    assert game.cli("verify", f"{base}..main").stdout == "ok: 1 commits verified\n"
    whole = game.cli("summary", cwd=bare)
    assert whole.exit_code == 0 and "commit(s) in the whole history to" in whole.stdout


def test_summary_flags_a_branch_that_does_not_contain_its_base(game: Table) -> None:
    """A pull request behind main would not merge transparently (and a push like it takes back turns):
    history.not-fast-forward, exit 1."""
    old = game.git("rev-parse", "HEAD~1").stdout.decode().strip()
    game.git("switch", "-q", "-c", "behind", old)
    game.git("switch", "-q", "main")
    done = game.cli("summary", "main..behind")
    assert done.exit_code == 1
    assert "[history.not-fast-forward]" in done.stdout


def test_summary_of_a_game_being_set_up(base_started: Table, tmp_path: Path) -> None:
    """Before the start: the founder's and the joiners' commits, and "setting up" instead of a break."""
    done = base_started.cli("summary", "HEAD~4..HEAD~3")
    assert done.exit_code == 0
    assert "setting up" in done.stdout and "join: kli takes a seat" in done.stdout


def test_pbem_verify_works_in_a_bare_repository(base_played: Table, tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(base_played.repo_dir), str(bare)], check=True,
                   env=clean_env(base_played.home))
    done = base_played.cli("verify", "main", cwd=bare)
    assert done.exit_code == 0, done.output
