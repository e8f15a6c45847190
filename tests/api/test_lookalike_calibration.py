"""The look-alike cut follows the embedding model: unchanged for the embedded model, raised for a
model whose unrelated statements already sit close, so such a model does not flood review."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from elfmem.adapters.embedding import normalise_rows
from elfmem.adapters.static import StaticEmbedder
from elfmem.api import MemorySystem
from elfmem.block.model import Block
from elfmem.index import EmbeddingCache, list_blocks
from elfmem.index.calibration import (
    LOOKALIKE_FLOOR,
    PROBES,
    REVISION_FLOOR,
    model_cuts,
    probe_key,
    unrelated_cosines,
)
from tests.conftest import arun

if TYPE_CHECKING:
    from elfmem.adapters.embedding import Matrix

VESPER = "After editing its config, restart the vesper router with the --safe flag."
SERAC = "After editing its config, restart the serac loader with the --safe flag."
UNRELATED = [
    "The staging database listens on port 5433.",
    "Maria prefers green tea in the afternoon.",
    "The violin needs new strings before the concert.",
    "Snow chains are required on the pass from November.",
    "Leo's football boots are size 38.",
    "Invoices are numbered by year and by a running counter.",
]


class Crowded:
    """The embedded model with one shared direction added to every vector: the same ranking,
    but unrelated statements land at cosine 0.85–0.95, as an uncalibrated model's do."""

    def __init__(self) -> None:
        self.inner = StaticEmbedder()
        self.shared = normalise_rows(np.ones((1, self.inner.dimensions)))[0] * 2.5

    @property
    def identity(self) -> str:
        return "test:crowded-" + self.inner.identity

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        return normalise_rows(self.inner.embed(texts) + self.shared)


def _cosine(model: object, a: str, b: str) -> float:
    vecs = model.embed([a, b])  # type: ignore[attr-defined]
    return float(vecs[0] @ vecs[1])


def test_the_embedded_models_cuts_are_the_reported_ones(tmp_path: Path) -> None:
    """The embedded model (no PCA) puts unrelated statements high, so its cuts sit above the
    reference 0.90 / 0.80; the values are the ones PROVENANCE.md and docs/benchmarks.md give."""
    cuts = model_cuts(StaticEmbedder(), EmbeddingCache(tmp_path / "cache.db"))
    assert (cuts.lookalike, cuts.revision, cuts.unrelated) == (0.9703, 0.9406, 0.8583)
    # Its real look-alike (one name replaced) is still linked; its unrelated statements are not.
    assert _cosine(StaticEmbedder(), VESPER, SERAC) >= cuts.lookalike
    assert max(_cosine(StaticEmbedder(), a, b) for a in UNRELATED for b in UNRELATED if a < b) < (
        cuts.revision
    )


def test_a_crowded_model_gets_a_higher_cut_kept_in_the_cache(tmp_path: Path) -> None:
    model = Crowded()
    vecs = model.embed(list(PROBES))
    assert np.quantile(unrelated_cosines(vecs), 0.5) > LOOKALIKE_FLOOR - 0.05
    cache = EmbeddingCache(tmp_path / "cache.db")
    cuts = model_cuts(model, cache)
    assert cuts.lookalike > LOOKALIKE_FLOOR and cuts.revision > REVISION_FLOOR
    assert cuts.revision < cuts.lookalike < 1.0
    stored = cache.get_note(f"{model.identity}|{probe_key()}")
    assert stored is not None and str(cuts.lookalike) in stored
    # The cuts for a model's unrelated statements sit above them.
    above = sum(
        _cosine(model, a, b) >= cuts.lookalike for a in UNRELATED for b in UNRELATED if a < b
    )
    assert above == 0


def _dream_in_two_rounds(
    system: MemorySystem, older: list[str], newer: list[str]
) -> list[dict[str, object]]:
    arun(system.remember_many([{"content": c} for c in older]))
    arun(system.dream(no_llm=True))
    arun(system.remember_many([{"content": c} for c in newer]))
    return list(arun(system.dream(no_llm=True)).lookalikes)


def test_a_crowded_model_links_the_real_look_alike_but_no_unrelated_pair(repo: Path) -> None:
    model = Crowded()
    fixed = sum(
        _cosine(model, a, b) >= LOOKALIKE_FLOOR for a in UNRELATED for b in UNRELATED if a < b
    )
    assert fixed > 0  # with the old fixed cut these unrelated pairs would be linked
    system, _ = arun(MemorySystem.init(repo))
    system._core.embedder = model
    pairs = _dream_in_two_rounds(system, [VESPER, *UNRELATED[:3]], [SERAC, *UNRELATED[3:]])
    contents = {b.id: b.content for b in _blocks(system)}
    linked = {frozenset((contents[str(p["id"])], contents[str(p["other"])])) for p in pairs}
    assert linked == {frozenset((VESPER, SERAC))}
    assert [(p["newer_content"], p["older_content"]) for p in arun(system.lookalikes()).pairs] == [
        (SERAC, VESPER)
    ]
    arun(system.close())


def _blocks(system: MemorySystem) -> list[Block]:
    return [r.to_block() for r in list_blocks(system._core.db())]
