from __future__ import annotations

import pytest
from index_support import HashModel, bid, block_text, memory_file, source_with

from elfmem.block.model import content_hash
from elfmem.index import (
    EmbeddingCache,
    IndexDB,
    block_ids_with_tag,
    counts,
    find_by_hash,
    get_blocks,
    list_blocks,
    neighbours,
    status,
    sync,
)


@pytest.fixture
def indexed(db: IndexDB, cache: EmbeddingCache) -> IndexDB:
    notes = memory_file(
        block_text(
            bid(1),
            "Apply the minimum force",
            cls="identity",
            tags=("self/constitutional", "self/value"),
            created="2026-01-03T00:00:00+00:00",
        ),
        block_text(
            bid(2),
            "Ship small commits",
            tags=("self/goal",),
            cue="when planning work",
            created="2026-01-01T00:00:00+00:00",
            relations=(("supports", bid(1)), ("refines", "00000000deadbeef")),
        ),
        block_text(bid(3), "Postgres needs pgbouncer", created="2026-01-02T00:00:00+00:00"),
    )
    archive = memory_file(block_text(bid(4), "Old belief", relations=(("supersedes", bid(3)),)))
    files = {"notes/knowledge/2026-01.md": notes, "archive/knowledge/2026-01.md": archive}
    sync(db, source_with(files), HashModel(), cache=cache)
    return db


def test_get_blocks_returns_the_block_as_written(indexed: IndexDB) -> None:
    rows = get_blocks(indexed, [bid(2), "ffffffffffffffff"])
    assert list(rows) == [bid(2)]
    row = rows[bid(2)]
    assert (row.status, row.cls, row.cue, row.tier) == (
        "active",
        "knowledge",
        "when planning work",
        "durable",
    )
    assert row.tags == ("self/goal",)
    assert row.relations == (("supports", bid(1)), ("refines", "00000000deadbeef"))
    assert row.content_hash == content_hash("Ship small commits")
    assert row.to_block().relations[0].target == bid(1)


def test_list_blocks_filters_and_orders_by_created(indexed: IndexDB) -> None:
    assert [r.id for r in list_blocks(indexed, status="active")] == [bid(2), bid(3), bid(1)]
    assert [r.id for r in list_blocks(indexed, tag_pattern="self/%")] == [bid(2), bid(1)]
    assert [r.id for r in list_blocks(indexed, cls="identity")] == [bid(1)]
    assert [r.id for r in list_blocks(indexed, status="archived")] == [bid(4)]
    assert len(list_blocks(indexed, limit=2)) == 2


def test_tags_hashes_and_counts(indexed: IndexDB) -> None:
    assert block_ids_with_tag(indexed, "self/constitutional") == {bid(1)}
    assert block_ids_with_tag(indexed, "self/%") == {bid(1), bid(2)}
    assert find_by_hash(indexed, content_hash("  postgres NEEDS pgbouncer ")) == [bid(3)]
    assert counts(indexed) == {"inbox": 0, "active": 3, "archived": 1}


def test_neighbours_follow_declared_relations_both_ways(indexed: IndexDB) -> None:
    found = neighbours(indexed, [bid(1), bid(2), bid(3)])
    assert found[bid(1)] == [("supports", bid(2))]
    assert found[bid(2)] == [("supports", bid(1))]  # the dangling `refines` target is skipped
    assert found[bid(3)] == [("supersedes", bid(4))]


def test_status_reports_the_key_and_the_contents(indexed: IndexDB) -> None:
    info = status(indexed)
    assert info["memory_tree_oid"] == indexed.meta()["memory_tree_oid"]
    assert info["model_identity"] == "test/hash-64"
    assert info["counts"] == {"inbox": 0, "active": 3, "archived": 1}
    assert (info["files"], info["vectors"]) == (2, 4)
    assert (info["file_errors"], info["vectors_pending"]) == (0, False)
    assert isinstance(info["size_bytes"], int) and info["size_bytes"] > 0
