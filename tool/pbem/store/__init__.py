"""store layer (see DESIGN §10)."""
