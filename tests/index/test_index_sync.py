from __future__ import annotations

from index_support import HashModel, bid, block_ids, block_text, corpus, memory_file, source_with

from elfmem.index import (
    DictSource,
    EmbeddingCache,
    IndexDB,
    apply_files,
    get_blocks,
    lexical,
    rebuild,
    sync,
)

BUCKET = "notes/knowledge/2026-01.md"


def test_first_sync_is_full_and_indexes_every_block(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=5, per_file=4))
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.files_parsed, report.blocks_added) == ("full", 5, 20)
    assert report.embedded == 20
    assert report.tree_oid == source.head
    assert db.meta()["memory_tree_oid"] == source.head
    assert block_ids(db) == {bid(n) for n in range(20)}


def test_unchanged_sync_does_nothing(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus())
    sync(db, source, HashModel(), cache=cache)
    generation = db.meta()["generation"]
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.files_parsed, report.embedded, report.errors) == ("none", 0, 0, [])
    assert db.meta()["generation"] == generation


def test_commit_changing_one_file_reparses_exactly_that_file(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    files = corpus(files=6, per_file=3)
    source = source_with(files)
    sync(db, source, HashModel(), cache=cache)
    path = "notes/knowledge/2026-03.md"
    source.commit({path: memory_file(block_text(bid(6), "rewritten about zeppelins"))})
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.files_parsed) == ("incremental", 1)
    assert (report.blocks_added, report.blocks_removed, report.embedded) == (0, 2, 1)
    assert [i for i, _ in lexical(db, "zeppelins", 5)] == [bid(6)]
    assert block_ids(db) == {bid(n) for n in range(18)} - {bid(7), bid(8)}


def test_deleting_a_file_in_a_commit_removes_its_blocks(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=3, per_file=2))
    sync(db, source, HashModel(), cache=cache)
    source.commit({BUCKET: None})
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.files_parsed, report.blocks_removed) == ("incremental", 0, 2)
    assert block_ids(db) == {bid(n) for n in range(2, 6)}
    assert db.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 4


def test_moving_a_block_to_another_folder_changes_its_status(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    inbox = "log/knowledge/2026-01.md"
    source = source_with({inbox: memory_file(block_text(bid(1), "captured thought"))})
    sync(db, source, HashModel(), cache=cache)
    assert get_blocks(db, [bid(1)])[bid(1)].status == "inbox"
    source.commit({inbox: None, BUCKET: memory_file(block_text(bid(1), "captured thought"))})
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.blocks_added, report.blocks_removed, report.embedded) == (0, 0, 0)
    row = get_blocks(db, [bid(1)])[bid(1)]
    assert (row.status, row.path) == ("active", BUCKET)


def test_pruned_old_tree_falls_back_to_a_full_rebuild(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=2, per_file=2))
    sync(db, source, HashModel(), cache=cache)
    old = source.head
    assert old is not None
    source.commit({BUCKET: memory_file(block_text(bid(9), "after the rewrite"))})
    source.forget_tree(old)
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.files_parsed) == ("full", 2)
    assert block_ids(db) == {bid(9), bid(2), bid(3)}


def test_applied_write_needs_no_diff_or_parse_later(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=2, per_file=1))
    sync(db, source, HashModel(), cache=cache)
    parent = source.head
    data = memory_file(block_text(bid(0), "first"), block_text(bid(70), "remembered now"))
    tree = source.commit({BUCKET: data})
    report = apply_files(db, {BUCKET: data}, HashModel(), tree, parent_tree_oid=parent, cache=cache)
    assert (report.mode, report.files_parsed, report.blocks_added) == ("apply", 1, 1)
    assert db.meta()["memory_tree_oid"] == tree
    after = sync(db, source, HashModel(), cache=cache)
    assert (after.mode, after.files_parsed, after.embedded) == ("none", 0, 0)


def test_applied_write_on_a_stale_index_leaves_the_key_for_a_diff(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with(corpus(files=2, per_file=1))
    sync(db, source, HashModel(), cache=cache)
    source.commit({"notes/knowledge/2026-02.md": memory_file(block_text(bid(80), "elsewhere"))})
    parent = source.head
    data = memory_file(block_text(bid(81), "mine"))
    tree = source.commit({BUCKET: data})
    apply_files(db, {BUCKET: data}, HashModel(), tree, parent_tree_oid=parent, cache=cache)
    assert db.meta()["memory_tree_oid"] != tree
    report = sync(db, source, HashModel(), cache=cache)
    assert report.mode == "incremental"
    assert block_ids(db) == {bid(80), bid(81)}


def test_duplicate_id_keeps_the_first_path_in_full_and_incremental(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    a, b = "notes/knowledge/2026-01.md", "notes/knowledge/2026-02.md"
    source = source_with({a: memory_file(block_text(bid(1), "copy in a"))})
    sync(db, source, HashModel(), cache=cache)
    source.commit({b: memory_file(block_text(bid(1), "copy in b"), block_text(bid(2), "other"))})
    report = sync(db, source, HashModel(), cache=cache)
    assert len(report.errors) == 1 and report.errors[0].path.endswith(b)
    assert get_blocks(db, [bid(1)])[bid(1)].path == a
    full = rebuild(db, source, HashModel(), cache=cache)
    assert len(full.errors) == 1
    assert get_blocks(db, [bid(1)])[bid(1)].path == a
    assert block_ids(db) == {bid(1), bid(2)}


class _RacingSource(DictSource):
    """Another process syncs the same index while this one is planning."""

    def __init__(self, rival: IndexDB, cache: EmbeddingCache) -> None:
        super().__init__()
        self.rival, self.cache, self.raced = rival, cache, False

    def worktree_stats(self) -> dict[str, tuple[int, int]] | None:
        if not self.raced:
            self.raced = True
            sync(self.rival, self, HashModel(), cache=self.cache)
        return super().worktree_stats()


def test_a_concurrent_writer_makes_sync_replan(db: IndexDB, cache: EmbeddingCache) -> None:
    from elfmem.index import open_index

    assert db.path is not None
    rival = open_index(db.path)
    source = _RacingSource(rival, cache)
    source.commit(corpus(files=2, per_file=2))
    report = sync(db, source, HashModel(), cache=cache)
    assert source.raced and report.mode == "none"
    assert block_ids(db) == {bid(n) for n in range(4)}
    rival.close()


def test_applied_write_on_an_unkeyed_index_leaves_a_full_sync_to_do(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with(corpus(files=2, per_file=1))
    data = memory_file(block_text(bid(0), "written"))
    tree = source.commit({BUCKET: data})
    apply_files(db, {BUCKET: data}, HashModel(), tree, cache=cache)
    assert "memory_tree_oid" not in db.meta()
    assert sync(db, source, HashModel(), cache=cache).mode == "full"
    assert block_ids(db) == {bid(0), bid(1)}


def nums(db: IndexDB) -> dict[str, tuple[int, int]]:
    """block id → (row number, position in its file): a rewritten row gets a new number."""
    return {i: (n, o) for i, n, o in db.conn.execute("SELECT id, num, ordinal FROM blocks")}


def test_editing_one_block_rewrites_only_its_row(db: IndexDB, cache: EmbeddingCache) -> None:
    texts = [block_text(bid(n), f"stable block {n}") for n in range(6)]
    source = source_with({BUCKET: memory_file(*texts)})
    sync(db, source, HashModel(), cache=cache)
    before = nums(db)
    texts[2] = block_text(bid(2), "edited block about lighthouses")
    source.commit({BUCKET: memory_file(*texts)})
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.blocks_added, report.blocks_removed, report.embedded) == (0, 0, 1)
    after = nums(db)
    assert [i for i in after if after[i] != before[i]] == [bid(2)]
    assert after[bid(2)][1] == 2
    assert [i for i, _ in lexical(db, "lighthouses", 5)] == [bid(2)]
    assert lexical(db, "stable 2", 10)[0][0] != bid(2)


def test_removing_a_block_only_shifts_positions(db: IndexDB, cache: EmbeddingCache) -> None:
    texts = [block_text(bid(n), f"block {n}") for n in range(4)]
    source = source_with({BUCKET: memory_file(*texts)})
    sync(db, source, HashModel(), cache=cache)
    before = nums(db)
    source.commit({BUCKET: memory_file(*(texts[:1] + texts[2:]))})
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.blocks_removed, report.embedded) == (1, 0)
    after = nums(db)
    assert after == {
        bid(0): before[bid(0)],
        bid(2): (before[bid(2)][0], 1),
        bid(3): (before[bid(3)][0], 2),
    }
    assert db.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 3
    assert lexical(db, "block", 10, statuses=None) != []


def test_written_file_is_indexed_without_parsing(db: IndexDB, cache: EmbeddingCache) -> None:
    from elfmem.block.parse import parse_bytes
    from elfmem.index import WrittenFile, git_blob_oid

    source = source_with(corpus(files=2, per_file=2))
    sync(db, source, HashModel(), cache=cache)
    parent = source.head
    data = memory_file(block_text(bid(0), "note about topic0"), block_text(bid(60), "fresh fact"))
    tree = source.commit({BUCKET: data})
    written = WrittenFile(git_blob_oid(data), parse_bytes(data))
    report = apply_files(
        db, {BUCKET: written}, HashModel(), tree, parent_tree_oid=parent, cache=cache
    )
    assert (report.mode, report.files_parsed, report.blocks_added, report.blocks_removed) == (
        "apply",
        0,
        1,
        1,
    )
    assert [i for i, _ in lexical(db, "fresh fact", 5)] == [bid(60)]
    assert sync(db, source, HashModel(), cache=cache).mode == "none"


def test_duplicate_id_in_an_earlier_path_displaces_the_indexed_copy(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    early, late = "notes/knowledge/2026-01.md", "notes/knowledge/2026-02.md"
    source = source_with({late: memory_file(block_text(bid(1), "late copy"))})
    sync(db, source, HashModel(), cache=cache)
    source.commit({early: memory_file(block_text(bid(1), "early copy"))})
    report = sync(db, source, HashModel(), cache=cache)
    assert [e.path for e in report.errors] == [f".elfmem/memory/{late}"]
    assert (report.blocks_added, report.blocks_removed, report.embedded) == (0, 0, 1)
    row = get_blocks(db, [bid(1)])[bid(1)]
    assert (row.path, row.content) == (early, "early copy")
    assert [i for i, _ in lexical(db, "early", 5)] == [bid(1)]
    assert lexical(db, "late", 5) == []
