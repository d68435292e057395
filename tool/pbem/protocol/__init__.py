"""protocol layer (see DESIGN §10)."""

# the agreement document first: it re-exports the kinds (protocol.kinds), which build on it
from pbem.protocol import agreements as _agreements  # noqa: E402,F401
