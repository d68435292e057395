"""Writing a picture to the file named by `--out` (`pbem render --out board.svg`; DESIGN §8: a user's mistake is
one clear line and exit code 2, and changes nothing).

The path is checked before the game is read (a missing folder is known at once, not after verifying the whole
history), and the file is written whole or not at all: into a temporary file beside it, then renamed over it, so
a full disk or a refused write leaves neither a half-written picture nor the temporary file behind.
"""

from __future__ import annotations

import os
from pathlib import Path

from pbem.errors import USAGE, PbemError


def check(path: Path) -> None:
    """Refuse an output path that cannot be a file to write: rule `render.out-missing-folder` when its folder does
    not exist, `render.out-unwritable` when it is a folder or its parent is no folder."""
    folder = path.parent
    if path.is_dir():
        raise PbemError("render.out-unwritable", f"cannot write {path}: it is a folder", exit_code=USAGE,
                        hint=f"name a file in it, e.g. --out {path / 'board.svg'}")
    if not folder.exists():
        raise PbemError("render.out-missing-folder", f"cannot write {path}: the folder {folder} does not exist",
                        exit_code=USAGE, hint=f"make it first (mkdir -p {folder}) or name a file in a folder "
                        "that exists")
    if not folder.is_dir():
        raise PbemError("render.out-unwritable", f"cannot write {path}: {folder} is not a folder", exit_code=USAGE)


def write(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` whole, replacing the file if it exists (rules as `check`; any other refusal
    of the system, a full disk or a read-only place, is `render.out-unwritable`)."""
    check(path)
    temporary = path.with_name(f".{path.name}.pbem-{os.getpid()}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass  # it could not be made either
        raise PbemError("render.out-unwritable", f"cannot write {path}: {exc.strerror or exc}",
                        exit_code=USAGE) from None
