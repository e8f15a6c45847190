"""Recall latency and index maintenance cost at 1k / 10k / 100k synthetic blocks.

Prints, per size: recall p50/p95 (attention frame, embedded model, warm process, no
reinforcement), the time to bring the index up to date after a 10-block commit (incremental)
versus a full rebuild with a warm embedding cache, their ratio, and the index size on disk.
``--latency-only`` also prints the median CPU time of a recall (both threads), which the other
processes of a shared machine disturb less than the wall time.

    python bench/recall_bench.py [--sizes 1000,10000,100000] [--queries 100] [--keep DIR]
                                 [--latency-only]
                                 [--block-bytes N] [--embedded mpnet] [--plot FILE.svg] [--quick]

Each memory is filled in a child process and measured in this one, which only opens it, as an
agent's process would. ``--keep DIR`` fills each size once into DIR/blocks-N and reuses it on later
runs (filling 100k blocks through ``remember_many`` + ``dream`` takes about twenty minutes here);
each run adds the 10 blocks of its catch-up measurement. ``--block-bytes N`` pads every block with
more sentences of the same words to about N bytes (long documents, indexed as passages).
``--embedded NAME`` writes that embedded model into a new memory's config before filling it (a
kept memory keeps the model it was filled with).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from common import WORDS, parse, pct, sentence, svg_lines

from elfmem import config as config_mod
from elfmem.api import MemorySystem
from elfmem.index import open_memory_index, rebuild

EMBEDDED = [""]
"""The embedded model a new memory is filled with (``--embedded``; empty: the default)."""


async def fill(system: MemorySystem, n: int, rng: random.Random, block_bytes: int = 0) -> None:
    done = 0
    step = 5000 if block_bytes < 2000 else 500
    while done < n:
        k = min(step, n - done)
        await system.remember_many(
            [
                {
                    "content": sentence(rng, done + j, block_bytes),
                    "cue": " ".join(rng.sample(WORDS, 3)),
                }
                for j in range(k)
            ]
        )
        await system.dream(max_blocks=k)
        done += k


async def fill_in_child(root: Path, size: int, block_bytes: int) -> None:
    """Fill in a separate process, so the measuring process is one that only opened the memory
    (as an agent's is), not one whose heap still holds the fill's tens of thousands of objects."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--fill-only",
        str(size),
        str(root),
        "--block-bytes",
        str(block_bytes),
        "--embedded",
        EMBEDDED[0],
    )
    if await child.wait() != 0:
        raise SystemExit(f"filling {root} failed")


async def fill_only(size: int, root: Path, block_bytes: int, embedded: str = "") -> None:
    root.mkdir(parents=True, exist_ok=True)
    system, _ = await MemorySystem.init(root)
    if embedded:  # the memory's config names the model, so measuring it opens the same one
        where = root / ".elfmem" / "config.yaml"
        config = config_mod.load(where)
        model = replace(config.embeddings, provider="embedded", model=embedded)
        where.write_text(config_mod.render(replace(config, embeddings=model)), encoding="utf-8")
        await system.close()
        system = await MemorySystem.from_config(root)
    await fill(system, size, random.Random(size), block_bytes)
    await system.close()


async def measure(
    size: int,
    queries: int,
    keep: Path | None,
    latency_only: bool = False,
    block_bytes: int = 0,
) -> dict[str, float]:
    rng = random.Random(size + 1)
    with tempfile.TemporaryDirectory() as tmp:
        name = f"blocks-{size}" + (f"-{block_bytes}b" if block_bytes else "")
        root = keep / name if keep is not None else Path(tmp) / "memory"
        t0 = time.perf_counter()
        if not (keep is not None and (root / ".elfmem").exists()):
            await fill_in_child(root, size, block_bytes)
        fill_s = time.perf_counter() - t0
        system = await MemorySystem.from_config(root)
        core = system._core
        await system.recall("warm up the model", reinforce=False)
        lat, cpu = [], []
        for _ in range(queries):
            q = " ".join(rng.sample(WORDS, 4))
            t0, c0 = time.perf_counter(), time.process_time()
            await system.recall(q, top_k=5, reinforce=False)
            lat.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        if latency_only:
            await system.close()
            return {
                "size": size,
                "p50": statistics.median(lat),
                "p95": pct(lat, 0.95),
                "cpu": statistics.median(cpu),
            }
        # A 10-block commit the index has not seen (as after a pull): measure the catch-up.
        old_tree = core.store.memory_tree_oid()
        await system.remember_many(
            [{"content": sentence(rng, size + j, block_bytes)} for j in range(10)]
        )
        db = core.db()
        with db.write() as conn:  # key the index to the tree before the commit: sync must diff
            conn.execute("UPDATE meta SET value = ? WHERE key = 'memory_tree_oid'", (old_tree,))
        t0 = time.perf_counter()
        report = core.sync(vectors=True)
        incremental = (time.perf_counter() - t0) * 1000
        fresh = open_memory_index()
        t0 = time.perf_counter()
        rebuild(fresh, core.store.source(), core.embedder)
        full = (time.perf_counter() - t0) * 1000
        fresh.close()
        size_mb = core.db().size_on_disk() / 1e6
        await system.close()
    return {
        "size": size,
        "p50": statistics.median(lat),
        "p95": pct(lat, 0.95),
        "incremental": incremental,
        "mode": report.mode,
        "full": full,
        "ratio": full / max(incremental, 1e-9),
        "mb": size_mb,
        "fill": fill_s,
    }


def plot(rows: list[dict[str, Any]], path: Path | None) -> None:
    """Recall p50 and p95 (and the CPU p50 with ``--latency-only``) against the memory's size, as
    the SVG docs/benchmarks.md links."""
    if path is None:
        return
    path.write_text(
        svg_lines(
            {
                name: [(r["size"], r[key]) for r in rows]
                for key, name in (("p50", "p50"), ("p95", "p95"), ("cpu", "CPU p50"))
                if key in rows[0]
            },
            title="Recall latency against memory size (attention frame, warm process)",
            x_label="blocks in the memory",
            y_label="ms per recall",
            log_x=True,
        )
    )


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--keep", type=Path, default=None)
    ap.add_argument("--latency-only", action="store_true", help="recall p50/p95 alone")
    ap.add_argument("--block-bytes", type=int, default=0, help="Pad each block to about N bytes.")
    ap.add_argument("--embedded", default="", help="fill with this embedded model (mpnet, ...)")
    ap.add_argument("--fill-only", nargs=2, metavar=("SIZE", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--plot", type=Path, default=None, help="write p50/p95 against size as SVG")
    args = parse(ap, {"sizes": "1000", "queries": 50})
    EMBEDDED[0] = args.embedded
    if args.fill_only:
        size, root = int(args.fill_only[0]), Path(args.fill_only[1])
        await fill_only(size, root, args.block_bytes, args.embedded)
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.latency_only:
        rows = []
        for size in sizes:
            r = await measure(
                size, args.queries, args.keep, latency_only=True, block_bytes=args.block_bytes
            )
            rows.append(r)
            print(
                f"{r['size']:>8,} blocks: recall p50 {r['p50']:.1f} ms, p95 {r['p95']:.1f} ms, "
                f"CPU p50 {r['cpu']:.1f} ms"
            )
        plot(rows, args.plot)
        return
    rows = [await measure(s, args.queries, args.keep, block_bytes=args.block_bytes) for s in sizes]
    plot(rows, args.plot)
    print(
        f"{'blocks':>8} {'recall p50':>11} {'p95':>8} "
        f"{'sync after 10-block diff':>25} {'full rebuild':>13} "
        f"{'ratio':>6} {'index MB':>9} {'fill s':>7}"
    )
    for r in rows:
        print(
            f"{r['size']:>8,} {r['p50']:>9.1f}ms {r['p95']:>6.1f}ms "
            f"{r['incremental']:>20.0f}ms ({r['mode'][:4]}) "
            f"{r['full']:>11.0f}ms {r['ratio']:>6.0f} {r['mb']:>9.1f} {r['fill']:>7.0f}"
        )
    print("index MB: the SQLite file, its write-ahead log and the mapped vector file;")
    print("fill s: remember_many + dream to reach the size (0 when --keep reused a memory)")
    if args.block_bytes:
        print(f"blocks of about {args.block_bytes:,} bytes each")


if __name__ == "__main__":
    asyncio.run(main())
