"""`pbem site DIR`: write the game's static site (pbem.render.site says what is in it) into a folder.

The site is written into a new folder beside DIR and only then moved into place, so a failure part way leaves
nothing behind, and a reader of a published site never sees half of one. DIR may be missing, empty, or a site
written before (it holds pbem.render.site.MARKER): anything else is refused rather than overwritten.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from pbem.errors import PbemError
from pbem.render import site
from pbem.services import pictures
from pbem.store.repo import GameRepo


def write_site(repo: GameRepo, folder: Path, revision: str | None = None) -> int:
    """Write the site of the game to `revision` (default HEAD) into `folder`; return how many commits it shows."""
    folder = Path(os.path.abspath(folder))
    try:
        _check_target(folder)
    except OSError as exc:  # a name too long, a folder that cannot be listed
        raise _unwritable(folder, exc) from None
    log = pictures.game_log(repo, revision)  # a bad revision or an empty repository: refused before any write
    files = site.site_files(log)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    except OSError as exc:
        raise _unwritable(folder, exc) from None
    try:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.chmod(staging, 0o755)  # mkdtemp's 0700 would hide the site from a web server's user
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise _unwritable(folder, exc) from None
    return len(log.commits)


def _check_target(folder: Path) -> None:
    if not folder.parent.is_dir():
        raise PbemError("render.site-no-folder", f"{folder.parent} does not exist: create it first, or name another "
                        "folder for the site", file=str(folder))
    if folder.exists() and not folder.is_dir():
        raise PbemError("render.site-not-a-folder", f"{folder} is a file, not a folder: name a folder for the site",
                        file=str(folder))
    if folder.is_dir() and any(folder.iterdir()) and not (folder / site.MARKER).is_file():
        raise PbemError("render.site-not-empty", f"{folder} holds other files: pbem site writes only into a new or empty "
                        "folder, or over a site it wrote before", file=str(folder))
    if not os.access(folder.parent, os.W_OK):
        raise _unwritable(folder, PermissionError("permission denied"))


def _unwritable(folder: Path, exc: OSError) -> PbemError:
    return PbemError("render.site-cannot-write", f"cannot write the site into {folder}: {exc.strerror or exc}",
                     file=str(folder))
