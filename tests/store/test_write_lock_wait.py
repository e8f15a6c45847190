"""A writer waits for elfmem's write lock only so long, says so, and names who holds it.

The holder is a real process holding the lock through the store's own ``write_lock`` (what a
paused dream holds); the writer is the ``elfmem`` program. ``--wait 0`` fails at once, a short
``--wait`` says on stderr that it waits, and both exit 5 naming the holder's pid and command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from tests.conftest import arun, git

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import sys, time, pygit2
from elfmem.store import repo as repo_mod
repo = pygit2.Repository(sys.argv[1])
with repo_mod.write_lock(repo):
    print("held", flush=True)
    time.sleep(120)
"""


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env.pop("ELFMEM_WAIT", None)
    return env


@pytest.fixture
def held(repo: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    script = repo.parent / "paused_dream.py"
    script.write_text(HOLDER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(repo)],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield repo, proc
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _elfmem(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elfmem.cli", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )


def test_wait_zero_fails_at_once_naming_the_holder(
    held: tuple[Path, subprocess.Popen[str]],
) -> None:
    repo, holder = held
    pid = holder.pid
    before = git(repo, "rev-parse", "HEAD")
    proc = _elfmem(repo, "remember", "The pager rota changes on Mondays", "--wait", "0")
    assert proc.returncode == 5, proc.stderr
    assert f"pid {pid}" in proc.stderr and "paused_dream.py" in proc.stderr
    assert "Recovery:" in proc.stderr and "--wait" in proc.stderr
    assert git(repo, "rev-parse", "HEAD") == before


def test_a_short_wait_says_it_waits_then_fails_with_the_holder(
    held: tuple[Path, subprocess.Popen[str]],
) -> None:
    repo, holder = held
    pid = holder.pid
    proc = _elfmem(repo, "forget", "0123456789abcdef", "--wait", "0.3", "--json")
    assert proc.returncode == 5, proc.stderr
    assert "waiting" in proc.stderr.lower() and f"pid {pid}" in proc.stderr
    assert json.loads(proc.stdout)["type"] == "LockedError"


def test_doctor_reports_the_held_write_lock(held: tuple[Path, subprocess.Popen[str]]) -> None:
    repo, holder = held
    pid = holder.pid
    proc = _elfmem(repo, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    lock = checks["write lock"]
    assert not lock["ok"] and f"pid {pid}" in lock["detail"]
    assert "paused_dream.py" in lock["detail"]


def test_the_write_goes_through_once_the_holder_is_gone(
    held: tuple[Path, subprocess.Popen[str]],
) -> None:
    repo, holder = held
    holder.kill()
    holder.wait()
    proc = _elfmem(repo, "remember", "Deploys freeze on Fridays", "--wait", "0")
    assert proc.returncode == 0, proc.stderr
