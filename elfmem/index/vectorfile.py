"""A memory-mapped copy of the vector matrix beside the index, so a new process starts fast and a
write costs its own rows, not a rewrite of every row.

Two files per table. The *slot file* (``index.vectors``) holds float32 rows after a header page
that names the file (a random id). Rows are only ever appended: a row another process has mapped
never changes under it. The *rows file* (``index.vectors.rows``), replaced atomically, says which
block each slot holds (an empty id is a free slot, left by a block that changed or went), its
status, how many slots are valid, and the (index uuid, generation) it describes. Reading checks
the two agree (same file id, the file long enough for the slots): a torn append, a truncated or
foreign file reads as stale, and the reader rebuilds both from SQLite. Too many free slots and the
next write compacts into a new file (temp file + rename; mapped copies keep the old inode).

It is a cache of the ``vectors`` (and ``passages``) tables: any mismatch means "stale".
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from elfmem import filelock
from elfmem.lazyload import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

MAGIC = b"ELFMEM-VECTORS-2\n"
ROWS_MAGIC = b"ELFMEM-VECTOR-ROWS-2\n"
HEADER_BYTES = 4096
"""The slot file's header page; rows start here, so they stay page-aligned for mapping."""
FREE = ""
"""The id of a free slot."""


@dataclass(frozen=True, slots=True)
class VectorTable:
    """Slots in file order: ``ids[i]`` (``FREE`` for a free slot), its status and its row."""

    ids: list[str]
    statuses: list[str]
    matrix: npt.NDArray[np.float32]
    file: str | None = None
    """The slot file whose first ``len(ids)`` rows ``matrix`` maps (None: held in memory)."""

    @property
    def free(self) -> int:
        return sum(1 for i in self.ids if i == FREE)


def vector_file_path(index_file: Path) -> Path:
    return index_file.with_name(index_file.stem + ".vectors")


def passage_file_path(index_file: Path) -> Path:
    """The mapped copy of long blocks' passage vectors (ids repeat: one row per passage)."""
    return index_file.with_name(index_file.stem + ".passages")


def rows_path(path: Path) -> Path:
    return path.with_name(path.name + ".rows")


def read_vector_file(path: Path, key: tuple[str, str]) -> VectorTable | None:
    """The table stored at ``path`` if it was written for ``key`` (uuid, generation), else None."""
    found = read_any(path)
    return found[1] if found is not None and found[0] == key else None


@dataclass(frozen=True, slots=True)
class RowsHeader:
    """What the rows file says about itself: the key, the slot file, how many slots."""

    key: tuple[str, str]
    file: str
    slots: int
    dims: int


def read_header(path: Path) -> RowsHeader | None:
    """The rows file's header alone (a few hundred bytes); None if absent or damaged."""
    try:
        with open(rows_path(path), "rb") as handle:
            return _rows_header(handle)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _rows_header(handle: BinaryIO) -> RowsHeader | None:
    if handle.readline() != ROWS_MAGIC:
        return None
    head = json.loads(handle.readline())
    key = (str(head["uuid"]), str(head["generation"]))
    return RowsHeader(key, str(head["file"]), int(head["slots"]), int(head["dims"]))


def read_any(path: Path) -> tuple[tuple[str, str], VectorTable] | None:
    """The stored table and the key it describes, whatever the key; None if absent or damaged.

    Ids are one newline-joined text and statuses one byte each (an index into a list of
    names), so reading 100k slots is two C-level splits, not a Python loop."""
    try:
        with open(rows_path(path), "rb") as handle:
            header = _rows_header(handle)
            if header is None:
                return None
            names = json.loads(handle.readline())
            text = handle.read(int(names["ids_bytes"])).decode("utf-8")
            codes = np.frombuffer(handle.read(header.slots), dtype=np.uint8)
        ids = text.split("\n") if header.slots else []
        if len(ids) != header.slots or len(codes) != header.slots:
            return None
        statuses = np.asarray(names["statuses"], dtype=object)[codes].tolist() if len(ids) else []
        matrix = _map(path, header.file, header.slots, header.dims)
    except (OSError, ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
        return None
    if matrix is None:
        return None
    return header.key, VectorTable(ids, statuses, matrix, header.file)


def _map(path: Path, file: str, slots: int, dims: int) -> npt.NDArray[np.float32] | None:
    """The first ``slots`` rows of the slot file, if it is the file ``file`` and holds them."""
    with open(path, "rb") as handle:
        head = _header(handle.read(HEADER_BYTES))
        size = os.fstat(handle.fileno()).st_size
    if head is None or head.get("file") != file or head.get("dims") != dims:
        return None
    if size < HEADER_BYTES + slots * dims * 4:
        return None  # truncated: a torn write or a damaged disk
    if not slots or not dims:
        return np.zeros((slots, dims), dtype=np.float32)
    mapped: npt.NDArray[np.float32] = np.memmap(
        path, dtype="<f4", mode="r", offset=HEADER_BYTES, shape=(slots, dims)
    )
    return mapped


def _header(page: bytes) -> dict[str, object] | None:
    if not page.startswith(MAGIC):
        return None
    line = page[len(MAGIC) :].split(b"\n", 1)[0]
    try:
        head = json.loads(line)
    except ValueError:
        return None
    return head if isinstance(head, dict) else None


def write_vector_file(path: Path, key: tuple[str, str], table: VectorTable) -> VectorTable | None:
    """Write ``table`` without its free slots as a new slot file; returns it mapped (None when the
    directory is not writable: that only costs the next reader some time)."""
    live = [i for i, block_id in enumerate(table.ids) if block_id != FREE]
    dims = table.matrix.shape[1] if table.matrix.ndim == 2 else 0
    ids = [table.ids[i] for i in live]
    statuses = [table.statuses[i] for i in live]
    file = secrets.token_hex(8)
    try:
        with filelock.held(path):
            _atomic(path, lambda handle: _write_slots(handle, file, dims, table.matrix, live))
            _write_rows(path, key, file, dims, ids, statuses)
    except OSError:
        return None
    return read_vector_file(path, key)


def append_vector_file(
    path: Path,
    old: tuple[str, str],
    key: tuple[str, str],
    base: VectorTable,
    ids: list[str],
    statuses: list[str],
    rows: npt.NDArray[np.float32],
) -> VectorTable | None:
    """Record a table whose first slots are ``base``'s (the mapped file at key ``old``) and whose
    other slots hold ``rows``, by appending those rows; None if the file moved on meanwhile."""
    dims = base.matrix.shape[1] if base.matrix.ndim == 2 else 0
    if base.file is None or len(ids) != len(base.ids) + len(rows):
        return None
    if len(rows) and rows.shape[1] != dims:
        return None
    try:
        with filelock.held(path):
            found = read_header(path)
            if found is not None and found.key == key:
                return read_vector_file(path, key)  # another process recorded it already
            if found is None or found.key != old or found.file != base.file:
                return None
            if found.slots != len(base.ids) or found.dims != dims:
                return None
            with open(path, "r+b") as handle:
                handle.seek(HEADER_BYTES + len(base.ids) * dims * 4)
                handle.write(np.ascontiguousarray(rows, dtype="<f4").tobytes())
                handle.truncate()  # a torn append of a killed writer, past the valid slots
            _write_rows(path, key, base.file, dims, ids, statuses)
            matrix = _map(path, base.file, len(ids), dims)
    except (OSError, ValueError):
        return None
    return None if matrix is None else VectorTable(ids, statuses, matrix, base.file)


def _write_slots(
    out: BinaryIO, file: str, dims: int, matrix: npt.NDArray[np.float32], live: list[int]
) -> None:
    head = MAGIC + (json.dumps({"file": file, "dims": dims}) + "\n").encode()
    out.write(head + b"\0" * (HEADER_BYTES - len(head)))
    step = 8192
    for start in range(0, len(live), step):
        part = np.asarray(matrix[live[start : start + step]], dtype="<f4")
        out.write(np.ascontiguousarray(part).tobytes())


def _write_rows(
    path: Path, key: tuple[str, str], file: str, dims: int, ids: list[str], statuses: list[str]
) -> None:
    encoded = "\n".join(ids).encode("utf-8")
    names = sorted(set(statuses))
    code = {name: i for i, name in enumerate(names)}
    header = {"uuid": key[0], "generation": key[1], "file": file, "slots": len(ids), "dims": dims}
    body = b"".join(
        [
            ROWS_MAGIC,
            (json.dumps(header) + "\n").encode(),
            (json.dumps({"ids_bytes": len(encoded), "statuses": names}) + "\n").encode(),
            encoded,
            bytes(code[s] for s in statuses),
        ]
    )
    _atomic(rows_path(path), lambda handle: handle.write(body))


def _atomic(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    """Write through a temp file in the same directory, then rename over ``path``."""
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
