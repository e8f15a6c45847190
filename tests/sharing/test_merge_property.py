"""Property: merging two sides' memories (with reconciliation) never loses a block or an edit,
and gives the same tree whichever side merges.

Each side runs a random sequence of what elfmem does to files: remember (append to the inbox
bucket chain), edit in place, promote (inbox → notes, tags added, as dream does), forget (→
archive), and fill (enough captures to overflow a bucket). The bucket bound is lowered to 4 so
overflow happens on both sides in a few steps. The trees are real git trees in a bare repository,
merged by ``merge_memory`` (libgit2's tree merge, the bucket merge, the reconciliation pass).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.block import reconcile as reconcile_mod
from elfmem.block.layout import MEMORY_DIR, BucketKey, parse_bucket_path
from elfmem.block.model import Block
from elfmem.block.render import render_file
from elfmem.store.treemerge import memory_blocks, merge_memory

LIMIT = 4
Files = dict[str, list[Block]]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["remember", "edit", "promote", "forget", "fill"]), st.integers(0, 99)
    ),
    max_size=10,
)


@pytest.fixture(autouse=True)
def _small_buckets(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(reconcile_mod, "BUCKET_LIMIT", LIMIT)
    yield


def _append(files: Files, status: str, block: Block) -> None:
    n = 1
    while len(files.get(BucketKey(status, "knowledge", "2026-01", n).relpath, [])) >= LIMIT:
        n += 1
    files.setdefault(BucketKey(status, "knowledge", "2026-01", n).relpath, []).append(block)


def _where(files: Files, index: int) -> tuple[str, Block] | None:
    everything = sorted((b.id, p, b) for p, bs in files.items() for b in bs)
    if not everything:
        return None
    _, path, block = everything[index % len(everything)]
    return path, block


def _run(files: Files, ops: list[tuple[str, int]], side: str) -> Files:
    files = {p: list(bs) for p, bs in files.items()}
    for step, (op, arg) in enumerate(ops):
        if op in ("remember", "fill"):
            for k in range(1 if op == "remember" else LIMIT + 1):
                block_id = f"{side}{step:03x}{k:02x}".ljust(16, "0")
                _append(files, "inbox", Block(id=block_id, content=f"fact {block_id}"))
            continue
        found = _where(files, arg)
        if found is None:
            continue
        path, block = found
        status = parse_bucket_path(path).status  # type: ignore[union-attr]
        if op == "edit":
            new = block.with_changes(content=f"{block.content}, edited by {side} at {step}")
            files[path] = [new if b.id == block.id else b for b in files[path]]
        elif (op == "promote" and status == "inbox") or (op == "forget" and status != "archived"):
            files[path] = [b for b in files[path] if b.id != block.id]
            moved = block.with_changes(tags=(*block.tags, "promoted")) if op == "promote" else block
            _append(files, "active" if op == "promote" else "archived", moved)
    return files


def _tree(repo: pygit2.Repository, files: Files) -> str:
    index = pygit2.Index()
    for path, blocks in files.items():
        oid = repo.create_blob(render_file(blocks).encode())
        index.add(pygit2.IndexEntry(f"{MEMORY_DIR}/{path}", oid, pygit2.enums.FileMode.BLOB))
    return str(index.write_tree(repo))


def _texts(files: Files) -> dict[str, str]:
    return {b.id: b.content for bs in files.values() for b in bs}


@settings(max_examples=80)
@given(base_ops=OPS, ours_ops=OPS, theirs_ops=OPS)
def test_the_merge_keeps_every_block_and_edit_and_is_symmetric(
    tmp_path_factory: pytest.TempPathFactory,
    base_ops: list[tuple[str, int]],
    ours_ops: list[tuple[str, int]],
    theirs_ops: list[tuple[str, int]],
) -> None:
    repo = pygit2.init_repository(str(tmp_path_factory.mktemp("bare")), bare=True)
    base = _run({}, base_ops, "e")
    ours, theirs = _run(base, ours_ops, "a"), _run(base, theirs_ops, "b")
    trees = [_tree(repo, f) for f in (base, ours, theirs)]
    one = merge_memory(repo, trees[0], trees[1], trees[2])
    two = merge_memory(repo, trees[0], trees[2], trees[1])
    assert one.tree == two.tree
    merged = memory_blocks(repo, one.tree)
    texts = {block.content for _, block in merged.values()}
    old = _texts(base)
    for side in (ours, theirs):
        for block_id, text in _texts(side).items():
            assert block_id in merged  # no block lost
            if old.get(block_id) != text:
                assert text in texts  # no edit lost
    counts: dict[str, int] = {}
    root = repo[one.tree].peel(pygit2.Tree)
    for path in {p for p, _ in merged.values()}:
        data = root[f"{MEMORY_DIR}/{path}"].peel(pygit2.Blob).data
        assert b"<<<<<<<" not in data
        for line in data.decode().splitlines():
            if line.startswith("<!-- id: "):
                counts[line[9:25]] = counts.get(line[9:25], 0) + 1
                assert line.count("id: ") == 1
        assert data.count(b"\n<!-- id: ") + data.startswith(b"<!-- id: ") <= LIMIT
    assert all(n == 1 for n in counts.values())  # one block per id


def test_a_second_merge_of_the_result_changes_nothing(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "bare"), bare=True)
    base = _run({}, [("remember", 0), ("fill", 0), ("promote", 1)], "e")
    ours = _run(base, [("edit", 1), ("fill", 0)], "a")
    theirs = _run(base, [("forget", 1), ("fill", 0)], "b")
    trees = [_tree(repo, f) for f in (base, ours, theirs)]
    merged = merge_memory(repo, *trees).tree
    assert merge_memory(repo, trees[1], merged, merged).tree == merged
    assert merge_memory(repo, trees[2], merged, trees[2]).tree == merged


WORDS = st.sampled_from(["ops", "stale", "db", "api", "web", "cache"])


@settings(max_examples=120)
@given(
    base=st.sets(WORDS),
    ours_drop=st.sets(WORDS),
    ours_add=st.sets(WORDS),
    theirs_drop=st.sets(WORDS),
    theirs_add=st.sets(WORDS),
    pinned=st.tuples(st.booleans(), st.booleans(), st.booleans()),
)
def test_list_fields_and_pinned_merge_three_way_either_way_round(
    base: set[str],
    ours_drop: set[str],
    ours_add: set[str],
    theirs_drop: set[str],
    theirs_add: set[str],
    pinned: tuple[bool, bool, bool],
) -> None:
    """What either side removed from the base stays removed, what either side added is kept,
    and a block pinned on a side that changed it stays pinned: for tags and inline fields."""
    from elfmem.block.merge import merge_block

    def side(drop: set[str], add: set[str], pin: bool) -> Block:
        words = sorted((base - drop) | add)
        return Block(
            id="0" * 15 + "1",
            content="one",
            tags=tuple(words),
            fields=tuple((w, "yes") for w in words),
            pinned=pin,
        )

    old = side(set(), set(), pinned[0])
    ours, theirs = side(ours_drop, ours_add, pinned[1]), side(theirs_drop, theirs_add, pinned[2])
    mine, yours = set(ours.tags), set(theirs.tags)
    want = (base & mine & yours) | ((mine | yours) - base)
    pin = ours.pinned if ours.pinned == theirs.pinned else not old.pinned
    for one, two in ((ours, theirs), (theirs, ours)):
        [got] = merge_block(old, one, two).blocks
        assert set(got.tags) == want
        assert {k for k, _ in got.fields} == want
        assert got.pinned == pin
