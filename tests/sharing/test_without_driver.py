"""Defence in depth: a merge made without the driver (a clone that never registered it) leaves
conflict markers; elfmem serves the other blocks, names the region and the fix, never reads the
markers as content and never writes them back; redoing the merge with the driver repairs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.block.layout import MEMORY_DIR
from elfmem.store.conflicts import CommittedConflict
from tests.conftest import git
from tests.sharing.helpers import files_on_disk, init, listed, remember, with_memory


def test_markers_from_a_merge_without_the_driver_are_reported_and_redone_clean(
    repo: Path,
) -> None:
    init(repo)
    [base] = remember(repo, "Base fact about pools")
    git(repo, "checkout", "-q", "-b", "other")
    theirs = remember(repo, "Theirs fact about queues")
    git(repo, "checkout", "-q", "main")
    ours = remember(repo, "Ours fact about caches")
    git(repo, "config", "--remove-section", "merge.elfmem")
    git(repo, "merge", "-q", "other", check=False)
    git(repo, "commit", "-q", "-a", "-m", "merged by plain git, markers and all")
    [bucket] = (repo / MEMORY_DIR / "log" / "knowledge").glob("*.md")
    assert "<<<<<<<" in bucket.read_text()

    async def damaged(system: MemorySystem) -> list[str]:
        served = {b.id for b in (await system.ls(status="inbox")).blocks}
        assert base in served and not served & {*theirs, *ours}
        found = await system.recall("pools queues caches", reinforce=False)
        assert found.blocks and "<<<<<<<" not in found.text and ">>>>>>>" not in found.text
        [index] = [c for c in (await system.doctor()).checks if c.name == "index"]
        assert not index.ok and "elfmem index check" in index.fix
        with pytest.raises(CommittedConflict):  # nothing on top of the bad merge
            await system.remember("A fact after the bad merge")
        return system.take_warnings()

    warnings = with_memory(repo, damaged)
    rel = bucket.relative_to(repo).as_posix()
    [warning] = [w for w in warnings if "unresolved git conflict" in w]
    assert warning.startswith(f"{rel}:") and "elfmem hooks install" in warning
    assert "A fact after the bad merge" not in bucket.read_text()
    # The fix the warning names: register the driver, merge the file again as a new commit.
    with_memory(repo, lambda s: s.hooks_install())
    merge = git(repo, "log", "-1", "--merges", "--format=%H", "--", rel).strip()
    tree = git(repo, "merge-tree", "--write-tree", f"{merge}^1", f"{merge}^2").split()[0]
    git(repo, "restore", f"--source={tree}", "--", rel)
    git(repo, "commit", "-q", "-a", "-m", "memory: merged by block id")
    files_on_disk(repo)  # asserts no markers and that every file parses
    assert {base, *theirs, *ours} <= set(listed(repo))
