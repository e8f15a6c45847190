"""Recall of facts asked for in other words, of names and numbers, and of what is not stored.

The sets are in ``bench/sets`` (their README says the rules each follows): paraphrase questions
that share no content word with their fact or cue, name/number/version questions whose answer has
look-alikes differing only in that token, and questions whose answer is not stored. Every fact,
look-alike and distractor goes into one memory through the product's real path (``remember_many``
with the cue, ``dream`` with no LLM); each question is asked with the ``attention`` frame,
``top_k=10``, reinforcement off. Beside the product: the configured embedding model used alone
(cosine over every block) and BM25 (rank-bm25 Okapi, k1 1.5, b 0.75, the tokens of
``bench/common.py``), the strong simple baseline of each arm.

Each record carries a ``split``: constants are chosen on ``tune`` and reported on ``report``.

    python bench/paraphrase.py [--sets bench/sets] [--model minilm|static] [--variant NAME]...
                               [--split all|tune|report] [--keep DIR] [--out FILE] [--quick]

``--quick`` asks a third of the questions (under a minute once the memory is built); ``--keep``
keeps the built memory in DIR for the next run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from common import tokens
from rank_bm25 import BM25Okapi

from elfmem.api import MemorySystem
from elfmem.config import EmbeddingsConfig
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod

SETS = Path(__file__).resolve().parent / "sets"
VARIANTS: dict[str, SearchSettings] = {
    "default": SearchSettings(),
    "coverage-0": SearchSettings(coverage_min=0.0, coverage_power=0.0),
    "hard-0.4": SearchSettings(coverage_min=0.4, coverage_power=0.0),
    **{f"power-{x:g}": SearchSettings(coverage_power=x) for x in (2, 3, 6)},
    **{
        f"whole-{w:g}-power-{x:g}": SearchSettings(coverage_whole=w, coverage_power=x)
        for w in (0.4, 0.5, 0.6, 0.7, 1.0)
        for x in (2, 4)
    },
    **{f"coverage-{x:g}": SearchSettings(coverage_min=x) for x in (0.3, 0.4, 0.5, 0.6)},
    "no-feedback": SearchSettings(dense_feedback=0.0),
    "no-mmr": SearchSettings(use_mmr=False),
    "no-contiguity": SearchSettings(contiguity=0.0),
    "plain": SearchSettings(use_mmr=False, contiguity=0.0),
    **{f"mmr-{x:g}": SearchSettings(mmr_lambda=x) for x in (0.8, 0.85, 0.9, 0.95)},
    **{f"feedback-{x:g}": SearchSettings(dense_feedback=x) for x in (0.1, 0.2, 0.45, 0.6)},
    "equal-weights": SearchSettings(fusion_weights=(1.0, 1.0)),
    **{f"dense-{x:g}": SearchSettings(fusion_weights=(1.0, x)) for x in (1.4, 2.0, 3.0)},
    "seeds-100": SearchSettings(seeds=100),
    # no word match takes part (every hit under the coverage floor): the dense arm and the stages
    "no-words": SearchSettings(coverage_min=1.01),
    "no-words-no-mmr": SearchSettings(coverage_min=1.01, use_mmr=False),
    "no-words-plain": SearchSettings(coverage_min=1.01, use_mmr=False, dense_feedback=0.0),
}
Ranked = Callable[[str], list[str]]


def load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


class Corpus:
    """Every stored text with the record id it answers (distractors and look-alikes answer none)."""

    def __init__(self, sets: Path) -> None:
        self.paraphrase = load(sets / "paraphrase.jsonl")
        self.names = load(sets / "names.jsonl")
        self.absent = load(sets / "absent.jsonl") + load(sets / "names_absent.jsonl")
        self.items: list[dict[str, str]] = []
        self.answers: dict[str, str] = {}
        for rec in self.paraphrase + self.names:
            self._add(rec["fact"], rec["cue"], rec["id"])
            for other in rec.get("lookalikes", []):
                self._add(other, rec["cue"], "")
        for rec in load(sets / "distractors.jsonl"):
            self._add(rec["fact"], rec["cue"], "")

    def _add(self, fact: str, cue: str, answers: str) -> None:
        if fact in self.answers:
            return
        self.items.append({"content": fact, "cue": cue})
        self.answers[fact] = answers


async def open_memory(corpus: Corpus, model: str, where: Path) -> MemorySystem:
    """The memory at ``where``, built through the product path unless it is kept there."""
    config = EmbeddingsConfig(provider="embedded", model=model)
    if not (where / ".elfmem" / "config.yaml").exists():
        system, _ = await MemorySystem.init(where)
        await system.close()
        system = await _with_model(where, config)
        started = time.perf_counter()
        await system.remember_many(corpus.items)
        await system.dream(max_blocks=len(corpus.items) + 1, no_llm=True)
        print(f"built {len(corpus.items)} blocks in {time.perf_counter() - started:.1f} s")
        return system
    return await _with_model(where, config)


async def _with_model(where: Path, embeddings: EmbeddingsConfig) -> MemorySystem:
    probe = await MemorySystem.from_config(where)
    config = replace(probe._core.config, embeddings=embeddings)
    await probe.close()
    return await MemorySystem.from_config(where, config)


def dense_alone(system: MemorySystem, corpus: Corpus) -> Ranked:
    texts = [f"{i['content']}\n{i['cue']}" for i in corpus.items]
    model = system._core.embedder
    matrix = model.embed(texts)
    contents = [i["content"] for i in corpus.items]

    def rank(question: str) -> list[str]:
        scores = matrix @ model.embed([question])[0]
        return [contents[i] for i in np.argsort(-scores, kind="stable")[:10]]

    return rank


def bm25_alone(corpus: Corpus) -> Ranked:
    contents = [i["content"] for i in corpus.items]
    model = BM25Okapi([tokens(f"{i['content']} {i['cue']}") for i in corpus.items], k1=1.5, b=0.75)

    def rank(question: str) -> list[str]:
        scores = model.get_scores(tokens(question))
        order = sorted(range(len(contents)), key=lambda i: (-scores[i], i))
        return [contents[i] for i in order[:10] if scores[i] > 0]

    return rank


def product(system: MemorySystem, settings: SearchSettings) -> Ranked:
    def rank(question: str) -> list[str]:
        res = recall_mod.frame(
            system._core, "attention", question, top_k=10, reinforce=False, settings=settings
        )
        return [b.content for b in res.ranked]

    return rank


def scored(rank: Ranked, corpus: Corpus, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for rec in records:
        ranked = [corpus.answers.get(c, "") for c in rank(rec["question"])]
        place = ranked.index(rec["id"]) + 1 if rec.get("id") in ranked else math.inf
        rows.append(
            {
                "id": rec["id"],
                "split": rec.get("split", ""),
                "group": rec.get("domain") or rec.get("kind", ""),
                "returned": len(ranked),
                "place": place,
            }
        )
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    n = len(rows) or 1
    return {
        "n": len(rows),
        "R@1": sum(r["place"] <= 1 for r in rows) / n,
        "R@5": sum(r["place"] <= 5 for r in rows) / n,
        "R@10": sum(r["place"] <= 10 for r in rows) / n,
        "MRR": sum(1 / r["place"] for r in rows) / n,
        "returned": sum(r["returned"] for r in rows) / n,
        "none": sum(r["returned"] == 0 for r in rows) / n,
    }


def table(results: dict[str, dict[str, list[dict[str, Any]]]], split: str) -> str:
    head = f"{'set':<11} {'method':<16} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}"
    lines = [head + f" {'returned':>8} {'none':>6}"]
    for set_name, by_method in results.items():
        for method, rows in by_method.items():
            chosen = [r for r in rows if split == "all" or r["split"] in (split, "")]
            s = summary(chosen)
            lines.append(
                f"{set_name:<11} {method:<16} {s['n']:>4} {s['R@1']:>6.3f} {s['R@5']:>6.3f} "
                f"{s['R@10']:>6.3f} {s['MRR']:>6.3f} {s['returned']:>8.1f} {s['none']:>6.2f}"
            )
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> None:
    corpus = Corpus(args.sets)
    names = args.variant or ["default"]
    sets = {"paraphrase": corpus.paraphrase, "names": corpus.names, "absent": corpus.absent}
    if args.quick:
        sets = {k: v[::3] for k, v in sets.items()}
    where = args.keep or Path(args.tmp)
    where.mkdir(parents=True, exist_ok=True)
    system = await open_memory(corpus, args.model, where)
    methods: dict[str, Ranked] = {n: product(system, VARIANTS[n]) for n in names}
    methods[f"dense-{args.model}"] = dense_alone(system, corpus)
    methods["bm25"] = bm25_alone(corpus)
    results: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for set_name, records in sets.items():
        for method, rank in methods.items():
            results[set_name][method] = scored(rank, corpus, records)
    await system.close()
    for split in ("tune", "report", "all") if args.split == "all" else (args.split,):
        print(f"\n## split: {split}\n{table(results, split)}")
    if args.out:
        args.out.write_text(json.dumps(results, default=str), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, default=SETS)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    parser.add_argument("--split", default="all", choices=("all", "tune", "report"))
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        args.tmp = tmp
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
