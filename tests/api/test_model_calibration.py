"""Every cosine constant follows the embedding model: the relevance gate, the near-twin cut, the
edge threshold and the bearing cut are stated for the embedded model and moved to another model's
scale, so a model whose unrelated statements sit high neither lets everything through the gate nor
links everything; and a memory embedded by the previous embedded model re-embeds by itself."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from elfmem.adapters.embedding import make_embedder, normalise_rows
from elfmem.adapters.static import StaticEmbedder
from elfmem.api import MemorySystem
from elfmem.index import EmbeddingCache
from elfmem.index.calibration import DEFAULT_CUTS, REFERENCE_ANCHOR, model_cuts
from elfmem.retrieval.ranking import TWIN_COSINE
from elfmem.retrieval.settings import DENSE_FLOOR, calibrated_settings
from tests.api.test_lookalike_calibration import UNRELATED, Crowded
from tests.conftest import arun

if TYPE_CHECKING:
    from elfmem.adapters.embedding import Matrix

OLD_IDENTITY = "static:minilm-l6-m2v-256-f16:e79551e309c0"
"""The identity of the model shipped before this one (PCA to 256 dimensions, float16)."""


class OldModel:
    """Stands in for the previously shipped model: its identity and its 256 dimensions (the
    first 256 of the shipped model's, renormalised), so an index it built looks like one an
    earlier elfmem wrote."""

    def __init__(self) -> None:
        self.inner = StaticEmbedder()

    @property
    def identity(self) -> str:
        return OLD_IDENTITY

    @property
    def dimensions(self) -> int:
        return 256

    def embed(self, texts: Sequence[str]) -> Matrix:
        return normalise_rows(self.inner.embed(texts)[:, :256])


def test_the_reference_scale_is_unchanged_and_the_shipped_model_gets_its_own(
    tmp_path: Path,
) -> None:
    assert DEFAULT_CUTS.unrelated == REFERENCE_ANCHOR
    for cosine in (DENSE_FLOOR, 0.45, 0.6, TWIN_COSINE):
        assert DEFAULT_CUTS.scaled(cosine) == cosine
    shipped = model_cuts(StaticEmbedder(), EmbeddingCache(tmp_path / "cache.db"))
    settings = calibrated_settings(None, shipped)
    # The values docs/benchmarks.md reports for the model without PCA.
    assert (settings.dense_floor, settings.twin_cosine) == (0.8071, 0.9703)
    assert (shipped.scaled(0.45), shipped.scaled(0.6)) == (0.8368, 0.8813)


class Crowder(Crowded):
    """``Crowded`` under its own identity, so its calibration is made here, not remembered."""

    @property
    def identity(self) -> str:
        return "test:crowder-" + self.inner.identity


def test_a_crowded_model_gets_a_higher_gate_and_higher_cuts(tmp_path: Path) -> None:
    shipped = model_cuts(StaticEmbedder(), EmbeddingCache(tmp_path / "a.db"))
    crowded = model_cuts(Crowder(), EmbeddingCache(tmp_path / "b.db"))
    assert crowded.unrelated > shipped.unrelated
    ours, theirs = calibrated_settings(None, shipped), calibrated_settings(None, crowded)
    assert theirs.dense_floor > ours.dense_floor  # type: ignore[operator]
    assert theirs.twin_cosine > ours.twin_cosine >= TWIN_COSINE  # type: ignore[operator]
    assert crowded.scaled(0.45) > shipped.scaled(0.45)
    # Settings given explicitly are kept as they are.
    fixed = calibrated_settings(calibrated_settings(None, shipped), crowded)
    assert fixed.dense_floor == ours.dense_floor


def _bearing_by_vector(system: MemorySystem, query: str) -> int:
    result = arun(system.recall(query, top_k=10, reinforce=False))
    return sum(1 for b in result.blocks if b.via == "search")


def test_a_crowded_models_gate_keeps_unrelated_blocks_out(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    model = Crowder()
    system._core.embedder = model
    arun(system.remember_many([{"content": c} for c in UNRELATED]))
    arun(system.dream(no_llm=True))
    query = "which aquarium fish tolerate hard tap water"  # shares no word with any block
    vecs = model.embed([query, *UNRELATED])
    assert min(vecs[1:] @ vecs[0]) >= DENSE_FLOOR  # the fixed gate would let all six through
    assert _bearing_by_vector(system, query) == 0
    assert _bearing_by_vector(system, "Which size are Leo's football boots") >= 1
    arun(system.close())


def test_an_index_built_by_the_previous_model_re_embeds_by_itself(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    system._core.embedder = OldModel()
    arun(system.remember_many([{"content": c} for c in UNRELATED]))
    arun(system.dream(no_llm=True))
    assert system._core.db().meta()["model_identity"] == OLD_IDENTITY
    arun(system.close())
    system = arun(MemorySystem.from_config(repo))  # the shipped model now
    result = arun(system.recall("What size are the football boots", reinforce=False))
    assert result.blocks and result.blocks[0].content == UNRELATED[4]
    shipped = make_embedder(None)
    assert system._core.db().meta()["model_identity"] == shipped.identity
    warned = system.take_warnings()
    assert any(OLD_IDENTITY in w and "re-embedded" in w for w in warned), warned
    sizes = {n for (n,) in system._core.db().conn.execute("SELECT length(vec) FROM vectors")}
    assert sizes == {shipped.dimensions * 4}
    assert np.isfinite(result.blocks[0].similarity)
    arun(system.close())


def test_the_transformer_gets_its_own_cuts_from_the_same_probes(tmp_path: Path) -> None:
    """all-MiniLM-L6-v2 puts unrelated statements near 0 (at most 0.41 among the probes), so its
    gate and edge threshold land far below the static model's; the look-alike and revision cuts
    keep their floors (docs/embedding.md lists every threshold per model)."""
    cuts = model_cuts(make_embedder(None), EmbeddingCache(tmp_path / "cache.db"))
    static = model_cuts(StaticEmbedder(), EmbeddingCache(tmp_path / "static.db"))
    assert cuts.unrelated < 0.45 < static.unrelated
    settings = calibrated_settings(None, cuts)
    assert settings.dense_floor is not None and 0.15 < settings.dense_floor < 0.25
    assert (cuts.lookalike, cuts.revision) == (0.90, 0.80)
