"""A bucket git left conflicted, or that no longer parses, still serves its readable blocks.

The conflict is made the way a person makes one: two branches append to the same bucket, the
plain git binary merges them and ``git commit -a`` commits the markers, with no elfmem hooks.
Reads serve the blocks outside the region and warn with file:line; writes to that bucket refuse.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import BlockFormatError
from elfmem.store.conflicts import CommittedConflict
from tests.conftest import arun, git

BASE = "Postgres pooling needs pgbouncer above 100 clients"
OURS = "Kafka retention is seven days on the main cluster"
THEIRS = "Redis eviction policy is allkeys-lru in production"
AFTER = "Grafana dashboards live in the ops folder"


def _remember(repo: Path, content: str, dream: bool = True) -> str:
    """Remember ``content`` and consolidate it, so it is appended to the active bucket."""

    async def go() -> str:
        system = await MemorySystem.from_config(repo)
        try:
            block_id = (await system.remember(content)).block_id
            if dream:
                await system.dream(no_llm=True)
            return block_id
        finally:
            await system.close()

    return arun(go())


def _conflicted(repo: Path) -> tuple[Path, dict[str, str]]:
    """Two branches append to one active bucket; git merges them and commits the markers."""
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    ids = {"base": _remember(repo, BASE)}
    git(repo, "checkout", "-q", "-b", "other")
    ids["theirs"] = _remember(repo, THEIRS)
    git(repo, "checkout", "-q", "main")
    ids["ours"] = _remember(repo, OURS)
    # A merge made without elfmem's merge driver (a clone that never registered it).
    git(repo, "config", "--remove-section", "merge.elfmem")
    git(repo, "merge", "-q", "other", check=False)
    git(repo, "commit", "-q", "-a", "-m", "merge, markers and all")
    [bucket] = (repo / ".elfmem" / "memory" / "notes" / "knowledge").glob("*.md")
    assert "<<<<<<< HEAD" in bucket.read_text()
    assert git(repo, "status", "--porcelain") == ""
    return bucket, ids


def _cli(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_committed_conflict_serves_the_blocks_outside_it_and_warns(repo: Path) -> None:
    bucket, ids = _conflicted(repo)
    rel = bucket.relative_to(repo).as_posix()
    opener = bucket.read_text().split("\n").index("<<<<<<< HEAD") + 1

    async def go() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            listed = {b.id for b in (await system.ls()).blocks}
            assert ids["base"] in listed
            assert ids["ours"] not in listed and ids["theirs"] not in listed
            warnings = system.take_warnings()
            assert any(w.startswith(f"{rel}:{opener}: unresolved git conflict") for w in warnings)
            assert ids["ours"] in warnings[0] and ids["theirs"] in warnings[0]
            found = await system.recall("postgres pooling pgbouncer", reinforce=False)
            assert ids["base"] in [b.id for b in found.blocks]
            assert system.take_warnings()  # warned again by the next command, once
            before = git(repo, "rev-parse", "HEAD")
            with pytest.raises(CommittedConflict) as refused:
                await system.forget(ids["base"])
            assert f"{rel}:{opener}" in str(refused.value)
            assert "git checkout --theirs" in refused.value.recovery
            assert "git merge-tree" in refused.value.recovery  # merged again, nothing dropped
            with pytest.raises(CommittedConflict):
                await system.edit(ids["base"], content="changed")
            with pytest.raises(CommittedConflict):
                await system.edit(ids["ours"], content="changed")  # inside the region
            with pytest.raises(CommittedConflict):  # nothing lands on top of the markers
                await system.remember(AFTER)
            assert git(repo, "rev-parse", "HEAD") == before
            check = await system.index_check()
            assert not check.ok
            assert any(e["path"] == rel and e["line"] == opener for e in check.errors)
        finally:
            await system.close()

    arun(go())
    assert "<<<<<<< HEAD" in bucket.read_text()  # nothing rewrote the file


def test_no_write_lands_on_top_of_a_committed_conflict(repo: Path) -> None:
    """A later repair merges the file again; had a write landed on top, undoing the merge
    (docs/merging.md) would have had to drop it."""
    bucket, ids = _conflicted(repo)
    before = bucket.read_bytes()
    head = git(repo, "rev-parse", "HEAD")

    async def go() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            with pytest.raises(CommittedConflict):
                await system.remember(AFTER)
            with pytest.raises(CommittedConflict):
                await system.forget(ids["base"])
            active = {b.id for b in (await system.ls(status="active")).blocks}
            assert ids["base"] in active  # reads go on
            assert any("unresolved git conflict" in w for w in system.take_warnings())
        finally:
            await system.close()

    arun(go())
    assert bucket.read_bytes() == before
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_a_conflicted_inbox_bucket_stops_capture_with_the_fix(repo: Path) -> None:
    bucket, _ = _conflicted(repo)
    inbox = repo / ".elfmem" / "memory" / "log" / "knowledge" / bucket.name
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_text(bucket.read_text())  # the same conflict, now in the inbox bucket
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a conflict in the inbox too")
    before = inbox.read_bytes()
    code, out, err = _cli(repo, "remember", AFTER)
    assert code == 4, err
    assert "Warning: " in err and "unresolved git conflict" in err
    assert "Error: .elfmem/memory/" in err and "Recovery: Resolve the conflict" in err
    assert inbox.read_bytes() == before
    assert not inbox.with_name(inbox.stem + "-2.md").exists()


def test_resolving_the_conflict_by_deleting_the_markers_serves_both_sides(repo: Path) -> None:
    bucket, ids = _conflicted(repo)
    kept = [
        line
        for line in bucket.read_text().split("\n")
        if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))
    ]
    bucket.write_text("\n".join(kept))
    git(repo, "commit", "-q", "-a", "-m", "resolve")

    async def go() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            listed = {b.id for b in (await system.ls()).blocks}
            assert set(ids.values()) <= listed
            assert system.take_warnings() == []
            await system.remember(AFTER)
        finally:
            await system.close()

    arun(go())


def test_the_cli_warns_on_stderr_and_in_json_and_refuses_the_write(repo: Path) -> None:
    bucket, ids = _conflicted(repo)
    rel = bucket.relative_to(repo).as_posix()
    code, out, err = _cli(repo, "ls")
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("Warning: ")]
    assert len(warnings) == 1 and f"Warning: {rel}:" in warnings[0]
    assert ids["base"][:8] in out
    code, out, err = _cli(repo, "ls", "--json")
    listed = json.loads(out)
    assert [b["id"] for b in listed["blocks"] if b["id"] in ids.values()] == [ids["base"]]
    assert len(listed["warnings"]) == 1 and listed["warnings"][0].startswith(f"{rel}:")
    code, out, err = _cli(repo, "forget", ids["base"])
    assert code != 0
    assert f"Error: {rel}:" in err and "Recovery: Resolve the conflict" in err


def _write_block(path: Path, block_id: str, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"## {body}\n<!-- id: {block_id}  cls: knowledge  tags: [] -->\n\n{body}\n")


def test_a_block_id_in_two_files_is_served_once_warned_and_refused(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    memory = repo / ".elfmem" / "memory"
    first = memory / "notes" / "knowledge" / "2026-01.md"
    second = memory / "notes" / "knowledge" / "2026-02.md"
    _write_block(first, "00000000000000aa", "The first copy says pools hold 20")
    _write_block(second, "00000000000000aa", "The second copy says pools hold 40")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two files, one id")

    async def go() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            info = await system.show("00000000000000aa")
            assert info.content == "The first copy says pools hold 20"  # the path sorting first
            warnings = system.take_warnings()
            assert any("2026-01.md" in w and "2026-02.md" in w for w in warnings)
            with pytest.raises(BlockFormatError) as refused:
                await system.edit("00000000000000aa", content="Pools hold 30")
            assert "2026-01.md" in str(refused.value) and "2026-02.md" in str(refused.value)
            assert "new id" in refused.value.recovery
            check = await system.index_check()
            [dup] = [e for e in check.errors if "is also at" in e["message"]]
            assert dup["path"].endswith("2026-02.md") and dup["line"] == 1
            assert ".elfmem/memory/notes/knowledge/2026-01.md:1" in dup["message"]
        finally:
            await system.close()

    arun(go())


def test_a_bucket_with_one_broken_block_serves_the_others(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    bucket = repo / ".elfmem" / "memory" / "notes" / "knowledge" / "2026-03.md"
    bucket.parent.mkdir(parents=True, exist_ok=True)
    bucket.write_text(
        "## good one\n<!-- id: 00000000000000b1  cls: knowledge  tags: [] -->\n\ngood one\n\n"
        "## broken\n<!-- id: 00000000000000b2  cls: knowledge  tags: [bad tag] -->\n\nbroken\n\n"
        "## good two\n<!-- id: 00000000000000b3  cls: knowledge  tags: [] -->\n\ngood two\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a hand edit committed without hooks")

    async def go() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            listed = {b.id for b in (await system.ls()).blocks}
            assert {"00000000000000b1", "00000000000000b3"} <= listed
            assert "00000000000000b2" not in listed
            [warning] = system.take_warnings()
            assert warning.startswith(".elfmem/memory/notes/knowledge/2026-03.md:7: frontmatter")
            check = await system.index_check()
            assert [e["line"] for e in check.errors] == [7]
        finally:
            await system.close()

    arun(go())
