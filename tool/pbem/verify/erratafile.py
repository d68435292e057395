"""Moved: the erratum readers to pbem.files.readers, the old errata/ path to pbem.files.layout."""

from pbem.files.layout import ERRATUM_RE  # noqa: F401  # moved: re-exported until the lead sweeps
from pbem.files.readers import read_entries, read_erratum  # noqa: F401  # moved: re-exported until the lead sweeps
