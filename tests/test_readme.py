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
from pathlib import Path

from conftest import PBEM
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


def test_the_readme_walkthrough_works_verbatim_in_fresh_homes(tmp_path: Path) -> None:
    shared = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(shared)], check=True)
    assert subprocess.run([str(PBEM), "hook", "install", str(shared)], capture_output=True).returncode == 0
    homes = {name: tmp_path / name for name in ("Alice", "Bob")}
    where = {name: home for name, home in homes.items()}
    for home in homes.values():
        home.mkdir()
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
            (where[player] / "players").mkdir(exist_ok=True)
            (where[player] / "players" / "fed.yaml").write_text(yaml[0])
            (where[player] / "report").mkdir(exist_ok=True)
            (where[player] / "report" / "turn-01.yaml").write_text(yaml[1])
        env = clean_env(homes[player], {"SHARED": str(shared), "PATH": f"{PBEM.parent}:" + clean_env(homes[player])
                                        ["PATH"]})
        for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
            env.pop(name)  # a fresh machine: git knows no name yet
        state = tmp_path / f"{player}.pwd"
        done = subprocess.run(["bash", "-e", "-c", f"{body}\npwd > {state}"], cwd=where[player], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{player}:\n{body}\n{done.stdout}{done.stderr}"
        where[player] = Path(state.read_text().strip())
        ran += 1
    assert ran >= 5
    fresh = tmp_path / "check"
    subprocess.run(["git", "clone", "-q", str(shared), str(fresh)], check=True)
    verified = subprocess.run([str(PBEM), "verify"], cwd=fresh, capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=fresh, capture_output=True, text=True).stdout
    assert "fed: closing" in log and "join: kli takes a seat" in log
    shown = subprocess.run(["git", "log", "-1", "--show-signature"], cwd=where["Alice"], capture_output=True,
                           text=True, env=clean_env(homes["Alice"]))
    assert "Good" in shown.stdout + shown.stderr  # plain git checks Alice's own commit with her config
