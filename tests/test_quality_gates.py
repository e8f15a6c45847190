"""Lint and formatting are gates, not advice: a ruff finding anywhere fails the suite, so CI keeps
the tree clean instead of letting findings pile up for a later sweep."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ["elfmem", "tests", "bench"]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *CHECKED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_check_finds_nothing() -> None:
    run = _ruff("check")
    assert run.returncode == 0, f"ruff check failed:\n{run.stdout}{run.stderr}"


def test_ruff_format_would_change_nothing() -> None:
    run = _ruff("format", "--check")
    assert run.returncode == 0, f"ruff format --check failed:\n{run.stdout}{run.stderr}"
