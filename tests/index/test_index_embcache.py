from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from index_support import HashModel

from elfmem.errors import ModelMismatch
from elfmem.index import EmbeddingCache, default_cache_path
from elfmem.index.embcache import embed_cached, text_hash


def test_default_path_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "elfmem" / "embeddings.db"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / ".cache" / "elfmem" / "embeddings.db"


def test_vectors_round_trip_per_model(cache: EmbeddingCache) -> None:
    vec = np.arange(4, dtype=np.float32)
    cache.put_many("m1", {"h": vec})
    assert np.array_equal(cache.get_many("m1", ["h", "missing"], 4)["h"], vec)
    assert cache.get_many("m2", ["h"], 4) == {}
    assert cache.get_many("m1", ["h"], 8) == {}  # wrong length is a miss


def test_embed_cached_embeds_only_misses(cache: EmbeddingCache) -> None:
    model = HashModel()
    texts = {text_hash(t): t for t in ("alpha beta", "gamma")}
    first, embedded = embed_cached(model, texts, cache)
    assert embedded == 2 and set(first) == set(texts)
    more = {**texts, text_hash("delta"): "delta"}
    second, embedded = embed_cached(model, more, cache)
    assert embedded == 1 and model.texts_embedded == 3
    assert np.array_equal(second[text_hash("gamma")], first[text_hash("gamma")])


def test_model_returning_the_wrong_shape_is_refused(cache: EmbeddingCache) -> None:
    class Broken(HashModel):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            return np.zeros((len(texts), 3), dtype=np.float32)

    with pytest.raises(ModelMismatch):
        embed_cached(Broken(), {"k": "text"}, cache)


def test_corrupt_cache_file_is_recreated(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.db"
    path.write_bytes(b"not a database at all" * 100)
    cache = EmbeddingCache(path)
    cache.put_many("m", {"h": np.ones(2, dtype=np.float32)})
    assert set(cache.get_many("m", ["h"], 2)) == {"h"}
    assert cache.path == path
    cache.close()


def test_unwritable_cache_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    cache = EmbeddingCache(blocker / "embeddings.db")
    assert cache.path is None
    cache.put_many("m", {"h": np.ones(2, dtype=np.float32)})
    assert set(cache.get_many("m", ["h"], 2)) == {"h"}
    cache.close()
