"""Driver for ``bench/longdoc_qpp.py``'s rules: held out, with the questions gained and lost.

    python bench/longdoc_qpp_run.py [--show] [rule ...]    # every qpp-* rule by default
    python bench/longdoc_qpp_run.py misses session         # main's misses at ranks 6-7

Each rule's grid is scored on both dumps (``bench/longdoc_dump.py``); held out = leave one
conversation out, one setting per fold for both forms, chosen by recall_all@5 then NDCG@10 (as
``bench/longdoc_replay.py``). Beside each held-out row: recall_all@5 as a count and the
questions gained and lost against main's point (lexical 0.2, late 0.1) question by question;
``--show`` lists them.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from longdoc import held_out, mean, metrics  # noqa: E402
from longdoc_qpp import (  # noqa: E402
    _STATS,
    MAIN,
    QPP_RULES,
    base,
    combine,
    lex_norm,
    norm,
    predictor,
    prepare,
    rule_main,
)

SHOW = False
"""Print each question gained or lost against main (``--show``)."""


def run(rules: list[str]) -> None:
    from longdoc_replay import M, load
    from longdoc_rules import BLOCKS_OF

    forms = ("session", "joined")
    data = {f: load(f) for f in forms}
    for blocks, _, vecs in data.values():
        BLOCKS_OF[id(vecs)] = blocks
    prepare(data)
    for f, (_, qs, vecs) in data.items():
        ks = Counter(round(5 * predictor(base(q, vecs), "agree")) for q in qs)
        print(f"{f}: questions by blocks in both top fives", sorted(ks.items()))
    print("predictor (median, IQR):", {k: tuple(round(x, 3) for x in v) for k, v in _STATS.items()})

    def rows_of(fn: Any, params: dict) -> list[dict]:
        rows = []
        for f, (_, qs, vecs) in data.items():
            for i, q in enumerate(qs):
                ranked = fn(q, vecs, **params)
                rows.append(
                    {"form": f, "i": i, "conv": q["conv"], **metrics(ranked, set(q["gold"]))}
                )
        return rows

    main_rows = rows_of(rule_main, MAIN)
    main_all = {(r["form"], r["i"]): r["all@5"] for r in main_rows}
    for rule in rules:
        fn, grid = QPP_RULES[rule]
        settings = {}
        for params in grid:
            name = f"{rule} " + ",".join(f"{k}={v}" for k, v in params.items() if k != "_")
            settings[name] = rows_of(fn, params)
            print(
                f"  {name:<60}",
                "  ".join(
                    f"{f[:4]}: "
                    + " ".join(
                        f"{mean([r for r in settings[name] if r['form'] == f], m):.3f}" for m in M
                    )
                    for f in forms
                ),
                flush=True,
            )
        chosen, picks = held_out(settings)
        named = Counter(p.split(": ", 1)[1].split(" ", 1)[1] for p in picks)
        print(f"HELD-OUT {rule}: picks {named.most_common()}")
        for f in forms:
            rs = [r for r in chosen if r["form"] == f]
            gain = sum(r["all@5"] > main_all[(f, r["i"])] for r in rs)
            lost = sum(r["all@5"] < main_all[(f, r["i"])] for r in rs)
            print(
                f"   {f}: "
                + " ".join(f"{m} {mean(rs, m):.3f}" for m in M)
                + f"  all@5 {int(sum(r['all@5'] for r in rs))}/{len(rs)}"
                + f"  vs main +{gain} -{lost}",
                flush=True,
            )
            if SHOW:
                qs = data[f][1]
                for r in rs:
                    d = r["all@5"] - main_all[(f, r["i"])]
                    if d:
                        q = qs[r["i"]]
                        sign = "+" if d > 0 else "-"
                        print(f"      {sign} {q['conv']} gold {len(q['gold'])}: {q['q']}")


def misses(form: str, show: int = 12) -> None:
    """Main's session misses with a gold block at rank 6-7: each top-5 block's parts against it."""
    from longdoc_replay import load
    from longdoc_rules import BLOCKS_OF

    blocks, qs, vecs = load(form)
    BLOCKS_OF[id(vecs)] = blocks
    seen = 0
    for q in qs:
        gold = set(q["gold"])
        b = base(q, vecs)
        ranked = combine(b, 0.2, 0.1)
        if gold <= set(ranked[:5]):
            continue
        late = [x for x in gold if x in ranked and 5 <= ranked.index(x) <= 6]
        if not late:
            continue
        seen += 1
        if seen > show:
            continue
        ids = b["ids"]
        L, X = lex_norm(b, "top"), norm(b["late"], ids, "minmax")
        D = norm(b["dense"], ids, "top")
        print(
            f"\n{q['q']!r} gold {sorted(gold)} idf", {w: round(v, 2) for w, v in b["idf"].items()}
        )
        for r, x in enumerate(ranked[:7]):
            words = {w: round(pt[x], 2) for w, pt in b["parts"].items() if x in pt}
            print(
                f"  {r + 1} {'G' if x in gold else ' '} blk {x:3d} {blocks[x]['conv']}"
                f" L {L.get(x, 0):.3f} X {X.get(x, 0):.3f} D {D.get(x, 0):.4f}",
                words,
            )
    print(f"{form}: {seen} misses with a gold block at rank 6-7")


if __name__ == "__main__":
    if sys.argv[1:2] == ["misses"]:
        misses(sys.argv[2] if len(sys.argv) > 2 else "session")
    else:
        args = sys.argv[1:]
        if "--show" in args:
            args.remove("--show")
            SHOW = True
        run(args or list(QPP_RULES))
