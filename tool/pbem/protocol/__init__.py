"""protocol layer (see DESIGN §10)."""

# every agreement kind is registered once the protocol is imported: `upgrade` builds on agreements.py's kinds
from pbem.protocol import upgrade as _upgrade  # noqa: E402,F401
