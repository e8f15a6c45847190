"""Concurrent writers and killed processes: nothing acknowledged is lost, git stays consistent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.store.journal import Journal, PathState
from tests.conftest import arun, git

WORKER = """
import asyncio, sys
from elfmem.api import MemorySystem
from elfmem.store.journal import Journal, PathState

async def main(root, tag, n):
    system = await MemorySystem.from_config(root)
    for i in range(n):
        r = await system.remember(f"worker {tag} fact {i}", cue=f"worker {tag}")
        print(r.block_id, flush=True)
    await system.close()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def _spawn(root: Path, tag: str, n: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(root), tag, str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )


@pytest.mark.slow
def test_four_processes_times_one_hundred_remembers_lose_nothing(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    before = int(git(repo, "rev-list", "--count", "HEAD"))
    workers = [_spawn(repo, str(w), 100) for w in range(4)]
    ids = []
    for w in workers:
        out, err = w.communicate(timeout=600)
        assert w.returncode == 0, err
        ids += out.split()
    assert len(set(ids)) == 400
    assert int(git(repo, "rev-list", "--count", "HEAD")) - before == 400
    system = arun(MemorySystem.from_config(repo))
    listed = arun(system.ls(tag=None, status="inbox"))
    assert {b.id for b in listed.blocks} >= set(ids)
    assert len(listed.blocks) == 400
    arun(system.close())
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.slow
def test_sigkill_mid_batch_keeps_every_acknowledged_write(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    worker = _spawn(repo, "k", 10_000)
    acked: list[str] = []
    assert worker.stdout is not None
    deadline = time.monotonic() + 120
    while len(acked) < 25 and time.monotonic() < deadline:
        line = worker.stdout.readline()
        if line:
            acked.append(line.strip())
    os.kill(worker.pid, signal.SIGKILL)
    worker.communicate()
    assert len(acked) >= 25
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    # The next call repairs whatever the kill interrupted, and every acknowledged block is there.
    system = arun(MemorySystem.from_config(repo))
    arun(system.remember("after the crash"))
    present = {b.id for b in arun(system.ls(status="all")).blocks}
    arun(system.close())
    assert set(acked) <= present
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    first = arun(system.remember("The pager rota changes on Mondays"))
    bucket = repo / ".elfmem" / "memory" / str(first.path)
    rel = bucket.relative_to(repo).as_posix()
    # What SIGKILL between writing the temporary file and renaming it leaves behind.
    (bucket.parent / f".{bucket.name}.424242.tmp").write_text("half a file")
    head = git(repo, "rev-parse", "HEAD").strip()
    oid = git(repo, "rev-parse", f"HEAD:{rel}").strip()
    state = PathState(oid, oid, oid)
    Journal("refs/heads/main", head, head, {rel: state}, pid=_dead_pid()).write(
        repo / ".git" / "elfmem" / "journal.json"
    )
    arun(system.remember("The pager rota is kept in the ops wiki"))
    arun(system.close())
    assert git(repo, "status", "--porcelain") == ""
    assert not list(bucket.parent.glob("*.tmp"))
