"""Shared test material for the index: block files in the seed format and a fake embedder."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from elfmem.index.db import IndexDB
from elfmem.index.queries import list_blocks
from elfmem.index.source import DictSource

_WORD = re.compile(r"\w+")


class HashModel:
    """A deterministic embedder: words hashed into buckets, rows L2-normalised. Counts texts."""

    def __init__(self, identity: str = "test/hash-64", dimensions: int = 64) -> None:
        self.identity = identity
        self.dimensions = dimensions
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dimensions] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        self.texts_embedded += len(texts)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def bid(n: int) -> str:
    """A valid block id made from a number."""
    return f"{n:016x}"


def block_text(
    block_id: str,
    content: str,
    *,
    cls: str = "knowledge",
    tags: Sequence[str] = (),
    cue: str = "",
    created: str = "2026-01-01T00:00:00+00:00",
    relations: Sequence[tuple[str, str]] = (),
) -> str:
    lines = [
        f"## {content.splitlines()[0][:60]}",
        f"<!-- id: {block_id}  cls: {cls}  tags: [{', '.join(tags)}]  pinned: false"
        f"  created: {created} -->",
    ]
    if cue:
        lines.append(f"cue:: {cue}")
    lines += [f"{kind}:: [[{target}]]" for kind, target in relations]
    lines += ["", content, ""]
    return "\n".join(lines)


def memory_file(*blocks: str) -> bytes:
    return "\n".join(blocks).encode()


def corpus(files: int = 5, per_file: int = 4) -> dict[str, bytes]:
    """``files`` active buckets of ``per_file`` blocks; block n says 'topic<n>'."""
    out: dict[str, bytes] = {}
    n = 0
    for f in range(files):
        blocks = []
        for _ in range(per_file):
            blocks.append(block_text(bid(n), f"note about topic{n} and shared words"))
            n += 1
        out[f"notes/knowledge/2026-{f + 1:02d}.md"] = memory_file(*blocks)
    return out


def source_with(files: dict[str, bytes], *, worktree: bool = True) -> DictSource:
    return DictSource.from_files(files, worktree=worktree)


def block_ids(db: IndexDB) -> set[str]:
    return {r.id for r in list_blocks(db)}
