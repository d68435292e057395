"""Moved: the agreement reader to pbem.files.readers, its path to pbem.files.layout."""

from pbem.files.layout import AGREEMENT_RE  # noqa: F401  # moved: re-exported until the lead sweeps
from pbem.files.readers import read_agreement  # noqa: F401  # moved: re-exported until the lead sweeps
