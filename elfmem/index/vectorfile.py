"""A memory-mapped copy of the vector matrix beside the index, so a new process starts fast.

Reading 10k vectors out of SQLite costs ~20 ms (and grows with the index), which a one-shot CLI
call pays on every query; mapping this file costs about a millisecond plus the ids. It is a cache
of the ``vectors`` table, labelled with the index's uuid and generation: any mismatch means
"stale", and the reader falls back to SQLite and rewrites it.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

MAGIC = b"ELFMEM-VECTORS-1\n"
_ALIGN = 64


@dataclass(frozen=True, slots=True)
class VectorTable:
    ids: list[str]
    statuses: list[str]
    matrix: npt.NDArray[np.float32]


def vector_file_path(index_file: Path) -> Path:
    return index_file.with_name(index_file.stem + ".vectors")


def passage_file_path(index_file: Path) -> Path:
    """The mapped copy of long blocks' passage vectors (ids repeat: one row per passage)."""
    return index_file.with_name(index_file.stem + ".passages")


def read_vector_file(path: Path, key: tuple[str, str]) -> VectorTable | None:
    """The table stored at ``path`` if it was written for ``key`` (uuid, generation), else None."""
    try:
        with open(path, "rb") as handle:
            if handle.readline() != MAGIC:
                return None
            header = json.loads(handle.readline())
            if [header.get("uuid"), header.get("generation")] != list(key):
                return None
            names = handle.read(int(header["names_bytes"])).decode("utf-8")
            offset = int(header["offset"])
        rows, dims = int(header["rows"]), int(header["dims"])
        pairs = [line.split("\t") for line in names.split("\n")] if rows else []
        matrix = (
            np.memmap(path, dtype="<f4", mode="r", offset=offset, shape=(rows, dims))
            if rows and dims
            else np.zeros((rows, dims), dtype=np.float32)
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if len(pairs) != rows:
        return None
    return VectorTable([p[0] for p in pairs], [p[1] for p in pairs], matrix)


def write_vector_file(path: Path, key: tuple[str, str], table: VectorTable) -> None:
    """Write atomically (temp file + rename); failure only costs the next reader some time."""
    rows, dims = table.matrix.shape if table.matrix.ndim == 2 else (0, 0)
    names = "\n".join(f"{i}\t{s}" for i, s in zip(table.ids, table.statuses, strict=True))
    encoded = names.encode("utf-8")
    header = {"uuid": key[0], "generation": key[1], "rows": rows, "dims": dims}
    header["names_bytes"] = len(encoded)
    # The offset is part of the header, so fix the header's length before computing it.
    header["offset"] = 0
    prefix = len(MAGIC) + len(json.dumps(header)) + 1 + len(encoded) + 20
    header["offset"] = offset = -(-prefix // _ALIGN) * _ALIGN
    head = MAGIC + (json.dumps(header) + "\n").encode() + encoded
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(head + b"\0" * (offset - len(head)))
            handle.write(np.ascontiguousarray(table.matrix, dtype="<f4").tobytes())
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
