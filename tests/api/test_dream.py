"""dream --no-llm: duplicates never cost a fact; look-alikes that differ are kept and linked."""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from tests.conftest import arun, git

PAIRS = [
    ("The API rate-limits at 100 req/min per key", "The API rate-limits at 1000 req/min per key"),
    ("Deploys are allowed on Friday", "Deploys are not allowed on Friday"),
    ("Service 17 listens on port 8017", "Service 18 listens on port 8018"),
]


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_lookalikes_that_differ_keep_both_and_are_linked(repo: Path, old: str, new: str) -> None:
    system, _ = arun(MemorySystem.init(repo))
    a = arun(system.remember(old))
    arun(system.dream())
    b = arun(system.remember(new))
    result = arun(system.dream())
    assert b.block_id in result.promoted and not result.duplicates
    active = {x.id: x.content for x in arun(system.ls(status="active")).blocks}
    assert active[a.block_id] == old and active[b.block_id] == new
    if result.lookalikes:
        assert result.lookalikes[0]["other"] == a.block_id and result.lookalikes[0]["differs"]
    arun(system.close())


def test_true_duplicates_are_archived_with_their_twin_named(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    a = arun(system.remember("The build cache lives in /var/cache/build"))
    arun(system.dream())
    # The same statement with different spacing and punctuation: a true duplicate.
    b = arun(system.remember("The build cache lives in  /var/cache/build."))
    result = arun(system.dream())
    assert [d["of"] for d in result.duplicates] == [
        a.block_id
    ] and b.block_id not in result.promoted
    archived = arun(system.show(b.block_id))
    assert archived.status == "archived" and archived.extra.get("duplicate-of") == a.block_id
    arun(system.close())


def test_dream_is_bounded_reports_remaining_and_is_one_commit(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(
        system.remember_many(
            [{"content": f"Distinct fact {i} about queue q{i}"} for i in range(12)]
        )
    )
    assert system.should_dream
    first = arun(system.dream(max_blocks=5))
    assert first.processed == 5 and first.inbox_remaining == 7 and "no LLM" in first.note
    before = int(git(repo, "rev-list", "--count", "HEAD"))
    second = arun(system.dream())  # without an LLM the default drains the whole inbox
    assert second.processed == 7 and second.inbox_remaining == 0
    assert int(git(repo, "rev-list", "--count", "HEAD")) == before + 1
    assert not system.should_dream
    empty = arun(system.dream())
    assert empty.processed == 0 and empty.commit_id is None
    arun(system.close())


def test_undo_of_a_dream_restores_the_inbox_exactly(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(
        system.remember_many([{"content": f"Inbox fact {i}", "cue": f"cue {i}"} for i in range(4)])
    )
    inbox_before = [(b.id, b.content, b.path) for b in arun(system.inbox()).blocks]
    arun(system.dream(max_blocks=10))
    assert arun(system.inbox()).blocks == []
    arun(system.undo())
    assert [(b.id, b.content, b.path) for b in arun(system.inbox()).blocks] == inbox_before
    arun(system.close())


def test_dream_with_a_scripted_llm_promotes_supersedes_rejects_and_survives_garbage(
    repo: Path,
) -> None:
    from elfmem.adapters.scripted import ScriptedLLM

    system, _ = arun(MemorySystem.init(repo))
    system.llm = ScriptedLLM([])
    old = arun(system.remember("The API rate-limits at 100 req/min per key", cue="api limits"))
    system.llm.enqueue(
        '{"alignment": 0.7, "tags": ["api"], "summary": "rate limit", "revision_of": null}'
    )  # type: ignore[union-attr]
    first = arun(system.dream())
    assert first.mode == "llm" and first.promoted == [old.block_id]
    assert "api" in arun(system.show(old.block_id)).tags
    new = arun(system.remember("The API rate-limits at 1000 req/min per key", cue="api limits"))
    dup = arun(system.remember("The API rate-limits at 1000 req/min per key.", cue="api limits"))
    odd = arun(system.remember("Lunch is at noon on Thursdays"))
    system.llm.enqueue(  # type: ignore[union-attr]
        f'Sure! {{"alignment": 0.9, "tags": [], "summary": "raised", '
        f'"revision_of": "{old.block_id}"}}'
    )
    system.llm.enqueue("I cannot answer in JSON today.")  # type: ignore[union-attr]
    second = arun(system.dream())
    assert second.superseded == [{"id": old.block_id, "by": new.block_id}]
    assert [d["id"] for d in second.duplicates] == [dup.block_id]
    assert second.malformed == 1 and odd.block_id in second.promoted
    assert arun(system.show(old.block_id)).status == "archived"
    assert ["supersedes", old.block_id] in arun(system.show(new.block_id)).relations
    arun(system.undo())
    assert arun(system.show(old.block_id)).status == "active"
    arun(system.close())


def test_host_analyses_are_validated_and_used(repo: Path) -> None:
    from elfmem.errors import InvalidInput

    system, _ = arun(MemorySystem.init(repo))
    r = arun(system.remember("Prefer small pull requests"))
    with pytest.raises(InvalidInput):
        arun(system.dream(host_analyses={r.block_id: {"alignment": 7}}))
    result = arun(
        system.dream(host_analyses={r.block_id: {"alignment": 0.9, "tags": ["practice/review"]}})
    )
    assert (
        result.promoted == [r.block_id] and "practice/review" in arun(system.show(r.block_id)).tags
    )
    arun(system.close())


@pytest.mark.parametrize("enabled", [True, False])
def test_dream_pauses_the_cycle_collector_and_restores_it(repo: Path, enabled: bool) -> None:
    """A large dream runs without Python's cycle collector (its full passes walk every block the
    run holds); the caller's setting is back afterwards, whether it was on or off."""
    import gc

    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("The staging database listens on port 5433."))
    seen: list[bool] = []
    original = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.MonkeyPatch.context() as mp:
            from elfmem.rhythms import dream as dream_module

            inner = dream_module._judge
            mp.setattr(
                dream_module,
                "_judge",
                lambda *a, **k: (seen.append(gc.isenabled()), inner(*a, **k))[1],
            )
            result = arun(system.dream())
        assert result.promoted and seen == [False]
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if original else gc.disable)()
