"""Diplomacy (`dow/1`) from a power's side: seat (where the game stands), orders, press, relations, openings of
withheld sets, and the chronicle of resolved phases (DESIGN §4.7, §7.2). The modules import each other in that
order and nothing here imports them."""
