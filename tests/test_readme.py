"""The README walkthrough, verbatim, on fresh machines (DESIGN §8; day one): Alice and Bob each have an empty
HOME (no key, no git config), share one bare repository guarded by pbem's pre-receive hook, and run the shell
blocks of the README's "A player's walkthrough" in order, each in his own shell that stays where the last block
left it; the YAML blocks of step 4 are the files Alice edits. Every command must succeed, and the shared
repository must verify at the end.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from contextlib import ExitStack
from pathlib import Path

import pytest

from conftest import PBEM, DemoGames
from gitutil import clean_env

README = Path(__file__).resolve().parents[1] / "README.md"


def walkthrough() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## A player's walkthrough")
    return text[start:text.index("\n## ", start + 1)]


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, dedented body) of every fenced block, in order."""
    found = re.finditer(r"^( *)```(\w+)\n(.*?)^\1```", text, flags=re.M | re.S)
    return [(m.group(2), textwrap.dedent(m.group(3))) for m in found]


@pytest.mark.parametrize("host", ["hook", "github"])
def test_the_readme_walkthrough_works_verbatim_in_fresh_homes(tmp_path: Path, host: str) -> None:
    """`hook`: the shared repository is a bare one with pbem's hook. `github`: it stands for GitHub's
    (tests/fakegithub.py), protected once Alice's first push made `main`, as the README says; each player has
    GH_TOKEN set, and the same commands land every commit through a pull request GitHub merges."""
    shared = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(shared)], check=True)
    assert subprocess.run([str(PBEM), "hook", "install", str(shared)], capture_output=True).returncode == 0
    homes = {name: tmp_path / name for name in ("Alice", "Bob")}
    where = {name: home for name, home in homes.items()}
    for home in homes.values():
        home.mkdir()
    with ExitStack() as stack:
        _walk(tmp_path, shared, homes, where, host, stack)


def _walk(tmp_path: Path, shared: Path, homes: dict[str, Path], where: dict[str, Path], host: str,
          stack: ExitStack) -> None:
    github: dict[str, str] = {}
    if host == "github":
        for home in homes.values():  # the shared repository's URL is a path here: name the GitHub repository
            (home / ".gitconfig").write_text("[pbem]\n\tgithub = alice/duel-1\n")
    found = blocks(walkthrough())
    yaml = [body for lang, body in found if lang == "yaml"]
    assert len(yaml) == 2, "step 4 shows players/fed.yaml, then report/turn-01.yaml"
    ran = 0
    for lang, body in found:
        if lang != "sh":
            continue
        player = body.splitlines()[0].lstrip("# ").split()[0]
        assert player in homes, body
        if "pbem yield" in body:  # step 4: Alice's edits, as the README shows them
            starter = where[player] / "players" / "fed.yaml"  # "edit players/fed.yaml": `pbem start` wrote it
            assert starter.is_file() and "# through: " in starter.read_text(), "nothing to edit in players/"
            assert (where[player] / "report" / "turn-01.yaml").is_file()
            (where[player] / "players").mkdir(exist_ok=True)
            (where[player] / "players" / "fed.yaml").write_text(yaml[0])
            (where[player] / "report").mkdir(exist_ok=True)
            (where[player] / "report" / "turn-01.yaml").write_text(yaml[1])
        env = clean_env(homes[player], {"SHARED": str(shared), "PATH": f"{PBEM.parent}:" + clean_env(homes[player])
                                        ["PATH"], **github, **({"GH_TOKEN": f"t-{player}"} if github else {})})
        for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
            env.pop(name)  # a fresh machine: git knows no name yet
        # nor the suite's PBEM_CROSSCHECK (tests/conftest.py: twice the work here): the players' commands and the
        # hook run the code a player runs; the fresh clone's `pbem verify` at the end runs with the cross-checks
        env.pop("PBEM_CROSSCHECK", None)
        state = tmp_path / f"{player}.pwd"
        done = subprocess.run(["bash", "-e", "-c", f"{body}\npwd > {state}"], cwd=where[player], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{player}:\n{body}\n{done.stdout}{done.stderr}"
        where[player] = Path(state.read_text().strip())
        ran += 1
        if host == "github" and ran == 1:  # Alice's first push made main: now she protects it
            from fakegithub import FakeGitHub

            (tmp_path / "github-home").mkdir()
            fake = stack.enter_context(FakeGitHub(shared, "alice", "duel-1", tmp_path / "github-home",
                                                  {f"t-{name}": name.lower() for name in homes}))
            github = fake.env("")
            github.pop("GH_TOKEN")
    assert ran >= 5
    fresh = tmp_path / "check"
    subprocess.run(["git", "clone", "-q", str(shared), str(fresh)], check=True)
    verified = subprocess.run([str(PBEM), "verify"], cwd=fresh, capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=fresh, capture_output=True, text=True).stdout
    assert "fed: closing" in log and "join: kli takes a seat" in log
    shown = subprocess.run(["git", "log", "-1", "--no-merges", "--show-signature"], cwd=where["Alice"],
                           capture_output=True, text=True, env=clean_env(homes["Alice"]))
    assert "Good" in shown.stdout + shown.stderr  # plain git checks Alice's own commit with her config
    if host == "github":
        assert len(fake.merges) >= 4 and all(p.merged for p in fake.pulls.values()), fake.pulls
        assert {p.head for p in fake.pulls.values()} == {"pbem/fed", "pbem/kli"}


# --- statements of fact in README and docs/ that a command can check ---------------------------------------------

DOCS = README.parent / "docs"


def _sentence(text: str) -> str:
    return " ".join(text.split())


def test_the_demo_prints_its_log_and_the_report_at_a_commit_has_the_firm_marker(demo_games: DemoGames,
                                                                                tmp_path: Path) -> None:
    """README, Quick start: the demo "verifies it and prints the game's log …; `pbem log --at REV` in the demo's
    folder prints the game report as it stood at any of those commits, with its `<-- firm to here -->` marker"."""
    from demo_games import commit_of, demo

    said = _sentence(README.read_text(encoding="utf-8"))
    assert ("verifies it and prints the game's log: every commit, and who got control after it. `pbem log --at REV` "
            "in the demo's folder prints the game report as it stood at any of those commits, with its `<-- firm to "
            "here -->` marker") in said
    folder = demo("tactical-duel", demo_games)
    printed = (folder / "demo.out").read_text()
    assert "ok: 57 commits verified" in printed and "fed: straight on -> kli (needs orders from 1.13.move)" in printed
    middle = commit_of(folder, "fed: in range 8")
    report = subprocess.run([str(PBEM), "log", "--at", middle], cwd=folder / "game", capture_output=True, text=True,
                            env=clean_env(tmp_path))
    assert report.returncode == 0 and "<-- firm to here -->" in report.stdout.splitlines(), report.stdout


def test_the_pictures_doc_says_what_the_diplomacy_map_draws_of_relations_not_yet_in_force(
        demo_games: DemoGames, tmp_path: Path) -> None:
    """docs/pictures.md says the map draws the changes recognised but not yet in force exactly when it does;
    where it says they are not drawn, `pbem relations` lists them."""
    from demo_games import clone_at, commit_of, demo

    folder = demo("dow", demo_games)
    at = commit_of(folder, "france: press: france declares WAR on germany")  # recognised, realised at S1901M

    def pbem(*args: str) -> str:
        done = subprocess.run([str(PBEM), *args], cwd=folder / "game", capture_output=True, text=True,
                              env=clean_env(tmp_path))
        assert done.returncode == 0, done.stderr
        return done.stdout

    svg = pbem("render", "--at", at)
    doc = _sentence((DOCS / "pictures.md").read_text(encoding="utf-8"))
    drawn = "recognised" in svg and "france" in svg
    assert ("and the changes recognised but not yet in force." in doc) == drawn
    if "The changes recognised but not yet in force are not drawn: `pbem relations` lists them." in doc:
        assert not drawn
        listed = clone_at(folder, at, tmp_path / "then").cli("relations").output
        assert "pending (recognised, not yet in force" in listed and "france-germany: NEUTRAL -> WAR" in listed
