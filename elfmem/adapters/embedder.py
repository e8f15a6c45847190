"""The embedder contract every embedder implements, and the row helpers they share.

The factory that picks an embedder from the config (``embedding.py``) imports the embedders; they
import only this, so the two never import each other. Vectors are cached and compared across runs,
so every embedder names itself with an ``identity`` that changes whenever its vectors would: the
index refuses to mix vectors of two identities.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from elfmem.errors import InvalidInput
from elfmem.lazyload import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
else:
    np = lazy_module("numpy")


class Embedder(Protocol):
    """Turns texts into float32 rows of length ``dimensions``, each L2-normalised (or all zero)."""

    @property
    def identity(self) -> str:
        """Stable key of the model; vectors are cached by (identity, text hash)."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...


def text_list(texts: Sequence[str]) -> list[str]:
    """Copy ``texts`` to a list, refusing a bare string (it would embed one row per character)."""
    if isinstance(texts, str):
        raise InvalidInput(
            "embed() takes a sequence of texts, got a single string.",
            "Wrap it in a list: embed([text]).",
        )
    return list(texts)


def normalise_rows(matrix: npt.ArrayLike) -> Matrix:
    """Scale each row to unit length in float32; an all-zero row (no known token) stays zero."""
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: Matrix = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return out


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in 1 MiB chunks: a model's weights are tens of MB."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
