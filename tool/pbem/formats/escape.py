"""Moved to pbem.text (escaping imports nothing of pbem, so that errors.py can use it from below formats)."""

from pbem.text import annotation, first_control, json_dumps, terminal, workflow_data, workflow_property  # noqa: F401  # moved: re-exported until the lead sweeps
