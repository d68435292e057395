"""Where the data shipped with pbem lives: the JSON Schemas and the game templates (DESIGN §2, §10).

In an installed wheel they sit inside the package (`pbem/schemas`, `pbem/games`: pyproject force-includes
them); in the source tree (editable install) they are the top-level `schemas/` and `games/` folders.
"""

from __future__ import annotations

from pathlib import Path

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
