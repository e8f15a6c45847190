"""Retrieval through the real path: the index heals, follows branches, sees hand edits; frames
obey."""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.rhythms import recall as recall_mod
from tests.conftest import arun, git

FACTS = [
    (
        "Postgres connection pooling needs pgbouncer above 100 clients",
        "choosing a connection pooling strategy",
        ["db/postgres"],
    ),
    (
        "Redis needs maxmemory set or it grows until the OOM killer runs",
        "configuring a redis cache",
        ["db/redis"],
    ),
    (
        "The staging database is refreshed from production every Monday",
        "when staging data looks old",
        ["ops"],
    ),
    (
        "Use exponential backoff with jitter when the payments API returns 429",
        "handling rate limits",
        ["api"],
    ),
    (
        "Frontend builds use Vite; the dev server listens on port 5173",
        "starting the frontend",
        ["web"],
    ),
    (
        "Shard the events table by tenant id once it passes 500 million rows",
        "database scaling",
        ["db/postgres"],
    ),
]


def _memory(repo: Path, *, seed: bool = True, edges: bool = True) -> MemorySystem:
    system, _ = arun(MemorySystem.init(repo, name="Ada", seed=seed))
    if not edges:  # no semantic edges from dream: every block's centrality stays equal
        from dataclasses import replace

        cfg = system._core.config
        system._core.config = replace(cfg, memory=replace(cfg.memory, edge_degree_cap=0))
    arun(system.remember_many([{"content": c, "cue": q, "tags": t} for c, q, t in FACTS]))
    arun(system.dream(max_blocks=50))
    return system


def _ids(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.id for b in result.ranked]


def test_attention_finds_by_cue_and_renders_text(repo: Path) -> None:
    system = _memory(repo)
    result = arun(system.recall("how should we scale the database", top_k=3))
    assert any("Shard the events table" in b.content for b in result.blocks)
    pooling = arun(system.recall("connection pooling", top_k=1))
    assert "pgbouncer" in pooling.blocks[0].content
    assert "pgbouncer" in pooling.text
    arun(system.close())


def test_attention_and_task_never_return_constitutional_blocks_self_only_self(repo: Path) -> None:
    system = _memory(repo)
    for frame in ("attention", "task"):
        r = arun(system.frame(frame, "evidence premise pattern principle identity", top_k=10))
        assert all("self/constitutional" not in b.tags for b in r.ranked), frame
        assert r.excluded_by_filter >= 10
    me = arun(system.frame("self"))
    assert me.ranked and all(any(t.startswith("self/") for t in b.tags) for b in me.ranked)
    assert len([b for b in me.ranked if "self/constitutional" in b.tags]) == 10
    assert me.text.startswith("## You are Ada")
    assert all(b.similarity == 0.0 for b in me.ranked)
    arun(system.close())


def test_task_guarantee_beats_the_constitutional_filter(repo: Path) -> None:
    system = _memory(repo)
    goal = arun(
        system.remember(
            "Ship the billing migration this sprint", tags=["self/goal", "self/constitutional"]
        )
    )
    arun(system.dream())
    r = arun(system.frame("task", "frontend port"))
    assert goal.block_id in _ids(r)
    arun(system.close())


def test_a_block_larger_than_the_budget_is_rendered_whole_as_an_overrun(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    big = " ".join(["enormous incident report sentence about the payments outage"] * 400)
    arun(system.remember(big, cue="payments outage"))
    arun(system.dream())
    r = arun(system.recall("payments outage", top_k=1))
    assert r.blocks and r.blocks[0].content == big
    assert r.budget_used > r.budget_total and r.overrun
    arun(system.close())


def test_index_heals_when_deleted_truncated_or_garbage(repo: Path) -> None:
    system = _memory(repo)
    before = _ids(arun(system.recall("database scaling", top_k=5)))
    index = system._core.index_path
    for damage in ("delete", "truncate", "garbage"):
        system._core._db.close()  # type: ignore[union-attr]
        system._core._db = None
        if damage == "delete":
            index.unlink()
        elif damage == "truncate":
            index.write_bytes(index.read_bytes()[:100])
        else:
            index.write_bytes(b"not a database" * 100)
        for extra in index.parent.glob("index.db-*"):
            extra.unlink()
        assert _ids(arun(system.recall("database scaling", top_k=5))) == before, damage
    arun(system.close())


def test_index_follows_branch_switches_incrementally(repo: Path) -> None:
    system = _memory(repo, seed=False)
    base = _ids(arun(system.recall("frontend dev server port", top_k=3)))
    git(repo, "checkout", "-q", "-b", "experiment")
    arun(
        system.remember(
            "The experiment branch serves the frontend on port 3000", cue="frontend dev server port"
        )
    )
    arun(system.dream())
    exp = _ids(arun(system.recall("frontend dev server port", top_k=3)))
    assert exp != base
    git(repo, "checkout", "-q", "main")
    assert _ids(arun(system.recall("frontend dev server port", top_k=3))) == base
    report = system._core.last_sync
    assert report is not None and report.mode == "incremental" and report.files_parsed <= 2
    git(repo, "checkout", "-q", "HEAD~1")  # an older commit: before the dream
    older = arun(system.recall("frontend dev server port", top_k=3))
    assert system._core.last_sync.mode == "incremental"  # type: ignore[union-attr]
    # before the dream the capture is in the inbox: found, and marked as not consolidated
    assert all(
        b.status == "active" or (b.status == "inbox" and "inbox" in b.note) for b in older.ranked
    )
    arun(system.close())


def test_uncommitted_hand_edit_is_found_by_the_next_recall(repo: Path) -> None:
    system = _memory(repo, seed=False)
    listed = arun(system.ls(status="active"))
    target = next(b for b in listed.blocks if "Vite" in b.content)
    path = repo / target.path
    path.write_text(
        path.read_text().replace(
            "Vite; the dev server listens on port 5173",
            "Vite; the dev server listens on port 5173 behind the zephyrproxy",
        )
    )
    r = arun(system.recall("zephyrproxy", top_k=1))
    assert r.ranked and r.ranked[0].id == target.id
    arun(system.close())


def test_parity_passes_fresh_and_fails_when_the_live_index_is_tampered(repo: Path) -> None:
    system = _memory(repo)
    arun(system.recall("warm up", top_k=1))
    assert arun(system.index_parity()).ok
    db = system._core.db()
    with db.write() as conn:
        conn.execute("UPDATE blocks SET content = 'tampered' WHERE content LIKE '%pgbouncer%'")
    result = arun(system.index_parity())
    assert not result.ok and result.differences
    arun(system.close())


def test_rebuild_to_never_the_live_index_and_check_reports_file_and_line(
    repo: Path, tmp_path: Path
) -> None:
    system = _memory(repo, seed=False)
    out = arun(system.index_rebuild(tmp_path / "copy.db"))
    assert out.blocks == len(FACTS)
    from elfmem.errors import InvalidInput

    with pytest.raises(InvalidInput):
        arun(system.index_rebuild(system._core.index_path))
    assert arun(system.index_check()).ok
    target = arun(system.ls(status="active")).blocks[0]
    path = repo / target.path
    path.write_text(path.read_text().replace("<!-- id: ", "<!-- id: x", 1))
    check = arun(system.index_check())
    assert (
        not check.ok
        and check.errors[0]["line"] >= 1
        and target.path.split("/")[-1] in check.errors[0]["path"]
    )
    arun(system.close())


def test_time_travel_answers_from_the_memory_as_it_was(repo: Path) -> None:
    system = _memory(repo, seed=False)
    arun(system.remember("Deploy freezes start on the 20th of December", cue="deploy freeze dates"))
    arun(system.dream())
    now = arun(system.recall("deploy freeze dates", top_k=1))
    assert "Deploy freezes" in now.ranked[0].content
    then = arun(system.recall("deploy freeze dates", top_k=10, at="HEAD~2"))
    assert all("Deploy freezes" not in b.content for b in then.ranked)
    assert then.at is not None
    arun(system.close())


def test_custom_frame_from_config(repo: Path) -> None:
    system = _memory(repo, seed=False)
    cfg = system.config
    from dataclasses import replace

    system._core.config = replace(
        cfg, frames={"ops": {"base": "attention", "include": ["ops"], "top_k": 3}}
    )
    r = arun(system.frame("ops", "database"))
    assert r.ranked and all("ops" in b.tags for b in r.ranked)
    arun(system.close())


def test_signals_equal_across_candidates_do_not_move_the_ranking(repo: Path) -> None:
    system = _memory(repo, seed=False, edges=False)
    from elfmem.retrieval.settings import SearchSettings

    core = system._core
    plain = recall_mod.frame(
        core, "attention", "database", top_k=6, settings=SearchSettings(use_mmr=False)
    )
    sims = [b.similarity for b in plain.ranked]
    assert sims == sorted(sims, reverse=True)
    arun(system.close())
