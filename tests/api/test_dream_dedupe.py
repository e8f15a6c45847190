"""dream --no-llm never archives a different fact: real repositories, the real embedded model.

Pairs that differ in one content token of any kind (bench/dedupe_bench.py's generator) are all
kept; true duplicates (case, spacing, punctuation, articles, tag order) still collapse. A
same-subject pair with another value gets a ``revises`` ledger edge; nothing else does.
"""

from __future__ import annotations

import random
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.dedupe_bench import (
    FAMILIES,
    distinct_pair,
    duplicate_pair,
    generate,
    measure,
    subjects,
)
from elfmem.adapters.scripted import ScriptedLLM
from elfmem.api import MemorySystem
from elfmem.rhythms.adaptive import centrality_degree, revision_edges
from tests.conftest import arun

DREAM = settings(
    derandomize=True,
    deadline=None,
    max_examples=3,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
VESPER = (
    "After editing its config, restart the vesper router with the --safe flag; then check logs."
)
SERAC = "After editing its config, restart the serac loader with the --safe flag; then check logs."
GATEWAY = (
    "After editing its config, restart the vesper gateway with the --safe flag; then check logs."
)


def fresh() -> tuple[MemorySystem, tempfile.TemporaryDirectory[str]]:
    tmp = tempfile.TemporaryDirectory()
    subprocess.run(["git", "init", "-q", "-b", "main", tmp.name], check=True)
    system, _ = arun(MemorySystem.init(Path(tmp.name)))
    return system, tmp


def older_then_newer(
    system: MemorySystem, pairs: list[tuple[str, str]], newer_tags: list[str] | None = None
) -> tuple[list[str], list[str], object]:
    first = arun(system.remember_many([{"content": a, "tags": ["t/a", "t/b"]} for a, _ in pairs]))
    arun(system.dream(max_blocks=1000, no_llm=True))
    second = arun(
        system.remember_many([{"content": b, "tags": newer_tags or []} for _, b in pairs])
    )
    result = arun(system.dream(max_blocks=1000, no_llm=True))
    return first.created, second.created, result


@pytest.mark.slow
@DREAM
@given(seed=st.integers(0, 10_000))
def test_property_dream_archives_no_pair_that_differs_in_one_content_token(seed: int) -> None:
    rng = random.Random(seed)
    names = subjects(rng, 80)
    pairs = [
        distinct_pair(kind, rng.randrange(9), rng.randrange(9), names[2 * i], names[2 * i + 1])
        for i, kind in enumerate(sorted(FAMILIES) * 3)
    ]
    system, tmp = fresh()
    with tmp:
        older, newer, result = older_then_newer(system, pairs)
        assert len(older) == len(newer) == len(pairs)
        assert not result.duplicates  # type: ignore[attr-defined]
        archived = arun(system.ls(status="archived")).blocks
        assert archived == []
        active = {b.id: b.content for b in arun(system.ls(status="active")).blocks}
        assert [active[i] for i in older] == [a for a, _ in pairs]
        assert [active[i] for i in newer] == [b for _, b in pairs]
        arun(system.close())


@pytest.mark.slow
@DREAM
@given(seed=st.integers(0, 10_000))
def test_property_true_duplicates_still_collapse_onto_their_twin(seed: int) -> None:
    rng = random.Random(seed)
    names = subjects(rng, 30)
    kinds = sorted(FAMILIES)
    pairs = [
        duplicate_pair(
            distinct_pair(rng.choice(kinds), rng.randrange(9), rng.randrange(9), n, n)[0],
            rng.randrange(9),
        )
        for n in names
    ]
    system, tmp = fresh()
    with tmp:
        first = arun(
            system.remember_many([{"content": a, "tags": ["t/a", "t/b"]} for a, _ in pairs])
        )
        arun(system.dream(max_blocks=1000, no_llm=True))
        newer = []
        for _, b in pairs:  # one at a time: an exact repeat is refused by remember itself
            newer.append(arun(system.remember(b, tags=["t/b", "t/a"])).block_id)
        result = arun(system.dream(max_blocks=1000, no_llm=True))
        dup_of = {d["id"]: d["of"] for d in result.duplicates}
        for old, new in zip(first.created, newer, strict=True):
            assert new == old or dup_of.get(new) == old, (old, new)
        assert result.duplicates, "some duplicates must reach dream, not only remember"
        arun(system.close())


def test_the_vesper_router_is_kept_beside_the_serac_loader(repo: Path) -> None:
    """Regression: dream --no-llm archived one as a duplicate of the other."""
    system, _ = arun(MemorySystem.init(repo))
    older, newer, result = older_then_newer(system, [(VESPER, SERAC)])
    assert not result.duplicates and newer[0] in result.promoted  # type: ignore[attr-defined]
    assert revision_edges(system._core.ledger, [*older, *newer]) == []
    arun(system.close())


def test_a_look_alike_that_names_another_thing_is_linked_never_archived(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    older, newer, result = older_then_newer(system, [(VESPER, GATEWAY)])
    assert not result.duplicates and newer[0] in result.promoted  # type: ignore[attr-defined]
    [pair] = result.lookalikes  # type: ignore[attr-defined]
    assert pair["other"] == older[0] and "revises" not in pair
    assert pair["differs"] == [{"kind": "word", "left": ["router"], "right": ["gateway"]}]
    assert "elfmem review lookalikes" in result.summary  # type: ignore[attr-defined]
    assert revision_edges(system._core.ledger, [*older, *newer]) == []
    arun(system.close())


def test_a_changed_value_is_linked_as_a_candidate_revision_and_undo_takes_it_back(
    repo: Path,
) -> None:
    system, _ = arun(MemorySystem.init(repo))
    pairs = [
        (
            "The API rate limit is 100 req/min per key",
            "The API rate limit is now 1000 req/min per key since the March upgrade",
        ),
        (
            "Deploys are allowed on Friday afternoons",
            "Deploys are not allowed on Friday afternoons",
        ),
    ]
    older, newer, result = older_then_newer(system, pairs)
    assert not result.duplicates  # type: ignore[attr-defined]
    assert sorted(revision_edges(system._core.ledger, newer)) == sorted(
        zip(newer, older, strict=True)
    )
    folded = system._core.ledger.folded(newer[1])
    assert folded.edges[(older[1], "revises")] > 0.9
    assert centrality_degree(folded.edges) == centrality_degree(
        {k: w for k, w in folded.edges.items() if k[1] != "revises"}
    )
    events = arun(system.ledger(newer[1])).events
    [revises] = [e for e in events if e.get("relation") == "revises"]
    assert revises["source"] == "dream" and revises["differs"] == [
        {"kind": "negation", "left": [], "right": ["not"]}
    ]
    arun(system.undo())
    assert revision_edges(system._core.ledger, newer) == []
    arun(system.close())


def test_centrality_does_not_count_revises_or_similar_edges() -> None:
    edges = {("a", "revises"): 0.95, ("b", "similar"): 0.9, ("c", "co_retrieval"): 1.0}
    assert centrality_degree(edges) == 1.0


def test_an_llm_duplicate_verdict_archives_and_no_revises_edge_is_guessed(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    system.llm = ScriptedLLM([])
    old = arun(system.remember("Deploys are allowed on Friday afternoons"))
    system.llm.enqueue('{"alignment": 0.5, "tags": []}')  # type: ignore[union-attr]
    arun(system.dream())
    same = arun(system.remember("Deploys may go out on Friday afternoons"))
    system.llm.enqueue(  # type: ignore[union-attr]
        f'{{"alignment": 0.5, "tags": [], "duplicate_of": "{old.block_id}"}}'
    )
    result = arun(system.dream())
    assert result.duplicates == [{"id": same.block_id, "of": old.block_id}]
    assert arun(system.show(same.block_id)).extra.get("duplicate-of") == old.block_id
    neg = arun(system.remember("Deploys are not allowed on Friday afternoons"))
    system.llm.enqueue('{"alignment": 0.5, "tags": [], "revision_of": null}')  # type: ignore[union-attr]
    result = arun(system.dream())
    assert neg.block_id in result.promoted and result.lookalikes
    assert revision_edges(system._core.ledger, [neg.block_id]) == []
    arun(system.close())


def test_the_benchmark_function_reports_both_rates(tmp_path: Path) -> None:
    """``measure`` is what the adaptivity benchmark calls; on its own pairs it must be exact."""
    distinct, duplicates = generate(7, 22)
    rates = measure(distinct, duplicates, tmp_path)
    assert (rates.collapsed, rates.archived) == (1.0, 0.0) and rates.archived_by_kind == {}
    assert rates.refused_by_remember < len(duplicates)  # some had to be caught by dream
