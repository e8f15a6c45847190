"""The working tree and git's index after a write; the journal finishes an interrupted one."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun, git
from tests.faults.kill import elfmem, killed


def _journal(repo: Path) -> Path:
    return repo / ".git" / "elfmem" / "journal.json"


def _bucket(repo: Path) -> Path:
    return next((repo / ".elfmem" / "memory").glob("log/**/*.md"))


def test_a_write_killed_after_staging_is_finished_by_the_next_read(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("The pager rota changes on Mondays"))
    arun(system.close())
    before = git(repo, "rev-parse", "HEAD")
    assert killed(elfmem(repo, "remember", "Deploys freeze on Fridays", fault="write.index"))
    assert git(repo, "rev-parse", "HEAD") == before  # the branch never moved
    system = arun(MemorySystem.from_config(repo))  # a read: ls
    contents = {b.content for b in arun(system.ls(status="all")).blocks}
    arun(system.close())
    assert "Deploys freeze on Fridays" in contents
    assert "Deploys freeze on Fridays" in git(
        repo, "show", f"HEAD:{_bucket(repo).relative_to(repo)}"
    )
    assert git(repo, "status", "--porcelain") == ""
    assert not _journal(repo).exists()


def test_a_hand_edit_made_after_the_crash_is_not_overwritten(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("The pager rota changes on Mondays"))
    arun(system.close())
    before = git(repo, "rev-parse", "HEAD")
    assert killed(elfmem(repo, "remember", "Deploys freeze on Fridays", fault="write.journal"))
    bucket = _bucket(repo)
    edited = bucket.read_text() + "\nA note typed by hand after the crash.\n"
    bucket.write_text(edited)
    system = arun(MemorySystem.from_config(repo))
    arun(system.remember("Standups start at ten", category="procedure"))  # another file
    arun(system.close())
    assert bucket.read_text() == edited
    assert not _journal(repo).exists()
    # The interrupted write was never acknowledged; with a hand edit on top it is dropped.
    assert "Deploys freeze" not in git(repo, "log", "--format=%s", f"{before.strip()}..HEAD")


def test_a_hand_edit_made_after_a_committed_write_is_kept_on_top_of_it(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("The pager rota changes on Mondays"))
    arun(system.close())
    assert killed(elfmem(repo, "remember", "Deploys freeze on Fridays", fault="write.ref"))
    bucket = _bucket(repo)
    edited = bucket.read_text().replace("Mondays", "Tuesdays")
    bucket.write_text(edited)
    system = arun(MemorySystem.from_config(repo))
    arun(system.ls())
    arun(system.close())
    assert bucket.read_text() == edited
    assert "Deploys freeze on Fridays" in git(repo, "show", f"HEAD:{bucket.relative_to(repo)}")
    assert git(repo, "status", "--porcelain").strip() == f"M {bucket.relative_to(repo)}"


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
