"""The enforcing workflow a game gets (DESIGN §9): the template shipped with pbem, pinned to this pbem version.

Its own module, below both `pbem init` (services.setup) and the `upgrade` agreement (services.agreements), which
each write it."""

from __future__ import annotations

from pathlib import Path

import pbem
from pbem.errors import PbemError


def workflow_text(spec: str | None = None, lock: str | None = None) -> str:
    """The enforcing workflow (DESIGN §9), pinned to this pbem version: by the hashes of `lock` (a requirements
    file with `--hash` for every package, services.gatelock), else by the version (or `spec`) alone."""
    here = Path(pbem.__file__).parent
    for candidate in (here / "github" / "pbem.yml", here.parents[1] / ".github" / "game-template" / "pbem.yml"):
        if candidate.is_file():
            text = candidate.read_text()
            break
    else:  # pragma: no cover - a broken installation
        raise PbemError("install.broken", "the workflow template is missing from this pbem installation")
    text = text.replace("install pbem {version}", f"install pbem {pbem.__version__}"
                        + (" and its dependencies, each pinned by its hash" if lock else ""))
    if lock is None:
        return text.replace("{install}", f'python -I -m pip install "{spec or f"pbem=={pbem.__version__}"}"')
    indent = " " * 10
    body = "".join(f"{indent}{line}\n" if line else "\n" for line in lock.splitlines())
    script = (f"|\n{indent}cat > \"$RUNNER_TEMP/pbem.lock\" <<'LOCK'\n{body}{indent}LOCK\n"
              f"{indent}python -I -m pip install --require-hashes --no-deps "
              f"-r \"$RUNNER_TEMP/pbem.lock\"")
    return text.replace("{install}", script)
