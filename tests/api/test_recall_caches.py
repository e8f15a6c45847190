"""What a recall keeps between calls (the tip commit's facts, the index's file rows) never hides a
change: a hand edit, a commit made by git itself, or another process writing the index."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from elfmem.index import open_index
from elfmem.index.sync import file_rows
from elfmem.sharing.reconcile import needs_check
from elfmem.store import repo as repo_mod
from tests.conftest import arun, git

FACTS = [
    ("Frontend builds use Vite; the dev server listens on port 5173", "starting the frontend"),
    ("Redis needs maxmemory set or it grows until the OOM killer runs", "configuring redis"),
    ("Shard the events table by tenant id past 500 million rows", "database scaling"),
]


def _memory(repo: Path) -> MemorySystem:
    system, _ = arun(MemorySystem.init(repo, name="Ada", seed=False))
    arun(system.remember_many([{"content": c, "cue": q} for c, q in FACTS]))
    arun(system.dream(max_blocks=10))
    return system


def _top(system: MemorySystem, query: str) -> list[str]:
    return [b.id for b in arun(system.recall(query, top_k=1, reinforce=False)).ranked]


def _vite(system: MemorySystem, repo: Path) -> tuple[str, Path]:
    target = next(b for b in arun(system.ls(status="active")).blocks if "Vite" in b.content)
    return target.id, repo / target.path


def test_hand_edits_of_the_same_size_right_after_recalls_are_found_at_once(repo: Path) -> None:
    system = _memory(repo)
    block_id, path = _vite(system, repo)
    for query in ("redis memory", "frontend port", "sharding"):  # the caches are warm now
        _top(system, query)
    text = path.read_text()
    # Same length each time, one right after the other: only the mtime (or the racy-stat rule)
    # tells the files apart, and the rows kept from the recalls above must not hide it.
    first = text.replace("Vite; the dev server", "Vite; the zqx server")
    second = text.replace("Vite; the dev server", "Vite; the kwy server")
    assert len(first) == len(second) == len(text)
    path.write_text(first)
    assert _top(system, "zqx") == [block_id]
    path.write_text(second)
    assert _top(system, "kwy") == [block_id]
    assert _top(system, "zqx") == []
    path.write_text(text)
    assert _top(system, "kwy") == []
    assert _top(system, "dev server") == [block_id]
    arun(system.close())


def test_a_commit_made_by_git_is_followed_by_the_next_recall(repo: Path) -> None:
    system = _memory(repo)
    block_id, path = _vite(system, repo)
    _top(system, "frontend port")
    before = system._core.store.memory_tree_oid()
    path.write_text(path.read_text().replace("Vite;", "Vite with the quillwort plugin;"))
    git(repo, "commit", "-q", "-am", "a hand edit, committed by git")
    after = system._core.store.memory_tree_oid()
    assert after != before
    assert after == git(repo, "rev-parse", "HEAD:.elfmem/memory").strip()
    assert _top(system, "quillwort") == [block_id]
    assert system._core.last_sync is not None and system._core.last_sync.mode == "incremental"
    arun(system.close())


def test_commit_facts_are_those_of_the_commit_named(repo: Path) -> None:
    system = _memory(repo)
    store = system._core.store
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "side.txt")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "checkout", "-q", "main")
    (repo / "main.txt").write_text("main\n")
    git(repo, "add", "main.txt")
    git(repo, "commit", "-q", "-m", "main")
    git(repo, "merge", "-q", "--no-edit", "side")
    head = repo_mod.head_oid(store.repo)
    facts = repo_mod.commit_facts(store.repo, head)
    assert facts is not None and facts.parents == 2
    assert facts.memory_tree == git(repo, "rev-parse", "HEAD:.elfmem/memory").strip()
    assert needs_check(store.repo)  # a merge the reconciliation has not checked
    first = repo_mod.commit_facts(store.repo, git(repo, "rev-parse", "HEAD^1").strip())
    assert first is not None and first.parents == 1
    assert repo_mod.commit_facts(store.repo, None) is None
    arun(system.close())


def test_file_rows_are_read_again_after_any_write_to_the_index(repo: Path) -> None:
    system = _memory(repo)
    _top(system, "frontend port")
    db = system._core.db()
    rows = file_rows(db)
    path = next(iter(rows))
    assert file_rows(db) == rows  # nothing wrote: the kept rows
    other = open_index(system._core.index_path)  # another connection, as another process has
    try:
        with other.write() as conn:
            conn.execute("UPDATE files SET size = 7 WHERE path = ?", (path,))
    finally:
        other.close()
    assert file_rows(db)[path].size == 7
    with db.write() as conn:  # and a write on this connection
        conn.execute("UPDATE files SET size = 8 WHERE path = ?", (path,))
    assert file_rows(db)[path].size == 8
    db.conn.execute("UPDATE files SET size = 9 WHERE path = ?", (path,))  # autocommit, no write()
    assert file_rows(db)[path].size == 9
    arun(system.close())
