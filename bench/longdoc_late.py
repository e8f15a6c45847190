"""Late interaction with the static model's token vectors, re-scoring the long-document replay.

The shipped static model embeds a text as the mean of its token vectors, so two sessions of the
same two people end up at cosine 0.84-0.95 and the dense list hardly tells them apart. Here each
query token (content words only) keeps its own vector and takes its best cosine against the
tokens of a candidate block (or against short windows of the block's tokens, mean-pooled); the
block's score is the mean of those maxima, optionally weighted by each token's IDF over the
memory's blocks. That score is blended into the replay's fusion (``rule_late``) or replaces its
dense part, beside the centred dense score of the fourth pass (``dense_from="centred"``).

Registered into ``longdoc_rules.RULES``; run as

    python bench/longdoc_replay.py session,joined late-tok late-win late-alone late-centred \
        late-scale
    python bench/longdoc_replay.py session,joined late-base late-fine late-top late-nrm

The product took ``late-fine``'s held-out pick (``elfmem/retrieval/late.py``); docs/benchmarks.md,
"Late interaction with the static token vectors (seventh session)".
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from longdoc_replay import SHARE, Vecs, base_lists, order, scaled

STOP = set(
    "a an and are as at be by for from has have i in is it of on or that the this to was "
    "were will with you your what when where who why how did do does".split()
)


class Tokens:
    """The model's tokenizer and unit-length token table, loaded once."""

    def __init__(self) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        from elfmem.adapters.static import DEFAULT_MODEL_DIR

        self.tok = Tokenizer.from_file(str(DEFAULT_MODEL_DIR / "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        table = load_file(DEFAULT_MODEL_DIR / "model.safetensors")["embeddings"]
        self.raw = np.ascontiguousarray(table, dtype=np.float32)
        self.unit = self.raw / np.maximum(np.linalg.norm(self.raw, axis=1, keepdims=True), 1e-9)
        unk = getattr(self.tok.model, "unk_token", None)
        self.unk = self.tok.token_to_id(unk) if isinstance(unk, str) else -1

    def ids(self, text: str) -> list[int]:
        return [i for i in self.tok.encode(text, add_special_tokens=False).ids if i != self.unk]

    def content(self, text: str) -> list[int]:
        """The query's tokens less stop words, punctuation and lone letters."""
        enc = self.tok.encode(text, add_special_tokens=False)
        out = []
        for i, t in zip(enc.ids, enc.tokens, strict=True):
            bare = t.removeprefix("##")
            if i == self.unk or t in STOP or not re.search(r"[a-z0-9]", bare):
                continue
            if len(bare) == 1 and not bare.isdigit() and not t.startswith("##"):
                continue
            out.append(i)
        return list(dict.fromkeys(out))


_T: dict[str, Tokens] = {}


def tokens() -> Tokens:
    if "t" not in _T:
        _T["t"] = Tokens()
    return _T["t"]


class Memory:
    """Every block's token ids, in one array with each block's start, and the tokens' IDF."""

    def __init__(self, blocks: list[dict]) -> None:
        t = tokens()
        per = [np.array(t.ids(b["text"]), dtype=np.int64) for b in blocks]
        self.n = len(blocks)
        self.ids = np.concatenate(per)
        self.starts = np.cumsum([0] + [len(p) for p in per[:-1]])
        self.per = per
        self.uniq, self.inv = np.unique(self.ids, return_inverse=True)
        df = np.zeros(len(t.unit), dtype=np.float64)
        for p in per:
            df[np.unique(p)] += 1
        self.idf = np.log(1.0 + (self.n - df + 0.5) / (df + 0.5))
        counts = np.bincount(self.ids, minlength=len(t.raw)).astype(np.float64)
        self.mean_tok = ((counts @ t.unit) / counts.sum()).astype(np.float32)
        self._win: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def windows(self, w: int, centre: float, by: str = "own") -> tuple[np.ndarray, np.ndarray]:
        """Unit vectors of windows of ``w`` tokens (stride w/2) per block, and each one's block.

        ``by`` "norms": each window's mean is divided by its tokens' mean norm instead of its own
        norm (a norm-weighted mean of its tokens' cosines; needs no norm of the window itself).
        """
        key = (w, centre, by)
        if key not in self._win:
            t = tokens()
            vecs, owner, tnorms = [], [], []
            tn = np.linalg.norm(t.raw, axis=1)
            step = max(1, w // 2)
            for k, p in enumerate(self.per):
                if len(p) == 0:
                    continue
                rows = t.raw[p]
                c = np.vstack([np.zeros((1, rows.shape[1]), np.float32), np.cumsum(rows, axis=0)])
                starts = list(range(0, max(1, len(p) - w + 1), step))
                ends = [min(s + w, len(p)) for s in starts]
                m = (c[ends] - c[starts]) / np.array(
                    [e - s for s, e in zip(starts, ends, strict=True)]
                )[:, None]
                vecs.append(m)
                cn = np.concatenate([[0.0], np.cumsum(tn[p])])
                lens = np.array([e - s for s, e in zip(starts, ends, strict=True)])
                tnorms.append(((cn[ends] - cn[starts]) / lens)[:, None])
                owner += [k] * len(starts)
            v = np.vstack(vecs).astype(np.float32) - np.float32(centre) * self.mean_raw()
            if by == "norms":  # divided by the mean of its tokens' norms, not its own norm
                v = v / np.maximum(np.vstack(tnorms), 1e-9)
            else:
                v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
            own = np.array(owner)
            srt = np.argsort(own, kind="stable")
            self._win[key] = (v[srt].astype(np.float32), own[srt])
        return self._win[key]

    def mean_raw(self) -> np.ndarray:
        t = tokens()
        return t.raw[self.ids].mean(axis=0).astype(np.float32)


_MEM: dict[int, Memory] = {}
_CACHE: dict[tuple, np.ndarray] = {}


def memory(vecs: Vecs) -> Memory:
    from longdoc_rules import BLOCKS_OF

    key = id(vecs)
    if key not in _MEM:
        _MEM[key] = Memory(BLOCKS_OF[key])
    return _MEM[key]


def _segment_max(sims: np.ndarray, owner_sorted: np.ndarray, n: int) -> np.ndarray:
    """Per row of ``sims`` (query token x unit) the max per block; -1 for a block with none."""
    out = np.full((sims.shape[0], n), -1.0, dtype=np.float32)
    present, starts = np.unique(owner_sorted, return_index=True)
    out[:, present] = np.maximum.reduceat(sims, starts, axis=1)
    return out


def maxima(q: dict, vecs: Vecs, unit: str, centre: float) -> tuple[np.ndarray, np.ndarray]:
    """(query tokens x blocks) best cosine, and the query tokens' ids; cached per question."""
    mem = memory(vecs)
    t = tokens()
    qids = np.array(t.content(q["q"]), dtype=np.int64)
    key = (id(vecs), q["q"], unit, centre)
    if key in _CACHE:
        return _CACHE[key], qids
    if len(qids) == 0:
        _CACHE[key] = np.zeros((0, mem.n), np.float32)
        return _CACHE[key], qids
    mu = (centre * mem.mean_tok).astype(np.float32)
    qv = t.unit[qids] - mu
    qv = qv / np.maximum(np.linalg.norm(qv, axis=1, keepdims=True), 1e-9)
    if unit in ("tok", "soft"):
        u = t.unit[mem.uniq] - mu
        u = u / np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-9)
        sims = (qv @ u.T)[:, mem.inv]
        if unit == "soft":  # exact matches left to the lexical side: the best *other* token
            sims = np.where(mem.ids[None, :] == qids[:, None], -1.0, sims)
        owner = np.repeat(np.arange(mem.n), [len(p) for p in mem.per])
        res = _segment_max(sims.astype(np.float32), owner, mem.n)
    else:
        w = int(unit[3:])
        win, owner = mem.windows(w, centre, "norms" if unit.startswith("nrm") else "own")
        res = _segment_max((qv @ win.T).astype(np.float32), owner, mem.n)
    _CACHE[key] = res
    return res, qids


def late_scores(
    q: dict, vecs: Vecs, ids: list[int], unit: str, idf: float, centre: float, agg: str
) -> dict[int, float]:
    mx, qids = maxima(q, vecs, unit, centre)
    if len(qids) == 0:
        return {}
    mem = memory(vecs)
    wts = mem.idf[qids] ** idf
    wts = wts / (wts.sum() or 1.0)
    sub = mx[:, ids]
    if agg == "mean":
        sc = wts @ sub
    elif agg == "sq":  # squared maxima: a near match counts for much more than a loose one
        sc = wts @ np.maximum(sub, 0) ** 2
    else:
        raise ValueError(agg)
    return {b: float(s) for b, s in zip(ids, sc, strict=True)}


def _scale(d: dict[int, float], how: str) -> dict[int, float]:
    if not d:
        return {}
    if how == "top":
        return scaled({b: max(v, 0.0) for b, v in d.items()})
    lo, hi = min(d.values()), max(d.values())
    return {b: ((v - lo) / (hi - lo) if hi > lo else 1.0) for b, v in d.items()}


def rule_late(
    q: dict,
    vecs: Vecs,
    share: float = SHARE,
    li: float = 0.2,
    unit: str = "tok",
    idf: float = 1.0,
    centre: float = 0.0,
    agg: str = "mean",
    scale: str = "minmax",
    dense_from: str = "base",
    ckeep: float = 0.5,
    fill: bool = False,
    top: int = 0,
    **_: Any,
) -> list[int]:
    """share x lexical + li x late interaction + the rest x dense (each scaled over the candidates).

    ``fill``: lexical hits the dense search missed get their own best-passage cosine, capped at
    the dense top (the product since "Lexical hits keep their cosine"; the dump predates it).
    ``top`` > 0: only the first ``top`` blocks of the fusion without late interaction are scored
    (and min-max scaled among themselves); the rest get 0 there (a bound on the cost).
    """
    lex, dense = base_lists(q)
    if dense_from == "centred":
        from longdoc_rules import centred_dense

        dense = centred_dense(q, vecs, "global", ckeep)
    elif fill and dense:
        qv = q["qv"] / (np.linalg.norm(q["qv"]) or 1.0)
        cap = max(dense.values())
        dense = {**{b: min(vecs.best(b, qv)[0], cap) for b in lex if b not in dense}, **dense}
    ids = list(dict.fromkeys([*lex, *dense]))
    if not ids:
        return []
    L = scaled(lex)
    D = scaled({b: max(v, 0.0) for b, v in dense.items()})
    scored = ids
    if top:
        first = {b: share * L.get(b, 0.0) + (1 - share) * D.get(b, 0.0) for b in ids}
        scored = order(first)[:top]
    X = _scale(late_scores(q, vecs, scored, unit, idf, centre, agg), scale)
    rest = max(0.0, 1.0 - share - li)
    return order(
        {b: share * L.get(b, 0.0) + li * X.get(b, 0.0) + rest * D.get(b, 0.0) for b in ids}
    )


def _grid(**axes: Any) -> list[dict]:
    out: list[dict] = [{}]
    for k, vals in axes.items():
        out = [{**o, k: v} for o in out for v in vals]
    return [o for o in out if o.get("share", 0) + o.get("li", 0) <= 1.0 + 1e-9]


LATE_RULES = {
    # token against token, blended with the replay's two lists
    "late-tok": (
        rule_late,
        _grid(
            unit=["tok", "soft"],
            idf=[0.0, 1.0],
            share=[0.2, 0.3],
            li=[0.1, 0.2, 0.35, 0.5],
        ),
    ),
    # token against windows of 3-8 tokens
    "late-win": (
        rule_late,
        _grid(
            unit=["win3", "win5", "win8"],
            idf=[0.0, 1.0],
            share=[0.2, 0.3],
            li=[0.1, 0.2, 0.35, 0.5],
        ),
    ),
    # late interaction as the whole dense part
    "late-alone": (
        rule_late,
        [
            {"unit": u, "idf": 1.0, "share": s, "li": round(1.0 - s, 2)}
            for u in ("tok", "soft", "win5")
            for s in (0.2, 0.3, 0.4, 0.5)
        ],
    ),
    # centred token vectors, and the centred dense score of the fourth pass beside it
    "late-centred": (
        rule_late,
        _grid(
            unit=["tok", "win5"],
            centre=[0.5, 1.0],
            dense_from=["base", "centred"],
            share=[0.3],
            li=[0.1, 0.2, 0.35],
        ),
    ),
    # the product now (the fill, no late interaction), the baseline for late-fine
    "late-base": (rule_late, _grid(li=[0.0], fill=[True], share=[0.2, 0.3, 0.4])),
    # around the held-out pick of late-win, with the fill the product has now
    "late-fine": (
        rule_late,
        _grid(
            unit=["win4", "win5", "win6"],
            idf=[0.0],
            fill=[True],
            share=[0.2, 0.25, 0.3],
            li=[0.05, 0.1, 0.15],
        ),
    ),
    # only the first ``top`` blocks of the fusion without it are scored (a bound on the cost)
    "late-top": (
        rule_late,
        _grid(unit=["win5"], fill=[True], top=[10, 20, 30], share=[0.2, 0.25], li=[0.1]),
    ),
    # windows divided by their tokens' mean norm: no window norm to compute or keep
    "late-nrm": (
        rule_late,
        _grid(
            unit=["nrm3", "nrm5", "nrm8"],
            fill=[True],
            share=[0.2, 0.25, 0.3],
            li=[0.05, 0.1, 0.15, 0.2],
        ),
    ),
    "late-scale": (
        rule_late,
        _grid(
            unit=["tok", "win5"],
            scale=["top"],
            agg=["mean", "sq"],
            share=[0.3],
            li=[0.1, 0.2, 0.35],
        ),
    ),
}
