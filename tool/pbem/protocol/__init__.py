"""protocol layer (see DESIGN §10)."""
