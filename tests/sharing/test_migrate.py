"""``migrate``: upstream's flat layout to our buckets, planned read-only, applied as one commit and
undone by ``elfmem undo``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from elfmem.api import MemorySystem
from elfmem.errors import ConfigError
from elfmem.sharing.migrate import FORMAT_VERSION, recorded_format
from tests.conftest import arun, git

UPSTREAM_MEMORY = Path(__file__).parent / "fixtures" / "upstream" / "project" / ".elfmem" / "memory"


@pytest.fixture
def memory(repo: Path) -> Path:
    async def go() -> None:
        system, _ = await MemorySystem.init(repo, name="elf")
        try:
            await system.remember("A block of our own, already in a bucket.")
        finally:
            await system.close()

    arun(go())
    return repo


def _with_upstream_files(repo: Path) -> list[str]:
    """Upstream's files (made by the real package) committed into our memory folder by git."""
    added = []
    for rel in ("notes/knowledge.md", "log/observation.md"):
        dest = repo / ".elfmem" / "memory" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(UPSTREAM_MEMORY / rel, dest)
        added.append(f".elfmem/memory/{rel}")
    git(repo, "add", *added)
    git(repo, "commit", "-q", "-m", "bring the upstream memory files")
    return added


async def _call(repo: Path, name: str) -> Any:
    system = await MemorySystem.from_config(repo)
    try:
        return await getattr(system, name)()
    finally:
        await system.close()


def _paths(repo: Path) -> dict[str, str]:
    """Block id → the file it is listed from."""

    async def go() -> dict[str, str]:
        system = await MemorySystem.from_config(repo)
        try:
            return {b.id: b.path for b in (await system.ls(status=None)).blocks}
        finally:
            await system.close()

    return arun(go())


def test_a_current_memory_has_nothing_to_do(memory: Path) -> None:
    result = arun(_call(memory, "migrate_status"))
    assert not result.pending and result.format_version == FORMAT_VERSION
    assert result.index_schema > 0


def test_upstream_layout_is_planned_applied_in_one_commit_and_undone(memory: Path) -> None:
    ours = set(_paths(memory))
    flat = _with_upstream_files(memory)
    before = _paths(memory)
    tip = git(memory, "rev-parse", "HEAD")

    plan = arun(_call(memory, "migrate_plan"))
    assert plan.pending and plan.format_version == 0
    (step,) = plan.steps
    deleted = {c["path"] for c in step.changes if c["action"] == "delete"}
    assert deleted == set(flat)
    assert all(c["sha256_after"] for c in step.changes if c["action"] == "write")
    assert git(memory, "rev-parse", "HEAD") == tip  # plan wrote nothing

    applied = arun(_call(memory, "migrate_apply"))
    assert applied.applied and applied.commit_id
    assert git(memory, "rev-list", "--count", f"{tip.strip()}..HEAD").strip() == "1"
    assert "Elfmem-Op: migrate" in git(memory, "log", "-1", "--format=%B")
    assert git(memory, "status", "--porcelain") == ""
    for path in flat:
        assert not (memory / path).exists()
    after = _paths(memory)
    moved = {block_id: path for block_id, path in after.items() if block_id not in ours}
    assert len(moved) == 21  # 20 active blocks in notes/knowledge.md, 1 in the inbox
    assert sorted(set(moved.values())) == [
        ".elfmem/memory/log/observation/0000-00.md",
        ".elfmem/memory/notes/knowledge/0000-00.md",
    ]
    assert recorded_format((memory / ".elfmem" / "config.yaml").read_text()) == FORMAT_VERSION
    assert not arun(_call(memory, "migrate_status")).pending

    arun(_call(memory, "undo"))
    for path in flat:
        assert (memory / path).exists()
    assert _paths(memory) == before
    assert "format:" not in (memory / ".elfmem" / "config.yaml").read_text()


def test_a_format_newer_than_this_elfmem_is_refused(memory: Path) -> None:
    config = memory / ".elfmem" / "config.yaml"
    config.write_text(config.read_text() + "format: 99\n")
    git(memory, "commit", "-q", "-am", "from the future")
    with pytest.raises(ConfigError, match="format 99"):
        arun(_call(memory, "migrate_status"))
