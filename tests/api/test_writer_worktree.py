"""The working tree and git's index after a write; the journal finishes an interrupted one."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2

from elfmem.api import MemorySystem
from tests.conftest import arun, git


def _journal(repo: Path) -> Path:
    return repo / ".git" / "elfmem" / "journal.json"


def _crash_before_the_working_tree(repo: Path, system: MemorySystem, content: str) -> Path:
    """Remember ``content``, then put back the state a process killed right after moving the
    branch leaves: the bucket on disk as it was before, and the journal naming the change."""
    before = git(repo, "rev-parse", "HEAD").strip()
    result = arun(system.remember(content))
    bucket = repo / ".elfmem" / "memory" / str(result.path)
    rel = bucket.relative_to(repo).as_posix()
    old = git(repo, "show", f"{before}:{rel}")
    bucket.write_text(old)
    git(repo, "update-index", "--cacheinfo", f"100644,{pygit2.hash(old.encode())},{rel}")
    entry = {
        "before": str(pygit2.hash(old.encode())),
        "after": git(repo, "rev-parse", f"HEAD:{rel}").strip(),
    }
    _journal(repo).write_text(json.dumps({"base": before, "paths": {rel: entry}}))
    return bucket


def test_a_commit_the_working_tree_missed_is_written_out_by_the_next_write(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("The pager rota changes on Mondays"))
    bucket = _crash_before_the_working_tree(repo, system, "Deploys freeze on Fridays")
    assert "Deploys freeze on Fridays" not in bucket.read_text()
    arun(system.remember("The ops wiki lists the rota"))
    arun(system.close())
    text = bucket.read_text()
    assert "Deploys freeze on Fridays" in text and "The ops wiki lists the rota" in text
    assert git(repo, "status", "--porcelain") == ""
    assert not _journal(repo).exists()


def test_a_hand_edit_made_after_the_crash_is_not_overwritten(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("The pager rota changes on Mondays"))
    bucket = _crash_before_the_working_tree(repo, system, "Deploys freeze on Fridays")
    edited = bucket.read_text() + "\nA note typed by hand after the crash.\n"
    bucket.write_text(edited)
    arun(system.remember("Standups start at ten", category="procedure"))  # another file
    arun(system.close())
    assert bucket.read_text() == edited
    assert not _journal(repo).exists()


def test_git_sees_the_written_files_as_clean_without_refreshing_its_index(repo: Path) -> None:
    """The index entry for each written file carries the file's stat data and committed oid:
    ``git diff-files`` (which does not refresh) finds nothing, and the staged oid is HEAD's."""
    system, _ = arun(MemorySystem.init(repo))
    first = arun(system.remember("The pager rota changes on Mondays", cue="who is on call"))
    git(repo, "write-tree")  # git caches the index's trees; the next write must invalidate them
    arun(system.remember("Deploys freeze on Fridays", cue="when to deploy"))
    arun(system.close())
    rel = f".elfmem/memory/{first.path}"
    assert git(repo, "diff-files", "--name-only") == ""
    staged = git(repo, "ls-files", "-s", "--", rel).split()[1]
    assert staged == git(repo, "rev-parse", f"HEAD:{rel}").strip()
    assert git(repo, "status", "--porcelain") == ""
    # The user's next `git commit` records exactly the memory as committed.
    assert git(repo, "write-tree").strip() == git(repo, "rev-parse", "HEAD^{tree}").strip()
