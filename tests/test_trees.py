"""The tree walker (store/trees.py) against git's own reading of each tree: a commit's folders are read in the
entries that changed only (their common head and tail with the listing before are not parsed again), and give
exactly what reading the whole tree gives."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.crypto.keys import PrivateKey
from pbem.store.repo import GameRepo
from pbem.store.signer import KeySigner
from pbem.store import trees as tree_module
from pbem.store.trees import TreeWalker

# names that sort around each other (a-, a., a/ …), in folders nested and not
PATHS = ["game.yaml", "status.yaml", "a", "a-b", "a.b", "z", "players/fed.yaml", "players/kli.yaml",
         "report/turn-01.yaml", "report/turn-02.yaml", "report/turn-10.yaml", "report/x/y.yaml", "report/x-y.yaml",
         "deep/er/still/file.yaml"]
TREES = st.lists(st.dictionaries(st.sampled_from(PATHS), st.sampled_from([b"1", b"2", b"three\n"]), min_size=1),
                 min_size=1, max_size=8)


def _walked(tmp: Path, trees: list[dict[str, bytes]]) -> None:
    repo = GameRepo.init(tmp)
    signer = KeySigner(PrivateKey.from_seed(bytes([7]) * 32, "walker"))
    walker = TreeWalker(repo)
    before: dict[str, tuple[str, int]] = {}
    parent: list[str] = []
    for i, files in enumerate(trees):
        files = {p: d for p, d in files.items() if not any(q.startswith(p + "/") for q in files)}  # no file/folder
        oid = repo.commit_tree(files, parent, f"tree {i}", signer, ("t", "t@example.invalid"), 1_700_000_000 + i)
        parent = [oid]
        walked, changed = walker.advance(oid, repo.tree_id(oid))
        plain = repo.tree_files(oid)
        assert walked == plain
        assert changed == {p for p in set(plain) | set(before) if plain.get(p) != before.get(p)}
        before = plain


def test_a_folder_edited_in_its_middle_is_read_there(tmp_path: Path) -> None:
    reports = {f"report/turn-{n:02d}.yaml": b"entries: []\n" for n in range(1, 40)}
    grown = {**reports, "report/turn-20.yaml": b"changed\n", "report/turn-40.yaml": b"new\n"}
    fewer = {p: d for p, d in grown.items() if p not in ("report/turn-01.yaml", "report/turn-21.yaml")}
    _walked(tmp_path, [reports, grown, fewer, {**fewer, "report/turn-21.yaml": b"back\n"}, reports])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TREES)
def test_walker_agrees_with_git_on_any_sequence_of_trees(tmp_path_factory, trees: list[dict[str, bytes]]) -> None:
    kept = tree_module.RELIST_BYTES
    tree_module.RELIST_BYTES = 0  # every folder read in its changes, however small
    try:
        _walked(tmp_path_factory.mktemp("walk"), trees)
    finally:
        tree_module.RELIST_BYTES = kept
