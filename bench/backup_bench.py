"""Backup and restore of a whole memory: how long, how large, and what the first command pays.

A memory of N blocks (remembered in one batch, promoted by a deterministic dream, one outcome per
block so every block has a note) is written to a bundle with ``backup``; the bundle is restored
with ``restore`` and, separately, cloned with plain ``git clone`` and opened (the first command
merges the ledger from the bundle). Printed per N: bundle bytes, backup seconds, restore
seconds, the first ``ls`` after a plain clone (ledger adopted and index built) and a second
``ls`` (nothing left to adopt).

    python bench/backup_bench.py [--sizes 100,1000]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from common import parse

from elfmem.api import MemorySystem


async def _timed(path: Path, action: Callable[[MemorySystem], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    system = await MemorySystem.from_config(path)
    try:
        await action(system)
    finally:
        await system.close()
    return time.perf_counter() - start


async def _make(root: Path, n: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    system, _ = await MemorySystem.init(root, name="elf")
    try:
        records = [
            {"content": f"Fact number {i}: service {i % 37} runs on port {8000 + i}."}
            for i in range(n)
        ]
        batch = await system.remember_many(records)
        await system.dream(no_llm=True, max_blocks=n)
        await system.outcome(batch.created, 0.9, source="bench")
    finally:
        await system.close()


async def run(n: int, work: Path) -> dict[str, float]:
    memory = work / f"m{n}"
    await _make(memory, n)
    bundle = work / f"m{n}.bundle"
    backup_s = await _timed(memory, lambda s: s.backup(bundle))
    start = time.perf_counter()
    await MemorySystem.restore(bundle, work / f"r{n}")
    restore_s = time.perf_counter() - start
    subprocess.run(["git", "clone", "-q", str(bundle), str(work / f"c{n}")], check=True)
    first = await _timed(work / f"c{n}", lambda s: s.ls(status=None))
    second = await _timed(work / f"c{n}", lambda s: s.ls(status=None))
    return {
        "bytes": bundle.stat().st_size,
        "backup": backup_s,
        "restore": restore_s,
        "first": first,
        "second": second,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000")
    args = parse(parser, {"sizes": "100"})
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            rows.append((n, asyncio.run(run(n, Path(tmp)))))
    print(
        "| blocks | bundle bytes | backup s | restore s | first ls after git clone s | next ls s |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for n, r in rows:
        print(
            f"| {n:,} | {int(r['bytes']):,} | {r['backup']:.2f} | {r['restore']:.2f} | "
            f"{r['first']:.2f} | {r['second']:.2f} |"
        )


if __name__ == "__main__":
    main()
