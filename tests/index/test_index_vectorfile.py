from __future__ import annotations

from pathlib import Path

import numpy as np
from index_support import HashModel, bid, block_text, corpus, memory_file, source_with

from elfmem.index import EmbeddingCache, IndexDB, VectorStore, sync
from elfmem.index.vectorfile import (
    VectorTable,
    read_vector_file,
    rows_path,
    vector_file_path,
    write_vector_file,
)


def test_round_trip_and_key_check(tmp_path: Path) -> None:
    path = tmp_path / "index.vectors"
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    write_vector_file(path, ("u", "7"), VectorTable(["a", "b", "c"], ["active"] * 3, matrix))
    table = read_vector_file(path, ("u", "7"))
    assert table is not None
    assert table.ids == ["a", "b", "c"] and table.statuses == ["active"] * 3
    assert np.array_equal(table.matrix, matrix)
    assert read_vector_file(path, ("u", "8")) is None
    assert read_vector_file(path, ("other", "7")) is None


def test_empty_table_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "index.vectors"
    write_vector_file(path, ("u", "0"), VectorTable([], [], np.zeros((0, 0), dtype=np.float32)))
    table = read_vector_file(path, ("u", "0"))
    assert table is not None and table.ids == [] and table.matrix.shape == (0, 0)


def test_damaged_or_missing_file_reads_as_stale(tmp_path: Path) -> None:
    path = tmp_path / "index.vectors"
    assert read_vector_file(path, ("u", "1")) is None
    rows_path(path).write_bytes(b"ELFMEM-VECTOR-ROWS-2\n{not json\n")
    assert read_vector_file(path, ("u", "1")) is None
    rows_path(path).write_bytes(b"garbage")
    assert read_vector_file(path, ("u", "1")) is None


def test_a_new_process_maps_the_file_and_a_sync_invalidates_it(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    assert db.path is not None
    source = source_with(corpus(files=2, per_file=3))
    sync(db, source, HashModel(), cache=cache)
    first = VectorStore().load(db)
    side = vector_file_path(db.path)
    assert side.exists()
    mapped = VectorStore().load(db)
    assert isinstance(mapped.matrix, np.memmap)
    assert mapped.ids == first.ids and np.array_equal(mapped.matrix, first.matrix)

    source.commit({"notes/knowledge/2026-01.md": memory_file(block_text(bid(40), "new"))})
    sync(db, source, HashModel(), cache=cache)
    fresh = VectorStore().load(db)
    # The file was at the old generation: the new process patched it with the logged rows.
    assert isinstance(fresh.matrix, np.memmap)
    assert bid(40) in fresh.ids and bid(0) not in fresh.ids
