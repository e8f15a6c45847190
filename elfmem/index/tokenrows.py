"""Long blocks' token ids and window norms, stored at sync so late interaction never tokenises them.

Late interaction (``retrieval/late.py``) scores a block by windows of ``WINDOW`` consecutive tokens
of its text, one every ``STRIDE`` tokens. Tokenising 10 KB takes milliseconds, and a recall in a new
process (every CLI call) meets dozens of long candidates it has never seen, so the sync that embeds
a long block also stores its token ids (two bytes each) and the norm of each window's sum (four
bytes a window). Rows are keyed like vectors: by block id, with the hash of the text they were
made from, and by ``shape`` (the model, the window and the id width), so a change of model or window
replaces them all at the next sync with vectors.

Nothing depends on a row being there: a block without one (a short block, one captured since the
last sync with vectors, an embedder that has no tokens) is tokenised at recall, which costs time
and never changes a score.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from elfmem.block.model import Block
from elfmem.index.embcache import EmbeddingCache, default_cache_path, text_hash
from elfmem.index.passagevecs import is_long
from elfmem.index.rows import chunks, pairs_among
from elfmem.lazyload import lazy_module
from elfmem.progress import Progress, silent

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ids = npt.NDArray[np.int64]
    Norms = npt.NDArray[np.float32]
else:
    np = lazy_module("numpy")

WINDOW = 5
"""Tokens per window a query token is matched against."""
STRIDE = 2
"""A window starts every this many tokens (retrieval/late.py adds tokens in pairs: keep it 2)."""
TOKEN_BATCH = 64
"""Blocks tokenised per call to the tokenizer (and per progress report)."""


class TokenModel(Protocol):
    """An embedder that exposes its tokens (the embedded static model, ``adapters.static``)."""

    @property
    def identity(self) -> str: ...

    def token_ids(self, texts: Sequence[str]) -> list[Ids]:
        """Each text's token ids, untruncated, unknown tokens dropped."""
        ...

    def token_table(self) -> npt.NDArray[np.float32]:
        """The model's token vectors, one row per token id."""
        ...


def token_model(model: object) -> TokenModel | None:
    """``model`` if it exposes its tokens, else None (an endpoint model has no late score)."""
    names = ("token_ids", "token_table")
    if model is None or not all(callable(getattr(model, n, None)) for n in names):
        return None
    return model  # type: ignore[return-value]


def shape_of(model: TokenModel) -> str:
    """Names what a stored row depends on besides its text: model, window, stride, id width."""
    return f"{model.identity} w{WINDOW}/{STRIDE} {_id_type(model)}"


def _id_type(model: TokenModel) -> str:
    return "<u2" if len(model.token_table()) <= 1 << 16 else "<u4"


def spans(n: int) -> tuple[Ids, Ids]:
    """First token and end (exclusive) of each window of a text of ``n`` tokens: one window every
    ``STRIDE`` tokens, and a single (shorter) window when the text has fewer than ``WINDOW``."""
    if not n:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    starts = np.arange(0, max(1, n - WINDOW + 1), STRIDE, dtype=np.int64)
    return starts, np.minimum(starts + WINDOW, n)


def window_norms(ids: Ids, table: npt.NDArray[np.float32]) -> Norms:
    """The norm of each window's sum of token vectors (floored at 1e-9).

    A window's sum and its mean point the same way, so a cosine needs only this norm.
    """
    n = len(ids)
    if not n:
        return np.zeros(0, dtype=np.float32)
    starts, ends = spans(n)
    # the sum of WINDOW shifted gathers (a zero row past the end): cheaper than a running sum
    rows = np.vstack([table[ids], np.zeros((WINDOW, table.shape[1]), dtype=np.float32)])
    sums = rows[starts].copy()
    for shift in range(1, WINDOW):
        sums += rows[np.where(starts + shift < ends, starts + shift, n)]
    norms: Norms = np.maximum(np.linalg.norm(sums, axis=1), 1e-9).astype(np.float32)
    return norms


def token_text(block: Block) -> str:
    """What late interaction reads of a block: its content (the cue is a label, not the text)."""
    return block.content


@dataclass(slots=True)
class TokenPlan:
    """Token rows to write, made before the write lock like vectors (``embedding.plan_vectors``)."""

    shape: str | None = None
    rows: list[tuple[str, str, bytes, bytes]] = field(default_factory=list)
    """(block id, text hash, ids, norms) to store."""
    drop: list[str] = field(default_factory=list)
    """Blocks whose stored row no longer matches their text (or that are short now)."""
    reset: bool = False
    """The shape changed (another model or window, or an index that predates rows): all go."""

    @property
    def due(self) -> bool:
        """There is something to write even when no block changed (a new shape, a backfill)."""
        return bool(self.rows) or self.reset


def plan_tokens(
    conn: sqlite3.Connection,
    meta: dict[str, str],
    blocks: dict[str, Block],
    model: object,
    *,
    long_blocks: Callable[[], Iterable[Block]] = lambda: (),
    gone: Iterable[str] = (),
    cache: EmbeddingCache | None = None,
    progress: Progress = silent,
) -> TokenPlan:
    """Rows for the long blocks among ``blocks`` whose stored row is missing or out of date.

    ``blocks`` are those the sync (re)writes or embeds; ``long_blocks`` gives every long block the
    index holds, read only when the shape changed (less ``gone``, the blocks the sync removes).
    A stored row whose block's text changed, or that is short now, is dropped; ``model`` None (a
    sync without vectors) plans no row, and the next sync with vectors makes the dropped ones
    again (their blocks lost their vectors too, so it embeds them).
    """
    plan = TokenPlan()
    tokens = token_model(model)
    if tokens is not None:
        plan.shape = shape_of(tokens)
        plan.reset = meta.get("token_shape") != plan.shape
    wanted = {i: b for i, b in blocks.items() if is_long(b.content)}  # short ones: at recall
    if plan.reset:
        removed = set(gone)
        held = (b for b in long_blocks() if b.id not in removed and b.id not in wanted)
        wanted.update((b.id, b) for b in held if is_long(b.content))
    stored = {} if plan.reset else _stored_hashes(conn, list(blocks))
    hashes = {i: text_hash(token_text(b)) for i, b in wanted.items()}
    plan.drop = [i for i in stored if hashes.get(i) != stored[i]]
    if tokens is None:
        return plan
    todo = [(i, hashes[i], token_text(b)) for i, b in wanted.items() if stored.get(i) != hashes[i]]
    if todo:
        store = EmbeddingCache(default_cache_path()) if cache is None else cache
        try:
            plan.rows = _made(tokens, todo, store, progress)
        finally:
            if cache is None:
                store.close()
    return plan


def _made(
    tokens: TokenModel,
    todo: list[tuple[str, str, str]],
    cache: EmbeddingCache,
    progress: Progress,
) -> list[tuple[str, str, bytes, bytes]]:
    """Rows for ``todo`` (block id, text hash, text): from the embedding cache, which keeps them
    across rebuilds and ``--at`` previews as it keeps vectors, or tokenised (and cached)."""
    kind = f"tokens {shape_of(tokens)}"
    width = np.dtype(_id_type(tokens)).itemsize
    known: dict[str, tuple[bytes, bytes]] = {}
    for key, blob in cache.get_blobs(kind, [h for _, h, _ in todo]).items():
        row = _unpacked(blob, width)
        if row is not None:
            known[key] = row
    missing = list({h: t for _, h, t in todo if h not in known}.items())
    table = tokens.token_table()
    id_type = _id_type(tokens)
    for start in range(0, len(missing), TOKEN_BATCH):
        batch = missing[start : start + TOKEN_BATCH]
        made: dict[str, bytes] = {}
        for (key, _), ids in zip(batch, tokens.token_ids([t for _, t in batch]), strict=True):
            norms = window_norms(ids, table).astype("<f4").tobytes()
            known[key] = (ids.astype(id_type).tobytes(), norms)
            made[key] = _packed(*known[key])
        cache.put_blobs(kind, made)
        progress("tokens", min(start + TOKEN_BATCH, len(missing)), len(missing))
    return [(block_id, key, *known[key]) for block_id, key, _ in todo]


def _packed(ids: bytes, norms: bytes) -> bytes:
    return len(ids).to_bytes(4, "little") + ids + norms


def _unpacked(blob: bytes, width: int) -> tuple[bytes, bytes] | None:
    """(ids, norms) of a cached row of ids ``width`` bytes wide; None for a row that does not
    hold together (a miss)."""
    if len(blob) < 4:
        return None
    size = int.from_bytes(blob[:4], "little")
    ids, norms = blob[4 : 4 + size], blob[4 + size :]
    if size % width or len(norms) != 4 * len(spans(size // width)[0]):
        return None
    return ids, norms


def _stored_hashes(conn: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    return pairs_among(conn, "SELECT block_id, text_hash FROM tokens WHERE block_id IN", ids)


def write_tokens(
    conn: sqlite3.Connection, plan: TokenPlan, removed: Iterable[str], full: bool
) -> None:
    """Store ``plan`` inside the sync's write transaction, and drop rows of removed blocks."""
    if full:
        conn.execute("DELETE FROM tokens WHERE block_id NOT IN (SELECT id FROM blocks)")
    if plan.reset:
        conn.execute("DELETE FROM tokens")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('token_shape', ?)", (plan.shape,))
    gone = [*removed, *plan.drop]
    conn.executemany("DELETE FROM tokens WHERE block_id = ?", [(i,) for i in gone])
    conn.executemany(
        "INSERT OR REPLACE INTO tokens VALUES (?, ?, ?, ?, ?)",
        [(i, key, plan.shape, ids, norms) for i, key, ids, norms in plan.rows],
    )


def stored_tokens(
    conn: sqlite3.Connection, ids: Sequence[str], shape: str
) -> dict[str, tuple[Ids, Norms]]:
    """The stored (token ids, window norms) of those of ``ids`` that have a row of ``shape``."""
    id_type = shape.rsplit(" ", 1)[-1]
    found: dict[str, tuple[Ids, Norms]] = {}
    for chunk in chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT block_id, ids, norms FROM tokens WHERE shape = ? AND block_id IN ({marks})"
        for block_id, raw, norms in conn.execute(sql, [shape, *chunk]):
            found[block_id] = (
                np.frombuffer(raw, dtype=id_type).astype(np.int64),
                np.frombuffer(norms, dtype="<f4"),
            )
    return found
