"""Offline replay of the long-document fusion: failure analysis and candidate rules (issue 15).

``bench/longdoc_dump.py`` runs every question of ``bench/longdoc.py`` through the product once and
saves what fusion saw (the lexical hits with each query word's bm25 part, the dense seeds before
and after feedback, the candidates, the query vector, every passage vector) and the product's
ranking. This script rebuilds the product's long-document fusion from that (``rule_base``: the
smoothed IDF, score fusion with share 0.3; it reproduces the product's top ten for 759 of 759
session questions) and scores candidate rules (``bench/longdoc_rules.py``), each over its own grid,
held out by leave-one-conversation-out as ``bench/longdoc.py`` does. A rule measured here is a
lead, not a result: what the product adopts is measured again through ``bench/longdoc.py``.

    python bench/longdoc_dump.py [--data ../shared/bench/locomo-dev.json]
    python bench/longdoc_replay.py analyse session joined
    python bench/longdoc_replay.py session,joined base residual interleave depth ...
"""

from __future__ import annotations

import math
import pickle
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from longdoc import held_out, mean, metrics

OUT = Path(__file__).resolve().parent / "out"
SHARE = 0.3
"""The lexical share of the product the dumps were taken from (``fusion.LEXICAL_SHARE`` before
late interaction moved it to 0.2)."""


def smooth_idf(n: int, rows: int) -> float:
    return math.log(1.0 + (rows - n + 0.5) / (n + 0.5))


def fts_idf(n: int, rows: int) -> float:
    v = math.log((rows - n + 0.5) / (n + 0.5))
    return v if v > 0 else 1e-6


def lex_parts(q: dict, cands: set[int]) -> dict[str, dict[int, float]]:
    """word -> block -> smoothed part, over cands."""
    out = {}
    for t, parts in q["terms"].items():
        n = q["holding"].get(t, 0)
        if not n:
            continue
        ratio = smooth_idf(n, q["rows"]) / fts_idf(n, q["rows"])
        out[t] = {b: v * ratio for b, v in parts.items() if b in cands}
    return out


def scaled(d: dict[int, float]) -> dict[int, float]:
    top = max(d.values(), default=0.0)
    return {k: (v / top if top > 0 else 0.0) for k, v in d.items()}


def fuse(lex: dict[int, float], dense: dict[int, float], share: float) -> dict[int, float]:
    L, D = scaled(lex), scaled(dense)
    ids = list(dict.fromkeys([*lex, *dense]))
    return {b: share * max(L.get(b, 0.0), 0) + (1 - share) * max(D.get(b, 0.0), 0) for b in ids}


def order(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda b: (-scores[b], b))


class Vecs:
    def __init__(self, v: dict) -> None:
        self.owner = v["owner_k"]
        self.P = v["passages"].astype(np.float32)
        self.B = v["block_matrix"].astype(np.float32)
        self.bk = v["block_k"]
        self.by_block: dict[int, np.ndarray] = {}
        for k in set(self.owner.tolist()):
            self.by_block[k] = self.P[self.owner == k]
        for row, k in enumerate(self.bk.tolist()):
            if k >= 0 and k not in self.by_block:
                self.by_block[k] = self.B[row : row + 1]

    def best(self, k: int, q: np.ndarray) -> tuple[float, np.ndarray]:
        m = self.by_block[k]
        s = m @ q
        i = int(np.argmax(s))
        return float(s[i]), m[i]


def base_lists(q: dict) -> tuple[dict[int, float], dict[int, float]]:
    cands = set(q["cands"])
    parts = lex_parts(q, cands)
    lex: dict[int, float] = {}
    for p in parts.values():
        for b, v in p.items():
            lex[b] = lex.get(b, 0.0) + v
    return lex, dict(q["dense"])


def rule_base(q: dict, vecs: Vecs, share: float = SHARE, **_: Any) -> list[int]:
    lex, dense = base_lists(q)
    return order(fuse(lex, dense, share))


M = ("any@5", "all@5", "all@10", "NDCG@10")


def load(form: str):
    with (OUT / f"longdoc_{form}.pkl").open("rb") as fh:
        d = pickle.load(fh)
    return d["blocks"], d["questions"], Vecs(d["vectors"])


def analyse(form: str) -> None:
    blocks, qs, vecs = load(form)
    agree = 0
    base_rows = []
    for q in qs:
        mine = rule_base(q, vecs)
        agree += mine[:10] == q["ranked"][:10]
        base_rows.append(metrics(mine, set(q["gold"])))
    print(
        f"{form}: replay agrees top10 {agree}/{len(qs)};",
        " ".join(f"{m} {mean(base_rows, m):.3f}" for m in M),
    )
    print(
        "  product:",
        " ".join(
            f"{m} {mean([metrics(q['ranked'], set(q['gold'])) for q in qs], m):.3f}" for m in M
        ),
    )
    where = Counter()
    holders = Counter()
    fails = 0
    for q in qs:
        gold = set(q["gold"])
        if len(gold) != 2:
            continue
        ranked = rule_base(q, vecs)
        if gold <= set(ranked[:5]):
            continue
        fails += 1
        lex, dense = base_lists(q)
        lo, do = order(lex), order(dense)
        for g in gold - set(ranked[:5]):
            fr = ranked.index(g) + 1 if g in ranked else 99
            lr = lo.index(g) + 1 if g in lo else 99
            dr = do.index(g) + 1 if g in do else 99

            def b(r):
                return "1-5" if r <= 5 else "6-10" if r <= 10 else "11-50" if r < 99 else "none"

            where[(b(fr), b(lr), b(dr))] += 1
            found = set(gold) & set(ranked[:5])
            for h in ranked[:5]:
                if h in gold:
                    continue
                same = blocks[h]["conv"] == q["conv"]
                adj = any(abs(h - x) == 1 for x in gold)
                holders[
                    "same conv" + (", adjacent to a gold" if adj else "") if same else "other conv"
                ] += 1
            holders["first gold found in top5" if found else "neither gold in top5"] += 1
    print(f"  2-gold failures {fails}; missing gold (fused, lexical, dense) rank bands:")
    for k, v in where.most_common():
        print("   ", k, v)
    print("  top-5 holders:", dict(holders))
    margins(qs, vecs)


def margins(qs: list[dict], vecs: Vecs) -> None:
    """Where the lexical and dense top blocks differ: how often each is gold, by the dense lead."""
    bands = ((0.0, 0.01), (0.01, 1.0))
    counts = {band: [0, 0, 0] for band in bands}
    for q in qs:
        lex, dense = base_lists(q)
        lo, do = order(lex), order(dense)
        if len(lo) < 2 or len(do) < 2 or lo[0] == do[0]:
            continue
        lead = dense[do[0]] - dense[do[1]]
        band = next(b for b in bands if b[0] <= lead < b[1])
        counts[band][0] += 1
        counts[band][1] += do[0] in q["gold"]
        counts[band][2] += lo[0] in q["gold"]
    for (low, high), (n, d_gold, l_gold) in counts.items():
        print(
            f"  tops differ, dense lead [{low}, {high}): n {n}, dense top gold {d_gold},"
            f" lexical top gold {l_gold}"
        )


def by_gold(rows):
    out = []
    for g in (1, 2, 3):
        s = [r for r in rows if min(r["ngold"], 3) == g]
        out.append(f"{mean(s, 'all@5'):.3f}")
    return "/".join(out)


def evaluate(forms: list[str], rules: list[str]) -> None:
    from longdoc_rules import BLOCKS_OF, RULES

    data = {f: load(f) for f in forms}
    for blocks, _, vecs in data.values():
        BLOCKS_OF[id(vecs)] = blocks
    for rule in rules:
        fn, grid = RULES[rule]
        settings: dict[str, list[dict]] = {}
        for params in grid:
            name = f"{rule} " + ",".join(f"{k}={v}" for k, v in params.items())
            rows = []
            for f, (_, qs, vecs) in data.items():
                for q in qs:
                    rows.append(
                        {
                            "form": f,
                            "conv": q["conv"],
                            "ngold": len(q["gold"]),
                            **metrics(fn(q, vecs, **params), set(q["gold"])),
                        }
                    )
            settings[name] = rows
            print(
                f"  {name:<44}",
                "  ".join(
                    f"{f}: "
                    + " ".join(f"{mean([r for r in rows if r['form'] == f], m):.3f}" for m in M)
                    + " g "
                    + by_gold([r for r in rows if r["form"] == f])
                    for f in forms
                ),
                flush=True,
            )
        chosen, picks = held_out(settings)
        named = Counter(p.split(": ", 1)[1] for p in picks)
        print(f"HELD-OUT {rule}: picks {named.most_common()}")
        for f in forms:
            rows = [r for r in chosen if r["form"] == f]
            print(
                f"   {f}: "
                + " ".join(f"{m} {mean(rows, m):.3f}" for m in M)
                + " g "
                + by_gold(rows)
            )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if sys.argv[1] == "analyse":
        for form in sys.argv[2:]:
            analyse(form)
    else:
        evaluate(sys.argv[1].split(","), sys.argv[2:])
