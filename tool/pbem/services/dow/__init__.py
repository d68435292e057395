"""Diplomacy (`dow/1`) from a power's side (DESIGN §4.7, §7.2): `seat` (where the game stands for him, and how a
command commits), `press`, `chronicle` (what resolved phases did, observed from replay), `relations`, `openings`
(of withheld sets) and `orders`. Each imports only those before it in that list; this package imports none."""
