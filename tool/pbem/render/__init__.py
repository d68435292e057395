"""Pictures of a game: pure functions from data to text.

* `tactical_svg` — the `tactical/1` board as SVG (DESIGN §7.1): hexes with their numbers, units with facing,
  speed, hull and shield rings, the trails and fire of the last impulses, seeking weapons, units gone, and the
  `range` break conditions of the players who hold pending breaks (with tactical_geometry, tactical_units,
  tactical_step and tactical_legend);
* `dow_svg` — the Diplomacy board drawn by the engine's renderer, with the phase's orders and the
  relationship matrix (DESIGN §7.2); `dow_orders` draws the orders in each power's colour as the engine judged
  them and the dislodged units with their retreat options; `dow_phase` one phase before or after its
  adjudication (`render_phase`);
* `html_log` — one self-contained HTML page of a game: the report with its firm marker, dice, secrets and
  the map at each handoff;
* `status_screen` — what `pbem status` shows on a terminal (rich), and the exact command for what you owe.

No git, files, clock or printing here: the services gather the data (`pbem.services.pictures`), the CLI
prints (`pbem.cli.report`, `pbem.cli.play`).
"""
