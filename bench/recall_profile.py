"""cProfile of recalls on a kept memory: where a recall's time goes at scale.

    python bench/recall_profile.py DIR [--queries 20]

DIR is a memory ``recall_bench.py --keep`` or ``dream_scale.py`` filled. Prints the top entries
by cumulative time over ``--queries`` attention recalls of 4 words (no reinforcement), after one
warm-up recall.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from recall_bench import WORDS  # noqa: E402

from elfmem.api import MemorySystem  # noqa: E402


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args()
    system = await MemorySystem.from_config(args.root)
    await system.recall("warm up the model", reinforce=False)
    rng = random.Random(7)
    queries = [" ".join(rng.sample(WORDS, 4)) for _ in range(args.queries)]
    profile = cProfile.Profile()
    profile.enable()
    for q in queries:
        await system.recall(q, top_k=5, reinforce=False)
    profile.disable()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
    await system.close()


if __name__ == "__main__":
    asyncio.run(main())
