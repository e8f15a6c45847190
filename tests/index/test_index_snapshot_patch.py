"""The vector snapshot patched with the logged rows equals one rebuilt from every row.

Random write sequences (add, drop, edit, move between folders, grow a block past the passage
length) go through the real sync into a real SQLite file; after each one a process that held the
previous snapshot, a new process reading the mapped files, and a rebuild from SQLite alone must
hold the same blocks, statuses, vectors and passages, and answer a dense query alike.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from index_support import HashModel, bid, block_text, memory_file, source_with

from elfmem.index import EmbeddingCache, IndexDB, VectorStore, open_index, sync, vecdelta
from elfmem.index.search import _fresh_snapshot, _Snapshot
from elfmem.index.source import DictSource
from elfmem.index.vecdelta import changed_since
from elfmem.index.vectorfile import (
    HEADER_BYTES,
    passage_file_path,
    read_any,
    rows_path,
    vector_file_path,
)

FOLDERS = ("log/knowledge/2026-01.md", "notes/knowledge/2026-01.md", "archive/knowledge/2026-01.md")
WORDS = "harbour lantern copper willow orbit meadow signal thunder velvet quartz".split()


def _text(n: int, version: int, long: bool) -> str:
    words = [WORDS[(n + version + i) % len(WORDS)] for i in range(6)]
    base = f"block {n} version {version} " + " ".join(words)
    if not long:
        return base
    para = " ".join(f"{w}{k}" for k, w in enumerate(WORDS * 12))
    return base + "\n\n" + "\n\n".join(f"{para} part {p} of {n}" for p in range(3))


class Memory:
    """Blocks by number: (folder index, text version, long)."""

    def __init__(self) -> None:
        self.blocks: dict[int, tuple[int, int, bool]] = {}

    def files(self) -> dict[str, bytes | None]:
        out: dict[str, list[str]] = {f: [] for f in FOLDERS}
        for n, (folder, version, long) in sorted(self.blocks.items()):
            out[FOLDERS[folder]].append(block_text(bid(n), _text(n, version, long)))
        return {f: memory_file(*bs) if bs else None for f, bs in out.items()}

    def apply(self, op: tuple[str, int, int]) -> None:
        kind, n, arg = op
        if kind == "add" or n not in self.blocks:
            self.blocks[n] = (arg % 3, 0, arg % 4 == 0)
        elif kind == "drop":
            del self.blocks[n]
        elif kind == "edit":
            folder, version, long = self.blocks[n]
            self.blocks[n] = (folder, version + 1, long)
        elif kind == "move":
            _, version, long = self.blocks[n]
            self.blocks[n] = (arg % 3, version, long)
        else:  # "grow" or shrink past the passage length
            folder, version, long = self.blocks[n]
            self.blocks[n] = (folder, version, not long)


def _contents(snap: _Snapshot) -> tuple[dict[str, tuple[str, bytes]], dict[str, list[bytes]]]:
    blocks = {
        block_id: (str(snap.statuses[row]), np.asarray(snap.matrix[row]).tobytes())
        for block_id, row in snap.rows.items()
    }
    passages: dict[str, list[bytes]] = {}
    for k, owner in enumerate(snap.owners):
        passages.setdefault(snap.ids[owner], []).append(np.asarray(snap.passages[k]).tobytes())
    return blocks, passages


def _assert_same(db: IndexDB, *stores: VectorStore) -> None:
    fresh = _fresh_snapshot(db)
    want = _contents(fresh)
    query = HashModel().embed(["harbour lantern copper part 1"])[0]
    for store in stores:
        snap = store.load(db)._snap
        assert snap.key == fresh.key
        assert _contents(snap) == want
        ours = store.dense(query, 5)
        theirs = VectorStore()
        theirs._snap = fresh
        assert ours == theirs.dense(query, 5)
        for statuses in (("active",), ("inbox", "archived")):
            assert store.dense(query, 50, statuses=statuses) == theirs.dense(
                query, 50, statuses=statuses
            )


OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "drop", "edit", "move", "grow"]),
        st.integers(0, 11),
        st.integers(0, 11),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(OPS, min_size=1, max_size=5))
def test_patched_snapshots_equal_a_rebuild(
    tmp_path_factory: pytest.TempPathFactory, steps: list[list[tuple[str, int, int]]]
) -> None:
    root = tmp_path_factory.mktemp("snap")
    cache = EmbeddingCache(root / "cache.db")
    db = open_index(root / "git" / "elfmem" / "index.db")
    try:
        memory, model = Memory(), HashModel()
        for n in range(4):
            memory.apply(("add", n, n))
        source = source_with({k: v for k, v in memory.files().items() if v is not None})
        sync(db, source, model, cache=cache)
        held = VectorStore().load(db)
        for ops in steps:
            for op in ops:
                memory.apply(op)
            source.commit(memory.files())
            sync(db, source, model, cache=cache)
            _assert_same(db, held, VectorStore())
    finally:
        db.close()
        cache.close()


def _indexed(
    db: IndexDB, cache: EmbeddingCache, adds: list[tuple[int, int]]
) -> tuple[Memory, HashModel, DictSource]:
    """A memory of the blocks ``adds`` names (number, version), synced into ``db``."""
    memory, model = Memory(), HashModel()
    for n, version in adds:
        memory.apply(("add", n, version))
    source = source_with({k: v for k, v in memory.files().items() if v is not None})
    sync(db, source, model, cache=cache)
    return memory, model, source


def test_a_patch_appends_rows_and_keeps_the_file(db: IndexDB, cache: EmbeddingCache) -> None:
    assert db.path is not None
    memory, model, source = _indexed(db, cache, [(n, 1) for n in range(6)])
    store = VectorStore().load(db)
    before = read_any(vector_file_path(db.path))
    assert before is not None
    memory.apply(("add", 9, 1))
    memory.apply(("move", 2, 0))  # a status change keeps the slot
    source.commit(memory.files())
    sync(db, source, model, cache=cache)
    store.load(db)
    after = read_any(vector_file_path(db.path))
    assert after is not None
    assert after[1].file == before[1].file  # appended to, not rewritten
    assert len(after[1].ids) == len(before[1].ids) + 1
    assert after[1].ids[-1] == bid(9)
    assert after[1].statuses[after[1].ids.index(bid(2))] == "inbox"
    _assert_same(db, store, VectorStore())


def test_a_truncated_or_torn_file_is_rebuilt(db: IndexDB, cache: EmbeddingCache) -> None:
    assert db.path is not None
    _indexed(db, cache, [(n, 1) for n in range(6)])
    VectorStore().load(db)
    side = vector_file_path(db.path)
    size = side.stat().st_size
    with open(side, "r+b") as handle:  # a torn append, or a disk that lost the tail
        handle.truncate(HEADER_BYTES + 100)
    assert read_any(side) is None
    _assert_same(db, VectorStore())
    assert side.stat().st_size == size  # rebuilt whole
    side.write_bytes(b"\0" * size)  # the header is gone
    assert read_any(side) is None
    _assert_same(db, VectorStore())
    rows_path(passage_file_path(db.path)).unlink()  # one of the pair missing
    _assert_same(db, VectorStore())
    assert read_any(passage_file_path(db.path)) is not None


def test_the_log_reaches_back_a_bounded_number_of_generations(
    db: IndexDB, cache: EmbeddingCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vecdelta, "LOG_KEEP", 4)
    memory, model, source = _indexed(db, cache, [(0, 1)])
    start = int(db.meta()["generation"])
    assert changed_since(db.conn, start) == set()
    memory.apply(("edit", 0, 0))
    source.commit(memory.files())
    sync(db, source, model, cache=cache)
    assert changed_since(db.conn, start) == {bid(0)}
    for version in range(5):
        memory.apply(("add", 1, version))
        memory.apply(("edit", 1, 0))
        source.commit(memory.files())
        sync(db, source, model, cache=cache)
    assert changed_since(db.conn, start) is None  # too old: the reader reloads every row
    held = VectorStore().load(db)
    _assert_same(db, held)


def test_an_index_without_a_file_patches_in_memory(tmp_path: Path, cache: EmbeddingCache) -> None:
    from elfmem.index import open_memory_index

    db = open_memory_index()
    memory, model, source = _indexed(db, cache, [(n, 2) for n in range(5)])
    store = VectorStore().load(db)
    memory.apply(("edit", 1, 0))
    memory.apply(("drop", 2, 0))
    source.commit(memory.files())
    sync(db, source, model, cache=cache)
    _assert_same(db, store)
    db.close()
