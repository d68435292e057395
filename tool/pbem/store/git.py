"""pygit2, imported without the TLS set-up it does for a network pbem never uses through it (DESIGN §11).

At import pygit2 asks Python's `ssl` for the default certificate locations and hands them to libgit2, whose
OpenSSL then parses the whole certificate bundle: importing `ssl` (with `socket` and the system's libssl) and
that parse are some 40 ms of CPU, a seventh of `pbem verify` on one new commit. pbem reads and writes local
repositories only; fetching and pushing run the git binary (services/gitstate.py `run_git`), so libgit2's
certificates are never read. While pygit2 is first imported here, `ssl` is a stand-in that names only the
folder of hashed certificates, which OpenSSL reads lazily (when a connection is checked, never here), and no
bundle file; the real `ssl` is left for whoever imports it later.

Every module of pbem imports pygit2 from here (`from pbem.store.git import pygit2`), so that the first import in
a process is this one; a process that imported `ssl` or pygit2 before gets pygit2 as it is.
"""

from __future__ import annotations

import os
import sys
import types
from typing import NamedTuple

# OpenSSL's own variable for the folder of hashed certificates, and the folder Debian's and most other builds use.
_CERT_DIR = os.environ.get("SSL_CERT_DIR") or "/etc/ssl/certs"


class _VerifyPaths(NamedTuple):
    """The part of `ssl.DefaultVerifyPaths` pygit2 reads."""

    cafile: str | None
    capath: str | None


def _import_without_tls() -> None:
    stand_in = types.ModuleType("ssl")
    stand_in.DefaultVerifyPaths = _VerifyPaths  # type: ignore[attr-defined]
    stand_in.get_default_verify_paths = lambda: _VerifyPaths(None, _CERT_DIR)  # type: ignore[attr-defined]
    sys.modules["ssl"] = stand_in
    try:
        import pygit2  # noqa: F401
    except Exception:  # noqa: BLE001 - a pygit2 that wants more of `ssl`, a TLS backend that refuses the folder:
        # forget what it half imported; it is imported as it is below
        for name in [n for n in sys.modules if n == "pygit2" or n.startswith("pygit2.")]:
            del sys.modules[name]
    finally:
        if sys.modules.get("ssl") is stand_in:
            del sys.modules["ssl"]


if "pygit2" not in sys.modules and "ssl" not in sys.modules and os.path.isdir(_CERT_DIR):
    _import_without_tls()

import pygit2  # noqa: E402 - after the stand-in's import above, this only names the module it loaded

__all__ = ["pygit2"]
