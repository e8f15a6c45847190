from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elfmem.index import EmbeddingCache, IndexDB, open_index


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    c = EmbeddingCache(tmp_path / "cache" / "embeddings.db")
    yield c
    c.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[IndexDB]:
    d = open_index(tmp_path / "git" / "elfmem" / "index.db")
    yield d
    d.close()
