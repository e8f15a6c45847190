"""Run one ``elfmem`` command in a subprocess that kills itself at a named fault point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def elfmem(repo: Path, *args: str, fault: str = "") -> subprocess.CompletedProcess[str]:
    """The CLI in ``repo``; with ``fault`` set it dies (SIGKILL) at that point."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ELFMEM_FAULT", None)
    if fault:
        env["ELFMEM_FAULT"] = fault
    return subprocess.run(
        [sys.executable, "-m", "elfmem.cli", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def killed(proc: subprocess.CompletedProcess[str]) -> bool:
    return proc.returncode == -9
