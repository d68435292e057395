"""verify layer (see DESIGN §10)."""
