"""A write killed between its two files, then a person's ``git add -A && git commit``.

``dream`` moves inbox blocks from ``log/`` to ``notes/`` and ``forget`` moves a block from
``notes/`` to ``archive/``: two files per write. Killed after the first file (``write.file``),
the person does what git says (delete the stale ``index.lock``) and commits everything. Without
hooks the commit may carry a block twice, never lose one; with elfmem's hooks the commit is
refused, naming the interrupted write, and goes through after the next elfmem command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.care.hooks import HOOK_NAMES, program
from tests.conftest import GIT_ENV, arun
from tests.faults.kill import ROOT, elfmem, killed
from tests.faults.test_fault_matrix import _committed_blocks

FACTS = ["The pager rota changes on Mondays", "Deploys freeze on Fridays", "Standups at ten"]


def _person(root: Path, hooks: Path | None, *steps: list[str]) -> subprocess.CompletedProcess[str]:
    """The person's git commands; a stale lock git names is deleted, as git's message says."""
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    config = ["-c", f"core.hooksPath={hooks}"] if hooks is not None else []
    for _ in range(4):
        for step in steps:
            proc = subprocess.run(
                ["git", *config, *step], cwd=root, capture_output=True, text=True, env=env
            )
            if proc.returncode:
                break
        else:
            return proc
        lock = proc.stderr.partition("Unable to create '")[2].partition("'")[0]
        if not lock.endswith(".lock"):
            return proc
        Path(lock).unlink()
    raise AssertionError(proc.stderr)


def _installed(where: Path) -> Path:
    where.mkdir()
    for name in HOOK_NAMES:
        (where / name).write_bytes(program(name, sys.executable))
        (where / name).chmod(0o755)
    return where


def _memory(repo: Path) -> list[str]:
    async def build() -> list[str]:
        system, _ = await MemorySystem.init(repo)
        try:
            first = (await system.remember("Postgres vacuums nightly")).block_id
            await system.dream(no_llm=True)
            return [first] + [(await system.remember(f)).block_id for f in FACTS]
        finally:
            await system.close()

    return arun(build())


@pytest.mark.parametrize("how", [["add", "-A"], None], ids=["add-all", "commit-a"])
@pytest.mark.parametrize("op", ["dream", "forget"])
def test_without_hooks_a_half_write_committed_by_hand_loses_no_block(
    repo: Path, op: str, how: list[str] | None
) -> None:
    ids = _memory(repo)
    args = ["dream", "--no-llm"] if op == "dream" else ["forget", ids[0]]
    assert killed(elfmem(repo, *args, fault="write.file"))
    (repo / "README.md").write_text("a person's edit\n")
    steps = [how, ["commit", "-q", "-m", "mine"]] if how else [["commit", "-q", "-a", "-m", "m"]]
    assert _person(repo, None, *steps).returncode == 0
    assert elfmem(repo, "status").returncode == 0  # the next elfmem call
    assert set(ids) <= set(_committed_blocks(repo))


@pytest.mark.parametrize("op", ["dream", "forget"])
def test_with_hooks_a_half_write_is_refused_until_elfmem_finishes_it(
    repo: Path, tmp_path: Path, op: str
) -> None:
    ids = _memory(repo)
    hooks = _installed(tmp_path / "hooks")
    args = ["dream", "--no-llm"] if op == "dream" else ["forget", ids[0]]
    assert killed(elfmem(repo, *args, fault="write.file"))
    (repo / "README.md").write_text("a person's edit\n")
    refused = _person(repo, hooks, ["add", "-A"], ["commit", "-q", "-m", "mine"])
    assert refused.returncode != 0
    assert "interrupted" in refused.stderr and "elfmem status" in refused.stderr
    assert elfmem(repo, "status").returncode == 0
    done = _person(repo, hooks, ["add", "-A"], ["commit", "-q", "-m", "mine"])
    assert done.returncode == 0, done.stderr
    assert set(ids) <= set(_committed_blocks(repo))
    log = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True)
    assert log.stdout.splitlines()[0] == "mine"
