"""A deterministic embedder with no model, for unit tests of the maths and for demos.

Each lower-cased word is hashed to one signed coordinate, so texts sharing words point the same
way and texts sharing none are orthogonal unless two words collide. Never use it to judge ranking
quality: it knows nothing of meaning, only of shared spelling.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from elfmem.adapters.embedder import normalise_rows, text_list
from elfmem.errors import ConfigError

if TYPE_CHECKING:
    from elfmem.adapters.embedder import Matrix

_WORD = re.compile(r"[a-z0-9]+")


class MockEmbedder:
    """Hashed bag of words: the same text gives the same vector in every process."""

    def __init__(self, dimensions: int = 64) -> None:
        if dimensions < 1:
            raise ConfigError(
                f"MockEmbedder needs at least one dimension, got {dimensions}.",
                "Pass dimensions >= 1 (the default is 64).",
            )
        self._dimensions = dimensions

    @property
    def identity(self) -> str:
        return f"mock:{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        rows = np.zeros((len(text_list(texts)), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                column, sign = self._slot(word)
                rows[row, column] += sign
        return normalise_rows(rows)

    def _slot(self, word: str) -> tuple[int, float]:
        # blake2b, not hash(): str hashes are salted per process (PYTHONHASHSEED).
        value = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "big")
        return (value >> 1) % self._dimensions, 1.0 if value & 1 else -1.0
