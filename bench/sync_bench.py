"""Sync time: two clones each remember N new blocks, then one brings the other's in.

Branch mode (memory on the checked-out branch): the memory files come with a plain ``git pull``
(through elfmem's merge driver, registered by ``init``) and ``elfmem sync`` carries the notes.
Ref mode (memory on refs/heads/elfmem): ``elfmem sync`` fetches, merges and pushes the memory
ref and the notes. Both are set beside the plain git commands that move the same data.

    python bench/sync_bench.py [--blocks 1000] [--batches 10] [--runs 3]

Each clone writes its blocks in ``--batches`` commits (an agent's session writes many). The
elfmem sync is timed in-process on an opened memory (as an agent would call it); git commands
are timed as subprocesses. p50 over ``--runs`` fresh pairs of clones.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import parse

from elfmem.api import MemorySystem

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.com",
    # git runs the merge driver as `git elfmem merge-driver`: this venv's scripts come first.
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
}


def git(cwd: Path, *args: str) -> float:
    """Run git; return its wall time in ms."""
    t0 = time.perf_counter()
    done = subprocess.run(["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {args[0]} failed in {cwd}: {done.stderr}{done.stdout}")
    return (time.perf_counter() - t0) * 1000


async def fill(root: Path, side: str, blocks: int, batches: int) -> None:
    system = await MemorySystem.from_config(root)
    per = max(1, blocks // batches)
    for start in range(0, blocks, per):
        items = [
            {
                "content": f"Side {side} fact {i}: host {side}{i} serves region r{i % 17}",
                "cue": f"where {side}{i} runs",
            }
            for i in range(start, min(blocks, start + per))
        ]
        await system.remember_many(items)
    await system.close()


async def timed_sync(root: Path) -> float:
    system = await MemorySystem.from_config(root)
    t0 = time.perf_counter()
    await system.sync("origin")
    ms = (time.perf_counter() - t0) * 1000
    await system.close()
    return ms


async def pair(tmp: Path, ref: bool, blocks: int, batches: int) -> tuple[Path, Path]:
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a = tmp / "a"
    a.mkdir()
    git(a, "init", "-q", "-b", "main")
    (a / "app.py").write_text("print('hi')\n")
    git(a, "add", "app.py")
    git(a, "commit", "-qm", "code")
    git(a, "remote", "add", "origin", str(remote))
    system, _ = await MemorySystem.init(a, ref="elfmem" if ref else None)
    await system.close()
    git(a, "push", "-q", "-u", "origin", "main")
    await timed_sync(a)  # the memory ref (ref mode) and the notes reach the remote
    b = tmp / "b"
    git(tmp, "clone", "-q", str(remote), str(b))
    await MemorySystem.from_config(b)  # the first command: refspecs, the ledger
    await fill(a, "a", blocks, batches)
    await fill(b, "b", blocks, batches)
    if not ref:
        git(a, "push", "-q", "origin", "main")
    await timed_sync(a)
    return a, b


async def run_branch(blocks: int, batches: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="elfmem-sync-bench-") as tmp:
        _, b = await pair(Path(tmp), False, blocks, batches)
        pull = git(b, "pull", "-q", "--no-rebase", "--no-edit")
        notes = await timed_sync(b)
        return {"git pull (memory files)": pull, "elfmem sync (notes)": notes}


async def run_ref(blocks: int, batches: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="elfmem-sync-bench-") as tmp:
        _, b = await pair(Path(tmp), True, blocks, batches)
        fetch = git(b, "fetch", "-q", "origin")  # plain git moves the same objects
        return {"git fetch (same data)": fetch, "elfmem sync (ref + notes)": await timed_sync(b)}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=1000)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    args = parse(ap, {"blocks": 100, "batches": 2, "runs": 1})
    rows: dict[str, list[float]] = {}
    for _ in range(args.runs):
        for mode, runner in (("branch", run_branch), ("ref", run_ref)):
            for what, ms in (await runner(args.blocks, args.batches)).items():
                rows.setdefault(f"{mode} mode: {what}", []).append(ms)
    print(f"{'step (other clone wrote ' + format(args.blocks, ',') + ' blocks)':<52} {'p50 ms':>9}")
    for what, values in rows.items():
        print(f"{what:<52} {statistics.median(values):>9.0f}")
    print(
        f"(both clones wrote {args.blocks:,} new blocks in {args.batches} commits each; "
        f"p50 of {args.runs} runs; {os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    asyncio.run(main())
