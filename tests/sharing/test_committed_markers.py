"""Conflict markers a person committed: elfmem writes nothing on top, and the documented repair
(docs/merging.md, run verbatim) merges the file by block id without dropping any later commit.

Before, a write went on into a fresh bucket, and the repair the docs gave (`git reset --keep
HEAD^`) then dropped that write's commit, not the merge: the block was gone from memory.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import GIT_ENV, arun, git

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "merging.md"


def _remember(repo: Path, content: str) -> str:
    async def go() -> str:
        system = await MemorySystem.from_config(repo)
        try:
            block_id = (await system.remember(content)).block_id
            await system.dream(no_llm=True)
            return block_id
        finally:
            await system.close()

    return arun(go())


def _conflicted(repo: Path) -> tuple[Path, list[str]]:
    """Two branches append to one active bucket; plain git merges them without elfmem's driver
    and ``git commit -a`` commits the markers; then the person commits something else."""
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    ids = [_remember(repo, "Postgres pooling needs pgbouncer above 100 clients")]
    git(repo, "checkout", "-q", "-b", "other")
    ids.append(_remember(repo, "Redis eviction policy is allkeys-lru in production"))
    git(repo, "checkout", "-q", "main")
    ids.append(_remember(repo, "Kafka retention is seven days on the main cluster"))
    git(repo, "config", "--remove-section", "merge.elfmem")
    git(repo, "merge", "-q", "other", check=False)
    git(repo, "commit", "-q", "-a", "-m", "merge, markers and all")
    (repo / "README.md").write_text("# project\n\nA person's commit after the merge.\n")
    git(repo, "commit", "-q", "-a", "-m", "a later commit of the person's")
    [bucket] = (repo / ".elfmem" / "memory" / "notes" / "knowledge").glob("*.md")
    assert "<<<<<<< HEAD" in bucket.read_text()
    return bucket, ids


def _elfmem(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "elfmem.cli", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_no_write_lands_on_top_of_committed_markers(repo: Path) -> None:
    bucket, _ = _conflicted(repo)
    rel = bucket.relative_to(repo).as_posix()
    before = git(repo, "rev-parse", "HEAD")
    for args in (["remember", "Grafana dashboards live in the ops folder"], ["undo"]):
        proc = _elfmem(repo, *args)
        assert proc.returncode == 4, (args, proc.stderr)
        assert f"Error: {rel}:" in proc.stderr and "conflict" in proc.stderr
        assert "git merge-tree" in proc.stderr and "reset" not in proc.stderr
    assert git(repo, "rev-parse", "HEAD") == before
    assert _elfmem(repo, "ls").returncode == 0  # reads go on


def _documented_repair() -> str:
    """The shell block under "A merge made without the driver" in docs/merging.md."""
    text = DOCS.read_text()
    section = text.split("## A merge made without the driver", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "one shell block holds the repair"
    return blocks[0]


def test_the_documented_repair_run_verbatim_keeps_every_commit_and_block(repo: Path) -> None:
    bucket, ids = _conflicted(repo)
    rel = bucket.relative_to(repo).as_posix()
    history = git(repo, "rev-list", "HEAD").split()
    script = _documented_repair()
    assert re.search(r"^file=\S+", script, re.M), "the block names the file in one variable"
    script = re.sub(r"^file=\S+", f"file={rel}", script, count=1, flags=re.M)
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # `elfmem` itself
    done = subprocess.run(["sh", "-ec", script], cwd=repo, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "<<<<<<<" not in bucket.read_text()
    assert set(history) <= set(git(repo, "rev-list", "HEAD").split()), "a commit was dropped"
    assert git(repo, "status", "--porcelain") == ""
    listed = _elfmem(repo, "ls", "--json")
    assert listed.returncode == 0 and set(ids) <= set(re.findall(r'"id": "(\w+)"', listed.stdout))
    assert _elfmem(repo, "remember", "Grafana dashboards live in the ops folder").returncode == 0
