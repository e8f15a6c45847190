"""Write latency: ``remember`` (commit + ledger event + working tree) at 1k/10k/100k blocks.

Prints a table of p50/p95 per size, a batch of 1,000 in one commit, and the same single write in a
repository that also holds 50k ordinary files (where rewriting git's own index dominates), on the
checked-out branch and in ref mode (memory on refs/heads/elfmem: no working tree, no git index).

A remember's index update waits for the next read or for the 32nd remember, which then pays for
the gathered ones (docs/benchmarks.md, "Write latency"). So p50 does not show it; the last column
does: the whole run, including ``close`` (which indexes what still waits and flushes the ledger
spool), divided by the number of writes; ``close`` alone is shown too.

    python bench/write_bench.py [--sizes 1000,10000,100000] [--samples 200] [--big-repo 50000]
                                [--keep DIR] [--block-bytes N] [--quick]

Each repository is filled in a child process and measured in this one, which only opens it, as
an agent's process would. ``--keep DIR`` fills each repository once into DIR and reuses it on
later runs (each run adds its 205 measured blocks to the kept memory). ``--block-bytes N`` makes
every filled and measured block about N bytes long (long documents; buckets then fill by bytes).
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

from common import parse, pct

from elfmem.api import MemorySystem

BLOCK_BYTES = 0
"""Pad every block to about this many bytes (``--block-bytes``); 0 leaves them one line."""
_PAD = (
    "The runbook says to drain the queue first, then rotate the keys, then restart the workers "
    "one zone at a time while watching the error budget and the replica lag."
)


def padded(text: str) -> str:
    """``text`` followed by numbered runbook sentences up to ``BLOCK_BYTES``, in paragraphs."""
    parts, size, k = [text], len(text), 0
    while size < BLOCK_BYTES:
        k += 1
        more = ("\n\n" if k % 6 == 0 else " ") + f"Step {k}: {_PAD}"
        parts.append(more)
        size += len(more)
    return "".join(parts)


async def fill(system: MemorySystem, n: int, start: int = 0, batch: int = 5000) -> None:
    done = start
    while done < n:
        k = min(batch, n - done)
        items = [
            {
                "content": padded(
                    f"Filler fact {i}: service s{i % 997} uses port {8000 + i % 1000}"
                ),
                "cue": f"filler {i % 50}",
                "tags": [f"t/{i % 20}"],
            }
            for i in range(done, done + k)
        ]
        await system.remember_many(items)
        done += k


async def time_remembers(system: MemorySystem, samples: int, tag: str) -> list[float]:
    out = []
    run = time.time_ns()  # a kept memory already holds earlier runs' facts: no duplicates
    for i in range(samples):
        t0 = time.perf_counter()
        result = await system.remember(
            padded(
                f"Measured fact {tag}-{run}-{i}: the cache TTL for tenant {i} is {i % 60} minutes"
            ),
            cue="choosing a cache TTL",
        )
        out.append((time.perf_counter() - t0) * 1000)
        if result.status != "created":  # a duplicate writes nothing: it must not be timed
            raise SystemExit(f"write {i} was not created ({result.status})")
    return out


def make_repo(root: Path, ordinary_files: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for i in range(ordinary_files):
        d = root / "src" / f"d{i // 500}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(f"file {i}\n")
    if ordinary_files:
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", "commit", "-qm", "ordinary files"], cwd=root, check=True)


async def fill_in_child(root: Path, blocks: int, ordinary_files: int, ref: bool = False) -> None:
    """Fill in a separate process, so the measuring process is one that only opened the memory
    (as an agent's is), not one whose heap still holds the fill's objects."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--fill-only",
        str(blocks),
        str(ordinary_files),
        str(root),
        "ref" if ref else "branch",
        "--block-bytes",
        str(BLOCK_BYTES),
    )
    if await child.wait() != 0:
        raise SystemExit(f"filling {root} failed")
    # The fill leaves up to a gigabyte of dirty pages; timing writes while the kernel writes
    # those back measures the writeback, not remember.
    os.sync()


async def fill_only(blocks: int, ordinary_files: int, root: Path, ref: bool = False) -> None:
    make_repo(root, ordinary_files)
    system, _ = await MemorySystem.init(root, ref="elfmem" if ref else None)
    await fill(system, blocks)
    await system.close()


async def scenario(
    label: str,
    blocks: int,
    samples: int,
    scratch: Path,
    ordinary_files: int = 0,
    keep: Path | None = None,
    ref: bool = False,
) -> dict[str, object]:
    base = keep if keep is not None else Path(tempfile.mkdtemp(dir=scratch))
    root = base / f"blocks-{blocks}-files-{ordinary_files}{'-ref' if ref else ''}"
    if BLOCK_BYTES:
        root = root.with_name(root.name + f"-{BLOCK_BYTES}b")
    if not (keep is not None and _filled(root, ref)):
        await fill_in_child(root, blocks, ordinary_files, ref)
    system = await MemorySystem.from_config(root)
    await time_remembers(system, 5, "warm")
    await system.ls(limit=1)  # the warm-up's writes are indexed before the clock starts
    t0 = time.perf_counter()
    lat = await time_remembers(system, samples, label)
    t1 = time.perf_counter()
    await system.close()
    t2 = time.perf_counter()
    return {
        "scenario": label,
        "blocks": blocks,
        "p50": statistics.median(lat),
        "p95": pct(lat, 0.95),
        "all_in": (t2 - t0) * 1000 / samples,
        "close": (t2 - t1) * 1000,
    }


def _filled(root: Path, ref: bool) -> bool:
    if not ref:
        return (root / ".elfmem").exists()
    found = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "-q", "--verify", "refs/heads/elfmem"],
        capture_output=True,
    )
    return found.returncode == 0


async def batch_scenario(n: int, scratch: Path, runs: int = 5) -> dict[str, object]:
    """``runs`` fresh repositories, one batch each; p50 is the median run, p95 the slowest."""
    times = []
    for run in range(runs):
        root = Path(tempfile.mkdtemp(dir=scratch)) / "repo"
        make_repo(root, 0)
        system, _ = await MemorySystem.init(root)
        items = [
            {
                "content": padded(f"Batch fact {run}-{i}: queue q{i} drains in {i % 90} seconds"),
                "cue": "sizing queues",
            }
            for i in range(n)
        ]
        t0 = time.perf_counter()
        await system.remember_many(items)
        times.append((time.perf_counter() - t0) * 1000)
        await system.close()
    label = f"batch of {n:,} (one commit; {runs} runs)"
    return {"scenario": label, "blocks": n, "p50": statistics.median(times), "p95": max(times)}


def git_reference(ordinary_files: int, samples: int = 20) -> dict[str, object]:
    """What plain git pays for `git add` + `git commit` of one file in the same kind of repo."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        make_repo(root, ordinary_files)
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
        env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
        lat = []
        for i in range(samples):
            (root / "note.txt").write_text(f"edit {i}\n")
            t0 = time.perf_counter()
            subprocess.run(["git", "add", "note.txt"], cwd=root, check=True, env=env)
            subprocess.run(["git", "commit", "-qm", f"edit {i}"], cwd=root, check=True, env=env)
            lat.append((time.perf_counter() - t0) * 1000)
    label = f"plain git add + commit, repo with {ordinary_files:,} files"
    return {"scenario": label, "blocks": 0, "p50": statistics.median(lat), "p95": pct(lat, 0.95)}


def filesystem_of(path: Path) -> str:
    """The filesystem ``path`` is on, and for ext4 whether it keeps a journal (Linux only)."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return "unknown"
    best, fstype, device = "", "unknown", ""
    target = str(path.resolve())
    for line in mounts:
        fields = line.split()
        point, rest = fields[4], fields[fields.index("-") + 1 :]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, fstype, device = point, rest[0], rest[1]
    if fstype != "ext4":
        return fstype
    task = Path("/sys/fs/ext4") / Path(device).name / "journal_task"
    try:
        journal = task.read_text().strip() != "<none>"
    except OSError:
        return "ext4"
    return "ext4 with a journal" if journal else "ext4 without a journal"


def machine_noise(samples: int = 500) -> tuple[float, float, float]:
    """p50/p99/max of creating and renaming one small file: the floor under every write here."""
    lat = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(samples):
            path = Path(tmp) / f"f{i}"
            t0 = time.perf_counter()
            path.with_suffix(".tmp").write_bytes(b"x" * 300)
            os.replace(path.with_suffix(".tmp"), path)
            lat.append((time.perf_counter() - t0) * 1000)
    return statistics.median(lat), pct(lat, 0.99), max(lat)


async def timed_runs(args: argparse.Namespace, scratch: Path) -> list[dict[str, object]]:
    """Each row's memory is deleted only after the last row, never between rows.

    On a filesystem like the development VM's (ext4 without a journal), creating a file skips,
    one by one, every inode freed in the last 60 seconds, or 300 while their inode-table block
    is dirty. Deleting one row's memory just before filling the next made the new memory's
    writes pay for the old one's inodes (docs/benchmarks.md, "Fresh and kept memories").
    """
    rows = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        label = f"remember at {size:,} blocks"
        rows.append(await scenario(label, size, args.samples, scratch, keep=args.keep))
    rows.append(await batch_scenario(1000, scratch))
    if args.big_repo:
        label = f"remember at 1,000 blocks, repo with {args.big_repo:,} files"
        rows.append(await scenario(label, 1000, args.samples, scratch, args.big_repo, args.keep))
        label = "  the same in ref mode (memory on refs/heads/elfmem)"
        rows.append(
            await scenario(label, 1000, args.samples, scratch, args.big_repo, args.keep, ref=True)
        )
        rows.append(git_reference(args.big_repo))
    return rows


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--big-repo", type=int, default=50_000)
    ap.add_argument("--keep", type=Path, default=None)
    ap.add_argument("--block-bytes", type=int, default=0, help="Pad each block to about N bytes.")
    hidden = argparse.SUPPRESS
    ap.add_argument("--fill-only", nargs=4, metavar=("BLOCKS", "FILES", "DIR", "MODE"), help=hidden)
    args = parse(ap, {"sizes": "1000", "samples": 50, "big_repo": 0})
    global BLOCK_BYTES
    BLOCK_BYTES = args.block_bytes
    if args.fill_only:
        blocks, files, where, mode = args.fill_only
        await fill_only(int(blocks), int(files), Path(where), mode == "ref")
        return
    # Every fresh memory stays on disk until the last row is timed: see ``timed_runs``.
    with tempfile.TemporaryDirectory(prefix="elfmem-write-bench-") as tmp:
        rows = await timed_runs(args, Path(tmp))
    print(f"{'scenario':<52} {'p50 ms':>9} {'p95 ms':>9} {'all-in ms':>10} {'close ms':>9}")
    for r in rows:
        more = f"{r['all_in']:>10.2f} {r['close']:>9.1f}" if "all_in" in r else ""
        print(f"{r['scenario']:<52} {r['p50']:>9.2f} {r['p95']:>9.2f} {more}")
    print(
        f"(cpu: {os.cpu_count()} cores; p50/p95 over {args.samples} writes each, "
        "after 5 warm-up writes; all-in: the run plus close, per write)"
    )
    where = args.keep if args.keep is not None else Path(tempfile.gettempdir())
    print(f"(memories on: {filesystem_of(where)})")
    p50, p99, worst = machine_noise()
    print(
        f"(this machine: creating + renaming one small file takes p50 {p50:.2f} ms, "
        f"p99 {p99:.2f} ms, max {worst:.1f} ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
