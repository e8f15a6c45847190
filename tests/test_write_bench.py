"""bench/write_bench.py runs end to end on a tiny memory and prints every row it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_write_bench_prints_its_rows_and_the_filesystem(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "write_bench.py"),
            "--sizes",
            "30",
            "--samples",
            "5",
            "--big-repo",
            "0",
            "--keep",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    row = next(line for line in lines if line.startswith("remember at 30 blocks"))
    p50, p95, all_in, close = (float(x) for x in row.split()[-4:])
    assert 0 < p50 <= p95 and all_in > 0 and close > 0
    assert any(line.startswith("batch of 1,000") for line in lines)
    assert any(line.startswith("(memories on: ") for line in lines)
    # --keep leaves the filled memory for the next run, which reuses it instead of filling.
    assert (tmp_path / "blocks-30-files-0" / ".elfmem").is_dir()
