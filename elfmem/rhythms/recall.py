"""Retrieval as the agent calls it: pick a frame, rank, render; optionally from a past commit.

Blocks a frame returns are reinforced (their decay clock resets) and pairs returned together are
staged toward co-retrieval edges, at most once per session; both go through the spool, never a
commit per retrieval. ``reinforce=False`` keeps a query from changing what the next one sees.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import combinations

import numpy as np
import numpy.typing as npt

from elfmem import clock
from elfmem.errors import InvalidInput, LockedError
from elfmem.index import IndexDB, open_memory_index, sync
from elfmem.index.calibration import model_cuts
from elfmem.index.queries import BlockRow
from elfmem.retrieval.frames import BUILTIN_FRAMES, FrameSpec, frames_from_config, resolve_frame
from elfmem.retrieval.late import late_fn
from elfmem.retrieval.pipeline import run_frame
from elfmem.retrieval.result import FrameResult
from elfmem.retrieval.settings import SearchSettings, calibrated_settings
from elfmem.retrieval.state import BlockState
from elfmem.rhythms.adaptive import LedgerView, declared_degree
from elfmem.rhythms.core import Core
from elfmem.store.notes import anchor_for_block

logger = logging.getLogger("elfmem")

CO_RETRIEVAL_TOP = 5
"""Only the top few blocks of a result stage co-retrieval pairs (10 pairs at most)."""


def check_top_k(top_k: int | None) -> None:
    """``top_k`` is None (the frame's own) or at least 1: 0 read as "the default" and a negative
    count answered "nothing matched", both hiding the caller's mistake."""
    if top_k is not None and (isinstance(top_k, bool) or top_k < 1):
        raise InvalidInput(
            f"top_k must be 1 or more, not {top_k}.",
            "Ask for at least one block (--top-k 1 or more), or leave top_k out for the "
            "frame's own number.",
        )


def frames(core: Core) -> dict[str, FrameSpec]:
    return frames_from_config(core.config.frames)


def embedder_fn(core: Core) -> Callable[[str], npt.NDArray[np.float32]]:
    def embed(text: str) -> npt.NDArray[np.float32]:
        return np.asarray(core.embedder.embed([text])[0], dtype=np.float32)

    return embed


def states_fn(
    ledger: LedgerView, db: IndexDB
) -> Callable[[Sequence[BlockRow]], Mapping[str, BlockState]]:
    def states(rows: Sequence[BlockRow]) -> Mapping[str, BlockState]:
        return ledger.states(rows, declared_degree(db, [r.id for r in rows]), db)

    return states


def frame(
    core: Core,
    name: str,
    query: str | None = None,
    *,
    top_k: int | None = None,
    at: str | None = None,
    reinforce: bool = True,
    settings: SearchSettings | None = None,
) -> FrameResult:
    """Rank and render ``name`` for ``query``; ``at`` answers from the memory as of that commit."""
    check_top_k(top_k)
    spec = resolve_frame(name, frames(core))
    if at is not None:
        return _frame_at(core, spec, query, top_k, at, settings)
    dense = core.sync_for_recall()
    if query:
        settings = calibrated_settings(settings, model_cuts(core.embedder))
        settings = replace(settings, today=settings.today or clock.today(core.clock))
    db = core.db()
    result = run_frame(
        db,
        spec,
        query,
        embed=embedder_fn(core) if query and dense else None,
        states=states_fn(core.ledger, db),
        late=late_fn(core.embedder) if query else None,
        top_k=top_k,
        agent_name=core.agent,
        self_text=core.store.read_self() if spec.template == "self" else None,
        settings=settings,
    )
    result = _as_asked(result, spec, top_k)
    core.last_recall_block_ids = [b.id for b in result.blocks]
    earned = [b.id for b in result.blocks if b.outcome_balance >= 0]
    if reinforce and earned:  # a block more often refuted than confirmed earns nothing by use
        _reinforce(core, earned)
    return result


def _frame_at(
    core: Core,
    spec: FrameSpec,
    query: str | None,
    top_k: int | None,
    at: str,
    settings: SearchSettings | None,
) -> FrameResult:
    """Content from the commit, ledger state from the newest notes commit written on it or an
    ancestor (``NotesLedger.tip_for``)."""
    commit = core.store.resolve(at)
    db = open_memory_index()
    try:
        source = core.store.source(at)
        sync(db, source, core.embedder)
        if query:
            settings = calibrated_settings(settings, model_cuts(core.embedder))
        tip = core.store.ledger.tip_for(commit) or ""
        ledger = LedgerView(core.store, tip, clock=core.clock)
        result = run_frame(
            db,
            spec,
            query,
            embed=embedder_fn(core) if query else None,
            states=states_fn(ledger, db),
            late=late_fn(core.embedder) if query else None,
            top_k=top_k,
            agent_name=core.agent,
            self_text=source.read_self() if spec.template == "self" else None,
            settings=settings,
        )
    finally:
        db.close()
    return replace(_as_asked(result, spec, top_k), at=str(commit.id))


_FILTER_KEYS = ("include", "exclude", "exclude_except")


def _as_asked(result: FrameResult, spec: FrameSpec, top_k: int | None) -> FrameResult:
    """Speak only of what the caller chose: a shortfall against a number they asked for (not
    the frame's default; "nothing bears" is said either way), and the blocks a filter kept out
    when the filters are the caller's (a frame of their own or filters set in config), never a
    built-in frame's own exclusions."""
    builtin = BUILTIN_FRAMES.get(spec.name)
    own = builtin is not None and all(
        getattr(spec, key) == getattr(builtin, key) for key in _FILTER_KEYS
    )
    quiet = top_k is None and result.bearing > 0
    return replace(result, shortfall="" if quiet else result.shortfall, filtered=not own)


def _reinforce(core: Core, ids: list[str]) -> None:
    now = core.ledger.now_hours()
    entries = [(anchor_for_block(b), core.event("reinforce", b, at=now)) for b in ids]
    session = core.session_id
    staged = core.staged_pairs.setdefault(session, set())
    for a, b in combinations(ids[:CO_RETRIEVAL_TOP], 2):
        pair = (min(a, b), max(a, b))
        if pair in staged:
            continue
        staged.add(pair)
        entries.append((anchor_for_block(a), core.event("cooccur", a, other=b, session=session)))
        entries.append((anchor_for_block(b), core.event("cooccur", b, other=a, session=session)))
    try:
        core.store.spool_events(entries)
    except LockedError:  # a read-only repository serves recall; it just cannot learn from it
        logger.info("recall not reinforced: the repository is read-only")


def record_use(core: Core, block_ids: Sequence[str]) -> int:
    """The weaker signal: these blocks were relevant (not necessarily right). Spooled."""
    now = core.ledger.now_hours()
    core.store.spool_events((anchor_for_block(b), core.event("use", b, at=now)) for b in block_ids)
    return len(block_ids)
