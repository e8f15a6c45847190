"""Backup as a git bundle; restore by `elfmem restore`, or by `git clone` and a first command."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from elfmem.api import MemorySystem
from elfmem.errors import InvalidInput, NotFound
from tests.conftest import arun, git

FACTS = [
    "Use PgBouncer in transaction mode for the API's connection pool.",
    "The staging database is rebuilt from the nightly snapshot at 02:00 UTC.",
    "Deploys go out through the blue/green switch.",
    "Customer exports are capped at 50,000 rows per request.",
    "Session cookies expire after 14 days of inactivity.",
]


def _snapshot(path: Path) -> dict[str, Any]:
    """What a user sees: the listing, a recall, and each block's folded ledger."""

    async def go() -> dict[str, Any]:
        system = await MemorySystem.from_config(path)
        try:
            listing = await system.ls(status=None)
            ids = sorted(b.id for b in listing.blocks)
            recall = await system.recall("connection pool", reinforce=False)
            folded = {}
            for block_id in ids:
                state = system._core.ledger.folded(block_id)
                folded[block_id] = (state.alpha, state.beta, state.outcomes, state.born)
            return {
                "ls": [(b.id, b.status, b.content, b.tags) for b in listing.blocks],
                "recall": [b.id for b in recall.blocks],
                "ledger": folded,
            }
        finally:
            await system.close()

    return arun(go())


@pytest.fixture
def memory(repo: Path) -> Path:
    async def go() -> None:
        system, _ = await MemorySystem.init(repo, name="elf")
        try:
            ids = [(await system.remember(fact, tags=["ops"])).block_id for fact in FACTS]
            await system.dream(no_llm=True)
            await system.outcome([ids[0]], 0.95, source="load test held")
            await system.outcome([ids[2]], 0.1, source="deploy broke")
            await system.forget(ids[4])
        finally:
            await system.close()

    arun(go())
    return repo


def test_restore_brings_back_blocks_recall_and_ledger(memory: Path, tmp_path: Path) -> None:
    before = _snapshot(memory)
    bundle = tmp_path / "memory.bundle"
    result = arun(_backup(memory, bundle))
    assert "refs/notes/elfmem" in result.refs and "refs/heads/main" in result.refs
    git(memory, "bundle", "verify", str(bundle))  # a valid bundle by git's own reading

    restored = arun(MemorySystem.restore(bundle, tmp_path / "restored"))
    assert restored.notes_tip is not None and restored.branch == "refs/heads/main"
    after = _snapshot(tmp_path / "restored")
    assert after == before
    assert any(alpha > 0.5 for alpha, *_ in after["ledger"].values())  # outcomes came across


def test_plain_git_clone_gets_the_ledger_at_the_first_command(memory: Path, tmp_path: Path) -> None:
    before = _snapshot(memory)
    bundle = tmp_path / "memory.bundle"
    arun(_backup(memory, bundle))
    git(tmp_path, "clone", "-q", str(bundle), "cloned")
    clone = tmp_path / "cloned"
    assert git(clone, "for-each-ref", "refs/notes/").strip() == ""  # git alone leaves it out
    assert _snapshot(clone) == before
    notes = git(clone, "for-each-ref", "--format=%(objectname)", "refs/notes/elfmem").strip()
    assert notes == git(memory, "rev-parse", "refs/notes/elfmem").strip()


def test_clone_with_its_own_notes_merges_the_bundle_notes_by_union(
    memory: Path, tmp_path: Path
) -> None:
    bundle = tmp_path / "memory.bundle"
    arun(_backup(memory, bundle))
    git(tmp_path, "clone", "-q", str(bundle), "cloned")
    clone = tmp_path / "cloned"
    target = _snapshot(memory)["ls"][0][0]
    # The clone writes a ledger of its own before any elfmem command has read the bundle.
    git(clone, "notes", "--ref=elfmem", "add", "-m", "local line", "HEAD")
    before_tip = git(clone, "rev-parse", "refs/notes/elfmem").strip()
    snap = _snapshot(clone)
    assert snap["ledger"][target] == _snapshot(memory)["ledger"][target]
    parents = git(clone, "log", "-1", "--format=%P", "refs/notes/elfmem").split()
    assert before_tip in parents and len(parents) == 2  # a merge, not a force
    head = git(clone, "rev-parse", "HEAD").strip()
    assert "local line" in git(clone, "notes", "--ref=elfmem", "show", head)


def test_backup_includes_spooled_events(memory: Path, tmp_path: Path) -> None:
    async def go() -> str:
        system = await MemorySystem.from_config(memory)
        try:
            block_id = (await system.remember("A fact only the spool has seen.")).block_id
            await system.backup(tmp_path / "b.bundle")
            return block_id
        finally:
            await system.close()

    block_id = arun(go())
    arun(MemorySystem.restore(tmp_path / "b.bundle", tmp_path / "r"))
    assert _snapshot(tmp_path / "r")["ledger"][block_id][3] is True  # its birth came along


def test_restore_refuses_a_folder_in_use_and_a_file_that_is_no_bundle(
    memory: Path, tmp_path: Path
) -> None:
    bundle = tmp_path / "memory.bundle"
    arun(_backup(memory, bundle))
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("mine\n")
    with pytest.raises(InvalidInput, match="not empty"):
        arun(MemorySystem.restore(bundle, busy))
    assert (busy / "x").read_text() == "mine\n"
    junk = tmp_path / "junk.bundle"
    junk.write_text("hello\n")
    with pytest.raises(NotFound, match="not a git bundle"):
        arun(MemorySystem.restore(junk, tmp_path / "new"))


def test_backup_of_a_memory_without_commits_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")

    async def go() -> None:
        system = await MemorySystem.from_config(empty)
        try:
            await system.backup(tmp_path / "x.bundle")
        finally:
            await system.close()

    with pytest.raises(NotFound, match="no commits"):
        arun(go())
    assert not (tmp_path / "x.bundle").exists()


async def _backup(path: Path, bundle: Path) -> Any:
    system = await MemorySystem.from_config(path)
    try:
        return await system.backup(bundle)
    finally:
        await system.close()


def test_rescue_says_where_the_index_lives_and_runs_doctor(memory: Path, tmp_path: Path) -> None:
    """A copied repository needs no rescue: the index moved with the git dir; rescue says so,
    and its doctor run finds the moved memory healthy (and the index deleted heals)."""
    moved = tmp_path / "moved"
    shutil.copytree(memory, moved)
    (moved / ".git" / "elfmem" / "index.db").unlink()

    async def go() -> Any:
        system = await MemorySystem.from_config(moved)
        try:
            return await system.rescue()
        finally:
            await system.close()

    result = arun(go())
    assert "Nothing to rescue" in result.note and str(moved / ".git") in result.note
    assert result.doctor.ok, result.doctor.summary
    assert result.to_dict()["doctor"]["ok"] is True


def _mode(path: Path) -> tuple[str, str]:
    async def go() -> tuple[str, str]:
        system = await MemorySystem.from_config(path)
        try:
            result = await system.mode()
            return result.mode, result.ref  # type: ignore[attr-defined]
        finally:
            await system.close()

    return arun(go())


def test_restore_of_a_ref_mode_backup_is_in_ref_mode_as_git_clone_is(
    memory: Path, tmp_path: Path
) -> None:
    async def to_ref() -> None:
        system = await MemorySystem.from_config(memory)
        try:
            await system.mode("ref")
        finally:
            await system.close()

    arun(to_ref())
    assert _mode(memory) == ("ref", "refs/heads/elfmem")
    before = _snapshot(memory)
    bundle = tmp_path / "memory.bundle"
    arun(_backup(memory, bundle))
    git(tmp_path, "clone", "-q", str(bundle), "cloned")
    restored = arun(MemorySystem.restore(bundle, tmp_path / "restored"))
    assert restored.branch == "refs/heads/elfmem"
    for folder in (tmp_path / "cloned", tmp_path / "restored"):
        assert _mode(folder) == ("ref", "refs/heads/elfmem")
        assert _snapshot(folder) == before
    assert not (tmp_path / "restored" / ".elfmem").exists()  # memory is not checked out
