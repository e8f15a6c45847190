"""What each embedded model costs: load time, one query's embedding, texts per second by length.

For every embedded model (``elfmem.adapters.models``, and the static model): the seconds a fresh
process spends loading it (median of ``--loads`` processes, each timing ``load()`` alone), the
milliseconds one short query takes (p50/p95 of 200), and texts per second at 16, 64 and 256
tokens (batches as dream sends them). The size of the weights on disk is printed beside.

    python bench/embedder_speed.py [--loads 5] [--texts 256]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import parse

from elfmem.adapters.embedding import make_embedder
from elfmem.adapters.models import MODELS, STATIC

WORDS = (
    "the deploy pipeline runs nightly and the staging database listens behind the VPN while "
    "billing invoices rotate monthly for the team that owns the cache cluster and its alerts"
).split()
LOAD = (
    "import json, sys, time; from elfmem.adapters.embedding import make_embedder; "
    "m = make_embedder({'provider': 'embedded', 'model': sys.argv[1]}); "
    "print(json.dumps(m.load()))"
)


def text_of(tokens: int, rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(int(tokens * 0.8)))


def load_seconds(name: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", LOAD, name], capture_output=True, text=True, check=True
        )
        times.append(float(json.loads(out.stdout.strip().splitlines()[-1])))
    return statistics.median(times)


def weights_mb(name: str) -> float:
    if name == STATIC:
        folder = Path(__file__).resolve().parents[1] / "elfmem/adapters/model"
        return sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    return MODELS[name].weights_path().stat().st_size / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--texts", type=int, default=256)
    args = parse(parser, {"loads": 1, "texts": 32})
    rng = random.Random(7)
    head = f"{'model':<8} {'MB':>6} {'load s':>7} {'query p50':>10} {'p95':>6}"
    print(head + "".join(f" {f'{n} tok/s':>10}" for n in (16, 64, 256)))
    for name in [*MODELS, STATIC]:
        model = make_embedder({"provider": "embedded", "model": name})
        model.embed(["warm up"])
        times = []
        for _ in range(200):
            started = time.perf_counter()
            model.embed([text_of(8, rng)])
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        rates = []
        for tokens in (16, 64, 256):
            texts = [text_of(tokens, rng) for _ in range(args.texts)]
            started = time.perf_counter()
            model.embed(texts)
            rates.append(len(texts) / (time.perf_counter() - started))
        line = (
            f"{name:<8} {weights_mb(name):>6.1f} {load_seconds(name, args.loads):>7.3f} "
            f"{statistics.median(times):>8.2f}ms {times[int(len(times) * 0.95)]:>6.2f}"
        )
        print(line + "".join(f" {r:>10.0f}" for r in rates))


if __name__ == "__main__":
    main()
