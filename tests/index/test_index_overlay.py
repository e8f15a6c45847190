"""The working-tree overlay: hand edits, hand deletes and untracked files, searchable at once."""

from __future__ import annotations

from index_support import HashModel, bid, block_ids, block_text, corpus, memory_file, source_with

from elfmem.errors import BlockFormatError
from elfmem.index import (
    EmbeddingCache,
    IndexDB,
    file_errors,
    lexical,
    sync,
)

BUCKET = "notes/knowledge/2026-01.md"


def test_hand_edit_is_overlaid_and_reverted_when_restored(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    files = corpus(files=2, per_file=2)
    source = source_with(files)
    sync(db, source, HashModel(), cache=cache)
    source.write_file(BUCKET, memory_file(block_text(bid(0), "hand edited about kayaks")))
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.files_parsed, report.blocks_removed) == ("overlay", 1, 1)
    assert [i for i, _ in lexical(db, "kayaks", 5)] == [bid(0)]
    assert db.conn.execute("SELECT source FROM files WHERE path = ?", (BUCKET,)).fetchone() == (
        "worktree",
    )
    assert sync(db, source, HashModel(), cache=cache).mode == "none"

    source.write_file(BUCKET, files[BUCKET])
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.files_parsed, report.blocks_added) == ("overlay", 1, 1)
    assert lexical(db, "kayaks", 5) == []
    assert db.conn.execute("SELECT source FROM files WHERE path = ?", (BUCKET,)).fetchone() == (
        "tree",
    )


def test_touch_without_change_hashes_but_does_not_parse(db: IndexDB, cache: EmbeddingCache) -> None:
    files = corpus(files=2, per_file=2)
    source = source_with(files)
    sync(db, source, HashModel(), cache=cache)
    source.write_file(BUCKET, files[BUCKET])  # new mtime, same bytes
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.files_parsed) == ("none", 0)


def test_bad_hand_edit_is_reported_and_tree_version_stays_searchable(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    files = corpus(files=2, per_file=2)
    source = source_with(files)
    sync(db, source, HashModel(), cache=cache)
    source.write_file(BUCKET, b"## heading\n<!-- id: nothex  cls: knowledge -->\n\nbody\n")
    report = sync(db, source, HashModel(), cache=cache)
    assert len(report.errors) == 1
    assert isinstance(report.errors[0], BlockFormatError)
    assert report.errors[0].path == f".elfmem/memory/{BUCKET}"
    assert report.errors[0].line == 2
    assert [i for i, _ in lexical(db, "topic1", 5)] == [bid(1)]

    again = sync(db, source, HashModel(), cache=cache)
    assert (again.mode, again.files_parsed) == ("none", 0)
    assert [str(e) for e in again.errors] == [str(report.errors[0])]
    assert [e.line for e in file_errors(db)] == [2]

    source.write_file(BUCKET, files[BUCKET])
    fixed = sync(db, source, HashModel(), cache=cache)
    assert fixed.errors == [] and file_errors(db) == []


def test_bad_committed_file_is_reported_and_not_indexed(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=2, per_file=2))
    sync(db, source, HashModel(), cache=cache)
    source.commit({BUCKET: b"stray text before any block\n"})
    report = sync(db, source, HashModel(), cache=cache)
    assert len(report.errors) == 1 and report.mode == "incremental"
    assert block_ids(db) == {bid(2), bid(3)}


def test_hand_deleted_file_is_indexed_as_absent_until_restored(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    files = corpus(files=2, per_file=2)
    source = source_with(files)
    sync(db, source, HashModel(), cache=cache)
    source.delete_file(BUCKET)
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.blocks_removed) == ("overlay", 2)
    assert block_ids(db) == {bid(2), bid(3)}
    assert sync(db, source, HashModel(), cache=cache).mode == "none"
    source.write_file(BUCKET, files[BUCKET])
    assert sync(db, source, HashModel(), cache=cache).blocks_added == 2
    assert block_ids(db) == {bid(n) for n in range(4)}


def test_new_untracked_file_is_searchable_at_once(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=1, per_file=1))
    sync(db, source, HashModel(), cache=cache)
    source.write_file("notes/decision/2026-02.md", memory_file(block_text(bid(50), "use sqlite")))
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.blocks_added) == ("overlay", 1)
    assert [i for i, _ in lexical(db, "sqlite", 5)] == [bid(50)]


def test_without_a_worktree_only_the_tree_counts(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=2, per_file=1), worktree=False)
    report = sync(db, source, HashModel(), cache=cache)
    assert (report.mode, report.blocks_added) == ("full", 2)
    assert sync(db, source, HashModel(), cache=cache).mode == "none"


def test_a_tree_only_sync_follows_commits_and_leaves_the_overlay_alone(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    files = corpus(files=3, per_file=2)
    source = source_with(files)
    sync(db, source, HashModel(), cache=cache)
    source.write_file(BUCKET, memory_file(block_text(bid(0), "hand edited about kayaks")))
    sync(db, source, HashModel(), cache=cache)
    other = "notes/knowledge/2026-02.md"
    source.commit({other: memory_file(block_text(bid(2), "committed about canoes"))})
    source.write_file(BUCKET, memory_file(block_text(bid(0), "hand edited about rafts")))

    report = sync(db, source, None, overlay=False)
    assert (report.mode, report.files_parsed) == ("incremental", 1)
    assert [i for i, _ in lexical(db, "canoes", 5)] == [bid(2)]
    assert [i for i, _ in lexical(db, "kayaks", 5)] == [bid(0)]  # the overlay row stays
    assert lexical(db, "rafts", 5) == []  # the newer hand edit waits for a full sync
    assert sync(db, source, None, overlay=False).mode == "none"

    assert sync(db, source, HashModel(), cache=cache).mode == "overlay"
    assert [i for i, _ in lexical(db, "rafts", 5)] == [bid(0)]
