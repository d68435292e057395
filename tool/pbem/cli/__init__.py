"""The `pbem` command line (DESIGN §8): parse arguments, call services, print. No rules here.

One module per command group, each with its own `commands`; they share options.py, which imports none of them
back; cli/application.py registers them all on one typer app. `pbem verify` and the git hooks, which a checkout,
CI and every push run as a fresh process, are served by cli/fast.py before that app is built, importing only
what they need. Exit codes: 0 success/legal, 1 illegal or verification failed, 2 usage or environment error.
Every user mistake is one clear line on stderr (PbemError), never a traceback; so is every error of the machine
(a full disk, a missing folder, a permission denied: `Commands.invoke` and `main`), and a reader who stops
reading (`pbem log | head -1`) ends the command quietly, as unix tools do.
"""

from __future__ import annotations

import errno
import importlib
import sys
from typing import Any, List, Optional

from pbem.cli import fast

# What `pbem.cli` offers beside `main`, built on first use (the full app imports every command group).
_APPLICATION = ("app", "PANELS", "Commands", "DIPLOMACY")


def __getattr__(name: str) -> Any:
    """`pbem.cli.app` (and PANELS, the command groups): the full app, imported when first asked for."""
    if name in _APPLICATION:
        return getattr(importlib.import_module("pbem.cli.application"), name)
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"pbem.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"pbem.cli.{name}":
                raise
    raise AttributeError(f"module 'pbem.cli' has no attribute {name!r}")


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point."""
    for stream in (sys.stdout, sys.stderr):
        # a path or note in a finding may hold any bytes a git tree allows: show them, never crash on them
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    from pbem.errors import ILLEGAL, USAGE, PbemError, os_error

    served = None
    try:
        try:
            code = served = fast.served(sys.argv[1:] if argv is None else argv)
            if code is None:
                from pbem.cli.application import app

                app(args=argv, prog_name="pbem")
        finally:
            sys.stdout.flush()  # what is still buffered meets a full disk or a closed pipe here, not at exit
    except PbemError as exc:  # pragma: no cover - commands catch their own
        sys.stderr.write(f"pbem: {exc}\n")
        sys.exit(exc.exit_code if exc.exit_code in (ILLEGAL, USAGE) else USAGE)
    except OSError as exc:
        fast.silence_stdout()
        if exc.errno != errno.EPIPE:
            sys.stderr.write(f"pbem: {os_error(exc, fast.STDOUT)}\n")
        sys.exit(USAGE)
    fast.frozen()
    if served is not None and argv is None:  # the console script's own process, about to end
        fast.leave(served)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
