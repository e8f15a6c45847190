"""What a person's plain git can commit under ``.elfmem/`` that elfmem must not make worse.

A temporary file (``.<bucket>.<pid>.tmp``) a killed write left, committed with ``git add -A``:
elfmem used to delete it on disk, leaving a ``D`` in ``git status`` for good. A symbolic link
committed in place of a memory folder: elfmem used to write through it, outside the repository.
Now the temporary file is left alone and both are reported by ``doctor`` with their fix; a write
under a link stops before anything changes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun, git
from tests.faults.kill import elfmem, killed

LOG = Path(".elfmem") / "memory" / "log" / "knowledge"


def _memory(repo: Path) -> str:
    async def build() -> str:
        system, _ = await MemorySystem.init(repo)
        try:
            return (await system.remember("The pager rota changes on Mondays")).block_id
        finally:
            await system.close()

    return arun(build())


def _doctor(repo: Path) -> dict[str, dict[str, object]]:
    proc = elfmem(repo, "doctor", "--json")
    return {c["name"]: c for c in json.loads(proc.stdout)["checks"]}


def test_a_committed_temporary_file_is_left_alone_and_reported(repo: Path) -> None:
    _memory(repo)
    assert killed(elfmem(repo, "remember", "Deploys freeze on Fridays", fault="write.tmp"))
    [tmp] = (repo / LOG).glob(".*.tmp")
    (repo / ".git" / "index.lock").unlink()  # what git's message says to do
    git(repo, "add", "-A")
    assert tmp.relative_to(repo).as_posix() in git(repo, "diff", "--cached", "--name-only")
    git(repo, "commit", "-q", "-m", "mine")
    assert elfmem(repo, "status").returncode == 0  # the next elfmem call recovers
    assert git(repo, "status", "--porcelain") == ""
    check = _doctor(repo)["files"]
    assert not check["ok"] and tmp.name in str(check["detail"])
    assert "git rm" in str(check["fix"])


def test_a_committed_link_in_place_of_a_memory_folder_is_refused(repo: Path) -> None:
    _memory(repo)
    outside = repo.parent / "outside"
    shutil.move(repo / LOG, outside)
    (repo / LOG).symlink_to(outside, target_is_directory=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a link in place of the inbox folder")
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    head = git(repo, "rev-parse", "HEAD")
    proc = elfmem(repo, "remember", "Deploys freeze on Fridays")
    assert proc.returncode == 4, proc.stderr
    assert LOG.as_posix() in proc.stderr and "link" in proc.stderr
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
    assert git(repo, "rev-parse", "HEAD") == head
    check = _doctor(repo)["files"]
    assert not check["ok"] and LOG.as_posix() in str(check["detail"])


def test_a_link_under_the_memory_folder_is_never_read_as_a_hand_edit(repo: Path) -> None:
    """A bucket file replaced on disk by a link to a file elsewhere: reads follow the committed
    tree, never the link's target (doctor names the link)."""
    _memory(repo)
    [bucket] = [p for p in (repo / LOG).iterdir() if p.suffix == ".md"]
    outside = repo.parent / "elsewhere.md"
    outside.write_text(bucket.read_text().replace("pager rota", "ferry timetable"))
    bucket.unlink()
    bucket.symlink_to(outside)

    async def asked(query: str) -> list[str]:
        system = await MemorySystem.from_config(repo)
        try:
            return [b.content for b in (await system.recall(query, reinforce=False)).blocks]
        finally:
            await system.close()

    assert arun(asked("ferry timetable")) == []
    assert arun(asked("pager rota")) == ["The pager rota changes on Mondays"]
    check = _doctor(repo)["files"]
    assert not check["ok"] and bucket.name in str(check["detail"])
