"""Consolidation cost against the size of the memory: a bulk import dreamed in one run, then a
small dream into the big memory.

Prints, per size: the import (``remember_many`` in chunks of 5,000, not dreamed), the one dream
that drains it (seconds, blocks/s, what it decided), a dream of 100 new blocks into the result,
and how many of the exact top-k neighbours the neighbour search dream used found (1.000 when the
search was exact).

    python bench/dream_scale.py [--sizes 10000,100000] [--profile FILE] [--keep DIR]
                                [--embedded mpnet]

``--keep DIR`` leaves each memory in DIR/dream-N; ``--search-only DIR/dream-N`` measures the
search columns alone on such a memory, and ``--small-only DIR/dream-N`` only the dream of 100 new
blocks into it (in a process that just opened it and read it once, as an agent's would; with
``--profile FILE`` it writes FILE.small). ``--profile FILE`` writes a cProfile of the big
dream of the last size (and FILE.small of the dream of 100). The blocks are
the synthetic notes of ``bench/common.py`` (as ``bench/recall_bench.py``). ``--embedded NAME``
writes that embedded model into each new memory's config before the import (the quality model,
say); the embedding cache is shared, so give it a cold one to time a first import.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import random
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import WORDS, parse, sentence  # noqa: E402

from elfmem import config as config_mod  # noqa: E402
from elfmem.api import MemorySystem  # noqa: E402
from elfmem.index import vector_store  # noqa: E402
from elfmem.index.vectorfile import FREE  # noqa: E402
from elfmem.rhythms.results import DreamResult  # noqa: E402

K = 11  # what dream asks for: 2 × edge_degree_cap + 1


async def new_memory(root: Path, embedded: str) -> MemorySystem:
    """A new memory at ``root``, configured for the embedded model ``embedded`` ('' the default)."""
    system, _ = await MemorySystem.init(root)
    if not embedded:
        return system
    where = root / ".elfmem" / "config.yaml"
    config = config_mod.load(where)
    model = replace(config.embeddings, provider="embedded", model=embedded)
    where.write_text(config_mod.render(replace(config, embeddings=model)), encoding="utf-8")
    await system.close()
    return await MemorySystem.from_config(root)


async def import_blocks(system: MemorySystem, start: int, n: int, rng: random.Random) -> None:
    done = 0
    while done < n:
        k = min(5000, n - done)
        await system.remember_many(
            [
                {"content": sentence(rng, start + done + j), "cue": " ".join(rng.sample(WORDS, 3))}
                for j in range(k)
            ]
        )
        done += k


def neighbour_recall(system: MemorySystem, samples: int = 1000) -> dict[str, object]:
    """What the search dream uses at this size finds of the exact top-K neighbours and of the
    exact pairs at cosine ≥ 0.80 among them (the look-alike band), over sampled blocks; and the
    same for the inverted file forced on (what it would miss at this size)."""
    from elfmem.index.nearest import NeighbourIndex, exact_top_k

    table = vector_store(system._core.db())
    live = np.asarray(table.statuses) != FREE  # a patched snapshot keeps free slots
    matrix = np.asarray(table.matrix, dtype=np.float32)[live]
    rng = np.random.default_rng(7)
    rows = rng.choice(len(matrix), size=min(samples, len(matrix)), replace=False)
    queries = matrix[rows]
    exact = exact_top_k(queries, matrix, K)

    def found(index: NeighbourIndex) -> tuple[float, float]:
        got = index.top_k(queries, K)
        hits = sum(len(set(a) & set(b)) for a, b in zip(exact.rows, got.rows, strict=True))
        band = [
            (set(a[s >= 0.80]), set(b))
            for a, s, b in zip(exact.rows, exact.scores, got.rows, strict=True)
        ]
        wanted = sum(len(a) for a, _ in band)
        return hits / (len(rows) * K), sum(len(a & b) for a, b in band) / max(1, wanted)

    used = NeighbourIndex.build(matrix)
    recall, pairs = found(used)
    ivf, _ = found(NeighbourIndex.build(matrix, lists=int(round(np.sqrt(len(matrix))))))
    return {"kind": used.kind, "recall": recall, "pairs": pairs, "ivf": ivf}


async def timed_dream(
    system: MemorySystem, profile: Path | None, suffix: str = ""
) -> tuple[DreamResult, float, float]:
    """One dream: its result, wall seconds and CPU seconds; profiled into ``profile`` + ``suffix``
    when a profile path is given."""
    prof = cProfile.Profile() if profile is not None else None
    t0, c0 = time.perf_counter(), time.process_time()
    if prof is not None:
        prof.enable()
    result = await system.dream()
    if prof is not None:
        prof.disable()
        prof.dump_stats(f"{profile}{suffix}")
    return result, time.perf_counter() - t0, time.process_time() - c0


async def measure(
    size: int, keep: Path | None, profile: Path | None, embedded: str = ""
) -> dict[str, object]:
    rng = random.Random(size)
    tmp = tempfile.mkdtemp()
    root = keep / f"dream-{size}" if keep is not None else Path(tmp) / "memory"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    try:
        system = await new_memory(root, embedded)
        t0 = time.perf_counter()
        await import_blocks(system, 0, size, rng)
        import_s = time.perf_counter() - t0
        big, dream_s, dream_cpu = await timed_dream(system, profile)
        await import_blocks(system, size, 100, rng)
        small, small_s, small_cpu = await timed_dream(system, profile, ".small")
        search = neighbour_recall(system)
        await system.close()
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return {
        "size": size,
        "import": import_s,
        "dream": dream_s,
        "rate": size / dream_s,
        "cpu": dream_cpu,
        "cpu_rate": size / dream_cpu,
        "small_cpu": small_cpu,
        "promoted": len(big.promoted),
        "dups": len(big.duplicates),
        "alike": len(big.lookalikes),
        "edges": big.edges_added,
        "small": small_s,
        "small_promoted": len(small.promoted),
        **search,
    }


async def small_only(memory: Path, profile: Path | None) -> None:
    """A dream of 100 new blocks into a kept memory, after one recall warmed the process."""
    system = await MemorySystem.from_config(memory)
    await system.recall("postgres redis cache")
    size = (await system.status()).active
    await import_blocks(system, size + 10_000_000, 100, random.Random(size))
    small, wall, cpu = await timed_dream(system, profile, ".small")
    await system.close()
    print(
        f"+100 into {size:,} active: {wall:.2f} s wall, {cpu:.2f} s CPU; promoted "
        f"{len(small.promoted)}, look-alikes {len(small.lookalikes)}, edges {small.edges_added}"
    )


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--keep", type=Path, default=None)
    ap.add_argument("--profile", type=Path, default=None)
    ap.add_argument("--search-only", type=Path, default=None, metavar="MEMORY")
    ap.add_argument("--small-only", type=Path, default=None, metavar="MEMORY")
    ap.add_argument("--embedded", default="", help="the embedded model (mpnet, ...); '' default")
    args = parse(ap, {"sizes": "2000"})
    if args.small_only is not None:
        await small_only(args.small_only, args.profile)
        return
    if args.search_only is not None:  # the search columns alone, on a memory kept earlier
        system = await MemorySystem.from_config(args.search_only)
        print(neighbour_recall(system))
        await system.close()
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    rows = []
    for s in sizes:
        profile = args.profile if s == sizes[-1] else None
        rows.append(await measure(s, args.keep, profile, args.embedded))
        r = rows[-1]
        print(f"# {s}: {r}", flush=True)
    print(
        f"{'blocks':>8} {'import s':>9} {'dream s':>8} {'blocks/s':>9} {'CPU s':>7} "
        f"{'blocks/CPU s':>12} {'promoted':>9} "
        f"{'dups':>5} {'look-alikes':>11} {'edges':>7} {'+100 dream s':>13} {'(CPU s)':>8} "
        f"{'search':>7} {'top-11 found':>13} {'pairs≥.80 found':>16} {'ivf top-11':>11}"
    )
    for r in rows:
        print(
            f"{r['size']:>8,} {r['import']:>9.1f} {r['dream']:>8.1f} {r['rate']:>9.0f} "
            f"{r['cpu']:>7.1f} {r['cpu_rate']:>12.0f} "
            f"{r['promoted']:>9,} {r['dups']:>5} {r['alike']:>11} {r['edges']:>7,} "
            f"{r['small']:>13.2f} {r['small_cpu']:>8.2f} {r['kind']:>7} {r['recall']:>13.3f} "
            f"{r['pairs']:>16.3f} {r['ivf']:>11.3f}"
        )
    print("CPU s: this process's CPU time (user + system) for the same dream: on a shared")
    print("machine the wall-clock columns include waiting for a core;")
    print("search: what dream uses at this size (exact products, or the inverted file);")
    print("top-11 found: share of a block's exact 11 nearest that search returns (1,000 sampled")
    print("blocks of the final memory); pairs≥.80 found: the same for those at cosine ≥ 0.80;")
    print("ivf top-11: the inverted file's share when forced on at this size")


if __name__ == "__main__":
    asyncio.run(main())
