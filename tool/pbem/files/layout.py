"""A game repository's layout (DESIGN §2, §3 Trees): the fixed files, the path pattern of each file kind, and
the rule that a tree holds only these, as regular files."""

from __future__ import annotations

import re
from typing import Mapping

from pbem.errors import Finding

GAME = "game.yaml"
STATUS = "status.yaml"
README = "README.md"
WORKFLOW = ".github/workflows/pbem.yml"
CODEOWNERS = ".github/CODEOWNERS"  # optional: who must review a change of .github/ on GitHub (docs/github.md)
FIXED_PATHS = {GAME, STATUS, README, WORKFLOW, CODEOWNERS}
PLAYERS_RE = re.compile(r"players/([a-z][a-z0-9_]{0,15})\.yaml\Z")
REPORT_RE = re.compile(r"report/([a-z0-9][a-z0-9-]{0,31})\.yaml\Z")
DICE_RE = re.compile(r"dice/([a-z][a-z0-9_-]{0,15}-[0-9]{4,6})\.yaml\Z")  # dice/<roller>-NNNN.yaml (protocol.ids)
SECRET_RE = re.compile(r"secrets/([a-z][a-z0-9_-]{0,15}-[0-9]{4,6})\.yaml\Z")  # secrets/<owner>-NNNN.yaml
PRESS_RE = re.compile(r"press/([a-z][a-z0-9-]{0,31})\.yaml\Z")  # press/<author>.yaml: judged against the seats
AGREEMENT_RE = re.compile(r"agreements/([a-z][a-z0-9_-]{0,30}-[0-9]{4})\.yaml\Z")
# An erratum is an agreement of kind erratum (DESIGN §4.8); a folder errata/ is no part of a game's layout
OLD_ERRATA = "errata/"
# every file kind's path besides the fixed files, in the order of files/kinds.py's table (which a test holds to)
KIND_PATHS = (PLAYERS_RE, REPORT_RE, DICE_RE, SECRET_RE, PRESS_RE, AGREEMENT_RE)
BLOB_MODE = 0o100644


def is_game_path(path: str) -> bool:
    """Whether a path belongs to the game layout (DESIGN §2); only these are ever committed."""
    return path in FIXED_PATHS or any(r.match(path) for r in KIND_PATHS)


def layout_findings(files: Mapping[str, tuple[str, int]], changed: set[str] | None = None,
                    added: set[str] | None = None) -> list[Finding]:
    """Only the paths the game layout allows, only regular files (DESIGN §3 Trees). With `changed` (and the
    new paths among them, `added`), only those are looked at, the rest having passed at an earlier commit:
    a commit costs what it changed."""
    found = []
    if changed is None or added:
        folded: dict[str, str] = {}
        for path in sorted(files):
            twin = folded.get(path.lower())
            if twin is not None and (changed is None or path in added or twin in added):  # type: ignore[operator]
                found.append(Finding("tree.case-twin", f"{path} and {twin} differ only in case", file=path))
            folded[path.lower()] = path
    for path in sorted(files) if changed is None else sorted(p for p in changed if p in files):
        mode = files[path][1]
        if path.startswith(OLD_ERRATA):
            found.append(Finding("tree.unexpected-path", f"{path}: errata are agreements of kind erratum "
                                 "(agreements/<id>.yaml), and a folder errata/ is no part of a game's layout",
                                 file=path, hint="remove errata/, make the correction in the report files and "
                                 "propose it with `pbem agree erratum --reason TEXT`; every active player signs it "
                                 "with `pbem sign ID`"))
        elif not is_game_path(path):
            found.append(Finding("tree.unexpected-path", f"{path} is not part of a game's layout "
                                 "(game.yaml, status.yaml, players/<id>.yaml, report/<period>.yaml, "
                                 "dice/<batch>.yaml, secrets/<id>.yaml, press/<seat>.yaml, "
                                 "agreements/<id>.yaml, README.md, .github/CODEOWNERS)",
                                 file=path))
        elif mode != BLOB_MODE:
            found.append(Finding("tree.bad-mode", f"{path} has mode {mode:o}; only regular files (100644)",
                                 file=path))
    return found
