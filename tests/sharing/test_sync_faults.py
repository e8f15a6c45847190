"""A ref-mode sync killed at each step of its merge commit (later write paths join the fault
matrix). The matrix in tests/faults reads HEAD; ref mode keeps memory off HEAD, so these
cases kill a real `elfmem sync` process here, at the named points of ``store/faults.py``, and
check that nothing is lost and the next sync finishes the job."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from elfmem.store.faults import POINTS
from tests.conftest import GIT_ENV
from tests.sharing.clones import block_ids, remember, rev
from tests.sharing.test_sync import _ref_pair, _sync

ROOT = Path(__file__).resolve().parents[2]
MERGE_POINTS = [p for p in POINTS if p.startswith("sync.merge")]


def _killed_sync(root: Path, point: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "ELFMEM_FAULT": point, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "elfmem.cli", "-C", str(root), "sync", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("point", MERGE_POINTS)
def test_a_sync_killed_in_its_merge_loses_nothing_and_the_next_one_finishes(
    tmp_path: Path, point: str
) -> None:
    assert MERGE_POINTS == ["sync.merge-planned", "sync.merge-ref"]
    remote, a, b = _ref_pair(tmp_path)
    from_a = remember(a, "Service A listens on port 8080.")
    from_b = remember(b, "Service B listens on port 9090.")
    _sync(a)
    tip_before = rev(b, "refs/heads/elfmem")

    killed = _killed_sync(b, point)
    assert killed.returncode == -9, killed.stderr  # SIGKILL at exactly that point
    moved = rev(b, "refs/heads/elfmem") != tip_before
    assert moved == (point == "sync.merge-ref")  # the ref moves only after the commit exists
    assert set(from_b) <= block_ids(b)  # b's own block survives the kill either way
    git_locks = [p for p in (b / ".git").rglob("*.lock") if "elfmem" not in p.parts]
    assert not git_locks  # no ref or index lock of git's left to block the next write

    _sync(b)
    _sync(a)
    assert block_ids(a) == {*from_a, *from_b} == block_ids(b)
    assert (
        rev(remote, "refs/heads/elfmem")
        == rev(b, "refs/heads/elfmem")
        == rev(a, "refs/heads/elfmem")
    )
    remember(b, "A write after the recovered sync works.")
