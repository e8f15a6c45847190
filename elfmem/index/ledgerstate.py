"""Each block's folded ledger numbers, kept in the index so a query reads rows, not notes.

What retrieval needs from a block's ledger (Beta counts, reinforcements, last use, penalties,
learned degree) is a pure function of its note. Folding a note means decoding every JSON line
in it, and a query ranks about forty candidates, so folding at query time was a third of recall
at 10k blocks (docs/benchmarks.md). The rows here say what each note folded to at the notes
commit recorded in ``meta`` under ``TIP_KEY``; the reader moves them along by a notes-tree diff
(rhythms/adaptive.py). A missing row only means "not folded yet". Spooled events are never here:
the reader folds them on top of the note, as before.

This module stores and fetches; it does not know how to fold. Every write checks the recorded
tip first, so two processes moving the rows at once cannot leave rows of one tip under another.
Writes are best effort: a query does not queue behind another process's long write (or fail on
a read-only index) to save a cache row; it folds again next time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from elfmem.index.db import IndexDB

TIP_KEY = "ledger_state_tip"
"""meta key: the notes commit the rows were folded at ("" = no notes ref yet)."""
_CHUNK = 500  # well under SQLite's default limit on bound parameters
WAIT_S = 0.1
"""How long a write here waits for another writer before giving up."""


@dataclass(frozen=True, slots=True)
class StoredState:
    alpha: float
    beta: float
    reinforcements: int
    last_use: float | None
    """Active hours of the latest use, or None if never used."""
    penalties: int
    degree: float
    """Weighted degree from learned edges (declared relations are added by the reader)."""
    revises: tuple[str, ...] = ()
    """Blocks this one is a candidate revision of (ledger ``revises`` edges)."""
    revised_by: tuple[str, ...] = ()
    """Blocks that are candidate revisions of this one."""


def stored_tip(db: IndexDB) -> str | None:
    """The notes commit the rows belong to; None if the rows were never keyed to one."""
    return _tip(db.conn)


def _tip(conn: sqlite3.Connection) -> str | None:
    return keyed_tip(conn, TIP_KEY)


def keyed_tip(conn: sqlite3.Connection, key: str) -> str | None:
    """The notes commit that rows kept under meta ``key`` belong to; None if never keyed."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def read(db: IndexDB, tip: str, anchors: Iterable[str]) -> dict[str, StoredState] | None:
    """Rows for ``anchors`` if the rows belong to ``tip``; None when they belong to another."""
    wanted = list(anchors)
    with db.reading() as conn:
        if _tip(conn) != tip:
            return None
        out: dict[str, StoredState] = {}
        for start in range(0, len(wanted), _CHUNK):
            part = wanted[start : start + _CHUNK]
            for (
                anchor,
                alpha,
                beta,
                reinf,
                last_use,
                penalties,
                degree,
                revises,
                revised_by,
            ) in conn.execute(
                "SELECT anchor, alpha, beta, reinforcements, last_use, penalties, degree,"
                " revises, revised_by"
                f" FROM ledger_state WHERE anchor IN ({','.join('?' * len(part))})",
                part,
            ):
                out[anchor] = StoredState(
                    alpha, beta, reinf, last_use, penalties, degree, _ids(revises), _ids(revised_by)
                )
        return out


def advance(
    db: IndexDB,
    expected: str | None,
    tip: str,
    upserts: Mapping[str, StoredState],
    drop: Iterable[str] = (),
    *,
    clear: bool = False,
) -> bool:
    """Move the rows from ``expected`` to ``tip``: write ``upserts``, delete ``drop`` (or every row
    when ``clear``). False, with nothing written, if another process moved them first or the
    index stayed locked."""

    def body(conn: sqlite3.Connection) -> None:
        if clear:
            conn.execute("DELETE FROM ledger_state")
        else:
            conn.executemany("DELETE FROM ledger_state WHERE anchor = ?", [(a,) for a in drop])
        _upsert(conn, upserts)
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (TIP_KEY, tip))

    return _write_at(db, expected, body)


def keep(db: IndexDB, tip: str, folded: Mapping[str, StoredState]) -> bool:
    """Save rows folded on demand, if the rows still belong to ``tip`` (else they are dropped)."""
    if not folded:
        return True
    return _write_at(db, tip, lambda conn: _upsert(conn, folded))


def _write_at(
    db: IndexDB, expected: str | None, body: Callable[[sqlite3.Connection], None]
) -> bool:
    return write_at(db, TIP_KEY, expected, body)


def write_at(
    db: IndexDB, key: str, expected: str | None, body: Callable[[sqlite3.Connection], None]
) -> bool:
    """Run ``body`` in a short write if meta ``key`` still names ``expected``; False, with
    nothing written, if another process moved it first or the index stayed locked."""
    try:
        with db.write(wait_s=WAIT_S) as conn:
            if keyed_tip(conn, key) != expected:
                return False
            body(conn)
    except sqlite3.OperationalError:  # locked by a long writer, or a read-only file
        return False
    return True


def _ids(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _upsert(conn: sqlite3.Connection, rows: Mapping[str, StoredState]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO ledger_state VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                a,
                s.alpha,
                s.beta,
                s.reinforcements,
                s.last_use,
                s.penalties,
                s.degree,
                " ".join(s.revises),
                " ".join(s.revised_by),
            )
            for a, s in rows.items()
        ],
    )
