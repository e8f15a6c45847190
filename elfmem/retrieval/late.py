"""Late interaction: query words against short runs of a long block's tokens (issue 15).

The embedded static model embeds a text as the mean of its token vectors, so two long blocks of
the same people and subjects sit at cosine 0.84-0.95 and the dense list hardly tells them apart.
Here each content word of the query keeps its own token vector and takes its best cosine against
windows of ``WINDOW`` consecutive tokens of a block (mean-pooled, every ``STRIDE`` tokens); the
block's score is the mean of those maxima over the query's tokens. Score fusion blends it in with
``LATE_SHARE`` after min-max scaling over the candidates (``fusion.score_fusion``), so it only
reorders what the lexical and dense searches found.

Chosen on the long-document replay by leave-one-conversation-out, one setting per fold for both
forms (docs/benchmarks.md, "Late interaction with the static token vectors"): windows of 5 tokens,
no IDF weighting, share 0.1 beside a lexical share of 0.2.

A block's token ids and window norms are kept between recalls (``LateScorer``, bounded by
``CACHED_TOKENS``), so a query costs one product of its few token vectors with the table rows the
candidates use, and a running sum per block. A block first seen by this process is tokenised and
its windows summed: in a new process (a CLI call) over many long candidates that is most of the
cost (docs/benchmarks.md has the numbers); keeping the ids and norms in the index is the next step.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from elfmem.index.fulltext import STOP_WORDS

WINDOW = 5
"""Tokens per window a query token is matched against."""
STRIDE = 2
"""A window starts every this many tokens."""
LATE_SHARE = 0.1
"""Weight of the min-max scaled late-interaction score in score fusion."""
CACHED_TOKENS = 2_000_000
"""Tokens of block text whose ids and window norms a scorer keeps (about 12 bytes each)."""
STOP_TOKENS = STOP_WORDS
"""Query tokens that carry no subject (the lexical search's stop words)."""

Late = Callable[[str, Mapping[str, str]], dict[str, float]]
"""Late-interaction scores of the given blocks (id -> text) for a query."""


class TokenModel(Protocol):
    """A static embedding model that exposes its tokens (``adapters.static.StaticEmbedder``)."""

    def tokens(self, text: str) -> tuple[list[str], npt.NDArray[np.int64]]:
        """The text's tokens as the tokenizer spells them and their rows of the table."""
        ...

    def token_ids(self, texts: Sequence[str]) -> list[npt.NDArray[np.int64]]:
        """Each text's token ids (as ``tokens`` gives them), tokenised in one batch."""
        ...

    def token_table(self) -> npt.NDArray[np.float32]:
        """The model's token vectors, one row per token id."""
        ...


class LateScorer:
    """Late-interaction scores for one model, with the blocks' tokens kept between recalls."""

    def __init__(self, model: TokenModel, cached_tokens: int = CACHED_TOKENS) -> None:
        self.model = model
        self.cached_tokens = cached_tokens
        self._lock = threading.Lock()
        self._blocks: OrderedDict[bytes, _Windows] = OrderedDict()
        self._held = 0

    def scores(self, query: str, texts: Mapping[str, str]) -> dict[str, float]:
        """Per block: the mean over the query's content tokens of each one's best window cosine.

        Empty when the query has no content token (nothing to match) or there are no blocks.
        """
        table = self.model.token_table()
        q_ids = self.query_ids(query)
        if not len(q_ids) or not texts:
            return {}
        q = _unit(table[q_ids])
        blocks = self._blocks_of(list(texts.values()), table)
        ids = np.concatenate([b.ids for b in blocks])
        if not len(ids):
            return dict.fromkeys(texts, 0.0)
        seen = np.zeros(len(table), dtype=bool)
        seen[ids] = True
        used = np.flatnonzero(seen)
        where = np.zeros(len(table), dtype=np.int64)
        where[used] = np.arange(len(used))
        # einsum, not BLAS: for a few query rows it does not wait on a thread pool of a busy machine
        dots = np.einsum("kd,nd->kn", q, table[used])
        per_token = dots[:, where[ids]]  # query token x block token
        # running sums in float64: over every candidate's tokens float32 would lose ~1e-3
        run = np.zeros((len(q), len(ids) + 1), dtype=np.float64)
        np.cumsum(per_token, axis=1, out=run[:, 1:])
        offsets = np.cumsum([0] + [len(b.ids) for b in blocks[:-1]])
        starts = np.concatenate([o + b.starts for o, b in zip(offsets, blocks, strict=True)])
        ends = np.concatenate([o + b.ends for o, b in zip(offsets, blocks, strict=True)])
        norms = np.concatenate([b.norms for b in blocks])
        cos = (run[:, ends] - run[:, starts]) / norms
        counts = np.array([len(b.norms) for b in blocks])
        firsts = np.cumsum(np.concatenate([[0], counts[:-1]]))
        best = np.full((len(q), len(blocks)), -1.0, dtype=np.float32)
        has = counts > 0
        if has.any():
            best[:, has] = np.maximum.reduceat(cos, firsts[has], axis=1)
        means = best.mean(axis=0)
        return {
            block_id: float(m) if n else 0.0
            for block_id, m, n in zip(texts, means, counts, strict=True)
        }

    def query_ids(self, query: str) -> npt.NDArray[np.int64]:
        """The query's content tokens, once each: no stop words, punctuation or lone letters."""
        words, ids = self.model.tokens(query)
        kept: list[int] = []
        for word, token in zip(words, ids.tolist(), strict=True):
            bare = word.removeprefix("##")
            if word in STOP_TOKENS or not any(c.isalnum() for c in bare):
                continue
            if len(bare) == 1 and not bare.isdigit() and not word.startswith("##"):
                continue
            if token not in kept:
                kept.append(token)
        return np.array(kept, dtype=np.int64)

    def _blocks_of(self, texts: list[str], table: npt.NDArray[np.float32]) -> list[_Windows]:
        """Each text's windows: kept ones as they are, the others tokenised in one batch."""
        keys = [hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts]
        found: dict[bytes, _Windows] = {}
        with self._lock:
            for key in keys:
                hit = self._blocks.get(key)
                if hit is not None:
                    self._blocks.move_to_end(key)
                    found[key] = hit
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            made = self.model.token_ids(list(missing.values()))
            with self._lock:
                for key, ids in zip(missing, made, strict=True):
                    found[key] = entry = _windows(ids, table)
                    if key not in self._blocks:
                        self._blocks[key] = entry
                        self._held += len(ids)
                while self._held > self.cached_tokens and len(self._blocks) > 1:
                    _, old = self._blocks.popitem(last=False)
                    self._held -= len(old.ids)
        return [found[key] for key in keys]


@dataclass(frozen=True)
class _Windows:
    """A block's token ids and its windows: first token, end (exclusive), norm of the sum."""

    ids: npt.NDArray[np.int64]
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]
    norms: npt.NDArray[np.float32]


def _windows(ids: npt.NDArray[np.int64], table: npt.NDArray[np.float32]) -> _Windows:
    """Windows of ``WINDOW`` tokens every ``STRIDE`` (one window if the block is shorter).

    A window's sum and its mean point the same way, so cosines need only the sums' norms.
    """
    n = len(ids)
    if not n:
        empty = np.zeros(0, dtype=np.int64)
        return _Windows(ids, empty, empty, np.zeros(0, dtype=np.float32))
    starts = np.arange(0, max(1, n - WINDOW + 1), STRIDE, dtype=np.int64)
    ends = np.minimum(starts + WINDOW, n)
    # the sum of WINDOW shifted gathers (a zero row past the end): cheaper than a running sum
    rows = np.vstack([table[ids], np.zeros((WINDOW, table.shape[1]), dtype=np.float32)])
    sums = rows[starts].copy()
    for shift in range(1, WINDOW):
        sums += rows[np.where(starts + shift < ends, starts + shift, n)]
    norms = np.linalg.norm(sums, axis=1)
    return _Windows(ids, starts, ends, np.maximum(norms, 1e-9).astype(np.float32))


def _unit(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = (rows / np.maximum(norms, 1e-9)).astype(np.float32)
    return out


_SCORERS: weakref.WeakKeyDictionary[object, LateScorer] = weakref.WeakKeyDictionary()
_SCORERS_LOCK = threading.Lock()


def scorer_for(model: object) -> LateScorer | None:
    """The scorer kept for ``model``, made on first use; None if the model has no tokens."""
    if not all(callable(getattr(model, n, None)) for n in ("tokens", "token_ids", "token_table")):
        return None
    with _SCORERS_LOCK:
        scorer = _SCORERS.get(model)
        if scorer is None:
            scorer = _SCORERS[model] = LateScorer(model)  # type: ignore[arg-type]
        return scorer


def late_fn(model: object) -> Late | None:
    """``LateScorer.scores`` for ``model``, or None when it cannot score late (not static)."""
    scorer = scorer_for(model)
    return None if scorer is None else scorer.scores


def remembered(late: Late) -> Late:
    """``late`` with each block's score kept for the rest of one recall: dense feedback fuses a
    second time, mostly over the same blocks, and a block's score depends only on the query."""
    known: dict[tuple[str, str], float] = {}

    def scores(query: str, texts: Mapping[str, str]) -> dict[str, float]:
        missing = {b: t for b, t in texts.items() if (query, b) not in known}
        if missing:
            known.update(((query, b), v) for b, v in late(query, missing).items())
        return {b: known[(query, b)] for b in texts if (query, b) in known}

    return scores
