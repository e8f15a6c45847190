"""Candidate rules for the long-document fusion, scored offline by ``bench/longdoc_replay.py``.

Each rule maps one dumped question to a ranking of block numbers; ``RULES`` names each rule's
grid. Measured on 2026-12-01 (docs/benchmarks.md, "Long documents", "Second passes, list
depths and what the lists hold"): none moved recall_all@5 beyond the run-to-run spread.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np
from longdoc_replay import SHARE, Vecs, base_lists, fuse, lex_parts, order, rule_base, scaled


def rule_residual(
    q: dict,
    vecs: Vecs,
    share: float = SHARE,
    r: float = 1.0,
    f: float = 0.5,
    steps: int = 1,
    **_: Any,
) -> list[int]:
    """Fix the top block, rescore the rest with what it covers removed; ``steps`` rounds."""
    cands = set(q["cands"])
    parts = lex_parts(q, cands)
    lex, dense = base_lists(q)
    first = order(fuse(lex, dense, share))
    if not first:
        return first
    chosen = [first[0]]
    qv = q["qv"] / (np.linalg.norm(q["qv"]) or 1.0)
    basis: list[np.ndarray] = []
    covered: set[str] = set()
    for _step in range(steps):
        top = chosen[-1]
        _, p = vecs.best(top, qv)
        # Gram-Schmidt against earlier
        for u in basis:
            p = p - (p @ u) * u
        n = np.linalg.norm(p)
        if n > 0:
            basis.append(p / n)
        covered |= {t for t, pt in parts.items() if top in pt}
        qr = qv.copy()
        for u in basis:
            qr = qr - r * (qv @ u) * u
        qr = qr / (np.linalg.norm(qr) or 1.0)
        rest = [b for b in first if b not in chosen]
        lex2 = {}
        for t, pt in parts.items():
            w = f if t in covered else 1.0
            for b, v in pt.items():
                if b not in chosen:
                    lex2[b] = lex2.get(b, 0.0) + w * v
        dense2 = {b: vecs.best(b, qr)[0] for b in rest if b in dense}
        nxt = order(fuse(lex2, dense2, share))
        if not nxt:
            break
        if _step == steps - 1:
            chosen += nxt
            break
        chosen.append(nxt[0])
    return list(dict.fromkeys(chosen + first))


def rule_interleave(q: dict, vecs: Vecs, share: float = SHARE, n: int = 5, **_: Any) -> list[int]:
    lex, dense = base_lists(q)
    fused = order(fuse(lex, dense, share))
    lo, do = order(lex), order(dense)
    out: list[int] = []
    i = 0
    while len(out) < n and (i < len(lo) or i < len(do)):
        for lst in (lo, do):
            if i < len(lst) and lst[i] not in out and len(out) < n:
                out.append(lst[i])
        i += 1
    return list(dict.fromkeys(out + fused))


def rule_depth(q: dict, vecs: Vecs, share: float = SHARE, d: int = 3, **_: Any) -> list[int]:
    lex, dense = base_lists(q)
    fz = fuse(lex, dense, share)
    fused = order(fz)
    head = set(order(lex)[:d]) | set(order(dense)[:d])
    top = sorted(head, key=lambda b: (-fz[b], b))
    return list(dict.fromkeys(top + fused))


def rule_nofb(q: dict, vecs: Vecs, share: float = SHARE, **_: Any) -> list[int]:
    """Dense list before the feedback search."""
    cands = set(q["cands"])
    parts = lex_parts(q, cands | set(q["first"]))
    lex: dict[int, float] = {}
    for p in parts.values():
        for b, v in p.items():
            lex[b] = lex.get(b, 0.0) + v
    return order(fuse(lex, dict(q["first"]), share))


RULES = {
    "base": (rule_base, [{"share": s} for s in (0.2, 0.3, 0.4)]),
    "nofb": (rule_nofb, [{"share": s} for s in (0.2, 0.3, 0.4)]),
    "interleave": (rule_interleave, [{"share": s, "n": n} for s in (0.3,) for n in (2, 3, 4, 5)]),
    "depth": (rule_depth, [{"share": s, "d": d} for s in (0.3,) for d in (1, 2, 3)]),
    "residual": (
        rule_residual,
        [
            {"share": s, "r": r, "f": f, "steps": st}
            for s in (0.3,)
            for r in (0.0, 0.25, 0.5, 0.75)
            for f in (0.0, 0.5, 0.75, 1.0)
            for st in (1, 2, 4)
            if not (r == 0.0 and f == 1.0)
        ],
    ),
}


def dense_scaled(dense: dict[int, float], mode: str, depth: int = 10) -> dict[int, float]:
    if not dense:
        return {}
    vals = sorted(dense.values(), reverse=True)
    top = vals[0]
    if mode == "top":
        return {b: v / top for b, v in dense.items()}
    if mode == "minmax":
        low = vals[-1]
    elif mode == "median":
        low = vals[len(vals) // 2]
    elif mode == "depth":
        low = vals[min(depth, len(vals)) - 1]
    elif mode == "rank":
        ranked = sorted(dense, key=lambda b: -dense[b])
        return {b: (depth + 1) / (depth + 1 + i) for i, b in enumerate(ranked)}
    else:
        raise ValueError(mode)
    spread = top - low
    if spread <= 0:
        return dict.fromkeys(dense, 1.0)
    return {b: max(0.0, (v - low) / spread) for b, v in dense.items()}


def rule_dscale(
    q: dict, vecs: Vecs, share: float = SHARE, mode: str = "top", depth: int = 10, **_: Any
) -> list[int]:
    lex, dense = base_lists(q)
    L = scaled(lex)
    D = dense_scaled(dense, mode, depth)
    ids = list(dict.fromkeys([*lex, *dense]))
    return order({b: share * L.get(b, 0.0) + (1 - share) * D.get(b, 0.0) for b in ids})


RULES["dscale"] = (
    rule_dscale,
    [
        {"share": s, "mode": m, "depth": d}
        for m, ds in (
            ("minmax", (0,)),
            ("median", (0,)),
            ("depth", (5, 10, 20)),
            ("rank", (5, 10, 20)),
        )
        for d in ds
        for s in (0.3, 0.5, 0.6, 0.7, 0.8)
    ],
)


_CENTRES: dict = {}


def centred_dense(q: dict, vecs: Vecs, how: str, keep: float = 1.0) -> dict[int, float]:
    qv = q["qv"] / (np.linalg.norm(q["qv"]) or 1.0)
    seeds = list(q["dense"]) or list(q["cands"])
    cands = list(dict.fromkeys([*q["cands"]]))
    if how == "global":
        key = id(vecs)
        if key not in _CENTRES:
            _CENTRES[key] = vecs.P.mean(axis=0)
        mu = _CENTRES[key]
    elif how == "seeds":
        mu = np.concatenate([vecs.by_block[b] for b in seeds]).mean(axis=0)
    elif how == "blocks":
        key = ("b", id(vecs))
        if key not in _CENTRES:
            _CENTRES[key] = vecs.B[vecs.bk >= 0].mean(axis=0)
        mu = _CENTRES[key]
    else:
        raise ValueError(how)
    mu = keep * mu
    qc = qv - mu
    qc = qc / (np.linalg.norm(qc) or 1.0)
    out = {}
    for b in cands:
        m = vecs.by_block[b] - mu
        m = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
        out[b] = float((m @ qc).max())
    return out


def rule_centred(
    q: dict, vecs: Vecs, share: float = SHARE, how: str = "global", keep: float = 1.0, **_: Any
) -> list[int]:
    lex, _ = base_lists(q)
    dense = centred_dense(q, vecs, how, keep)
    L = scaled(lex)
    D = scaled({b: max(v, 0.0) for b, v in dense.items()})
    ids = list(dict.fromkeys([*lex, *dense]))
    return order({b: share * L.get(b, 0.0) + (1 - share) * D.get(b, 0.0) for b in ids})


RULES["centred"] = (
    rule_centred,
    [
        {"share": s, "how": "global", "keep": k}
        for k in (0.25, 0.4, 0.5, 0.6, 0.75, 1.0)
        for s in (0.2, 0.3, 0.4, 0.5)
    ],
)
RULES["centred-dense"] = (
    rule_centred,
    [
        {"share": 0.0, "how": h, "keep": k}
        for h in ("global", "seeds", "blocks")
        for k in (0.0, 0.5, 1.0)
    ],
)


def rule_fill(q: dict, vecs: Vecs, share: float = SHARE, floor: float = 0.0, **_: Any) -> list[int]:
    """Lexical candidates the dense search did not return get their own best-passage cosine."""
    lex, dense = base_lists(q)
    qv = q["qv"] / (np.linalg.norm(q["qv"]) or 1.0)
    dense = dict(dense)
    for b in lex:
        if b not in dense:
            dense[b] = max(vecs.best(b, qv)[0] - floor, 0.0)
    return order(fuse(lex, dense, share))


RULES["fill"] = (
    rule_fill,
    [{"share": s, "floor": f} for s in (0.2, 0.3, 0.4) for f in (0.0, 0.05)],
)


_PBM: dict = {}
_STOP = set(
    "a an and are as at be by for from has have i in is it of on or that the this to was "
    "were will with you your what when where who why how did do does".split()
)


def _stem(w: str) -> str:
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def _toks(text: str) -> list[str]:
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP]


def passage_index(blocks: list[dict], size: int):
    key = (id(blocks), size)
    if key not in _PBM:
        from rank_bm25 import BM25Okapi

        from elfmem.block.passages import passages

        owner, texts = [], []
        for k, b in enumerate(blocks):
            for p in passages(b["text"], size, min(60, size // 4)) or [b["text"]]:
                owner.append(k)
                texts.append(_toks(p))
        _PBM[key] = (BM25Okapi(texts), np.array(owner))
    return _PBM[key]


def passage_lex(q: dict, blocks: list[dict], size: int, top2: float) -> dict[int, float]:
    bm, owner = passage_index(blocks, size)
    sc = bm.get_scores(_toks(q["q"]))
    out: dict[int, list[float]] = {}
    for s_, o in zip(sc, owner, strict=False):
        out.setdefault(int(o), []).append(float(s_))
    res = {}
    for b, vals in out.items():
        vals.sort(reverse=True)
        res[b] = vals[0] + top2 * (vals[1] if len(vals) > 1 else 0.0)
    return res


BLOCKS_OF: dict = {}


def rule_plex(
    q: dict,
    vecs: Vecs,
    share: float = SHARE,
    pshare: float = 0.2,
    size: int = 250,
    top2: float = 0.0,
    **_: Any,
) -> list[int]:
    lex, dense = base_lists(q)
    blocks = BLOCKS_OF[id(vecs)]
    pl = passage_lex(q, blocks, size, top2)
    cands = list(dict.fromkeys([*lex, *dense]))
    P = scaled({b: max(pl.get(b, 0.0), 0.0) for b in cands})
    L, D = scaled(lex), scaled(dense)
    return order(
        {
            b: share * L.get(b, 0.0) + pshare * P.get(b, 0.0) + (1 - share - pshare) * D.get(b, 0.0)
            for b in cands
        }
    )


RULES["plex"] = (
    rule_plex,
    [
        {"share": s, "pshare": p, "size": z, "top2": t}
        for z in (250, 500)
        for t in (0.0, 0.5)
        for s in (0.1, 0.2, 0.3)
        for p in (0.1, 0.2, 0.3)
    ],
)


_EMB: dict = {}


def embed(text: str) -> np.ndarray:
    if "m" not in _EMB:
        from elfmem.adapters.static import StaticEmbedder

        _EMB["m"] = StaticEmbedder()
    if text not in _EMB:
        v = np.asarray(_EMB["m"].embed([text])[0], dtype=np.float32)
        _EMB[text] = v / (np.linalg.norm(v) or 1.0)
    return _EMB[text]


def rule_dropq(
    q: dict,
    vecs: Vecs,
    share: float = SHARE,
    depth: int = 10,
    frac: float = 1.0,
    mix: float = 1.0,
    **_: Any,
) -> list[int]:
    """Dense query without the words that most of the lexical top ``depth`` hold."""
    lex, dense = base_lists(q)
    top = order(lex)[:depth]
    parts = lex_parts(q, set(q["cands"]))
    common = {t for t, pt in parts.items() if top and sum(b in pt for b in top) >= frac * len(top)}
    words = re.findall(r"[A-Za-z0-9']+", q["q"])
    kept = [
        w
        for w in words
        if not any(w.lower().startswith(c[:4]) and c.startswith(w.lower()[:4]) for c in common)
    ]
    if not common or not kept or len(kept) == len(words):
        return order(fuse(lex, dense, share))
    qv = q["qv"] / (np.linalg.norm(q["qv"]) or 1.0)
    v = mix * embed(" ".join(kept)) + (1 - mix) * qv
    v = v / (np.linalg.norm(v) or 1.0)
    d2 = {b: vecs.best(b, v)[0] for b in dict.fromkeys([*dense, *lex])}
    d2 = {b: x for b, x in d2.items() if b in dense or x > 0}
    return order(fuse(lex, d2, share))


RULES["dropq"] = (
    rule_dropq,
    [
        {"share": s, "depth": d, "frac": f, "mix": m}
        for s in (0.3, 0.5)
        for d in (5, 10)
        for f in (0.8, 1.0)
        for m in (0.5, 1.0)
    ],
)


_BLOCK_TF: dict[int, Any] = {}


def block_tf(blocks: list[dict]) -> tuple[list[Counter[str]], np.ndarray, dict[str, int]]:
    """Per block: its crude-stemmed word counts; the blocks' lengths; each word's block count."""
    key = id(blocks)
    if key not in _BLOCK_TF:
        tfs = [Counter(_toks(f"{b['text']} said on {b['date']}")) for b in blocks]
        lengths = np.array([sum(t.values()) for t in tfs], dtype=float)
        df: Counter[str] = Counter()
        for t in tfs:
            df.update(t.keys())
        _BLOCK_TF[key] = (tfs, lengths, dict(df))
    return _BLOCK_TF[key]


def rule_bm25(
    q: dict, vecs: Vecs, share: float = SHARE, k1: float = 1.2, b: float = 0.75, **_: Any
) -> list[int]:
    """The lexical side recomputed with other k1 and b (smoothed IDF, crude stems, not FTS5's)."""
    import math

    lex, dense = base_lists(q)
    blocks = BLOCKS_OF[id(vecs)]
    tfs, lengths, df = block_tf(blocks)
    avg = float(lengths.mean())
    n = len(blocks)
    cands = list(dict.fromkeys([*lex, *dense]))
    words = set(_toks(q["q"]))
    mine = {}
    for c in cands:
        s = 0.0
        for w in words:
            tf = tfs[c].get(w, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[c] / avg))
        if s > 0:
            mine[c] = s
    return order(fuse(mine, dense, share))


RULES["bm25"] = (
    rule_bm25,
    [
        {"share": s, "k1": k1, "b": b}
        for s in (0.3,)
        for k1 in (0.6, 1.2, 2.0)
        for b in (0.3, 0.5, 0.75, 0.9)
    ],
)


from longdoc_late import LATE_RULES  # noqa: E402  (registers the late-interaction rules)

RULES.update(LATE_RULES)

from longdoc_late2 import LATE2_RULES  # noqa: E402  (the eighth session's additions)

RULES.update(LATE2_RULES)

from longdoc_qpp import QPP_RULES  # noqa: E402  (the ninth session's)

RULES.update(QPP_RULES)
