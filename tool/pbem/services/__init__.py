"""services layer (see DESIGN §10)."""
