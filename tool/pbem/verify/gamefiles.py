"""Moved: the game model to pbem.protocol.game, the books to pbem.protocol.books, the readers to pbem.files."""

from pbem.files.game import blob_id, read_changes, read_files, read_game, seed_cache  # noqa: F401  # moved: re-exported until the lead sweeps
from pbem.files.kinds import known_players as _known_players  # noqa: F401  # moved: re-exported until the lead sweeps
from pbem.files.layout import (BLOB_MODE, CODEOWNERS, DICE_RE, FIXED_PATHS, GAME, PLAYERS_RE, PRESS_RE, README,  # noqa: F401  # moved: re-exported until the lead sweeps
                               REPORT_RE, SECRET_RE, STATUS, WORKFLOW, is_game_path, layout_findings)
from pbem.files.lines import (ENTRY_LINE, MAX_ENTRIES, MAX_MESSAGES, _read_press_whole, _read_report_whole,  # noqa: F401  # moved: re-exported until the lead sweeps
                              read_press, read_report)
from pbem.files.parsecache import FILE_BYTES, ITEM_BYTES, LINE_BYTES, ParseCache  # noqa: F401  # moved: re-exported until the lead sweeps
from pbem.files.readers import (parse_time, read_batch, read_manifest, read_players, read_secret,  # noqa: F401  # moved: re-exported until the lead sweeps
                                read_status, status_of)
from pbem.protocol.books import (_booked, dice_book, in_commit_order, press_added, press_after, press_book,  # noqa: F401  # moved: re-exported until the lead sweeps
                                 sealed_book, table_order, target_book)
from pbem.protocol.game import Game, Manifest, Seat  # noqa: F401  # moved: re-exported until the lead sweeps
