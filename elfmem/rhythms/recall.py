"""Retrieval as the agent calls it: pick a frame, rank, render; optionally from a past commit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from elfmem.index import IndexDB, open_memory_index, sync
from elfmem.retrieval.frames import FrameSpec, frames_from_config, resolve_frame
from elfmem.retrieval.pipeline import SearchSettings, run_frame
from elfmem.retrieval.result import FrameResult
from elfmem.retrieval.state import BlockState
from elfmem.rhythms.core import Core


def frames(core: Core) -> dict[str, FrameSpec]:
    return frames_from_config(core.config.frames)


def _embed(core: Core) -> object:
    def embed(text: str) -> npt.NDArray[np.float32]:
        return np.asarray(core.embedder.embed([text])[0], dtype=np.float32)

    return embed


def frame(
    core: Core,
    name: str,
    query: str | None = None,
    *,
    top_k: int | None = None,
    at: str | None = None,
    settings: SearchSettings | None = None,
) -> FrameResult:
    """Rank and render ``name`` for ``query``; ``at`` answers from the memory as of that commit."""
    spec = resolve_frame(name, frames(core))
    db: IndexDB
    if at is None:
        core.sync(vectors=True)
        db = core.db()
        self_text = core.store.read_self()
    else:
        commit = core.store.resolve(at)
        db = open_memory_index()
        source = core.store.source(at)
        sync(db, source, core.embedder)
        self_text = source.read_self()
    try:
        result = run_frame(
            db,
            spec,
            query,
            embed=_embed(core) if query else None,  # type: ignore[arg-type]
            states=lambda ids: block_states(core, db, ids),
            top_k=top_k,
            agent_name=core.agent,
            self_text=self_text if spec.template == "self" else None,
            settings=settings,
        )
    finally:
        if at is not None:
            db.close()
    if at is not None:
        from dataclasses import replace

        result = replace(result, at=str(commit.id))
    return result


def block_states(core: Core, db: IndexDB, ids: Sequence[str]) -> Mapping[str, BlockState]:
    """Per-block adaptive state for scoring; the prior until the ledger has something to say."""
    return {}
