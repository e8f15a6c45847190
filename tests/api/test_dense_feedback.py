"""Dense feedback through the real recall path: it reorders and adds, it never drops a block."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elfmem.api import MemorySystem
from elfmem.retrieval.dense_query import FEEDBACK, FEEDBACK_DEPTH
from elfmem.retrieval.pipeline import _standing_best
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod
from elfmem.rhythms.recall import states_fn
from tests.conftest import arun

TURNS = [
    "Caroline: I went to an LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I'm off to go swimming with the kids, talk soon!",
    "Caroline: I'm researching adoption agencies, I want to give a child a home.",
    "Melanie: I've been running farther to de-stress, it clears my head.",
    "Caroline: My grandma gave me this necklace back home in Sweden.",
    "Melanie: We camped at the beach last summer and roasted marshmallows.",
    "Caroline: The counselling workshop taught me how to listen to people.",
    "Melanie: I painted a sunset over the lake for my pottery class friends.",
    "Caroline: The parade was huge, everyone was happy and felt they belonged.",
    "Melanie: My husband and I celebrated five years of marriage this week.",
    "Caroline: I read Becoming Nicole, it taught me self-acceptance.",
    "Melanie: Playing the violin in the evening keeps me calm.",
]
WORDS = sorted({w.strip(",.!:'").lower() for t in TURNS for w in t.split()} | {"what", "when"})


def _ids(system: MemorySystem, query: str, s: SearchSettings) -> list[str]:
    result = recall_mod.frame(
        system._core, "attention", query, top_k=len(TURNS), reinforce=False, settings=s
    )
    return [b.id for b in result.ranked]


def turns_memory(repo: Path) -> MemorySystem:
    """A memory of ``TURNS``, captured in one batch and consolidated."""
    system, _ = arun(MemorySystem.init(repo, name="Ada", seed=False))
    arun(system.remember_many([{"content": t} for t in TURNS]))
    arun(system.dream(max_blocks=40, no_llm=True))
    return system


def test_feedback_is_on_by_default_and_weight_zero_turns_it_off(repo: Path) -> None:
    system = turns_memory(repo)
    assert (SearchSettings().dense_feedback, SearchSettings().dense_feedback_depth) == (
        FEEDBACK,
        FEEDBACK_DEPTH,
    )
    assert FEEDBACK > 0
    query = "How does Melanie relax?"
    off = _ids(system, query, SearchSettings(dense_feedback=0))
    assert off == _ids(system, query, SearchSettings(dense_feedback_depth=0))
    assert set(off) <= set(_ids(system, query, SearchSettings()))
    arun(system.close())


def test_feedback_never_drops_a_block_that_bears_on_the_query(repo: Path) -> None:
    """Hunting for a fact the second dense search loses: whatever the query and the weight, every
    block recall returns without feedback is still returned with it (top k = every block; three
    seeds a search, so the second dense search cannot hold every block the first one found)."""
    system = turns_memory(repo)

    @settings(
        max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
        st.sampled_from([0.3, 0.6, 1.0, 3.0]),
        st.integers(1, 4),
    )
    def check(query: str, weight: float, depth: int) -> None:
        plain = _ids(system, query, SearchSettings(seeds=3, dense_feedback=0))
        fed_settings = SearchSettings(seeds=3, dense_feedback=weight, dense_feedback_depth=depth)
        fed = _ids(system, query, fed_settings)
        assert set(plain) <= set(fed), (query, set(plain) - set(fed))

    try:
        check()
    finally:
        arun(system.close())


def test_feedback_moves_toward_the_best_block_that_stands(repo: Path) -> None:
    """Feedback toward a refuted or superseded block would pull its look-alikes up with it: the
    second search moves toward the best-ranked block that outcomes and corrections leave
    standing, and toward none when nothing near the top stands."""
    system, _ = arun(MemorySystem.init(repo, name="Ada", seed=False))
    res = arun(system.remember_many([{"content": t} for t in TURNS[:4]]))
    arun(system.dream(max_blocks=40, no_llm=True))
    first, second, third, fourth = res.created
    ranked = [first, second, third, fourth]

    def best(depth: int = 1) -> list[str]:
        core = system._core
        core.sync()
        db = core.db()
        return _standing_best(db, ranked, states_fn(core.ledger, db), depth)

    assert best() == [first]
    for _ in range(3):  # three net refutations: refuted
        arun(system.outcome([first], 0.0))
    assert best() == [second]
    assert best(depth=2) == [second, third]
    arun(system.connect(third, second, relation="supersedes"))  # a declared correction holds
    assert best() == [third]
    for _ in range(3):
        arun(system.outcome([third, fourth], 0.0))  # now refuted, and so is the last one
    assert best() == [second]  # the correction fell: the block it tried to replace stands
    arun(system.outcome([second], 0.0))
    arun(system.outcome([second], 0.0))
    arun(system.outcome([second], 0.0))
    assert best() == []  # none stands: no feedback
    arun(system.close())
