"""SciFact through the product's path: the control where lexical search is strong.

A scientific claim is asked of a memory whose blocks are the 4,980 abstracts of
``shared/bench/scifact-dev`` (title and text as the content, the title as the cue); the
``attention`` frame returns ``top_k=10``, reinforcement off. nDCG@10 (BEIR's: ideal DCG over
min(#relevant, 10)), R@5 and R@10, beside BM25 (rank-bm25 Okapi over ``title + text``, the tokens
of ``bench/common.py``) and the configured model used alone (cosine of the whole abstract).
Reference numbers on this subset (its README): BM25 0.680 / 0.805 / 0.735, MiniLM 0.654 / 0.769.
``--quick`` asks a quarter of the claims of a memory of a fifth of the abstracts (every abstract
a chosen claim cites kept): about a minute; its numbers are not the published ones.

    python bench/scifact.py [--data ../shared/bench/scifact-dev] [--keep DIR] [--quick]
                            [--variant NAME]... [--model minilm|static]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from common import SHARED, ndcg10, tokens
from paraphrase import VARIANTS, _with_model
from rank_bm25 import BM25Okapi

from elfmem.api import MemorySystem
from elfmem.config import EmbeddingsConfig
from elfmem.rhythms import recall as recall_mod

DATA = SHARED / "scifact-dev"


CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""A few abstracts hold C1 control characters (mojibake quotes), which capture refuses."""


def load(data: Path) -> tuple[list[dict[str, str]], list[dict[str, str]], dict[str, set[str]]]:
    docs = [json.loads(x) for x in (data / "corpus.jsonl").read_text().splitlines() if x]
    for d in docs:
        d["title"], d["text"] = CONTROL.sub(" ", d["title"]), CONTROL.sub(" ", d["text"])
    queries = [json.loads(x) for x in (data / "queries.jsonl").read_text().splitlines() if x]
    qrels: dict[str, set[str]] = defaultdict(set)
    for line in (data / "qrels.tsv").read_text().splitlines()[1:]:
        qid, did, score = line.split("\t")
        if int(score) > 0:
            qrels[qid].add(did)
    return docs, [q for q in queries if q["_id"] in qrels], qrels


def same_text(text: str) -> str:
    """A text with its runs of white space made one space: capture trims the spaces many abstracts
    hold before a line break, so a block's content is not byte for byte the abstract it stores."""
    return " ".join(text.split())


def metrics(ranked: list[str], gold: set[str]) -> dict[str, float]:
    return {
        "nDCG@10": ndcg10(ranked, gold),
        "R@5": len(gold & set(ranked[:5])) / len(gold),
        "R@10": len(gold & set(ranked[:10])) / len(gold),
    }


async def build(docs: list[dict[str, str]], where: Path, model: str) -> MemorySystem:
    config = EmbeddingsConfig(provider="embedded", model=model)
    if (where / ".elfmem" / "config.yaml").exists():
        return await _with_model(where, config)
    system, _ = await MemorySystem.init(where)
    await system.close()
    system = await _with_model(where, config)
    started = time.perf_counter()
    items = [{"content": f"{d['title']}\n\n{d['text']}", "cue": d["title"]} for d in docs]
    await system.remember_many(items)
    await system.dream(max_blocks=len(items) + 1, no_llm=True)
    print(f"built {len(items)} blocks in {time.perf_counter() - started:.0f} s")
    return system


async def run(args: argparse.Namespace, where: Path) -> None:
    docs, queries, qrels = load(args.data)
    if args.quick:  # a fifth of the abstracts (every gold one kept) and a quarter of the claims
        queries = queries[::4]
        gold = {doc for q in queries for doc in qrels[q["_id"]]}
        docs = [d for i, d in enumerate(docs) if i % 5 == 0 or d["_id"] in gold]
    system = await build(docs, where, args.model)
    by_content = {same_text(f"{d['title']}\n\n{d['text']}"): d["_id"] for d in docs}
    texts = [f"{d['title']} {d['text']}" for d in docs]
    bm25 = BM25Okapi([tokens(t) for t in texts], k1=1.5, b=0.75)
    model = system._core.embedder
    matrix = model.embed(texts)
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q in queries:
        gold = qrels[q["_id"]]
        for name in args.variant or ["default"]:
            res = recall_mod.frame(
                system._core,
                "attention",
                q["text"],
                top_k=10,
                reinforce=False,
                settings=VARIANTS[name],
            )
            rows[name].append(
                metrics([by_content.get(same_text(b.content), "") for b in res.ranked], gold)
            )
        scores = bm25.get_scores(tokens(q["text"]))
        rows["bm25"].append(metrics([docs[i]["_id"] for i in np.argsort(-scores)[:10]], gold))
        cos = matrix @ model.embed([q["text"]])[0]
        rows[f"dense-{args.model}"].append(
            metrics([docs[i]["_id"] for i in np.argsort(-cos)[:10]], gold)
        )
    await system.close()
    print(f"{'method':<16} {'n':>4} {'nDCG@10':>8} {'R@5':>6} {'R@10':>6}")
    for name, ms in rows.items():
        mean = {k: sum(m[k] for m in ms) / len(ms) for k in ms[0]}
        print(
            f"{name:<16} {len(ms):>4} {mean['nDCG@10']:>8.3f} {mean['R@5']:>6.3f} "
            f"{mean['R@10']:>6.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        asyncio.run(run(args, args.keep))
        return
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(args, Path(tmp)))


if __name__ == "__main__":
    main()
