"""formats layer (see DESIGN §10)."""
