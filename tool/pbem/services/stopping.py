"""Stopping a long-running command cleanly on SIGINT and SIGTERM, whatever it inherited (DESIGN §8 `pbem watch`).

A watch runs for days under nohup, tmux, cron or a service manager. Each of them may hand it a SIGINT that is
ignored (a shell's background job starts with SIGINT and SIGQUIT set to SIG_IGN, and Python then installs no
KeyboardInterrupt handler of its own) and a SIGTERM whose default kills it without a word. So the watch installs
its own handlers for both: a signal between rounds stops it at once; a signal in the middle of a round lets that
round finish (a commit and its push are not cut in two), and a second one stops it at once.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Any, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopper:
    """The handlers' state: whether a round is running, and the signal that asked to stop during it."""

    def __init__(self) -> None:
        self.busy = False
        self.asked: int | None = None

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.busy and self.asked is None:
            self.asked = signum  # the round in progress ends first
            return
        raise KeyboardInterrupt

    @contextmanager
    def round(self) -> Iterator[None]:
        """Run one round; a stop asked meanwhile takes effect when it ends (KeyboardInterrupt)."""
        self.busy = True
        try:
            yield
        finally:
            self.busy = False
        if self.asked is not None:
            raise KeyboardInterrupt


@contextmanager
def handled() -> Iterator[Stopper]:
    """Install the handlers for SIGINT and SIGTERM (undoing an inherited SIG_IGN) for the block, and put back the
    previous ones afterwards. Outside the main thread (signals go to it alone) nothing is installed."""
    stopper = Stopper()
    if threading.current_thread() is not threading.main_thread():
        yield stopper
        return
    previous: dict[int, Any] = {sig: signal.getsignal(sig) for sig in SIGNALS}
    for sig in SIGNALS:
        signal.signal(sig, stopper._handle)
    try:
        yield stopper
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
