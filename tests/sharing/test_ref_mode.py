"""Memory on its own ref: code history stays clean, every part follows the one memory ref."""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.errors import RepoStateError
from tests.conftest import arun, git
from tests.sharing.clones import block_ids, folded, remember, rev


def _init(root: Path, ref: str | None = None) -> None:
    async def go() -> None:
        system, _ = await MemorySystem.init(root, ref=ref)
        await system.close()

    arun(go())


def test_init_ref_writes_only_the_memory_ref(repo: Path) -> None:
    head = rev(repo, "HEAD")
    index_before = (repo / ".git" / "index").read_bytes()
    _init(repo, ref="elfmem")
    [bid] = remember(repo, "The staging database runs Postgres 16 on port 5433.")
    assert rev(repo, "HEAD") == head  # the code branch did not move
    assert (repo / ".git" / "index").read_bytes() == index_before  # nor git's index
    assert not (repo / ".elfmem").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "config", "elfmem.ref").strip() == "refs/heads/elfmem"
    log = git(repo, "log", "--format=%s", "refs/heads/elfmem")
    assert log.splitlines()[0].startswith("remember:")
    assert "code" not in log.splitlines()  # a root of its own: no code commits in it
    assert block_ids(repo) == {bid}


def test_ref_mode_memory_is_independent_of_the_checked_out_branch(repo: Path) -> None:
    _init(repo, ref="elfmem")
    [first] = remember(repo, "Releases are cut from the main branch on Tuesdays.")
    git(repo, "switch", "-q", "-c", "feature")
    [second] = remember(repo, "Feature flags live in config/flags.yaml.")
    git(repo, "switch", "-q", "main")
    assert block_ids(repo) == {first, second}
    git(repo, "checkout", "-q", "--detach")  # even a detached HEAD writes nowhere near code
    [third] = remember(repo, "The on-call rota is in PagerDuty under team web.")
    assert block_ids(repo) == {first, second, third}
    assert git(repo, "status", "--porcelain") == ""


def test_undo_and_at_follow_the_memory_ref(repo: Path) -> None:
    _init(repo, ref="elfmem")
    [a] = remember(repo, "Backups run nightly at 02:00 UTC.")
    [b] = remember(repo, "Backups are kept for thirty days.")

    async def go() -> tuple[set[str], set[str]]:
        system = await MemorySystem.from_config(repo)
        try:
            at = await system.recall("backups", at="HEAD~1")
            await system.undo()
            now = {x.id for x in (await system.ls(status="all")).blocks}
            return {x.id for x in at.blocks}, now
        finally:
            await system.close()

    at_ids, now = arun(go())
    assert b not in at_ids  # HEAD~1 counts memory commits, not code ones
    assert now == {a}
    assert git(repo, "log", "-1", "--format=%s", "refs/heads/elfmem").startswith("Revert")


def test_mode_moves_a_branch_memory_to_the_ref_and_back_losing_nothing(repo: Path) -> None:
    _init(repo)
    ids = remember(repo, "Use ruff for lint.", "Type-check with mypy --strict.")

    async def outcome() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            await system.outcome([ids[0]], 0.9)
        finally:
            await system.close()

    arun(outcome())
    before = folded(repo, ids)
    tree = rev(repo, "HEAD:.elfmem")

    async def move(where: str) -> list[str]:
        system = await MemorySystem.from_config(repo)
        try:
            return (await system.mode(where)).commits or []
        finally:
            await system.close()

    commits = arun(move("ref"))
    assert len(commits) == 2  # one on the ref, one removing .elfmem from the branch
    assert not (repo / ".elfmem").exists()
    assert git(repo, "ls-tree", "HEAD", ".elfmem") == ""
    assert rev(repo, "refs/heads/elfmem:.elfmem") == tree  # the same bytes, moved
    assert git(repo, "status", "--porcelain") == ""
    assert block_ids(repo) == set(ids)
    assert folded(repo, ids) == before
    [more] = remember(repo, "Commit messages say why, not what.")
    assert git(repo, "ls-tree", "HEAD", ".elfmem") == ""

    back = arun(move("branch"))
    assert len(back) == 1
    assert (repo / ".elfmem" / "memory").is_dir()
    assert block_ids(repo) == {*ids, more}
    assert folded(repo, ids) == before
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "config", "--get", "elfmem.ref", check=False) == ""


def test_mode_move_refuses_uncommitted_memory_edits(repo: Path) -> None:
    _init(repo)
    remember(repo, "Deploys need two approvals.")
    self_md = repo / ".elfmem" / "memory" / "self.md"
    self_md.write_text(self_md.read_text() + "\nA hand edit.\n")
    head = rev(repo, "HEAD")

    async def go() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            await system.mode("ref")
        finally:
            await system.close()

    with pytest.raises(RepoStateError, match="uncommitted"):
        arun(go())
    assert rev(repo, "HEAD") == head
    assert git(repo, "rev-parse", "--verify", "-q", "refs/heads/elfmem", check=False) == ""
    assert "A hand edit." in self_md.read_text()
