"""What pbem says about fixed game repositories stays byte for byte what it said when they were recorded
(tests/golden/README.md): `pbem verify --format json` over the whole history and over each single commit,
`pbem log`, `pbem status --format json`.

The repositories are unpacked once per session from their bundles; every command runs in this process through
typer's CliRunner (the `pbem` command's own code). The per-commit dumps come from one verification of the whole
history (golden.per_commit); for four turns of each game the command `pbem verify --format json BASE..C` itself
runs and must print the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import golden
from pbem.formats import schemas, yamlsafe
from pbem.services import workspace
from pbem.verify import history

GAMES = golden.games()


@pytest.fixture(scope="session")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Every stored repository, unpacked once (each test reads it only: the verifier's kept state under
    .git/pbem/ changes no output)."""
    root = tmp_path_factory.mktemp("golden")
    with pytest.MonkeyPatch.context() as patch:
        # The fast paths' checks against the plain ones (PBEM_CROSSCHECK) re-read every file at every commit,
        # which costs twenty times the verification itself here; they change no output, and the rest of the
        # suite runs them.
        for module in (history, yamlsafe, schemas, workspace):
            patch.setattr(module, "_CROSSCHECK", False, raising=False)
        yield {name: golden.unpack(name, root / name, game["branch"]) for name, game in GAMES.items()}


@pytest.fixture(scope="session")
def made(unpacked: dict[str, Path]) -> dict[str, dict[str, str]]:
    """The dumps of each repository as the code makes them now, made once per repository when first asked."""
    return {}


def dumps_of(name: str, unpacked: dict[str, Path], made: dict[str, dict[str, str]]) -> dict[str, str]:
    if name not in made:
        made[name] = golden.dumps(unpacked[name])
    return made[name]


def test_every_game_is_stored_with_all_its_dumps() -> None:
    assert len(GAMES) >= 20, "the golden games are gone"
    for name in GAMES:
        assert (golden.REPOS / f"{name}.bundle").is_file(), name
        for file in golden.DUMP_FILES:
            assert (golden.DUMPS / name / file).is_file(), f"{name}/{file}: record it with tests/golden.py --update"
    assert {p.name for p in golden.DUMPS.iterdir()} == set(GAMES), "a dump without a stored repository"


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_dumps_are_byte_identical(name: str, unpacked: dict[str, Path], made: dict[str, dict[str, str]]) -> None:
    now = dumps_of(name, unpacked, made)
    diffs = [golden.difference(name, file, (golden.DUMPS / name / file).read_text(encoding="utf-8"), text)
             for file, text in now.items()]
    diffs = [d for d in diffs if d]
    assert not diffs, ("pbem's output changed (if on purpose: tests/golden.py --update, and list it):\n"
                       + "".join(diffs)[:20000])


@pytest.mark.parametrize("name", sorted(GAMES))
def test_verifying_one_commit_prints_its_part_of_the_per_commit_dump(name: str, unpacked: dict[str, Path]) -> None:
    stored = (golden.DUMPS / name / "verify-commits.txt").read_text(encoding="utf-8")
    sequence = [part.split()[1] for part in stored.split("### ")[1:]]
    assert sequence, name
    for oid in golden.sample(sequence):
        got = golden.cli(unpacked[name], "verify", "--format", "json", golden.commit_range(sequence, oid))
        want = golden.commit_section(stored, oid)
        assert got == want, golden.difference(name, f"verify {oid[:10]}", want, got)


def test_a_changed_output_is_found_and_shown_as_a_diff() -> None:
    diff = golden.difference("g", "log.txt", "turn 1\nfed: CA speed 12\n", "turn 1\nfed: CA speed 11\n")
    assert "-fed: CA speed 12" in diff and "+fed: CA speed 11" in diff
    assert golden.difference("g", "log.txt", "same\n", "same\n") == ""

