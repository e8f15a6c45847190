"""Query-dependent fusion weights and other list normalisations (issue 15, ninth session).

Main's long-document fusion (``late2-base`` at lexical 0.2, late 0.1 in ``bench/longdoc_late2.py``;
``rule_main`` here reproduces it) is ``0.2 x bm25/top + 0.1 x late (min-max) + 0.7 x cosine/top``
over the fused candidates, the same weights for every question. Measured beside that point:

* **Query-dependent weights** (query performance prediction, ``rule_qpp``): the lexical share,
  and the late share, move with one number the query or the first-stage lists tell, standardised
  by its median and interquartile range over every question of both forms (no labels read):
  ``share = clip(s0 + cs x z, 0.05, 0.6)``, ``late = clip(0.1 + cl x z, 0, 0.4)``. Predictors:
  ``maxidf``/``meanidf`` (the matched query words' smoothed IDF over its largest value),
  ``match`` (the share of the query's words some block holds), ``nq`` (its content tokens),
  ``lexgap`` (1 - 5th/1st of the lexical list), ``dspread`` (1 - 10th/1st of the dense list),
  ``agree``/``agree3``/``agree10`` (blocks in both lists' top 5, 3, 10), ``agreelate`` and
  ``agreedl`` (the late list's top 5 against the lexical or the dense one), ``lategap``.
  ``rule_agreeclip``: ``agree``'s pick written out, ``share = 0.2 + step x (2 - k)``.
* **Normalisations** of each list before the weighted sum (``rule_norm``): ``z`` over the
  candidates (CombSUM-z when all three are), ``medgap`` ((x - median) / (top - median)),
  ``depthD`` for bm25 ((x - D-th best) / (top - D-th best)), and for bm25 ``idfshare`` (bm25
  over the most the matched words could give, sum of idf x (k1 + 1): not scaled per query) and
  ``wordnorm`` (each word's part over that word's best part among the candidates, IDF-weighted).
* **From the misses** (``python bench/longdoc_qpp_run.py misses session``): ``rule_words`` (a
  share of the query's distinct words a block holds) and ``rule_localidf`` (each word's bm25
  part discounted by the share of the lexical top k holding it: the speakers' names, held by
  every session of their conversation, flatten the lexical list's top).

Registered into ``longdoc_rules.RULES`` (``python bench/longdoc_replay.py session,joined
qpp-agree``); ``bench/longdoc_qpp_run.py`` scores them held out with the questions gained and
lost against main, and ``bench/longdoc_qpp_check.py`` runs the agreement rule through the
product path. Measured 2026-12-02: docs/benchmarks.md, "Query-dependent fusion and other
normalisations (ninth session)".
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np
from longdoc_late import STOP, tokens
from longdoc_late2 import WINDOW, _layout, _per_token_max, candidates
from longdoc_replay import Vecs, lex_parts, order, smooth_idf

K1 = 1.2
"""FTS5's bm25 saturation: one word's part is at most idf x (k1 + 1)."""

_BASE: dict[tuple, dict[str, Any]] = {}
_STATS: dict[str, tuple[float, float]] = {}


def base(q: dict, vecs: Vecs) -> dict[str, Any]:
    """Main's three lists for one question, with what the predictors read (cached)."""
    key = (id(vecs), q["q"], q["conv"])
    if key in _BASE:
        return _BASE[key]
    ids, lex, dense = candidates(q, vecs)
    t = tokens()
    qids = np.array(t.content(q["q"]), dtype=np.int64)
    late: dict[int, float] = {}
    if len(qids) and ids:
        win, _, rows = _layout(vecs, WINDOW)
        mx = _per_token_max((t.unit[qids] @ win.T).astype(np.float32), rows, ids)
        late = dict(zip(ids, mx.mean(axis=0).tolist(), strict=True))
    parts = lex_parts(q, set(q["cands"]))
    n = q["rows"]
    idf = {w: smooth_idf(q["holding"][w], n) for w in parts if q["holding"].get(w)}
    words = [w for w in re.findall(r"[a-z0-9]+", q["q"].lower()) if w not in STOP]
    out = {
        "ids": ids,
        "lex": lex,
        "dense": dense,
        "late": late,
        "parts": parts,
        "idf": idf,
        "idfmax": smooth_idf(0, n),
        "nwords": max(1, len(set(words))),
        "nq": len(qids),
    }
    _BASE[key] = out
    return out


# ---- normalisations -------------------------------------------------------------------------


def norm(d: dict[int, float], ids: list[int], how: str) -> dict[int, float]:
    """``d`` over ``ids`` (a missing id is 0) scaled by ``how``."""
    if not d:
        return {}
    v = np.array([d.get(b, 0.0) for b in ids], dtype=np.float64)
    if how == "top":
        top = max(d.values())
        s = np.maximum(v, 0.0) / top if top > 0 else np.zeros_like(v)
    elif how == "minmax":
        lo, hi = v.min(), v.max()
        s = (v - lo) / (hi - lo) if hi > lo else np.ones_like(v)
    elif how == "z":
        sd = v.std()
        s = (v - v.mean()) / sd if sd > 0 else np.zeros_like(v)
    elif how == "medgap":
        med, top = float(np.median(v)), v.max()
        s = (v - med) / (top - med) if top > med else np.zeros_like(v)
    else:
        raise ValueError(how)
    return dict(zip(ids, s.tolist(), strict=True))


def lex_norm(b: dict[str, Any], how: str) -> dict[int, float]:
    ids, lex = b["ids"], b["lex"]
    if how in ("top", "minmax", "z", "medgap"):
        return norm(lex, ids, how)
    if how.startswith("depth"):  # (x - the d-th best) / (top - the d-th best), floored at 0
        v = sorted(lex.values(), reverse=True)
        if not v:
            return {}
        low = v[min(int(how[5:]), len(v)) - 1]
        span = v[0] - low
        return {x: (max(0.0, lex.get(x, 0.0) - low) / span if span > 0 else 1.0) for x in ids}
    if how == "idfshare":  # not scaled per query: the most the matched words could give
        most = sum(b["idf"].values()) * (K1 + 1)
        return {x: (lex.get(x, 0.0) / most if most > 0 else 0.0) for x in ids}
    if how == "wordnorm":  # each word's part over that word's best part, IDF-weighted
        total = sum(b["idf"].values()) or 1.0
        out = dict.fromkeys(ids, 0.0)
        for w, pt in b["parts"].items():
            top = max(pt.values(), default=0.0)
            if top <= 0 or w not in b["idf"]:
                continue
            for x, v in pt.items():
                if x in out:
                    out[x] += b["idf"][w] * v / top / total
        return out
    raise ValueError(how)


def combine(
    b: dict[str, Any],
    share: float,
    li: float,
    wd: float | None = None,
    lexn: str = "top",
    laten: str = "minmax",
    densen: str = "top",
    extra: dict[int, float] | None = None,
) -> list[int]:
    """share x lexical + li x late + wd x dense (wd: 1 - share - li when None), each normalised."""
    ids = b["ids"]
    if not ids:
        return []
    L = lex_norm(b, lexn)
    D = norm({x: max(v, 0.0) for x, v in b["dense"].items()}, ids, densen)
    if not b["late"]:  # no content token: main gives dense 1 - share - li and no late
        li_, X = 0.0, {}
    else:
        li_, X = li, norm(b["late"], ids, laten)
    w = max(0.0, 1.0 - share - li) if wd is None else wd
    extra = extra or {}
    return order(
        {
            x: share * L.get(x, 0.0) + li_ * X.get(x, 0.0) + w * D.get(x, 0.0) + extra.get(x, 0.0)
            for x in ids
        }
    )


def rule_main(q: dict, vecs: Vecs, share: float = 0.2, li: float = 0.1, **_: Any) -> list[int]:
    """Main's point (late2-base): the baseline every grid holds."""
    return combine(base(q, vecs), share, li)


def rule_norm(
    q: dict,
    vecs: Vecs,
    share: float = 0.2,
    li: float = 0.1,
    wd: float | None = None,
    lexn: str = "top",
    laten: str = "minmax",
    densen: str = "top",
    **_: Any,
) -> list[int]:
    return combine(base(q, vecs), share, li, wd, lexn, laten, densen)


# ---- query-dependent weights ----------------------------------------------------------------


def predictor(b: dict[str, Any], name: str) -> float:
    lex, dense, late = b["lex"], b["dense"], b["late"]
    if name in ("maxidf", "meanidf"):
        vals = [v / b["idfmax"] for v in b["idf"].values()]
        if not vals:
            return 0.0
        return max(vals) if name == "maxidf" else sum(vals) / len(vals)
    if name == "match":
        return min(1.0, len(b["idf"]) / b["nwords"])
    if name == "nq":
        return float(b["nq"])
    if name == "lexgap":
        v = sorted(lex.values(), reverse=True)
        return 1.0 - v[min(4, len(v) - 1)] / v[0] if v and v[0] > 0 else 0.0
    if name == "dspread":
        v = sorted(dense.values(), reverse=True)
        return 1.0 - v[min(9, len(v) - 1)] / v[0] if v and v[0] > 0 else 0.0
    if name == "agreelate":  # lexical and late interaction's top 5
        return len(set(order(lex)[:5]) & set(order(late)[:5])) / 5.0
    if name == "agreedl":  # dense and late interaction's top 5
        return len(set(order(dense)[:5]) & set(order(late)[:5])) / 5.0
    if name.startswith("agree"):  # agree, agree3, agree10: the lists' top n in common
        n = int(name[5:] or 5)
        return len(set(order(lex)[:n]) & set(order(dense)[:n])) / n
    if name == "lategap":
        v = sorted(late.values(), reverse=True)
        return v[0] - v[min(4, len(v) - 1)] if v else 0.0
    raise ValueError(name)


PREDICTORS = (
    "maxidf meanidf match nq lexgap dspread agree lategap agree3 agree10 agreelate agreedl".split()
)


def standard(b: dict[str, Any], name: str) -> float:
    """The predictor as (x - median) / IQR over every question of both forms (``prepare``)."""
    if not _STATS:  # through longdoc_replay.py: read both dumps once
        from longdoc_replay import load
        from longdoc_rules import BLOCKS_OF

        both = {f: load(f) for f in ("session", "joined")}
        for blocks, _, v in both.values():
            BLOCKS_OF[id(v)] = blocks
        prepare(both)
    med, iqr = _STATS[name]
    return (predictor(b, name) - med) / (iqr or 1.0)


def rule_qpp(
    q: dict,
    vecs: Vecs,
    pred: str = "maxidf",
    cs: float = 0.0,
    cl: float = 0.0,
    s0: float = 0.2,
    **_: Any,
) -> list[int]:
    """Lexical share s0 + cs x z and late share 0.1 + cl x z, z the standardised predictor."""
    b = base(q, vecs)
    z = standard(b, pred) if (cs or cl) else 0.0
    share = min(0.6, max(0.05, s0 + cs * z))
    li = min(0.4, max(0.0, 0.1 + cl * z))
    return combine(b, share, li)


def prepare(data: dict[str, tuple]) -> None:
    """Every predictor's median and IQR over all questions (no labels)."""
    vals: dict[str, list[float]] = {p: [] for p in PREDICTORS}
    for _, qs, vecs in data.values():
        for q in qs:
            b = base(q, vecs)
            for p in PREDICTORS:
                vals[p].append(predictor(b, p))
    for p, v in vals.items():
        lo, med, hi = np.percentile(v, [25, 50, 75])
        _STATS[p] = (float(med), float(hi - lo))


# ---- from the misses ------------------------------------------------------------------------


def rule_words(
    q: dict, vecs: Vecs, share: float = 0.2, cw: float = 0.0, idf: bool = False, **_: Any
) -> list[int]:
    """Main plus cw x the share of the query's matched words (IDF-weighted with ``idf``) a
    block holds, over the lexical candidates."""
    b = base(q, vecs)
    total = sum(b["idf"].values()) if idf else len(b["idf"])
    held: Counter[int] = Counter()
    for w, pt in b["parts"].items():
        if w not in b["idf"]:
            continue
        for x, v in pt.items():
            if v > 0:
                held[x] += b["idf"][w] if idf else 1.0
    extra = {x: cw * held[x] / total for x in b["ids"]} if total else {}
    return combine(b, share, 0.1, extra=extra)


def rule_localidf(
    q: dict, vecs: Vecs, share: float = 0.2, a: float = 0.0, k: int = 10, **_: Any
) -> list[int]:
    """Main with each word's bm25 part weighed by 1 - a x (share of the lexical top k holding
    it): a word every one of the best lexical blocks holds (the speakers' names, in each session
    of their conversation) stops flattening the lexical list's top."""
    b = base(q, vecs)
    if not a:
        return combine(b, share, 0.1)
    top = order(b["lex"])[:k]
    lex: dict[int, float] = {}
    for pt in b["parts"].values():
        w = 1.0 - a * (sum(x in pt and pt[x] > 0 for x in top) / max(1, len(top)))
        for x, v in pt.items():
            lex[x] = lex.get(x, 0.0) + w * v
    return combine({**b, "lex": {x: v for x, v in lex.items() if v > 0}}, share, 0.1)


def rule_agreeclip(
    q: dict, vecs: Vecs, lo: float = 0.05, hi: float = 0.6, step: float = 0.05, **_: Any
) -> list[int]:
    """``qpp-agree``'s pick, share = 0.3 - step x k (k: blocks in both lists' top five),
    clipped to [lo, hi]."""
    b = base(q, vecs)
    k = len(set(order(b["lex"])[:5]) & set(order(b["dense"])[:5]))
    return combine(b, min(hi, max(lo, 0.2 + step * (2 - k))), 0.1)


def _g(**axes: Any) -> list[dict]:
    out: list[dict] = [{}]
    for k, vals in axes.items():
        out = [{**o, k: v} for o in out for v in vals]
    return out


MAIN = {"share": 0.2, "li": 0.1}
QPP_RULES: dict[str, tuple] = {
    "qpp-main": (rule_main, [MAIN, {"share": 0.25, "li": 0.1}]),
    # all three lists z-scored (CombSUM-z); lexical weight 1, late and dense relative to it
    "qpp-combz": (
        rule_norm,
        [MAIN]
        + _g(
            share=[1.0],
            li=[0.25, 0.5, 1.0],
            wd=[0.05, 0.1, 0.25],
            lexn=["z"],
            laten=["z"],
            densen=["z"],
        ),
    ),
    # only the dense list re-normalised (its spread is tiny scaled by the top)
    "qpp-dmed": (
        rule_norm,
        [MAIN] + _g(share=[0.2, 0.25], li=[0.1], wd=[0.01, 0.02, 0.05, 0.1], densen=["medgap"]),
    ),
    "qpp-dz": (
        rule_norm,
        [MAIN] + _g(share=[0.2, 0.25], li=[0.1], wd=[0.005, 0.01, 0.02, 0.04], densen=["z"]),
    ),
    # only the lexical list re-normalised
    "qpp-lz": (rule_norm, [MAIN] + _g(share=[0.03, 0.05, 0.08, 0.12], li=[0.1], lexn=["z"])),
    "qpp-lidf": (
        rule_norm,
        [MAIN] + _g(share=[0.1, 0.2, 0.3, 0.4, 0.5], li=[0.1], lexn=["idfshare"]),
    ),
    "qpp-lword": (
        rule_norm,
        [MAIN] + _g(share=[0.15, 0.2, 0.25, 0.3], li=[0.1], lexn=["wordnorm"]),
    ),
    "qpp-latez": (rule_norm, [MAIN] + _g(share=[0.2, 0.25], li=[0.02, 0.03, 0.05], laten=["z"])),
    "qpp-words": (
        rule_words,
        [MAIN] + _g(share=[0.2, 0.25], cw=[0.025, 0.05, 0.1], idf=[False, True]),
    ),
}
QPP_RULES["qpp-ldepth"] = (
    rule_norm,
    [MAIN] + _g(share=[0.1, 0.15, 0.2], li=[0.1], lexn=["depth5", "depth10", "depth20"]),
)
QPP_RULES["qpp-localidf"] = (
    rule_localidf,
    [MAIN] + _g(share=[0.2], a=[0.25, 0.5, 0.75, 1.0], k=[5, 10, 20]),
)
QPP_RULES["qpp-agreeclip"] = (
    rule_agreeclip,
    _g(lo=[0.05, 0.1, 0.15], hi=[0.3, 0.6]) + [{"step": 0.0}],
)
# one side of it only: more lexical weight where the lists disagree, or less where they agree
QPP_RULES["qpp-agreeside"] = (
    rule_agreeclip,
    [{"step": 0.0}, {"lo": 0.2, "hi": 0.6}, {"lo": 0.05, "hi": 0.2}],
)
# around agree's pick: finer steps, and the share at the median agreement
QPP_RULES["qpp-agree-fine"] = (
    rule_qpp,
    _g(pred=["agree"], s0=[0.2, 0.25], cs=[0.0, -0.025, -0.05, -0.075]),
)
for _p in PREDICTORS:
    QPP_RULES[f"qpp-{_p}"] = (
        rule_qpp,
        _g(pred=[_p], cs=[-0.1, -0.05, 0.0, 0.05, 0.1], cl=[-0.05, 0.0, 0.05]),
    )
