"""The simulate frame blends the constitution with mind blocks, inside its token budget."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun

KNOWLEDGE = [
    f"Service {n} talks to the billing API through a retrying client with a {n}s timeout."
    for n in range(15)
]


def test_simulate_returns_every_mind_and_the_constitution_within_budget(repo: Path) -> None:
    async def scenario() -> None:
        system, _ = await MemorySystem.init(repo, seed=True)
        await system.remember_many([{"content": c, "cue": "billing calls"} for c in KNOWLEDGE])
        await system.dream(max_blocks=20, no_llm=True)
        alice = await system.mind_create("alice", "Alice blocks large refactors without tests.")
        ops = await system.mind_create("ops-bot", "The ops bot pages on-call for any 5xx burst.")
        constitution = {b.id for b in (await system.ls(tag="self/constitutional")).blocks}
        assert len(constitution) == 10

        # twelve guarantees against a top_k of five: the guarantees take every slot
        result = await system.frame("simulate", "how will alice react to a big refactor")
        got = {b.id for b in result.blocks}
        assert constitution | {alice.mind_id, ops.mind_id} <= got
        assert result.guaranteed_dropped == []
        assert 0 < result.budget_used <= result.budget_total == 2000
        assert "Alice blocks large refactors" in result.text
        await system.close()

    arun(scenario())


def test_simulate_blends_a_mind_with_relevant_knowledge_when_slots_remain(repo: Path) -> None:
    async def scenario() -> None:
        system, _ = await MemorySystem.init(repo)
        await system.remember_many([{"content": c, "cue": "billing calls"} for c in KNOWLEDGE])
        await system.dream(max_blocks=20, no_llm=True)
        bob = await system.mind_create("bob", "Bob owns the billing API and hates retries.")
        result = await system.frame("simulate", "how will bob react to the retrying client")
        ids = [b.id for b in result.blocks]
        assert bob.mind_id in ids and len(ids) == 5  # the mind plus four knowledge blocks
        assert result.budget_used <= result.budget_total
        await system.close()

    arun(scenario())
