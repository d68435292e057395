"""Opening a withheld Diplomacy set without its owner: now services/dow/openings.py."""

from pbem.services.dow.openings import dealt, open_share, opened_marks  # moved: re-exported until the lead sweeps

__all__ = ["dealt", "open_share", "opened_marks"]
