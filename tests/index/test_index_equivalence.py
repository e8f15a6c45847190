"""Whatever sequence of commits and hand edits happened, the incrementally maintained index must
equal one rebuilt from scratch: the property that makes the index safely disposable."""

from __future__ import annotations

import random

import pytest
from index_support import HashModel, bid, block_text, memory_file

from elfmem.index import (
    DictSource,
    EmbeddingCache,
    IndexDB,
    apply_files,
    file_errors,
    lexical,
    list_blocks,
    open_memory_index,
    sync,
)

PATHS = (
    "log/knowledge/2026-01.md",
    "notes/knowledge/2026-01.md",
    "notes/knowledge/2026-02.md",
    "notes/decision/2026-01.md",
    "archive/knowledge/2026-01.md",
)
WORDS = ("kayak", "pool", "lighthouse", "ferry", "zeppelin", "orchard", "quartz", "harbour")


def observed(db: IndexDB) -> tuple[object, ...]:
    vectors = db.conn.execute("SELECT block_id, text_hash FROM vectors ORDER BY 1").fetchall()
    searches = [lexical(db, w, 20, statuses=None) for w in WORDS]
    return (list_blocks(db), vectors, searches, [str(e) for e in file_errors(db)])


def random_file(rng: random.Random, ids: list[int]) -> bytes:
    if rng.random() < 0.08:
        return b"## broken\n<!-- id: zz -->\n\nbody\n"
    chosen = rng.sample(ids, rng.randint(0, 4))
    blocks = [
        block_text(
            bid(n),
            f"block {n} about {rng.choice(WORDS)} and {rng.choice(WORDS)}",
            cue=rng.choice(("", f"when thinking of {rng.choice(WORDS)}")),
            tags=rng.choice(((), ("self/value",), ("topic/x", "topic/y"))),
        )
        for n in chosen
    ]
    return memory_file(*blocks)


def step(rng: random.Random, source: DictSource, live: IndexDB, cache: EmbeddingCache) -> None:
    path = rng.choice(PATHS)
    ids = list(range(12))
    action = rng.random()
    if source.worktree is None and action >= 0.55:
        action = 0.0  # no working tree to edit by hand: commit instead
    if action < 0.25:
        source.commit({path: random_file(rng, ids)})
    elif action < 0.45:  # the tool's own write: commit, then index exactly that file
        parent, data = source.head, random_file(rng, ids)
        tree = source.commit({path: data})
        apply_files(live, {path: data}, HashModel(), tree, parent_tree_oid=parent, cache=cache)
    elif action < 0.55:
        source.commit({path: None})
    elif action < 0.85:
        source.write_file(path, random_file(rng, ids))
    elif action < 0.93:
        source.delete_file(path)
    elif source.head is not None:  # restore the working tree to the committed files
        for p in PATHS:
            oid = source.trees[source.head].get(p)
            if oid is None:
                source.delete_file(p)
            else:
                source.write_file(p, source.blobs[oid])


@pytest.mark.parametrize("worktree", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_index_equals_a_fresh_rebuild(
    seed: int, worktree: bool, cache: EmbeddingCache
) -> None:
    rng = random.Random(seed)
    source = DictSource(worktree=worktree)
    source.commit({PATHS[1]: random_file(rng, list(range(12)))})
    with open_memory_index() as live:
        for _ in range(30):
            step(rng, source, live, cache)
            sync(live, source, HashModel(), cache=cache)
            with open_memory_index() as fresh:
                sync(fresh, source, HashModel(), cache=cache)
                assert observed(live) == observed(fresh)
