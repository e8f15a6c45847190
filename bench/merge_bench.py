"""Merge cost: the pure bucket merge, the tree merge with reconciliation, and one driver call.

Two sides each add ``--blocks`` new blocks to the same month (and edit a few shared ones), so
every bucket both sides wrote is merged by block id and the overflow is laid out again. Printed:
milliseconds per full 250-block bucket merge, per ``merge_memory`` of the two trees, and per
``git elfmem merge-driver`` process (what plain ``git merge`` pays per conflicted bucket: mostly
starting Python and importing the CLI). Best of ``--repeat`` runs.

    python bench/merge_bench.py [--blocks 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2
from common import parse

from elfmem.block.layout import BUCKET_LIMIT, MEMORY_DIR, BucketKey
from elfmem.block.merge import merge_bucket
from elfmem.block.model import Block
from elfmem.block.render import render_file
from elfmem.store.treemerge import merge_memory


def _block(side: str, n: int, text: str = "") -> Block:
    return Block(
        id=f"{side}{n:015x}",
        content=text or f"Host h{n} of side {side} serves shard {n} behind the {side} proxy",
        created=f"2026-01-{n % 28 + 1:02d}T00:00:00+00:00",
        tags=("infra",),
    )


def _files(side: str, shared: list[Block], n: int) -> dict[str, list[Block]]:
    blocks = [*shared, *(_block(side, i) for i in range(n))]
    out: dict[str, list[Block]] = {}
    for k in range(0, len(blocks), BUCKET_LIMIT):
        key = BucketKey("active", "knowledge", "2026-01", k // BUCKET_LIMIT + 1)
        out[key.relpath] = blocks[k : k + BUCKET_LIMIT]
    return out


def _tree(repo: pygit2.Repository, files: dict[str, list[Block]]) -> str:
    index = pygit2.Index()
    for path, blocks in files.items():
        oid = repo.create_blob(render_file(blocks).encode())
        index.add(pygit2.IndexEntry(f"{MEMORY_DIR}/{path}", oid, pygit2.enums.FileMode.BLOB))
    return str(index.write_tree(repo))


def _best(repeat: int, fn: object) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parse(parser, {"blocks": 250, "repeat": 1})
    shared = [_block("c", i) for i in range(20)]
    edited_a = [
        b.with_changes(content=b.content + " (a)") if i < 5 else b for i, b in enumerate(shared)
    ]
    edited_b = [
        b.with_changes(content=b.content + " (b)") if i < 3 else b for i, b in enumerate(shared)
    ]
    base_b, ours_b, theirs_b = (
        render_file(x).encode()
        for x in (
            shared,
            [*edited_a, *(_block("a", i) for i in range(230))],
            [*edited_b, *(_block("b", i) for i in range(230))],
        )
    )
    bucket_ms = _best(args.repeat, lambda: merge_bucket(base_b, ours_b, theirs_b, "x"))
    with tempfile.TemporaryDirectory() as tmp:
        repo = pygit2.init_repository(tmp, bare=True)
        base = _tree(repo, _files("c", shared, 0))
        ours = _tree(repo, _files("a", edited_a, args.blocks))
        theirs = _tree(repo, _files("b", edited_b, args.blocks))
        tree_ms = _best(args.repeat, lambda: merge_memory(repo, base, ours, theirs))
        folder = Path(tmp)
        for name, data in (("O", base_b), ("A", ours_b), ("B", theirs_b)):
            (folder / name).write_bytes(data)

        def driver() -> None:
            (folder / "A").write_bytes(ours_b)
            cmd = [sys.executable, "-m", "elfmem.cli", "merge-driver"]
            paths = [str(folder / n) for n in ("O", "A", "B")]
            rel = f"{MEMORY_DIR}/notes/knowledge/2026-01.md"
            subprocess.run([*cmd, *paths, rel], check=True, capture_output=True)

        driver_ms = _best(args.repeat, driver)
    print(f"{'what':<52} {'ms':>8}")
    print(f"{'merge_bucket, 250 + 250 blocks, 3 edited on both':<52} {bucket_ms:>8.1f}")
    label = f"merge_memory, {args.blocks} + {args.blocks} new blocks, reconciled"
    print(f"{label:<52} {tree_ms:>8.1f}")
    print(f"{'one merge-driver process (git runs one per bucket)':<52} {driver_ms:>8.1f}")


if __name__ == "__main__":
    main()
