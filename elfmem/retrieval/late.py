"""Late interaction: query words against short runs of a long block's tokens.

Why, and what it was measured against: docs/decisions/0009-late-interaction.md.

The embedded static model embeds a text as the mean of its token vectors, so two long blocks of
the same people and subjects sit at cosine 0.84-0.95 and the dense list hardly tells them apart.
Here each content word of the query keeps its own token vector and takes its best cosine against
windows of ``WINDOW`` consecutive tokens of a block (mean-pooled, every ``STRIDE`` tokens); the
block's score is the mean of those maxima over the query's tokens. Score fusion blends it in with
``LATE_SHARE`` after min-max scaling over the candidates (``fusion.score_fusion``), so it only
reorders what the lexical and dense searches found.

Chosen on the long-document replay by leave-one-conversation-out, one setting per fold for both
forms (docs/decisions/0009-late-interaction.md): windows of 5 tokens,
no IDF weighting, share 0.1 beside a lexical share of 0.2.

A long block's token ids and window norms come from the index, which stores them at the sync
with vectors that every recall runs first (``index.tokenrows``), so a recall in a new process does
not tokenise its long candidates. A short candidate has no row and is tokenised here, which takes
microseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from elfmem.index import IndexDB, queries
from elfmem.index.fulltext import STOP_WORDS
from elfmem.index.tokenrows import (
    STRIDE,
    WINDOW,
    shape_of,
    stored_tokens,
    token_model,
    window_norms,
)

if TYPE_CHECKING:
    from elfmem.index.tokenrows import Ids, Norms

    Windows = tuple[Ids, Norms]
    """A block's token ids and the norm of each window's sum (windows from ``tokenrows.spans``)."""
from elfmem.index.tokenrows import TokenModel as StoredTokenModel

__all__ = ["LATE_SHARE", "STRIDE", "WINDOW", "Late", "LateScorer", "late_fn", "remembered"]

LATE_SHARE = 0.1
"""Weight of the min-max scaled late-interaction score in score fusion."""

Late = Callable[[IndexDB, str, Sequence[str]], dict[str, float]]
"""Late-interaction scores of the given blocks (by id, read from the index) for a query."""


class TokenModel(StoredTokenModel, Protocol):
    """A static embedding model that exposes its tokens (``adapters.static.StaticEmbedder``),
    spelled out too, to tell a query's content words from its stop words."""

    def tokens(self, text: str) -> tuple[list[str], Ids]:
        """The text's tokens as the tokenizer spells them and their rows of the table."""
        ...


class LateScorer:
    """Late-interaction scores for one model: stored windows from the index, the rest tokenised."""

    def __init__(self, model: TokenModel) -> None:
        self.model = model

    def scores(self, db: IndexDB, query: str, ids: Sequence[str]) -> dict[str, float]:
        """Per block: the mean over the query's content tokens of each one's best window cosine.

        Empty when the query has no content token (nothing to match) or no block is given; a
        block the index does not hold is left out.
        """
        q_ids = self.query_ids(query)
        if not len(q_ids) or not ids:
            return {}
        found = self.windows(db, ids)
        return self.score_windows(q_ids, found)

    def score_windows(self, q_ids: Ids, found: dict[str, Windows]) -> dict[str, float]:
        """``scores`` for blocks whose windows are at hand."""
        if not found:
            return {}
        table = self.model.token_table()
        q = _unit(table[q_ids])
        ids, inverse, bias, firsts = _layout(list(found.values()), len(table))
        seen = np.zeros(len(table) + 1, dtype=bool)
        seen[ids] = True
        seen[-1] = False  # the padding token
        used = np.flatnonzero(seen)
        # einsum, not BLAS: for a few query rows it does not wait on a thread pool of a busy machine
        dots = np.zeros((len(q), len(table) + 1), dtype=np.float32)
        dots[:, used] = np.einsum("kd,nd->kn", q, table[used])
        per_token = dots[:, ids]  # query token x laid-out block token (padding scores 0)
        # window j starts at token 2j: WINDOW // 2 pairs of tokens from there, and one more
        # token when WINDOW is odd (5: pairs j and j + 1, and token 2j + 4)
        pairs = per_token[:, 0::2] + per_token[:, 1::2]
        whole = WINDOW // 2
        width = pairs.shape[1] - whole
        sums = pairs[:, :width].copy()
        for shift in range(1, whole):
            sums += pairs[:, shift : shift + width]
        if WINDOW % 2:
            sums += per_token[:, WINDOW - 1 :: 2][:, :width]
        cos = sums * inverse[:width] + bias[:width]
        means = np.maximum.reduceat(cos, firsts, axis=1).mean(axis=0)
        return {
            block_id: float(m) if len(w[1]) else 0.0
            for (block_id, w), m in zip(found.items(), means, strict=True)
        }

    def query_ids(self, query: str) -> Ids:
        """The query's content tokens, once each: no stop words, punctuation or lone letters."""
        words, ids = self.model.tokens(query)
        kept: list[int] = []
        for word, token in zip(words, ids.tolist(), strict=True):
            bare = word.removeprefix("##")
            if word in STOP_WORDS or not any(c.isalnum() for c in bare):
                continue
            if len(bare) == 1 and not bare.isdigit() and not word.startswith("##"):
                continue
            if token not in kept:
                kept.append(token)
        return np.array(kept, dtype=np.int64)

    def windows(self, db: IndexDB, ids: Sequence[str]) -> dict[str, Windows]:
        """Each held block's windows, in ``ids``' order: stored rows first, the rest tokenised."""
        wanted = list(dict.fromkeys(ids))
        stored = stored_tokens(db.conn, wanted, shape_of(self.model))
        missing = [i for i in wanted if i not in stored]
        if missing:
            rows = queries.get_blocks(db, missing)
            texts = {i: rows[i].content for i in missing if i in rows}
            stored.update(zip(texts, self.from_texts(list(texts.values())), strict=True))
        return {i: stored[i] for i in wanted if i in stored}

    def from_texts(self, texts: list[str]) -> list[Windows]:
        """Each text's windows, tokenised in one batch."""
        table = self.model.token_table()
        return [(ids, window_norms(ids, table)) for ids in self.model.token_ids(texts)]


def _layout(
    blocks: list[Windows], pad_token: int
) -> tuple[Ids, npt.NDArray[np.float32], npt.NDArray[np.float32], Ids]:
    """The blocks' tokens end to end, each block at an even offset and followed by at least
    ``WINDOW`` - 1 padding tokens, so that every block's windows are the windows of the whole at
    the same stride; with each whole-window's inverse norm (0 where no window of a block starts),
    a bias that puts those out of every maximum (-2, under any cosine), and each block's first
    whole-window. ``score_windows`` sums pairs of tokens, so ``STRIDE`` must be 2.
    """
    lengths = np.array([len(b[0]) for b in blocks], dtype=np.int64)
    counts = np.array([len(b[1]) for b in blocks], dtype=np.int64)
    padded = lengths + WINDOW - 1 + lengths % 2
    at = np.concatenate([[0], np.cumsum(padded)])
    # a few more pairs at the end, so that the last block's last whole-window is a whole window
    ids = np.full(at[-1] + STRIDE * (WINDOW // 2), pad_token, dtype=np.int64)
    ids[_runs(at[:-1], lengths)] = np.concatenate([b[0] for b in blocks])
    firsts = at[:-1] // STRIDE
    valid = _runs(firsts, counts)
    inverse = np.zeros(at[-1] // STRIDE, dtype=np.float32)
    inverse[valid] = 1.0 / np.concatenate([b[1] for b in blocks])
    bias = np.full(len(inverse), -2.0, dtype=np.float32)
    bias[valid] = 0.0
    return ids, inverse, bias, firsts


def _runs(starts: Ids, lengths: Ids) -> Ids:
    """The positions start, start + 1, ... of each run, one run after the other."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def _unit(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = (rows / np.maximum(norms, 1e-9)).astype(np.float32)
    return out


def late_fn(model: object) -> Late | None:
    """``LateScorer.scores`` for ``model``, or None when it cannot score late (not static)."""
    if token_model(model) is None or not callable(getattr(model, "tokens", None)):
        return None
    return LateScorer(model).scores  # type: ignore[arg-type]


def remembered(late: Late) -> Late:
    """``late`` with each block's score kept for the rest of one recall: dense feedback fuses a
    second time, mostly over the same blocks, and a block's score depends only on the query."""
    known: dict[tuple[str, str], float] = {}

    def scores(db: IndexDB, query: str, ids: Sequence[str]) -> dict[str, float]:
        missing = [b for b in dict.fromkeys(ids) if (query, b) not in known]
        if missing:
            known.update(((query, b), v) for b, v in late(db, query, missing).items())
        return {b: known[(query, b)] for b in ids if (query, b) in known}

    return scores
