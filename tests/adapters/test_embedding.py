"""Embedders: the shipped static model, the mock, the OpenAI-compatible client and the factory."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from elfmem.adapters.embedding import Embedder, make_embedder
from elfmem.adapters.mock import MockEmbedder
from elfmem.adapters.models import MINILM
from elfmem.adapters.openai_compat import OpenAICompatEmbedder
from elfmem.adapters.static import DEFAULT_MODEL_DIR, StaticEmbedder
from elfmem.adapters.transformer import TransformerEmbedder
from elfmem.config import EmbeddingsConfig
from elfmem.errors import ConfigError, ElfmemError, InvalidInput, ProviderError
from tests.adapters.fake_provider import (
    FAST_RETRY,
    FakeProvider,
    Reply,
    Seen,
    openai_embeddings,
    openai_error,
)

# Cosines of the shipped model (minilm-l6-m2v-384-i8, no PCA), measured when it was built. Its
# unrelated texts sit high (0.68 here); thresholds are calibrated to that (index/calibration.py:
# look-alike 0.970, revision 0.941, edges 0.837, relevance gate 0.807 for this model).
COSINE_FACTS = [
    (
        "The API rate-limits at 100 req/min per key",
        "The API rate-limits at 1000 req/min per key",
        0.99,
    ),
    ("Postgres connection pooling", "pgbouncer for database connections", 0.82),
    ("Postgres connection pooling", "the cat sat on the mat", 0.68),
]


@pytest.fixture(scope="module")
def static() -> StaticEmbedder:
    return StaticEmbedder()


def cos(embedder: StaticEmbedder | MockEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return float(va @ vb)


# ---- the static (default) embedder ------------------------------------------------------------


def test_static_loads_from_package_folder_with_unit_norm_float32_rows(
    static: StaticEmbedder,
) -> None:
    vectors = static.embed(["Postgres connection pooling", "the cat sat on the mat", "x y z"])
    assert static.path == DEFAULT_MODEL_DIR
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, static.dimensions)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_static_ranks_related_sentences_above_unrelated(static: StaticEmbedder) -> None:
    query = "Postgres connection pooling"
    assert (
        cos(static, query, "pgbouncer for database connections")
        > cos(static, query, "the cat sat on the mat") + 0.1
    )


@pytest.mark.parametrize(("a", "b", "expected"), COSINE_FACTS)
def test_static_cosine_facts(static: StaticEmbedder, a: str, b: str, expected: float) -> None:
    assert cos(static, a, b) == pytest.approx(expected, abs=0.03)


def test_static_near_identical_facts_score_above_supersede_threshold(
    static: StaticEmbedder,
) -> None:
    assert cos(static, *COSINE_FACTS[0][:2]) >= 0.9703  # the model's calibrated look-alike cut


def test_static_matches_model2vec_encode(
    static: StaticEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from model2vec import StaticModel

    import elfmem.adapters.static as static_module

    monkeypatch.setattr(static_module, "_BATCH", 4)  # several internal batches, uneven last one

    texts = [
        "Caroline: I went to the LGBTQ support group [shares image: a rainbow flag]",
        "pgbouncer",
        "",
        "\u2603\u2604 \U0001f600",  # characters the vocabulary lacks: [UNK] only
        "Ünïcödé naïve café, CRLF\r\nand tabs\t",
        " ".join(f"word{i}" for i in range(900)),  # past the 512-token truncation
    ] * 3
    model = StaticModel.from_pretrained(DEFAULT_MODEL_DIR, quantize_to="float32")
    reference = model.encode(texts, normalize=True, use_multiprocessing=False)
    np.testing.assert_allclose(static.embed(texts), reference, atol=1e-6)


def test_static_empty_inputs(static: StaticEmbedder) -> None:
    assert static.embed([]).shape == (0, static.dimensions)
    assert not static.embed([""]).any()
    with pytest.raises(InvalidInput):
        static.embed("a bare string")


def test_static_wrong_path_fails_fast_without_any_hub_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub

    def no_hub(*args: object, **kwargs: object) -> None:
        raise AssertionError("the hub must never be contacted")

    for name in ("snapshot_download", "hf_hub_download"):
        monkeypatch.setattr(huggingface_hub, name, no_hub)
    embedder = StaticEmbedder(tmp_path / "no-such-model")
    for use in (
        lambda: embedder.embed(["x"]),
        lambda: embedder.identity,
        lambda: embedder.dimensions,
    ):
        with pytest.raises(ConfigError) as caught:
            use()
        assert "does not exist" in caught.value.message
        assert "embeddings.path" in caught.value.recovery


def test_static_incomplete_or_corrupt_folder_is_a_config_error(tmp_path: Path) -> None:
    partial = tmp_path / "partial"
    partial.mkdir()
    shutil.copy(DEFAULT_MODEL_DIR / "config.json", partial)
    with pytest.raises(ConfigError, match="model.safetensors, tokenizer.json"):
        StaticEmbedder(partial).embed(["x"])
    corrupt = shutil.copytree(DEFAULT_MODEL_DIR, tmp_path / "corrupt")
    (corrupt / "model.safetensors").write_bytes(b"not a tensor file" * 10)
    with pytest.raises(ConfigError, match="Cannot load"):
        StaticEmbedder(corrupt).embed(["x"])


def test_static_identity_is_stable_and_follows_the_weights(
    static: StaticEmbedder, tmp_path: Path
) -> None:
    assert static.identity == StaticEmbedder().identity
    assert static.identity.startswith(f"static:minilm-l6-m2v-{static.dimensions}-i8:")
    assert len(static.identity.rsplit(":", 1)[1]) == 12
    copy = shutil.copytree(DEFAULT_MODEL_DIR, tmp_path / "copy")
    same_weights = StaticEmbedder(copy).identity
    assert same_weights.startswith(f"static:m2v-{static.dimensions}-i8:")  # not the shipped folder
    assert same_weights.rsplit(":", 1)[1] == static.identity.rsplit(":", 1)[1]
    tensors = load_file(copy / "model.safetensors")
    tensors["embeddings"] = tensors["embeddings"] * np.float16(0.5)
    save_file(tensors, copy / "model.safetensors")
    changed = StaticEmbedder(copy)
    assert changed.identity != same_weights
    assert changed.embed(["pgbouncer"]).shape == (1, static.dimensions)


# ---- the mock ---------------------------------------------------------------------------------


def test_mock_is_deterministic_and_word_based() -> None:
    mock = MockEmbedder(64)
    first = mock.embed(["Postgres connection pooling", "postgres POOLING", "the cat sat"])
    np.testing.assert_array_equal(
        first,
        MockEmbedder(64).embed(["Postgres connection pooling", "postgres POOLING", "the cat sat"]),
    )
    assert mock.identity == "mock:64" and mock.dimensions == 64
    assert first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    assert first[0] @ first[1] > first[0] @ first[2]
    # Fixed across processes (blake2b of the word): a salted hash() would move it between runs.
    postgres = mock.embed(["postgres"])[0]
    assert np.flatnonzero(postgres).tolist() == [1]
    assert postgres[1] == -1.0


def test_mock_zero_text_and_bad_dimensions() -> None:
    assert not MockEmbedder(8).embed(["  !? "]).any()
    with pytest.raises(ConfigError):
        MockEmbedder(0)


# ---- the OpenAI-compatible client on the openai SDK, against the fake provider ------------------


def lengths(seen: Seen) -> Reply:
    """Vectors from text lengths, unnormalised and in reverse order: the client must sort by index
    and normalise."""
    texts = seen.body["input"]
    assert isinstance(texts, list)
    rows = [[float(len(t)), 1.0, 0.0, 0.0] for t in texts]
    reply = openai_embeddings(rows)
    assert isinstance(reply.payload, dict)
    reply.payload["data"].reverse()
    return reply


def client(provider: FakeProvider, key_env: str = "", retries: int = 2) -> OpenAICompatEmbedder:
    provider.answer = provider.answer or lengths
    return OpenAICompatEmbedder("nomic-embed-text", provider.url + "/v1", key_env, 4, 5.0, retries)


def test_openai_batches_sorts_normalises_and_sends_the_key(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_KEY", "local-test-key")
    texts = [f"text number {i}" for i in range(600)] + [""]
    embedder = client(provider, "STUB_KEY")
    vectors = embedder.embed(texts)
    assert [len(seen.body["input"]) for seen in provider.seen] == [256, 256, 88]
    assert all(seen.path == "/v1/embeddings" for seen in provider.seen)
    assert all(s.headers["authorization"] == "Bearer local-test-key" for s in provider.seen)
    assert provider.seen[0].body["model"] == "nomic-embed-text"
    assert provider.seen[0].body["encoding_format"] == "float"
    assert "dimensions" not in provider.seen[0].body
    expected = np.array([len("text number 7"), 1.0, 0, 0]) / np.hypot(len("text number 7"), 1.0)
    np.testing.assert_allclose(vectors[7], expected, rtol=1e-6)
    assert vectors.dtype == np.float32 and vectors.shape == (601, 4)
    assert not vectors[600].any()  # the empty text was never sent
    assert embedder.usage.total.calls == 3 and embedder.usage.total.input == 3 * 600


def test_openai_local_server_needs_no_key_and_identity_names_the_endpoint(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    embedder = client(provider)
    embedder.embed(["hello"])
    assert provider.seen[0].headers["authorization"] == "Bearer not-needed"
    assert embedder.identity == f"openai:nomic-embed-text:4@{provider.url}/v1"
    assert embedder.embed([]).shape == (0, 4)
    assert len(provider.seen) == 1


def test_openai_missing_key_is_a_config_error_before_any_request(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ELFMEM_TEST_ABSENT_KEY", raising=False)
    with pytest.raises(ConfigError) as caught:
        client(provider, "ELFMEM_TEST_ABSENT_KEY").embed(["hello"])
    assert "ELFMEM_TEST_ABSENT_KEY" in caught.value.message
    assert "export ELFMEM_TEST_ABSENT_KEY" in caught.value.recovery
    assert provider.seen == []


def test_openai_retries_429_and_5xx_then_succeeds(provider: FakeProvider) -> None:
    provider.script = [
        openai_error(503, "busy", FAST_RETRY),
        openai_error(429, "slow down", FAST_RETRY),
    ]
    assert client(provider).embed(["hello"]).shape == (1, 4)
    assert len(provider.seen) == 3


def test_openai_gives_up_with_the_server_message(provider: FakeProvider) -> None:
    provider.script = [openai_error(500, "model crashed", FAST_RETRY)] * 3
    with pytest.raises(ProviderError, match="HTTP 500: model crashed") as caught:
        client(provider, retries=2).embed(["hello"])
    assert caught.value.recovery
    assert len(provider.seen) == 3
    provider.script = [openai_error(401, "bad key")]
    with pytest.raises(ConfigError, match="bad key") as caught:
        client(provider).embed(["hello"])
    assert "`embeddings.api_key_env`" in caught.value.recovery
    provider.script = [openai_error(404, "model not found")]
    with pytest.raises(ProviderError, match="model not found") as caught:
        client(provider).embed(["hello"])
    assert "embeddings.model" in caught.value.recovery


def test_openai_timeout_is_a_provider_error_pointing_at_the_timeout(
    provider: FakeProvider,
) -> None:
    provider.script = [Reply(200, {}, hold=True)]
    embedder = OpenAICompatEmbedder("m", provider.url + "/v1", "", 4, 0.3, 0)
    with pytest.raises(ProviderError, match="did not answer within 0.3s") as caught:
        embedder.embed(["hello"])
    assert "`embeddings.timeout`" in caught.value.recovery


def test_openai_wrong_shape_and_unreachable_server(provider: FakeProvider) -> None:
    provider.script = [openai_embeddings([[1.0] * 3])]
    with pytest.raises(ConfigError, match="expected"):
        client(provider).embed(["hello"])
    provider.script = [Reply(200, b"<html>not json</html>")]
    with pytest.raises(ProviderError, match="not JSON"):
        client(provider).embed(["hello"])
    closed = OpenAICompatEmbedder("m", "http://127.0.0.1:9/v1", "", 4, 5.0, 0)  # discard port
    with pytest.raises(ElfmemError, match="Cannot reach") as caught:
        closed.embed(["hello"])
    assert "base_url" in caught.value.recovery


# ---- the factory ------------------------------------------------------------------------------


def kind(spec: object) -> type:
    return type(make_embedder(spec))


def test_factory_defaults_to_the_embedded_transformer() -> None:
    # `provider: static` with no path is what every config said before the transformer became
    # the default: such a memory moves over to it by itself
    for spec in (None, {}, {"provider": "static"}, {"provider": "embedded"}, EmbeddingsConfig()):
        embedder = make_embedder(spec)
        assert isinstance(embedder, TransformerEmbedder) and embedder.spec is MINILM
    assert kind({"provider": "static", "path": "~/models/m2v"}) is StaticEmbedder
    static = make_embedder({"provider": "embedded", "model": "static"})
    assert isinstance(static, StaticEmbedder) and static.path == DEFAULT_MODEL_DIR


def test_factory_builds_mock_and_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    mock = make_embedder({"provider": "mock", "dimensions": 32})
    assert isinstance(mock, MockEmbedder) and mock.dimensions == 32
    seed_style = make_embedder({"model": "text-embedding-3-small", "dimensions": 1536})
    assert isinstance(seed_style, OpenAICompatEmbedder)
    assert seed_style.api_key_env == "OPENAI_API_KEY"
    assert seed_style.base_url == "https://api.openai.com/v1"
    local = make_embedder(
        {
            "provider": "openai",
            "model": "nomic",
            "dimensions": 768,
            "base_url": "http://localhost:1234/v1/",
        }
    )
    assert isinstance(local, OpenAICompatEmbedder) and local.api_key_env == ""
    assert local.base_url == "http://localhost:1234/v1"


@pytest.mark.parametrize(
    "spec",
    [
        {"provider": "word2vec"},
        {"provider": "openai", "model": "text-embedding-3-small"},
        {"provider": "static", "model": "text-embedding-3-small"},
        {"provider": "embedded", "model": "bert-of-the-week"},
        {"provider": "embedded", "base_url": "http://localhost:1234/v1"},
        {"provider": "mock", "dimensions": "sixty"},
        {"provider": "openai", "model": "m", "dimensions": 8, "retries": "many"},
        ["not", "a", "mapping"],
    ],
)
def test_factory_rejects_unusable_configs_with_a_recovery(spec: object) -> None:
    with pytest.raises(ConfigError) as caught:
        make_embedder(spec)
    assert caught.value.recovery


def test_every_embedder_fits_the_protocol() -> None:
    embedders: list[Embedder] = [
        MockEmbedder(16),
        StaticEmbedder(),
        TransformerEmbedder(MINILM),
        OpenAICompatEmbedder("m", "http://127.0.0.1:9/v1", "", 4),
    ]
    for embedder in embedders:
        assert isinstance(embedder.identity, str) and embedder.identity
        assert embedder.dimensions > 0
