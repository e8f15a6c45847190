"""LoCoMo retrieval benchmark through the product's real path (protocol: shared/bench/README.md).

Per conversation: a fresh repository, every turn captured with ``remember_many``, ``dream`` with no
LLM, then ``frame("attention", question, top_k=10, reinforce=False)`` per question. Prints R@5,
R@10 and NDCG@10 overall and per category beside the BM25 reference, computed with ``rank-bm25``
(``BM25Okapi``, k1=1.5, b=0.75) on lower-cased ``[a-z0-9]+`` tokens less a small stop-word list,
and writes the per-question ranked turn ids to a JSONL file.

How the session date reaches a block (``--mode``, repeatable):
  cue       the date as text in the cue (``said on 1:56 pm on 8 May, 2023``)
  plain     no date at all
  when      the date as the block's ``when:`` field only (docs/format.md)
  cue+when  both

``--loocv`` runs every setting of a small declared grid (``GRID``) on every question, then, for each
of the five conversations, picks the setting with the best R@10 on the other four and scores the
fifth with it: the held-out figure. The in-sample figure is the best single setting on all five.

    python bench/locomo.py [--data ../shared/bench/locomo-dev.json] [--out bench/out/locomo.jsonl]
                           [--embedded minilm|mpnet]
                           [--mode cue] [--variant NAME]... [--loocv] [--keep DIR]
                           [--conversations N] [--quick]
    python bench/locomo.py --both CUE.jsonl PLAIN.jsonl

``--both`` reads the JSONL files of ``--loocv`` runs (one per mode, each with its own ``--out``)
and chooses, per held-out conversation, one setting for every form: the best mean R@10 over the
modes on the other four (a memory does not know which form its blocks take).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import re
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from common import LOCOMO, ndcg10, parse, tokens
from rank_bm25 import BM25Okapi

from elfmem.adapters import static
from elfmem.api import MemorySystem
from elfmem.config import EmbeddingsConfig
from elfmem.index import FieldWeights
from elfmem.retrieval.dates import parse_when
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod

MODES = ("cue", "plain", "when", "cue+when")
EMBEDDED = ""
"""An embedded model to embed with in place of the configured one (``--embedded``)."""

VARIANTS: dict[str, SearchSettings] = {
    "default": SearchSettings(),
    **{f"coverage-{x:g}": SearchSettings(coverage_min=x) for x in (0.3, 0.4, 0.5, 0.6)},
    "coverage-0": SearchSettings(coverage_min=0.0, coverage_power=0.0),
    "hard-0.4": SearchSettings(coverage_min=0.4, coverage_power=0.0),
    **{f"power-{x:g}": SearchSettings(coverage_power=x) for x in (2, 3, 6)},
    **{
        f"whole-{w:g}-power-{x:g}": SearchSettings(coverage_whole=w, coverage_power=x)
        for w in (0.4, 0.5, 0.6, 0.7, 1.0)
        for x in (2, 4)
    },
    **{f"mmr-{x:g}": SearchSettings(mmr_lambda=x) for x in (0.8, 0.85, 0.9, 0.95)},
    "no-mmr": SearchSettings(use_mmr=False),
    "equal-weights": SearchSettings(fusion_weights=(1.0, 1.0)),
    **{f"dense-{x:g}": SearchSettings(fusion_weights=(1.0, x)) for x in (1.4, 2.0)},
    "lexical-only": SearchSettings(use_mmr=False, fusion_weights=(1.0, 0.0)),
    "rrf-k60": SearchSettings(rrf_k=60),
    "rrf-k20": SearchSettings(rrf_k=20),
    "no-floor": SearchSettings(dense_floor=-1.0),
    "rrf": SearchSettings(fuse_by="rrf"),
    # score fusion as it was before late interaction (lexical share 0.3, no late score)
    "no-late": SearchSettings(score_share=0.3, late_share=0.0),
    "score-0.3": SearchSettings(fuse_by="score", score_share=0.3),
    "score-0.4": SearchSettings(fuse_by="score", score_share=0.4),
    "score-0.5": SearchSettings(fuse_by="score", score_share=0.5),
    "score-0.6": SearchSettings(fuse_by="score", score_share=0.6),
    "score-0.7": SearchSettings(fuse_by="score", score_share=0.7),
    "fb-0.6": SearchSettings(dense_feedback=0.6),
    "fb-0.9": SearchSettings(dense_feedback=0.9),
    "fb-0.6-d2": SearchSettings(dense_feedback=0.6, dense_feedback_depth=2),
    "inherit-0": SearchSettings(inherit=0.0),
    "expand-20": SearchSettings(expand_from=20),
    "seeds-100": SearchSettings(seeds=100),
    "cue-1": SearchSettings(field_weights=FieldWeights(cue=1.0)),
    "no-feedback": SearchSettings(dense_feedback=0.0),
    "no-contiguity": SearchSettings(contiguity=0.0),
    "before-feedback": SearchSettings(dense_feedback=0.0, field_weights=FieldWeights(cue=1.0)),
    "ctg-0.5": SearchSettings(contiguity=0.5),
    "ctg-0.7": SearchSettings(contiguity=0.7),
    "ctg-0.5-from1": SearchSettings(contiguity=0.5, contiguity_from=1),
    "ctg-0.5-from5": SearchSettings(contiguity=0.5, contiguity_from=5),
    "ctg-0.5-span2": SearchSettings(contiguity=0.5, contiguity_span=2),
    "ctg-0.5-span3": SearchSettings(contiguity=0.5, contiguity_span=3),
    "ctg-0.7-span2": SearchSettings(contiguity=0.7, contiguity_span=2),
    # a named time (``--mode when`` or ``cue+when``): off, the bare multiplier, other bounds
    "time-off": SearchSettings(time_boost=1.0),
    "time-bare": SearchSettings(time_lift_max=math.inf),
    **{f"time-{x:g}": SearchSettings(time_lift_max=x) for x in (0.1, 0.2, 0.3, 0.5)},
}

GRID: dict[str, tuple[Any, ...]] = {
    "contiguity": (0.0, 0.5),
    "contiguity_span": (2, 3),
}
"""The constants cross-validation chooses among: every combination is one setting, plus the
product defaults (``SearchSettings()``); a combination that ranks exactly as another one does is
run once. Small on purpose: each setting is a full pass over the questions, and on a shared
two-core machine a pass costs minutes. The constants the earlier grids settled (RRF k 10, fusion
weights 1/0.7, MMR λ 0.7, the calibrated dense floor, dense feedback 0.3 at depth 1, the cue at 2
in bm25: docs/benchmarks.md) stay at the product defaults here; this grid holds temporal
contiguity among the candidates (the share a top-3 hit's neighbours in capture order inherit, and
how many places either side count as next to it). Lexical feedback over the candidates was in it
too; its code is at the tag ``measured/lexical-feedback-among-candidates``."""

IDLE = {
    "contiguity": ("contiguity_from", "contiguity_span"),
    "dense_feedback": ("dense_feedback_depth",),
}
"""A knob whose rule is off (its key at 0) changes nothing: such combinations are run once."""


def _label(key: str, value: Any) -> str:
    if isinstance(value, FieldWeights):
        return f"{key}={value.content:g}/{value.cue:g}/{value.tags:g}"
    if isinstance(value, tuple):
        return f"{key}=" + "/".join(f"{v:g}" for v in value)
    return f"{key}={value}"


def _canonical(s: SearchSettings) -> SearchSettings:
    """``s`` with the knobs of every rule that is off put back to their defaults."""
    base = SearchSettings()
    idle = {k: getattr(base, k) for rule, ks in IDLE.items() if not getattr(s, rule) for k in ks}
    return replace(s, **idle)


def grid_settings() -> dict[str, SearchSettings]:
    out: dict[str, SearchSettings] = {}
    seen = {_canonical(SearchSettings())}
    keys = list(GRID)
    for values in itertools.product(*(GRID[k] for k in keys)):
        point = dict(zip(keys, values, strict=True))
        setting = replace(SearchSettings(), **point)
        if _canonical(setting) in seen:
            continue
        seen.add(_canonical(setting))
        out[" ".join(_label(k, v) for k, v in point.items())] = setting
    return out


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

    return {"R@5": recall(5), "R@10": recall(10), "NDCG@10": ndcg10(ranked, gold)}


class Bm25Reference:
    """rank-bm25's Okapi BM25 over the conversation's distinct turn texts."""

    def __init__(self, docs: list[str]) -> None:
        self.docs = docs
        self.model = BM25Okapi([tokens(d) for d in docs], k1=1.5, b=0.75)

    def rank(self, query: str, k: int = 10) -> list[str]:
        scores = self.model.get_scores(tokens(query))
        order = sorted(range(len(self.docs)), key=lambda i: (-scores[i], i))
        return [self.docs[i] for i in order[:k]]


def items_for(ts: list[dict[str, str]], mode: str) -> list[dict[str, str]]:
    items = []
    for t in ts:
        item = {"content": t["text"], "cue": f"said on {t['date']}" if "cue" in mode else ""}
        if "when" in mode:
            item["when"] = t["date"]
        items.append(item)
    return items


async def open_memory(ts: list[dict[str, str]], mode: str, where: Path) -> MemorySystem:
    """The conversation's memory at ``where``: built through the product path unless kept there."""
    if (where / ".elfmem" / "config.yaml").exists():
        return await _embedded(where)
    system, _ = await MemorySystem.init(where)
    if EMBEDDED:
        await system.close()
        system = await _embedded(where)
    items = items_for(ts, mode)
    await system.remember_many(items)
    await system.dream(max_blocks=len(items) + 1, no_llm=True)
    return system


async def _embedded(where: Path) -> MemorySystem:
    """The memory at ``where``, embedding with ``--embedded`` when it names a model."""
    system = await MemorySystem.from_config(where)
    if not EMBEDDED:
        return system
    config = replace(
        system._core.config, embeddings=EmbeddingsConfig(provider="embedded", model=EMBEDDED)
    )
    await system.close()
    return await MemorySystem.from_config(where, config)


def _row(qa: dict[str, Any], gold: set[str], ranked: list[str], conv: str) -> dict[str, Any]:
    return {
        "conv": conv,
        "q": str(qa["question"]),
        "cat": qa["category"],
        "gold": sorted(gold),
        "ranked": ranked,
        **metrics(ranked, gold),
    }


async def run_conversation(
    conv: dict[str, Any], settings: dict[str, SearchSettings], mode: str, keep: Path | None
) -> dict[str, list[dict[str, Any]]]:
    ts = turns(conv)
    ids_by_text: dict[str, list[str]] = defaultdict(list)
    for t in ts:
        ids_by_text[t["text"]].append(t["dia_id"])
    valid = {t["dia_id"] for t in ts}
    out: dict[str, list[dict[str, Any]]] = {v: [] for v in [*settings, "bm25"]}
    bm25 = Bm25Reference(list(ids_by_text))
    name = conv["sample_id"]
    # relative times in questions ("last year") count from the day after the last session
    last = max(date.fromisoformat(parse_when(t["date"], date.today())[:10]) for t in ts)
    settings = {v: replace(s, today=last + timedelta(days=1)) for v, s in settings.items()}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) if keep is None else keep / f"{name}-{mode}"
        system = await open_memory(ts, mode, where)
        core = system._core
        for qa in conv["qa"]:
            gold = {e for e in qa.get("evidence", []) if e in valid}
            if not gold:
                continue
            question = str(qa["question"])
            for v, s in settings.items():
                res = recall_mod.frame(
                    core, "attention", question, top_k=10, reinforce=False, settings=s
                )
                ranked = [d for b in res.ranked for d in ids_by_text.get(b.content, [])]
                out[v].append(_row(qa, gold, ranked, name))
            ranked = [d for text in bm25.rank(question) for d in ids_by_text[text]]
            out["bm25"].append(_row(qa, gold, ranked, name))
        await system.close()
    return out


def averages(rows: list[dict[str, Any]]) -> dict[str, tuple[int, float, float, float]]:
    """Per category group: (n, R@5, R@10, NDCG@10)."""
    groups: dict[str, list[dict[str, Any]]] = {"1-4": [r for r in rows if r["cat"] != 5]}
    for cat in (1, 2, 3, 4, 5):
        groups[str(cat)] = [r for r in rows if r["cat"] == cat]
    out = {}
    for cat, rs in groups.items():
        if rs:
            n = len(rs)
            out[cat] = (
                n,
                sum(r["R@5"] for r in rs) / n,
                sum(r["R@10"] for r in rs) / n,
                sum(r["NDCG@10"] for r in rs) / n,
            )
    return out


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = [f"{'method':<34} {'cat':>4} {'n':>5} {'R@5':>7} {'R@10':>7} {'NDCG@10':>8}"]
    for name, rows in results.items():
        for cat, (n, r5, r10, ndcg) in averages(rows).items():
            lines.append(f"{name:<34} {cat:>4} {n:>5} {r5:>7.3f} {r10:>7.3f} {ndcg:>8.3f}")
    return "\n".join(lines)


def r10(rows: list[dict[str, Any]]) -> float:
    scored = [r["R@10"] for r in rows if r["cat"] != 5]
    return sum(scored) / len(scored) if scored else 0.0


def loocv(
    rows: dict[str, list[dict[str, Any]]], convs: list[str]
) -> tuple[list[dict[str, Any]], list[tuple[str, str, float, float]]]:
    """Held-out rows (each conversation scored with the setting chosen on the other four) and,
    per fold, (conversation, chosen setting, its R@10 on the four, its R@10 on the fifth)."""
    held: list[dict[str, Any]] = []
    folds = []
    names = [n for n in rows if n != "bm25"]
    for conv in convs:
        train = {n: [r for r in rows[n] if r["conv"] != conv] for n in names}
        best = max(names, key=lambda n: (round(r10(train[n]), 6), n == "default"))
        test = [r for r in rows[best] if r["conv"] == conv]
        held += test
        folds.append((conv, best, r10(train[best]), r10(test)))
    return held, folds


def loocv_both(
    by_mode: dict[str, dict[str, list[dict[str, Any]]]], convs: list[str]
) -> tuple[dict[str, list[dict[str, Any]]], list[tuple[str, str]]]:
    """One setting for every form: per held-out conversation, the setting with the best mean R@10
    over the forms (modes) on the other four. Held-out rows per mode, and (conversation, chosen
    setting) per fold. Only settings every mode ran take part."""
    names = sorted(set.intersection(*(set(rows) for rows in by_mode.values())) - {"bm25"})
    held: dict[str, list[dict[str, Any]]] = {mode: [] for mode in by_mode}
    folds = []

    def train(name: str, conv: str) -> float:
        return sum(
            r10([r for r in rows[name] if r["conv"] != conv]) for rows in by_mode.values()
        ) / len(by_mode)

    for conv in convs:
        best = max(names, key=lambda n: (round(train(n, conv), 6), n == "default"))
        for mode, rows in by_mode.items():
            held[mode] += [r for r in rows[best] if r["conv"] == conv]
        folds.append((conv, best))
    return held, folds


def print_both(paths: list[Path]) -> None:
    """``--both``: the held-out figures of one setting chosen for every form at once, from the
    JSONL files of ``--loocv`` runs (one file per mode: two runs writing one file overwrite it)."""
    by_mode: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for path in paths:
        for line in path.read_text().splitlines():
            r = json.loads(line)
            by_mode[r["mode"]][r["method"]].append(r)
    convs = list(dict.fromkeys(r["conv"] for rows in by_mode.values() for r in rows["bm25"]))
    held, folds = loocv_both({m: dict(rows) for m, rows in by_mode.items()}, convs)
    for conv, best in folds:
        print(f"fold {conv}: chose {best}")
    print("| run | n | R@5 | R@10 | NDCG@10 | cat 1 | cat 2 | cat 3 | cat 4 | cat 5 |")
    for mode, rows in held.items():
        print(category_line(f"{mode}: held-out, one setting for both forms", rows))
        print(category_line(f"{mode}: product defaults", by_mode[mode]["default"]))


def category_line(label: str, rows: list[dict[str, Any]]) -> str:
    avg = averages(rows)
    cats = " ".join(f"{avg[c][2]:.3f}" if c in avg else "  -  " for c in ("1", "2", "3", "4", "5"))
    n, r5, r10_, ndcg = avg["1-4"]
    return f"| {label} | {n} | {r5:.3f} | {r10_:.3f} | {ndcg:.3f} | " + " | ".join(cats.split())


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=LOCOMO)
    ap.add_argument("--out", type=Path, default=Path("bench/out/locomo.jsonl"))
    ap.add_argument("--variant", action="append", default=None, choices=sorted(VARIANTS))
    ap.add_argument("--mode", action="append", default=None, choices=MODES)
    ap.add_argument(
        "--no-date-cue", action="store_true", help="Same as --mode plain (kept for old commands)."
    )
    ap.add_argument("--loocv", action="store_true", help="Leave-one-conversation-out over GRID.")
    ap.add_argument("--model", type=Path, default=None, help="model2vec folder to embed with")
    ap.add_argument("--embedded", default="", help="embedded model name (elfmem.adapters.models)")
    ap.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="Keep each conversation's memory under this folder and reuse it on the next run.",
    )
    ap.add_argument(
        "--both",
        type=Path,
        nargs="+",
        default=None,
        help="Print the held-out figures of one setting for every form from --loocv JSONL files.",
    )
    ap.add_argument("--conversations", type=int, default=0, help="only the first N (0: all)")
    args = parse(ap, {"conversations": 1})
    if args.both:
        print_both(args.both)
        return
    global EMBEDDED
    EMBEDDED = args.embedded
    if args.model:  # a candidate model in place of the shipped one
        static.DEFAULT_MODEL_DIR = args.model.resolve()
    modes = args.mode or (["plain"] if args.no_date_cue else ["cue"])
    settings = {v: VARIANTS[v] for v in (args.variant or ["default"])}
    if args.loocv:
        settings = {"default": VARIANTS["default"], **grid_settings()}
    data = json.loads(args.data.read_text())[: args.conversations or None]
    convs = [c["sample_id"] for c in data]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summary = ["| run | n | R@5 | R@10 | NDCG@10 | cat 1 | cat 2 | cat 3 | cat 4 | cat 5 |"]
    with args.out.open("w") as fh:
        for mode in modes:
            t0 = time.perf_counter()
            merged: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for conv in data:
                for name, rows in (await run_conversation(conv, settings, mode, args.keep)).items():
                    merged[name] += rows
            took = time.perf_counter() - t0
            for name, rows in merged.items():
                for r in rows:
                    fh.write(json.dumps({"mode": mode, "method": name, **r}) + "\n")
            print(f"== mode {mode} ({took:.0f} s)")
            if not args.loocv:
                print(table(dict(merged)))
                continue
            held, folds = loocv(merged, convs)
            chosen = Counter(best for _, best, _, _ in folds)
            insample = max((n for n in merged if n != "bm25"), key=lambda n: r10(merged[n]))
            for conv, best, train, test in folds:
                print(f"fold {conv}: chose {best} (R@10 {train:.3f} on the other four, {test:.3f})")
            fold_mean = sum(t for *_, t in folds) / len(folds)
            print(f"held-out R@10, mean over folds: {fold_mean:.3f}; chosen: {dict(chosen)}")
            summary.append(category_line(f"{mode}: held-out (LOOCV)", held))
            summary.append(category_line(f"{mode}: in-sample best ({insample})", merged[insample]))
            summary.append(category_line(f"{mode}: product defaults", merged["default"]))
            summary.append(category_line(f"{mode}: BM25 (rank-bm25)", merged["bm25"]))
    if args.loocv:
        print("\n".join(summary))


if __name__ == "__main__":
    asyncio.run(main())
