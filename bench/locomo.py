"""LoCoMo retrieval benchmark through the product's real path (protocol: shared/bench/README.md).

Per conversation: a fresh repository, every turn captured with ``remember_many``, ``dream`` with no
LLM, then ``frame("attention", question, top_k=10, reinforce=False)`` per question. Prints R@5,
R@10 and NDCG@10 overall and per category beside a BM25 reference computed here the same way the
reference number was (lower-cased ``[a-z0-9]+`` tokens, a small stop-word list, Okapi k1=1.5,
b=0.75), and writes the per-question ranked turn ids to a JSONL file.

    python bench/locomo.py [--data ../shared/bench/locomo-dev.json] [--out bench/out/locomo.jsonl]
                           [--variant NAME]...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from elfmem.api import MemorySystem
from elfmem.retrieval.pipeline import SearchSettings
from elfmem.rhythms import recall as recall_mod

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/bench/locomo-dev.json"
STOP = set(
    "a an and are as at be by for from has have i in is it of on or that the this to was "
    "were will with you your what when where who why how did do does".split()
)

VARIANTS: dict[str, SearchSettings] = {
    "default": SearchSettings(),
    "no-mmr": SearchSettings(use_mmr=False),
    "rrf-equal-no-mmr": SearchSettings(use_mmr=False, fusion_weights=(1.0, 1.0)),
    "lexical-heavy": SearchSettings(fusion_weights=(2.0, 1.0)),
    "lexical-heavy-no-mmr": SearchSettings(use_mmr=False, fusion_weights=(2.0, 1.0)),
    "lexical-only": SearchSettings(use_mmr=False, fusion_weights=(1.0, 0.0)),
    "rrf-k60": SearchSettings(rrf_k=60),
    "rrf-k20": SearchSettings(rrf_k=20),
    "mmr-0.5": SearchSettings(mmr_lambda=0.5),
    "mmr-0.45": SearchSettings(mmr_lambda=0.45),
    "mmr-0.6": SearchSettings(mmr_lambda=0.6),
    "no-inherit": SearchSettings(inherit=0.0),
    "no-floor": SearchSettings(dense_floor=-1.0),
}


def turns(conv: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    c = conv["conversation"]
    for key in sorted(
        (k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    ):
        date = c.get(f"{key}_date_time", "")
        for t in c[key]:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares image: {t['blip_caption']}]"
            out.append({"dia_id": t["dia_id"], "text": text, "date": date})
    return out


def metrics(ranked: list[str], gold: set[str]) -> dict[str, float]:
    def recall(k: int) -> float:
        return len(gold & set(ranked[:k])) / len(gold)

    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in gold)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    return {"R@5": recall(5), "R@10": recall(10), "NDCG@10": dcg / idcg}


def bm25_rank(docs: list[str], query: str, k1: float = 1.5, b: float = 0.75) -> list[int]:
    tok = [[w for w in re.findall(r"[a-z0-9]+", d.lower()) if w not in STOP] for d in docs]
    n = len(tok)
    avg = sum(map(len, tok)) / max(n, 1)
    df: Counter[str] = Counter(w for t in tok for w in set(t))
    q = [w for w in re.findall(r"[a-z0-9]+", query.lower()) if w not in STOP]
    scores = []
    for t in tok:
        tf = Counter(t)
        s = 0.0
        for w in q:
            if w in tf:
                idf = math.log((n - df[w] + 0.5) / (df[w] + 0.5) + 1)
                s += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(t) / avg))
        scores.append(s)
    return sorted(range(n), key=lambda i: -scores[i])


async def open_memory(
    conv: dict[str, Any], ts: list[dict[str, str]], with_date: bool, where: Path
) -> MemorySystem:
    """The conversation's memory at ``where``: built through the product path unless kept there."""
    if (where / ".elfmem" / "config.yaml").exists():
        return await MemorySystem.from_config(where)
    system, _ = await MemorySystem.init(where)
    items = [{"content": t["text"], "cue": f"said on {t['date']}" if with_date else ""} for t in ts]
    await system.remember_many(items)
    await system.dream(max_blocks=len(items) + 1, no_llm=True)
    return system


async def run_conversation(
    conv: dict[str, Any], variants: list[str], with_date: bool, keep: Path | None = None
) -> dict[str, list[dict[str, Any]]]:
    ts = turns(conv)
    ids_by_text: dict[str, list[str]] = defaultdict(list)
    for t in ts:
        ids_by_text[t["text"]].append(t["dia_id"])
    valid = {t["dia_id"] for t in ts}
    out: dict[str, list[dict[str, Any]]] = {v: [] for v in [*variants, "bm25"]}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) if keep is None else keep / f"{conv['sample_id']}-date{int(with_date)}"
        system = await open_memory(conv, ts, with_date, where)
        core = system._core
        unique_texts = list(ids_by_text)
        for qa in conv["qa"]:
            gold = {e for e in qa.get("evidence", []) if e in valid}
            if not gold:
                continue
            question = str(qa["question"])
            for v in variants:
                res = recall_mod.frame(
                    core, "attention", question, top_k=10, reinforce=False, settings=VARIANTS[v]
                )
                ranked = [d for b in res.ranked for d in ids_by_text.get(b.content, [])]
                out[v].append(
                    {
                        "q": question,
                        "cat": qa["category"],
                        "gold": sorted(gold),
                        "ranked": ranked,
                        **metrics(ranked, gold),
                    }
                )
            order = bm25_rank(unique_texts, question)[:10]
            ranked = [d for i in order for d in ids_by_text[unique_texts[i]]]
            out["bm25"].append(
                {
                    "q": question,
                    "cat": qa["category"],
                    "gold": sorted(gold),
                    "ranked": ranked,
                    **metrics(ranked, gold),
                }
            )
        await system.close()
    return out


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = [f"{'method':<24} {'cat':>4} {'n':>5} {'R@5':>7} {'R@10':>7} {'NDCG@10':>8}"]
    for name, rows in results.items():
        groups: dict[str, list[dict[str, Any]]] = {"1-4": [r for r in rows if r["cat"] != 5]}
        for cat in (1, 2, 3, 4, 5):
            groups[str(cat)] = [r for r in rows if r["cat"] == cat]
        for cat, rs in groups.items():
            if not rs:
                continue
            avg = {m: sum(r[m] for r in rs) / len(rs) for m in ("R@5", "R@10", "NDCG@10")}
            lines.append(
                f"{name:<24} {cat:>4} {len(rs):>5} "
                f"{avg['R@5']:>7.3f} {avg['R@10']:>7.3f} {avg['NDCG@10']:>8.3f}"
            )
    return "\n".join(lines)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=Path("bench/out/locomo.jsonl"))
    ap.add_argument("--variant", action="append", default=None, choices=sorted(VARIANTS))
    ap.add_argument(
        "--no-date-cue", action="store_true", help="Do not put the session date in the cue."
    )
    ap.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="Keep each conversation's memory under this folder and reuse it on the next run.",
    )
    args = ap.parse_args()
    variants = args.variant or ["default"]
    data = json.loads(args.data.read_text())
    t0 = time.perf_counter()
    merged: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for conv in data:
        for name, rows in (
            await run_conversation(conv, variants, not args.no_date_cue, args.keep)
        ).items():
            merged[name] += rows
    print(table(dict(merged)))
    print(
        f"({sum(1 for r in merged['bm25'] if r['cat'] != 5)} scored queries of categories 1-4; "
        f"{time.perf_counter() - t0:.0f} s)"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as fh:
        for name, rows in merged.items():
            for r in rows:
                fh.write(json.dumps({"method": name, **r}) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
