"""Every resolved Diplomacy phase told from the game start: now services/dow/chronicle.py."""

from pbem.services.dow.chronicle import log_lines, told  # moved: re-exported until the lead sweeps

__all__ = ["log_lines", "told"]
