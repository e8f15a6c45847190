"""Defence in depth: a merge made without the driver (a clone that never registered it) leaves
conflict markers; elfmem serves the other blocks, names the region and the fix, never reads the
markers as content and never writes them back; redoing the merge with the driver repairs it."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from elfmem.block.layout import MEMORY_DIR
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
        [new] = [(await system.remember("A fact after the bad merge")).block_id]
        return [*system.take_warnings(), new]

    *warnings, _ = with_memory(repo, damaged)
    rel = bucket.relative_to(repo).as_posix()
    [warning] = [w for w in warnings if "unresolved git conflict" in w]
    assert warning.startswith(f"{rel}:") and "elfmem hooks install" in warning
    damaged_text = bucket.read_text()
    assert "A fact after the bad merge" not in damaged_text  # the write went to a fresh bucket
    # The fix the warning names: register the driver, undo the merge, merge again.
    with_memory(repo, lambda s: s.hooks_install())
    git(repo, "reset", "-q", "--keep", "HEAD~2")  # the capture and the bad merge
    git(repo, "merge", "-q", "--no-edit", "other")
    files_on_disk(repo)  # asserts no markers and that every file parses
    assert {base, *theirs, *ours} <= set(listed(repo))
