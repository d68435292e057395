"""pbem: self-moderated play-by-email games on git."""

__version__ = "0.1.0"
