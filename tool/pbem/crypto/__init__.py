"""crypto layer (see DESIGN §10)."""
