"""Long-document retrieval benchmark built from the LoCoMo dev conversations.

All five conversations go into one memory. Form ``session``: each session is one block (its user and
assistant turns, one ``Speaker: text`` line each; about 130 blocks of 1-5 KB). Form ``joined``:
consecutive sessions of a conversation joined into blocks of 5-15 KB. The session date is the cue;
with ``--when`` it is also the block's ``when:`` field (a joined block: the period of its sessions),
so that questions naming a time use it (docs/ranking.md, "Time"). Relative times in questions
("last year") count from the day after the conversation's last session, as in ``locomo.py``.
Every question of categories 1-4 is asked with the ``attention`` frame (``reinforce=False``); gold =
the blocks holding the question's evidence turns. Metrics: recall_any@5 (a gold block in the top 5),
recall_all@5 and recall_all@10 (every gold block in the top k), NDCG@10 (binary), beside a
``rank-bm25`` Okapi reference on the same block texts.

Passage constants are chosen by leave-one-conversation-out: for each conversation, the setting with
the best mean recall_all@5 on the other four conversations' questions scores that conversation's
questions; the held-out rows are what the table reports (``elfmem (held-out)``), with each fixed
setting's in-sample row for comparison. The ``score-X`` variants (score fusion with lexical share
X) take part in that choice beside the default; the other variants are diagnostics.

    python bench/longdoc.py [--data ../shared/bench/locomo-dev.json] [--form session|joined]...
                            [--size N]... [--share X]... [--variant NAME]...
                            [--when] [--out bench/out/longdoc.jsonl] [--embedded mpnet]
                            [--conversations N] [--quick]

``--quick``: the session form of the first two conversations.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import tempfile
import time
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from common import LOCOMO, ndcg10, parse, tokens
from rank_bm25 import BM25Okapi

import elfmem.index.passagevecs as passagevecs
import elfmem.index.search as search
from elfmem.adapters import static
from elfmem.api import MemorySystem
from elfmem.block.passages import PASSAGE_CHARS, PASSAGE_OVERLAP
from elfmem.config import EmbeddingsConfig
from elfmem.index import queries
from elfmem.retrieval.dates import parse_when
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod

JOIN_MIN, JOIN_MAX = 5_000, 15_000
METRICS = ("any@5", "all@5", "all@10", "NDCG@10")
VARIANTS: dict[str, SearchSettings] = {
    "default": SearchSettings(),
    "no-mmr": SearchSettings(use_mmr=False),
    # one list alone: score fusion with all the weight on it (long blocks are fused by score)
    "lexical-only": SearchSettings(use_mmr=False, fuse_by="score", score_share=1.0, late_share=0.0),
    "dense-only": SearchSettings(use_mmr=False, fuse_by="score", score_share=0.0, late_share=0.0),
    "no-expand": SearchSettings(expand_from=0),
    "lexical-heavy": SearchSettings(fusion_weights=(2.0, 1.0)),
    "rrf": SearchSettings(fuse_by="rrf"),
    "no-fill": SearchSettings(dense_fill=False),
    # the product before late interaction (lexical share 0.3, no late score), and its share alone
    "no-late": SearchSettings(score_share=0.3, late_share=0.0),
    "nolate-0.2": SearchSettings(score_share=0.2, late_share=0.0),
    **{
        f"late-{share:g}-{li:g}": SearchSettings(score_share=share, late_share=li)
        for share in (0.2, 0.25, 0.3)
        for li in (0.05, 0.1, 0.15)
    },
    **{f"nofill-{x:g}": SearchSettings(score_share=x, dense_fill=False) for x in (0.2, 0.3, 0.4)},
    # a named time (``--when``): off, the bare multiplier, other bounds on its lift
    "time-off": SearchSettings(time_boost=1.0),
    "time-bare": SearchSettings(time_lift_max=math.inf),
    **{f"time-{x:g}": SearchSettings(time_lift_max=x) for x in (0.1, 0.2, 0.22, 0.25, 0.3)},
    # a memory many times this size, where most blocks fall past the 50 seeds of each search
    **{
        f"seeds-{n}{tag}": SearchSettings(seeds=n, dense_fill=fill)
        for n in (5, 10, 20)
        for tag, fill in (("", True), ("-no-fill", False))
    },
    **{
        f"{name}-{share:g}": SearchSettings(fuse_by="score", score_share=share, score_idf=idf)
        for name, idf in (("score", "smooth"), ("fts", "fts"))
        for share in (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
    },
}
"""Diagnostic settings beside the product's defaults (``--variant``). ``score-X``: score fusion
with lexical share X and the smoothed IDF (the product's long-document path); ``fts-X``: the same
with FTS5's own IDF (the product before "Words that every long document holds"); ``no-fill`` and
``nofill-X``: score fusion giving a lexical hit the dense search did not return 0 instead of its
own cosine (the product before "Lexical hits keep their cosine"); ``seeds-N``: each search
returns N seeds instead of 50, as in a memory many times this size; ``no-late``: score fusion
without late interaction at the lexical share before it (0.3), ``nolate-0.2`` the same at 0.2;
``late-S-L``: lexical share S, late-interaction share L."""
TUNED = ("score-", "fts-", "late-")
"""Variants that take part in the held-out choice beside the default; the rest are diagnostics."""
OFF = 10**9
"""A passage size no block reaches: every block is one passage (the behaviour before passages)."""

EMBEDDED = [""]
"""An embedded model to embed with in place of the default (``--embedded``)."""


def sessions(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """Each session of ``conv``: its turn ids, its text (one line per turn) and its date."""
    c = conv["conversation"]
    keys = sorted(
        (k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    )
    out = []
    for key in keys:
        lines, ids = [], []
        for t in c[key]:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares image: {t['blip_caption']}]"
            lines.append(text)
            ids.append(t["dia_id"])
        text = "\n".join(line.rstrip() for line in "\n".join(lines).split("\n"))
        out.append({"ids": ids, "text": text, "date": c.get(f"{key}_date_time", "")})
    return out


def joined(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive sessions joined until a block holds at least ``JOIN_MIN`` characters, never
    past ``JOIN_MAX`` (a last short remainder joins the block before it when it fits)."""
    blocks: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for s in parts:
        if current is not None and len(current["text"]) + len(s["text"]) + 2 > JOIN_MAX:
            blocks.append(current)
            current = None
        if current is None:
            current = {"ids": list(s["ids"]), "text": s["text"], "date": s["date"]}
        else:
            current["ids"] += s["ids"]
            current["text"] += "\n\n" + s["text"]
            current["date"] = current["date"].split(" to ")[0] + f" to {s['date']}"
        if len(current["text"]) >= JOIN_MIN:
            blocks.append(current)
            current = None
    if current is not None:
        if blocks and len(blocks[-1]["text"]) + len(current["text"]) + 2 <= JOIN_MAX:
            blocks[-1]["ids"] += current["ids"]
            blocks[-1]["text"] += "\n\n" + current["text"]
        else:
            blocks.append(current)
    return blocks


def corpus(
    data: list[dict[str, Any]], form: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The blocks of ``form`` for every conversation, and the scored questions with gold blocks."""
    blocks: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for conv in data:
        parts = sessions(conv)
        made = parts if form == "session" else joined(parts)
        where: dict[str, int] = {}
        for b in made:
            b["conv"] = conv["sample_id"]
            for i in b["ids"]:
                where[i] = len(blocks)
            blocks.append(b)
        for qa in conv["qa"]:
            if qa["category"] not in (1, 2, 3, 4):
                continue
            gold = {where[e] for e in qa.get("evidence", []) if e in where}
            if gold:
                questions.append(
                    {
                        "q": str(qa["question"]),
                        "cat": qa["category"],
                        "conv": conv["sample_id"],
                        "gold": sorted(gold),
                    }
                )
    return blocks, questions


def metrics(ranked: list[int], gold: set[int]) -> dict[str, float]:
    return {
        "any@5": float(bool(gold & set(ranked[:5]))),
        "all@5": float(gold <= set(ranked[:5])),
        "all@10": float(gold <= set(ranked[:10])),
        "NDCG@10": ndcg10(ranked, gold),
    }


def bm25_rows(
    blocks: list[dict[str, Any]], questions: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    index = BM25Okapi([tokens(f"{b['text']}\n{b['date']}") for b in blocks])
    rows = []
    for q in questions:
        scores = index.get_scores(tokens(q["q"]))
        ranked = sorted(range(len(blocks)), key=lambda i: (-scores[i], i))[:10]
        rows.append({**q, "ranked": ranked, **metrics(ranked, set(q["gold"]))})
    return rows


def set_passages(size: int, overlap: int) -> None:
    """Point the index at other passage sizes (a fresh memory is built for each)."""
    passagevecs.PASSAGE_CHARS, passagevecs.PASSAGE_OVERLAP = size, overlap
    passagevecs.SHAPE = f"passages {passagevecs.LONG_BLOCK_CHARS}:{size}/{overlap}"


async def elfmem_rows(
    blocks: list[dict[str, Any]],
    questions: list[dict[str, Any]],
    shares: list[float],
    variants: list[str],
    where: Path,
    when: bool = False,
) -> dict[str, list[dict[str, Any]]]:
    system, _ = await MemorySystem.init(where)
    if EMBEDDED[0]:  # another embedded model in place of the default
        config = replace(
            system._core.config,
            embeddings=EmbeddingsConfig(provider="embedded", model=EMBEDDED[0]),
        )
        await system.close()
        system = await MemorySystem.from_config(where, config)
    items = [{"content": b["text"], "cue": f"said on {b['date']}"} for b in blocks]
    if when:  # the date as the block's ``when:`` field too (a joined block: its period)
        for item, b in zip(items, blocks, strict=True):
            item["when"] = b["date"]
    await system.remember_many(items)
    await system.dream(max_blocks=len(items) + 1, no_llm=True)
    core = system._core
    by_content = {b["text"]: k for k, b in enumerate(blocks)}
    stored = {r.content for r in queries.list_blocks(core.db())}
    lost = [k for k, b in enumerate(blocks) if b["text"] not in stored]
    if lost:  # a block the product stored differently could never be found: a broken benchmark
        raise SystemExit(f"{len(lost)} blocks not stored verbatim (first: {lost[0]})")
    # relative times in questions ("last year") count from the day after the conversation's last
    # session, as in bench/locomo.py
    today: dict[str, date] = {}
    for b in blocks:
        said = date.fromisoformat(parse_when(b["date"].split(" to ")[-1], date.today())[:10])
        today[b["conv"]] = max(today.get(b["conv"], said), said + timedelta(days=1))
    out: dict[str, list[dict[str, Any]]] = {}
    for share in shares:
        search.PASSAGE_MEAN_SHARE = share
        for variant in variants:
            rows, spent = [], []
            for q in questions:
                t0 = time.process_time()
                res = recall_mod.frame(
                    core,
                    "attention",
                    q["q"],
                    top_k=10,
                    reinforce=False,
                    settings=replace(VARIANTS[variant], today=today[q["conv"]]),
                )
                spent.append(time.process_time() - t0)
                ranked = [by_content[b.content] for b in res.ranked if b.content in by_content]
                rows.append({**q, "ranked": ranked[:10], **metrics(ranked, set(q["gold"]))})
            suffix = "" if variant == "default" else f" {variant}"
            out[f"share {share:g}{suffix}"] = rows
            spent.sort()
            print(
                f"  ({variant}: recall CPU ms p50 {1000 * spent[len(spent) // 2]:.1f},"
                f" p95 {1000 * spent[int(len(spent) * 0.95)]:.1f})",
                flush=True,
            )
    await system.close()
    return out


def mean(rows: list[dict[str, Any]], metric: str) -> float:
    return sum(r[metric] for r in rows) / len(rows) if rows else 0.0


def held_out(settings: dict[str, list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Leave one conversation out: the setting best on the other four scores the fifth.

    A row's setting name may carry its form (``joint_held_out``): then one choice per fold is
    made over every form's rows, as the product has one constant for all of them.
    """
    convs = sorted({r["conv"] for rows in settings.values() for r in rows})
    chosen, picks = [], []
    for conv in convs:

        def train_score(name: str, conv: str = conv) -> tuple[float, float]:
            rows = [r for r in settings[name] if r["conv"] != conv]
            return (mean(rows, "all@5"), mean(rows, "NDCG@10"))

        best = max(sorted(settings), key=train_score)
        picks.append(f"{conv}: {best}")
        chosen += [r for r in settings[best] if r["conv"] == conv]
    return chosen, picks


def joint_held_out(per_form: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
    """Held out with one setting per fold for all forms together (the product has one)."""
    names = set.intersection(*(set(s) for s in per_form.values()))
    pooled = {n: [r for s in per_form.values() for r in s[n]] for n in names}
    if len(pooled) < 2:
        return
    chosen, picks = held_out(pooled)
    print("\n## held out over both forms, one setting per fold")
    print("  picks: " + "; ".join(picks))
    for form in per_form:
        rows = [r for r in chosen if r["form"] == form]
        print(f"{form:<8} " + " ".join(f"{m} {mean(rows, m):.3f}" for m in METRICS))
        print("         " + by_gold(rows))


def by_gold(rows: list[dict[str, Any]]) -> str:
    """recall_all@5 of the questions with 1, 2 and 3 or more gold blocks."""
    parts = []
    for label, test in (("1", 1), ("2", 2), ("3+", 3)):
        some = [r for r in rows if min(len(r["gold"]), 3) == test]
        parts.append(f"gold {label}: n {len(some)} all@5 {mean(some, 'all@5'):.3f}")
    return "; ".join(parts)


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    head = f"{'method':<34} {'n':>4} " + " ".join(f"{m:>8}" for m in METRICS)
    lines = [head]
    for name, rows in results.items():
        lines.append(
            f"{name:<34} {len(rows):>4} " + " ".join(f"{mean(rows, m):>8.3f}" for m in METRICS)
        )
    return "\n".join(lines)


async def run_form(
    data: list[dict[str, Any]], form: str, args: argparse.Namespace
) -> dict[str, list[dict[str, Any]]]:
    """Run, print and save one form; returns its tuned settings' rows (for the joint choice)."""
    blocks, questions = corpus(data, form)
    sizes = [len(b["text"]) for b in blocks]
    print(
        f"\n## form {form}: {len(blocks)} blocks of {min(sizes):,}-{max(sizes):,} chars "
        f"(mean {sum(sizes) // len(sizes):,}), {len(questions)} questions of categories 1-4"
    )
    settings: dict[str, list[dict[str, Any]]] = {}
    for size in args.size:
        set_passages(size, min(args.overlap, size // 4))
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            found = await elfmem_rows(
                blocks, questions, args.share, args.variant, Path(tmp), args.when
            )
        label = "off" if size >= OFF else str(size)
        for name, rows in found.items():
            settings[f"passages {label} {name}"] = rows
        print(f"  (size {label}: {time.perf_counter() - t0:.0f} s)", flush=True)
    set_passages(PASSAGE_CHARS, PASSAGE_OVERLAP)
    results = {"bm25 (rank-bm25 Okapi)": bm25_rows(blocks, questions)}
    diagnostic = [v for v in VARIANTS if v != "default" and not v.startswith(TUNED)]
    tuned = {k: v for k, v in settings.items() if not any(k.endswith(" " + x) for x in diagnostic)}
    if len(tuned) > 1:
        chosen, picks = held_out(tuned)
        results["elfmem (held-out)"] = chosen
        print("  held-out picks: " + "; ".join(picks))
    results.update({f"elfmem {k}": v for k, v in settings.items()})
    print(table(results))
    for name in ("bm25 (rank-bm25 Okapi)", "elfmem (held-out)"):
        if name in results:
            print(f"  {name}: {by_gold(results[name])}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as fh:
            for name, rows in results.items():
                for r in rows:
                    fh.write(json.dumps({"form": form, "method": name, **r}) + "\n")
    return {k: [{**r, "form": form} for r in v] for k, v in tuned.items()}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=LOCOMO)
    ap.add_argument("--form", action="append", choices=("session", "joined"), default=None)
    ap.add_argument(
        "--size",
        action="append",
        type=int,
        default=None,
        help=f"Passage size in characters (repeatable; 0 = no passages). Default {PASSAGE_CHARS}.",
    )
    ap.add_argument("--overlap", type=int, default=PASSAGE_OVERLAP)
    ap.add_argument("--share", action="append", type=float, default=None)
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS), default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--when", action="store_true", help="give each block its date as when: too")
    ap.add_argument("--model", type=Path, default=None, help="model2vec folder to embed with")
    ap.add_argument("--embedded", default="", help="embedded model name (elfmem.adapters.models)")
    ap.add_argument("--conversations", type=int, default=0, help="only the first N (0: all)")
    args = parse(ap, {"form": ["session"], "conversations": 2})
    EMBEDDED[0] = args.embedded
    if args.model:  # a candidate model in place of the shipped one
        static.DEFAULT_MODEL_DIR = args.model.resolve()
    args.size = [OFF if s == 0 else s for s in (args.size or [PASSAGE_CHARS])]
    args.share = args.share or [search.PASSAGE_MEAN_SHARE]
    args.variant = args.variant or ["default"]
    data = json.loads(args.data.read_text())[: args.conversations or None]
    if args.out and args.out.exists():
        args.out.unlink()
    per_form = {}
    for form in args.form or ["session", "joined"]:
        per_form[form] = await run_form(data, form, args)
    if len(per_form) > 1:
        joint_held_out(per_form)


if __name__ == "__main__":
    asyncio.run(main())
