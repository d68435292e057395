"""Where the data shipped with pbem lives: the JSON Schemas and the game templates (DESIGN §2, §10).

In an installed wheel they sit inside the package (`pbem/schemas`, `pbem/games`: pyproject force-includes
them); in the source tree (editable install) they are the top-level `schemas/` and `games/` folders.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pbem
from pbem.errors import USAGE, PbemError


def _data_dir(name: str) -> Path:
    package = Path(pbem.__file__).resolve().parent
    installed = package / name
    if installed.is_dir():
        return installed
    source = package.parents[1] / name  # <repo>/tool/pbem -> <repo>/<name>
    if source.is_dir():
        return source
    raise PbemError("install.missing-data", f"pbem's {name}/ folder is missing (looked in {installed} and {source})",
                    hint="reinstall pbem", exit_code=USAGE)


def schemas_dir() -> Path:
    """The folder holding the JSON Schema files (`*.json`), packaged or in the source tree."""
    return _data_dir("schemas")


def games_dir() -> Path:
    """The folder holding the game templates used by `pbem init` and `pbem demo`."""
    return _data_dir("games")


def fold_file_stats(digest: Any, folder: Path, suffix: str, below: bool = True) -> None:
    """Fold into `digest` (a hashlib object) the path below `folder`, the size and the modification time of every
    file in it whose name ends in `suffix`, in path order; with `below`, in its subfolders too (`__pycache__` left
    out). Any checkout or install that changes one of the files changes this, at a stat each instead of a read:
    what keys the caches of compiled validators and of verified states."""
    top = len(str(folder)) + 1  # the path below the folder: where it is installed does not count
    for path, stat in sorted(_stats(str(folder), suffix, below)):
        digest.update(f"{path[top:]}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())


def _stats(folder: str, suffix: str, below: bool) -> list[tuple[str, os.stat_result]]:
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if below and entry.name != "__pycache__":
                    found.extend(_stats(entry.path, suffix, below))
            elif entry.name.endswith(suffix):
                found.append((entry.path, entry.stat()))
    return found
