from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from index_support import HashModel, bid, block_text, corpus, memory_file, source_with

from elfmem.index import (
    EmbeddingCache,
    IndexDB,
    index_path,
    lexical,
    list_blocks,
    open_index,
    open_memory_index,
    status,
    sync,
)
from elfmem.index.schema import SCHEMA_VERSION, migrate


def snapshot(db: IndexDB) -> tuple[object, ...]:
    """Everything a caller can observe: blocks, search results, vectors."""
    vectors = db.conn.execute("SELECT block_id, text_hash, vec FROM vectors ORDER BY 1").fetchall()
    return (list_blocks(db), lexical(db, "topic3 shared", 10), vectors)


def built(path: Path, cache: EmbeddingCache) -> tuple[object, ...]:
    with open_index(path) as db:
        sync(db, source_with(corpus()), HashModel(), cache=cache)
        return snapshot(db)


def test_index_lives_in_the_git_dir(tmp_path: Path) -> None:
    assert index_path(tmp_path / ".git") == tmp_path / ".git" / "elfmem" / "index.db"


def test_missing_file_is_created_with_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "elfmem" / "index.db"
    with open_index(path) as db:
        assert db.healed is None
        assert db.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert status(db)["schema_version"] == SCHEMA_VERSION
        assert db.meta()["generation"] == "0"


@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage", "empty"])
def test_damaged_index_heals_to_the_same_content(
    tmp_path: Path, cache: EmbeddingCache, damage: str
) -> None:
    path = tmp_path / "index.db"
    original = built(path, cache)
    size = path.stat().st_size
    for journal in ("index.db-wal", "index.db-shm"):
        (tmp_path / journal).unlink(missing_ok=True)
    if damage == "delete":
        path.unlink()
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[: size // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x5a" * size)
    else:
        path.write_bytes(b"")
    with open_index(path) as db:
        assert (db.healed is not None) == (damage in ("truncate", "garbage"))
        report = sync(db, source_with(corpus()), HashModel(), cache=cache)
        assert (report.mode, report.embedded) == ("full", 0)
        assert snapshot(db) == original


def garble_pages(path: Path) -> None:
    """Overwrite every page after the first with garbage, keeping header and size intact."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = bytes((i * 7 + 3) % 256 for i in range(len(data) - page))
    path.write_bytes(bytes(data))


def test_damage_inside_pages_is_found_by_verify(tmp_path: Path, cache: EmbeddingCache) -> None:
    path = tmp_path / "index.db"
    original = built(path, cache)
    garble_pages(path)
    with open_index(path, verify=True) as db:
        assert db.healed is not None
        sync(db, source_with(corpus()), HashModel(), cache=cache)
        assert snapshot(db) == original


def test_damage_found_while_syncing_heals_the_index(tmp_path: Path, cache: EmbeddingCache) -> None:
    path = tmp_path / "index.db"
    original = built(path, cache)
    with open_index(path) as db:
        garble_pages(path)
        report = sync(db, source_with(corpus()), HashModel(), cache=cache)
        assert report.healed is not None and report.mode == "full"
        assert snapshot(db) == original


def test_unknown_newer_schema_is_rebuilt(tmp_path: Path, cache: EmbeddingCache) -> None:
    path = tmp_path / "index.db"
    original = built(path, cache)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    conn.commit()
    conn.close()
    with open_index(path) as db:
        assert db.healed is not None and "newer" in db.healed
        assert (tmp_path / "index.db.broken").exists()
        assert sync(db, source_with(corpus()), HashModel(), cache=cache).mode == "full"
        assert snapshot(db) == original


def test_foreign_sqlite_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE something_else (x)")
    conn.commit()
    conn.close()
    with open_index(path) as db:
        assert db.healed is not None
        assert list_blocks(db) == []


def test_older_schema_is_migrated_keeping_its_rows(tmp_path: Path, cache: EmbeddingCache) -> None:
    path = tmp_path / "index.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    conn.close()
    # Fill the file through the real sync, then take it back to v1: today's writer cannot fill a
    # v1 file, so what the later migrations added is dropped instead.
    current = IndexDB(sqlite3.connect(path, isolation_level=None), path, None)
    source = source_with(corpus())
    sync(current, source, None, cache=cache)
    current.close()
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in (
        "DROP INDEX blocks_said",
        "ALTER TABLE blocks DROP COLUMN said",
        "DROP TABLE passages",
        "DROP TABLE edges",
        "DROP TABLE ledger_state",
        "DROP TABLE vector_log",
        "DROP TABLE tokens",
        "DROP TABLE staged_pairs",
        "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
        "PRAGMA user_version = 1",
    ):
        conn.execute(statement)
    conn.close()
    with open_index(path) as db:
        assert db.healed is None
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.conn.execute("SELECT count(*) FROM edges").fetchone()[0] == 0
        assert len(list_blocks(db)) == 20
        # v6 added the ``said`` column: the rows are kept and the next sync rebuilds them once
        assert sync(db, source, None, cache=cache).mode == "full"
        assert sync(db, source, None, cache=cache).mode == "none"
        assert len(list_blocks(db)) == 20


def test_two_connections_share_one_index(tmp_path: Path, cache: EmbeddingCache) -> None:
    path = tmp_path / "index.db"
    source = source_with(corpus(files=2, per_file=2))
    first, second = open_index(path), open_index(path)
    sync(first, source, HashModel(), cache=cache)
    assert sync(second, source, HashModel(), cache=cache).mode == "none"
    source.commit({"notes/idea/2026-05.md": memory_file(block_text(bid(99), "late idea"))})
    assert sync(second, source, HashModel(), cache=cache).blocks_added == 1
    assert [i for i, _ in lexical(first, "idea", 5)] == [bid(99)]
    first.close()
    second.close()


def test_memory_index_is_a_throwaway(cache: EmbeddingCache) -> None:
    with open_memory_index() as db:
        report = sync(db, source_with(corpus(files=1, per_file=2)), HashModel(), cache=cache)
        assert report.blocks_added == 2
        assert status(db)["path"] is None and status(db)["size_bytes"] == 0
