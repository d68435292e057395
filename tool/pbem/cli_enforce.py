"""Commands for enforcement where players meet (DESIGN §8, §9): registered on the main app by `register`."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
