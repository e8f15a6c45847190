"""How much this machine stalls on its own: the floor under every latency tail here.

Times a fixed piece of pure-Python work (no I/O) and the creation + rename of a small file, many
times each, and prints p50/p95/p99/max. On a quiet dedicated machine the tails sit close to the
p50; on a shared VM they show stalls that no code under test can remove.

    python bench/machine_noise.py [--samples 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def spin() -> int:
    total = 0
    for i in range(20_000):
        total += i * i
    return total


def timings(work: Callable[[int], object], samples: int) -> list[float]:
    out = []
    for i in range(samples):
        t0 = time.perf_counter()
        work(i)
        out.append((time.perf_counter() - t0) * 1000)
    return sorted(out)


def row(label: str, ms: list[float]) -> str:
    def q(p: float) -> float:
        return ms[min(len(ms) - 1, int(p * len(ms)))]

    return (
        f"{label:<34} {statistics.median(ms):>8.3f} {q(0.95):>8.3f} {q(0.99):>8.3f} {ms[-1]:>8.1f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:

        def create(i: int) -> None:
            path = Path(tmp) / f"f{i}"
            path.with_suffix(".tmp").write_bytes(b"x" * 300)
            os.replace(path.with_suffix(".tmp"), path)

        cpu = timings(lambda _: spin(), args.samples)
        files = timings(create, args.samples)
    print(f"{'work (ms)':<34} {'p50':>8} {'p95':>8} {'p99':>8} {'max':>8}")
    print(row("pure Python, no I/O", cpu))
    print(row("create + rename a 300-byte file", files))
    print(f"({args.samples} samples each, cpu: {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
