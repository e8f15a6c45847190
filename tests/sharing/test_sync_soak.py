"""Two clones × 1,000 new blocks each, synced both ways (soak: ``pytest -m soak``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from tests.conftest import arun
from tests.sharing.clones import bare, block_ids, clone, project, rev

pytestmark = pytest.mark.soak


def _fill(root: Path, side: str, n: int = 1000, per: int = 100) -> set[str]:
    async def go() -> set[str]:
        system = await MemorySystem.from_config(root)
        made: set[str] = set()
        try:
            for start in range(0, n, per):
                items = [
                    {"content": f"Side {side} fact {i}: host {side}{i} is in rack {i % 31}"}
                    for i in range(start, start + per)
                ]
                made |= set((await system.remember_many(items)).created)
        finally:
            await system.close()
        return made

    return arun(go())


def _sync(root: Path) -> None:
    async def go() -> None:
        system = await MemorySystem.from_config(root)
        try:
            await system.sync()
        finally:
            await system.close()

    arun(go())


def test_ref_mode_clones_with_a_thousand_blocks_each_converge(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    system, _ = arun(MemorySystem.init(a, ref="elfmem"))
    arun(system.close())
    _sync(a)
    b = clone(remote, tmp_path / "b")
    arun((arun(MemorySystem.from_config(b))).close())
    made = _fill(a, "a") | _fill(b, "b")
    assert len(made) == 2000
    for root in (a, b, a):
        _sync(root)
    assert block_ids(a) >= made and block_ids(a) == block_ids(b)
    assert rev(a, "refs/heads/elfmem^{tree}") == rev(b, "refs/heads/elfmem^{tree}")
    assert rev(a, "refs/notes/elfmem") == rev(b, "refs/notes/elfmem")
