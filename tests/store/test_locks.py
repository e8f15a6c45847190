"""Git's lock files: elfmem deletes a lock only when it is provably its own and its writer is
dead; any other lock stops the write at once with the file, its age and the fix."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import LockedError
from tests.conftest import arun, git
from tests.faults.kill import elfmem, killed


def _memory(repo: Path) -> MemorySystem:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("The pager rota changes on Mondays"))
    return system


def _old_lock(path: Path, content: bytes = b"") -> Path:
    """A lock as another program holds it: made a minute ago, not by elfmem."""
    path.write_bytes(content)
    then = time.time() - 60
    os.utime(path, (then, then))
    return path


def _snapshot(repo: Path) -> tuple[str, str]:
    return git(repo, "rev-parse", "HEAD"), git(repo, "ls-files", "-s")


def test_a_foreign_index_lock_stops_the_write_and_is_kept(repo: Path) -> None:
    system = _memory(repo)
    lock = _old_lock(repo / ".git" / "index.lock")
    before = _snapshot(repo)
    with pytest.raises(LockedError) as info:
        arun(system.remember("Deploys freeze on Fridays"))
    assert str(lock) in info.value.message and "s ago" in info.value.message
    assert f"rm {lock}" in info.value.recovery
    assert lock.exists() and _snapshot(repo) == before
    assert not (repo / ".git" / "elfmem" / "journal.json").exists()
    lock.unlink()
    arun(system.remember("Deploys freeze on Fridays"))  # the person's fix is enough
    arun(system.close())
    assert git(repo, "status", "--porcelain") == ""


def test_the_cli_names_the_lock_and_exits_non_zero(repo: Path) -> None:
    arun(_memory(repo).close())
    lock = _old_lock(repo / ".git" / "index.lock")
    result = CliRunner().invoke(cli, ["-C", str(repo), "remember", "Deploys freeze on Fridays"])
    assert result.exit_code != 0
    assert f"Error: {lock}" in result.stderr and "Recovery:" in result.stderr
    assert lock.exists()


def test_an_acknowledged_write_cannot_hide_behind_a_held_index_lock(repo: Path) -> None:
    """The reported case: with index.lock held, `remember` used to exit 0 after moving the branch
    but not git's index, and a later ordinary commit removed the block. Now it refuses."""
    arun(_memory(repo).close())
    lock = repo / ".git" / "index.lock"
    lock.touch()
    result = CliRunner().invoke(cli, ["-C", str(repo), "remember", "second"])
    assert result.exit_code != 0
    lock.unlink()
    (repo / "u.txt").write_text("mine\n")
    git(repo, "add", "u.txt")
    git(repo, "commit", "-q", "-m", "mine")
    assert git(repo, "diff", "--stat", "HEAD~1", "HEAD", "--", ".elfmem") == ""


def test_a_foreign_branch_lock_stops_the_write_without_spinning(repo: Path) -> None:
    system = _memory(repo)
    lock = _old_lock(repo / ".git" / "refs" / "heads" / "main.lock")
    before = _snapshot(repo)
    with pytest.raises(LockedError) as info:
        arun(system.remember("Deploys freeze on Fridays"))
    arun(system.close())
    assert "main.lock" in info.value.message
    assert lock.exists() and _snapshot(repo) == before
    assert git(repo, "status", "--porcelain") == ""


def test_a_killed_writers_branch_lock_is_cleared_and_its_write_finished(repo: Path) -> None:
    arun(_memory(repo).close())
    proc = elfmem(repo, "remember", "Deploys freeze on Fridays", fault="write.ref-lock")
    assert killed(proc)
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    assert lock.exists()
    system = arun(MemorySystem.from_config(repo))
    contents = {b.content for b in arun(system.ls(status="all")).blocks}
    arun(system.remember("Standups start at ten"))
    arun(system.close())
    assert not lock.exists()
    assert "Deploys freeze on Fridays" in contents
    assert git(repo, "status", "--porcelain") == ""


def test_a_killed_writers_index_lock_is_cleared(repo: Path) -> None:
    arun(_memory(repo).close())
    assert killed(elfmem(repo, "remember", "Deploys freeze", fault="write.index-locked"))
    lock = repo / ".git" / "index.lock"
    assert lock.exists()
    system = arun(MemorySystem.from_config(repo))
    arun(system.remember("Standups start at ten"))
    arun(system.close())
    assert not lock.exists()
    assert git(repo, "status", "--porcelain") == ""


def test_an_index_lock_taken_by_someone_else_after_the_kill_is_not_deleted(repo: Path) -> None:
    """The journal names elfmem's lock by inode: a lock recreated since is another program's."""
    arun(_memory(repo).close())
    assert killed(elfmem(repo, "remember", "Deploys freeze", fault="write.index-locked"))
    lock = repo / ".git" / "index.lock"
    lock.unlink()
    _old_lock(lock)  # a person's `git commit` now holds it
    system = arun(MemorySystem.from_config(repo))
    with pytest.raises(LockedError):
        arun(system.remember("Standups start at ten"))
    arun(system.close())
    assert lock.exists()


def test_a_branch_lock_holding_another_commit_is_not_deleted(repo: Path) -> None:
    arun(_memory(repo).close())
    assert killed(elfmem(repo, "remember", "Deploys freeze", fault="write.ref-lock"))
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text(git(repo, "rev-parse", "HEAD"))  # another program's ref update
    system = arun(MemorySystem.from_config(repo))
    with pytest.raises(LockedError):
        arun(system.remember("Standups start at ten"))
    arun(system.close())
    assert lock.exists()


def test_a_live_writers_journal_is_left_alone(repo: Path) -> None:
    arun(_memory(repo).close())
    assert killed(elfmem(repo, "remember", "Deploys freeze", fault="write.index-locked"))
    journal = repo / ".git" / "elfmem" / "journal.json"
    payload = json.loads(journal.read_text())
    with subprocess.Popen(["sleep", "30"]) as alive:
        payload["pid"], payload["start"] = alive.pid, None
        journal.write_text(json.dumps(payload))
        system = arun(MemorySystem.from_config(repo))
        arun(system.ls())
        arun(system.close())
        assert journal.exists() and (repo / ".git" / "index.lock").exists()
        alive.kill()


def test_doctor_reports_a_held_lock(repo: Path) -> None:
    system = _memory(repo)
    lock = _old_lock(repo / ".git" / "index.lock")
    report = arun(system.doctor())
    arun(system.close())
    check = next(c for c in report.checks if c.name == "locks")
    assert not check.ok and str(lock) in check.detail and f"rm {lock}" in check.fix


def test_a_foreign_notes_lock_stops_the_ledger_write_and_is_kept(repo: Path) -> None:
    system = _memory(repo)
    arun(system.close())  # the spool flush creates refs/notes/elfmem
    system = arun(MemorySystem.from_config(repo))
    arun(system.remember("Deploys freeze on Fridays"))  # its event waits in the spool
    lock = _old_lock(repo / ".git" / "refs" / "notes" / "elfmem.lock")
    with pytest.raises(LockedError) as info:
        arun(system.flush_ledger())
    assert "elfmem.lock" in info.value.message and lock.exists()
    lock.unlink()
    assert arun(system.flush_ledger()).events >= 1  # the event was kept
    arun(system.close())


def test_an_empty_ref_lock_made_within_the_same_clock_tick_is_still_elfmems(tmp_path: Path) -> None:
    """A file's ctime comes from the kernel's coarse clock and can precede ``time.time_ns()``
    read a moment before the file was made."""
    import time

    from elfmem.store.locks import is_own_ref_lock

    since = time.time_ns()
    lock = tmp_path / "main.lock"
    lock.touch()
    assert is_own_ref_lock(lock, "0" * 40, since)
    assert not is_own_ref_lock(lock, "0" * 40, since + 5 * 1_000_000_000)  # made long before
