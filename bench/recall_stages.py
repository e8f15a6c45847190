"""Where a recall's wall time goes, stage by stage, over many recalls in one process.

    python bench/recall_stages.py DIR [--queries 200] [--check FILE | --save FILE]

DIR is a memory ``recall_bench.py --keep`` filled. Each stage function of the recall path is
wrapped with a wall-clock timer (its time includes what it calls); the table gives each stage's
p50 and mean per recall and its share of the summed means. ``--save FILE`` writes the top-5 ids
and scores of every query as JSON, ``--check FILE`` compares against such a file and fails if
any id or score differs: run it before and after a change to show the change keeps the answers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from recall_bench import WORDS  # noqa: E402

from elfmem.api import MemorySystem  # noqa: E402
from elfmem.retrieval import pipeline, ranking  # noqa: E402
from elfmem.rhythms import core as core_mod  # noqa: E402
from elfmem.rhythms import recall as recall_mod  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] += time.perf_counter() - t0

    return wrapper


def instrument(system: MemorySystem) -> None:
    for name in ("_filters", "_seed", "_dense", "_fuse", "_feedback", "_expand", "_candidates"):
        setattr(pipeline, name, timed(name, getattr(pipeline, name)))
    for name in ("_revisions", "_pull_revisions"):
        setattr(pipeline, name, timed(name, getattr(pipeline, name)))
    pipeline.ranking.composite_scores = timed("composite", ranking.composite_scores)
    pipeline.ranking.order = timed("order (mmr)", ranking.order)
    pipeline.answer.packed = timed("packed", pipeline.answer.packed)
    recall_mod.run_frame = timed("run_frame", recall_mod.run_frame)
    core_mod.Core.sync = timed("sync", core_mod.Core.sync)  # type: ignore[method-assign]
    before = system._core.before_sync
    if before is not None:
        system._core.before_sync = timed("reconcile check", before)
    states_fn = recall_mod.states_fn
    recall_mod.states_fn = lambda ledger, db: timed("states", states_fn(ledger, db))
    embedder_fn = recall_mod.embedder_fn
    recall_mod.embedder_fn = lambda core: timed("embed", embedder_fn(core))
    soon = pipeline.lexical_soon

    def lexical_soon(*args: Any, **kwargs: Any) -> Callable[[], Any]:
        return timed("lexical wait", timed("lexical start", soon)(*args, **kwargs))

    pipeline.lexical_soon = lexical_soon


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--check", type=Path)
    ap.add_argument("--no-timers", action="store_true", help="answers only, no stage timers")
    args = ap.parse_args()
    system = await MemorySystem.from_config(args.root)
    await system.recall("warm up the model", reinforce=False)
    if not args.no_timers:
        instrument(system)
    rng = random.Random(11)
    qs = [" ".join(rng.sample(WORDS, 4)) for _ in range(args.queries)]
    per: dict[str, list[float]] = defaultdict(list)
    totals, answers = [], []
    for q in qs:
        SPENT.clear()
        t0 = time.perf_counter()
        result = await system.recall(q, top_k=5, reinforce=False)
        totals.append((time.perf_counter() - t0) * 1000)
        answers.append([[b.id, b.score] for b in result.blocks])
        for name, s in SPENT.items():
            per[name].append(s * 1000)
    await system.close()
    if not args.no_timers:
        print(f"{'stage':<18} {'p50 ms':>8} {'mean ms':>8}")
        for name, values in sorted(per.items(), key=lambda kv: -statistics.mean(kv[1])):
            print(f"{name:<18} {statistics.median(values):>8.2f} {statistics.mean(values):>8.2f}")
    print(f"{'recall':<18} {statistics.median(totals):>8.2f} {statistics.mean(totals):>8.2f}")
    if args.save:
        args.save.write_text(json.dumps({"queries": qs, "answers": answers}))
    if args.check:
        want = json.loads(args.check.read_text())
        bad = [q for q, a, b in zip(qs, answers, want["answers"], strict=True) if a != b]
        print(f"answers identical to {args.check}: {len(qs) - len(bad)} of {len(qs)}")
        if bad:
            raise SystemExit(f"differs on {len(bad)} queries, first: {bad[0]!r}")


if __name__ == "__main__":
    asyncio.run(main())
