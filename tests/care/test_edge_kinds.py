"""The graph page draws every kind of edge the memory has, each with its own toggle.

Built the way a memory grows: dream adds similarity edges, recalls in three sessions graduate
co-retrieval pairs, ``connect`` adds a declared and a ``related`` link. The browser test reads
back how many edges of each kind the page's own script stroked, then hides one kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.care import visualise as vis
from tests.care.test_visualise import body_attrs, chromium, needs_chromium, page_data
from tests.conftest import arun

FACTS = (
    "Use Redis for session caching",
    "Redis needs a maxmemory-policy or it never evicts",
    "Redis eviction policy allkeys-lru suits a session cache",
    "Postgres needs pgbouncer above 100 clients",
)


def grown(repo: Path, out: Path) -> vis.VisualiseResult:
    """A memory with every kind of edge, and its page written to ``out``."""

    async def build() -> vis.VisualiseResult:
        system, _ = await MemorySystem.init(repo)
        ids = [(await system.remember(f, cue="redis cache")).block_id for f in FACTS]
        await system.dream(no_llm=True)
        for _ in range(3):
            async with system.session():
                await system.recall("redis session cache eviction", top_k=3)
        await system.connect(ids[0], ids[1], "supports")
        await system.connect(ids[0], ids[3], "related")
        core = system._core
        # An outcome edge, as the ledger format allows: written through the ledger's own path.
        line = core.event("edge", ids[2], target=ids[3], relation="outcome", weight=0.5)
        core.record({ids[2]: [line]}, "elfmem: outcome edge")
        try:
            return vis.visualise(core, out)
        finally:
            await system.close()

    return arun(build())


def test_every_edge_kind_is_collected_once_per_pair(repo: Path, tmp_path: Path) -> None:
    result = grown(repo, tmp_path / "graph.html")
    kinds = result.edge_kinds or {}
    assert set(kinds) == set(vis.FAMILIES)
    assert kinds["declared"] == 1 and kinds["related"] == 1 and kinds["outcome"] == 1
    assert kinds["similar"] >= 1 and kinds["co-retrieval"] >= 1
    assert result.edges == sum(kinds.values())
    assert "co-retrieval" in result.summary and "similar" in result.summary
    edges = page_data(Path(result.path))["edges"]
    assert isinstance(edges, list)
    pairs = [(e["source"], e["target"], e["kind"]) for e in edges if e["family"] != "declared"]
    assert len(pairs) == len(set(pairs))  # both ends record a learned edge; it is drawn once
    assert all(s < t for s, t, _ in pairs)
    assert {e["kind"] for e in edges if e["family"] == "co-retrieval"} == {"co_retrieval"}


def test_the_page_stays_one_offline_file_with_a_toggle_per_kind(repo: Path, tmp_path: Path) -> None:
    html = Path(grown(repo, tmp_path / "graph.html").path).read_text()
    for needle in ("http://", "https://", "<link", " src=", "@import", "url("):
        assert needle not in html
    for family in vis.FAMILIES:
        assert json.dumps(family) in html or f"{family}:" in html


@pytest.mark.slow
@needs_chromium
def test_the_browser_draws_each_kind_and_a_toggle_hides_one(repo: Path, tmp_path: Path) -> None:
    result = grown(repo, tmp_path / "graph.html")
    kinds = result.edge_kinds or {}
    run = chromium(tmp_path, Path(result.path).as_uri(), "--dump-dom", "--window-size=1200,800")
    attrs = body_attrs(run.stdout)
    assert attrs["data-ready"] == "1" and attrs["data-error-count"] == "0", run.stderr[-2000:]
    for family in vis.FAMILIES:
        assert attrs[f"data-drawn-{family}"] == str(kinds[family]), family
    assert 'id="toggle-co-retrieval"' in run.stdout and "similarity (dream)" in run.stdout

    hidden = chromium(tmp_path, f"{Path(result.path).as_uri()}#hide=similar,outcome", "--dump-dom")
    attrs = body_attrs(hidden.stdout)
    assert attrs["data-hidden-kinds"] == "outcome,similar"
    assert attrs["data-drawn-similar"] == "0" and attrs["data-drawn-outcome"] == "0"
    assert attrs["data-drawn-declared"] == "1"
    assert attrs["data-drawn-co-retrieval"] == str(kinds["co-retrieval"])
