"""The index's tables, as numbered migrations applied in order and recorded in ``user_version``.

Everything here is derived from git, so a migration may also ask for a reindex (the next sync then
rebuilds from the tree) instead of transforming rows it could simply recompute.
"""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    statements: tuple[str, ...]
    reindex: bool = False
    """True when rows written by older code are no longer right: forget the keyed tree."""


FTS_DDL = (
    "CREATE VIRTUAL TABLE fts USING fts5("
    "content, cue, tags, tokenize = 'porter unicode61 remove_diacritics 2')"
)
"""A plain FTS5 table whose rowid is blocks.num; rows.py writes it with the blocks."""

_V1 = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
    # oid: the blob indexed for the path (NULL: nothing, e.g. deleted on disk); tree_oid: the blob
    # in the keyed tree (NULL: not in it); error: why the working-tree copy was not indexed.
    """CREATE TABLE files (
        path TEXT PRIMARY KEY, oid TEXT, tree_oid TEXT,
        source TEXT NOT NULL CHECK (source IN ('tree', 'worktree')),
        mtime_ns INTEGER, size INTEGER, error TEXT, error_line INTEGER, error_recovery TEXT)""",
    """CREATE TABLE blocks (
        num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL,
        ordinal INTEGER NOT NULL, status TEXT NOT NULL, cls TEXT NOT NULL, tags TEXT NOT NULL,
        pinned INTEGER NOT NULL, created TEXT NOT NULL, cue TEXT NOT NULL, content TEXT NOT NULL,
        content_hash TEXT NOT NULL, tier TEXT NOT NULL, relations TEXT NOT NULL,
        fields TEXT NOT NULL, extra TEXT NOT NULL)""",
    "CREATE INDEX blocks_path ON blocks (path)",
    "CREATE INDEX blocks_status ON blocks (status, cls)",
    "CREATE INDEX blocks_hash ON blocks (content_hash)",
    "CREATE INDEX blocks_created ON blocks (created, id)",
    "CREATE TABLE tags (block_id TEXT NOT NULL, tag TEXT NOT NULL)",
    "CREATE INDEX tags_tag ON tags (tag, block_id)",
    "CREATE INDEX tags_block ON tags (block_id)",
    "CREATE TABLE relations (source TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL)",
    "CREATE INDEX relations_source ON relations (source)",
    "CREATE INDEX relations_target ON relations (target)",
    FTS_DDL,
    # Copies of a block id that lost to the copy in an earlier path (blockdiff.py).
    "CREATE TABLE shadowed (block_id TEXT NOT NULL, path TEXT NOT NULL)",
    "CREATE INDEX shadowed_block ON shadowed (block_id)",
    "CREATE INDEX shadowed_path ON shadowed (path)",
    # Vectors outlive a delete-and-reinsert of their block, so unchanged text is never re-embedded.
    "CREATE TABLE vectors (block_id TEXT PRIMARY KEY, text_hash TEXT NOT NULL, vec BLOB NOT NULL)",
)

_V2 = (
    # Room for the ledger fold (the notes work fills these; nothing writes them yet).
    """CREATE TABLE block_state (
        block_id TEXT PRIMARY KEY, alpha REAL, beta REAL, reinforcements INTEGER, uses INTEGER,
        last_use REAL, penalties INTEGER, outcomes INTEGER)""",
    """CREATE TABLE edges (
        a TEXT NOT NULL, b TEXT NOT NULL, relation TEXT NOT NULL, weight REAL, source TEXT,
        PRIMARY KEY (a, b, relation))""",
    "CREATE INDEX edges_b ON edges (b)",
)

_V3 = (
    # The fold of each block's note, keyed by anchor, valid at meta's ledger_state_tip
    # (ledgerstate.py). It replaces v2's block_state, which nothing ever wrote.
    "DROP TABLE block_state",
    """CREATE TABLE ledger_state (
        anchor TEXT PRIMARY KEY, alpha REAL NOT NULL, beta REAL NOT NULL,
        reinforcements INTEGER NOT NULL, last_use REAL, penalties INTEGER NOT NULL,
        degree REAL NOT NULL) WITHOUT ROWID""",
)

_V4 = (
    # Candidate revisions learned in the ledger (``revises`` edges), both directions, so a
    # query sees a correction from either end. Rows folded before this column existed lack it:
    # they are dropped and refolded on demand.
    "DELETE FROM ledger_state",
    "DELETE FROM meta WHERE key = 'ledger_state_tip'",
    "ALTER TABLE ledger_state ADD COLUMN revises TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE ledger_state ADD COLUMN revised_by TEXT NOT NULL DEFAULT ''",
)

_V5 = (
    # Vectors of a long block's passages (block/passages.py), so a question about one paragraph
    # of a 10 KB block finds it. ``block_hash`` names the text and passage sizes they were cut
    # from; short blocks have no rows (their one passage is the block, vectored in ``vectors``).
    # No reindex: the next sync with a model cuts the long blocks already indexed (passagevecs.py).
    # A rowid table: as a WITHOUT ROWID table each ~1 KB row spilled to an overflow page of its
    # own (250 MB for 54 MB of vectors, 1,000 blocks of 10 KB).
    """CREATE TABLE passages (
        block_id TEXT NOT NULL, ord INTEGER NOT NULL, block_hash TEXT NOT NULL,
        text_hash TEXT NOT NULL, vec BLOB NOT NULL)""",
    "CREATE UNIQUE INDEX passages_key ON passages (block_id, ord)",
)

_V6 = (
    # The date a block was said or learned (its ``when:`` key), for time-bound recall. Rows
    # written before the column existed lack it: the reindex fills it from the tree.
    "ALTER TABLE blocks ADD COLUMN said TEXT NOT NULL DEFAULT ''",
    "CREATE INDEX blocks_said ON blocks (said) WHERE said != ''",
)

_V7 = (
    # Block ids whose vector rows each generation changed (index/vecdelta.py), so a process
    # holding an older vector matrix reads just those rows. It starts empty: the floor is the
    # current generation, and anything older reloads every row once.
    "CREATE TABLE vector_log (generation INTEGER NOT NULL, block_id TEXT NOT NULL)",
    "CREATE INDEX vector_log_generation ON vector_log (generation)",
    "INSERT OR REPLACE INTO meta (key, value) SELECT 'vector_log_floor',"
    " COALESCE((SELECT value FROM meta WHERE key = 'generation'), '0')",
)

_V8 = (
    # Long blocks' token ids and window norms for late interaction (index/tokenrows.py), so a
    # recall in a new process does not tokenise its long candidates. No reindex: the next sync
    # with vectors fills them (``meta.token_shape`` is not set yet).
    """CREATE TABLE tokens (
        block_id TEXT PRIMARY KEY, text_hash TEXT NOT NULL, shape TEXT NOT NULL,
        ids BLOB NOT NULL, norms BLOB NOT NULL)""",
)

_V9 = (
    # Per note, the co-retrieval pairs it stages toward edges, valid at meta's
    # ``staged_pairs_tip`` (index/pairstate.py): what ``status`` counts without reading every
    # note. It starts empty and unkeyed: the next status counts every note once.
    "CREATE TABLE staged_pairs (anchor TEXT PRIMARY KEY, pairs INTEGER NOT NULL) WITHOUT ROWID",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, _V1),
    Migration(2, _V2),
    Migration(3, _V3),
    Migration(4, _V4),
    Migration(5, _V5),
    Migration(6, _V6, reindex=True),
    Migration(7, _V7),
    Migration(8, _V8),
    Migration(9, _V9),
)
SCHEMA_VERSION = MIGRATIONS[-1].version


class NewerSchema(Exception):
    """The file was written by a newer elfmem (internal: triggers a heal)."""


class ForeignDatabase(Exception):
    """The file is an SQLite database elfmem did not create (internal: triggers a heal)."""


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """Bring ``conn`` (autocommit mode) up to the newest version; returns the version it had.

    Runs under ``BEGIN IMMEDIATE`` and re-reads the version inside it, so two processes opening an
    old index at once migrate it once.
    """
    target = migrations[-1].version
    if schema_version(conn) == target:
        return target
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = schema_version(conn)
        _check_migratable(conn, found, target)
        for migration in migrations:
            if migration.version > found:
                for statement in migration.statements:
                    conn.execute(statement)
                if migration.reindex and found > 0:
                    conn.execute("DELETE FROM meta WHERE key = 'memory_tree_oid'")
        if found == 0:
            _seed_meta(conn)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(target),))
        conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return found


def _check_migratable(conn: sqlite3.Connection, found: int, target: int) -> None:
    if found > target:
        raise NewerSchema(f"index schema {found} is newer than this elfmem's {target}")
    if found == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        raise ForeignDatabase("the file holds tables elfmem did not create")


def _seed_meta(conn: sqlite3.Connection) -> None:
    conn.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("generation", "0"), ("index_uuid", secrets.token_hex(8))],
    )
