"""Per note, the co-retrieval pairs it stages toward edges, kept in the index by notes commit.

``status`` reports the pairs of active blocks recalled together but not yet in enough sessions
to become edges. Counting them from the notes means reading every active block's note (about
25 ms at 1k blocks, growing with the memory). The rows here say how many pairs each note staged
at the notes commit recorded in ``meta`` under ``TIP_KEY``; rhythms/staging.py moves them along
by a notes-tree diff, so a status folds only the notes that changed since the last one. Unlike
ledgerstate.py's rows these are complete at their commit: a note without a row stages nothing.
Spooled events are never here. Writes are best effort, as there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from elfmem.index.db import IndexDB
from elfmem.index.ledgerstate import keyed_tip, write_at

TIP_KEY = "staged_pairs_tip"
"""meta key: the notes commit the rows were counted at ("" = no notes ref yet)."""


def stored_tip(db: IndexDB) -> str | None:
    """The notes commit the rows belong to; None if they were never counted."""
    return keyed_tip(db.conn, TIP_KEY)


def read(db: IndexDB) -> tuple[str | None, dict[str, int]]:
    """The notes commit the rows belong to (None: never counted) and anchor → pairs staged."""
    with db.reading() as conn:
        tip = keyed_tip(conn, TIP_KEY)
        rows = {} if tip is None else dict(conn.execute("SELECT anchor, pairs FROM staged_pairs"))
    return tip, rows


def advance(
    db: IndexDB,
    expected: str | None,
    tip: str,
    counts: Mapping[str, int],
    *,
    clear: bool = False,
) -> bool:
    """Move the rows from ``expected`` to ``tip``: ``counts`` holds each changed note's pairs (0
    deletes its row); ``clear`` first deletes every row. False, with nothing written, if another
    process moved them first or the index stayed locked."""

    def body(conn: sqlite3.Connection) -> None:
        if clear:
            conn.execute("DELETE FROM staged_pairs")
        gone = [(a,) for a, n in counts.items() if n <= 0]
        conn.executemany("DELETE FROM staged_pairs WHERE anchor = ?", gone)
        staged = [(a, n) for a, n in counts.items() if n > 0]
        conn.executemany("INSERT OR REPLACE INTO staged_pairs VALUES (?, ?)", staged)
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (TIP_KEY, tip))

    return write_at(db, TIP_KEY, expected, body)
