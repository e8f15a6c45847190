"""Driving a memory the way a user does: elfmem through the API, git through the git binary."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from elfmem.api import MemorySystem
from elfmem.block.layout import BUCKET_LIMIT, MEMORY_DIR
from elfmem.block.parse import parse_partial
from tests.conftest import arun

T = TypeVar("T")


def with_memory(repo: Path, action: Callable[[MemorySystem], Awaitable[T]]) -> T:
    async def go() -> T:
        system = await MemorySystem.from_config(repo)
        try:
            return await action(system)
        finally:
            await system.close()

    return arun(go())


def init(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())


def remember(repo: Path, *texts: str) -> list[str]:
    async def go(system: MemorySystem) -> list[str]:
        return [(await system.remember(t)).block_id for t in texts]

    return with_memory(repo, go)


def edit(repo: Path, block_id: str, text: str) -> None:
    async def go(system: MemorySystem) -> None:
        await system.edit(block_id, content=text)

    with_memory(repo, go)


def forget(repo: Path, block_id: str) -> None:
    async def go(system: MemorySystem) -> None:
        await system.forget(block_id)

    with_memory(repo, go)


def dream(repo: Path) -> None:
    async def go(system: MemorySystem) -> None:
        await system.dream(no_llm=True)

    with_memory(repo, go)


def listed(repo: Path) -> dict[str, str]:
    """Block id → content of every block ``ls`` serves (any status)."""

    async def go(system: MemorySystem) -> dict[str, str]:
        out = {}
        for status in ("inbox", "active", "archived"):
            for block in (await system.ls(status=status)).blocks:
                out[block.id] = block.content
        return out

    return with_memory(repo, go)


def files_on_disk(repo: Path) -> dict[str, list[str]]:
    """Memory-relative path → ids of every bucket file in the work tree; asserts each parses
    and holds no more than ``BUCKET_LIMIT`` blocks."""
    out = {}
    for path in sorted((repo / MEMORY_DIR).rglob("*.md")):
        rel = str(path.relative_to(repo / MEMORY_DIR))
        if rel == "self.md":
            continue
        data = path.read_bytes()
        assert b"<<<<<<<" not in data and b">>>>>>>" not in data, rel
        parsed = parse_partial(data, rel)
        assert not parsed.problems, parsed.problems
        assert len(parsed.blocks) <= BUCKET_LIMIT, rel
        out[rel] = [b.id for b in parsed.blocks]
    return out


def ids_once(repo: Path) -> set[str]:
    """Every block id on disk, asserting none is in two files."""
    seen: list[str] = [i for ids in files_on_disk(repo).values() for i in ids]
    assert len(seen) == len(set(seen)), sorted(i for i in seen if seen.count(i) > 1)
    return set(seen)
