"""Late interaction, eighth session: cheap additions to ``late-fine`` for the session form.

``late-fine`` (``bench/longdoc_late.py``) scores a block by the mean over the query's content
tokens of each token's best cosine against the block's windows of 5 tokens (stride 2). The
product keeps, per block, its token ids and each window's summed vector norm, so at query time
it has the matrix ``S`` of every query token's cosine with every window of every candidate. The
rules here add a second score computed from ``S``, the token ids or the query alone, each with
its own share beside late-fine's chosen point (lexical 0.2, late 0.1, the fill):

* ``onewin``: the best single window for the whole query, ``max_w mean_t S[t, w]`` (the cosine of
  a window with the mean of the query's token vectors, less a factor constant per query);
  ``qwin`` the same with the model's own query vector.
* ``regionR``: each token's best window inside a run of ``R`` consecutive windows, meaned over
  the tokens, the best run (``region1`` would be ``onewin``, an unbounded run ``late``).
* ``nearW``: the share of the query's distinct content tokens (exact ids) found together in some
  run of ``W`` block tokens; ``nearc30`` weights each token by an IDF over the candidates.
* ``top2``: each token's best window and its best one at least 3 windows away, averaged.
* ``lse05``, ``lse10``, ``lsem05``: each token's soft maximum over windows,
  ``tau x log sum exp(S / tau)`` (``lsem``: log mean exp).
* ``late3``, ``late8``: windows of 3 and 8 beside 5; ``late5s1``: windows of 5 at stride 1 in
  place of stride 2.
* ``tnorm``: each token's maxima min-max scaled over the candidates before the mean; ``latec``:
  the tokens weighted by an IDF over the candidates; ``cover``: the share of the query's content
  tokens the block holds anywhere.
* ``peak``, ``zpeak``: each token's best window less its mean over the block's windows (``z``:
  divided by their spread).
* ``dm``: a share of the dense cosine min-max scaled (it spans 0.97-1 scaled by the top).

Each enters as ``lj`` x its min-max over the candidates (taken from the dense share) or mixed
into late's raw score (``mix``). Measured 2026-12-02: docs/benchmarks.md, "Late interaction: the
last questions on sessions (eighth session)".

Registered into ``longdoc_rules.RULES``; run as

    python bench/longdoc_replay.py session,joined late2-base late2-dm late2-late5s1 \
        late2-onewin late2-qwin late2-near10 ... (every ``late2-*`` name in ``LATE2_RULES``)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from longdoc_late import memory, tokens
from longdoc_replay import Vecs, base_lists, order, scaled

WINDOW = 5
STRIDE = 2
"""late-fine's chosen windows (``Memory.windows`` uses stride ``w // 2``)."""

_FEAT: dict[tuple, dict[str, dict[int, float]]] = {}
_LAYOUT: dict[tuple, tuple[np.ndarray, np.ndarray, list[np.ndarray]]] = {}


def _layout(vecs: Vecs, w: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Unit windows of ``w`` tokens, each window's block, and each block's window rows."""
    key = (id(vecs), w)
    if key not in _LAYOUT:
        mem = memory(vecs)
        win, owner = mem.windows(w, 0.0, "own")
        rows = [np.flatnonzero(owner == k) for k in range(mem.n)]
        _LAYOUT[key] = (win, owner, rows)
    return _LAYOUT[key]


def _per_token_max(sims: np.ndarray, rows: list[np.ndarray], ids: list[int]) -> np.ndarray:
    out = np.full((sims.shape[0], len(ids)), -1.0, dtype=np.float32)
    for j, b in enumerate(ids):
        r = rows[b]
        if len(r):
            out[:, j] = sims[:, r].max(axis=1)
    return out


def _top2(s: np.ndarray, gap: int) -> np.ndarray:
    """Per row the mean of the best window and the best one at least ``gap`` windows away."""
    out = np.empty(s.shape[0], dtype=np.float32)
    n = s.shape[1]
    for t in range(s.shape[0]):
        i = int(np.argmax(s[t]))
        far = np.r_[s[t, : max(0, i - gap + 1)], s[t, min(n, i + gap) :]]
        out[t] = 0.5 * (s[t, i] + (far.max() if len(far) else s[t, i]))
    return out


def _region(s: np.ndarray, span: int) -> float:
    """The best run of ``span`` consecutive windows: each token's max inside it, then the mean."""
    if s.shape[1] == 0:
        return -1.0
    if s.shape[1] <= span:
        return float(s.max(axis=1).mean())
    runs = np.lib.stride_tricks.sliding_window_view(s, span, axis=1).max(axis=2)
    return float(runs.mean(axis=0).max())


def _near(block: np.ndarray, qids: np.ndarray, width: int, wts: dict[int, float]) -> float:
    """Largest weight of distinct query tokens (exact ids) in any run of ``width`` block tokens."""
    hit = np.flatnonzero(np.isin(block, qids))
    best = 0.0
    j = 0
    which = block[hit].tolist()
    for i in range(len(hit)):
        while hit[i] - hit[j] >= width:
            j += 1
        best = max(best, sum(wts[x] for x in set(which[j : i + 1])))
    return best


def _stride1(vecs: Vecs) -> tuple[np.ndarray, list[np.ndarray]]:
    """Unit windows of 5 tokens at stride 1, and each block's window rows."""
    key = (id(vecs), "s1")
    if key not in _LAYOUT:
        t, mem = tokens(), memory(vecs)
        out, rows, n = [], [], 0
        for p in mem.per:
            c = np.vstack([np.zeros((1, t.raw.shape[1]), np.float32), np.cumsum(t.raw[p], 0)])
            st = np.arange(0, max(1, len(p) - WINDOW + 1))
            m = c[np.minimum(st + WINDOW, len(p))] - c[st]
            out.append(m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9))
            rows.append(np.arange(n, n + len(st)))
            n += len(st)
        _LAYOUT[key] = (np.vstack(out).astype(np.float32), np.zeros(0), rows)
    win, _, rows = _LAYOUT[key]
    return win, rows


def _soft(s: np.ndarray, tau: float, by: str) -> np.ndarray:
    """Per row ``tau x log (sum or mean) exp(S / tau)``: a soft maximum over windows."""
    m = s.max(axis=1, keepdims=True)
    e = np.exp((s - m) / tau)
    return m[:, 0] + tau * np.log(e.sum(axis=1) if by == "sum" else e.mean(axis=1))


PER_BLOCK = (
    "onewin qwin top2 lse05 lse10 lsem05 peak zpeak region3 region6 region12 region25 region50"
).split()


def features(q: dict, vecs: Vecs, ids: list[int]) -> dict[str, dict[int, float]]:
    """Every candidate score for one question's candidates (cached per question)."""
    key = (id(vecs), q["q"])
    if key in _FEAT:
        return _FEAT[key]
    t = tokens()
    mem = memory(vecs)
    qids = np.array(t.content(q["q"]), dtype=np.int64)
    out: dict[str, dict[int, float]] = {}
    _FEAT[key] = out
    if len(qids) == 0:
        return out
    qv = t.unit[qids]
    win, _, rows = _layout(vecs, WINDOW)
    sims = (qv @ win.T).astype(np.float32)
    mx = _per_token_max(sims, rows, ids)

    def put(name: str, vals: Any) -> None:
        out[name] = dict(zip(ids, [float(v) for v in vals], strict=True))

    put("late", mx.mean(axis=0))
    # each token's maxima min-max scaled over the candidates, then the mean
    lo, hi = mx.min(axis=1, keepdims=True), mx.max(axis=1, keepdims=True)
    put("tnorm", ((mx - lo) / np.where(hi > lo, hi - lo, 1.0)).mean(axis=0))
    # the tokens weighted by an IDF over the candidates (exact ids), not over the memory
    has = np.array([[np.isin(i, mem.per[b]).item() for b in ids] for i in qids], dtype=float)
    df = has.sum(axis=1)
    cw = np.log(1.0 + (len(ids) - df + 0.5) / (df + 0.5))
    cw = cw / (cw.sum() or 1.0)
    put("latec", cw @ mx)
    put("cover", has.mean(axis=0))
    for wv in (3, 8):
        w2, _, r2 = _layout(vecs, wv)
        put(f"late{wv}", _per_token_max((qv @ w2.T).astype(np.float32), r2, ids).mean(axis=0))
    w1, r1 = _stride1(vecs)
    s1 = (qv @ w1.T).astype(np.float32)
    put("late5s1", _per_token_max(s1, r1, ids).mean(axis=0))
    qwhole = (win @ (q["qv"] / (np.linalg.norm(q["qv"]) or 1.0))).astype(np.float32)
    per: dict[str, list[float]] = {name: [] for name in PER_BLOCK}
    for b in ids:
        s = sims[:, rows[b]]
        if s.shape[1] == 0:
            for name in per:
                per[name].append(-1.0)
            continue
        best, mean, sd = s.max(axis=1), s.mean(axis=1), s.std(axis=1) + 1e-6
        vals = {
            "onewin": s.mean(axis=0).max(),
            "qwin": qwhole[rows[b]].max(),
            "top2": _top2(s, 3).mean(),
            "lse05": _soft(s, 0.05, "sum").mean(),
            "lse10": _soft(s, 0.1, "sum").mean(),
            "lsem05": _soft(s, 0.05, "mean").mean(),
            "peak": (best - mean).mean(),
            "zpeak": ((best - mean) / sd).mean(),
            **{f"region{k}": _region(s, k) for k in (3, 6, 12, 25, 50)},
        }
        for name, v in vals.items():
            per[name].append(float(v))
    for name, vals in per.items():
        put(name, vals)
    even = {int(i): 1.0 / len(qids) for i in qids}
    byc = {int(i): float(w) for i, w in zip(qids, cw, strict=True)}
    for width in (10, 20, 30, 50):
        put(f"near{width}", [_near(mem.per[b], qids, width, even) for b in ids])
    put("nearc30", [_near(mem.per[b], qids, 30, byc) for b in ids])
    return out


def _minmax(d: dict[int, float]) -> dict[int, float]:
    if not d:
        return {}
    lo, hi = min(d.values()), max(d.values())
    return {b: ((v - lo) / (hi - lo) if hi > lo else 1.0) for b, v in d.items()}


def candidates(q: dict, vecs: Vecs) -> tuple[list[int], dict[int, float], dict[int, float]]:
    """late-fine's lists: lexical, and dense with the fill (lexical hits get their own cosine)."""
    lex, dense = base_lists(q)
    if dense:
        qv = q["qv"] / (np.linalg.norm(q["qv"]) or 1.0)
        cap = max(dense.values())
        dense = {**{b: min(vecs.best(b, qv)[0], cap) for b in lex if b not in dense}, **dense}
    ids = list(dict.fromkeys([*lex, *dense]))
    return ids, lex, dense


def rule_late2(
    q: dict,
    vecs: Vecs,
    share: float = 0.2,
    li: float = 0.1,
    feat: str = "",
    lj: float = 0.0,
    mix: float = 0.0,
    mfeat: str = "",
    dm: float = 0.0,
    **_: Any,
) -> list[int]:
    """share x lexical + li x late + lj x feature + the rest x dense (each scaled over the ids).

    ``mix`` > 0 replaces late by ``(1 - mix) x late + mix x feature`` before its min-max (the two
    raw scores share a scale where both are cosines); ``mfeat`` names another feature to mix in
    that way while ``feat`` takes its own share ``lj``. ``dm``: a share of the dense cosine min-max
    scaled over the ids, beside its part scaled by the top (which spans 0.97-1 on sessions).
    """
    ids, lex, dense = candidates(q, vecs)
    if not ids:
        return []
    L = scaled(lex)
    D = scaled({b: max(v, 0.0) for b, v in dense.items()})
    f = features(q, vecs, ids)
    if not f:
        return order({b: share * L.get(b, 0.0) + (1 - share - li) * D.get(b, 0.0) for b in ids})
    late = f["late"]
    if (mfeat or feat) and mix:
        late = {b: (1 - mix) * late[b] + mix * f[mfeat or feat][b] for b in ids}
    X = _minmax(late)
    Y = _minmax(f[feat]) if feat and lj else {}
    M = _minmax({b: dense.get(b, 0.0) for b in ids}) if dm else {}
    rest = max(0.0, 1.0 - share - li - lj - dm)
    return order(
        {
            b: share * L.get(b, 0.0)
            + li * X[b]
            + lj * Y.get(b, 0.0)
            + dm * M.get(b, 0.0)
            + rest * D.get(b, 0.0)
            for b in ids
        }
    )


def _grid(**axes: Any) -> list[dict]:
    out: list[dict] = [{}]
    for k, vals in axes.items():
        out = [{**o, k: v} for o in out for v in vals]
    return out


FEATS = (
    "onewin qwin near10 near20 near30 near50 nearc30 region3 region6 region12 region25 region50 "
    "top2 lse05 lse10 lsem05 late3 late8 tnorm latec cover peak zpeak"
).split()
SHARES = (0.2, 0.25)
"""late-fine's lexical shares as its folds chose them; late 0.1 throughout."""

LATE2_RULES: dict[str, tuple] = {
    # late-fine's two chosen points alone: the baseline every grid below contains
    "late2-base": (rule_late2, _grid(share=SHARES, li=[0.1])),
    # a share of the dense cosine min-max scaled
    "late2-dm": (rule_late2, _grid(share=SHARES, li=[0.1], dm=[0.0, 0.025, 0.05, 0.1])),
    # windows at stride 1 in place of stride 2
    "late2-late5s1": (
        rule_late2,
        _grid(share=SHARES, li=[0.1])
        + _grid(share=SHARES, li=[0.0], feat=["late5s1"], lj=[0.05, 0.1, 0.15]),
    ),
}
for _f in FEATS:
    LATE2_RULES[f"late2-{_f}"] = (
        rule_late2,
        _grid(share=SHARES, li=[0.1])
        + _grid(share=SHARES, li=[0.1], feat=[_f], lj=[0.025, 0.05, 0.1])
        + _grid(share=SHARES, li=[0.1], feat=[_f], mix=[0.25, 0.5]),
    )

# near30 on a wider grid (lexical 0.3 and lj 0.075 as well), and near30 beside region25 mixed in
LATE2_RULES["late2-near30-wide"] = (
    rule_late2,
    _grid(share=[0.2, 0.25, 0.3], li=[0.1], feat=["near30"], lj=[0.0, 0.025, 0.05, 0.075]),
)
LATE2_RULES["late2-near30-region25"] = (
    rule_late2,
    _grid(
        share=SHARES,
        li=[0.1],
        feat=["near30"],
        lj=[0.0, 0.025, 0.05],
        mfeat=["region25"],
        mix=[0.0, 0.5],
    ),
)
