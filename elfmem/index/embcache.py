"""The embedding cache: vectors keyed by (model identity, sha256 of the exact text embedded).

It lives in the user's cache dir, shared by every repository and branch, so rebuilds, branch
switches and ``--at REV`` previews reuse vectors instead of paying the model again. It is a cache:
a corrupt or unwritable file is recreated or replaced by an in-memory one, never fatal.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from elfmem.errors import ModelMismatch
from elfmem.lazyload import lazy_module
from elfmem.progress import Progress, silent

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
else:
    np = lazy_module("numpy")

EMBED_BATCH = 256
_CHUNK = 500  # stays under SQLite's bound-parameter limit with room to spare


class VectorModel(Protocol):
    """An embedder: ``embed`` returns float32 rows of length ``dimensions``, L2-normalised."""

    @property
    def identity(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vector: ...


def default_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elfmem" / "embeddings.db"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """get/put of vectors by (model identity, text hash), safe for several processes at once."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        if self.path is not None:
            try:
                return _connect(self.path)
            except (OSError, sqlite3.Error):
                try:
                    self.path.unlink(missing_ok=True)
                    return _connect(self.path)
                except (OSError, sqlite3.Error):
                    self.path = None  # unwritable: fall back to a per-process cache
        return _connect(None)

    def get_many(self, identity: str, hashes: Iterable[str], dimensions: int) -> dict[str, Vector]:
        """The cached vectors among ``hashes``; rows of the wrong length count as misses."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, Vector] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT text_hash, vec FROM embeddings WHERE model = ? AND text_hash IN ({marks})"
            )
            for key, blob in self._query(sql, [identity, *chunk]):
                if len(blob) == 4 * dimensions:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, identity: str, vectors: Mapping[str, Vector]) -> None:
        rows = [
            (identity, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()
        ]
        try:
            with self._conn:
                self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)
        except sqlite3.DatabaseError:
            self._recreate()

    def get_blobs(self, kind: str, hashes: Iterable[str]) -> dict[str, bytes]:
        """Other rows derived from a text (a long block's tokens, ``tokenrows``) by hash, stored
        beside the vectors under a ``kind`` no model identity takes."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, bytes] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = "SELECT text_hash, vec FROM embeddings WHERE model = ? AND text_hash IN "
            found.update(self._query(f"{sql}({marks})", [kind, *chunk]))
        return found

    def put_blobs(self, kind: str, blobs: Mapping[str, bytes]) -> None:
        rows = [(kind, k, v) for k, v in blobs.items()]
        try:
            with self._conn:
                self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)
        except sqlite3.DatabaseError:
            self._recreate()

    def get_note(self, key: str) -> str | None:
        """A small text stored beside the vectors (a model's calibration), or None."""
        rows = self._query("SELECT value FROM notes WHERE key = ?", [key])
        return str(rows[0][0]) if rows else None

    def put_note(self, key: str, value: str) -> None:
        try:
            with self._conn:
                self._conn.execute("INSERT OR REPLACE INTO notes VALUES (?, ?)", (key, value))
        except sqlite3.DatabaseError:
            self._recreate()

    def _query(self, sql: str, params: list[str]) -> list[tuple[str, bytes]]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError:
            self._recreate()
            return []

    def _recreate(self) -> None:
        self._conn.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        self._conn = self._open()

    def close(self) -> None:
        self._conn.close()


def _connect(path: Path | None) -> sqlite3.Connection:
    if path is None:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=10.0, check_same_thread=False)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    # A rowid table: rows are ~1 KB vectors, which WITHOUT ROWID stores badly (20x the insert CPU).
    conn.execute(
        "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, text_hash TEXT NOT NULL,"
        " vec BLOB NOT NULL)"
    )
    conn.execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS embeddings_key ON embeddings (model, text_hash)"
    )
    conn.execute("CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("SELECT count(*) FROM embeddings WHERE model = ''").fetchone()
    return conn


def embed_cached(
    model: VectorModel,
    texts: Mapping[str, str],
    cache: EmbeddingCache,
    progress: Progress = silent,
) -> tuple[dict[str, Vector], int]:
    """Vectors for ``texts`` (text hash → text): cache hits first, misses embedded in batches.

    Returns the vectors by text hash and how many texts were actually embedded. ``progress``
    hears ``("embed", done, total)`` after each batch; cache hits cost nothing and are not counted.
    """
    found = cache.get_many(model.identity, texts.keys(), model.dimensions)
    missing = [k for k in texts if k not in found]
    for start in range(0, len(missing), EMBED_BATCH):
        keys = missing[start : start + EMBED_BATCH]
        matrix = _checked(model, model.embed([texts[k] for k in keys]), len(keys))
        fresh = {k: matrix[i] for i, k in enumerate(keys)}
        cache.put_many(model.identity, fresh)
        found.update(fresh)
        progress("embed", start + len(keys), len(missing))
    return found, len(missing)


def _checked(model: VectorModel, matrix: Vector, rows: int) -> Vector:
    out = np.asarray(matrix, dtype=np.float32)
    if out.shape != (rows, model.dimensions):
        raise ModelMismatch(
            f"model {model.identity} returned vectors of shape {out.shape}, "
            f"expected ({rows}, {model.dimensions})",
            "Check the embedding model configuration (`elfmem doctor`).",
        )
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    normalised: Vector = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return normalised
